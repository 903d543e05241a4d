#include "tools/cuda_driver.h"

#include <dlfcn.h>

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
    bool ok = load(lib, d.cuInit, "cuInit", w) & load(lib, d.cuDeviceGetCount, "cuDeviceGetCount", w) &
              load(lib, d.cuDeviceGet, "cuDeviceGet", w) & load(lib, d.cuDeviceGetName, "cuDeviceGetName", w) &
              load(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", w) &
              load(lib, d.cuCtxPushCurrent, "cuCtxPushCurrent_v2", w) &
              load(lib, d.cuCtxPopCurrent, "cuCtxPopCurrent_v2", w) &
              load(lib, d.cuCtxSynchronize, "cuCtxSynchronize", w) & load(lib, d.cuMemAlloc, "cuMemAlloc_v2", w) &
              load(lib, d.cuMemFree, "cuMemFree_v2", w) & load(lib, d.cuMemcpyHtoD, "cuMemcpyHtoD_v2", w) &
              load(lib, d.cuMemcpyDtoH, "cuMemcpyDtoH_v2", w) & load(lib, d.cuMemcpyDtoD, "cuMemcpyDtoD_v2", w);
    if (!ok) {
        return d;
    }
    int count = 0, device = 0;
    if (d.cuInit(0) != 0 || d.cuDeviceGetCount(&count) != 0 || count == 0) {
        d.why_not = "a CUDA driver but no usable GPU (cuInit / cuDeviceGetCount)";
        return d;
    }
    char name[256] = {};
    if (d.cuDeviceGet(&device, 0) != 0 || d.cuDevicePrimaryCtxRetain(&d.context, device) != 0 ||
        d.cuCtxPushCurrent(d.context) != 0) {
        d.why_not = "could not make GPU 0's primary context current";
        return d;
    }
    d.cuDeviceGetName(name, sizeof(name) - 1, device);
    d.device_name = name;
    return d;
}

}  // namespace

Driver &driver() {
    static Driver d = open_driver();
    return d;
}

}  // namespace cuda_driver
