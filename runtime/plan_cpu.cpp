// CPU planning: a View becomes the calls of one CPU kernel, in the named steps of
// make_kernel_plan(). The steps every device shares come first (view_in_bytes,
// walk_output_forwards, sort_by_output_stride, merge_contiguous, widen_element); GPU views are
// then arranged by plan_gpu.cpp. The CPU's own: choose_loop_order, fit_kernel_rank, the parallel
// switch, arrange_for_kernel (the slots of contract/kernel_contract.h), choose_family,
// choose_avx2_path, choose_streaming, chunk_long_extents. describe_plan() is here too.
#include "contract/cpu_ladder_table.h"
#include "runtime/block_shuffle.h"
#include "runtime/isa.h"
#include "runtime/kernel_registry.h"
#include "runtime/plan.h"
#include "runtime/switch_points.h"
#include "runtime/tile_transpose.h"
#include "runtime/vect_c_regroup.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace spacedepth::detail {

// Merges neighbours that are contiguous in both tensors (dims in loop order, innermost first).
DimList merge_contiguous(const DimList &dims) {
    DimList merged;
    for (const ViewDim &d : dims) {
        if (!merged.empty()) {
            ViewDim &m = merged.back();
            if (d.out_stride == m.out_stride * m.extent && d.in_stride == m.in_stride * m.extent) {
                m.extent *= d.extent;
                continue;
            }
        }
        merged.push_back(d);
    }
    return merged;
}

// The dims whose strides fit the kernel's int32 strides; the others become executor loops.
DimList dims_with_kernel_strides(const DimList &dims, KernelPlan *plan) {
    DimList kept;
    for (const ViewDim &d : dims) {
        const bool big_stride = magnitude(d.in_stride) > kMaxKernelStride || d.out_stride > kMaxKernelStride;
        if (big_stride) {
            plan->loop_dims.push_back({d.extent, d.in_stride, d.out_stride});
        } else {
            kept.push_back(d);
        }
    }
    return kept;
}

