// The schedule machinery the CPU targets share (x86.cpp, arm.cpp): the specialisation ladder
// over stride patterns, the register-tile transpose and the small-tensor kernel. Which patterns exist follows from the
// runtime's normalised views and is the same on every CPU: the rows of contract/cpu_ladder_table.h, each a condition on
// the pattern slots' strides and extents and a loop shape. How wide and how unrolled each is comes from the target's
// LadderShape.
//
// The runtime hands the kernel a normalised view (runtime/plan_cpu.cpp; the slots' roles are in
// contract/kernel_contract.h): dims sorted by output stride, size-1 dims dropped, contiguous
// dims merged, the element widened where a run allows. So the output's dim 0 is dense whenever
// the output is, and the patterns that matter are recognisable from a few strides. Each row gets
// its own specialisation; the first that holds wins.
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
// block digit), hence one row per k.
//
// Every loop nest is serial. The executor runs a parallel call as tasks on Halide's pool, each a
// few kernel calls on parts of the two outermost slots (runtime/execute.cpp): with the task loop
// in the kernel, every row was compiled twice, under a specialisation on `parallel` and again
// serially (twice the code and the build time: general u32 for AVX2, 22.4 -> 11.3 s of CPU in the
// generator without the serial copy), and a single nest whose serial call is one task paid the
// task split's divisions at every call (4 KiB calls 10-50 ns slower, median 1.08x the time; Intel
// Xeon VM of model 0xcf).

#include "schedules/cpu_ladder.h"

#include <algorithm>
#include <utility>

