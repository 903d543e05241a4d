// x86 schedule for permute_copy.
//
// The runtime hands the kernel a normalised view (runtime/view.cpp): dims sorted by output
// stride, size-1 dims dropped, contiguous dims merged, the element widened where a run allows.
// So the output's dim 0 is dense whenever the output is, and the patterns that matter are
// recognisable from a few strides. Each gets its own specialisation; the first that holds wins.
//
//   run copy      in.s0 == 1, out.s0 == 1          NHWC DCR (runs of bw*C elements), identity
//   interleave    out.e0 == k, out.s1 == k, in.s1 == 1   NCHW DepthToSpace (k = bw)
//   deinterleave  in.s0 == k, out.s0 == 1          NCHW SpaceToDepth (k = bw)
//   gather        out.s0 == 1                       everything else (NHWC CRD, VECT_C CRD, views)
//
// Measured (shared/PERF-NOTES.md, Halide 14 prototype on this 2-core Zen 3): view-based kernels
// vectorised over the dense dim reach 1.13x single-thread memcpy beyond cache (median), while
// the natural 4-D formulation with x / bs reached 0.03-0.13x for NHWC. The interleave only
// vectorises when the block extent is a compile-time constant, hence one branch per k.
#include "schedules/permute_copy_schedule.h"

namespace spacedepth {

using namespace Halide;

namespace {

struct Ladder {
    const PermuteCopyHandles &h;
    int vec;  // elements per native vector

    Expr in_stride(int d) const { return h.in.dim(d).stride(); }
    Expr out_stride(int d) const { return h.out.dim(d).stride(); }
    Expr extent(int d) const { return h.out.dim(d).extent(); }

    // The two outermost dims (the runtime puts the view's outermost dims there) run in parallel
    // as one fused loop, split into tasks of about kTaskBytes. Measured: one task per outer
    // iteration (128-byte copies) ran at 0.09x memcpy, because Halide's pool takes a lock per
    // task; fusing all outer dims cost a div/mod chain per inner row and made 2 threads slower
    // than 1 at 2 MiB (0.24x vs 0.88x, NHWC DCR f32 C16).
    static constexpr int kTaskBytes = 64 * 1024;
    void outer_loops(Stage s, bool par) const {
        if (!par) {
            return;
        }
        Expr inner = extent(0) * extent(1) * extent(2) * extent(3);
        const int task_elements = kTaskBytes / h.output.type().bytes();
        Var fused("outer"), task("task"), within("within");
        s.fuse(h.x[kRank - 2], h.x[kRank - 1], fused)
            .split(fused, task, within, max(1, task_elements / max(inner, 1)), TailStrategy::GuardWithIf)
            .parallel(task);
    }

    void apply(Stage s, bool par) const {
        const std::vector<Var> &x = h.x;

        // Contiguous runs on both sides: wide unaligned vector copies. ShiftInwards overlaps the
        // last vector with the one before, which is harmless for a copy.
        for (int factor : {4 * vec, vec}) {
            Stage b = s.specialize(out_stride(0) == 1 && in_stride(0) == 1 && extent(0) >= factor);
            b.vectorize(x[0], factor, TailStrategy::ShiftInwards);
            outer_loops(b, par);
        }

        // Interleave by k: k dense input rows become one output row. With dim 0 (the block
        // column) unrolled inside a vector of dim 1, Halide emits k dense loads and one
        // interleaving store.
        for (int k : {2, 3, 4, 8}) {
            Var xo("x1o"), xi("x1i");
            Stage b = s.specialize(out_stride(0) == 1 && extent(0) == k && out_stride(1) == k &&
                                   in_stride(1) == 1 && extent(1) >= vec);
            b.split(x[1], xo, xi, vec, TailStrategy::ShiftInwards)
                .reorder(x[0], xi, xo)
                .unroll(x[0])
                .vectorize(xi);
            outer_loops(b, par);
        }

        // Deinterleave by k: a constant-stride load becomes dense loads plus shuffles.
        for (int k : {2, 3, 4, 8}) {
            Stage b = s.specialize(out_stride(0) == 1 && in_stride(0) == k && extent(0) >= vec);
            b.vectorize(x[0], vec, TailStrategy::ShiftInwards);
            outer_loops(b, par);
        }

        // Anything else with a dense output row: vector stores, gathered loads.
        Stage b = s.specialize(out_stride(0) == 1 && extent(0) >= vec);
        b.vectorize(x[0], vec, TailStrategy::ShiftInwards);
        outer_loops(b, par);

        // Otherwise: scalar copy (short or strided output rows).
        outer_loops(s, par);
    }
};

}  // namespace

void schedule_permute_copy_x86(const PermuteCopyHandles &h, const Target &target) {
    const int vec = target.natural_vector_size(h.output.type());
    Ladder ladder{h, vec};
    Func output = h.output;  // a handle to the same Func
    ladder.apply(output.specialize(h.parallel), true);
    ladder.apply(output, false);
}

}  // namespace spacedepth
