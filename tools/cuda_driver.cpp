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
    bool ok = true;  // every symbol is looked up; why_not names the first one missing
    auto need = [&](auto &fn, const char *name) { ok = load(lib, fn, name, w) && ok; };
    need(d.cuInit, "cuInit");
    need(d.cuDeviceGetCount, "cuDeviceGetCount");
    need(d.cuDeviceGet, "cuDeviceGet");
    need(d.cuDeviceGetName, "cuDeviceGetName");
    need(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    need(d.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    need(d.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    need(d.cuCtxSynchronize, "cuCtxSynchronize");
    need(d.cuMemAlloc, "cuMemAlloc_v2");
    need(d.cuMemFree, "cuMemFree_v2");
    need(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    need(d.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    need(d.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
    need(d.cuStreamCreate, "cuStreamCreate");
    need(d.cuStreamDestroy, "cuStreamDestroy_v2");
    need(d.cuStreamSynchronize, "cuStreamSynchronize");
    need(d.cuEventCreate, "cuEventCreate");
    need(d.cuEventDestroy, "cuEventDestroy_v2");
    need(d.cuEventRecord, "cuEventRecord");
    need(d.cuEventSynchronize, "cuEventSynchronize");
    need(d.cuEventElapsedTime, "cuEventElapsedTime");
    need(d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    need(d.cuMemsetD8, "cuMemsetD8_v2");
    need(d.cuMemGetInfo, "cuMemGetInfo_v2");
    need(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    need(d.cuGetErrorString, "cuGetErrorString");
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

void *tensor_context(int device_ordinal, std::string *why) {
    Driver &d = library();
    void *context = d.usable() ? primary_context(device_ordinal) : nullptr;
    if (context == nullptr) {
        *why = "CUDA tensors need the CUDA driver and a GPU: " +
               (d.usable() ? "no primary context for device " + std::to_string(device_ordinal) : d.why_not);
    }
    return context;
}

}  // namespace cuda_driver
