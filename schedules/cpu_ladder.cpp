// The schedule machinery the CPU targets share (x86.cpp, arm.cpp): the specialisation ladder
// over stride patterns, the parallel outer loops, the register-tile transpose and the small-
// tensor kernel. Which patterns exist follows from the runtime's normalised views and is the
// same on every CPU; how wide and how unrolled each is comes from the target's LadderShape.
//
// The runtime hands the kernel a normalised view (runtime/plan_cpu.cpp; the slots' roles are in
// contract/kernel_contract.h): dims sorted by output stride, size-1 dims dropped, contiguous
// dims merged, the element widened where a run allows. So the output's dim 0 is dense whenever
// the output is, and the patterns that matter are recognisable from a few strides. Each gets
// its own specialisation; the first that holds wins. The constants in each pattern are the
// strides and extents those normalised views have for a given C and block; the helpers below
// (interleave(), short_runs_d2s(), ...) name the view each one matches.
//
//   run copy      in.s0 == 1, out.s0 == 1          NHWC DCR (runs of bw*C elements), identity
//   interleave    out.e0 == k, out.s1 == k, in.s1 == 1   NCHW DepthToSpace (k = bw)
//   deinterleave  in.s0 == k, out.s0 == 1          NCHW SpaceToDepth (k = bw)
//   gather        out.s0 == 1                       everything else (NHWC CRD, VECT_C CRD, views)
//
// Measured with a Halide 14 prototype before this library (2-core Zen 3, AVX2, 64 MiB tensors):
// view-based kernels vectorised over the dense dim reached 1.13x single-thread memcpy (median),
// while the natural 4-D formulation, reading the input at x / bs and y / bs, reached
// 0.03-0.13x for NHWC (x / bs becomes gathers or scalar code). The interleave only vectorises
// when the block extent is a compile-time constant (without one, Halide refuses to unroll the
// block digit), hence one branch per k.
#include "schedules/cpu_ladder.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace spacedepth {

using namespace Halide;

namespace {

// The pattern constants, named by the normalised view they match (C channels, block bh x bw,
// R units per short run, k block rows or columns).
//   (a, c): dim 0 of extent a unrolled, dim 1 of input stride c vectorised.
using Unroll1 = std::pair<int, int>;
constexpr Unroll1 interleave(int k) { return {k, 1}; }  // NCHW DepthToSpace, k = bw
// NHWC DepthToSpace with bw*C below one vector: runs of R units taken from every k-th run.
constexpr Unroll1 short_runs_d2s(int r, int k) { return {r, r * k}; }
//   (a, b, c): dims 0 and 1 of extents a, b unrolled, dim 2 of input stride c vectorised.
using Unroll2 = std::tuple<int, int, int>;
// NHWC SpaceToDepth with small bw*C: runs of R units gathered k at a time.
constexpr Unroll2 short_runs_s2d(int r, int k) { return {r, k, r}; }
// The per-pixel [C, k*k] transpose of NHWC SpaceToDepth in CRD order.
constexpr Unroll2 pixel_transpose_s2d_crd(int k) { return {k, k, 1}; }
// The [C, bh*bw] transpose of NHWC DepthToSpace in CRD order, for C below a vector.
constexpr Unroll2 pixel_transpose_d2s_crd(int c, int bh, int bw) { return {c, bw, c * bh * bw}; }
// NCHW_VECT_C DepthToSpace in CRD order: 4 lanes x bw block columns.
constexpr Unroll2 vect_c_d2s_crd(int bw) { return {4, bw, 4}; }
// NCHW_VECT_C SpaceToDepth in CRD order, block 2: 2 x 2 block, lanes 8 apart in the input.
constexpr Unroll2 vect_c_s2d_crd_b2() { return {2, 2, 8}; }
//   (a, b, c, d): dims 0-2 of extents a, b, c unrolled, dim 3 of input stride d vectorised.
using Unroll3 = std::tuple<int, int, int, int>;
// The per-pixel [C, 2x2] transpose of NHWC SpaceToDepth in CRD order, for C below a vector.
constexpr Unroll3 pixel_transpose_s2d_crd_b2(int c) { return {2, 2, c, 2 * c}; }
//   (k, m): a deinterleave by k whose next dim (extent m, input stride 1) is unrolled.
using Deinterleave = std::pair<int, int>;
constexpr Deinterleave deinterleave_rows(int bw) { return {bw, bw}; }  // NCHW SpaceToDepth
// The [C, bh*bw] transpose of NHWC DepthToSpace in CRD order.
constexpr Deinterleave transpose_d2s_crd(int bh, int bw) { return {bh * bw, bw}; }

}  // namespace

