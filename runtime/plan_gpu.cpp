// GPU planning: a View, after the steps every device shares (plan_cpu.cpp), becomes the calls of
// one GPU kernel, its dims placed by role and its grid kept within CUDA's limits.
#include "runtime/plan.h"

#include <algorithm>
#include <vector>

namespace spacedepth::detail {

// The GPU view: the kernel dims by role (contract/kernel_contract.h), so that both sides of a
// warp's accesses are contiguous.
//   general:   [u0, u1, t, t2, r0, r1]. u0, u1: block digits (extent <= kGpuMaxThreadDigit) dense on one side,
//              done inside one thread; t: the thread index, dense on the output or, when the
//              output's dense dim is a block digit, on the input; t2: the thread index's outer
//              part, the next dim in output order; r0, r1: the rest.
//   transpose: [output's dense dim, input's dense dim, rest...], both long: shared-memory tiles.
void plan_for_gpu(const DimList &view_dims, KernelPlan *plan) {
    DimList dims = dims_with_kernel_strides(view_dims, plan);
    const ViewDim unit{1, 0, 0};
    std::vector<bool> used(dims.size(), false);
    // The unused dim with the smallest key, or -1.
    auto pick = [&](auto key, auto accept) {
        int best = -1;
        for (size_t i = 0; i < dims.size(); i++) {
            if (!used[i] && accept(dims[i]) && (best < 0 || key(dims[i]) < key(dims[best]))) {
                best = static_cast<int>(i);
            }
        }
        if (best >= 0) {
            used[best] = true;
        }
        return best;
    };
    auto any = [](const ViewDim &) { return true; };
    auto tiny = [](const ViewDim &d) { return d.extent <= kGpuMaxThreadDigit; };
    auto out_key = [](const ViewDim &d) { return d.out_stride; };
    auto in_key = [](const ViewDim &d) { return magnitude(d.in_stride); };
    auto at = [&](int i) { return i < 0 ? unit : dims[i]; };

    SmallVector<ViewDim, kMaxDims + 4> slots;  // four role slots, and the rest
    plan->family = KernelFamily::General;
    const int o = pick(out_key, any);
    const int i = o < 0 ? -1 : pick(in_key, any);
    const ViewDim d_out = at(o), d_in = at(i);
    const bool run = i < 0 || magnitude(d_out.in_stride) <=
                                  magnitude(d_in.in_stride);  // the output's densest dim is the input's too
    if (!run && d_out.out_stride == 1 && d_in.in_stride == 1 && d_out.extent >= kGpuMinTransposeExtent &&
        d_in.extent >= kGpuMinTransposeExtent) {
        plan->family = KernelFamily::Transpose;
        slots = {d_out, d_in};
    } else {
        if (i >= 0) {
            used[i] = false;  // placed below, or left for the others
        }
        int u0 = -1, u1 = -1, t = -1;
        if (o >= 0) {
            (tiny(d_out) ? u0 : t) = o;
        }
        if (!run && tiny(d_in)) {
            used[i] = true;
            (u0 < 0 ? u0 : u1) = i;
        } else if (!run && u0 == o) {
            used[i] = true;
            t = i;  // the output's dense dim is a block digit: threads along the input's
        }
        if (u0 >= 0 && u1 < 0) {
            u1 = pick([](const ViewDim &d) { return std::min(magnitude(d.in_stride), d.out_stride); }, tiny);
        }
        if (t < 0) {
            t = pick([](const ViewDim &d) { return std::max(magnitude(d.in_stride), d.out_stride); }, any);
        }
        const int t2 = pick(out_key, any);
        slots = {at(u0), at(u1), at(t), at(t2)};
    }
    for (size_t k = 0; k < dims.size(); k++) {
        if (!used[k]) {
            slots.push_back(dims[k]);  // in output order
        }
    }
    while (slots.size() > static_cast<size_t>(kKernelRank)) {
        const ViewDim d = slots.back();
        slots.pop_back();
        plan->loop_dims.insert_front(LoopDim{d.extent, d.in_stride, d.out_stride});
    }
    while (slots.size() < static_cast<size_t>(kKernelRank)) {
        slots.push_back(unit);
    }
    // CUDA's grid: y and z at most kMaxGpuGridBlocks blocks. Slot `tiled` is cut into
    // kGpuTileEdge-element tiles along y; the slots from `fused` up are fused into z. Larger views are
    // walked by the executor, in chunks or as loops.
    const bool transpose = plan->family == KernelFamily::Transpose;
    const int tiled = transpose ? kGpuTransposeTiledSlot : kGpuTiledSlot, fused = tiled + 1;
    auto chunk_slot = [&](int k, int64_t max_extent) {
        ViewDim &d = slots[k];
        if (d.extent > max_extent) {
            plan->loop_dims.push_back({(d.extent + max_extent - 1) / max_extent, d.in_stride * max_extent,
                                       d.out_stride * max_extent, k, max_extent, d.extent});
        }
    };
    chunk_slot(tiled, kMaxGpuGridBlocks * kGpuTileEdge);
    int64_t z_blocks = 1;
    for (int k = fused; k < kKernelRank; k++) {
        z_blocks *= slots[k].extent;  // <= the validated element count
    }
    for (int k = kKernelRank - 1; k >= fused && z_blocks > kMaxGpuGridBlocks; k--) {
        const int64_t others = z_blocks / slots[k].extent;
        if (others <= kMaxGpuGridBlocks) {
            chunk_slot(k, kMaxGpuGridBlocks / others);
            break;
        }
        plan->loop_dims.insert_front(LoopDim{slots[k].extent, slots[k].in_stride, slots[k].out_stride});
        slots[k] = unit;
        z_blocks = others;
    }
    plan->kernel_dims.clear();
    for (const ViewDim &d : slots) plan->kernel_dims.push_back(d);
    plan->parallel = false;  // the grid replaces the CPU pool
}

}  // namespace spacedepth::detail
