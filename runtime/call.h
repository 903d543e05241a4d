// The core call path (call.cpp): a call validated and planned once (plan_call), then run on
// memory of its shape (run_planned); and the one-shot calls over it (plan_cache.cpp), which the
// C API (c_api.cpp) and the C++ API (cpp_api.cpp) both reach.
#pragma once

#include "runtime/execute.h"
#include "runtime/plan.h"
#include "runtime/problem.h"

#include <new>
#include <string>

namespace spacedepth::detail {

// How a plan is made (sd_plan_options): by the rules, or by timing the candidates (measure.cpp).
struct PlanMode {
    bool measure = false;
    double time_limit_ms = 0;  // for measuring; checked by check_plan_options()
};
// The longest time limit a plan may be given to measure in.
constexpr double kMaxPlanTimeLimitMs = 60000;
// The flags and time limit of sd_plan_options, as a PlanMode, or the rule they break.
Status check_plan_options(const sd_plan_options &options, PlanMode *mode);

// Where a plan's choices (KernelPlan::choice()) came from.
enum class PlanSource { Rules, Measured, Wisdom };

// What measuring found (measure.cpp): candidates timed and the time it took.
struct MeasureReport {
    int candidates = 0;     // distinct plans timed, the rules' one included
    double rules_ns = 0;    // the rules' plan, fastest call
    double best_ns = 0;     // the chosen plan, fastest call
    double plan_ms = 0;     // the measurement's wall time
    std::string not_timed;  // why nothing was timed (the rules' plan kept), or empty
};

// A call validated and planned once, to be run on any memory of the same shape (the plan API).
// Planned for addresses aligned to plan.width; run_planned() plans again for others.
struct PlannedCall {
    Problem problem;  // data pointers null
    KernelPlan plan;
    const RegisteredKernel *kernel = nullptr;  // the plan's kernel, found at create
    PlanSource source = PlanSource::Rules;
    MeasureReport measured;  // source Measured, or a measurement that kept the rules' plan
};

// Every rule but those on the data pointers (ignored), then the plan for `device`: the wisdom's
// choice for this call where it has one, else measured (mode.measure, host only) or the rules'.
Status plan_call(const sd_params &params, const sd_tensor &in, const sd_tensor &out, Device device, PlannedCall *call,
                 const PlanMode &mode = {});
// The plan in words: describe_plan() and where its choices came from.
std::string describe_planned(const PlannedCall &planned);
// The data pointers' rules (null data, overlap), then the kernels. Reads *planned only, so many
// threads may run one PlannedCall at once.
Status run_planned(const PlannedCall &planned, const void *in, void *out, const DeviceCall &call);

// The plan of a validated call: the wisdom's choice for its shape where it has one (host only),
// else the rules'. *from_wisdom says which.
KernelPlan wise_plan(const Problem &problem, const View &view, Device device, bool *from_wisdom);

// One-shot calls (plan_cache.cpp): the core's validate, plan and execute for one call, keeping
// the plans of the last few calls per thread. Catches allocation failure (SD_ERROR_OUT_OF_MEMORY).
Status run_c(const sd_params &params, const sd_tensor &in, const sd_tensor &out, const DeviceCall &call);
// How many one-shot calls on this thread found their plan in the cache (for the tests).
uint64_t one_shot_plan_cache_hits();
Status output_dims_c(const sd_params &params, int ndim, const int64_t *in_dims, int64_t *out_dims);
// The same from the C++ types: run() and run_cuda(), and the tests' OpenCL runs (cpp_api.cpp).
Status run_on(const Params &params, const Tensor &in, const Tensor &out, const DeviceCall &call);

// f(), with std::bad_alloc as SD_ERROR_OUT_OF_MEMORY. Planning allocates only for fragmented
// views (blocked layouts whose groups the channel split does not line up with), and the first
// call sets up the switch points: std::bad_alloc is the one exception a call can raise
// (tests/test_out_of_memory.cpp).
template <typename F>
Status catching_bad_alloc(F &&f) {
    try {
        return f();
    } catch (const std::bad_alloc &) {
        return error(SD_ERROR_OUT_OF_MEMORY, "out of memory");  // short: no allocation for the message
    }
}

}  // namespace spacedepth::detail
