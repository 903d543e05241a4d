// Planning: a View made ready for the kernels (plan_cpu.cpp, plan_gpu.cpp). The kernel side of
// the contract, what each slot means to the schedules, is contract/kernel_contract.h.
#pragma once

#include "contract/kernel_contract.h"
#include "runtime/block_shuffle.h"
#include "runtime/checked_math.h"
#include "runtime/view.h"

#include <string>

namespace spacedepth::detail {

// A loop the executor runs around the kernel call.
struct LoopDim {
    int64_t extent;     // iterations
    int64_t in_stride;  // in `width` units, per iteration
    int64_t out_stride;
    int chunked_dim = -1;  // >= 0: this loop walks kernel dim chunked_dim in chunks of chunk
    int64_t chunk = 0;
    int64_t total = 0;  // the chunked dim's full extent
};

// The decisions the planner's rules make for a view, each of which a measured plan (measure.cpp)
// or the wisdom (wisdom.cpp) may make instead. Every choice computes the same result: the
// families are schedules of one algorithm, and a loop order is a permutation of the loops.
struct PlanChoice {
    KernelFamily family = KernelFamily::General;
    bool parallel = false;
    bool avx2_path = false;         // taken only where the kernel has one and the CPU runs AVX-512 (see KernelPlan)
    bool input_loop_order = false;  // dims 1.. in the input's memory order, not the output's
    bool stream = false;            // the kernel's streaming-store twin, taken only where it has one
    bool operator==(const PlanChoice &o) const {
        return family == o.family && parallel == o.parallel && avx2_path == o.avx2_path &&
               input_loop_order == o.input_loop_order && stream == o.stream;
    }
};

// How one call runs: the kernel (family, element width, device), its kKernelRank dims in units of
// `width` bytes, and the executor's loops and fragments around it.
struct KernelPlan {
    Device device = Device::Host;
    KernelFamily family = KernelFamily::General;
    int width = 1;                                 // bytes per kernel element: 1, 2, 4 or 8
    DimList kernel_dims;                           // kKernelRank slots, innermost first
    SmallVector<LoopDim, 2 * kMaxDims> loop_dims;  // run by the executor, innermost first
    Fragments fragments;                           // in width units; empty: the single pair (0, 0)
    int64_t in_offset = 0, out_offset = 0;         // bytes from the data pointers to the origin (negative strides)
    bool parallel = false;
    int64_t task_bytes = 0;         // a parallel plan's bytes per task (switch point parallel_task_bytes)
    bool avx2_path = false;         // call the kernel's AVX2 path (set only where it has one), not the wrapper's best
    bool input_loop_order = false;  // dims 1.. follow the input's memory order
    bool stream = false;            // call the kernel's streaming-store twin (set only where it has one)
    // The shuffle family's windows and tables (set with that family only); the kernel dims and
    // loops above are then the other families' arrangement, which it does not read.
    std::shared_ptr<const ShuffleProgram> shuffle;
    PlanChoice choice() const { return {family, parallel, avx2_path, input_loop_order, stream}; }
};

// The plan for one call on `device` (plan_cpu.cpp; GPU devices continue in plan_for_gpu): the
// rules' choices, or on the host those of `choice` where the view and the CPU allow them (a
// parallel plan needs threads != 1, the AVX2 path a kernel and CPU that have it, streaming a
// kernel with a streaming twin). Its steps,
// each a function named for what it does, are listed at the top of plan_cpu.cpp.
KernelPlan make_kernel_plan(const Problem &problem, const View &view, Device device = Device::Host,
                            const PlanChoice *choice = nullptr);
// The plan in words: family, width, kernel dims, loops, path and threads.
std::string describe_plan(const KernelPlan &plan);
// The shuffle family's program for a view on `isa`, with the byte offsets of each tensor's origin
// (walk_output_forwards), or null where the view has none (an output not dense from its first
// byte). make_kernel_plan() takes it with best_shuffle_isa(); the per-path tests with each.
std::shared_ptr<const ShuffleProgram> plan_shuffle(const Problem &problem, const View &view, ShuffleIsa isa,
                                                   int64_t *in_offset, int64_t *out_offset, bool join_rows = false);

// Steps the two planners share (plan_cpu.cpp).
// Merges neighbours that are contiguous in both tensors (dims in loop order, innermost first).
DimList merge_contiguous(const DimList &dims);
// The dims whose strides fit the kernel's int32 strides; the others become plan->loop_dims.
DimList dims_with_kernel_strides(const DimList &dims, KernelPlan *plan);
// Places normalised dims (width units) into a GPU plan's slots (plan_gpu.cpp).
void plan_for_gpu(const DimList &dims, KernelPlan *plan);

}  // namespace spacedepth::detail
