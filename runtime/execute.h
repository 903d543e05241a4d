// Running a plan (execute.cpp): the caller's device and stream, the kernel table, Halide's
// errors and its thread pool.
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
    // Only the benches set this (bench_spacedepth.cpp's schedule comparison, gpu_bench.cpp's
    // CUDA schedule variants): other builds of the call's device's kernels, run in place of the
    // registered ones.
    const KernelTable *kernel_overrides = nullptr;
};

// Halide's process-wide thread pool (0: one thread per core); threads outside 0 to
// SD_MAX_THREADS are refused with the rule, never clamped.
Status set_pool_threads(int threads);
int pool_threads();
// How many parallel calls of a Halide kernel the executor has handed to the pool as tasks (a
// serial plan's never; tests/test_plan.cpp checks).
long long pool_task_loops();

// Runs the plan on in and out (already validated): `kernel` is the plan's registered kernel, or
// null to look it up. Halide errors come back in the status.
Status execute(const Problem &problem, const KernelPlan &plan, const RegisteredKernel *kernel, const void *in,
               void *out, const DeviceCall &call);

}  // namespace spacedepth::detail
