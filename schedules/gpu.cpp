// GPU schedules for permute_copy (CUDA; the same code for OpenCL): the normalised view's dim 0
// is the output's densest dim, so threads along dim 0 store coalesced. Dims 0 and 1 form the
// thread block (32 x 8 threads, one warp per row of the block); dims 2-5 are fused into the
// grid's third axis, so one launch covers the whole view whatever its rank. Indexing is 64-bit
// through the kernels' large_buffers feature.
//
// Not yet measured on a GPU (no GPU on the development machine; see bench/RESULTS.md once
// bench/gpu_check.sh has run). The PTX is assembled with ptxas for sm_80 and sm_90 in the
// tests (tests/check_ptx.sh).
#include "schedules/permute_copy_schedule.h"

namespace spacedepth {

using namespace Halide;

void schedule_permute_copy_gpu(const PermuteCopyHandles &h, const Target &target) {
    (void)target;
    const std::vector<Var> &x = h.x;
    Func output = h.output;
    Var rest("rest"), r45("r45"), r345("r345"), bx("bx"), by("by"), tx("tx"), ty("ty");
    output.fuse(x[4], x[5], r45).fuse(x[3], r45, r345).fuse(x[2], r345, rest);
    output.gpu_tile(x[0], x[1], bx, by, tx, ty, 32, 8, TailStrategy::GuardWithIf).gpu_blocks(rest);
}

}  // namespace spacedepth
