// The index algebra, in one place: what the op computes. Every (op, order, input layout, output
// layout, block, strides) becomes a permuted copy over the digits of the space-side coordinates
// (a View). Planning (plan_cpu.cpp, plan_gpu.cpp) then turns the View into kernel calls.
//
// docs/SPEC.md section 2: write the large side's coordinates as y = h*bh + by, x = w*bw + bx. The
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
#include "runtime/view.h"

namespace spacedepth::detail {

namespace {

// One digit of the iteration space: its extent and its stride in the space and deep tensors.
struct Digit {
    int64_t extent;
    int64_t space_stride;
    int64_t deep_stride;
};

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
            const int64_t d_ci = deep_off(1, 0, 0), d_by = bh > 1 ? deep_off(0, 1, 0) : 0,
                          d_bx = bw > 1 ? deep_off(0, 0, 1) : 0;
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

}  // namespace spacedepth::detail