Ladder::Ladder(const PermuteCopyHandles &h, const LadderShape &shape) : h(h), shape(shape), vec(shape.vec) {}

// The two outermost slots (the runtime puts the view's outermost dims there) run in parallel
// as one fused loop, split into tasks of about shape.task_bytes. Measured (x86): one task per outer
// iteration (128-byte copies) ran at 0.09x memcpy, because Halide's pool takes a lock per
// task; fusing all outer dims cost a div/mod chain per inner row and made 2 threads slower
// than 1 at 2 MiB (0.24x vs 0.88x, NHWC DCR f32 C16).
void Ladder::outer_loops(Stage s, bool par) const {
    if (!par) {
        return;
    }
    Expr inner = extent(0) * extent(1) * extent(2) * extent(3);
    const int task_elements = shape.task_bytes / h.output.type().bytes();
    Var fused("outer"), task("task"), within("within");
    static_assert(kCpuParallelSlots == 2, "the two outermost slots are fused into the task loop");
    s.fuse(h.x[kKernelRank - 2], h.x[kKernelRank - 1], fused)
        .split(fused, task, within, max(1, task_elements / max(inner, 1)), TailStrategy::GuardWithIf)
        .parallel(task);
}

// Dims 0 and 1 (small constant extents) unrolled inside a vector of w elements of dim 2.
void Ladder::unroll_dims_0_1_vectorize_2(Stage b, int w, bool par) const {
    const std::vector<Var> &x = h.x;
    Var xo("x2o"), xi("x2i");
    b.split(x[2], xo, xi, w, TailStrategy::ShiftInwards)
        .reorder(x[0], x[1], xi, xo)
        .unroll(x[0])
        .unroll(x[1])
        .vectorize(xi);
    outer_loops(b, par);
}

// Dims 0 and 2 (small constant extents) unrolled around a vector of w elements of dim 1.
void Ladder::unroll_dims_0_2_vectorize_1(Stage b, int w, bool par) const {
    const std::vector<Var> &x = h.x;
    Var xo("x1o"), xi("x1i");
    b.split(x[1], xo, xi, w, TailStrategy::ShiftInwards)
        .reorder(x[0], xi, x[2], xo)
        .unroll(x[0])
        .unroll(x[2])
        .vectorize(xi);
    outer_loops(b, par);
}

// Rows of extent e take vectors of w elements when they hold one; vectors wider than
// shape.max_loose_fit_bytes also need the row's ShiftInwards overlap within a quarter of the
// row, or the half width takes it (x86.cpp: a 90-byte row is two 64-byte vectors, 128 bytes
// moved, or three 32-byte ones).
Expr Ladder::takes_width(const Expr &e, int w) const {
    if (shape.max_loose_fit_bytes <= 0 || w * h.output.type().bytes() <= shape.max_loose_fit_bytes) {
        return e >= w;
    }
    return e >= w && 4 * ((e + (w - 1)) / w * w) <= 5 * e;
}

