// The plain C API over the core (problem.h): the same structs, passed through. Nothing is thrown
// across this boundary.
#include "runtime/call.h"
#include "runtime/problem.h"
#include "runtime/wisdom.h"

#include <algorithm>

#include <cstring>
#include <exception>
#include <string>

// The C handle of a plan: the core's planned call.
struct sd_plan {
    spacedepth::detail::PlannedCall planned;
};

namespace {

thread_local std::string last_error;

sd_status record(const spacedepth::Status &s) {
    last_error = s.message();
    return s.code();
}

// Runs f, turning an escaping C++ exception into a status: allocation failure has its own; any
// other would be a bug, and is reported rather than thrown into C code.
template <typename F>
sd_status guarded(F &&f) {
    try {
        return record(f());
    } catch (const std::bad_alloc &) {
        return record(spacedepth::Status(SD_ERROR_OUT_OF_MEMORY, "out of memory"));
    } catch (const std::exception &e) {
        return record(spacedepth::Status(SD_ERROR_KERNEL, std::string("internal error: ") + e.what()));
    } catch (...) {
        return record(spacedepth::Status(SD_ERROR_KERNEL, "internal error: unknown exception"));
    }
}

spacedepth::Status null_argument(const char *what) {
    return spacedepth::Status(SD_ERROR_INVALID_ARGUMENT, std::string(what) + " is null");
}

// Fills *t, after checking ndim; the strides stay zero on failure.
spacedepth::Status init_dense(sd_tensor *t, void *data, sd_dtype dtype, sd_layout layout, int ndim,
                              const int64_t *dims) {
    std::memset(t, 0, sizeof(*t));
    t->data = data;
    t->dtype = dtype;
    t->layout = layout;
    t->ndim = ndim;
    if (spacedepth::Status s = spacedepth::detail::check_ndim(ndim, nullptr, "tensor"); !s.ok()) {
        return s;
    }
    std::memcpy(t->dims, dims, sizeof(int64_t) * ndim);
    return spacedepth::detail::dense_strides(layout, ndim, dims, t->strides);
}

}  // namespace

