// The index algebra, in one place: every (op, order, input layout, output layout, block,
// strides) becomes a permuted copy over the digits of the space-side coordinates, and is then
// normalised into what the kernels run.
//
// SPEC section 2: write the large side's coordinates as y = h*bh + by, x = w*bw + bx. The
// iteration space is the six digits (n, c, h, by, w, bx) with extents (N, Cs, Hd, bh, Wd, bw),
// where Cs is the small side's channel count and Hd, Wd the deep side's spatial dims. Each
// tensor maps a digit tuple to a memory offset:
//   space tensor: (n, c, h*bh + by, w*bw + bx)           affine in every digit
//   deep tensor:  (n, deep(c, by, bx), h, w)             deep = (by*bw + bx)*Cs + c   (DCR)
//                                                        deep = c*bh*bw + by*bw + bx  (CRD)
// so each digit has one stride per tensor, and S2D / D2S differ only in which tensor is read.
// NCHW_VECT_C stores channel c at (c/4)*stride_C + c%4: the channel digit splits into
// (cv, ci) = (c/4, c%4), still affine, except for a deep-side NCHW_VECT_C tensor in CRD order,
// where the deep channel's split does not line up with the digits. There the digits
// (ci, by, bx) are enumerated as fragments: constant offset pairs around an affine box.
#include "runtime/problem.h"
#include "runtime/tuning.h"

#include <algorithm>
#include <array>
#include <sstream>

