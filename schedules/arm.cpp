// ARM64 NEON schedules for permute_copy: the vector shapes the shared ladder
// (schedules/cpu_ladder.cpp) runs with on AArch64. NEON vectors are 16 bytes (16 x u8, 8 x u16,
// 4 x u32, 2 x u64) and there are 32 of them, so every pattern is unrolled twice as wide in
// vectors as on AVX2 to move the same bytes per iteration.
//
// How Halide lowers the ladder's patterns on AArch64 (checked in the emitted assembly,
// tests/check_arm_asm.sh): dense runs become ldp/stp q pairs; an interleaving store of 2, 3 or 4
// vectors becomes st2/st3/st4; a load of stride 2, 3 or 4 becomes ld2/ld3/ld4; other shuffles
// become zip/uzp/trn/tbl. Figures are llvm-mca bytes per cycle of each inner loop against a plain
// NEON copy loop (scripts/arm_mca.py, bench/RESULTS.md); no ARM hardware was timed.
#include "schedules/cpu_ladder.h"

#include <algorithm>

namespace spacedepth {

using namespace Halide;

namespace {

LadderShape arm_shape(const PermuteCopyHandles &h, const Target &target) {
    const int vec = target.natural_vector_size(h.output.type());
    LadderShape s;
    s.vec = vec;
    // Runs: eight q registers per iteration (128 bytes, four ldp/stp pairs). With 32 registers
    // there is room, and the loop branch is amortised over 8 loads: llvm-mca's copy loop with
    // one q per iteration is issue-bound on the loop overhead on Cortex-A76.
    s.run_factors = {8 * vec, vec};
    // Unrolled-block patterns (st2/st3/st4 interleaves, per-pixel transposes) at two vectors,
    // one vector and half a vector (a d register; not for u64, where half is one lane).
    s.block_widths = {2 * vec, vec};
    if (vec / 2 >= 2) {
        s.block_widths.push_back(vec / 2);
    }
    // Deinterleaves (ld2/ld3/ld4) and gathers into dense rows: the same widths.
    s.row_widths = s.block_widths;
    // Tasks of 64 KiB, as on x86: Halide's pool takes a lock per task on every CPU. Not
    // measured on ARM hardware.
    s.task_bytes = 64 * 1024;
    // One ld4 (or dense load + tbl) per pixel for NHWC CRD and short NHWC DCR runs, instead of a
    // shifted ld4 per output row (see cpu_ladder.cpp; llvm-mca figures in bench/RESULTS.md).
    s.whole_pixel_loads = true;
    return s;
}

}  // namespace

void schedule_permute_copy_arm(const PermuteCopyHandles &h, const Target &target) {
    schedule_ladder(h, arm_shape(h, target));
}

void schedule_transpose_arm(const PermuteCopyHandles &h, const Target &target) {
    // A 4 x 4 tile of 32-bit elements is one trn1/trn2 + zip network on four q registers; bytes
    // and halves use 8-row tiles (8 d-register rows). t1 covers a 64-byte cache line of each
    // input row (Neoverse and Cortex-A7x lines are 64 bytes), for the reason given in x86.cpp.
    const int bytes = h.output.type().bytes();
    const int t0 = std::min(target.natural_vector_size(h.output.type()), bytes >= 4 ? 4 : 8);
    const int t1 = std::max(t0, 64 / bytes);
    schedule_transpose_tiles(h, arm_shape(h, target), t0, t1);
}

void schedule_small_arm(const PermuteCopyHandles &h, const Target &target) {
    schedule_small(h, target.natural_vector_size(h.output.type()));
}

}  // namespace spacedepth
