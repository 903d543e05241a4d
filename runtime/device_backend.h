// A GPU API's side of a kernel call: its kernels, and the glue that points Halide buffers at its
// memory. Each lives in its own component (runtime/gpu/, the libraries spacedepth_cuda and
// spacedepth_opencl), which only programs that link SpaceDepth::cuda or SpaceDepth::opencl
// carry; the core library reaches a linked one through a weak reference (device_backend.cpp).
#pragma once

#include "runtime/halide_errors.h"
#include "runtime/kernel_registry.h"

#include "HalideRuntime.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace spacedepth::detail {

// One kernel call's buffers. span, span_dim: room for a device copy of a buffer's whole byte
// range (the OpenCL path).
struct CallBuffers {
    halide_buffer_t in{}, out{};
    halide_buffer_t in_span{}, out_span{};
    halide_dimension_t in_span_dim{}, out_span_dim{};
};

struct DeviceBackend {
    const RegisteredKernel *kernels;
    size_t kernel_count;
    // Before a call's kernels run.
    void (*prepare)();
    // Points buf at the tensor memory at `address` (span and span_dim: its device copy, if any).
    int (*attach)(ErrorSink &sink, halide_buffer_t &buf, halide_buffer_t &span, halide_dimension_t &span_dim,
                  uint8_t *address);
    // After the kernel returned rc: the output back where it was copied, device memory released.
    int (*detach)(ErrorSink &sink, CallBuffers &buffers, int rc);
};

// The component of a GPU device linked into this program, or nullptr (also for Device::Host).
const DeviceBackend *device_backend(Device device);

// Every kernel this program links: the CPU kernels, then each linked GPU component's.
std::vector<const RegisteredKernel *> linked_kernels();

// Why `device` has no kernels in this program: not built, or its component not linked.
std::string missing_backend_reason(Device device);

}  // namespace spacedepth::detail

// Defined by each component (runtime/gpu/); its link options (-u) make the linker keep it.
extern "C" const spacedepth::detail::DeviceBackend *spacedepth_cuda_backend();
extern "C" const spacedepth::detail::DeviceBackend *spacedepth_opencl_backend();

// The GPU kernels' table rows, from the component's kernels_<api>.inc.
#define SPACEDEPTH_GPU_KERNEL_DECLARATION(device, family, width, name) \
    extern "C" int name(void const *, struct halide_buffer_t *, bool, struct halide_buffer_t *);
#define SPACEDEPTH_GPU_KERNEL_ROW(device, family, width, name) \
    {Device::device, KernelFamily::family, kernel_width<width>(), #name, name, nullptr},
