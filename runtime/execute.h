// Running a plan: the kernel table, the caller's device and stream, Halide's errors (execute.cpp).
#pragma once

#include "runtime/kernel_registry.h"
#include "runtime/plan.h"
#include "runtime/problem.h"

namespace spacedepth::detail {

// A call's device; for CUDA, the caller's context and stream (a null context: Halide's own
// context; a null stream: the default stream).
struct DeviceCall {
    Device device = Device::Host;
    void *context = nullptr;  // CUcontext
    void *stream = nullptr;   // CUstream
    // Only the schedule comparison in bench/ sets this (manual vs tuned vs Halide's
    // autoschedulers): other builds of the host kernels, run in place of the registered ones.
    const KernelTable *host_kernel_overrides = nullptr;
};

// A call validated and planned once, to be run on any memory of the same shape (the plan API).
// Planned for addresses aligned to plan.width; run_planned() plans again for others.
struct PlannedCall {
    Problem problem;  // data pointers null
    Plan plan;
    const RegisteredKernel *kernel = nullptr;  // the plan's kernel, found at create
};

// Every rule but those on the data pointers (ignored), then the plan for `device`.
Status plan_call(const sd_params &params, const sd_tensor &in, const sd_tensor &out, Device device, PlannedCall *call);
// The data pointers' rules (null data, overlap), then the kernels. Reads *planned only, so many
// threads may run one PlannedCall at once.
Status run_planned(const PlannedCall &planned, const void *in, void *out, const DeviceCall &call);

// One-shot calls (run_c) keep the plans of the last few calls per thread: how many calls on
// this thread found theirs there (for the tests).
uint64_t one_shot_plan_cache_hits();

// Halide's process-wide thread pool (0: one thread per core).
void set_pool_threads(int threads);
int pool_threads();

// Runs the plan on in and out (already validated): `kernel` is the plan's registered kernel, or
// null to look it up. Halide errors come back in the status.
Status execute(const Problem &problem, const Plan &plan, const RegisteredKernel *kernel, const void *in, void *out,
               const DeviceCall &call);

}  // namespace spacedepth::detail
