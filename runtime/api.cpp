// The core (validate, plan, execute) and the public C++ API over it. The C++ types convert to the
// core's C structs here; nothing in the core calls either public API.
#include "runtime/device_backend.h"
#include "runtime/execute.h"
#include "runtime/problem.h"
#include "runtime/tuning.h"
#include "runtime/wisdom.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <sstream>
#include <utility>

#ifndef SPACEDEPTH_KERNEL_TARGETS
#define SPACEDEPTH_KERNEL_TARGETS "unknown"
#endif

namespace spacedepth::detail {

Status error(sd_status code, const std::string &message) { return Status(code, message); }

std::string dims_str(int ndim, const int64_t *dims) {
    std::ostringstream s;
    s << "[";
    for (int i = 0; i < ndim; i++) s << (i ? "," : "") << dims[i];
    s << "]";
    return s.str();
}

namespace {

sd_tensor to_c(const Tensor &t) {
    sd_tensor c{};
    c.data = t.data;
    c.dtype = static_cast<sd_dtype>(t.dtype);
    c.layout = static_cast<sd_layout>(t.layout);
    c.ndim = t.dims.ndim();
    std::copy(t.dims.begin(), t.dims.end(), c.dims);
    std::copy(t.strides.begin(), t.strides.end(), c.strides);
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

template <typename F>
Status catching_bad_alloc(F &&f) {
    // Planning allocates only for fragmented views (blocked layouts whose groups the channel
    // split does not line up with), and the first call sets up the switch points: std::bad_alloc
    // is the one exception a call can raise (tests/test_out_of_memory.cpp).
    try {
        return f();
    } catch (const std::bad_alloc &) {
        return error(SD_ERROR_OUT_OF_MEMORY, "out of memory");  // short: no allocation for the message
    }
}

}  // namespace

namespace {

// The plan of a validated call: the wisdom's choice for its shape where it has one (host only),
// else the rules'.
Plan wise_plan(const Problem &problem, const View &view, Device device, bool *from_wisdom) {
    const std::optional<PlanChoice> known = device == Device::Host ? wisdom_choice(problem) : std::nullopt;
    *from_wisdom = known.has_value();
    return normalize(problem, view, device, known ? &*known : nullptr);
}

}  // namespace

Status check_plan_options(const sd_plan_options &options, PlanMode *mode) {
    if (options.flags != SD_PLAN_ESTIMATE && options.flags != SD_PLAN_MEASURE) {
        return error(SD_ERROR_INVALID_ARGUMENT, "plan flags must be SD_PLAN_ESTIMATE (0) or SD_PLAN_MEASURE (1): got " +
                                                    std::to_string(options.flags));
    }
    const double limit = options.time_limit_ms;
    if (!(limit >= 0 && limit <= kMaxPlanTimeLimitMs)) {  // NaN fails both
        std::ostringstream s;
        s << "plan time_limit_ms must be 0 (the default, " << SD_PLAN_DEFAULT_TIME_LIMIT_MS << ") up to "
          << kMaxPlanTimeLimitMs << ": got " << limit;
        return error(SD_ERROR_INVALID_ARGUMENT, s.str());
    }
    mode->measure = options.flags == SD_PLAN_MEASURE;
    mode->time_limit_ms = limit == 0 ? SD_PLAN_DEFAULT_TIME_LIMIT_MS : limit;
    return {};
}

Status plan_call(const sd_params &params, const sd_tensor &in, const sd_tensor &out, Device device,
                 PlannedCall *planned, const PlanMode &mode) {
    return catching_bad_alloc([&]() -> Status {
        sd_tensor in_desc = in, out_desc = out;
        in_desc.data = out_desc.data = nullptr;  // plan for aligned addresses (0 is aligned to all)
        Problem problem;
        if (Status s = validate_layout(params, in_desc, out_desc, &problem); !s.ok()) {
            return s;
        }
        // A build for CPU features this CPU lacks (SPACEDEPTH_TARGETS without a baseline target)
        // would fault on its first instruction: refuse instead.
        if (device == Device::Host && !problem.empty && cpu_kernel_target() == "none") {
            return error(SD_ERROR_UNSUPPORTED,
                         std::string("this CPU cannot run any of the kernel targets this build was generated for (") +
                             SPACEDEPTH_KERNEL_TARGETS + "): its features are " +
                             cpu_probe::present_names(cpu_features()) + " (" +
                             cpu_probe::identity(cpu_probe::read_cpuid()) +
                             "); rebuild with a baseline target in SPACEDEPTH_TARGETS");
        }
        planned->problem = problem;
        planned->plan = Plan{};
        planned->source = PlanSource::Rules;
        planned->measured = MeasureReport{};
        if (problem.empty) {
            planned->kernel = nullptr;
            planned->plan.device = device;
            return {};
        }
        View view;
        if (Status s = build_view(problem, &view); !s.ok()) {
            return s;
        }
        bool from_wisdom = false;
        planned->plan = wise_plan(problem, view, device, &from_wisdom);
        planned->kernel = find_kernel(device, planned->plan.family, planned->plan.width);
        if (from_wisdom) {
            planned->source = PlanSource::Wisdom;
        } else if (mode.measure && device == Device::Host && planned->kernel != nullptr) {
            measure_plan(view, mode.time_limit_ms, planned);
        }
        planned->plan.device = device;
        return {};
    });
}

Status run_planned(const PlannedCall &planned, const void *in, void *out, const DeviceCall &call) {
    if (Status s = validate_memory(planned.problem, in, out); !s.ok() || planned.problem.empty) {
        return s;
    }
    const uintptr_t width = static_cast<uintptr_t>(planned.plan.width);
    if ((reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) % width != 0) {
        // Addresses the plan's wider element does not fit: plan again for these.
        Problem problem = planned.problem;
        problem.in.data = const_cast<void *>(in);
        problem.out.data = out;
        return catching_bad_alloc([&] {
            View view;
            (void)build_view(problem, &view);                 // the plan's own view: built without error once already
            const PlanChoice choice = planned.plan.choice();  // a measured or wise plan keeps its choice
            const Plan plan =
                normalize(problem, view, planned.plan.device, planned.source == PlanSource::Rules ? nullptr : &choice);
            return execute(problem, plan, nullptr, in, out, call);
        });
    }
    return execute(planned.problem, planned.plan, planned.kernel, in, out, call);
}

std::string describe_planned(const PlannedCall &planned) {
    if (planned.problem.empty) return "empty tensor: nothing to do";
    std::ostringstream s;
    s << describe_plan(planned.plan);
    const MeasureReport &m = planned.measured;
    if (planned.source == PlanSource::Wisdom) {
        s << "; from wisdom";
    } else if (planned.source == PlanSource::Measured) {
        char text[160];
        std::snprintf(text, sizeof(text), "; measured %d plans in %.2f ms: %s loop order, %.3g us a call", m.candidates,
                      m.plan_ms, planned.plan.input_loop_order ? "input" : "output", m.best_ns / 1000);
        s << text;
        if (m.best_ns < m.rules_ns) {
            std::snprintf(text, sizeof(text), " against %.3g us for the rules' plan", m.rules_ns / 1000);
            s << text;
        } else {
            s << ", which is the rules' plan";
        }
    } else if (!m.not_timed.empty()) {
        s << "; not measured: " << m.not_timed;
    }
    return s.str();
}

namespace {

// What a plan depends on: the call without its data pointers, and the switch points' generation.
struct CallKey {
    sd_params params;
    struct Desc {
        int64_t dtype, layout, ndim;
        int64_t dims[SD_MAX_NDIM], strides[SD_MAX_NDIM];
    } in, out;
    uint64_t generation, wisdom_generation;
    int device;
};

CallKey key_of(const sd_params &p, const sd_tensor &in, const sd_tensor &out, Device device) {
    CallKey k;
    std::memset(&k, 0, sizeof(k));  // padding too: keys are compared with memcmp
    k.params.op = p.op;
    k.params.block_h = p.block_h;
    k.params.block_w = p.block_w;
    k.params.block_d = p.block_d;
    k.params.order = p.order;
    k.params.threads = p.threads;
    for (auto [t, d] : {std::pair{&in, &k.in}, std::pair{&out, &k.out}}) {
        d->dtype = t->dtype;
        d->layout = t->layout;
        d->ndim = t->ndim;
        const int n = t->ndim >= 0 && t->ndim <= SD_MAX_NDIM ? t->ndim : 0;  // entries past ndim are ignored
        std::copy(t->dims, t->dims + n, d->dims);
        std::copy(t->strides, t->strides + n, d->strides);
    }
    k.generation = switch_points_generation();
    k.wisdom_generation = wisdom_generation();
    k.device = static_cast<int>(device);
    return k;
}

// The one-shot calls' plan cache: the last few calls' plans, per thread (no locks), so a caller
// repeating shapes through run() pays validation and planning once per shape, as a plan would.
// Only plans that were made are kept; every run still checks the data pointers.
struct PlanCache {
    static constexpr int kEntries = 4;
    CallKey keys[kEntries];
    PlannedCall plans[kEntries];
    bool valid[kEntries] = {};
    int next = 0;

