// The CUDA component (SpaceDepth::cuda): the CUDA kernels, and device pointers handed to them
// without a copy, in the caller's context and stream.
#include "runtime/device_backend.h"

#include "HalideRuntimeCuda.h"

#include <dlfcn.h>

#include <iterator>
#include <mutex>

#define SPACEDEPTH_KERNEL SPACEDEPTH_GPU_KERNEL_DECLARATION
#include "contract/kernels_cuda.inc"
#undef SPACEDEPTH_KERNEL

namespace spacedepth::detail {
namespace {

constexpr RegisteredKernel kCudaKernels[] = {
#define SPACEDEPTH_KERNEL SPACEDEPTH_GPU_KERNEL_ROW
#include "contract/kernels_cuda.inc"
#undef SPACEDEPTH_KERNEL
};

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

// The caller's device pointer, wrapped (no copy); detached again after the call.
int attach(ErrorSink &sink, halide_buffer_t &buf, halide_buffer_t &, halide_dimension_t &, uint8_t *address) {
    buf.host = nullptr;
    return halide_cuda_wrap_device_ptr(&sink, &buf, reinterpret_cast<uint64_t>(address));
}

int detach(ErrorSink &sink, CallBuffers &b, int rc) {
    for (halide_buffer_t *buf : {&b.in, &b.out}) {
        if (buf->device != 0) {
            halide_cuda_detach_device_ptr(&sink, buf);
        }
    }
    return rc;
}

constexpr DeviceBackend kCuda = {kCudaKernels, std::size(kCudaKernels), install_cuda_hooks, attach, detach};

}  // namespace
}  // namespace spacedepth::detail

// Halide's CUDA runtime finds the driver by this hook. Its own version looks for the symbols in
// the process, then dlopens "libcuda.so": the name that only CUDA's development files provide, so
// on a machine with the driver alone (libcuda.so.1, as on GPU servers and in containers) it found
// none, while our own loader (tools/cuda_driver.cpp, RTLD_LOCAL) had. This definition replaces
// the runtime's weak one and tries the driver's own name first.
extern "C" void *halide_cuda_get_symbol(void *, const char *name) {
    static void *const lib = [] {
        void *l = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        return l != nullptr ? l : dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    }();
    return lib != nullptr ? dlsym(lib, name) : nullptr;
}

extern "C" const spacedepth::detail::DeviceBackend *spacedepth_cuda_backend() { return &spacedepth::detail::kCuda; }