namespace {

// Places the real dims in the kernel's kKernelRank slots. A parallel call: up to
// kCpuPatternSlots innermost dims stay in the pattern slots, the rest go right-aligned into the
// last slots (the parallel ones, fused into tasks), unit dims pad the middle. A serial call: the
// dims in order from slot 0, unit dims above them. A unit dim between two real ones is still a
// loop in the kernel, whose set-up runs once per iteration of the real loop outside it; with
// short rows that was most of the time. AMD EPYC (AVX-512), 1 thread, 128 KiB, serial against
// middle padding (bench/compare_builds.py): D2S NCHW DCR f32 C64 (22-element rows) 0.25 ->
// 0.59x memcpy, u8 C64 0.14 -> 0.41x, S2D NCHW DCR u8 C64 0.19 -> 0.31x, S2D NHWC u8 C1
// 0.45 -> 0.66x; 2 MiB within the run-to-run spread. A view of one dim (a plain run: an
// identity copy, or a deep pixel whose channels are already in space order) takes slot 0, where
// the schedules vectorise; in a parallel slot it would run as a scalar loop under five unit
// loops (callgrind, a 64-byte D2S: 595 kernel instructions per call there).
DimList arrange_for_kernel(const DimList &dims, bool parallel) {
    DimList slots(kKernelRank, ViewDim{1, 0, 0});
    const size_t r = dims.size();
    if (!parallel) {
        std::copy(dims.begin(), dims.end(), slots.begin());
        return slots;
    }
    const size_t inner =
        r <= 1 ? r : std::min<size_t>(r - 1, r > kCpuPatternSlots ? kCpuPatternSlots : kCpuPatternSlots - 1);
    for (size_t i = 0; i < r; i++) {
        slots[i < inner ? i : kKernelRank - (r - i)] = dims[i];
    }
    return slots;
}

// ---- The steps every device shares.

// The view in bytes, with the element as an innermost dim of contiguous bytes, so that the
// element width, merged runs and widening are one mechanism; size-1 dims dropped.
DimList view_in_bytes(const Problem &p, const View &view, Fragments *fragments) {
    const int64_t e = p.elem_bytes;
    DimList dims;
    if (e != 1) dims.push_back({e, 1, 1});
    for (const ViewDim &d : view.dims) {
        if (d.extent != 1) {
            // Validation bounded (extent-1)*stride*e by the tensor span, so this cannot overflow.
            dims.push_back({d.extent, d.in_stride * e, d.out_stride * e});
        }
    }
    fragments->clear();
    for (auto [i, o] : view.fragments) {
        fragments->emplace_back(i * e, o * e);
    }
    return dims;
}

// Negative strides (reversed views): a dim the output walks backwards is walked forwards from
// its last element instead, so every output stride is positive and the kernels store in
// address order; the input may still step backwards (its loads then gather). The origin moves
// to that element. Validation bounded each (extent-1)*stride by the tensor's span.
void walk_output_forwards(DimList *dims, KernelPlan *plan) {
    for (ViewDim &d : *dims) {
        if (d.out_stride < 0) {
            plan->in_offset += (d.extent - 1) * d.in_stride;
            plan->out_offset += (d.extent - 1) * d.out_stride;
            d.in_stride = -d.in_stride;
            d.out_stride = -d.out_stride;
        }
    }
}

// Write the output in memory order: dim 0 becomes the output's densest dim.
void sort_by_output_stride(DimList *dims) {
    std::stable_sort(dims->begin(), dims->end(), [](const ViewDim &a, const ViewDim &b) {
        return a.out_stride != b.out_stride ? a.out_stride < b.out_stride : a.in_stride < b.in_stride;
    });
}

// Widen: the largest kernel element (kKernelWidths, widest first) that divides the contiguous
// innermost run, every stride, every offset and both origins; the dims and fragments then count
// in elements of that width (plan->width).
void widen_element(const Problem &p, DimList *dims_io, Fragments *fragments, KernelPlan *plan) {
    DimList &dims = *dims_io;
    const uintptr_t in_addr = reinterpret_cast<uintptr_t>(p.in.data) + static_cast<uintptr_t>(plan->in_offset),
                    out_addr = reinterpret_cast<uintptr_t>(p.out.data) + static_cast<uintptr_t>(plan->out_offset);
    const bool has_run = !dims.empty() && dims[0].in_stride == 1 && dims[0].out_stride == 1;
    for (int k = kKernelWidthCount - 1; k >= 0; k--) {  // widest first
        const int w = kKernelWidths[k];
        bool ok = in_addr % w == 0 && out_addr % w == 0;
        for (size_t i = 0; i < dims.size(); i++) {
            const bool run = i == 0 && has_run;
            ok &= run ? dims[0].extent % w == 0 : (dims[i].in_stride % w == 0 && dims[i].out_stride % w == 0);
        }
        if (!dims.empty() && !has_run) {
            ok &= w == 1;  // no contiguous run: the element is bytes unless strides allow more (below)
        }
        for (auto [i, o] : *fragments) {
            ok &= i % w == 0 && o % w == 0;
        }
        if (ok) {
            plan->width = w;
            break;
        }
    }
    for (size_t i = 0; i < dims.size(); i++) {
        if (i == 0 && has_run) {
            dims[0].extent /= plan->width;
        } else {
            dims[i].in_stride /= plan->width;
            dims[i].out_stride /= plan->width;
        }
    }
    for (auto &[i, o] : *fragments) {
        i /= plan->width;
        o /= plan->width;
    }
    dims.erase(std::remove_if(dims.begin(), dims.end(), [](const ViewDim &d) { return d.extent == 1; }), dims.end());
}

// ---- The CPU's own steps.

// Serial SpaceToDepth of 2 x 2 blocks within one layout, output rows of a line or more, under
// input_order_min_bytes, walks the output plane by plane: on the Intel Xeon VM of model 0xcf
// MEASURE chose that order in cache (`make bench-measure`), and `make confirm-tuning`
// confirmed it there: 32 KiB-1 MiB, 1 thread, 7-15 rows faster a size, median
// 0.73-0.82x the time, one slower (S2D NCHW DCR f16 C12 b2 at 128 KiB, 1.14x). What lost that
// way keeps the row order: blocks of 3 and 4, which re-read each input row 3-4 times (S2D NCHW
// CRD f32 C3 b4 at 512 KiB 1.27x), rows shorter than a line (S2D NCHW DCR u8 C64 b2, 22 bytes,
// 1.28x at 128 KiB), 4 KiB calls in L1 (64-byte rows, 1.17-1.20x), a fused layout conversion,
// which would leave the tile transpose (3.4x), and parallel plans (mixed: 1 MiB on 2 threads 11
// faster, 7 slower).
constexpr int64_t kPlaneByPlaneMinBytes = 8 << 10;
bool plane_by_plane(const Problem &p, const SwitchPoints &points, const KernelPlan &plan, int64_t row_bytes) {
    return p.block[0] == 1 && p.block[1] == 2 && p.block[2] == 2 && p.in.layout == p.out.layout && row_bytes >= 64 &&
           !plan.parallel && p.bytes >= kPlaneByPlaneMinBytes && p.bytes < points.input_order_min_bytes;
}

// Loop order. Dim 0 stays the output's densest dim (vector stores). When dim 0 is a run
// (contiguous in both) or a block digit the ladder unrolls (contract/cpu_ladder_table.h), the
// next dims stay in output order, so the unrolled block and the vectorised dim form dense output
// (the ladder's interleave, short-run and small-transpose rows). Otherwise dim 0 gathers along a
// long row, and the others follow the space tensor's memory order, so its rows are walked once,
// in order: NCHW SpaceToDepth then produces all bh*bw planes of an output row from bh consecutive
// input rows. Measured at 64 MiB, 1 thread, S2D NCHW DCR f32 C64: 0.59x memcpy with the input
// rows read in bh strided passes, vs 0.71x of the row order (this library's Halide 14 prototype:
// the plane-major order re-read each input row bh times and ran at 0.71-0.73x).
// Long runs (long_run_bytes, 64 by default, and more) walk the deep tensor in memory order: each
// deep pixel's bh*bw runs are handled together, the space tensor sees bh row streams. Measured at
// 64 MiB, 1 thread (D2S NHWC DCR f32): C64 b2 11.2 -> 17.2 GB/s, C16 b4 12.5 -> 19.2 GB/s, ahead
// of XNNPACK (11.8, 18.9); SpaceToDepth already walked its (output) deep side in order.
// In cache the input's row order is a CPU's matter (plane_by_plane). A fused layout conversion
// whose gathered dim 0 is as short as the ladder unrolls (kFusedTransposeMinRows and up) takes the
// input's order too, bringing its dense dim to slot 1 for the transposes (choose_family).
constexpr int64_t kFusedTransposeMinRows = 4;
bool converts_layout(const Problem &p) { return p.in.layout != p.out.layout; }
void choose_loop_order(const Problem &p, const SwitchPoints &points, const PlanChoice *choice, DimList *dims_io,
                       KernelPlan *plan) {
    DimList &dims = *dims_io;  // in the output's order so far
    const bool space_is_input = p.op == SD_SPACE_TO_DEPTH;
    bool input_order = false;
    const bool fused_transpose =
        converts_layout(p) && dims.size() > 2 && dims[0].in_stride != 1 && dims[0].extent >= kFusedTransposeMinRows &&
        std::any_of(dims.begin() + 1, dims.end(),
                    [&](const ViewDim &d) { return d.in_stride == 1 && d.extent >= points.transpose_min_extent; });
    if (dims.size() > 2 && dims[0].in_stride != 1 && (dims[0].extent > ladder::kMaxUnrolledExtent || fused_transpose)) {
        input_order = space_is_input && !plane_by_plane(p, points, *plan, dims[0].extent * plan->width);
    } else if (dims.size() > 2 && dims[0].in_stride == 1 && dims[0].out_stride == 1 &&
               dims[0].extent * plan->width >= points.long_run_bytes) {
        input_order = !space_is_input;
    }
    if (choice != nullptr) {
        input_order = choice->input_loop_order;
    }
    if (input_order && dims.size() > 2) {
        // Dims 1.. innermost first by their stride in the input.
        std::stable_sort(dims.begin() + 1, dims.end(), [](const ViewDim &a, const ViewDim &b) {
            return magnitude(a.in_stride) < magnitude(b.in_stride);
        });
        dims = merge_contiguous(dims);
        plan->input_loop_order = true;
    }
}

// Fit the kernel's rank and strides: dims whose stride does not fit int32, and the outermost
// dims beyond the kernel's rank, become loops in the executor.
void fit_kernel_rank(const DimList &dims, KernelPlan *plan) {
    plan->kernel_dims = dims_with_kernel_strides(dims, plan);
    while (plan->kernel_dims.size() > static_cast<size_t>(kKernelRank)) {
        const ViewDim d = plan->kernel_dims.back();
        plan->kernel_dims.pop_back();
        plan->loop_dims.insert_front(LoopDim{d.extent, d.in_stride, d.out_stride});
    }
}

// The kernel family. A transpose: the output's dense dim gathers across long input strides
// (beyond the ladder's deinterleaves, whose shuffles handle small constant strides) while dim 1
// is the input's dense dim, both long (transpose_min_extent); in a fused layout conversion dim 0
// may be shorter (kFusedTransposeMinRows), on the Halide transpose, whose tiles fit it where the
// tile transpose runs planes under 8 x 8 as a scalar loop. S2D NHWC -> NCHW f32 C16 b2, the
// general kernel against the transposes (Intel Xeon VM of model 0xcf, two harness builds
// alternating, 3 runs): 4 KiB (rows of 4) 315-404 -> 231-238 ns, 8 KiB (rows of 5) 1279-1343 ->
// 439-465 ns, 16 KiB (rows of 8, the tile) 1770-1905 -> 621-653 ns. With dim 1 short instead (D2S
// NCHW -> NHWC, 6 input floats a row) the Halide transpose forced by wisdom ran 2.1-2.8x the
// general kernel's time: dim 1 stays long. Small tensors: the small family. A chosen family
// replaces the rules' one, except a transpose for a view its kernels cannot take: they are built
// for output slot 0 and input slot 1 dense (permute_copy_generator.cpp).
void choose_family(const Problem &p, const SwitchPoints &points, const PlanChoice *choice, KernelPlan *plan) {
    const ViewDim &d0 = plan->kernel_dims[0], &d1 = plan->kernel_dims[1];
    const int64_t min_rows = converts_layout(p) ? std::min(kFusedTransposeMinRows, points.transpose_min_extent)
                                                : points.transpose_min_extent;
    const bool long_rows = d0.extent >= points.transpose_min_extent;
    if (d0.out_stride == 1 && d0.in_stride > ladder::kMaxDeinterleaveStride && d0.extent >= min_rows &&
        d1.in_stride == 1 && d1.extent >= points.transpose_min_extent) {
        plan->family = KernelFamily::Transpose;
    }
    if (p.bytes < points.small_max_bytes) {
        plan->family = KernelFamily::Small;
    }
    // The tile transpose (runtime/tile_transpose.h) in place of the Halide transpose for 4-byte
    // elements, where it has a vector loop. Fused f32 C16 b2 conversions (D2S NCHW -> NHWC, S2D
    // NHWC -> NCHW), 2-core AMD EPYC Zen 4, 1 thread, x memcpy, Halide's against the tile's
    // (scratch harness, best of 2 x 7 runs): 16 KiB 0.08 -> 0.26-0.35, 128 KiB 0.50-0.56 ->
    // 0.50-0.57, 2 MiB 0.58-0.64 -> 0.59-0.71; 64 MiB, where its twin streams whole lines (the
    // Halide transpose has no twin), 0.49-0.60 -> 0.82-1.32 (2 threads 0.66-0.86 -> 1.52-1.87).
    if (plan->family == KernelFamily::Transpose && plan->width == 4 && long_rows &&
        best_tile_isa() != TileIsa::Scalar) {
        plan->family = KernelFamily::Tile;
    }
    // The NCHW_VECT_C CRD 2 x 2 regroup (runtime/vect_c_regroup.h) in place of the general
    // family's byte gathers, where it has a vector loop. i8 C16 b2 (the matrix's), 2-core AMD
    // EPYC Zen 4, 1 thread, x memcpy, the general family's against the regroup's (scratch
    // harness, two runs). AVX-512 VBMI: S2D 16 KiB 0.13-0.18 -> 0.26-0.33, 128 KiB 0.17 -> 0.64,
    // 2 MiB 0.26 -> 0.75, 64 MiB 0.37 -> 1.04 (its twin 1.15-1.24); D2S 128 KiB 0.31 -> 0.71,
    // 2 MiB 0.52 -> 0.83, 64 MiB 0.92 -> 1.01-1.06 (its twin 1.67-1.79). AVX2 (SPACEDEPTH_MAX_ISA):
    // S2D 128 KiB 0.13 -> 0.61-0.64, 2 MiB 0.19 -> 0.70; D2S 0.16 -> 0.63, 0.26 -> 0.76; 64 MiB
    // 0.32-0.73 -> 1.06-1.10 (twins 1.22-1.88).
    const bool regroupable =
        plan->width == kRegroupKernel.width && regroup_kind(plan->kernel_dims) != RegroupKind::None;
    if (plan->family == KernelFamily::General && regroupable && best_regroup_isa() != RegroupIsa::Scalar) {
        plan->family = KernelFamily::Regroup;
    }
    const bool transposable = d0.out_stride == 1 && d1.in_stride == 1;
    const bool tileable = transposable && find_kernel(Device::Host, KernelFamily::Tile, plan->width) != nullptr;
    // A chosen shuffle keeps the rules' family here; choose_shuffle replaces the plan where the
    // view has a shuffle program.
    if (choice != nullptr && choice->family != KernelFamily::Shuffle &&
        (choice->family != KernelFamily::Transpose || transposable) &&
        (choice->family != KernelFamily::Tile || tileable) &&
        (choice->family != KernelFamily::Regroup || regroupable)) {
        plan->family = choice->family;
    }
}

// Two views run faster on the AVX2 path than on AVX-512 (AMD EPYC, 1 thread, 128 KiB; the
// figures are in schedules/tunables.json): run copies of 33-127-byte runs, which 64-byte
// vectors cover with one overlapping pair per run and 32-byte ones with less waste, 1.16-1.50x;
// and 4-byte deinterleaves by 2 with output rows of up to 40 elements, which LLVM lowers for
// 16 lanes as a truncating store and a second load, 1.12-1.51x. The wrappers choose one path
// per process, so the plan calls the AVX2 one itself.
void choose_avx2_path(const SwitchPoints &points, const PlanChoice *choice, KernelPlan *plan) {
    const RegisteredKernel *kernel = nullptr;  // looked up only where an AVX2 path is an alternative
    const bool has_avx2_path = avx2_path_beside_best() &&
                               (kernel = find_kernel(Device::Host, plan->family, plan->width)) != nullptr &&
                               kernel->avx2_path != nullptr;
    if (choice != nullptr) {
        plan->avx2_path = choice->avx2_path && has_avx2_path;
    } else if (plan->family == KernelFamily::General && has_avx2_path) {
        const ViewDim &d = plan->kernel_dims[0];
        const int64_t run_bytes = d.extent * plan->width;
        const bool short_run = d.in_stride == 1 && d.out_stride == 1 && run_bytes >= points.avx2_run_min_bytes &&
                               run_bytes <= points.avx2_run_max_bytes;
        const bool short_deinterleave = plan->width == 4 && d.in_stride == 2 && d.out_stride == 1 &&
                                        d.extent <= points.avx2_deinterleave_max_extent;
        plan->avx2_path = short_run || short_deinterleave;
    }
}

// How well the twin's stores fill the output's 64-byte lines (generators/stream_stores.py), which
// decides from what size a plan streams.
//   Whole: every run of the output starts and ends on a line (the output one dense block written
//   by one kernel call per executor step, every dim that steps a line or more stepping whole
//   lines, no line split into an odd count of pieces), or the output is dense and its rows start
//   inside lines (a C3 row of f32) but on the twin's words (twin_word_bytes), within the limits
//   measured below; these stream past stream_min_bytes.
//   Partial: dense rows on words that leave lines partly written across many open rows, or split
//   lines into odd counts of pieces that are copied runs of 24 bytes or more or 4- and 8-byte
//   elements gathered in threes; these gain only further past the cache, so they stream past
//   stream_partial_min_bytes; those that keep 16 or more rows open (S2D NCHW block 4) also only
//   past stream_many_rows_min_bytes.
//   Never: holes, fragments, rows off words, other gathered odd pieces (S2D NHWC CRD f32 C3,
//   whose pixels are 3 pieces of 16 bytes, ran 1.23x slower streaming on rows of whole lines).
enum class LineFit { Whole, Partial, PartialManyRows, Never };

// The narrowest alignment at which the twin still streams a vector (generators/stream_stores.py):
// the AVX2 and AVX-512 twins' as aligned pieces down to a 4-byte MOVNTI, the SSE4.1 twin's down
// to an 8-byte one, ARM64's one STNP on an 8-byte word. The CPU's features and the ISA cap are
// fixed at the first call, so this is read once.
int64_t twin_word_bytes() {
#if defined(__x86_64__) || defined(_M_X64)
    static const int64_t bytes = cpu_has_feature("avx2") ? 4 : 8;
    return bytes;
#else
    return 8;
#endif
}

LineFit line_fit(const KernelPlan &plan) {
    constexpr int64_t kLineBytes = 64;
    const int64_t word_bytes = twin_word_bytes();
    if (plan.fragments.size() > 1) return LineFit::Never;
    SmallVector<std::pair<int64_t, int64_t>, 2 * kMaxDims> dims;  // (out_stride, extent), loop order
    for (const ViewDim &d : plan.kernel_dims) dims.push_back({d.out_stride, d.extent});
    for (const LoopDim &d : plan.loop_dims) dims.push_back({d.out_stride, d.extent});
    // The contiguous run the innermost dims write, and how many output rows the loop order keeps
    // open at once: the extents it walks before the dim that continues the run (S2D NCHW b2: 4
    // output planes, each taking one run per input row).
    int64_t run = 1, open_rows = 1;
    bool jumped = false;
    for (const auto &[stride, extent] : dims) {
        if (extent == 1) continue;
        if (stride == run && !jumped) {
            run *= extent;
        } else if (stride == run) {
            break;
        } else {
            jumped = true;
            open_rows *= extent;
        }
    }
    const ViewDim &inner = plan.kernel_dims[0];
    const bool row_copy = inner.in_stride == 1 && inner.out_stride == 1;
    const int64_t run_bytes = run * plan.width;
    std::sort(dims.begin(), dims.end());
    int64_t dense = 1;
    bool on_lines = true, on_words = true, odd_pieces = false;
    for (const auto &[stride, extent] : dims) {
        if (extent == 1) continue;
        if (stride != dense) return LineFit::Never;
        const int64_t step_bytes = stride * plan.width;
        if (step_bytes >= kLineBytes) {
            on_lines = on_lines && step_bytes % kLineBytes == 0;
            on_words = on_words && step_bytes % word_bytes == 0;
        }
        // Pieces of a line in odd counts (a C3 pixel's 3 channels): the vectors overlap.
        if (extent * step_bytes < kLineBytes && (extent & (extent - 1)) != 0) odd_pieces = true;
        dense *= extent;
    }
    if (on_lines && !odd_pieces) return LineFit::Whole;
    // Rows that start inside lines stream where the twin's vectors there start on its words
    // (it stores them as aligned pieces; off a word plainly: generators/stream_stores.py). The
    // figures below up to the gathers in threes were taken when those pieces were all 8-byte
    // MOVNTIs; with wider pieces those that start inside lines ran 1.14-1.38x faster at 64 MiB
    // (bench/compare_builds.py, 1 thread). Measured with
    // `make confirm-tuning` and paired runs of the harness's switch_points rows (2-core AMD EPYC,
    // AVX-512, 16-64 MiB, the matrix and the model shapes, 1 and 2 threads; times against the
    // plain kernel). Whole: D2S NCHW f16/f32/f64 C3-C64 (b2, b4), NHWC DCR f32 C6/C12, f16 C24
    // and u8 C1 (u16 kernels), 0.52-0.97x; S2D NCHW f32 C1/C3 b2 with runs of 4.6-5.7 KiB,
    // 0.75-0.86x; D2S NCHW u8 C3 (rows of 3,344 and 4,728 bytes, 32 and 64 MiB), 0.69-0.80x.
    // Rows 4 bytes past an 8-byte word (every other u8 row of 724 or 2,364 bytes), once the x86
    // twin stored them as 4- and 8-byte MOVNTIs around 16-byte pieces, against plain stores (AMD
    // EPYC VM, AVX-512, `spacedepth bench` in alternating runs of two builds, of the streaming
    // copy, 2026-12-06): D2S NCHW CRD u8 C3 b2 at 64 MiB 0.57-0.71 -> 0.94-0.99 (724-byte rows
    // 0.62-0.66 -> 0.92-1.01), 12-20 MiB 0.40-0.77 -> 0.59-0.95, 8 MiB 0.89-0.93 -> 0.82-0.84;
    // S2D NCHW u8 C3 b2 (Partial: 4 open rows) 0.54-0.74 -> 0.80-0.91, 2 threads 0.41-0.71 ->
    // 0.61-0.97; S2D NCHW CRD f32 C3 b4 0.59-0.62 -> 0.78-0.83.
    // Partial, each by the loss under 16 MiB that keeps it to stream_partial_min_bytes
    // (schedules/tunables.json has the runs; at 64 MiB the 10 such rows of the matrix and the
    // model shapes ran 0.82-1.03x on 1 thread, 0.73-0.92x on 2):
    //   more than 2 open rows unless there are at most 4 and their runs reach 4 KiB: each open
    //   row holds a partly written line (S2D NCHW f32 C3 b3 and b2x3, 6-9 rows of 1.6-3.2 KiB,
    //   and C6 b2, 4 rows of 1.7 KiB: 1.06-1.22x at 16 MiB, 0.79-0.95x at 64 MiB);
    //   pieces of a line in odd counts copied as runs of 24 bytes or more (NHWC DCR f32 C3 as
    //   24-byte pieces: 0.90-1.19x at 16 MiB, 0.79-1.05x at 64 MiB);
    //   4- and 8-byte elements gathered in threes (D2S NCHW b3 and b1x3, rows interleaved from 3
    //   input planes, and D2S NHWC CRD C3, each pixel from 3 channels), since the twin stores
    //   misaligned vectors as aligned pieces: NCHW f32 C3 b3 1.39x at 16 MiB, 0.94x at 32 MiB,
    //   0.80-0.89x at 64 MiB and 0.86x on 2 threads; C24 b3 0.88-1.00x, C12 b1x3 0.90x, f64 C3 b3
    //   0.61-0.63x, NHWC CRD f32 C3 b2 0.77-0.85x at 64 MiB).
    // Never:
    //   rows off the twin's words (u8 rows 1-3 bytes past 4 with AVX2; elsewhere also 4 past 8, the
    //   D2S NCHW u8 C3/C64 rows of 724, 2,364 and 16,380 bytes, 1.6-2.1x slower on x86 when each
    //   of their vectors was MOVNTIs alone): the twin stores them plainly, so streaming gains nothing;
    //   other odd pieces gathered or copied in runs under 24 bytes (at 64 MiB, 1 thread: u8 and
    //   u16 NHWC C3/C6/C12 1.6-3.4x, NHWC CRD f32 C12 1.69x, D2S NCHW u8 and f16 b3
    //   2.4-3.4x, f32 b5 over 20x: narrow and odd-width vectors store part of a line plainly);
    //   row copies of >= 2 KiB (S2D NCHW CRD f32 C12 b2x1, 4728 B: 1.31-1.34x with MOVNTIs,
    //   1.10-1.22x with pieces): a plain copy loop outruns the pieces.
    constexpr int64_t kLongRunBytes = 4096, kLongCopyBytes = 2048, kCopiedPieceBytes = 24;
    const bool long_row_copy = row_copy && inner.extent * plan.width >= kLongCopyBytes;
    if (!on_words || long_row_copy) return LineFit::Never;
    const bool copied_pieces = inner.in_stride == 1 && inner.extent * plan.width >= kCopiedPieceBytes;
    const bool gathered_in_threes =
        inner.out_stride == 1 && inner.in_stride != 1 && inner.extent == 3 && plan.width >= 4;
    if (odd_pieces) return copied_pieces || gathered_in_threes ? LineFit::Partial : LineFit::Never;
    const bool few_open_rows = open_rows <= 2 || (open_rows <= 4 && run_bytes >= kLongRunBytes);
    // 16 open rows (S2D NCHW CRD f32 and f16 C3 b4) ran 1.2-1.7x faster plain at 32-64 MiB on the
    // Intel Xeon VM of model 0xcf, where the other Partial plans gained from streaming
    // (stream_many_rows_min_bytes); 9 rows (S2D NCHW b3) gained there too.
    constexpr int64_t kManyOpenRows = 16;
    if (few_open_rows) return LineFit::Whole;
    return open_rows >= kManyOpenRows ? LineFit::PartialManyRows : LineFit::Partial;
}

// The tile transpose's twin streams each tile's output rows as whole lines where every tile row
// starts on a line: slot 0 whole lines long (no overlapped last tile) and slot 1's output stride
// whole lines (runtime/tile_transpose.h); those fit as Whole rows do.
LineFit tile_line_fit(const KernelPlan &plan) {
    constexpr int64_t kLineBytes = 64;
    const ViewDim &d0 = plan.kernel_dims[0], &d1 = plan.kernel_dims[1];
    const bool on_lines = (d0.extent * plan.width) % kLineBytes == 0 && (d1.out_stride * plan.width) % kLineBytes == 0;
    return plan.fragments.size() <= 1 && on_lines ? LineFit::Whole : LineFit::Never;
}

// The regroup's twin streams its 64-byte vectors where every one starts on a line
// (regroup_writes_whole_lines, runtime/vect_c_regroup.h).
LineFit regroup_line_fit(const KernelPlan &plan) {
    return plan.fragments.size() <= 1 && regroup_writes_whole_lines(plan.kernel_dims) ? LineFit::Whole : LineFit::Never;
}

// Streaming stores: past the last-level cache (stream_min_bytes for serial plans,
// stream_parallel_min_bytes for parallel ones, whose threads share it: schedules/tunables.json
// has the measurements), a streaming store skips the read-for-ownership of each output line,
// which a plain store pays (2-core AMD EPYC, 64 MiB: a streaming copy 1.31-1.48x memcpy); in
// cache it evicts the output the caller is about to read (128 KiB: 0.62x). Only where the kernel
// has a streaming twin (x86 and ARM64: generators/stream_stores.py), from the size its line_fit()
// allows.
void choose_streaming(const Problem &p, const SwitchPoints &points, const PlanChoice *choice, KernelPlan *plan) {
    const RegisteredKernel *kernel = find_kernel(Device::Host, plan->family, plan->width);
    const bool has_twin = kernel != nullptr && kernel->stream != nullptr;
    if (choice != nullptr) {
        plan->stream = choice->stream && has_twin;
    } else {
        const LineFit fit = !has_twin                               ? LineFit::Never
                            : plan->family == KernelFamily::Tile    ? tile_line_fit(*plan)
                            : plan->family == KernelFamily::Regroup ? regroup_line_fit(*plan)
                                                                    : line_fit(*plan);
        int64_t min_bytes = plan->parallel ? points.stream_parallel_min_bytes : points.stream_min_bytes;
        if (fit == LineFit::Partial || fit == LineFit::PartialManyRows) {
            min_bytes = std::max(min_bytes, points.stream_partial_min_bytes);
        }
        if (fit == LineFit::PartialManyRows) min_bytes = std::max(min_bytes, points.stream_many_rows_min_bytes);
        plan->stream = fit != LineFit::Never && p.bytes >= min_bytes;
    }
}

// Extents beyond int32 are walked in chunks of 2^30 by an executor loop.
void chunk_long_extents(KernelPlan *plan) {
    for (size_t i = 0; i < plan->kernel_dims.size(); i++) {
        ViewDim &d = plan->kernel_dims[i];
        if (d.extent > kMaxKernelExtent) {
            const int64_t chunk = int64_t{1} << 30;
            plan->loop_dims.push_back({(d.extent + chunk - 1) / chunk, d.in_stride * chunk, d.out_stride * chunk,
                                       static_cast<int>(i), chunk, d.extent});
        }
    }
}

// The steps every device shares up to widening: the view in bytes, in the output's order.
DimList output_order_bytes(const Problem &p, const View &view, KernelPlan *plan) {
    DimList dims = view_in_bytes(p, view, &plan->fragments);
    walk_output_forwards(&dims, plan);
    sort_by_output_stride(&dims);
    return merge_contiguous(dims);
}

}  // namespace

