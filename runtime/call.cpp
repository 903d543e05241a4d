// The core call path: validate, plan (the wisdom's choice, a measured plan or the rules'), and
// run a plan on memory of its shape. Neither public API is called from here; both call this.
#include "runtime/call.h"
#include "runtime/device_backend.h"
#include "runtime/isa.h"
#include "runtime/measure.h"
#include "runtime/wisdom.h"

#include <cstdio>
#include <sstream>

namespace spacedepth::detail {

Status error(sd_status code, const std::string &message) { return Status(code, message); }

std::string dims_str(int ndim, const int64_t *dims) {
    std::ostringstream s;
    s << "[";
    for (int i = 0; i < ndim; i++) s << (i ? "," : "") << dims[i];
    s << "]";
    return s.str();
}

KernelPlan wise_plan(const Problem &problem, const View &view, Device device, bool *from_wisdom) {
    const std::optional<PlanChoice> known = device == Device::Host ? wisdom_choice(problem) : std::nullopt;
    *from_wisdom = known.has_value();
    return make_kernel_plan(problem, view, device, known ? &*known : nullptr);
}

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
                             kernel_targets() + "): its features are " + cpu_probe::present_names(cpu_features()) +
                             " (" + cpu_probe::identity(cpu_probe::read_cpuid()) +
                             "); rebuild with a baseline target in SPACEDEPTH_TARGETS");
        }
        planned->problem = problem;
        planned->plan = KernelPlan{};
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

namespace {
constexpr bool kernel_widths_are_powers_of_two() {
    for (int w : kKernelWidths) {
        if ((w & (w - 1)) != 0) return false;
    }
    return true;
}
static_assert(kernel_widths_are_powers_of_two(), "run_planned checks the addresses' alignment with a mask");
}  // namespace

Status run_planned(const PlannedCall &planned, const void *in, void *out, const DeviceCall &call) {
    if (Status s = validate_memory(planned.problem, in, out); !s.ok() || planned.problem.empty) {
        return s;
    }
    // A plan's width is one of kKernelWidths, powers of two: a mask, not a division (a 64-bit `div`
    // was half of this function's time in a 64-byte call).
    const uintptr_t width = static_cast<uintptr_t>(planned.plan.width);
    if (((reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) & (width - 1)) != 0) {
        // Addresses the plan's wider element does not fit: plan again for these.
        Problem problem = planned.problem;
        problem.in.data = const_cast<void *>(in);
        problem.out.data = out;
        return catching_bad_alloc([&] {
            View view;
            (void)build_view(problem, &view);                 // the plan's own view: built without error once already
            const PlanChoice choice = planned.plan.choice();  // a measured or wise plan keeps its choice
            const KernelPlan plan = make_kernel_plan(problem, view, planned.plan.device,
                                                     planned.source == PlanSource::Rules ? nullptr : &choice);
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

Status output_dims_c(const sd_params &params, int ndim, const int64_t *in_dims, int64_t *out_dims) {
    if (Status s = check_params(params, ndim); !s.ok()) {
        return s;
    }
    return implied_dims(params, ndim, in_dims, out_dims);
}

}  // namespace spacedepth::detail
