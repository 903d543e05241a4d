// The public C++ API (include/spacedepth/spacedepth.h) over the core: the C++ types convert to
// the core's C structs here, in one direction; build_info() and the name conversions too.
#include "runtime/block_shuffle.h"
#include "runtime/call.h"
#include "runtime/device_backend.h"
#include "runtime/isa.h"
#include "runtime/switch_points.h"
#include "runtime/tile_transpose.h"
#include "runtime/vect_c_regroup.h"
#include "runtime/wisdom.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <sstream>
#include <string>
#include <utility>

namespace spacedepth::detail {

namespace {

sd_tensor to_c(const Tensor &t) {
    sd_tensor c{};
    c.data = t.data;
    c.dtype = static_cast<sd_dtype>(t.dtype);
    c.layout = static_cast<sd_layout>(t.layout);
    c.ndim = t.dims.ndim();
    // All SD_MAX_NDIM entries (those past ndim are ignored): a copy of constant size, no memmove.
    std::copy_n(t.dims.data(), SD_MAX_NDIM, c.dims);
    std::copy_n(t.strides.data(), SD_MAX_NDIM, c.strides);
    return c;
}

// A square block takes the sizes of the tensors' spatial rank (ndim - 2); the others pass as given.
sd_params to_c(const Params &p, int ndim) {
    const Block &b = p.block;
    sd_params c{static_cast<sd_op>(p.op), b.h, b.w, static_cast<sd_order>(p.order), p.threads, b.d};
    if (b.square) {
        c.block_h = ndim == 3 ? 1 : b.w;
        c.block_d = ndim == 5 ? b.w : 0;
    }
    return c;
}

}  // namespace

Status run_on(const Params &params, const Tensor &in, const Tensor &out, const DeviceCall &call) {
    return run_c(to_c(params, in.dims.ndim()), to_c(in), to_c(out), call);
}

}  // namespace spacedepth::detail

