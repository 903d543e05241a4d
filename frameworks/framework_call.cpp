#include "frameworks/framework_call.h"

#include "tools/array_layout.h"
#include "tools/cuda_driver.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace spacedepth::framework {

namespace {

// The arguments of a prepare() that succeeded: frameworks call the same shape again and again,
// and parsing names and describing arrays costs 0.45 us of a 64-element call that runs in 0.12.
struct PrepareArgs {
    sd_op op = SD_SPACE_TO_DEPTH;
    sd_dtype dtype = SD_DTYPE_COUNT;
    int threads = 0;
    std::vector<int64_t> shape, strides, block;
    std::string order, layout, out_layout;

    // Compared in place: a hit copies no vector or string.
    bool same(sd_op o, const std::vector<int64_t> &sh, const std::vector<int64_t> &st, sd_dtype d,
              const std::vector<int64_t> &b, const std::string &ord, const std::string &lay, const std::string &out,
              int t) const {
        return op == o && dtype == d && threads == t && shape == sh && strides == st && block == b && order == ord &&
               layout == lay && out_layout == out;
    }
};

struct LastPrepared {
    bool valid = false;
    PrepareArgs args;
    Call call;
};
thread_local LastPrepared last_prepared;

std::string prepare_uncached(sd_op op, const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                             sd_dtype dtype, const std::vector<int64_t> &block, const std::string &order,
                             const std::string &layout, const std::string &out_layout, int threads, Call *call) {
    sd_order o = SD_ORDER_DCR;
    sd_layout in_layout = SD_LAYOUT_NHWC, to_layout = SD_LAYOUT_NHWC;
    std::string broken = array_layout::parse_order(order, &o);
    if (broken.empty()) broken = array_layout::parse_layout(layout, "layout", &in_layout);
    if (broken.empty()) {
        broken = array_layout::parse_layout(out_layout.empty() ? layout : out_layout, "out_layout", &to_layout);
    }
    if (broken.empty()) broken = array_layout::describe(shape, &strides, in_layout, "x", &call->in);
    if (broken.empty()) broken = array_layout::params_of(op, block, o, call->in.ndim, threads, &call->params);
    if (broken.empty()) broken = array_layout::output_array_shape(call->params, call->in, to_layout, &call->out_shape);
    if (!broken.empty()) return broken;
    const std::vector<int64_t> out_strides = array_layout::contiguous_strides(call->out_shape);
    broken = array_layout::describe(call->out_shape, &out_strides, to_layout, "out", &call->out);
    call->in.dtype = call->out.dtype = dtype;
    return broken;
}

std::string message_of(sd_status status) { return status == SD_OK ? "" : sd_last_error(); }

sd_tensor with_data(sd_tensor t, const void *data) {
    t.data = const_cast<void *>(data);  // sd_tensor has one pointer type for input and output
    return t;
}

// A framework's new output is memory its allocator has just taken from the OS. On a kernel whose
// transparent huge pages are "madvise" (this VM's), its first writes then fault 4 KiB at a time:
// an AVX2 copy of 64 MiB into a fresh mmap took 31 ms, and 9-11 ms after MADV_HUGEPAGE (plain or
// non-temporal stores alike); under jax.jit a 64 MiB depth_to_space went from 25 to 7-10 ms (2-core
// AMD EPYC VM, 2026-12-06). numpy advises its arrays of 4 MiB and more the same way; XLA's,
// torch's and TensorFlow's CPU allocators do not. The advice covers the whole 2 MiB pages inside
// the output, which the call writes completely; repeating it on advised memory costs 0.3 us, and
// a kernel or mapping that refuses it leaves the call as it was.
constexpr uint64_t huge_page_bytes = uint64_t{2} << 20;
constexpr uint64_t advise_min_bytes = uint64_t{4} << 20;

void advise_huge_pages(const Call &call, void *out) {
#if defined(MADV_HUGEPAGE)
    uint64_t bytes = static_cast<uint64_t>(sd_dtype_size(call.out.dtype));
    for (int64_t extent : call.out_shape) bytes *= static_cast<uint64_t>(extent);  // prepare() checked it fits
    if (bytes < advise_min_bytes) return;
    const uint64_t begin = reinterpret_cast<uintptr_t>(out);
    const uint64_t first = (begin + huge_page_bytes - 1) & ~(huge_page_bytes - 1);
    const uint64_t last = (begin + bytes) & ~(huge_page_bytes - 1);
    if (last > first) {
        (void)madvise(reinterpret_cast<void *>(first), last - first, MADV_HUGEPAGE);  // a hint: errors change nothing
    }
#else
    (void)call;
    (void)out;
#endif
}

}  // namespace

std::string prepare(sd_op op, const std::vector<int64_t> &shape, const std::vector<int64_t> &strides, sd_dtype dtype,
                    const std::vector<int64_t> &block, const std::string &order, const std::string &layout,
                    const std::string &out_layout, int threads, Call *call) {
    LastPrepared &last = last_prepared;
    if (last.valid && last.args.same(op, shape, strides, dtype, block, order, layout, out_layout, threads)) {
        *call = last.call;
        return "";
    }
    std::string broken = prepare_uncached(op, shape, strides, dtype, block, order, layout, out_layout, threads, call);
    last.valid = broken.empty();
    if (last.valid) {
        last.args = PrepareArgs{op, dtype, threads, shape, strides, block, order, layout, out_layout};
        last.call = *call;
    }
    return broken;
}

sd_dtype dtype_of_width(int64_t bytes) {
    sd_dtype d = SD_DTYPE_COUNT;  // the dtype policy's raw elements ("V<bytes>")
    const std::string raw = "V" + std::to_string(bytes);
    return sd_dtype_from_typestr(raw.c_str(), &d) == SD_OK ? d : SD_DTYPE_COUNT;
}

std::string run_host(const Call &call, const void *in, void *out) {
    advise_huge_pages(call, out);
    const sd_tensor i = with_data(call.in, in), o = with_data(call.out, out);
    return message_of(sd_run(&call.params, &i, &o));
}

std::string run_cuda(const Call &call, const void *in, void *out, int device, void *stream) {
    std::string why;
    void *context = cuda_driver::tensor_context(device, &why);
    if (context == nullptr) return why;
    const sd_tensor i = with_data(call.in, in), o = with_data(call.out, out);
    return message_of(sd_run_cuda(&call.params, &i, &o, context, stream));
}

}  // namespace spacedepth::framework
