// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"), for the CUDA tests,
// `spacedepth bench --device cuda` and the Python module's CUDA arrays: device memory, copies and a context, with no
// link-time CUDA dependency, so the binaries run unchanged on machines with and without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuda_driver {

struct Driver {
    int (*cuInit)(unsigned) = nullptr;
    int (*cuDeviceGetCount)(int *) = nullptr;
    int (*cuDeviceGet)(int *, int) = nullptr;
    int (*cuDeviceGetName)(char *, int, int) = nullptr;
    int (*cuDevicePrimaryCtxRetain)(void **, int) = nullptr;
    int (*cuCtxPushCurrent)(void *) = nullptr;
    int (*cuCtxPopCurrent)(void **) = nullptr;
    int (*cuCtxSynchronize)() = nullptr;
    int (*cuMemAlloc)(uint64_t *, size_t) = nullptr;
    int (*cuMemFree)(uint64_t) = nullptr;
    int (*cuMemcpyHtoD)(uint64_t, const void *, size_t) = nullptr;
    int (*cuMemcpyDtoH)(void *, uint64_t, size_t) = nullptr;
    int (*cuMemcpyDtoD)(uint64_t, uint64_t, size_t) = nullptr;
    // For timing (bench/gpu_bench.cpp): streams, events, asynchronous copies and fills.
    int (*cuStreamCreate)(void **, unsigned) = nullptr;
    int (*cuStreamDestroy)(void *) = nullptr;
    int (*cuStreamSynchronize)(void *) = nullptr;
    int (*cuEventCreate)(void **, unsigned) = nullptr;
    int (*cuEventDestroy)(void *) = nullptr;
    int (*cuEventRecord)(void *, void *) = nullptr;
    int (*cuEventSynchronize)(void *) = nullptr;
    int (*cuEventElapsedTime)(float *, void *, void *) = nullptr;
    int (*cuMemcpyDtoDAsync)(uint64_t, uint64_t, size_t, void *) = nullptr;
    int (*cuMemsetD8)(uint64_t, unsigned char, size_t) = nullptr;
    int (*cuMemGetInfo)(size_t *, size_t *) = nullptr;
    int (*cuDeviceGetAttribute)(int *, int, int) = nullptr;
    int (*cuGetErrorString)(int, const char **) = nullptr;

    bool has_library = false;  // libcuda.so.1 was found
    void *context = nullptr;   // GPU 0's primary context, current on the loading thread
    std::string device_name;
    std::string why_not;  // empty when usable

    bool usable() const { return why_not.empty(); }
};

// Loads the driver once, initialises it and makes GPU 0's primary context current on the
// calling thread; why_not says what is missing when it cannot.
Driver &driver();
// The driver loaded and initialised, no context touched (for callers with contexts of their own).
Driver &library();
// A device's primary context (the one PyTorch, CuPy and JAX use), retained once per process and
// never made current here; null without a driver or that device.
void *primary_context(int device_ordinal);
// The context for a framework's CUDA tensors on a device: its primary context, or null with *why
// saying what is missing ("CUDA tensors need the CUDA driver and a GPU: ...").
void *tensor_context(int device_ordinal, std::string *why);

}  // namespace cuda_driver
