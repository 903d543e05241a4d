// Halide glue: error capture, thread settings, and the loop that runs a KernelPlan (the CPU kernels
// come from runtime/kernel_registry.h; a GPU device's kernels and memory glue from its
// component, runtime/device_backend.h).
#include "runtime/execute.h"
#include "runtime/device_backend.h"
#include "runtime/halide_errors.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>

// Each call passes its own ErrorSink as Halide's user_context, so messages from concurrent calls
// never mix. This strong definition replaces the runtime's weak halide_error, whose default
// prints and then calls abort(), in Halide 21 as in earlier releases (posix_error_handler.cpp).
namespace {
thread_local std::string orphan_halide_error;  // messages raised without a user_context
}  // namespace

std::string spacedepth::detail::take_orphan_halide_errors() {
    return std::exchange(orphan_halide_error, std::string());
}

extern "C" void halide_error(void *user_context, const char *msg) {
    using spacedepth::detail::ErrorSink;
    std::string &dest = user_context ? static_cast<ErrorSink *>(user_context)->message : orphan_halide_error;
    dest += msg;
    while (!dest.empty() && (dest.back() == '\n' || dest.back() == ' ')) {
        dest.pop_back();
    }
}

namespace spacedepth::detail {

namespace {

std::mutex pool_mutex;
std::atomic<long long> task_loops_to_pool{0};

// Halide's pool is process-wide. Grow it when a call asks for more threads than it has.
void ensure_pool_threads(int threads) {
    if (threads <= 1) {
        return;
    }
    std::lock_guard<std::mutex> lock(pool_mutex);
    const int current = halide_set_num_threads(threads);
    if (current > threads) {
        halide_set_num_threads(current);  // never shrink what another caller set
    }
}

// A kernel call's dims, left uninitialised until filled: halide_dimension_t's constructor zeroes
// each one, and the two arrays' zeroing (two `rep stos`) took 40 % of execute's time in a 64-byte
// call through a plan (Intel Xeon VM of model 0xcf).
union KernelDims {
    KernelDims() {}
    halide_dimension_t dim[kKernelRank];
};

// A kernel's non-zero return as a status: Halide's out-of-memory codes have their own.
Status kernel_error(const RegisteredKernel &kernel, int rc, const ErrorSink &sink) {
    const bool no_memory = rc == halide_error_code_out_of_memory || rc == halide_error_code_device_malloc_failed;
    return error(
        no_memory ? SD_ERROR_OUT_OF_MEMORY : SD_ERROR_KERNEL,
        std::string("Halide kernel ") + kernel.name + " failed with code " + std::to_string(rc) + ": " + sink.message);
}

// The function a plan calls: the kernel's (or, streaming, its twin's) AVX2 path where the plan
// says so, else its wrapper; a bench's override of the same family and width before any.
KernelFn kernel_function(const KernelPlan &plan, const RegisteredKernel &kernel, const DeviceCall &call) {
    if (call.kernel_overrides != nullptr) {
        // A registered kernel's width is one of kKernelWidths (checked when the registry compiles).
        const KernelTable &table = *call.kernel_overrides;
        if (KernelFn other = table[static_cast<int>(kernel.family)][kernel_width_index(kernel.width)]) return other;
    }
    const RegisteredKernel &k = plan.stream && kernel.stream != nullptr ? *kernel.stream : kernel;
    return plan.avx2_path && k.avx2_path != nullptr ? k.avx2_path : k.fn;
}

// A parallel call of a Halide kernel: tasks of `per_task` consecutive iterations of the view's
// two outermost slots, counted with slot 4 inner (the loops the kernel would run there).
struct KernelTasks {
    KernelFn fn;
    const halide_buffer_t *in, *out;  // the whole call's buffers
    int64_t per_task, total;          // outer iterations per task, and in all
};

// The kernel on the box [x4, x4 + n4) x [x5, x5 + n5) of the two outermost slots, its dims from
// slot 0 up and unit slots above them, as a serial plan arranges a view (plan_cpu.cpp,
// arrange_for_kernel): the unit slots a parallel plan keeps between its pattern slots and the
// task slots are loops of one iteration, whose set-up ran at every iteration of the real loop
// outside them (D2S NCHW DCR u8 C64 at 512 KiB, 180-byte rows, on 2 threads: 31 us with them, 21
// without, the 1-thread call 28; Intel Xeon VM of model 0xcf).
int run_box(const KernelTasks &t, void *user_context, int64_t x4, int64_t n4, int64_t x5, int64_t n5) {
    constexpr int s4 = kKernelRank - 2, s5 = kKernelRank - 1;
    const int64_t w = t.in->type.bytes();
    const int64_t extent[kKernelRank] = {
        t.out->dim[0].extent, t.out->dim[1].extent, t.out->dim[2].extent, t.out->dim[3].extent, n4, n5};
    halide_buffer_t in = *t.in, out = *t.out;
    in.host += (x4 * t.in->dim[s4].stride + x5 * t.in->dim[s5].stride) * w;
    out.host += (x4 * t.out->dim[s4].stride + x5 * t.out->dim[s5].stride) * w;
    KernelDims in_storage, out_storage;
    halide_dimension_t *const in_dims = in_storage.dim, *const out_dims = out_storage.dim;
    int k = 0;
    for (int i = 0; i < kKernelRank; i++) {
        if (extent[i] == 1) continue;
        new (&in_dims[k]) halide_dimension_t(0, static_cast<int32_t>(extent[i]), t.in->dim[i].stride);
        new (&out_dims[k]) halide_dimension_t(0, static_cast<int32_t>(extent[i]), t.out->dim[i].stride);
        k++;
    }
    for (; k < kKernelRank; k++) {
        new (&in_dims[k]) halide_dimension_t(0, 1, 0);
        new (&out_dims[k]) halide_dimension_t(0, 1, 0);
    }
    in.dim = in_dims;
    out.dim = out_dims;
    return t.fn(user_context, &in, false, &out);
}

// Task `index`: its iterations as up to three boxes, the end of one slot-4 row, whole rows, and
// the start of another.
int run_task(void *user_context, int index, uint8_t *closure) {
    const KernelTasks &t = *reinterpret_cast<const KernelTasks *>(closure);
    const int64_t e4 = t.out->dim[kKernelRank - 2].extent;
    int64_t begin = index * t.per_task;
    const int64_t end = std::min(t.total, begin + t.per_task);
    if (const int64_t x4 = begin % e4; x4 != 0) {
        const int64_t n4 = std::min(e4 - x4, end - begin);
        if (const int rc = run_box(t, user_context, x4, n4, begin / e4, 1); rc != 0) return rc;
        begin += n4;
    }
    if (const int64_t rows = (end - begin) / e4; rows > 0) {
        if (const int rc = run_box(t, user_context, 0, e4, begin / e4, rows); rc != 0) return rc;
        begin += rows * e4;
    }
    return begin < end ? run_box(t, user_context, 0, end - begin, begin / e4, 1) : 0;
}

// A kernel call on host memory. The Halide kernels are serial loop nests (schedules/cpu_ladder.cpp):
// a parallel plan's call runs here as tasks on Halide's pool, each about plan.task_bytes of the
// iterations of the two outermost slots (kCpuParallelSlots, where the planner puts the view's
// outermost dims), each task one to three kernel calls. The microkernels split their own calls.
// A serial call never touches the pool.
int run_on_host(KernelFn fn, const RegisteredKernel &kernel, const KernelPlan &plan, ErrorSink &sink,
                halide_buffer_t &in, halide_buffer_t &out) {
    if (!plan.parallel || kFamilyIsMicrokernel[static_cast<int>(kernel.family)]) {
        return fn(&sink, &in, plan.parallel, &out);
    }
    constexpr int s4 = kKernelRank - 2, s5 = kKernelRank - 1;
    int64_t inner = 1;
    for (int i = 0; i < s4; i++) inner *= out.dim[i].extent;
    const int64_t total = int64_t{out.dim[s4].extent} * out.dim[s5].extent;
    // At most 2^20 tasks: a huge tensor of short inner loops takes longer ones.
    const int64_t per_task = std::max({int64_t{1}, plan.task_bytes / plan.width / std::max<int64_t>(inner, 1),
                                       (total + (int64_t{1} << 20) - 1) >> 20});
    const int64_t tasks = (total + per_task - 1) / per_task;
    KernelTasks t{fn, &in, &out, per_task, total};
    if (tasks <= 1) {
        return run_box(t, &sink, 0, out.dim[s4].extent, 0, out.dim[s5].extent);
    }
    task_loops_to_pool.fetch_add(1, std::memory_order_relaxed);
    return halide_do_par_for(&sink, run_task, 0, static_cast<int>(tasks), reinterpret_cast<uint8_t *>(&t));
}

// One kernel call on the memory at the two base addresses: host memory directly, a GPU device's
// through its backend (attach, run, detach). Halide's return code.
int call_kernel(KernelFn fn, const RegisteredKernel &kernel, const KernelPlan &plan, const DeviceBackend *backend,
                const DeviceCall &call, halide_type_t type, halide_dimension_t *in_dims, halide_dimension_t *out_dims,
                uint8_t *in, uint8_t *out, ErrorSink &sink) {
    CallBuffers b;
    b.in.type = b.out.type = type;
    b.in.dimensions = b.out.dimensions = kKernelRank;
    b.in.dim = in_dims;
    b.out.dim = out_dims;
    if (call.device == Device::Cuda) {
        sink.cuda_context = call.context;
        sink.cuda_stream = call.stream;
    }
    if (backend == nullptr) {
        b.in.host = in;
        b.out.host = out;
        return run_on_host(fn, kernel, plan, sink, b.in, b.out);
    }
    int rc = backend->attach(sink, b.in, b.in_span, b.in_span_dim, in);
    if (rc == 0) rc = backend->attach(sink, b.out, b.out_span, b.out_span_dim, out);
    if (rc == 0) rc = fn(&sink, &b.in, plan.parallel, &b.out);
    return backend->detach(sink, b, rc);
}

}  // namespace

Status execute(const Problem &p, const KernelPlan &plan, const RegisteredKernel *kernel, const void *in, void *out,
               const DeviceCall &call) {
    if (plan.shuffle != nullptr) {
        // The shuffle family: the runtime's microkernel, on the host (make_kernel_plan sets a
        // program only there). No load passes the input's highest byte.
        const uint8_t *in_bytes = static_cast<const uint8_t *>(in);
        if (plan.parallel) ensure_pool_threads(p.threads);
        ErrorSink sink;
        const int rc = run_shuffle(*plan.shuffle, in_bytes + plan.in_offset,
                                   static_cast<uint8_t *>(out) + plan.out_offset, in_bytes + p.in_low_bytes,
                                   in_bytes + p.in_low_bytes + p.in_span_bytes, plan.stream, plan.parallel, &sink);
        if (rc != 0) {
            return error(SD_ERROR_KERNEL, "the shuffle microkernel's parallel loop failed with code " +
                                              std::to_string(rc) + ": " + sink.message);
        }
        return {};
    }
    if (kernel == nullptr) {
        kernel = find_kernel(call.device, plan.family, plan.width);
    }
    const DeviceBackend *backend = device_backend(call.device);
    if (kernel == nullptr && call.device != Device::Host && backend == nullptr) {
        return error(SD_ERROR_UNSUPPORTED, missing_backend_reason(call.device));
    }
    if (kernel == nullptr) {
        return error(SD_ERROR_UNSUPPORTED, std::string("no ") + device_name(call.device) +
                                               " kernel for element width " + std::to_string(plan.width) + " bytes");
    }
    const KernelFn fn = kernel_function(plan, *kernel, call);
    if (backend != nullptr) {
        backend->prepare();
    }
    if (call.device == Device::OpenCL) {
        // The OpenCL path copies each buffer's span from its origin onwards; an input reaching
        // below its origin (a negative stride) has no such span.
        for (const ViewDim &d : plan.kernel_dims) {
            if (d.in_stride < 0) {
                return error(SD_ERROR_UNSUPPORTED, "the OpenCL test path takes no negative input strides");
            }
        }
    }
    if (plan.parallel) {
        ensure_pool_threads(p.threads);
    }

    KernelDims in_storage, out_storage;
    halide_dimension_t *const in_dims = in_storage.dim, *const out_dims = out_storage.dim;
    for (int i = 0; i < kKernelRank; i++) {
        const ViewDim d = plan.kernel_dims[i];  // make_kernel_plan() fills all kKernelRank slots
        new (&in_dims[i]) halide_dimension_t(0, static_cast<int32_t>(d.extent), static_cast<int32_t>(d.in_stride));
        new (&out_dims[i]) halide_dimension_t(0, static_cast<int32_t>(d.extent), static_cast<int32_t>(d.out_stride));
    }
    const halide_type_t type(halide_type_uint, static_cast<uint8_t>(8 * plan.width));
    uint8_t *const in_base = static_cast<uint8_t *>(const_cast<void *>(in)) + plan.in_offset;
    uint8_t *const out_base = static_cast<uint8_t *>(out) + plan.out_offset;
    const int64_t w = plan.width;

    // Host memory, one kernel call (no executor loops, no fragments): the common case, and the
    // one whose entry cost decides small tensors. Two buffers, nothing to attach or detach.
    if (call.device == Device::Host && plan.loop_dims.empty() && plan.fragments.empty()) {
        halide_buffer_t in_buf{}, out_buf{};
        in_buf.host = in_base;
        out_buf.host = out_base;
        in_buf.type = out_buf.type = type;
        in_buf.dimensions = out_buf.dimensions = kKernelRank;
        in_buf.dim = in_dims;
        out_buf.dim = out_dims;
        ErrorSink sink;
        if (const int rc = run_on_host(fn, *kernel, plan, sink, in_buf, out_buf); rc != 0) {
            return kernel_error(*kernel, rc, sink);
        }
        return {};
    }

    // Odometer over the loop dims, for every fragment; a chunked loop sets its kernel dim's extent.
    SmallVector<int64_t, 2 * kMaxDims> index(plan.loop_dims.size(), 0);
    static const Fragments kOrigin = {{0, 0}};
    for (auto [frag_in, frag_out] : plan.fragments.empty() ? kOrigin : plan.fragments) {
        std::fill(index.begin(), index.end(), 0);
        while (true) {
            int64_t in_off = frag_in, out_off = frag_out;
            for (size_t l = 0; l < plan.loop_dims.size(); l++) {
                const LoopDim &ld = plan.loop_dims[l];
                in_off += index[l] * ld.in_stride;
                out_off += index[l] * ld.out_stride;
                if (ld.chunked_dim >= 0) {
                    const int32_t extent = static_cast<int32_t>(std::min(ld.chunk, ld.total - index[l] * ld.chunk));
                    in_dims[ld.chunked_dim].extent = extent;
                    out_dims[ld.chunked_dim].extent = extent;
                }
            }
            ErrorSink sink;
            const int rc = call_kernel(fn, *kernel, plan, backend, call, type, in_dims, out_dims, in_base + in_off * w,
                                       out_base + out_off * w, sink);
            if (rc != 0) {
                return kernel_error(*kernel, rc, sink);
            }
            size_t l = 0;
            for (; l < index.size() && ++index[l] == plan.loop_dims[l].extent; l++) {
                index[l] = 0;
            }
            if (l == index.size()) {
                break;
            }
        }
    }
    return {};
}

Status set_pool_threads(int threads) {
    if (threads < 0 || threads > SD_MAX_THREADS) {
        return Status(SD_ERROR_INVALID_ARGUMENT, "threads must be 0 to " + std::to_string(SD_MAX_THREADS) +
                                                     " (0: one per core; the pool holds at most " +
                                                     std::to_string(SD_MAX_THREADS) + "): got " +
                                                     std::to_string(threads));
    }
    std::lock_guard<std::mutex> lock(pool_mutex);
    halide_set_num_threads(threads);
    return {};
}

long long pool_task_loops() { return task_loops_to_pool.load(std::memory_order_relaxed); }

int pool_threads() {
    // halide_set_num_threads returns the previous value; set it back unchanged.
    std::lock_guard<std::mutex> lock(pool_mutex);
    const int n = halide_set_num_threads(0);
    halide_set_num_threads(n);
    return n > 0 ? n : static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace spacedepth::detail
