#include "tools/cuda_driver.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace cuda_driver {

namespace {

template <typename F>
bool load(void *lib, F &fn, const char *name, std::string &why_not) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    if (fn == nullptr && why_not.empty()) {
        why_not = std::string("libcuda.so.1 has no ") + name;
    }
    return fn != nullptr;
}

Driver open_driver() {
    Driver d;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        d.why_not = "no CUDA driver on this machine (libcuda.so.1 not found)";
        return d;
    }
    d.has_library = true;
    std::string &w = d.why_not;
    bool ok =
        load(lib, d.cuInit, "cuInit", w) & load(lib, d.cuDeviceGetCount, "cuDeviceGetCount", w) &
        load(lib, d.cuDeviceGet, "cuDeviceGet", w) & load(lib, d.cuDeviceGetName, "cuDeviceGetName", w) &
        load(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", w) &
        load(lib, d.cuCtxPushCurrent, "cuCtxPushCurrent_v2", w) &
        load(lib, d.cuCtxPopCurrent, "cuCtxPopCurrent_v2", w) & load(lib, d.cuCtxSynchronize, "cuCtxSynchronize", w) &
        load(lib, d.cuMemAlloc, "cuMemAlloc_v2", w) & load(lib, d.cuMemFree, "cuMemFree_v2", w) &
        load(lib, d.cuMemcpyHtoD, "cuMemcpyHtoD_v2", w) & load(lib, d.cuMemcpyDtoH, "cuMemcpyDtoH_v2", w) &
        load(lib, d.cuMemcpyDtoD, "cuMemcpyDtoD_v2", w) & load(lib, d.cuStreamCreate, "cuStreamCreate", w) &
        load(lib, d.cuStreamDestroy, "cuStreamDestroy_v2", w) &
        load(lib, d.cuStreamSynchronize, "cuStreamSynchronize", w) & load(lib, d.cuEventCreate, "cuEventCreate", w) &
        load(lib, d.cuEventDestroy, "cuEventDestroy_v2", w) & load(lib, d.cuEventRecord, "cuEventRecord", w) &
        load(lib, d.cuEventSynchronize, "cuEventSynchronize", w) &
        load(lib, d.cuEventElapsedTime, "cuEventElapsedTime", w) &
        load(lib, d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", w) & load(lib, d.cuMemsetD8, "cuMemsetD8_v2", w) &
        load(lib, d.cuMemGetInfo, "cuMemGetInfo_v2", w) & load(lib, d.cuDeviceGetAttribute, "cuDeviceGetAttribute", w) &
        load(lib, d.cuGetErrorString, "cuGetErrorString", w);
    if (!ok) {
        return d;
    }
    int count = 0;
    if (d.cuInit(0) != 0 || d.cuDeviceGetCount(&count) != 0 || count == 0) {
        d.why_not = "a CUDA driver but no usable GPU (cuInit / cuDeviceGetCount)";
    }
    return d;
}

}  // namespace

Driver &library() {
    static Driver d = open_driver();
    return d;
}

Driver &driver() {
    static Driver &d = []() -> Driver & {
        Driver &lib = library();
        int device = 0;
        char name[256] = {};
        if (lib.usable() &&
            (lib.cuDeviceGet(&device, 0) != 0 || lib.cuDevicePrimaryCtxRetain(&lib.context, device) != 0 ||
             lib.cuCtxPushCurrent(lib.context) != 0)) {
            lib.why_not = "could not make GPU 0's primary context current";
        }
        if (lib.usable()) {
            lib.cuDeviceGetName(name, sizeof(name) - 1, device);
            lib.device_name = name;
        }
        return lib;
    }();
    return d;
}

void *primary_context(int device_ordinal) {
    Driver &d = library();
    static std::mutex mutex;
    static std::map<int, void *> contexts;  // retained once per device, for the process's life
    std::lock_guard<std::mutex> lock(mutex);
    if (!d.usable()) return nullptr;
    if (auto it = contexts.find(device_ordinal); it != contexts.end()) return it->second;
    int device = 0;
    void *context = nullptr;
    if (d.cuDeviceGet(&device, device_ordinal) != 0 || d.cuDevicePrimaryCtxRetain(&context, device) != 0) {
        return nullptr;
    }
    contexts[device_ordinal] = context;
    return context;
}

}  // namespace cuda_driver
