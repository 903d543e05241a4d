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

// Halide's process-wide thread pool (0: one thread per core).
void set_pool_threads(int threads);
int pool_threads();

// Runs the plan; Halide errors come back in the status.
Status execute(const Problem &problem, const Plan &plan, const DeviceCall &call = {});

}  // namespace spacedepth::detail