namespace spacedepth {

Tensor Tensor::dense(void *data, DType dtype, Layout layout, const Dims &dims) {
    Tensor t;
    t.data = data;
    t.dtype = dtype;
    t.layout = layout;
    t.dims = dims;
    t.strides = dims;  // the same count
    if (!detail::dense_strides(static_cast<sd_layout>(layout), dims.ndim(), dims.data(), t.strides.data()).ok()) {
        std::fill(t.strides.begin(), t.strides.end(), INT64_MAX);  // rejected later as an overflow
    }
    return t;
}

Status output_dims(const Params &params, const Dims &in_dims, Dims *out_dims) {
    Dims implied = in_dims;  // the same count
    Status s =
        detail::output_dims_c(detail::to_c(params, in_dims.ndim()), in_dims.ndim(), in_dims.data(), implied.data());
    if (s.ok()) *out_dims = implied;  // untouched on failure
    return s;
}

Status run(const Params &params, const Tensor &in, const Tensor &out) { return detail::run_on(params, in, out, {}); }

Status run_cuda(const Params &params, const Tensor &in, const Tensor &out, const CudaStream &stream) {
    return detail::run_on(params, in, out, {Device::Cuda, stream.context, stream.stream});
}

Status space_to_depth(const Tensor &in, const Tensor &out, Block block, Order order, int threads) {
    return run(Params{Op::SpaceToDepth, block, order, threads}, in, out);
}

Status depth_to_space(const Tensor &in, const Tensor &out, Block block, Order order, int threads) {
    return run(Params{Op::DepthToSpace, block, order, threads}, in, out);
}

Plan::~Plan() { delete planned_; }

Plan::Plan(Plan &&other) noexcept : planned_(other.planned_) { other.planned_ = nullptr; }

Plan &Plan::operator=(Plan &&other) noexcept {
    if (this != &other) {
        delete planned_;
        planned_ = other.planned_;
        other.planned_ = nullptr;
    }
    return *this;
}

Status Plan::create(const Params &params, const Tensor &in, const Tensor &out) {
    return create(params, in, out, PlanOptions{});
}

Status Plan::create(const Params &params, const Tensor &in, const Tensor &out, const PlanOptions &options) {
    delete planned_;
    planned_ = nullptr;
    detail::PlanMode mode;
    const sd_plan_options c_options{options.measure ? SD_PLAN_MEASURE : SD_PLAN_ESTIMATE, options.time_limit_ms};
    if (Status s = detail::check_plan_options(c_options, &mode); !s.ok()) {
        return s;
    }
    detail::PlannedCall planned;
    if (Status s = detail::plan_call(detail::to_c(params, in.dims.ndim()), detail::to_c(in), detail::to_c(out),
                                     Device::Host, &planned, mode);
        !s.ok()) {
        return s;
    }
    planned_ = new (std::nothrow) detail::PlannedCall(std::move(planned));
    return planned_ != nullptr ? Status() : Status(SD_ERROR_OUT_OF_MEMORY, "out of memory");
}

Status Plan::run(const void *in, void *out) const {
    if (planned_ == nullptr) {
        return Status(SD_ERROR_INVALID_ARGUMENT, "the plan is empty: create() has not succeeded");
    }
    return detail::run_planned(*planned_, in, out, {});
}

std::string Plan::describe() const {
    if (planned_ == nullptr) return "empty plan";
    return detail::describe_planned(*planned_);
}

Status export_wisdom(const std::string &path) {
    return detail::catching_bad_alloc([&] { return detail::export_wisdom_file(path); });
}
Status import_wisdom(const std::string &path) {
    return detail::catching_bad_alloc([&] { return detail::import_wisdom_file(path); });
}
Status import_wisdom_text(const std::string &text) {
    return detail::catching_bad_alloc([&] { return detail::import_wisdom_text(text, "text"); });
}
std::string wisdom_text() { return detail::wisdom_text(); }
void forget_wisdom() { detail::forget_wisdom(); }

std::string describe_call(const Params &params, const Tensor &in, const Tensor &out) {
    detail::Problem problem;
    Status s = detail::validate(detail::to_c(params, in.dims.ndim()), detail::to_c(in), detail::to_c(out), &problem);
    detail::View view;
    if (s.ok() && !problem.empty) {
        s = detail::build_view(problem, &view);
    }
    if (!s.ok()) {
        return "rejected: " + s.message();
    }
    if (problem.empty) {
        return "empty tensor: nothing to do";
    }
    bool from_wisdom = false;
    const detail::KernelPlan plan = detail::wise_plan(problem, view, Device::Host, &from_wisdom);
    return detail::describe_plan(plan) + (from_wisdom ? "; from wisdom" : "");
}

std::string build_info() {
    std::ostringstream s;
    s << "spacedepth " << version() << "\n";
    s << "kernels:";
    const char *separator = " ";
    for (const detail::RegisteredKernel *k : detail::linked_kernels()) {
        s << separator << k->name;
        separator = ", ";
    }
    s << "\n";
    s << "streaming-store twins:";
    separator = " ";
    for (const detail::RegisteredKernel *k : detail::linked_kernels()) {
        if (k->stream == nullptr) continue;
        s << separator << k->stream->name;
        separator = ", ";
    }
    if (*separator == ' ') {
        s << " none (SPACEDEPTH_STREAMING off, or no kernel target that streams)";
    } else {
#if defined(__x86_64__)  // generators/stream_stores.py prefetches on x86 only
        constexpr long long kAhead = SPACEDEPTH_STREAM_PREFETCH_BYTES;
        s << (kAhead > 0 ? " (input prefetched " + std::to_string(kAhead) + " bytes ahead)" : " (no input prefetch)");
#endif
    }
    s << "\n";
    s << "microkernels (the runtime's own, on the path this CPU runs): shuffle ("
      << detail::shuffle_isa_name(detail::best_shuffle_isa()) << "), tile transpose ("
      << detail::tile_isa_name(detail::best_tile_isa()) << "), NCHW_VECT_C regroup ("
      << detail::regroup_isa_name(detail::best_regroup_isa()) << ")\n";
    s << "kernel targets (best first, chosen at run time): " << detail::kernel_targets() << "\n";
    s << "CPU: " << cpu_probe::identity(cpu_probe::read_cpuid())
      << " (features from CPUID bits and XCR0, not the model)\n";
    s << "CPU features seen: " << cpu_probe::present_names(detail::cpu_features()) << "\n";
    s << "target this CPU runs: " << detail::cpu_kernel_target() << "\n";
    if (const std::string &t = detail::cpu_kernel_target(); t.find("-avx512_cannonlake") != std::string::npos) {
        // The VBMI rung is built for the 1-byte kernels only (generators/CMakeLists.txt).
        std::string wider = t;
        wider.erase(wider.find("-avx512_cannonlake"), std::strlen("-avx512_cannonlake"));
        s << "  (1-byte kernels; 2- to 8-byte kernels: " << wider << ")\n";
    }
    const detail::IsaCap &cap = detail::isa_cap();
    std::string levels;  // from the probe's own list, so the message cannot fall behind it
    for (const char *level : detail::kIsaLevels) levels += (levels.empty() ? "" : ", ") + std::string(level);
    s << "ISA cap (SPACEDEPTH_MAX_ISA): "
      << (cap.value.empty() ? std::string("none")
          : cap.level >= 0  ? cap.value + " (kernels take at most the " + cap.value + " path)"
                            : "'" + cap.value + "' is not one of " + levels + ": no cap")
      << "\n";
    const detail::TuningInfo tuning = detail::tuning_info();
    s << "tuning database: " << (tuning.database.empty() ? "none (schedule defaults)" : tuning.database);
    if (!tuning.cpu_model.empty()) s << " (with its switch points for this CPU model, " << tuning.cpu_model << ")";
    s << "\n";
    if (!tuning.generator_params.empty()) s << "tuned schedule (u32): " << tuning.generator_params << "\n";
    s << "switch points: " << detail::format_switch_points(detail::switch_points()) << "\n";
    s << "threads: " << num_threads() << "\n";
    return s.str();
}

int dtype_size(DType d) { return detail::dtype_bytes(static_cast<sd_dtype>(d)); }
int layout_lanes(Layout l) { return static_cast<int>(detail::layout_lanes(static_cast<sd_layout>(l))); }
const char *dtype_name(DType d) { return detail::dtype_label(static_cast<sd_dtype>(d)); }
const char *op_name(Op op) { return detail::op_label(static_cast<sd_op>(op)); }
const char *order_name(Order order) { return detail::order_label(static_cast<sd_order>(order)); }
const char *layout_name(Layout l) { return detail::layout_label(static_cast<sd_layout>(l)); }

namespace {

template <typename E>
bool from_index(int i, E *value) {
    if (i < 0) return false;
    *value = static_cast<E>(i);
    return true;
}

}  // namespace

bool dtype_from_name(const std::string &name, DType *d) { return from_index(detail::dtype_index(name), d); }
Status dtype_from_typestr(const std::string &typestr, DType *d) {
    sd_dtype c = SD_FLOAT32;
    Status s = detail::dtype_from_typestr(typestr, &c);
    if (s.ok()) *d = static_cast<DType>(c);
    return s;
}
bool op_from_name(const std::string &name, Op *op) { return from_index(detail::op_index(name), op); }
bool order_from_name(const std::string &name, Order *order) { return from_index(detail::order_index(name), order); }
bool layout_from_name(const std::string &name, Layout *l) { return from_index(detail::layout_index(name), l); }

Status set_num_threads(int threads) { return detail::set_pool_threads(threads); }
int num_threads() { return detail::pool_threads(); }

const char *version() { return SPACEDEPTH_VERSION_STRING; }  // the library's, from version.h

}  // namespace spacedepth