std::shared_ptr<const ShuffleProgram> plan_shuffle(const Problem &problem, const View &view, ShuffleIsa isa,
                                                   int64_t *in_offset, int64_t *out_offset, bool join_rows) {
    KernelPlan plan;
    const DimList dims = output_order_bytes(problem, view, &plan);
    *in_offset = plan.in_offset;
    *out_offset = plan.out_offset;
    return make_shuffle_program(dims, plan.fragments, isa, join_rows);
}

namespace {

// Where the rules take the shuffle family over the ladder's plan (the kernel slots as arranged
// for the ladder):
//   tiny: a serial tensor under shuffle_max_bytes whose slot 0 is at most 16 bytes;
//   the views below, where the shuffle's program costs at most max_shuffle_cost() a byte: in
//   cache (under stream_min_bytes) serial ones, beyond it parallel ones from
//   stream_parallel_min_bytes and serial pixel transposes of bytes (serial plans of all three
//   from stream_serial_shuffle_min_bytes), streaming where its rows are dense (shuffle_streams):
//     planes interleaved: a block digit gathered from planes whose rows (slot 1, contiguous in
//     the input) are narrower than the ladder's narrowest block vector, so its scalar row would
//     run: NCHW DepthToSpace of 2x2-4x4 planes;
//     short deinterleaves: slot 0 steps 2-8 elements and is no longer than the narrowest row
//     vector: NCHW SpaceToDepth of such planes, NHWC SpaceToDepth CRD of 3-6 u8 channels;
//     pixel transposes: slot 0 gathers at most 4 elements at most 12 bytes apart: NHWC
//     DepthToSpace CRD of 3 u8 channels;
//     chunk gathers (in cache, from kChunkGatherMinBytes): slot 0 one 16-byte run, slot 1
//     stepping elsewhere: NHWC CRD of 16-byte elements.
// Measured with a scratch harness on the matrix and the model shapes, 1 KiB-2 MiB (2-core AMD
// EPYC Zen 4, 1 thread; per row the geometric mean of two runs, the ladder's plan against the
// shuffle's on the same call). AVX-512 VBMI: tiny, 41 of 43 rows faster at 1 KiB (up to 32x; one
// 0.77x); the costed views 12 of 12 at 4 KiB (1.2-57x: u8 and f32 C64 NCHW planes from 0.016-0.058
// of memcpy to 0.22-0.90), 6 of 6 at 16 KiB, and 3-4 of 4 at 128 KiB and 2 MiB (NHWC CRD u8
// C3/C6 and f32 C3 at 128 KiB 1.6-2.7x). AVX2: tiny 39 of 43 (0.42-22x), the costed views 8 of 8
// at 4 KiB, 4 of 5 at 16 KiB, all at 128 KiB and 2 MiB (1.2-4.2x). The cost bound left out the
// rows that ran slower (NCHW_VECT_C CRD i8 C16 from 16 KiB, 0.44-0.91x); the ladder's runs (NHWC
// DCR, 0.5-1.0x), wide gathers (NHWC CRD C16-C64, 0.1-0.7x) and longer rows stay with it.
enum class ShuffleRule { None, Tiny, IfCheap, PixelsIfCheap, Streaming };

// Rows under a VBMI vector, in cache, serial: NCHW SpaceToDepth (slot 0 steps 2-8 along input
// rows, slot 1 a row's phases, each to a row of its own; output rows under 64 bytes; not NHWC
// CRD's pixel transposes, D2S C12 f32 0.74x the time) and DepthToSpace (slot 0 over planes,
// slot 1 along rows of at most 32 bytes). The shuffle's program joins rows (make_shuffle_program):
// two output rows or two planes' rows a vector, one 64-byte load from each, and each block of a
// row's windows read by both phases while in L1. At 128 KiB (the two builds alternating, 2-5
// rounds, Intel Xeon VM of model 0xcf) the ladder's rows of 22-45 bytes ran S2D NCHW u8 C16/C64
// 0.30-0.33 of memcpy, the joined windows 0.39-0.45; D2S u8 C64 0.33-0.36 -> 0.45-0.52. D2S rows
// of 45 bytes (u8 C16: windows of 180 bytes, chunk loads) ran no faster, so they stay. From 24
// KiB: at 30 KiB the matrix's NCHW rows it takes ran 0.59-0.95x the time, at 4-16 KiB 0.75-2.3x
// (D2S f32 C64 at 16 KiB 2.2x: the ladder's u32 rows were at 0.44 of memcpy already).
constexpr int64_t kJoinRowsMinBytes = 24 << 10;

// Planes interleaved (DepthToSpace NCHW): slot 0 steps over whole rows of slot 1, rows of under
// `max_row_bytes` each.
bool planes_interleaved(const ViewDim &d0, const ViewDim &d1, int64_t width, int64_t max_row_bytes) {
    return d0.extent <= ladder::kMaxUnrolledExtent && d1.in_stride == 1 && d1.out_stride == d0.extent &&
           magnitude(d0.in_stride) >= d1.extent && d1.extent * width < max_row_bytes;
}

bool joins_short_rows(const Problem &p, const SwitchPoints &points, const KernelPlan &plan) {
    const bool ladder_plan = plan.family == KernelFamily::General || plan.family == KernelFamily::Small;
    if (!ladder_plan || plan.parallel || p.bytes < kJoinRowsMinBytes || p.bytes >= points.stream_min_bytes ||
        best_shuffle_isa() != ShuffleIsa::Vbmi) {
        return false;
    }
    const ViewDim &d0 = plan.kernel_dims[0], &d1 = plan.kernel_dims[1];
    const int64_t w = plan.width, step0 = magnitude(d0.in_stride);
    const bool s2d_rows = step0 > 1 && step0 <= 8 && d1.in_stride == 1 && d1.extent == step0 &&
                          d1.out_stride > d0.extent && d0.extent * w < 64;
    return s2d_rows || planes_interleaved(d0, d1, w, 33);  // D2S rows of at most 32 bytes
}
constexpr int64_t kChunkGatherMinBytes = 8 << 10;
ShuffleRule shuffle_rule(const Problem &p, const SwitchPoints &points, const KernelPlan &plan) {
    // Only over the Halide ladder's plans: the transposes' and the other microkernels' stay (the
    // AVX2 path's D2S NCHW_VECT_C CRD i8 C16 ran 0.12 of memcpy at 128 KiB on the shuffle, 0.63 on
    // the regroup), but for tiny calls of the regroup's with VBMI: NCHW_VECT_C CRD i8 C16 b2 at 256
    // B-2 KiB ran 38-173 ns a call on the shuffle, 132-223 on the regroup; with AVX2's shuffle 85-613
    // (Intel Xeon VM of model 0xcf).
    const bool ladder_plan = plan.family == KernelFamily::General || plan.family == KernelFamily::Small;
    const bool tiny = p.bytes < points.shuffle_max_bytes && !plan.parallel;
    const bool tiny_regroup = tiny && plan.family == KernelFamily::Regroup && best_shuffle_isa() == ShuffleIsa::Vbmi;
    if (!ladder_plan && !tiny_regroup) return ShuffleRule::None;
    const ViewDim &d0 = plan.kernel_dims[0], &d1 = plan.kernel_dims[1];
    const int64_t w = plan.width, d0_bytes = d0.extent * w, step0 = magnitude(d0.in_stride);
    if (tiny && d0_bytes <= 16) return ShuffleRule::Tiny;
    if (!ladder_plan) return ShuffleRule::None;
    // Short runs (slot 0 contiguous, under 16 bytes: NHWC DCR pixels of a few channels) up to
    // four times that: at 4 KiB the ladder's rows of 6-byte runs ran D2S NHWC DCR u8 C3 at
    // 0.10-0.12 of memcpy, the shuffle's windows of whole rows at 0.22-0.26 (S2D 0.12 -> 0.26;
    // AMD EPYC Zen 4, VBMI; the AVX2 path the same with either). These two were the only rows of
    // the matrix at 4 KiB that this moved; shuffle_max_bytes itself at 8 KiB also moved rows the
    // ladder runs well, up to 2.7x slower (bench/ANALYSIS.md).
    if (p.bytes < 4 * points.shuffle_max_bytes && d0.in_stride == 1 && d0_bytes < 16 && !plan.parallel) {
        return ShuffleRule::Tiny;
    }
    // Past the last-level cache, where the ladder's plan is parallel and streams, the shuffle
    // takes it with streaming stores, in tasks. On 2 threads at 64 MiB it beat the ladder in two
    // runs of a scratch harness (of the streaming copy's rate; NHWC CRD: D2S u8 C3 0.60-0.63 ->
    // 0.79-0.82, S2D u8 C3 0.63-0.64 -> 0.73-0.76, u8 C6 0.54-0.56 -> 0.78-0.79, f32 C3 0.65-0.73
    // -> 0.80-0.86; D2S f32 C3 0.83-0.86 -> 0.73-0.88). On 1 thread only the pixels of bytes,
    // which the ladder cannot widen, won: D2S u8 C3 in 6 of 7 runs (0.45-0.50 -> 0.55-0.65;
    // one run 0.50 -> 0.45; in make bench 0.39 -> 0.39, 0.65 -> 0.68 of memcpy, the runs' DRAM
    // 10 % apart), and, once the windows held whole rows, the SpaceToDepth ones (the two plans
    // alternating in one process, 9 rounds, median time ratio: S2D u8 C6 0.66-0.85 in 6 of 7 runs,
    // one 1.04, AVX2 path 0.64-0.71; u8 C3 0.93-1.02, AVX2 0.88-1.12); the ladder's u32 twin kept
    // f32 C3 ahead. With plain stores it lost (S2D NHWC CRD u8 and f32 C3 at 64 MiB: 0.43 and
    // 0.49 of memcpy, the ladder 0.73 and 1.0). AMD EPYC VM, best of 2 x 3 calls.
    const bool beyond_cache = p.bytes >= points.stream_min_bytes;
    if (plan.parallel && (!beyond_cache || p.bytes < points.stream_parallel_min_bytes)) return ShuffleRule::None;
    // Planes: slot 0 steps over whole rows of slot 1. Deinterleaves: by 2 to 8, the ladder's
    // deinterleave rows (its CRD transposes, stepping 9-16, stay with it).
    const bool planes = planes_interleaved(d0, d1, w, ladder::x86_narrowest_block_bytes(plan.width));
    const bool short_deinterleave =
        step0 > 1 && step0 <= 8 && d1.in_stride != 1 && d0_bytes <= ladder::x86_narrowest_row_bytes(plan.width);
    const bool pixel_transpose = step0 != 1 && d0.extent <= 4 && step0 * w <= 12;
    // Chunk gathers: slot 0 one contiguous run of 16 bytes, slot 1 stepping elsewhere (NHWC CRD of
    // 16-byte elements), four chunks to a VBMI vector, two to an AVX2 one. In cache from
    // kChunkGatherMinBytes: S2D NHWC CRD c128 C3 b2 1.23-1.34x the ladder's rate at 6 KiB-2 MiB on
    // VBMI, 1.07-1.16x at 9 KiB-2 MiB on AVX2; 0.93-0.97x at 3 KiB, and on AVX2 up to 7 KiB (the
    // two plans alternating in one process, 21-31 rounds, AMD EPYC VM). The matrix's only such
    // row.
    const bool chunk_gather = d0.in_stride == 1 && d0_bytes == 16 && d1.in_stride != d0.extent;
    if (chunk_gather && !beyond_cache && p.bytes >= kChunkGatherMinBytes) return ShuffleRule::IfCheap;
    // Short contiguous runs of bytes (slot 0 under 16 bytes: NHWC DCR u8 C3, 6-byte runs), which
    // the ladder copies as narrow vectors and its twin cannot stream (line_fit: Never), beyond the
    // cache with VBMI. At 64 MiB on the 2-core Intel Xeon VM, the plain u16 kernel against the
    // shuffle's streaming walk, two builds alternating (3 runs): D2S NHWC DCR u8 C3 b2 12.5-12.9
    // -> 13.1-13.7 GB/s on 1 thread, 24.1-27.9 -> 30.9-36.0 on 2; S2D 13.1-13.5 -> 14.3-15.9 and
    // 26.5-30.7 -> 38.2-41.6; D2S b4 (a model shape, 12-byte runs) 9.2-9.5 -> 11.2-11.6. With
    // AVX2's 16-byte PSHUFBs the D2S b2 lost (12.0 -> 8.9; S2D 11.8 -> 12.1, D2S b4 8.0 -> 8.4).
    const bool byte_runs = d0.in_stride == 1 && d0_bytes < 16 && p.elem_bytes == 1;
    if (beyond_cache && byte_runs && best_shuffle_isa() == ShuffleIsa::Vbmi) return ShuffleRule::Streaming;
    if (joins_short_rows(p, points, plan)) return ShuffleRule::IfCheap;
    // Deinterleaves by 2 of units of 2 bytes or more whose two phases are adjacent output rows
    // (D2S NHWC C1: a pixel's two block rows), serial, in cache from 24 KiB, on VBMI: one VPERMT2B
    // of two contiguous tables per 64 output bytes, where the ladder's u16 and u64 rows ran
    // D2S NHWC u8 C1 at 0.36-0.55 of memcpy at 128 KiB-2 MiB. The shuffle forced by wisdom (the two
    // alternating, min of 3): u8 0.64-0.88x the time at 128 KiB-2 MiB, f32 0.77-0.96x; at 32 KiB
    // 0.92-1.00x (Intel Xeon VM of model 0xcf).
    const bool phase_rows = best_shuffle_isa() == ShuffleIsa::Vbmi && !beyond_cache && p.bytes >= kJoinRowsMinBytes &&
                            step0 == 2 && w >= 2 && d1.extent == 2 && d1.in_stride == 1 && d1.out_stride == d0.extent;
    if (phase_rows) return ShuffleRule::IfCheap;
    if (!planes && !short_deinterleave && !pixel_transpose) return ShuffleRule::None;
    if (beyond_cache) {
        // Serial plans from stream_serial_shuffle_min_bytes, confirmed per CPU model: the ladder's
        // twin kept NHWC CRD f32 C3 ahead on the AMD EPYC VM; on the Intel Xeon VM MEASURE chose
        // the shuffle's walk for them at 64 MiB (bench/ANALYSIS.md).
        const bool serial_shuffle = (pixel_transpose && w == 1) || p.bytes >= points.stream_serial_shuffle_min_bytes;
        return plan.parallel || serial_shuffle ? ShuffleRule::Streaming : ShuffleRule::None;
    }
    return pixel_transpose ? ShuffleRule::PixelsIfCheap : ShuffleRule::IfCheap;
}

// The most a program may cost a byte (ShuffleProgram::cost_per_byte) for the rules' costed
// views, on the instruction sets measured; 0 on the others (SSSE3, NEON, scalar), where only a
// PlanChoice (MEASURE, wisdom) takes the family.
double max_shuffle_cost(ShuffleIsa isa) { return isa == ShuffleIsa::Vbmi ? 0.3 : isa == ShuffleIsa::Avx2 ? 0.5 : 0; }

// The pixel transposes on AVX2 beat the ladder at every size measured, whatever their cost
// estimate, once windows shorter than a vector store it whole (NHWC CRD u8 C3 D2S, x memcpy:
// 16 KiB 0.04 -> 0.07, 128 KiB 0.10 -> 0.26, 2 MiB 0.13 -> 0.23, programs of 0.52-0.76 a byte).
double max_pixels_cost(ShuffleIsa isa) { return isa == ShuffleIsa::Avx2 ? 1.0 : max_shuffle_cost(isa); }

// The shuffle family, on the view in bytes (make_kernel_plan keeps it from before widening):
// where a PlanChoice names it, or where shuffle_rule() takes it over the plan the other steps
// made. It runs on bytes (its tables are in bytes, so the element is never widened), only where
// the output is dense from its first byte.
void choose_shuffle(const Problem &p, const SwitchPoints &points, const PlanChoice *choice, const DimList &byte_dims,
                    KernelPlan *plan) {
    if (choice != nullptr && choice->family != KernelFamily::Shuffle) return;
    const ShuffleIsa isa = best_shuffle_isa();
    const ShuffleRule rule = choice != nullptr ? ShuffleRule::Tiny : shuffle_rule(p, points, *plan);
    if (rule == ShuffleRule::None || (choice == nullptr && max_shuffle_cost(isa) == 0)) return;
    Fragments fragments = plan->fragments;  // back in bytes
    for (auto &[i, o] : fragments) {
        i *= plan->width;
        o *= plan->width;
    }
    std::shared_ptr<const ShuffleProgram> program =
        make_shuffle_program(byte_dims, fragments, isa, joins_short_rows(p, points, *plan));
    if (program == nullptr) return;
    const double max_cost = rule == ShuffleRule::PixelsIfCheap ? max_pixels_cost(isa) : max_shuffle_cost(isa);
    if (rule != ShuffleRule::Tiny && program->cost_per_byte > max_cost) return;
    if (rule == ShuffleRule::Streaming && !shuffle_streams(*program)) return;
    plan->family = KernelFamily::Shuffle;
    plan->width = 1;
    plan->kernel_dims = byte_dims;
    plan->loop_dims.clear();
    plan->fragments = std::move(fragments);
    plan->avx2_path = plan->input_loop_order = false;
    // A choice's threads and stores as it says (streaming only where the program can); the rules'
    // streaming plans keep the ladder plan's threads.
    if (choice != nullptr) {
        plan->parallel = choice->parallel && p.threads != 1;
        plan->stream = choice->stream && shuffle_streams(*program);
    } else {
        plan->stream = rule == ShuffleRule::Streaming;
        plan->parallel = plan->parallel && plan->stream;
    }
    plan->shuffle = std::move(program);
}

}  // namespace

