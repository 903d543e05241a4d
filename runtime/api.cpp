// The public C++ API: converts to the internal problem, validates, builds the view and runs it.
#include "runtime/problem.h"

#include "HalideRuntime.h"

#include "runtime/tuning.h"

#include <cstring>
#include <sstream>
#include <vector>

#ifndef SPACEDEPTH_KERNEL_TARGETS
#define SPACEDEPTH_KERNEL_TARGETS "unknown"
#endif

namespace spacedepth::detail {

Status error(sd_status code, const std::string &message) {
    return Status(code, message);
}

std::string dims_str(const int64_t dims[4]) {
    std::ostringstream s;
    s << "[" << dims[0] << "," << dims[1] << "," << dims[2] << "," << dims[3] << "]";
    return s.str();
}

namespace {

struct DTypeInfo {
    DType dtype;
    const char *name;
    int size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::Bool, "bool", 1}, {DType::Int8, "int8", 1}, {DType::UInt8, "uint8", 1}, {DType::QInt8, "qint8", 1},
    {DType::QUInt8, "quint8", 1}, {DType::Int16, "int16", 2}, {DType::UInt16, "uint16", 2},
    {DType::Float16, "float16", 2}, {DType::BFloat16, "bfloat16", 2}, {DType::Int32, "int32", 4},
    {DType::UInt32, "uint32", 4}, {DType::Float32, "float32", 4}, {DType::QInt32, "qint32", 4},
    {DType::Int64, "int64", 8}, {DType::UInt64, "uint64", 8}, {DType::Float64, "float64", 8},
    {DType::Complex64, "complex64", 8}, {DType::Complex128, "complex128", 16},
};
static_assert(sizeof(kDTypes) / sizeof(kDTypes[0]) == SD_DTYPE_COUNT, "one entry per sd_dtype, in order");

const DTypeInfo *dtype_info(DType d) {
    const int i = static_cast<int>(d);
    return i >= 0 && i < SD_DTYPE_COUNT ? &kDTypes[i] : nullptr;
}

sd_tensor to_c(const Tensor &t) {
    sd_tensor c{};
    c.data = t.data;
    c.dtype = static_cast<sd_dtype>(t.dtype);
    c.layout = static_cast<sd_layout>(t.layout);
    for (int i = 0; i < 4; i++) {
        c.dims[i] = t.dims[i];
        c.strides[i] = t.strides[i];
    }
    return c;
}

sd_params to_c(const Params &p) {
    return sd_params{static_cast<sd_op>(p.op), p.block.h, p.block.w, static_cast<sd_order>(p.order), p.threads};
}

}  // namespace

Status run_c(const sd_params &params, const sd_tensor &in, const sd_tensor &out, const DeviceCall &call) {
    Problem problem;
    if (Status s = validate(params, in, out, &problem); !s.ok()) {
        return s;
    }
    if (problem.empty) {
        return {};
    }
    // A build for CPU features this CPU lacks (SPACEDEPTH_TARGETS without a baseline target)
    // would fault on its first instruction: refuse instead.
    if (call.device == Device::Host && cpu_kernel_target() == "none") {
        return error(SD_ERROR_UNSUPPORTED, std::string("this CPU cannot run any of the kernel targets this build was generated for (") +
                                               SPACEDEPTH_KERNEL_TARGETS + "); rebuild with a baseline target in SPACEDEPTH_TARGETS");
    }
    return execute(problem, normalize(problem, build_view(problem), call.device), call);
}

Status output_dims_c(const sd_params &params, const int64_t in_dims[4], int64_t out_dims[4]) {
    if (Status s = check_params(params); !s.ok()) {
        return s;
    }
    return implied_dims(params, in_dims, out_dims);
}

}  // namespace spacedepth::detail

namespace spacedepth {

using detail::error;

Tensor Tensor::dense(void *data, DType dtype, Layout layout, const Dims &dims) {
    Tensor t;
    t.data = data;
    t.dtype = dtype;
    t.layout = layout;
    t.dims = dims;
    sd_tensor c{};
    if (sd_tensor_init_dense(&c, data, static_cast<sd_dtype>(dtype), static_cast<sd_layout>(layout), dims[0], dims[1],
                             dims[2], dims[3]) == SD_OK) {
        for (int i = 0; i < 4; i++) {
            t.strides[i] = c.strides[i];
        }
    } else {
        t.strides = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};  // rejected later as an overflow
    }
    return t;
}

