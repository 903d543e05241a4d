// Halide glue: the kernel table, error capture, thread settings, and the loop that runs a Plan.
#include "runtime/halide_errors.h"
#include "runtime/problem.h"

#include "HalideRuntime.h"
#include "spacedepth_permute_copy_u16.h"
#include "spacedepth_permute_copy_u32.h"
#include "spacedepth_permute_copy_u64.h"
#include "spacedepth_permute_copy_u8.h"
#include "spacedepth_small_u16.h"
#include "spacedepth_small_u32.h"
#include "spacedepth_small_u64.h"
#include "spacedepth_small_u8.h"
#include "spacedepth_transpose_u16.h"
#include "spacedepth_transpose_u32.h"
#include "spacedepth_transpose_u64.h"
#include "spacedepth_transpose_u8.h"
#if SPACEDEPTH_HAS_CUDA
#include "HalideRuntimeCuda.h"
#include "spacedepth_cuda_u16.h"
#include "spacedepth_cuda_u32.h"
#include "spacedepth_cuda_u64.h"
#include "spacedepth_cuda_u8.h"
#endif

#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

// Each call passes its own ErrorSink as Halide's user_context, so messages from concurrent calls
// never mix. This strong definition replaces the runtime's weak halide_error, whose default
// prints and then aborts the process (shared/TOOLCHAIN-NOTES.md section 8).
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

using KernelFn = int (*)(void const *, halide_buffer_t *, bool, halide_buffer_t *);

struct Kernel {
    KernelFamily family;
    int width;
    const char *name;
    KernelFn fn;
};

constexpr Kernel kKernels[] = {
    {KernelFamily::General, 1, "spacedepth_permute_copy_u8", spacedepth_permute_copy_u8},
    {KernelFamily::General, 2, "spacedepth_permute_copy_u16", spacedepth_permute_copy_u16},
    {KernelFamily::General, 4, "spacedepth_permute_copy_u32", spacedepth_permute_copy_u32},
    {KernelFamily::General, 8, "spacedepth_permute_copy_u64", spacedepth_permute_copy_u64},
    {KernelFamily::Transpose, 1, "spacedepth_transpose_u8", spacedepth_transpose_u8},
    {KernelFamily::Transpose, 2, "spacedepth_transpose_u16", spacedepth_transpose_u16},
    {KernelFamily::Transpose, 4, "spacedepth_transpose_u32", spacedepth_transpose_u32},
    {KernelFamily::Transpose, 8, "spacedepth_transpose_u64", spacedepth_transpose_u64},
    {KernelFamily::Small, 1, "spacedepth_small_u8", spacedepth_small_u8},
    {KernelFamily::Small, 2, "spacedepth_small_u16", spacedepth_small_u16},
    {KernelFamily::Small, 4, "spacedepth_small_u32", spacedepth_small_u32},
    {KernelFamily::Small, 8, "spacedepth_small_u64", spacedepth_small_u64},
#if SPACEDEPTH_HAS_CUDA
    {KernelFamily::Cuda, 1, "spacedepth_cuda_u8", spacedepth_cuda_u8},
    {KernelFamily::Cuda, 2, "spacedepth_cuda_u16", spacedepth_cuda_u16},
    {KernelFamily::Cuda, 4, "spacedepth_cuda_u32", spacedepth_cuda_u32},
    {KernelFamily::Cuda, 8, "spacedepth_cuda_u64", spacedepth_cuda_u64},
#endif
};

const Kernel *kernel_for(KernelFamily family, int width) {
    for (const Kernel &k : kKernels) {
        if (k.family == family && k.width == width) {
            return &k;
        }
    }
    return nullptr;
}

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

#if SPACEDEPTH_HAS_CUDA
// The caller's context and stream reach Halide's CUDA runtime through its handler hooks: each
// CUDA call's ErrorSink (the user_context) carries them; calls without a context fall back to
// Halide's own handlers.
halide_cuda_acquire_context_t halide_acquire_context = nullptr;
halide_cuda_release_context_t halide_release_context = nullptr;
halide_cuda_get_stream_t halide_get_stream = nullptr;

int acquire_callers_context(void *user_context, void **ctx, bool create) {
    const auto *sink = static_cast<const ErrorSink *>(user_context);
    if (sink == nullptr || sink->cuda_context == nullptr) {
        return halide_acquire_context(user_context, ctx, create);
    }
    *ctx = sink->cuda_context;
    return 0;
}

int release_callers_context(void *user_context) {
    const auto *sink = static_cast<const ErrorSink *>(user_context);
    return sink == nullptr || sink->cuda_context == nullptr ? halide_release_context(user_context) : 0;
}

int callers_stream(void *user_context, void *ctx, void **stream) {
    const auto *sink = static_cast<const ErrorSink *>(user_context);
    if (sink == nullptr || sink->cuda_context == nullptr) {
        return halide_get_stream(user_context, ctx, stream);
    }
    *stream = sink->cuda_stream;
    return 0;
}

