// Halide glue: error capture, thread settings, and the loop that runs a KernelPlan (the CPU kernels
// come from runtime/kernel_registry.h; a GPU device's kernels and memory glue from its
// component, runtime/device_backend.h).
#include "runtime/execute.h"
#include "runtime/device_backend.h"
#include "runtime/halide_errors.h"

#include "HalideRuntime.h"

#include <cstdio>
#include <mutex>
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

// One kernel call on the memory at the two base addresses: host memory directly, a GPU device's
// through its backend (attach, run, detach). Halide's return code.
int call_kernel(KernelFn fn, const KernelPlan &plan, const DeviceBackend *backend, const DeviceCall &call,
                halide_type_t type, halide_dimension_t *in_dims, halide_dimension_t *out_dims, uint8_t *in,
                uint8_t *out, ErrorSink &sink) {
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
        return fn(&sink, &b.in, plan.parallel, &b.out);
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

    halide_dimension_t in_dims[kKernelRank], out_dims[kKernelRank];
    for (int i = 0; i < kKernelRank; i++) {
        const ViewDim d = plan.kernel_dims[i];  // make_kernel_plan() fills all kKernelRank slots
        in_dims[i] = halide_dimension_t(0, static_cast<int32_t>(d.extent), static_cast<int32_t>(d.in_stride));
        out_dims[i] = halide_dimension_t(0, static_cast<int32_t>(d.extent), static_cast<int32_t>(d.out_stride));
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
        if (const int rc = fn(&sink, &in_buf, plan.parallel, &out_buf); rc != 0) {
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
            const int rc = call_kernel(fn, plan, backend, call, type, in_dims, out_dims, in_base + in_off * w,
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

int pool_threads() {
    // halide_set_num_threads returns the previous value; set it back unchanged.
    std::lock_guard<std::mutex> lock(pool_mutex);
    const int n = halide_set_num_threads(0);
    halide_set_num_threads(n);
    return n > 0 ? n : static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace spacedepth::detail