Status output_dims(const Params &params, const Dims &in_dims, Dims *out_dims) {
    int64_t out[4];
    Status s = detail::output_dims_c(detail::to_c(params), in_dims.data(), out);
    if (s.ok()) {
        std::copy(out, out + 4, out_dims->begin());
    }
    return s;
}

Status detail::run_on(const Params &params, const Tensor &in, const Tensor &out, const DeviceCall &call) {
    return run_c(to_c(params), to_c(in), to_c(out), call);
}

Status run(const Params &params, const Tensor &in, const Tensor &out) {
    return detail::run_on(params, in, out, {});
}

Status run_cuda(const Params &params, const Tensor &in, const Tensor &out, const CudaStream &stream) {
    return detail::run_on(params, in, out, {detail::Device::Cuda, stream.context, stream.stream});
}

Status space_to_depth(const Tensor &in, const Tensor &out, Block block, Order order, int threads) {
    return run(Params{Op::SpaceToDepth, block, order, threads}, in, out);
}

Status depth_to_space(const Tensor &in, const Tensor &out, Block block, Order order, int threads) {
    return run(Params{Op::DepthToSpace, block, order, threads}, in, out);
}

std::string describe_call(const Params &params, const Tensor &in, const Tensor &out) {
    detail::Problem problem;
    Status s = detail::validate(detail::to_c(params), detail::to_c(in), detail::to_c(out), &problem);
    if (!s.ok()) {
        return "rejected: " + s.message();
    }
    if (problem.empty) {
        return "empty tensor: nothing to do";
    }
    return detail::describe_plan(detail::normalize(problem, detail::build_view(problem)));
}


std::string build_info() {
    std::ostringstream s;
    s << "spacedepth " << version() << "\n";
    s << "kernels: " << detail::kernel_names() << "\n";
    s << "kernel targets (best first, chosen at run time): " << SPACEDEPTH_KERNEL_TARGETS << "\n";
    s << "CPU features seen:";
    for (const detail::Feature &f : detail::cpu_features()) {
        if (f.present) s << " " << f.halide_name;
    }
    s << "\n";
    s << "target this CPU runs: " << detail::cpu_kernel_target() << "\n";
    const detail::TuningInfo tuning = detail::tuning_info();
    s << "tuning database: " << (tuning.database.empty() ? "none (schedule defaults)" : tuning.database) << "\n";
    if (!tuning.generator_params.empty()) s << "tuned schedule (u32): " << tuning.generator_params << "\n";
    const detail::SwitchPoints points = detail::switch_points();
    s << "switch points: small_max_bytes=" << points.small_max_bytes << " parallel_min_bytes=" << points.parallel_min_bytes
      << " long_run_bytes=" << points.long_run_bytes << " transpose_min_extent=" << points.transpose_min_extent << "\n";
    s << "threads: " << num_threads() << "\n";
    return s.str();
}

int dtype_size(DType d) {
    const detail::DTypeInfo *i = detail::dtype_info(d);
    return i ? i->size : 0;
}

const char *dtype_name(DType d) {
    const detail::DTypeInfo *i = detail::dtype_info(d);
    return i ? i->name : nullptr;
}

bool dtype_from_name(const std::string &name, DType *d) {
    for (const detail::DTypeInfo &i : detail::kDTypes) {
        if (name == i.name) {
            *d = i.dtype;
            return true;
        }
    }
    return false;
}

const char *op_name(Op op) { return op == Op::SpaceToDepth ? "space_to_depth" : "depth_to_space"; }
const char *order_name(Order order) { return order == Order::DCR ? "DCR" : "CRD"; }
const char *layout_name(Layout l) {
    return l == Layout::NHWC ? "NHWC" : l == Layout::NCHW ? "NCHW" : l == Layout::NCHW_VECT_C ? "NCHW_VECT_C" : "?";
}
const char *version() { return SPACEDEPTH_VERSION_STRING; }  // the library's, from version.h

}  // namespace spacedepth