void install_cuda_hooks() {
    static std::once_flag once;
    std::call_once(once, [] {
        halide_acquire_context = halide_set_cuda_acquire_context(acquire_callers_context);
        halide_release_context = halide_set_cuda_release_context(release_callers_context);
        halide_get_stream = halide_set_cuda_get_stream(callers_stream);
    });
}
#endif

// Points a kernel buffer at the tensor memory: host memory directly, device memory by wrapping
// the device pointer (no copy; detached again after the call).
int attach(ErrorSink &sink, halide_buffer_t &buf, uint8_t *address, const CudaCall *cuda) {
    if (cuda == nullptr) {
        buf.host = address;
        return 0;
    }
#if SPACEDEPTH_HAS_CUDA
    return halide_cuda_wrap_device_ptr(&sink, &buf, reinterpret_cast<uint64_t>(address));
#else
    (void)sink, (void)buf;
    return -1;
#endif
}

void detach(ErrorSink &sink, halide_buffer_t &buf, const CudaCall *cuda) {
#if SPACEDEPTH_HAS_CUDA
    if (cuda != nullptr && buf.device != 0) {
        halide_cuda_detach_device_ptr(&sink, &buf);
    }
#else
    (void)sink, (void)buf, (void)cuda;
#endif
}

}  // namespace

Status execute(const Problem &p, const Plan &plan, const CudaCall *cuda) {
    const Kernel *kernel = kernel_for(plan.family, plan.width);
    if (kernel == nullptr && plan.family == KernelFamily::Cuda) {
        return error(SD_ERROR_UNSUPPORTED, "this build has no CUDA kernels (configured with SPACEDEPTH_CUDA=OFF)");
    }
    if (kernel == nullptr) {
        return error(SD_ERROR_UNSUPPORTED, "no kernel for element width " + std::to_string(plan.width) + " bytes");
    }
#if SPACEDEPTH_HAS_CUDA
    if (cuda != nullptr) {
        install_cuda_hooks();
    }
#endif
    if (plan.parallel) {
        ensure_pool_threads(p.threads);
    }

    halide_dimension_t in_dims[kKernelRank], out_dims[kKernelRank];
    for (int i = 0; i < kKernelRank; i++) {
        const ViewDim d = plan.kernel_dims[i];  // normalize() fills all kKernelRank slots
        in_dims[i] = halide_dimension_t(0, static_cast<int32_t>(d.extent), static_cast<int32_t>(d.in_stride));
        out_dims[i] = halide_dimension_t(0, static_cast<int32_t>(d.extent), static_cast<int32_t>(d.out_stride));
    }
    const halide_type_t type(halide_type_uint, static_cast<uint8_t>(8 * plan.width));
    uint8_t *const in_base = static_cast<uint8_t *>(p.in.data);
    uint8_t *const out_base = static_cast<uint8_t *>(p.out.data);
    const int64_t w = plan.width;

    // Odometer over the loop dims, for every fragment.
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
            halide_buffer_t in_buf{}, out_buf{};
            in_buf.type = type;
            in_buf.dimensions = kKernelRank;
            in_buf.dim = in_dims;
            out_buf.type = type;
            out_buf.dimensions = kKernelRank;
            out_buf.dim = out_dims;

            ErrorSink sink;
            if (cuda != nullptr) {
                sink.cuda_context = cuda->context;
                sink.cuda_stream = cuda->stream;
            }
            int rc = attach(sink, in_buf, in_base + in_off * w, cuda);
            if (rc == 0) {
                rc = attach(sink, out_buf, out_base + out_off * w, cuda);
            }
            if (rc == 0) {
                rc = kernel->fn(&sink, &in_buf, plan.parallel, &out_buf);
            }
            detach(sink, in_buf, cuda);
            detach(sink, out_buf, cuda);
            if (rc != 0) {
                return error(SD_ERROR_KERNEL, std::string("Halide kernel ") + kernel->name + " failed with code " +
                                                  std::to_string(rc) + ": " + sink.message);
            }

            size_t l = 0;
            for (; l < index.size(); l++) {
                if (++index[l] < plan.loop_dims[l].extent) {
                    break;
                }
                index[l] = 0;
            }
            if (l == index.size()) {
                break;
            }
        }
    }
    return {};
}

std::string kernel_names() {
    std::string names;
    for (const Kernel &k : kKernels) {
        names += std::string(names.empty() ? "" : ", ") + k.name;
    }
    return names;
}

}  // namespace spacedepth::detail

namespace spacedepth {

void set_num_threads(int threads) {
    halide_set_num_threads(threads < 0 ? 0 : threads);
}

int num_threads() {
    // halide_set_num_threads returns the previous value; set it back unchanged.
    std::lock_guard<std::mutex> lock(detail::pool_mutex);
    const int n = halide_set_num_threads(0);
    halide_set_num_threads(n);
    return n > 0 ? n : static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace spacedepth