extern "C" {

sd_status sd_tensor_init_dense(sd_tensor *t, void *data, sd_dtype dtype, sd_layout layout, int64_t n, int64_t c,
                               int64_t h, int64_t w) {
    return guarded([&]() -> spacedepth::Status {
        if (t == nullptr) {
            return null_argument("tensor");
        }
        const int64_t dims[4] = {n, c, h, w};
        return init_dense(t, data, dtype, layout, 4, dims);
    });
}

sd_status sd_tensor_init_dense_nd(sd_tensor *t, void *data, sd_dtype dtype, sd_layout layout, int ndim,
                                  const int64_t *dims) {
    return guarded([&]() -> spacedepth::Status {
        if (t == nullptr || dims == nullptr) {
            return null_argument(t == nullptr ? "tensor" : "dims");
        }
        return init_dense(t, data, dtype, layout, ndim, dims);
    });
}

sd_status sd_output_dims(const sd_params *params, const int64_t in_dims[4], int64_t out_dims[4]) {
    return sd_output_dims_nd(params, 4, in_dims, out_dims);
}

sd_status sd_output_dims_nd(const sd_params *params, int ndim, const int64_t *in_dims, int64_t *out_dims) {
    return guarded([&]() -> spacedepth::Status {
        if (params == nullptr || in_dims == nullptr || out_dims == nullptr) {
            return null_argument(params == nullptr ? "params" : in_dims == nullptr ? "in_dims" : "out_dims");
        }
        int64_t implied[SD_MAX_NDIM];
        spacedepth::Status s = spacedepth::detail::output_dims_c(*params, ndim, in_dims, implied);
        if (s.ok()) std::memcpy(out_dims, implied, sizeof(int64_t) * ndim);  // untouched on failure
        return s;
    });
}

sd_status sd_run(const sd_params *params, const sd_tensor *in, const sd_tensor *out) {
    return guarded([&]() -> spacedepth::Status {
        if (params == nullptr || in == nullptr || out == nullptr) {
            return null_argument(params == nullptr ? "params" : in == nullptr ? "input tensor" : "output tensor");
        }
        return spacedepth::detail::run_c(*params, *in, *out, spacedepth::detail::DeviceCall{});
    });
}

sd_status sd_run_cuda(const sd_params *params, const sd_tensor *in, const sd_tensor *out, void *cu_context,
                      void *cu_stream) {
    return guarded([&]() -> spacedepth::Status {
        if (params == nullptr || in == nullptr || out == nullptr) {
            return null_argument(params == nullptr ? "params" : in == nullptr ? "input tensor" : "output tensor");
        }
        const spacedepth::detail::DeviceCall call{spacedepth::Device::Cuda, cu_context, cu_stream};
        return spacedepth::detail::run_c(*params, *in, *out, call);
    });
}

sd_status sd_plan_create(const sd_params *params, const sd_tensor *in_desc, const sd_tensor *out_desc, sd_plan **plan) {
    return sd_plan_create_with(params, in_desc, out_desc, nullptr, plan);
}

sd_status sd_plan_create_with(const sd_params *params, const sd_tensor *in_desc, const sd_tensor *out_desc,
                              const sd_plan_options *options, sd_plan **plan) {
    return guarded([&]() -> spacedepth::Status {
        if (plan == nullptr) {
            return null_argument("plan");
        }
        *plan = nullptr;
        if (params == nullptr || in_desc == nullptr || out_desc == nullptr) {
            return null_argument(params == nullptr    ? "params"
                                 : in_desc == nullptr ? "input descriptor"
                                                      : "output descriptor");
        }
        spacedepth::detail::PlanMode mode;
        if (options != nullptr) {
            if (spacedepth::Status s = spacedepth::detail::check_plan_options(*options, &mode); !s.ok()) {
                return s;
            }
        }
        spacedepth::detail::PlannedCall planned;
        if (spacedepth::Status s =
                spacedepth::detail::plan_call(*params, *in_desc, *out_desc, spacedepth::Device::Host, &planned, mode);
            !s.ok()) {
            return s;
        }
        *plan = new sd_plan{std::move(planned)};
        return {};
    });
}

sd_status sd_plan_run(const sd_plan *plan, const void *in, void *out) {
    return guarded([&]() -> spacedepth::Status {
        if (plan == nullptr) {
            return null_argument("plan");
        }
        return spacedepth::detail::run_planned(plan->planned, in, out, spacedepth::detail::DeviceCall{});
    });
}

void sd_plan_destroy(sd_plan *plan) { delete plan; }

int sd_plan_describe(const sd_plan *plan, char *text, int size) {
    if (plan == nullptr) return -1;
    try {
        const std::string words = spacedepth::detail::describe_planned(plan->planned);
        if (text != nullptr && size > 0) {
            const size_t n = std::min(words.size(), static_cast<size_t>(size) - 1);
            std::memcpy(text, words.data(), n);
            text[n] = '\0';
        }
        return static_cast<int>(words.size());
    } catch (const std::bad_alloc &) {
        if (text != nullptr && size > 0) text[0] = '\0';
        return -1;
    }
}

sd_status sd_wisdom_export(const char *path) {
    return guarded([&]() -> spacedepth::Status {
        return path == nullptr ? null_argument("path") : spacedepth::detail::export_wisdom_file(path);
    });
}

sd_status sd_wisdom_import(const char *path) {
    return guarded([&]() -> spacedepth::Status {
        return path == nullptr ? null_argument("path") : spacedepth::detail::import_wisdom_file(path);
    });
}

void sd_wisdom_forget(void) { spacedepth::detail::forget_wisdom(); }

const char *sd_last_error(void) { return last_error.c_str(); }

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
    case SD_ERROR_OUT_OF_MEMORY: return "out of memory";
    }
    return "unknown status";
}

const char *sd_dtype_name(sd_dtype dtype) { return spacedepth::detail::dtype_label(dtype); }

int sd_dtype_size(sd_dtype dtype) { return spacedepth::detail::dtype_bytes(dtype); }

sd_status sd_dtype_from_name(const char *name, sd_dtype *dtype) {
    return guarded([&]() -> spacedepth::Status {
        if (name == nullptr || dtype == nullptr) {
            return null_argument(name == nullptr ? "name" : "dtype");
        }
        const int i = spacedepth::detail::dtype_index(name);
        if (i < 0) {
            return spacedepth::Status(SD_ERROR_INVALID_ARGUMENT, std::string("unknown dtype name '") + name + "'");
        }
        *dtype = static_cast<sd_dtype>(i);
        return {};
    });
}

sd_status sd_dtype_from_typestr(const char *typestr, sd_dtype *dtype) {
    return guarded([&]() -> spacedepth::Status {
        if (typestr == nullptr || dtype == nullptr) {
            return null_argument(typestr == nullptr ? "typestr" : "dtype");
        }
        return spacedepth::detail::dtype_from_typestr(typestr, dtype);
    });
}

sd_status sd_set_num_threads(int threads) {
    return guarded([&]() -> spacedepth::Status { return spacedepth::detail::set_pool_threads(threads); });
}

int sd_get_num_threads(void) { return spacedepth::detail::pool_threads(); }

const char *spacedepth_version(void) { return SPACEDEPTH_VERSION_STRING; }

}  // extern "C"