    const PlannedCall *find(const CallKey &key) const {
        for (int i = 0; i < kEntries; i++) {
            // Keys are zeroed whole before their fields are set (key_of), padding included.
            // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
            if (valid[i] && std::memcmp(&keys[i], &key, sizeof(key)) == 0) return &plans[i];
        }
        return nullptr;
    }
    // The next slot, emptied, for a new plan; commit() makes it findable once the plan is whole.
    PlannedCall &claim() {
        valid[next] = false;
        return plans[next];
    }
    void commit(const CallKey &key) {
        keys[next] = key;
        valid[next] = true;
        next = (next + 1) % kEntries;
    }
};

thread_local PlanCache plan_cache;
thread_local uint64_t plan_cache_hits = 0;

}  // namespace

uint64_t one_shot_plan_cache_hits() { return plan_cache_hits; }

// plan_call() and run_planned() each catch std::bad_alloc where they allocate; the cache allocates
// nothing of its own.
Status run_c(const sd_params &params, const sd_tensor &in, const sd_tensor &out, const DeviceCall &call) {
    PlanCache &cache = plan_cache;
    const CallKey key = key_of(params, in, out, call.device);
    if (const PlannedCall *cached = cache.find(key)) {
        plan_cache_hits++;
        return run_planned(*cached, in.data, out.data, call);
    }
    PlannedCall &planned = cache.claim();  // planned in place: nothing to copy
    if (Status s = plan_call(params, in, out, call.device, &planned); !s.ok()) {
        return s;
    }
    cache.commit(key);
    return run_planned(planned, in.data, out.data, call);
}

Status output_dims_c(const sd_params &params, int ndim, const int64_t *in_dims, int64_t *out_dims) {
    if (Status s = check_params(params, ndim); !s.ok()) {
        return s;
    }
    return implied_dims(params, ndim, in_dims, out_dims);
}

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
    const detail::Plan plan = detail::wise_plan(problem, view, Device::Host, &from_wisdom);
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
    s << "kernel targets (best first, chosen at run time): " << SPACEDEPTH_KERNEL_TARGETS << "\n";
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
    s << "tuning database: " << (tuning.database.empty() ? "none (schedule defaults)" : tuning.database) << "\n";
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