// Schedules a vector-row pattern: `split` splits off and vectorises the vector loop `xo`, then
// the outer loops follow. With `tail_in_short_rows` (and LadderShape::tail_in_loop), rows of
// fewer than kLongRowVectors vectors keep the ShiftInwards tail inside the vector loop
// (never_partition; why: the whole-pixel loads in apply()), and longer rows keep Halide's
// partitioned loop (a steady state, then one epilogue): with the tail in the loop rows of 37
// vectors lost at 64 MiB, S2D NCHW u8 C3 b2 (2,364-byte rows) and f32 C3 b3 0.85-0.88x (AMD
// EPYC, 1 thread, 3 rounds).
void Ladder::vector_rows(Stage b, const Expr &row_extent, int w, bool par, bool tail_in_short_rows, Var xo,
                         const std::function<void(Stage)> &split) const {
    auto schedule = [&](Stage st, bool tail_in_loop) {
        split(st);
        if (tail_in_loop) st.never_partition(xo);
        outer_loops(st, par);
    };
    if (!shape.tail_in_loop || !tail_in_short_rows) {
        schedule(b, false);
        return;
    }
    schedule(b.specialize(row_extent >= kLongRowVectors * w), false);
    schedule(b, true);
}

void Ladder::apply(Stage s, bool par) const {
    const std::vector<Var> &x = h.x;

    // Contiguous runs on both sides: wide unaligned vector copies. ShiftInwards overlaps the
    // last vector with the one before, which is harmless for a copy; a factor whose overlap
    // passes a quarter of the run leaves it to a narrower one (takes_width). AMD EPYC
    // (AVX-512), 1 thread, model shapes: D2S NHWC DCR f32 C48 b2 (384-byte runs: two 256-byte
    // iterations, or six 64-byte vectors) and C12 b2 (96 bytes: two zmm, or three ymm).
    for (int factor : shape.run_factors) {
        Stage b = s.specialize(out_stride(0) == 1 && in_stride(0) == 1 && takes_width(extent(0), factor));
        b.vectorize(x[0], factor, TailStrategy::ShiftInwards);
        outer_loops(b, par);
    }

    // Whole-pixel loads (LadderShape::whole_pixel_loads): every strided load of one input pixel
    // in the same loop body, so Halide's strided-load staging turns them into one dense load
    // (one ld4 on NEON) instead of one load per output row, each shifted back to stay in bounds
    // and none shared. llvm-mca, Neoverse N1, against a plain copy loop: NHWC DepthToSpace CRD
    // f32 C16 from 0.50x (4 ld4 per 64 stored bytes) to 1.00x; u8 C3 short runs from 0.43x to
    // 1.00x together with arm.cpp's SplitWideShuffles (the stride-6 shuffle as ld3 + uzp). On
    // x86 the same patterns took NHWC CRD DepthToSpace from 0.62x to 1.05x memcpy (x86.cpp).
    // The tail in the loop (vector_rows()): the vector loop keeps its ShiftInwards tail inside (the
    // last vector's start clamped with a min) instead of a separate epilogue, whose copy of the
    // body recomputed every address from spilled strides once per row. A hand-written AVX-512 loop
    // on the view of S2D NCHW DCR f32 C1 (180 x 180) ran 1,560 ns with an epilogue and 1,360 ns
    // with the clamp. AMD EPYC (AVX-512), 1 thread, 128 KiB, against partitioned loops
    // (bench/compare_builds.py): S2D NCHW f32 C1/C3 1.3-1.5x (0.42 -> 0.62x memcpy for CRD C3), D2S
    // NCHW CRD f32 C3 b3/b4 1.2-1.3x, D2S NHWC u8 C1 1.4-1.5x; cases at >= 0.6x 20 -> 36 of 109
    // with the model shapes; 2 MiB within the spread. Not where a row is one or two vectors (row
    // pairs, the unrolled pixel patterns: u8 NCHW C64 0.75-0.8x, c128 C3 0.69x with it), nor on the
    // short-run copies of the interleave ladder; slower with it: S2D NHWC DCR u8 C1 (an interleave
    // by 2 of 181 u16), 0.9x.
    if (shape.whole_pixel_loads) {
        // Down to 16-byte vectors, for channel counts below one vector: with 64-byte vectors
        // f32 C12 and u8 C16 fell to the deinterleave below, which unrolls one of the two block
        // dims and loads each pixel twice. AMD EPYC (AVX-512), 1 thread: D2S NHWC CRD u8 C16
        // 0.25 -> 0.60x memcpy at 128 KiB and 0.56 -> 0.97x at 2 MiB, f32 C12 0.16 -> 0.49x and
        // 0.39 -> 0.86x. ARM is unchanged (its vectors are 16 bytes).
        for (int w : halving_widths(2 * vec, std::max(1, 16 / h.output.type().bytes()))) {
            //   dim 0 the channels (input stride bh*bw), dims 1 and 3 the block column and row
            //   (input strides 1 and bw): NHWC DepthToSpace in CRD order, block 2. First for C of
            //   exactly one vector, where the channel loop disappears and the pixel loop is the
            //   inner loop (u8 C16: 21 instructions per 64 bytes with a one-trip channel loop).
            for (bool exact : {true, false}) {
                Stage b =
                    s.specialize(out_stride(0) == 1 && in_stride(0) == 4 && extent(1) == 2 && in_stride(1) == 1 &&
                                 extent(3) == 2 && in_stride(3) == 2 && (exact ? extent(0) == w : extent(0) >= w));
                Var xo("x0o"), xi("x0i");
                vector_rows(b, extent(0), w, par, !exact, xo, [&](Stage st) {
                    st.split(x[0], xo, xi, w, TailStrategy::ShiftInwards)
                        .reorder(xi, x[1], x[3], xo, x[2])
                        .unroll(x[1])
                        .unroll(x[3])
                        .vectorize(xi);
                });
            }
        }
        // Short runs: R units per block row, k block rows per pixel (bw*C below a vector).
        const std::vector<std::pair<int, int>> short_runs = {{2, 2}, {3, 2}, {4, 2}, {2, 3}, {3, 3}};
        for (auto [r, k] : short_runs) {
            //   dim 0 the run, dim 1 the pixels (input stride R*k), dim 2 the k block rows (input
            //   stride R): NHWC DepthToSpace in DCR order. One vector of pixels: at two, LLVM's
            //   tbl network for the stride-R*k shuffle spills (llvm-mca, Neoverse N1: 0.39x the
            //   copy loop against 0.44x).
            unroll_dims_0_2_vectorize_1(
                s.specialize(out_stride(0) == 1 && extent(0) == r && in_stride(0) == 1 && out_stride(1) == r &&
                             in_stride(1) == r * k && extent(2) == k && in_stride(2) == r && extent(1) >= vec),
                vec, par);
        }
        for (auto [r, k] : short_runs) {
            //   The mirror image: dim 0 the run, dim 1 the k block rows (output stride R), dim 2
            //   the pixels (input stride R, output stride R*k): NHWC SpaceToDepth in DCR order.
            //   One vector of pixels per row, so the R strided loads of a row share one dense
            //   load (at two vectors each had its own).
            unroll_dims_0_1_vectorize_2(
                s.specialize(out_stride(0) == 1 && extent(0) == r && in_stride(0) == 1 && out_stride(1) == r &&
                             extent(1) == k && out_stride(2) == r * k && in_stride(2) == r && extent(2) >= vec),
                vec, par);
        }
        for (int k : {2, 3, 4}) {
            //   The per-pixel [C, k*k] transpose of NHWC SpaceToDepth in CRD order (dims 0-1 the
            //   k x k block, unrolled; dim 2 the channels, input stride 1) with C exactly one
            //   vector: the channel loop disappears and one st4 per pixel is the inner loop
            //   (u8 C16 block 2: 24 instructions per 64 bytes with a one-trip channel loop).
            Stage b = s.specialize(out_stride(0) == 1 && extent(0) == k && out_stride(1) == k && extent(1) == k &&
                                   out_stride(2) == k * k && in_stride(2) == 1 && extent(2) == vec);
            b.reorder(x[0], x[1], x[2]).unroll(x[0]).unroll(x[1]).vectorize(x[2]);
            outer_loops(b, par);
        }
    }

    // Small constant-extent inner dims unrolled inside a vector of the next dim. The strides
    // are pinned to constants, so Halide turns the strided accesses into dense vector loads
    // and stores plus shuffles: k dense loads and one interleaving store for an interleave.
    //   unroll dim 0 (extent a), vectorise dim 1 (input stride c):
    //     a=k, c=1      interleave by k: NCHW DepthToSpace (k = bw)
    //     a=R, c=R*k    short runs of R units taken from every k-th run: NHWC DepthToSpace
    //                   with bw*C below one vector (u8 C3 b2 moves as 3 x u16)
    // Each also at half a vector, for rows shorter than one (small NCHW planes, u8 C16).
    const std::vector<int> &block_widths = shape.block_widths;
    // A vector of w elements read at input stride c shuffles w * c elements out of dense loads;
    // widths whose span exceeds shape.max_gather_bytes are left to the narrower ones (x86.cpp).
    auto gather_fits = [&](int w, int c) {
        return shape.max_gather_bytes <= 0 || w == block_widths.back() ||
               w * c * h.output.type().bytes() <= shape.max_gather_bytes;
    };
    // Row pairs: an interleave by 2 whose dim 2 is the block row pair (extent 2: NCHW
    // DepthToSpace, block 2) takes both rows in one body, so rows of at most two vectors (small
    // planes: 11-45 elements at 128 KiB) pay the loop nest once per pair. AMD EPYC (AVX-512),
    // 1 thread, 128 KiB: D2S NCHW C64 f32 and u8 1.2-1.5x, C16 u8 1.2-1.3x. Longer rows lost
    // with it (90-180-element rows of C1 and C3, 0.84-0.92x), hence the bound.
    for (int w : block_widths) {
        if (!gather_fits(w, 1)) continue;
        unroll_dims_0_2_vectorize_1(
            s.specialize(out_stride(0) == 1 && extent(0) == 2 && out_stride(1) == 2 && in_stride(1) == 1 &&
                         takes_width(extent(1), w) && extent(1) < 2 * w && extent(2) == 2),
            w, par);
    }
    for (int w : block_widths)
        for (Unroll1 p : {interleave(2), interleave(3), interleave(4), interleave(8), short_runs_d2s(2, 2),
                          short_runs_d2s(2, 3), short_runs_d2s(2, 4), short_runs_d2s(3, 2), short_runs_d2s(3, 3),
                          short_runs_d2s(3, 4), short_runs_d2s(4, 2), short_runs_d2s(4, 3), short_runs_d2s(4, 4)}) {
            const int a = p.first, c = p.second;
            if (!gather_fits(w, c)) continue;
            Stage b = s.specialize(out_stride(0) == 1 && extent(0) == a &&
                                   in_stride(0) == (c == 1 ? in_stride(0) : Expr(1)) && out_stride(1) == a &&
                                   in_stride(1) == c && takes_width(extent(1), w));
            // The tail in the loop for the interleaves (c == 1); the short-run copies lost with it.
            Var xo("x1o"), xi("x1i");
            vector_rows(b, extent(1), w, par, c == 1, xo, [&](Stage st) {
                st.split(x[1], xo, xi, w, TailStrategy::ShiftInwards).reorder(x[0], xi, xo).unroll(x[0]).vectorize(xi);
            });
        }
    //   unroll dims 0 and 1 (extents a, b), vectorise dim 2 (input stride c):
    //     a=R, b=k, c=R   short runs gathered k at a time: NHWC SpaceToDepth, small bw*C
    //     a=b=k, c=1      the per-pixel [C, k*k] transpose of NHWC SpaceToDepth in CRD order
    //     a=C, b=bw, c=C*bh*bw  the [C, bh*bw] transpose of NHWC DepthToSpace in CRD order
    //                         for C below a vector (C3 b2)
    //     a=4, b=bw, c=4  NCHW_VECT_C DepthToSpace in CRD order: 4 lanes x bw block columns
    //                     (also the R = 4, k = bw short runs of SpaceToDepth: the same view)
    //     a=b=2, c=8      NCHW_VECT_C SpaceToDepth in CRD order, block 2
    for (int w : block_widths)
        for (Unroll2 p : {short_runs_s2d(2, 2), short_runs_s2d(2, 3), short_runs_s2d(2, 4), short_runs_s2d(3, 2),
                          short_runs_s2d(3, 3), short_runs_s2d(3, 4), short_runs_s2d(4, 3), pixel_transpose_s2d_crd(2),
                          pixel_transpose_s2d_crd(3), pixel_transpose_s2d_crd(4), pixel_transpose_d2s_crd(3, 2, 2),
                          vect_c_d2s_crd(2), vect_c_d2s_crd(4), vect_c_s2d_crd_b2()}) {
            const auto [a, bb, c] = p;
            if (!gather_fits(w, c)) continue;
            unroll_dims_0_1_vectorize_2(
                s.specialize(out_stride(0) == 1 && extent(0) == a && out_stride(1) == a && extent(1) == bb &&
                             out_stride(2) == a * bb && in_stride(2) == c && takes_width(extent(2), w)),
                w, par);
        }

    // Deinterleave by k with the next dim (extent m, input stride 1) unrolled inside the
    // vector, so the m strided loads share their dense loads: NCHW SpaceToDepth (k = m = bw,
    // reads each input row once) and the [C, bh*bw] transpose of NHWC DepthToSpace in CRD
    // order (k = bh*bw, m = bw).
    //   unroll dims 0-2 (extents a, b, c), vectorise dim 3 (input stride d):
    //     a=b=2, c=C, d=2*C  the per-pixel [C, 2x2] transpose of NHWC SpaceToDepth in CRD
    //                        order for C below the narrowest block width (C 2, 3, 4, 6: u8 C6
    //                        ran as scalar byte moves, 0.02x memcpy at 128 KiB)
    for (Unroll3 p : {pixel_transpose_s2d_crd_b2(3), pixel_transpose_s2d_crd_b2(6), pixel_transpose_s2d_crd_b2(4),
                      pixel_transpose_s2d_crd_b2(2)}) {
        const auto [a, bb, c, d] = p;
        // One vector, or the widest block width whose gather fits.
        const int gather = d;  // a copy: a lambda may not capture a structured binding in C++17 (clang)
        const int w = *std::find_if(block_widths.begin(), block_widths.end(),
                                    [&](int v) { return v <= vec && gather_fits(v, gather); });
        Var xo("x3o"), xi("x3i");
        Stage b = s.specialize(out_stride(0) == 1 && extent(0) == a && out_stride(1) == a && extent(1) == bb &&
                               out_stride(2) == a * bb && extent(2) == c && out_stride(3) == a * bb * c &&
                               in_stride(3) == d && extent(3) >= w);
        b.split(x[3], xo, xi, w, TailStrategy::ShiftInwards)
            .reorder(x[0], x[1], x[2], xi, xo)
            .unroll(x[0])
            .unroll(x[1])
            .unroll(x[2])
            .vectorize(xi);
        outer_loops(b, par);
    }

    // Rows shorter than a vector (u8 NHWC with C = 16 is half an AVX2 vector) use half and
    // quarter vectors rather than falling to scalar code: measured 0.03-0.06x memcpy at L3
    // for u8 NHWC CRD before.
    for (int w : shape.row_widths) {
        // Runs dense on both sides but shorter than the run copies' vectors (u8 NHWC DCR C6 block
        // 3: 18-byte runs, 9 x u16): dense vectors, the last overlapping the one before. The
        // fallback below does not know the input stride is 1 and gathers lane by lane. AMD EPYC
        // (AVX-512), 128 KiB: u8 C6 b3 0.05 -> 0.12x memcpy, f32 C3 b4 0.17 -> 0.33x, S2D u8
        // C24 0.15 -> 0.26x.
        const std::vector<int> &runs = shape.run_factors;
        if (std::find(runs.begin(), runs.end(), w) == runs.end()) {  // else the run copy above
            Stage dense = s.specialize(out_stride(0) == 1 && in_stride(0) == 1 && takes_width(extent(0), w));
            dense.vectorize(x[0], w, TailStrategy::ShiftInwards);
            outer_loops(dense, par);
        }
        {
            // Row pairs of the deinterleave by 2 (NCHW SpaceToDepth, block 2: dim 2 the block
            // row pair), for rows of at most two vectors, as for the interleave above: 128 KiB,
            // S2D NCHW C64 and C16 1.3-1.8x (u8 C64 0.12 -> 0.19 DCR, 0.16 -> 0.29 CRD).
            Var xo("x0o"), xi("x0i");
            Stage b = s.specialize(out_stride(0) == 1 && in_stride(0) == 2 && takes_width(extent(0), w) &&
                                   extent(0) < 2 * w && extent(1) == 2 && in_stride(1) == 1 && extent(2) == 2);
            b.split(x[0], xo, xi, w, TailStrategy::ShiftInwards)
                .reorder(xi, x[1], x[2], xo)
                .unroll(x[1])
                .unroll(x[2])
                .vectorize(xi);
            outer_loops(b, par);
        }
        for (Deinterleave p : {deinterleave_rows(2), deinterleave_rows(3), deinterleave_rows(4),
                               transpose_d2s_crd(2, 2), transpose_d2s_crd(3, 3), transpose_d2s_crd(4, 4)}) {
            const int k = p.first, m = p.second;
            Stage b = s.specialize(out_stride(0) == 1 && in_stride(0) == k && takes_width(extent(0), w) &&
                                   extent(1) == m && in_stride(1) == 1);
            Var xo("x0o"), xi("x0i");
            vector_rows(b, extent(0), w, par, true, xo, [&](Stage st) {
                st.split(x[0], xo, xi, w, TailStrategy::ShiftInwards).reorder(xi, x[1], xo).unroll(x[1]).vectorize(xi);
            });
        }
        // Deinterleave by k: a constant-stride load becomes dense loads plus shuffles. Both this
        // and the gather below keep their tail in the loop (vector_rows()): D2S NHWC f32
        // C1 (a u64 deinterleave by 2 of 90-unit rows) 1.18-1.24x at 128 KiB.
        Var xo("x0o"), xi("x0i");
        auto split_row = [&](Stage st) { st.split(x[0], xo, xi, w, TailStrategy::ShiftInwards).vectorize(xi); };
        for (int k : {2, 3, 4, 8}) {
            vector_rows(s.specialize(out_stride(0) == 1 && in_stride(0) == k && takes_width(extent(0), w)), extent(0),
                        w, par, true, xo, split_row);
        }
        // Anything else with a dense output row: vector stores, gathered loads.
        vector_rows(s.specialize(out_stride(0) == 1 && takes_width(extent(0), w)), extent(0), w, par, true, xo,
                    split_row);
    }

    // Otherwise: scalar copy (short or strided output rows).
    outer_loops(s, par);
}

