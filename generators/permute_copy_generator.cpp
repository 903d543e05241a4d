// The one kernel: a 6-D permuted copy, out(x0..x5) = in(x0..x5).
//
// Every SpaceToDepth / DepthToSpace variant (op x order x layout x block x strides) is a permutation
// of a 6-D view of the two tensors. The runtime (runtime/view_algebra.cpp, plan_cpu.cpp) builds those views as strided
// buffers and normalises them, so the permutation is carried entirely by the strides the caller
// passes in; the algorithm here is just "copy element x from in to out". The per-target
// schedules in schedules/ specialise it on the stride patterns that matter (contiguous runs,
// interleave, deinterleave, transpose), which is where all the speed comes from.
//
// The element type is set per library (input.type=uint8|uint16|uint32|uint64): the op only moves
// bits, so one kernel per element width serves every dtype. The generator parameter `family`
// selects the schedule family, one of the contract's SPACEDEPTH_KERNEL_FAMILIES
// (contract/kernel_contract.h): `general` (the ladder of run copies, interleaves, deinterleaves,
// short runs and small transposes), `transpose` (tiled transposes, for views whose input is
// dense along dim 1 and gathers along dim 0, such as fused NCHW -> NHWC conversion) or `small`
// (serial, minimal entry cost, for tensors of a few KiB).
#include "Halide.h"

#include "schedules/permute_copy_schedule.h"

#include <map>
#include <string>

namespace spacedepth {

using namespace Halide;

// The `family` parameter's values: the contract's family names.
std::map<std::string, KernelFamily> family_names() {
    std::map<std::string, KernelFamily> names;
    for (KernelFamily f : kKernelFamilies) names.emplace(kernel_family_name(f), f);
    return names;
}

class PermuteCopy : public Generator<PermuteCopy> {
public:
    GeneratorParam<KernelFamily> family{"family", KernelFamily::General, family_names()};
    // Tuned schedule parameters per target (schedules/permute_copy_schedule.h), written by
    // cmake/Tuning.cmake from tuning/<target>.json; empty: every target's defaults.
    GeneratorParam<std::string> tuning{"tuning", ""};

    // `parallel` is the signature every CPU kernel shares (KernelFn, runtime/kernel_registry.h),
    // where the runtime's microkernels read it: these kernels run serially in the caller's thread
    // whatever it says, and the runtime splits a parallel call into tasks (runtime/execute.cpp).
    Input<Buffer<void, kKernelRank>> input{"input"};
    Input<bool> parallel{"parallel"};
    Output<Buffer<void, kKernelRank>> output{"output"};

    void generate() {
        std::vector<Var> x;
        x.reserve(kKernelRank);
        for (int i = 0; i < kKernelRank; i++) {
            x.emplace_back("x" + std::to_string(i));
        }

        /* THE ALGORITHM */
        output(x) = input(x);

        // Views start at 0 and may have any stride in any dimension: the runtime sorts the
        // dimensions by output stride, so dim 0 is usually, but not always, dense.
        for (int i = 0; i < kKernelRank; i++) {
            input.dim(i).set_min(0);
            output.dim(i).set_min(0);
        }
        input.dim(0).set_stride(Expr());
        output.dim(0).set_stride(Expr());
        if (family == KernelFamily::Transpose) {
            // The runtime picks this family only for views dense along output dim 0 and input
            // dim 1; saying so lets both sides use dense vectors instead of gathers and scatters.
            output.dim(0).set_stride(1);
            input.dim(1).set_stride(1);
        }

        if (using_autoscheduler()) {
            // Halide's autoschedulers (bench/RESULTS.md "Against Halide's autoschedulers") see one
            // 6-D copy of about 1 MiB of 4-byte elements with unknown input strides: the runtime's
            // normalised view of a mid-size call (dense output dim 0, block digits in dims 1 and 3).
            const std::vector<int> extents = {16, 2, 64, 2, 64, 1};
            for (int i = 0; i < kKernelRank; i++) {
                input.dim(i).set_estimate(0, extents[i]);
                output.dim(i).set_estimate(0, extents[i]);
            }
            parallel.set_estimate(true);
            return;
        }

        /* THE SCHEDULE (schedules/, one file per target family) */
        PermuteCopyHandles h{output, input, output, x, family};
        h.tuning = parse_schedule_tuning(tuning, get_target());
        if (family == KernelFamily::Transpose) {
            h.input_stage = input.in();  // the register tile the transpose goes through
        }
        apply_permute_copy_schedule(h, get_target());
    }

    // Target codegen help that works on the lowered pipeline rather than on the Funcs.
    void schedule() {
        if (get_target().arch == Target::ARM) {
            add_arm_lowering_passes(get_pipeline());
        }
    }
};

}  // namespace spacedepth

HALIDE_REGISTER_GENERATOR(spacedepth::PermuteCopy, permute_copy)
