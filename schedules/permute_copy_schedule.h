// Schedules for the permute_copy generator, kept apart from its algorithm.
// One file per target family; apply_permute_copy_schedule() picks by Target.
#pragma once

#include "Halide.h"

#include "contract/kernel_contract.h"

#include <string>
#include <vector>

namespace spacedepth {

// The tunable schedule parameters (README "Tuning"). schedules/tunables.json declares each one's
// range; the build passes a target's values from its tuning database (tuning/<target>.json) in
// the generator parameter `tuning`. 0 keeps the target's hand-written default (x86.cpp, arm.cpp).
struct ScheduleTuning {
    int run_vectors = 0;     // vectors per iteration of a contiguous run copy
    int block_vectors = 0;   // the widest unrolled-block pattern, in vectors
    int tile_rows = 0;       // transpose tile: output elements per tile (t0)
    int tile_row_bytes = 0;  // transpose tile: bytes of each input row (t1 times the element size)
    // GPU schedules (schedules/gpu.cpp); the tile along grid y stays kGpuTileEdge, which the
    // runtime's grid chunking assumes (runtime/plan_gpu.cpp).
    int gpu_tile_x = 0;            // threads along the block's x (the dense output dim)
    int gpu_thread_rows = 0;       // threads along y; each does kGpuTileEdge / gpu_thread_rows rows
    int gpu_direct_transpose = 0;  // 1: the transpose family without its shared-memory tile
    int gpu_vector_block = 0;      // 1: block digit 0 as a vector in the thread, not unrolled
};

// Picks this target's entry from the `tuning` generator parameter, written by cmake/Tuning.cmake:
// entries joined by '+', each a Halide target then '/'-separated name:value pairs, e.g.
// "x86-64-linux-avx2-avx-fma-f16c-sse41/run_vectors:2/block_vectors:2". An entry applies to the
// kernel target with the same ISA (features such as user_context are ignored).
ScheduleTuning parse_schedule_tuning(const std::string &spec, const Halide::Target &target);

// Named handles to what a schedule may touch, so schedules never depend on positional lookups.
struct PermuteCopyHandles {
    Halide::Func output;           // the only Func
    Halide::OutputImageParam in;   // input buffer (for its strides and extents)
    Halide::OutputImageParam out;  // output buffer
    std::vector<Halide::Var> x;    // x[0] innermost ... x[kKernelRank-1] outermost
    KernelFamily family;           // which schedule family this library gets
    Halide::Func input_stage;      // Transpose only: a wrapper of the input (in())
    ScheduleTuning tuning;         // tuned values for this target (0: the default)
};

void apply_permute_copy_schedule(const PermuteCopyHandles &h, const Halide::Target &target);

// GPU targets (CUDA, OpenCL): the General and Transpose families (schedules/gpu.cpp).
void schedule_permute_copy_gpu(const PermuteCopyHandles &h, const Halide::Target &target);
// AArch64 codegen help run at the end of lowering (schedules/arm.cpp).
void add_arm_lowering_passes(Halide::Pipeline pipeline);

}  // namespace spacedepth
