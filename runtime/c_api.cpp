// The plain C API over the C++ core. Nothing is thrown across this boundary.
#include "runtime/checked_math.h"
#include "runtime/problem.h"

#include <cstring>
#include <exception>
#include <string>

namespace {

thread_local std::string last_error;

sd_status record(const spacedepth::Status &s) {
    last_error = s.message();
    return s.code();
}

// Runs f, turning any escaping C++ exception (allocation failure) into a status.
template <typename F>
sd_status guarded(F &&f) {
    try {
        return record(f());
    } catch (const std::exception &e) {
        return record(spacedepth::Status(SD_ERROR_KERNEL, std::string("internal error: ") + e.what()));
    } catch (...) {
        return record(spacedepth::Status(SD_ERROR_KERNEL, "internal error: unknown exception"));
    }
}

spacedepth::Status null_argument(const char *what) {
    return spacedepth::Status(SD_ERROR_INVALID_ARGUMENT, std::string(what) + " is null");
}

}  // namespace

extern "C" {

sd_status sd_tensor_init_dense(sd_tensor *t, void *data, sd_dtype dtype, sd_layout layout, int64_t n, int64_t c,
                               int64_t h, int64_t w) {
    using spacedepth::detail::checked_mul;
    return guarded([&]() -> spacedepth::Status {
        if (t == nullptr) {
            return null_argument("tensor");
        }
        std::memset(t, 0, sizeof(*t));
        t->data = data;
        t->dtype = dtype;
        t->layout = layout;
        const int64_t dims[4] = {n, c, h, w};
        std::memcpy(t->dims, dims, sizeof(dims));
        for (int64_t d : dims) {
            if (d < 0) {
                return spacedepth::Status(SD_ERROR_INVALID_ARGUMENT, "dims must be >= 0: got " + spacedepth::detail::dims_str(dims));
            }
        }
        // Memory order, innermost first, as (logical dim, extent in memory).
        int order[4];
        int64_t c_extent = c;
        if (layout == SD_LAYOUT_NHWC) {
            const int o[4] = {1, 3, 2, 0};
            std::memcpy(order, o, sizeof(o));
        } else if (layout == SD_LAYOUT_NCHW || layout == SD_LAYOUT_NCHW_VECT_C) {
            const int o[4] = {3, 2, 1, 0};
            std::memcpy(order, o, sizeof(o));
            if (layout == SD_LAYOUT_NCHW_VECT_C) {
                if (c % 4 != 0) {
                    return spacedepth::Status(SD_ERROR_SHAPE, "NCHW_VECT_C needs channels divisible by 4: got C=" + std::to_string(c));
                }
                c_extent = c / 4;
            }
        } else {
            return spacedepth::Status(SD_ERROR_INVALID_ARGUMENT, "layout " + std::to_string(layout) + " is not NHWC (0), NCHW (1) or NCHW_VECT_C (2)");
        }
        int64_t stride = layout == SD_LAYOUT_NCHW_VECT_C ? 4 : 1;
        for (int k : order) {
            t->strides[k] = stride;
            const int64_t extent = k == 1 ? c_extent : dims[k];
            if (!checked_mul(stride, extent, &stride)) {
                return spacedepth::Status(SD_ERROR_OVERFLOW, "dense strides overflow int64 for dims " + spacedepth::detail::dims_str(dims));
            }
        }
        return {};
    });
}

sd_status sd_output_dims(const sd_params *params, const int64_t in_dims[4], int64_t out_dims[4]) {
    return guarded([&]() -> spacedepth::Status {
        if (params == nullptr || in_dims == nullptr || out_dims == nullptr) {
            return null_argument(params == nullptr ? "params" : in_dims == nullptr ? "in_dims" : "out_dims");
        }
        return spacedepth::detail::output_dims_c(*params, in_dims, out_dims);
    });
}

sd_status sd_run(const sd_params *params, const sd_tensor *in, const sd_tensor *out) {
    return guarded([&]() -> spacedepth::Status {
        if (params == nullptr || in == nullptr || out == nullptr) {
            return null_argument(params == nullptr ? "params" : in == nullptr ? "input tensor" : "output tensor");
        }
        return spacedepth::detail::run_c(*params, *in, *out);
    });
}

sd_status sd_run_cuda(const sd_params *params, const sd_tensor *in, const sd_tensor *out, void *cu_context,
                      void *cu_stream) {
    return guarded([&]() -> spacedepth::Status {
        if (params == nullptr || in == nullptr || out == nullptr) {
            return null_argument(params == nullptr ? "params" : in == nullptr ? "input tensor" : "output tensor");
        }
        const spacedepth::detail::DeviceCall call{spacedepth::detail::Device::Cuda, cu_context, cu_stream};
        return spacedepth::detail::run_c(*params, *in, *out, call);
    });
}

const char *sd_last_error(void) {
    return last_error.c_str();
}

const char *sd_status_name(sd_status status) {
    switch (status) {
    case SD_OK: return "ok";
    case SD_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case SD_ERROR_SHAPE: return "shape error";
    case SD_ERROR_OVERFLOW: return "overflow";
    case SD_ERROR_OVERLAP: return "overlap";
    case SD_ERROR_NULL_DATA: return "null data";
    case SD_ERROR_UNSUPPORTED: return "unsupported";
    case SD_ERROR_KERNEL: return "kernel error";
    }
    return "unknown status";
}

const char *sd_dtype_name(sd_dtype dtype) {
    return spacedepth::dtype_name(static_cast<spacedepth::DType>(dtype));
}

int sd_dtype_size(sd_dtype dtype) {
    return spacedepth::dtype_size(static_cast<spacedepth::DType>(dtype));
}

sd_status sd_dtype_from_name(const char *name, sd_dtype *dtype) {
    return guarded([&]() -> spacedepth::Status {
        spacedepth::DType d;
        if (name == nullptr || dtype == nullptr) {
            return null_argument(name == nullptr ? "name" : "dtype");
        }
        if (!spacedepth::dtype_from_name(name, &d)) {
            return spacedepth::Status(SD_ERROR_INVALID_ARGUMENT, std::string("unknown dtype name '") + name + "'");
        }
        *dtype = static_cast<sd_dtype>(d);
        return {};
    });
}

sd_status sd_set_num_threads(int threads) {
    return guarded([&]() -> spacedepth::Status {
        if (threads < 0) {
            return spacedepth::Status(SD_ERROR_INVALID_ARGUMENT, "threads must be >= 0: got " + std::to_string(threads));
        }
        spacedepth::set_num_threads(threads);
        return {};
    });
}

int sd_get_num_threads(void) {
    return spacedepth::num_threads();
}

const char *sd_version(void) {
    return spacedepth::version();
}

const char *spacedepth_version(void) {
    return spacedepth::version();
}

}  // extern "C"