KernelPlan make_kernel_plan(const Problem &p, const View &view, Device device, const PlanChoice *choice) {
    KernelPlan plan;
    DimList dims = output_order_bytes(p, view, &plan);
    const DimList byte_dims = dims;
    widen_element(p, &dims, &plan.fragments, &plan);
    if (device != Device::Host) {
        plan.device = device;
        plan_for_gpu(dims, &plan);
        return plan;
    }
    const SwitchPoints points = switch_points();
    plan.parallel = p.threads != 1 && (choice != nullptr ? choice->parallel : p.bytes >= points.parallel_min_bytes);
    plan.task_bytes = points.parallel_task_bytes;
    choose_loop_order(p, points, choice, &dims, &plan);
    fit_kernel_rank(dims, &plan);
    plan.kernel_dims = arrange_for_kernel(plan.kernel_dims, plan.parallel);
    choose_family(p, points, choice, &plan);
    choose_avx2_path(points, choice, &plan);
    choose_streaming(p, points, choice, &plan);
    chunk_long_extents(&plan);
    choose_shuffle(p, points, choice, byte_dims, &plan);
    return plan;
}

std::string describe_plan(const KernelPlan &plan) {
    std::ostringstream s;
    if (plan.shuffle != nullptr) {
        const ShuffleProgram &sp = *plan.shuffle;
        s << "shuffle microkernel (" << shuffle_isa_name(sp.isa) << "), windows of " << sp.window_bytes << " bytes in "
          << sp.vectors.size() << " vector(s) of up to " << sp.vector_bytes << " bytes";
        int chunks = 0, tables = 0;
        for (const ShuffleVector &v : sp.vectors) {
            chunks = std::max(chunks, v.chunks);
            tables = std::max(tables, v.span_tables);
        }
        if (chunks > 0) s << " from up to " << chunks << " 16-byte chunk(s) each";
        if (chunks == 0 && tables > 0) s << " from up to " << tables << " 64-byte load(s) each";
        // The planner's estimate (ShuffleProgram::cost_per_byte) against a copy loop's load and store.
        char estimate[64];
        std::snprintf(estimate, sizeof estimate, ", about %.1f instructions per 64 output bytes",
                      sp.cost_per_byte * 64);
        s << estimate;
        s << ", " << sp.windows << " a row";
        if (sp.tail_units > 0) s << " and a tail of " << sp.tail_units << " x " << sp.unit_bytes << " bytes";
        if (!sp.outer.empty()) s << ", " << sp.outer.size() << " outer loop dim(s)";
        if (sp.fragments.size() > 1) s << ", " << sp.fragments.size() << " fragments";
        if (plan.stream) s << ", streaming stores";
        s << (plan.parallel ? ", parallel" : ", serial");
        return s.str();
    }
    static const char *const kDeviceNames[] = {"", "CUDA ", "OpenCL "};
    s << kDeviceNames[static_cast<int>(plan.device)] << kernel_family_name(plan.family) << " u" << plan.width * 8
      << " kernel, dims (extent:in_stride:out_stride, innermost first)";
    for (const ViewDim &d : plan.kernel_dims) {
        s << " " << d.extent << ":" << d.in_stride << ":" << d.out_stride;
    }
    if (!plan.loop_dims.empty()) {
        s << ", " << plan.loop_dims.size() << " outer loop dim(s)";
    }
    if (plan.fragments.size() > 1) {
        s << ", " << plan.fragments.size() << " fragments";
    }
    if (plan.avx2_path) {
        s << ", AVX2 path";
    }
    if (plan.stream) {
        s << ", streaming stores";
    }
    s << (plan.parallel ? ", parallel" : ", serial");
    if (plan.parallel && !kFamilyIsMicrokernel[static_cast<int>(plan.family)]) {
        s << ", tasks of " << plan.task_bytes << " bytes";  // the executor's boxes (execute.cpp)
    }
    return s.str();
}

}  // namespace spacedepth::detail