namespace spacedepth {

using namespace Halide;
using ladder::LoopShape;
using ladder::Row;
using ladder::Term;

Ladder::Ladder(const PermuteCopyHandles &h, const LadderShape &shape) : h(h), shape(shape), vec(shape.vec) {}

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
// (never_partition), and longer rows keep Halide's partitioned loop (a steady state, then one
// epilogue): with the tail in the loop rows of 37 vectors lost at 64 MiB, S2D NCHW u8 C3 b2
// (2,364-byte rows) and f32 C3 b3 0.85-0.88x (AMD EPYC, 1 thread, 3 rounds).
//
// Why the tail in the loop: the vector loop keeps its ShiftInwards tail inside (the last
// vector's start clamped with a min) instead of a separate epilogue, whose copy of the body
// recomputed every address from spilled strides once per row. A hand-written AVX-512 loop on the
// view of S2D NCHW DCR f32 C1 (180 x 180) ran 1,560 ns with an epilogue and 1,360 ns with the
// clamp. AMD EPYC (AVX-512), 1 thread, 128 KiB, against partitioned loops
// (bench/compare_builds.py): S2D NCHW f32 C1/C3 1.3-1.5x (0.42 -> 0.62x memcpy for CRD C3), D2S
// NCHW CRD f32 C3 b3/b4 1.2-1.3x, D2S NHWC u8 C1 1.4-1.5x; cases at >= 0.6x 20 -> 36 of 109 with
// the model shapes; 2 MiB within the spread. Not where a row is one or two vectors (row pairs, the
// unrolled pixel patterns: u8 NCHW C64 0.75-0.8x, c128 C3 0.69x with it), nor on the short-run
// copies of the interleave rows (Row::tail_in_loop false); slower with it: S2D NHWC DCR u8 C1 (an
// interleave by 2 of 181 u16), 0.9x.
void Ladder::vector_rows(Stage b, const Expr &row_extent, int w, bool tail_in_short_rows, Var xo,
                         const std::function<void(Stage)> &split) const {
    auto schedule = [&](Stage st, bool tail_in_loop) {
        split(st);
        if (tail_in_loop) st.never_partition(xo);
    };
    if (!shape.tail_in_loop || !tail_in_short_rows) {
        schedule(b, false);
        return;
    }
    schedule(b.specialize(row_extent >= kLongRowVectors * w), false);
    schedule(b, true);
}

// A row's condition at width w: its terms, in table order, joined by &&.
Expr Ladder::condition(const Row &r, int w) const {
    Expr all;
    for (int i = 0; i < r.term_count; i++) {
        const Term &t = r.terms[i];
        const Expr q = t.of == ladder::Of::InStride    ? in_stride(t.slot)
                       : t.of == ladder::Of::OutStride ? out_stride(t.slot)
                                                       : extent(t.slot);
        const int v = t.unit == ladder::Unit::Widths ? t.value * w : t.value;
        Expr term;
        switch (t.test) {
        case ladder::Test::Eq: term = q == v; break;
        case ladder::Test::Ge: term = q >= v; break;
        case ladder::Test::Lt: term = q < v; break;
        case ladder::Test::TakesWidth: term = takes_width(q, v); break;
        }
        all = all.defined() ? (all && term) : term;
    }
    return all;
}

// Whether a vector of w elements read at input stride c fits shape.max_gather_bytes: it shuffles
// w * c elements out of dense loads; wider spans are left to the narrower widths (x86.cpp).
bool Ladder::gather_fits(int w, int c) const {
    return shape.max_gather_bytes <= 0 || w == shape.block_widths.back() ||
           w * c * h.output.type().bytes() <= shape.max_gather_bytes;
}

std::vector<int> Ladder::widths(ladder::Widths which) const {
    switch (which) {
    case ladder::Widths::RunFactors: return shape.run_factors;
    // Down to 16-byte vectors, for channel counts below one vector: with 64-byte vectors f32 C12
    // and u8 C16 fell to the deinterleave rows, which unroll one of the two block dims and load
    // each pixel twice. AMD EPYC (AVX-512), 1 thread: D2S NHWC CRD u8 C16 0.25 -> 0.60x memcpy at
    // 128 KiB and 0.56 -> 0.97x at 2 MiB, f32 C12 0.16 -> 0.49x and 0.39 -> 0.86x. ARM is
    // unchanged (its vectors are 16 bytes).
    case ladder::Widths::PixelWidths: return halving_widths(2 * vec, std::max(1, 16 / h.output.type().bytes()));
    case ladder::Widths::Vector: return {vec};
    case ladder::Widths::BlockWidths: return shape.block_widths;
    case ladder::Widths::RowWidths: return shape.row_widths;
    case ladder::Widths::WidestFitting:
    case ladder::Widths::None: break;
    }
    return {};
}

// Slot `v` split at w (ShiftInwards), its vector inside the unrolled slots `inside` (innermost
// first) and outside `around`, then the rest of the slots and the outer loops.
void Ladder::vector_around_unrolled(Stage b, int v, std::initializer_list<int> inside,
                                    std::initializer_list<int> around, int w) const {
    const std::vector<Var> &x = h.x;
    const std::string slot = std::to_string(v);
    Var xo("x" + slot + "o"), xi("x" + slot + "i");
    std::vector<VarOrRVar> order;
    for (int d : inside) order.emplace_back(x[d]);
    order.emplace_back(xi);
    for (int d : around) order.emplace_back(x[d]);
    order.emplace_back(xo);
    b.split(x[v], xo, xi, w, TailStrategy::ShiftInwards).reorder(order);
    for (int d : inside) b.unroll(x[d]);
    for (int d : around) b.unroll(x[d]);
    b.vectorize(xi);
}

// The loop nest of one row at width w, on the stage its condition specialised.
void Ladder::schedule_row(Stage b, const Row &r, int w) const {
    const std::vector<Var> &x = h.x;
    switch (r.loop) {
    case LoopShape::RunCopy: {
        // Wide unaligned vector copies. ShiftInwards overlaps the last vector with the one before,
        // which is harmless for a copy; a factor whose overlap passes a quarter of the run leaves it
        // to a narrower one (takes_width). AMD EPYC (AVX-512), 1 thread, model shapes: D2S NHWC DCR
        // f32 C48 b2 (384-byte runs: two 256-byte iterations, or six 64-byte vectors) and C12 b2
        // (96 bytes: two zmm, or three ymm). At a row width below every run factor (u8 NHWC DCR
        // C6 block 3: 18-byte runs, 9 x u16): dense vectors, the last overlapping the one before;
        // the gather row does not know the input stride is 1 and gathers lane by lane. AMD EPYC
        // (AVX-512), 128 KiB: u8 C6 b3 0.05 -> 0.12x memcpy, f32 C3 b4 0.17 -> 0.33x, S2D u8 C24
        // 0.15 -> 0.26x.
        b.vectorize(x[0], w, TailStrategy::ShiftInwards);
        return;
    }
    case LoopShape::PixelRows: {
        // Whole-pixel loads (LadderShape::whole_pixel_loads): every strided load of one input pixel
        // in the same loop body, so Halide's strided-load staging turns them into one dense load
        // (one ld4 on NEON) instead of one load per output row, each shifted back to stay in bounds
        // and none shared. llvm-mca, Neoverse N1, against a plain copy loop: NHWC DepthToSpace CRD
        // f32 C16 from 0.50x (4 ld4 per 64 stored bytes) to 1.00x; u8 C3 short runs from 0.43x to
        // 1.00x together with arm.cpp's SplitWideShuffles (the stride-6 shuffle as ld3 + uzp). On
        // x86 the same patterns took NHWC CRD DepthToSpace from 0.62x to 1.05x memcpy (x86.cpp).
        // The one-vector row first: the channel loop disappears and the pixel loop is the inner
        // loop (u8 C16: 21 instructions per 64 bytes with a one-trip channel loop).
        Var xo("x0o"), xi("x0i");
        vector_rows(b, extent(0), w, r.tail_in_loop, xo, [&](Stage st) {
            st.split(x[0], xo, xi, w, TailStrategy::ShiftInwards)
                .reorder(xi, x[1], x[3], xo, x[2])
                .unroll(x[1])
                .unroll(x[3])
                .vectorize(xi);
        });
        return;
    }
    case LoopShape::Unroll02Vector1:
        // Whole-pixel short runs of D2S NHWC DCR: one vector of pixels; at two, LLVM's tbl network
        // for the stride-R*k shuffle spills (llvm-mca, Neoverse N1: 0.39x the copy loop against
        // 0.44x). Interleave row pairs (NCHW DepthToSpace, block 2) take both block rows in one
        // body, so rows of at most two vectors (small planes: 11-45 elements at 128 KiB) pay the
        // loop nest once per pair. AMD EPYC (AVX-512), 1 thread, 128 KiB: D2S NCHW C64 f32 and u8
        // 1.2-1.5x, C16 u8 1.2-1.3x. Longer rows lost with it (90-180-element rows of C1 and C3,
        // 0.84-0.92x), hence the row's bound.
        vector_around_unrolled(b, 1, {0}, {2}, w);
        return;
    case LoopShape::Unroll01Vector2:
        // The strides are pinned to constants, so Halide turns the strided accesses into dense
        // vector loads and stores plus shuffles. Whole-pixel S2D NHWC DCR short runs: one vector of
        // pixels per row, so the R strided loads of a row share one dense load (at two vectors
        // each had its own).
        vector_around_unrolled(b, 2, {0, 1}, {}, w);
        return;
    case LoopShape::Unroll01Whole2:
        // C exactly one vector: the channel loop disappears and one st4 per pixel is the inner loop
        // (u8 C16 block 2: 24 instructions per 64 bytes with a one-trip channel loop).
        b.reorder(x[0], x[1], x[2]).unroll(x[0]).unroll(x[1]).vectorize(x[2]);
        return;
    case LoopShape::Unroll0Vector1: {
        // k dense loads and one interleaving store for an interleave. The tail in the loop for the
        // interleaves; the short-run copies lost with it (Row::tail_in_loop).
        Var xo("x1o"), xi("x1i");
        vector_rows(b, extent(1), w, r.tail_in_loop, xo, [&](Stage st) {
            st.split(x[1], xo, xi, w, TailStrategy::ShiftInwards).reorder(x[0], xi, xo).unroll(x[0]).vectorize(xi);
        });
        return;
    }
    case LoopShape::Unroll012Vector3:
        // The per-pixel [C, 2x2] transpose of NHWC SpaceToDepth in CRD order for C below the
        // narrowest block width (C 2, 3, 4, 6: u8 C6 ran as scalar byte moves, 0.02x memcpy at
        // 128 KiB).
        vector_around_unrolled(b, 3, {0, 1, 2}, {}, w);
        return;
    case LoopShape::RowPairs:
        // Row pairs of the deinterleave by 2, as for the interleave: 128 KiB, S2D NCHW C64 and C16
        // 1.3-1.8x (u8 C64 0.12 -> 0.19 DCR, 0.16 -> 0.29 CRD).
        vector_around_unrolled(b, 0, {}, {1, 2}, w);
        return;
    case LoopShape::Unroll1Vector0: {
        // The m strided loads share their dense loads: NCHW SpaceToDepth reads each input row once.
        Var xo("x0o"), xi("x0i");
        vector_rows(b, extent(0), w, r.tail_in_loop, xo, [&](Stage st) {
            st.split(x[0], xo, xi, w, TailStrategy::ShiftInwards).reorder(xi, x[1], xo).unroll(x[1]).vectorize(xi);
        });
        return;
    }
    case LoopShape::VectorRows: {
        // A constant-stride load becomes dense loads plus shuffles; any other input stride gathers.
        // Both keep their tail in the loop: D2S NHWC f32 C1 (a u64 deinterleave by 2 of 90-unit
        // rows) 1.18-1.24x at 128 KiB.
        Var xo("x0o"), xi("x0i");
        vector_rows(b, extent(0), w, r.tail_in_loop, xo,
                    [&](Stage st) { st.split(x[0], xo, xi, w, TailStrategy::ShiftInwards).vectorize(xi); });
        return;
    }
    case LoopShape::Scalar:
        // Short or strided output rows: a scalar copy.
        return;
    }
}

// Every row of the table, in order, at each width of its group. Rows shorter than a vector (u8
// NHWC with C = 16 is half an AVX2 vector) get half and quarter vectors rather than falling to
// scalar code: measured 0.03-0.06x memcpy at L3 for u8 NHWC CRD before. A row whose condition at
// a width is one an earlier row already took (the dense short row at a run factor's width) is
// skipped: Halide would hand back that earlier specialisation.
void Ladder::apply(Stage s) const {
    std::vector<std::pair<const Row *, int>> taken;
    auto schedule_at = [&](const Row &r, int w) {
        for (const auto &[earlier, width] : taken) {
            if (width == w && ladder::same_terms(*earlier, r)) return;
        }
        taken.emplace_back(&r, w);
        schedule_row(s.specialize(condition(r, w)), r, w);
    };
    for (const ladder::Group &g : ladder::kLadder) {
        if (g.whole_pixel_loads && !shape.whole_pixel_loads) continue;
        switch (g.widths) {
        case ladder::Widths::None:
            for (const Row &r : g) schedule_row(s, r, 0);  // no condition: the rest of the views
            break;
        case ladder::Widths::WidestFitting:
            // One vector, or the widest block width whose gather fits; then the narrowest block
            // width for rows shorter than that. S2D NHWC CRD u8 C3 b2 at 4 KiB (18 pixels a row
            // against the 32-lane widest) otherwise ran the scalar row.
            for (const Row &r : g) {
                const std::vector<int> &bw = shape.block_widths;
                schedule_at(r, *std::find_if(bw.begin(), bw.end(),
                                             [&](int v) { return v <= vec && gather_fits(v, r.gather_stride); }));
                schedule_at(r, bw.back());
            }
            break;
        default:
            for (int w : widths(g.widths)) {
                for (const Row &r : g) {
                    if (r.gather_stride > 0 && !gather_fits(w, r.gather_stride)) continue;
                    schedule_at(r, w);
                }
            }
        }
    }
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
    ladder.apply(output);
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
    Expr fits = h.out.dim(0).extent() >= t0 && h.out.dim(1).extent() >= t1;
    output.specialize(fits)
        .tile(x[0], x[1], x0o, x1o, x0i, x1i, t0, t1, TailStrategy::ShiftInwards)
        .vectorize(x0i)
        .unroll(x1i);
    output.tile(x[0], x[1], x0o, x1o, x0i, x1i, t0, t1, TailStrategy::GuardWithIf);
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
