// The schedule machinery shared by the CPU targets (schedules/cpu_ladder.cpp). Each target file
// (x86.cpp, arm.cpp) describes its vectors in a LadderShape, with the measurements behind it.
#pragma once

#include "contract/cpu_ladder_table.h"
#include "schedules/permute_copy_schedule.h"

#include <functional>
#include <initializer_list>
#include <vector>

namespace spacedepth {

struct LadderShape {
    int vec;                         // elements per native vector
    std::vector<int> run_factors;    // vector widths for contiguous runs, widest first
    std::vector<int> block_widths;   // widths of the patterns with small unrolled inner dims
    std::vector<int> row_widths;     // widths of deinterleaves and gathers into dense rows
    bool whole_pixel_loads = false;  // unroll every block row of a pixel around one strided load
    int max_gather_bytes = 0;        // widest input span one strided vector may shuffle (0: any)
    int max_loose_fit_bytes = 0;     // wider vectors need a row overlap within a quarter (0: none)
    bool tail_in_loop = false;       // short rows keep the ShiftInwards tail in the vector loop
    int tile_rows = 0;               // transpose tile: output elements (t0)
    int tile_cols = 0;               // transpose tile: input elements of each row (t1)
};

// The targets' shapes (x86.cpp, arm.cpp), with h.tuning's values where they are set.
LadderShape x86_shape(const PermuteCopyHandles &h, const Halide::Target &target);
LadderShape arm_shape(const PermuteCopyHandles &h, const Halide::Target &target);

// A tuned value, or the target's default where the tuning database leaves it unset (0).
inline int tuned(int value, int fallback) { return value > 0 ? value : fallback; }
// Vector widths from `widest` down to `narrowest` elements, halving each time (`widest` always).
std::vector<int> halving_widths(int widest, int narrowest);
// Run-copy widths: `vectors` vectors per iteration, then one vector for shorter runs.
std::vector<int> run_widths(int vectors, int vec);
// The transpose tile: `rows` output elements by at least one cache line of each input row
// (`line_bytes`), either tuned (tile_rows, tile_row_bytes).
void set_transpose_tile(LadderShape &s, const PermuteCopyHandles &h, int rows, int line_bytes);

// The ladder's rows (contract/cpu_ladder_table.h) as specialisations of one stage.
class Ladder {
public:
    Ladder(const PermuteCopyHandles &h, const LadderShape &shape);
    void apply(Halide::Stage s) const;

private:
    Halide::Expr in_stride(int d) const { return h.in.dim(d).stride(); }
    Halide::Expr out_stride(int d) const { return h.out.dim(d).stride(); }
    Halide::Expr extent(int d) const { return h.out.dim(d).extent(); }
    Halide::Expr takes_width(const Halide::Expr &e, int w) const;
    Halide::Expr condition(const ladder::Row &row, int w) const;
    bool gather_fits(int w, int input_stride) const;
    std::vector<int> widths(ladder::Widths which) const;
    void schedule_row(Halide::Stage b, const ladder::Row &row, int w) const;
    void vector_around_unrolled(Halide::Stage b, int v, std::initializer_list<int> inside,
                                std::initializer_list<int> around, int w) const;
    static constexpr int kLongRowVectors = 16;
    void vector_rows(Halide::Stage b, const Halide::Expr &row_extent, int w, bool tail_in_short_rows, Halide::Var xo,
                     const std::function<void(Halide::Stage)> &split) const;

    const PermuteCopyHandles &h;
    LadderShape shape;
    int vec;
};

// The general family: the ladder, serial (the executor runs a parallel call's boxes as tasks).
void schedule_ladder(const PermuteCopyHandles &h, const LadderShape &shape);
// The transpose family: shape.tile_rows x shape.tile_cols register tiles.
void schedule_transpose_tiles(const PermuteCopyHandles &h, const LadderShape &shape);
// The small family: one vectorised branch of `vec` elements, serial.
void schedule_small(const PermuteCopyHandles &h, int vec);

}  // namespace spacedepth
