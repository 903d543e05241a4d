// ARM64 NEON schedules for permute_copy: the vector shapes the shared ladder
// (schedules/cpu_ladder.cpp) runs with on AArch64. NEON vectors are 16 bytes (16 x u8, 8 x u16,
// 4 x u32, 2 x u64) and there are 32 of them, so every pattern is unrolled twice as wide in
// vectors as on AVX2 to move the same bytes per iteration.
//
// How Halide lowers the ladder's patterns on AArch64 (checked on the loops that really run, by
// scripts/arm_loops.py under qemu): dense runs become ldp/stp q pairs; an interleaving store of
// 2, 3 or 4 vectors becomes st2/st3/st4; a load of stride 2, 3 or 4 becomes ld2/ld3/ld4; other
// shuffles become zip/uzp/trn/tbl; strides of 6-16 (short runs) are split into two of those by
// the SplitWideShuffles lowering pass below. Figures are llvm-mca bytes per cycle of each inner
// loop against a plain NEON copy loop (bench/RESULTS.md); no ARM hardware was timed.
#include "schedules/cpu_ladder.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace spacedepth {

using namespace Halide;

namespace {

// A lowering pass for AArch64: NEON has ld2-ld4 and st2-st4 but nothing wider, and LLVM lowers
// a slice of stride 6, 8, 9, 12 or 16 of a dense vector (or an interleave of that many vectors)
// with tbl networks. Such shuffles come from short runs: u8 C3 block 2 moves 3 x u16 runs taken
// every 6 units (NHWC DepthToSpace), or stored every 6 units (SpaceToDepth). Rewritten as two
// nested shuffles of factors a x b (a, b in 2..4), they become ld3 + uzp1/uzp2 and zip1/zip2 +
// st3. Measured with llvm-mca (Neoverse N1), u8 C3 short runs: D2S from 18 tbl (0.44x the copy
// loop) to 2 ld3 + 6 uzp + 2 st3 (1.00x); S2D from 0.60x to 1.00x.
class SplitWideShuffles : public Internal::IRMutator {
    using IRMutator::visit;

    // s = a * b with a the outer (ldN / stN) factor, preferring 3 and 4.
    static std::pair<int, int> factors(int s) {
        for (int a : {3, 4, 2}) {
            if (s % a == 0 && s / a >= 2 && s / a <= 4) {
                return {a, s / a};
            }
        }
        return {0, 0};
    }

    Expr visit(const Internal::Shuffle *op) override {
        using Internal::Shuffle;
        std::vector<Expr> vectors;
        for (const Expr &v : op->vectors) {
            vectors.push_back(mutate(v));
        }
        if (op->is_slice() && vectors.size() == 1 && op->slice_stride() > 4) {
            const int s = op->slice_stride(), k = op->slice_begin(), lanes = op->type.lanes();
            const auto [a, b] = factors(s);
            if (a != 0) {
                // out[i] = v[k + s*i] = inner[k/a + b*i], inner[m] = v[k%a + a*m]
                Expr inner = Shuffle::make_slice(vectors[0], k % a, a, lanes * b);
                return Shuffle::make_slice(inner, k / a, b, lanes);
            }
        }
        if (op->is_interleave() && vectors.size() > 4) {
            const auto [a, b] = factors(static_cast<int>(vectors.size()));
            if (a != 0) {
                // out[s*i + j + a*t] = v[j + a*t][i]: st-a of a vectors, each a zip of b
                std::vector<Expr> outer;
                for (int j = 0; j < a; j++) {
                    std::vector<Expr> group;
                    group.reserve(b);
                    for (int t = 0; t < b; t++) {
                        group.push_back(vectors[j + a * t]);
                    }
                    outer.push_back(Shuffle::make_interleave(group));
                }
                return Shuffle::make_interleave(outer);
            }
        }
        return Shuffle::make(vectors, op->indices);
    }
};

}  // namespace

void add_arm_lowering_passes(Pipeline pipeline) { pipeline.add_custom_lowering_pass(new SplitWideShuffles); }

LadderShape arm_shape(const PermuteCopyHandles &h, const Target &target) {
    const ScheduleTuning &t = h.tuning;  // tuned values (tuning/<target>.json) where set
    const int vec = target.natural_vector_size(h.output.type());
    const int bytes = h.output.type().bytes();
    LadderShape s;
    s.vec = vec;
    // Runs: eight q registers per iteration (128 bytes, four ldp/stp pairs). With 32 registers
    // there is room, and the loop branch is amortised over 8 loads: llvm-mca's copy loop with
    // one q per iteration is issue-bound on the loop overhead on Cortex-A76.
    s.run_factors = run_widths(tuned(t.run_vectors, 8), vec);
    // Unrolled-block patterns (st2/st3/st4 interleaves, per-pixel transposes) at two vectors,
    // one vector and half a vector (a d register; not for u64, where half is one lane).
    s.block_widths = halving_widths(tuned(t.block_vectors, 2) * vec, std::max(2, vec / 2));
    // Deinterleaves (ld2/ld3/ld4) and gathers into dense rows: the same widths.
    s.row_widths = s.block_widths;
    // One ld4 (or dense load + tbl) per pixel for NHWC CRD and short NHWC DCR runs, instead of a
    // shifted ld4 per output row (see cpu_ladder.cpp; llvm-mca figures in bench/RESULTS.md).
    s.whole_pixel_loads = true;
    // Transpose tiles: a 4 x 4 tile of 32-bit elements is one trn1/trn2 + zip network on four q
    // registers; bytes and halves use 8-row tiles (8 d-register rows). t1 covers a 64-byte cache
    // line of each input row (Neoverse and Cortex-A7x lines are 64 bytes), as on x86 (x86.cpp).
    set_transpose_tile(s, h, std::min(vec, bytes >= 4 ? 4 : 8), 64);
    return s;
}

}  // namespace spacedepth
