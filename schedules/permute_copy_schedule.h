// Schedules for the permute_copy generator, kept apart from its algorithm.
// One file per target family; apply_permute_copy_schedule() picks by Target.
#pragma once

#include "Halide.h"

#include <vector>

namespace spacedepth {

// Rank of the kernel's views. The runtime normalises every call to at most this many dims and
// runs any extra outer dims as a loop of kernel calls.
constexpr int kRank = 6;

enum class PermuteCopyPattern { General, Transpose, Small };

// Named handles to what a schedule may touch, so schedules never depend on positional lookups.
struct PermuteCopyHandles {
    Halide::Func output;                 // the only Func
    Halide::OutputImageParam in;         // input buffer (for its strides and extents)
    Halide::OutputImageParam out;        // output buffer
    Halide::Expr parallel;               // runtime switch: may the kernel use the thread pool?
    std::vector<Halide::Var> x;          // x[0] innermost ... x[kRank-1] outermost
    PermuteCopyPattern pattern;          // which schedule family this library gets
    Halide::Func input_stage;            // Transpose only: a wrapper of the input (in())
};

void apply_permute_copy_schedule(const PermuteCopyHandles &h, const Halide::Target &target);

// Per-family entry points (schedules/<family>.cpp).
void schedule_permute_copy_x86(const PermuteCopyHandles &h, const Halide::Target &target);
void schedule_transpose_x86(const PermuteCopyHandles &h, const Halide::Target &target);
void schedule_small_x86(const PermuteCopyHandles &h, const Halide::Target &target);
void schedule_permute_copy_arm(const PermuteCopyHandles &h, const Halide::Target &target);
void schedule_transpose_arm(const PermuteCopyHandles &h, const Halide::Target &target);
void schedule_small_arm(const PermuteCopyHandles &h, const Halide::Target &target);
// GPU targets (CUDA, OpenCL): one schedule for every pattern (schedules/gpu.cpp).
void schedule_permute_copy_gpu(const PermuteCopyHandles &h, const Halide::Target &target);
// AArch64 codegen help run at the end of lowering (schedules/arm.cpp).
void add_arm_lowering_passes(Halide::Pipeline pipeline);

}  // namespace spacedepth
