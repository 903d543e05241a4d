// GPU schedules for permute_copy: CUDA, and the same code for OpenCL (which runs them on the CPU
// through PoCL in the tests). The runtime arranges a GPU view's dims by role (runtime/plan_gpu.cpp;
// the roles of the slots are in contract/kernel_contract.h), so the schedule never has to find
// them:
//
//   general:   x0, x1 = block digits with a stride of 1 on one side, done inside one thread
//              (b x b unrolled for blocks of 2-4, as TF's NCHW fast paths do); x2, x3 = the
//              thread index, x2 dense on the output and as dense as possible on the input, so a
//              warp's loads and stores both cover contiguous memory; x4, x5 = the rest.
//   transpose: x0 = the output's dense dim, x1 = the input's dense dim, both long: a 32 x 32
//              tile goes through shared memory, loaded along x1 and stored along x0, so both
//              sides are coalesced.
//
// The grid is 3-D: x and y are tiles of the two thread dims, z the remaining slots fused. CUDA
// allows 65535 blocks on y and z, and the runtime chunks any view that would exceed that
// (kMaxGpuGridBlocks). Addresses are 64-bit through the kernels' large_buffers feature.
//
// Not yet timed on a GPU: bench/gpu_check.sh is the prepared run. Checked without one: the PTX
// assembles for sm_80 and sm_90 (tests/check_ptx.sh), and the OpenCL build of these schedules
// passes the whole correctness matrix on PoCL (ctest opencl_pocl).
#include "schedules/permute_copy_schedule.h"

namespace spacedepth {

using namespace Halide;

namespace {

// The default block: 256 threads as 32 x 8; each thread does 4 rows of a 32 x 32 tile, so the
// per-thread index arithmetic is spread over 4 elements (16 with an unrolled 2 x 2 block). The
// tuning parameters gpu_tile_x and gpu_thread_rows change the block's shape (bench/gpu_bench.cpp
// times the variants on a GPU); the tile along y stays kGpuTileEdge, as the runtime's grid
// chunking assumes.
constexpr int kTile = kGpuTileEdge;

struct GpuShape {
    int tile_x;       // threads (and elements) along x
    int thread_rows;  // threads along y; each does kTile / thread_rows rows
};

GpuShape gpu_shape(const ScheduleTuning &t) {
    GpuShape g{t.gpu_tile_x > 0 ? t.gpu_tile_x : kTile, t.gpu_thread_rows > 0 ? t.gpu_thread_rows : kGpuThreadRows};
    _halide_user_assert(g.thread_rows <= kTile && g.tile_x * g.thread_rows <= 1024)
        << "tuning: a GPU block of " << g.tile_x << " x " << g.thread_rows << " threads (at most 1024, rows at most "
        << kTile << ")";
    return g;
}

// The general family's thread layout, over x2 (dense output, the warp's direction) and x3.
// Grid: x = x2's tiles, y = x3's tiles, z = x4 and x5 fused (the runtime keeps x3 within
// kMaxGpuGridBlocks tiles and x4 * x5 within kMaxGpuGridBlocks blocks).
void thread_over_x2_x3(Stage s, const std::vector<Var> &x, const Expr &e2, GpuShape g) {
    Var x2o("x2o"), x3o("x3o"), x2i("x2i"), x3i("x3i"), x3t("x3t"), x3r("x3r"), r("r");
    Var t("t"), to("to"), ti("ti");
    s.fuse(x[4], x[5], r);
    // A short x2 (a few channels) would leave most of a 32-wide warp idle: fuse x2 and x3 into
    // one flat thread index instead (one division a thread to split it again).
    Stage flat = s.specialize(e2 < kTile);
    flat.fuse(x[2], x[3], t)
        .split(t, to, ti, g.tile_x * g.thread_rows, TailStrategy::GuardWithIf)
        .gpu_blocks(to, r)
        .gpu_threads(ti);
    s.tile(x[2], x[3], x2o, x3o, x2i, x3i, g.tile_x, kTile, TailStrategy::GuardWithIf)
        .split(x3i, x3r, x3t, g.thread_rows)
        .reorder(x[0], x[1], x3r, x2i, x3t, x2o, x3o, r)
        .gpu_blocks(x2o, x3o, r)
        .gpu_threads(x2i, x3t)
        .unroll(x3r);
}

}  // namespace

void schedule_permute_copy_gpu(const PermuteCopyHandles &h, const Target &target) {
    (void)target;
    const GpuShape g = gpu_shape(h.tuning);
    const std::vector<Var> &x = h.x;
    Func output = h.output;
    Expr e0 = h.out.dim(0).extent(), e1 = h.out.dim(1).extent(), e2 = h.out.dim(2).extent();

    if (h.family == KernelFamily::Transpose) {
        // 32 x 8 threads; each loads four rows of the tile along x1 and stores four along x0.
        // The tile's rows are padded to 33 elements, so the column reads of the store phase hit
        // 32 different shared-memory banks. Grid: x = x0's tiles, y = x1's tiles, z = the rest
        // fused (the runtime keeps y and z within kMaxGpuGridBlocks).
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), yii("yii"), yio("yio");
        Var r23("r23"), r234("r234"), rest("rest");
        output.tile(x[0], x[1], xo, yo, xi, yi, g.tile_x, kTile, TailStrategy::GuardWithIf)
            .split(yi, yio, yii, g.thread_rows)
            .reorder(yio, xi, yii, xo, yo)
            .fuse(x[2], x[3], r23)
            .fuse(r23, x[4], r234)
            .fuse(r234, x[5], rest)
            .gpu_blocks(xo, yo, rest)
            .gpu_threads(xi, yii)
            .unroll(yio);
        if (h.tuning.gpu_direct_transpose) {
            // The variant without the tile: stores coalesced along x0, loads strided.
            return;
        }
        Func stage = h.input_stage;  // a handle to the same wrapper
        const std::vector<Var> a = stage.args();
        Var a0o("a0o"), a0i("a0i");
        stage.compute_at(output, xo)
            .store_in(MemoryType::GPUShared)
            .align_storage(a[0], kTile + 1)
            .split(a[0], a0o, a0i, g.thread_rows, TailStrategy::GuardWithIf)
            .reorder(a0o, a[1], a0i)
            .gpu_threads(a[1], a0i)
            .unroll(a0o);
        return;
    }

    // Blocks of 2-4 in each digit: a fixed b x b group per thread, unrolled (the specialisation
    // turns the extents into constants). Most threads then move 4-16 elements from one index
    // computation.
    for (int b0 = 2; b0 <= 4; b0++) {
        for (int b1 = 1; b1 <= 4; b1++) {
            Stage block = output.specialize(e0 == b0 && e1 == b1);
            if (h.tuning.gpu_vector_block) {
                block.vectorize(x[0]).unroll(x[1]);
            } else {
                block.unroll(x[0]).unroll(x[1]);
            }
            thread_over_x2_x3(block, x, e2, g);
        }
    }
    // Anything else (runs, blocks over 4): x0 and x1 as loops in the thread. Runs are widened to
    // 8-byte elements where their length allows (runtime/plan_cpu.cpp); 16-byte vector accesses
    // would need an alignment Halide cannot prove for a strided view, so PTX keeps them scalar.
    thread_over_x2_x3(output, x, e2, g);
}

}  // namespace spacedepth
