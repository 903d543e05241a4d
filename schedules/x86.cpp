// x86 schedules for permute_copy (SSE2 baseline, SSE4.1, AVX2, AVX-512): the vector shapes the
// shared ladder (schedules/cpu_ladder.cpp) runs with. natural_vector_size() follows the target,
// so one description serves every ISA of the multi-target library: 16, 32 or 64-byte vectors.
// Figures are ratios to a same-size memcpy (bench/RESULTS.md); each names its machine: a 2-core
// Zen 3 (AVX2) or the 2-core AMD EPYC VM with AVX-512 VBMI the later tables come from.
#include "schedules/cpu_ladder.h"

#include <algorithm>

namespace spacedepth {

using namespace Halide;

LadderShape x86_shape(const PermuteCopyHandles &h, const Target &target) {
    const ScheduleTuning &t = h.tuning;  // tuned values (tuning/<target>.json) where set
    const int vec = target.natural_vector_size(h.output.type());
    const int bytes = h.output.type().bytes();
    LadderShape s;
    s.vec = vec;
    // Runs: four vectors per iteration (128 bytes on AVX2) keep both load ports busy; with one
    // vector the loop overhead showed in NHWC DCR f32 C64 at 2 MiB.
    s.run_factors = run_widths(tuned(t.run_vectors, 4), vec);
    // Unrolled-block patterns from a full vector down to half a vector or 16 bytes (8 for 1-byte
    // elements), whichever is narrower: NCHW planes narrower than one vector (small C at 128 KiB,
    // u8 C16) otherwise fell to scalar code. With 64-byte vectors half a vector was not enough:
    // u8 NCHW C64 at 128 KiB (22-byte input rows) and the u8 C16 per-pixel transpose ran scalar,
    // at 0.02x memcpy. 8-byte vectors for the 8-11-byte input rows of small u8 NCHW
    // DepthToSpace tensors, against the 16-byte floor (AMD EPYC, AVX-512, 1 thread, through a
    // plan, medians of 3-9 alternating rounds, 2026-12-06): D2S NCHW u8 C64 b2 at 16 and 32 KiB
    // 0.017-0.027 -> 0.29-0.34x memcpy, u8 C16 at 4 KiB 0.016 -> 0.26-0.29x, NCHW_VECT_C CRD
    // i8 C16 at 4 KiB 0.015-0.017 -> 0.06-0.12x; the u8, i8 and f16 cases at 128 KiB unchanged
    // (0.95-1.11x, the VM's noise). It adds 35 s to the u8 kernel's generation (155 -> 190 s of
    // one core); 2-byte elements have no case it was measured to help, so they keep 16 bytes.
    s.block_widths = halving_widths(tuned(t.block_vectors, 1) * vec,
                                    std::min(vec / 2, ladder::x86_narrowest_block_bytes(bytes) / bytes));
    // Rows shorter than a vector (u8 NHWC with C = 16 is half an AVX2 vector) use half and
    // quarter vectors rather than scalar code: measured 0.03-0.06x memcpy at L3 for u8 NHWC CRD
    // before. Never below 8 bytes (nor 4 elements): a narrower vector loses to scalar moves.
    s.row_widths = halving_widths(vec, ladder::x86_narrowest_row_bytes(bytes) / bytes);
    // Transpose tiles: t0 = one vector of output elements (at most 16: a 16-row byte tile fits
    // the registers); t1 = a whole 64-byte cache line of each input row. Power-of-two plane
    // strides put all rows of a tile in the same cache set, so a line evicted before its second
    // half is used is fetched again: with t1 = t0 (32-byte row pieces) D2S NCHW -> NHWC f32
    // reached 0.35x memcpy at 64 MiB. Other u32 tiles, against this one on the AMD EPYC
    // (AVX-512, 1 thread, bench/compare_builds.py, 3-7 rounds, 2026-12-05), the fused
    // D2S NCHW -> NHWC / S2D NHWC -> NCHW f32 C16 b2 at 128 KiB-64 MiB: t1 = 8 (half lines)
    // 1.02-1.35x / 0.93-0.97x at 512 KiB-2 MiB (1.02-1.07x at 128 KiB and 64 MiB); t1 = 4
    // 0.99-1.27x / 0.89-0.95x; t0 = t1 = 16 (whole output lines) 0.34-0.39x / 0.31-0.69x. None
    // wins for both directions.
    // Whole-pixel loads (cpu_ladder.cpp): every strided load of one input pixel in one loop body,
    // so each dense load feeds all its block rows instead of being loaded again per row. Measured
    // on this project's AMD EPYC (AVX-512), 1 thread, against the ladder without them: 2 MiB
    // cases at >= 0.8x memcpy 64 -> 69 of 83, median 0.94 -> 0.98; NHWC DepthToSpace CRD f32 C16
    // 0.62 -> 1.05 at 2 MiB, 0.28 -> 0.55 at 128 KiB; NHWC DCR u8 C3 0.53 -> 1.04 and 0.17 ->
    // 0.48. Slower: S2D NHWC CRD c128 C3 (0.75 -> 0.65 at 2 MiB) and a few NCHW rows by 6-9 %.
    s.whole_pixel_loads = true;
    // Strided vectors whose dense span passes 256 bytes (four 64-byte vectors) take a narrower
    // width: the [C, bh*bw] and [C, 2x2] pixel transposes of C3 read at input stride 12 or 6, and
    // a 16-lane f32 vector at stride 12 is a 768-byte shuffle LLVM lowers to a long permute
    // chain. Measured on the AMD EPYC (AVX-512), 1 thread, against the ladder without the limit
    // (bench/compare_builds.py, 3 rounds): NHWC CRD DepthToSpace f32 C3 0.10 -> 0.22x memcpy at
    // 128 KiB and 0.27 -> 0.51x at 2 MiB; SpaceToDepth f32 C3 0.15 -> 0.20 and 0.38 -> 0.47,
    // u8 C3 1.06-1.21x, c128 C3 1.14-1.20x; no other case moved beyond the run-to-run noise.
    // A 128-byte limit measured the same (only the NCHW_VECT_C CRD u8 rows moved, 0.12 -> 0.13).
    s.max_gather_bytes = 256;
    // Vectors wider than 32 bytes only where the row's last-vector overlap is within a quarter
    // of the row (Ladder::takes_width). Measured on the AMD EPYC (AVX-512), 1 thread, against
    // the ladder without the rule (bench/compare_builds.py): at 128 KiB NCHW DepthToSpace f32
    // C16 (22-element rows) 1.32x, SpaceToDepth NCHW CRD f32 C3 b3 1.33x, u8 NCHW C3/C16
    // 1.12-1.19x; at 2 MiB u8 NCHW C64 (90-byte rows) 1.08-1.18x, cases at >= 0.8x memcpy
    // 71 -> 73 of 83. Slower: the f32 deinterleave of 22-element rows (SpaceToDepth NCHW DCR
    // f32 C16 at 128 KiB, 0.92x). The same test at every width (down to 16 bytes) lost: rows of
    // 11-52 elements fell to 4-lane vectors (0.76-0.86x).
    s.max_loose_fit_bytes = 32;
    // The tail in the vector loop for rows under 16 vectors (Ladder::vector_rows; the figures
    // are in cpu_ladder.cpp). Not on ARM: the clamp adds an instruction to NEON's 13-instruction
    // deinterleave loop, below the copy/1.3 bound of tests/arm_neon_loops on Cortex-A76.
    s.tail_in_loop = true;
    set_transpose_tile(s, h, std::min(vec, bytes >= 4 ? 4 : 8), 64);
    return s;
}

}  // namespace spacedepth
