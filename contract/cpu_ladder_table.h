// The CPU ladder as a table: the stride patterns the general family's kernels specialise on.
// Each row is a pattern of the normalised view's pattern slots (0 .. kCpuPatternSlots-1, see
// kernel_contract.h) and the loop nest that copies it. schedules/cpu_ladder.cpp turns every row
// into one Halide specialisation, in table order (the first row that holds wins); the planner
// derives its pattern limits from the rows (runtime/plan_cpu.cpp); tests/test_kernels.cpp builds
// views from every row's terms and runs them on every ISA path of every kernel.
// Adding a pattern, or a store mode, is adding a row (and, for a new loop nest, its LoopShape).
// Plain C++, no Halide.
//
// The constants are the strides and extents the normalised views of the ops have for a given
// channel count C, block bh x bw, R units per short run and k block rows or columns.
#pragma once

#include "contract/kernel_contract.h"

#include <cstdint>
#include <initializer_list>

namespace spacedepth::ladder {

// What a term tests: a stride or the extent of one pattern slot.
enum class Of : uint8_t { InStride, OutStride, Extent };
// How: equal, at least, below; or "takes a vector of w elements" (an extent of at least w; and a
// vector wider than the target's max_loose_fit_bytes also needs the row's last-vector overlap
// within a quarter of the row, schedules/cpu_ladder.cpp).
enum class Test : uint8_t { Eq, Ge, Lt, TakesWidth };
// A term's value in elements, or in vectors of the width w the row is scheduled at.
enum class Unit : uint8_t { Elements, Widths };

struct Term {
    Of of;
    int slot;
    Test test;
    int value;
    Unit unit;
};

// The loop nests (schedules/cpu_ladder.cpp). "Unrolled" slots have small constant extents;
// "vector rows" are a vectorised slot split at w whose tail may stay inside the loop
// (Row::tail_in_loop, on targets whose LadderShape says so).
enum class LoopShape : uint8_t {
    RunCopy,           // slot 0 vectorised at w, the last vector overlapping the one before
    PixelRows,         // vector rows of slot 0, slots 1 and 3 unrolled inside, slot 2 outermost
    Unroll0Vector1,    // vector rows of slot 1, slot 0 unrolled inside
    Unroll02Vector1,   // a vector of slot 1, slots 0 and 2 unrolled around it
    Unroll01Vector2,   // a vector of slot 2, slots 0 and 1 unrolled inside
    Unroll01Whole2,    // slot 2 is exactly one vector, slots 0 and 1 unrolled inside
    Unroll012Vector3,  // a vector of slot 3, slots 0-2 unrolled inside
    RowPairs,          // a vector of slot 0, slots 1 and 2 (a row pair) unrolled around it
    Unroll1Vector0,    // vector rows of slot 0, slot 1 unrolled inside
    VectorRows,        // vector rows of slot 0
    Scalar,            // the last row: anything else, element by element
};

// The vector widths a group of rows is tried at, from the target's LadderShape
// (schedules/cpu_ladder.h): for each width, every row of the group in order.
enum class Widths : uint8_t {
    RunFactors,     // LadderShape::run_factors
    PixelWidths,    // two vectors down to 16 bytes, halving
    Vector,         // one native vector
    BlockWidths,    // LadderShape::block_widths
    WidestFitting,  // per row: the widest block width of at most one vector within max_gather_bytes, then the narrowest
    RowWidths,      // LadderShape::row_widths
    None,           // the scalar row
};

constexpr int kMaxTerms = 9;
constexpr int kMaxParams = 3;

struct Row {
    const char *pattern;  // the view it matches, with params: "interleave" (2) is NCHW D2S, bw 2
    int params[kMaxParams];
    int param_count;
    LoopShape loop;
    Term terms[kMaxTerms];
    int term_count;
    bool tail_in_loop;  // vector rows: short rows keep the tail inside the vector loop
    int gather_stride;  // > 0: widths whose strided span passes max_gather_bytes skip this row
};

struct Group {
    Widths widths;
    bool whole_pixel_loads;  // only on targets with LadderShape::whole_pixel_loads
    const Row *rows;
    int count;
    constexpr const Row *begin() const { return rows; }
    constexpr const Row *end() const { return rows + count; }
};

// Whether a value v meets test t against `bound` (TakesWidth: its loose form, v >= bound; the
// kernels' quarter-overlap rule for wide vectors is the target's, schedules/cpu_ladder.cpp).
constexpr bool meets(Test t, int64_t v, int64_t bound) {
    return t == Test::Eq ? v == bound : t == Test::Lt ? v < bound : v >= bound;  // Ge, TakesWidth
}
constexpr bool same_term(const Term &a, const Term &b) {
    return a.of == b.of && a.slot == b.slot && a.test == b.test && a.value == b.value && a.unit == b.unit;
}
// Rows with the same terms, width terms included: at one width they are one specialisation.
constexpr bool same_terms(const Row &a, const Row &b) {
    if (a.term_count != b.term_count) return false;
    for (int i = 0; i < a.term_count; i++) {
        if (!same_term(a.terms[i], b.terms[i])) return false;
    }
    return true;
}

// ---- Building rows.
namespace terms {
constexpr Term in_stride(int slot, int v) { return {Of::InStride, slot, Test::Eq, v, Unit::Elements}; }
constexpr Term out_stride(int slot, int v) { return {Of::OutStride, slot, Test::Eq, v, Unit::Elements}; }
constexpr Term extent(int slot, int v) { return {Of::Extent, slot, Test::Eq, v, Unit::Elements}; }
constexpr Term extent_is_width(int slot) { return {Of::Extent, slot, Test::Eq, 1, Unit::Widths}; }
constexpr Term extent_at_least_width(int slot) { return {Of::Extent, slot, Test::Ge, 1, Unit::Widths}; }
constexpr Term extent_below_widths(int slot, int n) { return {Of::Extent, slot, Test::Lt, n, Unit::Widths}; }
constexpr Term takes_width(int slot) { return {Of::Extent, slot, Test::TakesWidth, 1, Unit::Widths}; }
}  // namespace terms

struct RowOptions {
    bool tail_in_loop = false;
    int gather_stride = 0;
};

constexpr Row row(const char *pattern, std::initializer_list<int> params, LoopShape loop,
                  std::initializer_list<Term> ts, RowOptions options = {}) {
    Row r{pattern, {}, 0, loop, {}, 0, options.tail_in_loop, options.gather_stride};
    for (int p : params) r.params[r.param_count++] = p;
    for (const Term &t : ts) r.terms[r.term_count++] = t;
    return r;
}

template <int N>
constexpr Group group(Widths widths, bool whole_pixel_loads, const Row (&rows)[N]) {
    return {widths, whole_pixel_loads, rows, N};
}

// ---- The rows, by the normalised view each matches.
namespace rows {
using namespace terms;

// Contiguous runs on both sides (NHWC DCR: runs of bw*C elements; an identity copy).
constexpr Row run_copy() {
    return row("run copy", {}, LoopShape::RunCopy, {out_stride(0, 1), in_stride(0, 1), takes_width(0)});
}
// NHWC DepthToSpace in CRD order, block 2: slot 0 the channels (input stride 4), slots 1 and 3
// the block column and row. `one_vector`: C exactly one vector (the channel loop disappears).
constexpr Row pixel_rows_d2s_crd_b2(bool one_vector) {
    return row(one_vector ? "pixel rows, one vector (D2S NHWC CRD b2)" : "pixel rows (D2S NHWC CRD b2)", {},
               LoopShape::PixelRows,
               {out_stride(0, 1), in_stride(0, 4), extent(1, 2), in_stride(1, 1), extent(3, 2), in_stride(3, 2),
                one_vector ? extent_is_width(0) : extent_at_least_width(0)},
               {!one_vector, 0});
}
// Whole-pixel short runs of NHWC DepthToSpace in DCR order: R units per block row (slot 0),
// the pixels (slot 1, input stride R*k), k block rows (slot 2, input stride R).
constexpr Row pixel_short_runs_d2s(int r, int k) {
    return row("pixel short runs (D2S NHWC DCR)", {r, k}, LoopShape::Unroll02Vector1,
               {out_stride(0, 1), extent(0, r), in_stride(0, 1), out_stride(1, r), in_stride(1, r * k), extent(2, k),
                in_stride(2, r), extent_at_least_width(1)});
}
// The mirror image, NHWC SpaceToDepth in DCR order: the run, k block rows (output stride R),
// the pixels (input stride R, output stride R*k).
constexpr Row pixel_short_runs_s2d(int r, int k) {
    return row("pixel short runs (S2D NHWC DCR)", {r, k}, LoopShape::Unroll01Vector2,
               {out_stride(0, 1), extent(0, r), in_stride(0, 1), out_stride(1, r), extent(1, k), out_stride(2, r * k),
                in_stride(2, r), extent_at_least_width(2)});
}
// The per-pixel [C, k*k] transpose of NHWC SpaceToDepth in CRD order with C exactly one vector.
constexpr Row pixel_transpose_s2d_crd_one_vector(int k) {
    return row("pixel transpose, one vector (S2D NHWC CRD)", {k}, LoopShape::Unroll01Whole2,
               {out_stride(0, 1), extent(0, k), out_stride(1, k), extent(1, k), out_stride(2, k * k), in_stride(2, 1),
                extent_is_width(2)});
}
// An interleave by 2 whose slot 2 is the block row pair, rows below two vectors (NCHW
// DepthToSpace, block 2, small planes).
constexpr Row interleave_row_pairs() {
    return row("interleave row pairs (D2S NCHW b2)", {}, LoopShape::Unroll02Vector1,
               {out_stride(0, 1), extent(0, 2), out_stride(1, 2), in_stride(1, 1), takes_width(1),
                extent_below_widths(1, 2), extent(2, 2)},
               {false, 1});
}
// Slot 0 of extent a unrolled, slot 1 of input stride c vectorised:
//   interleave by k (a = k, c = 1): NCHW DepthToSpace, k = bw;
//   short runs of R units taken from every k-th run (a = R, c = R*k): NHWC DepthToSpace with
//   bw*C below one vector (u8 C3 b2 moves as 3 x u16).
constexpr Row interleave(int k) {
    return row("interleave (D2S NCHW)", {k}, LoopShape::Unroll0Vector1,
               {out_stride(0, 1), extent(0, k), out_stride(1, k), in_stride(1, 1), takes_width(1)}, {true, 1});
}
constexpr Row short_runs_d2s(int r, int k) {
    return row("short runs (D2S NHWC DCR)", {r, k}, LoopShape::Unroll0Vector1,
               {out_stride(0, 1), extent(0, r), in_stride(0, 1), out_stride(1, r), in_stride(1, r * k), takes_width(1)},
               {false, r * k});
}
// Slots 0 and 1 of extents a, b unrolled, slot 2 of input stride c vectorised.
constexpr Row unroll2(const char *pattern, std::initializer_list<int> params, int a, int b, int c) {
    return row(pattern, params, LoopShape::Unroll01Vector2,
               {out_stride(0, 1), extent(0, a), out_stride(1, a), extent(1, b), out_stride(2, a * b), in_stride(2, c),
                takes_width(2)},
               {false, c});
}
// NHWC SpaceToDepth with small bw*C: runs of R units gathered k at a time.
constexpr Row short_runs_s2d(int r, int k) { return unroll2("short runs (S2D NHWC DCR)", {r, k}, r, k, r); }
// The per-pixel [C, k*k] transpose of NHWC SpaceToDepth in CRD order.
constexpr Row pixel_transpose_s2d_crd(int k) { return unroll2("pixel transpose (S2D NHWC CRD)", {k}, k, k, 1); }
// The [C, bh*bw] transpose of NHWC DepthToSpace in CRD order, for C below a vector.
constexpr Row pixel_transpose_d2s_crd(int c, int bh, int bw) {
    return unroll2("pixel transpose (D2S NHWC CRD)", {c, bh, bw}, c, bw, c * bh * bw);
}
// NCHW_VECT_C DepthToSpace in CRD order: 4 lanes x bw block columns (also the R = 4, k = bw
// short runs of SpaceToDepth: the same view).
constexpr Row vect_c_d2s_crd(int bw) { return unroll2("NCHW_VECT_C CRD (D2S)", {bw}, 4, bw, 4); }
// NCHW_VECT_C SpaceToDepth in CRD order, block 2: 2 x 2 block, lanes 8 apart in the input.
constexpr Row vect_c_s2d_crd_b2() { return unroll2("NCHW_VECT_C CRD b2 (S2D)", {}, 2, 2, 8); }
// The per-pixel [C, 2x2] transpose of NHWC SpaceToDepth in CRD order for C below the narrowest
// block width: slots 0-2 unrolled, slot 3 (input stride 2*C) vectorised.
constexpr Row pixel_transpose_s2d_crd_b2(int c) {
    return row("small-C pixel transpose (S2D NHWC CRD b2)", {c}, LoopShape::Unroll012Vector3,
               {out_stride(0, 1), extent(0, 2), out_stride(1, 2), extent(1, 2), out_stride(2, 4), extent(2, c),
                out_stride(3, 4 * c), in_stride(3, 2 * c), extent_at_least_width(3)},
               {false, 2 * c});
}
// Runs dense on both sides but shorter than the run copies' vectors (u8 NHWC DCR C6 b3): the run
// copy's terms, at the row widths below the run factors (a width both lists have is one row).
constexpr Row dense_short_row() {
    return row("dense short row", {}, LoopShape::RunCopy, {out_stride(0, 1), in_stride(0, 1), takes_width(0)});
}
// Row pairs of the deinterleave by 2 (NCHW SpaceToDepth, block 2), rows below two vectors.
constexpr Row deinterleave_row_pairs() {
    return row("deinterleave row pairs (S2D NCHW b2)", {}, LoopShape::RowPairs,
               {out_stride(0, 1), in_stride(0, 2), takes_width(0), extent_below_widths(0, 2), extent(1, 2),
                in_stride(1, 1), extent(2, 2)});
}
// A deinterleave by k whose next slot (extent m, input stride 1) is unrolled inside the vector:
// NCHW SpaceToDepth (k = m = bw) and the [C, bh*bw] transpose of NHWC DepthToSpace in CRD order
// (k = bh*bw, m = bw).
constexpr Row deinterleave_unrolled(const char *pattern, std::initializer_list<int> params, int k, int m) {
    return row(pattern, params, LoopShape::Unroll1Vector0,
               {out_stride(0, 1), in_stride(0, k), takes_width(0), extent(1, m), in_stride(1, 1)}, {true, 0});
}
constexpr Row deinterleave_rows(int bw) { return deinterleave_unrolled("deinterleave rows (S2D NCHW)", {bw}, bw, bw); }
constexpr Row transpose_d2s_crd(int bh, int bw) {
    return deinterleave_unrolled("transpose (D2S NHWC CRD)", {bh, bw}, bh * bw, bw);
}
// Deinterleave by k: a constant-stride load becomes dense loads plus shuffles.
constexpr Row deinterleave(int k) {
    return row("deinterleave", {k}, LoopShape::VectorRows, {out_stride(0, 1), in_stride(0, k), takes_width(0)},
               {true, 0});
}
// Anything else with a dense output row: vector stores, gathered loads.
constexpr Row gather() {
    return row("gather", {}, LoopShape::VectorRows, {out_stride(0, 1), takes_width(0)}, {true, 0});
}
// Short or strided output rows.
constexpr Row scalar() { return row("scalar", {}, LoopShape::Scalar, {}); }

}  // namespace rows

// ---- The ladder, in the order the kernels try it. Why each row exists, with what was measured,
// is in schedules/cpu_ladder.cpp beside the loop shape.
namespace table {
using namespace rows;
inline constexpr Row kRunCopies[] = {run_copy()};
inline constexpr Row kPixelRows[] = {pixel_rows_d2s_crd_b2(true), pixel_rows_d2s_crd_b2(false)};
inline constexpr Row kPixelPatterns[] = {pixel_short_runs_d2s(2, 2),
                                         pixel_short_runs_d2s(3, 2),
                                         pixel_short_runs_d2s(4, 2),
                                         pixel_short_runs_d2s(2, 3),
                                         pixel_short_runs_d2s(3, 3),
                                         pixel_short_runs_s2d(2, 2),
                                         pixel_short_runs_s2d(3, 2),
                                         pixel_short_runs_s2d(4, 2),
                                         pixel_short_runs_s2d(2, 3),
                                         pixel_short_runs_s2d(3, 3),
                                         pixel_transpose_s2d_crd_one_vector(2),
                                         pixel_transpose_s2d_crd_one_vector(3),
                                         pixel_transpose_s2d_crd_one_vector(4)};
inline constexpr Row kInterleaveRowPairs[] = {interleave_row_pairs()};
inline constexpr Row kUnroll1[] = {
    interleave(2),        interleave(3),        interleave(4),        interleave(8),        short_runs_d2s(2, 2),
    short_runs_d2s(2, 3), short_runs_d2s(2, 4), short_runs_d2s(3, 2), short_runs_d2s(3, 3), short_runs_d2s(3, 4),
    short_runs_d2s(4, 2), short_runs_d2s(4, 3), short_runs_d2s(4, 4)};
inline constexpr Row kUnroll2[] = {short_runs_s2d(2, 2),
                                   short_runs_s2d(2, 3),
                                   short_runs_s2d(2, 4),
                                   short_runs_s2d(3, 2),
                                   short_runs_s2d(3, 3),
                                   short_runs_s2d(3, 4),
                                   short_runs_s2d(4, 3),
                                   pixel_transpose_s2d_crd(2),
                                   pixel_transpose_s2d_crd(3),
                                   pixel_transpose_s2d_crd(4),
                                   pixel_transpose_d2s_crd(3, 2, 2),
                                   vect_c_d2s_crd(2),
                                   vect_c_d2s_crd(4),
                                   vect_c_s2d_crd_b2()};
inline constexpr Row kUnroll3[] = {pixel_transpose_s2d_crd_b2(3), pixel_transpose_s2d_crd_b2(6),
                                   pixel_transpose_s2d_crd_b2(4), pixel_transpose_s2d_crd_b2(2)};
inline constexpr Row kRows[] = {dense_short_row(),
                                deinterleave_row_pairs(),
                                deinterleave_rows(2),
                                deinterleave_rows(3),
                                deinterleave_rows(4),
                                transpose_d2s_crd(2, 2),
                                transpose_d2s_crd(3, 3),
                                transpose_d2s_crd(4, 4),
                                deinterleave(2),
                                deinterleave(3),
                                deinterleave(4),
                                deinterleave(8),
                                gather()};
inline constexpr Row kScalar[] = {scalar()};
}  // namespace table

inline constexpr Group kLadder[] = {
    group(Widths::RunFactors, false, table::kRunCopies),  group(Widths::PixelWidths, true, table::kPixelRows),
    group(Widths::Vector, true, table::kPixelPatterns),   group(Widths::BlockWidths, false, table::kInterleaveRowPairs),
    group(Widths::BlockWidths, false, table::kUnroll1),   group(Widths::BlockWidths, false, table::kUnroll2),
    group(Widths::WidestFitting, false, table::kUnroll3), group(Widths::RowWidths, false, table::kRows),
    group(Widths::None, false, table::kScalar),
};

// ---- What the planner asks of the table.

// Whether a loop shape unrolls slot 0 (small constant extents) or vectorises it.
constexpr bool unrolls_slot0(LoopShape s) {
    return s == LoopShape::Unroll0Vector1 || s == LoopShape::Unroll02Vector1 || s == LoopShape::Unroll01Vector2 ||
           s == LoopShape::Unroll01Whole2 || s == LoopShape::Unroll012Vector3;
}
constexpr bool vectorises_slot0(LoopShape s) {
    return s == LoopShape::RunCopy || s == LoopShape::PixelRows || s == LoopShape::RowPairs ||
           s == LoopShape::Unroll1Vector0 || s == LoopShape::VectorRows;
}

// The largest constant of a slot-0 term `of` among the rows whose loop shape `shape_test` takes.
constexpr int largest_slot0_constant(Of of, bool (*shape_test)(LoopShape)) {
    int largest = 0;
    for (const Group &g : kLadder) {
        for (const Row &r : g) {
            if (!shape_test(r.loop)) continue;
            for (int i = 0; i < r.term_count; i++) {
                const Term &t = r.terms[i];
                if (t.of == of && t.slot == 0 && t.test == Test::Eq && t.unit == Unit::Elements && t.value > largest) {
                    largest = t.value;
                }
            }
        }
    }
    return largest;
}
// The longest slot 0 a row unrolls: a block digit the ladder unrolls; longer ones are rows.
constexpr int kMaxUnrolledExtent = largest_slot0_constant(Of::Extent, unrolls_slot0);
// The largest constant input stride of a vectorised slot 0: the deinterleaves the ladder turns
// into dense loads and shuffles; larger strides gather (or suit the transpose family).
constexpr int kMaxDeinterleaveStride = largest_slot0_constant(Of::InStride, vectorises_slot0);

// The narrowest vectors the x86 schedules give the rows (schedules/x86.cpp), in bytes, for
// elements of `bytes` bytes: the unrolled-block patterns' (interleaves, short runs, pixel
// transposes) and the row patterns' (deinterleaves, gathers). A view whose vectorised slot is
// shorter falls through to the scalar row, which the planner gives the shuffle family instead.
constexpr int x86_narrowest_block_bytes(int bytes) { return bytes == 1 ? 8 : 16; }
constexpr int x86_narrowest_row_bytes(int bytes) { return 4 * bytes > 8 ? 4 * bytes : 8; }

// Whether a row's constant terms hold for a view's slots (kKernelRank each).
constexpr bool constant_terms_hold(const Row &r, const int64_t *in_stride, const int64_t *out_stride,
                                   const int64_t *extent) {
    for (int i = 0; i < r.term_count; i++) {
        const Term &t = r.terms[i];
        if (t.unit == Unit::Widths) continue;
        const int64_t v = t.of == Of::InStride    ? in_stride[t.slot]
                          : t.of == Of::OutStride ? out_stride[t.slot]
                                                  : extent[t.slot];
        if (!meets(t.test, v, t.value)) return false;
    }
    return true;
}

// Whether a row's terms in widths may hold for a view's extents on a target whose native vector
// holds `vec` elements. Run copies take whole vectors (LadderShape::run_factors ends with one
// vector) and the pixel patterns exactly one; the other groups' widths reach down to a few
// elements and depend on the target's LadderShape, so their terms are taken to hold.
constexpr bool width_terms_may_hold(Widths widths, const Row &r, const int64_t *extent, int vec) {
    if (widths != Widths::RunFactors && widths != Widths::Vector) return true;
    for (int i = 0; i < r.term_count; i++) {
        const Term &t = r.terms[i];
        if (t.unit != Unit::Widths) continue;
        if (!meets(t.test, extent[t.slot], int64_t{t.value} * vec)) return false;
    }
    return true;
}

// The view's pattern on a target with `vec`-element vectors: the first row whose constant terms
// hold and whose width terms may. Exact for the rows in constants alone; between width variants
// and rows that differ only in widths (the row pairs before the interleave by 2) the target's
// LadderShape decides, which only the kernel knows. The tests check their views with it.
constexpr const Row &pattern_of(const int64_t *in_stride, const int64_t *out_stride, const int64_t *extent, int vec) {
    for (const Group &g : kLadder) {
        for (const Row &r : g) {
            if (constant_terms_hold(r, in_stride, out_stride, extent) &&
                width_terms_may_hold(g.widths, r, extent, vec)) {
                return r;
            }
        }
    }
    return table::kScalar[0];
}

// Two rows with the same constant terms are width variants of one pattern.
constexpr bool same_pattern(const Row &a, const Row &b) {
    int i = 0, j = 0;
    while (true) {
        while (i < a.term_count && a.terms[i].unit == Unit::Widths) i++;
        while (j < b.term_count && b.terms[j].unit == Unit::Widths) j++;
        if (i == a.term_count || j == b.term_count) return i == a.term_count && j == b.term_count;
        if (!same_term(a.terms[i++], b.terms[j++])) return false;
    }
}

}  // namespace spacedepth::ladder