namespace spacedepth::detail {

namespace {

// One digit of the iteration space: its extent and its stride in the space and deep tensors.
struct Digit {
    int64_t extent;
    int64_t space_stride;
    int64_t deep_stride;
};

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

// Places the real dims in the kernel's kRank slots: up to four innermost dims stay in slots
// 0-3 (the schedules recognise their patterns there), the rest go right-aligned into the last
// slots (the schedules parallelise the last two), unit dims pad the middle.
DimList arrange_for_kernel(const DimList &dims) {
    DimList slots(kKernelRank, ViewDim{1, 0, 0});
    const size_t r = dims.size();
    const size_t inner = r == 0 ? 0 : std::min<size_t>(r - 1, r >= 5 ? 4 : 3);
    for (size_t i = 0; i < r; i++) {
        slots[i < inner ? i : kKernelRank - (r - i)] = dims[i];
    }
    return slots;
}

// The dims whose strides fit the kernel's int32 strides; the others become executor loops.
DimList dims_with_kernel_strides(const DimList &dims, Plan *plan) {
    DimList kept;
    for (const ViewDim &d : dims) {
        const bool big_stride = d.in_stride > kMaxKernelStride || d.out_stride > kMaxKernelStride;
        if (big_stride) {
            plan->loop_dims.push_back({d.extent, d.in_stride, d.out_stride});
        } else {
            kept.push_back(d);
        }
    }
    return kept;
}

// GPU views (schedules/gpu.cpp): the kernel dims by role, so that both sides of a warp's
// accesses are contiguous.
//   general:   [u0, u1, t, t2, r0, r1]. u0, u1: block digits (extent <= 8) dense on one side,
//              done inside one thread; t: the thread index, dense on the output or, when the
//              output's dense dim is a block digit, on the input; t2: the thread index's outer
//              part, the next dim in output order; r0, r1: the rest.
//   transpose: [output's dense dim, input's dense dim, rest...], both long: shared-memory tiles.
void arrange_for_gpu(const DimList &view_dims, Plan *plan) {
    constexpr int64_t kMaxThreadDigit = 8, kMinTransposeExtent = 16;
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
    auto tiny = [](const ViewDim &d) { return d.extent <= kMaxThreadDigit; };
    auto out_key = [](const ViewDim &d) { return d.out_stride; };
    auto in_key = [](const ViewDim &d) { return d.in_stride; };
    auto at = [&](int i) { return i < 0 ? unit : dims[i]; };

    SmallVector<ViewDim, kMaxDims> slots;
    plan->family = KernelFamily::GpuGeneral;
    const int o = pick(out_key, any);
    const int i = o < 0 ? -1 : pick(in_key, any);
    const ViewDim d_out = at(o), d_in = at(i);
    const bool run = i < 0 || d_out.in_stride <= d_in.in_stride;  // the output's densest dim is the input's too
    if (!run && d_out.out_stride == 1 && d_in.in_stride == 1 && d_out.extent >= kMinTransposeExtent &&
        d_in.extent >= kMinTransposeExtent) {
        plan->family = KernelFamily::GpuTranspose;
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
            u1 = pick([](const ViewDim &d) { return std::min(d.in_stride, d.out_stride); }, tiny);
        }
        if (t < 0) {
            t = pick([](const ViewDim &d) { return std::max(d.in_stride, d.out_stride); }, any);
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
    // CUDA's grid: y and z at most 65535 blocks (schedules/gpu.cpp). Slot `tiled` is cut into
    // 32-element tiles along y; the slots from `fused` up are fused into z. Larger views are
    // walked by the executor, in chunks or as loops.
    const bool transpose = plan->family == KernelFamily::GpuTranspose;
    const int tiled = transpose ? 1 : 3, fused = tiled + 1;
    constexpr int64_t kMaxGridBlocks = 65535, kTileEdge = 32;
    auto chunk_slot = [&](int k, int64_t max_extent) {
        ViewDim &d = slots[k];
        if (d.extent > max_extent) {
            plan->loop_dims.push_back({(d.extent + max_extent - 1) / max_extent, d.in_stride * max_extent,
                                       d.out_stride * max_extent, k, max_extent, d.extent});
        }
    };
    chunk_slot(tiled, kMaxGridBlocks * kTileEdge);
    int64_t z_blocks = 1;
    for (int k = fused; k < kKernelRank; k++) {
        z_blocks *= slots[k].extent;  // <= the validated element count
    }
    for (int k = kKernelRank - 1; k >= fused && z_blocks > kMaxGridBlocks; k--) {
        const int64_t others = z_blocks / slots[k].extent;
        if (others <= kMaxGridBlocks) {
            chunk_slot(k, kMaxGridBlocks / others);
            break;
        }
        plan->loop_dims.insert_front(LoopDim{slots[k].extent, slots[k].in_stride, slots[k].out_stride});
        slots[k] = unit;
        z_blocks = others;
    }
    plan->kernel_dims = slots;
    plan->parallel = false;  // the grid replaces the CPU pool
}

}  // namespace

View build_view(const Problem &p) {
    const sd_tensor &S = *p.space();
    const sd_tensor &D = *p.deep();
    const int64_t bh = p.bh, bw = p.bw, area = bh * bw;
    const int64_t N = S.dims[0], Cs = S.dims[1];
    const int64_t Hd = D.dims[2], Wd = D.dims[3];
    const int64_t sN = S.strides[0], sC = S.strides[1], sH = S.strides[2], sW = S.strides[3];
    const int64_t dN = D.strides[0], dC = D.strides[1], dH = D.strides[2], dW = D.strides[3];
    const bool dcr = p.order == SD_ORDER_DCR;
    const bool space_vect = S.layout == SD_LAYOUT_NCHW_VECT_C;
    const bool deep_vect = D.layout == SD_LAYOUT_NCHW_VECT_C;

    SmallVector<Digit, kMaxDims> digits = {
        {N, sN, dN},
        {Hd, bh * sH, dH},
        {Wd, bw * sW, dW},
    };
    // Space-side offset of channel digits: c*sC, or for NCHW_VECT_C (c/4)*sC + c%4.
    // Deep-side offset of deep channel cd: cd*dC, or for NCHW_VECT_C (cd/4)*dC + cd%4.
    Fragments fragments;  // (space, deep); empty: the single pair (0, 0)
    if (!space_vect && !deep_vect) {
        // deep channel = c*cs + by*cby + bx*cbx
        const int64_t cs = dcr ? 1 : area, cby = dcr ? bw * Cs : bw, cbx = dcr ? Cs : 1;
        digits.push_back({Cs, sC, cs * dC});
        digits.push_back({bh, sH, cby * dC});
        digits.push_back({bw, sW, cbx * dC});
    } else {
        // Channel digit split into (cv, ci); validation guarantees Cs % 4 == 0.
        const int64_t s_ci = space_vect ? 1 : sC, s_cv = space_vect ? sC : 4 * sC;
        if (!deep_vect) {
            const int64_t cs = dcr ? 1 : area, cby = dcr ? bw * Cs : bw, cbx = dcr ? Cs : 1;
            digits.push_back({4, s_ci, cs * dC});
            digits.push_back({Cs / 4, s_cv, 4 * cs * dC});
            digits.push_back({bh, sH, cby * dC});
            digits.push_back({bw, sW, cbx * dC});
        } else if (dcr) {
            // cd = (by*bw + bx)*Cs + 4*cv + ci, Cs % 4 == 0: cd%4 = ci, cd/4 = (by*bw + bx)*Cs/4 + cv.
            digits.push_back({4, s_ci, 1});
            digits.push_back({Cs / 4, s_cv, dC});
            digits.push_back({bh, sH, bw * (Cs / 4) * dC});
            digits.push_back({bw, sW, (Cs / 4) * dC});
        } else {
            // cd = (4*cv + ci)*area + by*bw + bx = 4*(cv*area) + t, t = ci*area + by*bw + bx:
            // cv is affine (deep stride area*dC); (ci, by, bx) enter through t/4 and t%4.
            // When area and bw line up with 4 (blocks 2 and 4, for example) t/4 and t%4 are still
            // affine in each digit and the three become ordinary dims; otherwise (block 3, say)
            // they are enumerated as fragments, constant offset pairs around the affine box.
            digits.push_back({Cs / 4, s_cv, area * dC});
            auto deep_off = [&](int64_t ci, int64_t by, int64_t bx) {
                const int64_t t = ci * area + by * bw + bx;
                return (t / 4) * dC + t % 4;
            };
            auto space_off = [&](int64_t ci, int64_t by, int64_t bx) { return ci * s_ci + by * sH + bx * sW; };
            const int64_t d_ci = deep_off(1, 0, 0), d_by = bh > 1 ? deep_off(0, 1, 0) : 0, d_bx = bw > 1 ? deep_off(0, 0, 1) : 0;
            bool affine = true;
            fragments.clear();
            for (int64_t ci = 0; ci < 4; ci++) {
                for (int64_t by = 0; by < bh; by++) {
                    for (int64_t bx = 0; bx < bw; bx++) {
                        affine &= deep_off(ci, by, bx) == ci * d_ci + by * d_by + bx * d_bx;
                        fragments.emplace_back(space_off(ci, by, bx), deep_off(ci, by, bx));
                    }
                }
            }
            if (affine) {
                digits.push_back({4, s_ci, d_ci});
                digits.push_back({bh, sH, d_by});
                digits.push_back({bw, sW, d_bx});
                fragments.clear();
            }
        }
    }

    View view;
    const bool space_is_input = p.op == SD_SPACE_TO_DEPTH;
    for (const Digit &d : digits) {
        view.dims.push_back(space_is_input ? ViewDim{d.extent, d.space_stride, d.deep_stride}
                                           : ViewDim{d.extent, d.deep_stride, d.space_stride});
    }
    for (auto [space_off, deep_off] : fragments) {
        view.fragments.emplace_back(space_is_input ? space_off : deep_off, space_is_input ? deep_off : space_off);
    }
    return view;
}

Plan normalize(const Problem &p, const View &view, Device device) {
    // Work in bytes, with the element as an innermost dim of contiguous bytes, so that the
    // element width, merged runs and widening are one mechanism.
    const int64_t e = p.elem_bytes;
    DimList dims = {{e, 1, 1}};
    for (const ViewDim &d : view.dims) {
        if (d.extent != 1) {
            // Validation bounded (extent-1)*stride*e by the tensor span, so this cannot overflow.
            dims.push_back({d.extent, d.in_stride * e, d.out_stride * e});
        }
    }
    dims.erase(std::remove_if(dims.begin(), dims.end(), [](const ViewDim &d) { return d.extent == 1; }), dims.end());
    Fragments fragments;
    for (auto [i, o] : view.fragments) {
        fragments.emplace_back(i * e, o * e);
    }

    // Write the output in memory order: the kernel's dim 0 is the output's densest dim.
    std::stable_sort(dims.begin(), dims.end(), [](const ViewDim &a, const ViewDim &b) {
        return a.out_stride != b.out_stride ? a.out_stride < b.out_stride : a.in_stride < b.in_stride;
    });

    dims = merge_contiguous(dims);

    // Widen: the largest kernel element (8/4/2/1 bytes) that divides the contiguous innermost run,
    // every stride, every offset and both base addresses.
    Plan plan;
    const uintptr_t in_addr = reinterpret_cast<uintptr_t>(p.in.data), out_addr = reinterpret_cast<uintptr_t>(p.out.data);
    for (int w : {8, 4, 2, 1}) {
        bool ok = in_addr % w == 0 && out_addr % w == 0;
        for (size_t i = 0; i < dims.size(); i++) {
            const bool run = i == 0 && dims[0].in_stride == 1 && dims[0].out_stride == 1;
            ok &= run ? dims[0].extent % w == 0 : (dims[i].in_stride % w == 0 && dims[i].out_stride % w == 0);
        }
        if (!dims.empty() && !(dims[0].in_stride == 1 && dims[0].out_stride == 1)) {
            ok &= w == 1;  // no contiguous run: the element is bytes unless strides allow more (below)
        }
        for (auto [i, o] : fragments) {
            ok &= i % w == 0 && o % w == 0;
        }
        if (ok) {
            plan.width = w;
            break;
        }
    }
    for (size_t i = 0; i < dims.size(); i++) {
        const bool run = i == 0 && dims[0].in_stride == 1 && dims[0].out_stride == 1;
        if (run) {
            dims[0].extent /= plan.width;
        } else {
            dims[i].in_stride /= plan.width;
            dims[i].out_stride /= plan.width;
        }
    }
    for (auto &[i, o] : fragments) {
        i /= plan.width;
        o /= plan.width;
    }
    dims.erase(std::remove_if(dims.begin(), dims.end(), [](const ViewDim &d) { return d.extent == 1; }), dims.end());
    plan.fragments = fragments;
    if (device != Device::Host) {
        plan.device = device;
        arrange_for_gpu(dims, &plan);
        return plan;
    }

    // Loop order. Dim 0 stays the output's densest dim (vector stores). When dim 0 is a run
    // (contiguous in both) or a small block digit to unroll, the next dims stay in output order,
    // so the unrolled block and the vectorised dim form dense output (the schedules' interleave,
    // short-run and small-transpose patterns). Otherwise dim 0 gathers along a long row, and the
    // others follow the space tensor's memory order, so its rows are walked once, in order:
    // NCHW SpaceToDepth then produces all bh*bw planes of an output row from bh consecutive
    // input rows. Measured at 64 MiB, 1 thread, S2D NCHW DCR f32 C64: 0.59x memcpy with the
    // input rows read in bh strided passes, vs 0.71x of the row order in shared/PERF-NOTES.md.
    constexpr int64_t kMaxUnrolledExtent = 8;
    const SwitchPoints points = switch_points();
    const bool space_is_input = p.op == SD_SPACE_TO_DEPTH;
    // Reorders dims 1.. innermost first by their stride in the input or the output tensor.
    auto follow_tensor = [&dims](bool input) {
        std::stable_sort(dims.begin() + 1, dims.end(), [input](const ViewDim &a, const ViewDim &b) {
            return input ? a.in_stride < b.in_stride : a.out_stride < b.out_stride;
        });
        dims = merge_contiguous(dims);
    };
    if (dims.size() > 2 && dims[0].in_stride != 1 && dims[0].extent > kMaxUnrolledExtent) {
        follow_tensor(space_is_input);
    }
    // Long runs (long_run_bytes, 64 by default, and more) walk the deep tensor in memory order: each deep pixel's
    // bh*bw runs are handled together, the space tensor sees bh row streams. Measured at 64 MiB,
    // 1 thread (D2S NHWC DCR f32): C64 b2 11.2 -> 17.2 GB/s, C16 b4 12.5 -> 19.2 GB/s, ahead of
    // XNNPACK (11.8, 18.9); SpaceToDepth already walked its (output) deep side in order.
    if (dims.size() > 2 && dims[0].in_stride == 1 && dims[0].out_stride == 1 &&
        dims[0].extent * plan.width >= points.long_run_bytes) {
        follow_tensor(!space_is_input);
    }

    // Fit the kernel: dims whose stride does not fit int32, and the outermost dims beyond the
    // kernel's rank, become loops in the executor; extents beyond int32 are walked in chunks.
    plan.kernel_dims = dims_with_kernel_strides(dims, &plan);
    while (plan.kernel_dims.size() > static_cast<size_t>(kKernelRank)) {
        const ViewDim d = plan.kernel_dims.back();
        plan.kernel_dims.pop_back();
        plan.loop_dims.insert_front(LoopDim{d.extent, d.in_stride, d.out_stride});
    }
    plan.kernel_dims = arrange_for_kernel(plan.kernel_dims);
    // A transpose: the output's dense dim gathers across long input strides while dim 1 is the
    // input's dense dim, both long (transpose_min_extent). Small constant strides stay with the
    // general family, whose deinterleave patterns handle them with shuffles.
    constexpr int64_t kMaxDeinterleaveStride = 16;
    const ViewDim &d0 = plan.kernel_dims[0], &d1 = plan.kernel_dims[1];
    if (d0.out_stride == 1 && d0.in_stride > kMaxDeinterleaveStride && d0.extent >= points.transpose_min_extent &&
        d1.in_stride == 1 && d1.extent >= points.transpose_min_extent) {
        plan.family = KernelFamily::Transpose;
    }
    if (p.bytes < points.small_max_bytes) {
        plan.family = KernelFamily::Small;
    }
    for (size_t i = 0; i < plan.kernel_dims.size(); i++) {
        ViewDim &d = plan.kernel_dims[i];
        if (d.extent > kMaxKernelExtent) {
            const int64_t chunk = int64_t{1} << 30;
            plan.loop_dims.push_back({(d.extent + chunk - 1) / chunk, d.in_stride * chunk, d.out_stride * chunk,
                                      static_cast<int>(i), chunk, d.extent});
        }
    }
    plan.parallel = p.threads != 1 && p.bytes >= points.parallel_min_bytes;
    return plan;
}

std::string describe_plan(const Plan &plan) {
    std::ostringstream s;
    static const char *const kFamilyNames[] = {"general", "transpose", "small", "GPU general", "GPU transpose"};
    static const char *const kDeviceNames[] = {"", "CUDA ", "OpenCL "};
    s << kDeviceNames[static_cast<int>(plan.device)] << kFamilyNames[static_cast<int>(plan.family)] << " u" << plan.width * 8 << " kernel, dims (extent:in_stride:out_stride, innermost first)";
    for (const ViewDim &d : plan.kernel_dims) {
        s << " " << d.extent << ":" << d.in_stride << ":" << d.out_stride;
    }
    if (!plan.loop_dims.empty()) {
        s << ", " << plan.loop_dims.size() << " outer loop dim(s)";
    }
    if (plan.fragments.size() > 1) {
        s << ", " << plan.fragments.size() << " fragments";
    }
    s << (plan.parallel ? ", parallel" : ", serial");
    return s.str();
}

}  // namespace spacedepth::detail