std::vector<int> halving_widths(int widest, int narrowest) {
    std::vector<int> widths = {widest};
    for (int w = widest / 2; w >= std::max(narrowest, 1); w /= 2) {
        widths.push_back(w);
    }
    return widths;
}

std::vector<int> run_widths(int vectors, int vec) {
    return vectors > 1 ? std::vector<int>{vectors * vec, vec} : std::vector<int>{vec};
}

void set_transpose_tile(LadderShape &s, const PermuteCopyHandles &h, int rows, int line_bytes) {
    const int bytes = h.output.type().bytes();
    s.tile_rows = tuned(h.tuning.tile_rows, rows);
    s.tile_cols = std::max(s.tile_rows, tuned(h.tuning.tile_row_bytes, line_bytes) / bytes);
}

void schedule_ladder(const PermuteCopyHandles &h, const LadderShape &shape) {
    Ladder ladder(h, shape);
    Func output = h.output;  // a handle to the same Func
    ladder.apply(output.specialize(h.parallel), true);
    ladder.apply(output, false);
}

// Transposes: dim 0 is the output's dense dim and gathers in the input; dim 1 is the input's
// dense dim (fused NCHW -> NHWC conversion, NHWC <-> NCHW views). Each T x T tile of the input
// is loaded with T dense vector loads along dim 1 into a wrapper (the register tile), stored
// transposed (Halide fuses the T unrolled strided stores into shuffles), then copied out with
// dense vector stores along dim 0. Measured before: vectorising dim 0 with gathered loads
// reached 0.22x memcpy at 64 MiB (D2S NCHW -> NHWC f32 C16, x86). The tile is t0 x t1
// (target-specific, see x86.cpp and arm.cpp).
void schedule_transpose_tiles(const PermuteCopyHandles &h, const LadderShape &shape) {
    const std::vector<Var> &x = h.x;
    const int t0 = shape.tile_rows, t1 = shape.tile_cols;
    Func output = h.output;
    Var x0o("x0o"), x1o("x1o"), x0i("x0i"), x1i("x1i");
    Ladder ladder(h, shape);
    Expr fits = h.out.dim(0).extent() >= t0 && h.out.dim(1).extent() >= t1;
    for (bool par : {true, false}) {
        Stage base = par ? output.specialize(h.parallel) : Stage(output);
        Stage fast = base.specialize(fits);
        fast.tile(x[0], x[1], x0o, x1o, x0i, x1i, t0, t1, TailStrategy::ShiftInwards).vectorize(x0i).unroll(x1i);
        ladder.outer_loops(fast, par);
        base.tile(x[0], x[1], x0o, x1o, x0i, x1i, t0, t1, TailStrategy::GuardWithIf);
        ladder.outer_loops(base, par);
    }
    Func stage = h.input_stage;  // a handle to the same wrapper
    const std::vector<Var> a = stage.args();
    Var a1o("a1o"), a1i("a1i"), a0o("a0o"), a0i("a0i");
    // A fixed t0 x t1 allocation, so the tile lives on the stack in the guarded tail tiles too:
    // before, those tiles were allocated with halide_malloc, and a failing allocation in one task
    // of a parallel call could leave other tasks' rows written (a partial output).
    stage.compute_at(output, x0o)
        .bound_storage(a[0], t0)
        .bound_storage(a[1], t1)
        .split(a[1], a1o, a1i, t0, TailStrategy::GuardWithIf)
        .split(a[0], a0o, a0i, t0, TailStrategy::GuardWithIf)
        .reorder(a1i, a0i, a1o, a0o)
        .vectorize(a1i)
        .unroll(a0i)
        .unroll(a1o);
}

// Small tensors (the runtime sends those under the small_max_bytes switch point here): serial, one vectorised
// branch, no ladder, so a call's fixed cost is one stride test, near memcpy's; the general
// kernel walks its ladder's stride and extent conditions at entry. (Callgrind on x86, a 64-byte
// call, when the kernels still computed bounds at entry: the general kernel ran 2,229
// instructions before its first copy, the whole call about 5,200. no_bounds_query has since
// removed that prologue from every kernel; the ladder walk is what remains.)
void schedule_small(const PermuteCopyHandles &h, int vec) {
    Func output = h.output;
    output.specialize(h.out.dim(0).stride() == 1 && h.out.dim(0).extent() >= vec)
        .vectorize(h.x[0], vec, TailStrategy::ShiftInwards);
}

}  // namespace spacedepth
