// Running a plan: the kernel table, the caller's device and stream, Halide's errors (execute.cpp).
#pragma once

#include "runtime/kernel_registry.h"
#include "runtime/plan.h"
#include "runtime/problem.h"

#include <string>

namespace spacedepth::detail {

// A call's device; for CUDA, the caller's context and stream (a null context: Halide's own
// context; a null stream: the default stream).
struct DeviceCall {
    Device device = Device::Host;
    void *context = nullptr;  // CUcontext
    void *stream = nullptr;   // CUstream
    // Only the benches set this (bench_spacedepth.cpp's schedule comparison, gpu_bench.cpp's
    // CUDA schedule variants): other builds of the call's device's kernels, run in place of the
    // registered ones.
    const KernelTable *kernel_overrides = nullptr;
};

// How a plan is made (sd_plan_options): by the rules, or by timing the candidates (measure.cpp).
struct PlanMode {
    bool measure = false;
    double time_limit_ms = 0;  // for measuring; checked by check_plan_options()
};
// The longest time limit a plan may be given to measure in.
constexpr double kMaxPlanTimeLimitMs = 60000;
// The flags and time limit of sd_plan_options, as a PlanMode, or the rule they break.
Status check_plan_options(const sd_plan_options &options, PlanMode *mode);

// Where a plan's choices (Plan::choice()) came from.
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
    Plan plan;
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
// Times the rules' plan of `planned` and its alternatives on scratch buffers of its shape within
// mode.time_limit_ms, and keeps the fastest (measure.cpp). Scratch memory that cannot be
// allocated, or a call too long for the limit, keeps the rules' plan, saying why.
void measure_plan(const View &view, double time_limit_ms, PlannedCall *planned);
// The data pointers' rules (null data, overlap), then the kernels. Reads *planned only, so many
// threads may run one PlannedCall at once.
Status run_planned(const PlannedCall &planned, const void *in, void *out, const DeviceCall &call);

// One-shot calls (run_c) keep the plans of the last few calls per thread: how many calls on
// this thread found theirs there (for the tests).
uint64_t one_shot_plan_cache_hits();

// Halide's process-wide thread pool (0: one thread per core); threads outside 0 to
// SD_MAX_THREADS are refused with the rule, never clamped.
Status set_pool_threads(int threads);
int pool_threads();

// Runs the plan on in and out (already validated): `kernel` is the plan's registered kernel, or
// null to look it up. Halide errors come back in the status.
Status execute(const Problem &problem, const Plan &plan, const RegisteredKernel *kernel, const void *in, void *out,
               const DeviceCall &call);

}  // namespace spacedepth::detail
