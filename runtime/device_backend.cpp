// Kernel lookup for every device: the CPU kernels of this library, and the GPU components'
// kernels where a program links them (device_backend.h).
#include "runtime/device_backend.h"

#include <string>

// Weak: a program that links no GPU component resolves these to null.
#pragma weak spacedepth_cuda_backend
#pragma weak spacedepth_opencl_backend

namespace spacedepth::detail {

const DeviceBackend *device_backend(Device device) {
    switch (device) {
    case Device::Host: return nullptr;
    case Device::Cuda: return spacedepth_cuda_backend != nullptr ? spacedepth_cuda_backend() : nullptr;
    case Device::OpenCL: return spacedepth_opencl_backend != nullptr ? spacedepth_opencl_backend() : nullptr;
    }
    return nullptr;
}

std::string missing_backend_reason(Device device) {
    const bool cuda = device == Device::Cuda;
    constexpr bool kBuilt[] = {SPACEDEPTH_HAS_CUDA, SPACEDEPTH_HAS_OPENCL};  // by API, as this build made them
    const bool built = kBuilt[cuda ? 0 : 1];
    const std::string api = cuda ? "CUDA" : "OpenCL";
    if (!built) {
        return "this build has no " + api + " kernels (configured with SPACEDEPTH_" + (cuda ? "CUDA" : "OPENCL") +
               "=OFF)";
    }
    const std::string component = cuda ? "cuda" : "opencl";
    return "this program was linked without spacedepth's " + api + " kernels: link SpaceDepth::" + component +
           " (find_package(SpaceDepth COMPONENTS " + component + ")) or pkg-config spacedepth-" + component;
}

std::vector<const RegisteredKernel *> linked_kernels() {
    std::vector<const RegisteredKernel *> all;
    for (const RegisteredKernel &k : kRegisteredKernels) all.push_back(&k);
    for (Device device : {Device::Cuda, Device::OpenCL}) {
        if (const DeviceBackend *backend = device_backend(device)) {
            for (size_t i = 0; i < backend->kernel_count; i++) all.push_back(&backend->kernels[i]);
        }
    }
    return all;
}

const RegisteredKernel *find_kernel(Device device, KernelFamily family, int width) {
    if (device == Device::Host) {
        for (const RegisteredKernel *k : kMicrokernels) {
            if (k->family == family && k->width == width) return k;
        }
    }
    const RegisteredKernel *begin = kRegisteredKernels;
    size_t count = std::size(kRegisteredKernels);
    if (device != Device::Host) {
        const DeviceBackend *backend = device_backend(device);
        if (backend == nullptr) return nullptr;
        begin = backend->kernels;
        count = backend->kernel_count;
    }
    for (size_t i = 0; i < count; i++) {
        const RegisteredKernel &k = begin[i];
        if (k.device == device && k.family == family && k.width == width) return &k;
    }
    return nullptr;
}

}  // namespace spacedepth::detail
