// The index algebra, in one place: what the op computes. Every (op, order, input layout, output
// layout, block, strides), at every spatial rank, becomes a permuted copy over the digits of the
// space-side coordinates (a View). Planning (plan_cpu.cpp, plan_gpu.cpp) then turns the View into
// kernel calls.
//
// docs/SPEC.md section 2, in the 5-D form every call takes here (problem.h: a rank-1 or rank-2
// call has unit D and H): write the large side's coordinates as z = d*bd + bz, y = h*bh + by,
// x = w*bw + bx, and the block position k = (bz*bh + by)*bw + bx. The iteration space is the
// digits (n, c, d, bz, h, by, w, bx) with extents (N, Cs, Dd, bd, Hd, bh, Wd, bw), where Cs is the
// small side's channel count and Dd, Hd, Wd the deep side's spatial dims. Each tensor maps a
// digit tuple to a memory offset:
//   space tensor: (n, c, z, y, x)                  affine in every digit
//   deep tensor:  (n, cd, d, h, w)                 cd = k*Cs + c          (DCR)
//                                                  cd = c*bd*bh*bw + k    (CRD)
// so each digit has one stride per tensor, and S2D / D2S differ only in which tensor is read.
//
// Blocked layouts (NCHWC4/8/16, NCHW_VECT_C) store channel c at (c/k)*stride_C + c%k, which is
// not affine in c. The channel digit splits as c = q*cv + ci with q a multiple of the space
// side's k, chosen so that cv's step in the deep channel is a multiple of the deep side's k: then
// cv is affine on both sides, and so is each block digit whose step in cd is such a multiple.
// The rest, ci and the other block digits, enter only through offsets that wrap at k. They are
// enumerated as fragments, constant offset pairs around the affine box, and each of them whose
// offsets turn out affine after all (ci within one group, blocks that line up with k) becomes an
// ordinary dim again. Unblocked layouts have k = 1: every digit is affine, there is no fragment.
#include "runtime/view.h"

#include <algorithm>
#include <numeric>

namespace spacedepth::detail {

namespace {

// One digit of the iteration space: its extent and its stride in the space and deep tensors.
struct Digit {
    int64_t extent;
    int64_t space_stride;
    int64_t deep_stride;
};

// A digit enumerated in fragments: a part of the channel's low part ci (block_dim -1; the channel
// is the sum of those digits times their `scale`) or a block digit.
struct FragmentDigit {
    int64_t extent;
    int block_dim;
    int64_t scale = 1;
};
using FragmentDigits = SmallVector<FragmentDigit, kMaxSpatialRank + 2>;
using Point = SmallVector<int64_t, kMaxSpatialRank + 2>;

// Calls f on every point of the digits' box, the first digit fastest.
template <typename F>
void for_each_point(const FragmentDigits &digits, F f) {
    Point x(digits.size(), 0);
    while (true) {
        f(x);
        size_t i = 0;
        for (; i < digits.size(); i++) {
            if (++x[i] < digits[i].extent) break;
            x[i] = 0;
        }
        if (i == digits.size()) return;
    }
}

}  // namespace

Status build_view(const Problem &p, View *view) {
    const sd_tensor &S = *p.space();
    const sd_tensor &D = *p.deep();
    const int64_t *B = p.block;
    const int64_t Cs = S.dims[1], area = B[0] * B[1] * B[2];
    const bool dcr = p.order == SD_ORDER_DCR;
    const int64_t ks = layout_lanes(S.layout), kd = layout_lanes(D.layout);
    const int64_t sC = S.strides[1], dC = D.strides[1];

    SmallVector<Digit, kMaxDims> digits = {{S.dims[0], S.strides[0], D.strides[0]}};
    for (int i = 0; i < kMaxSpatialRank; i++) {
        digits.push_back({D.dims[2 + i], B[i] * S.strides[2 + i], D.strides[2 + i]});
    }
    // The deep channel: cd = c*chan_step + sum over i of b_i*block_step[i].
    const int64_t chan_step = dcr ? 1 : area;
    int64_t block_step[kMaxSpatialRank], position = 1;  // position: the block size inside dim i
    for (int i = kMaxSpatialRank - 1; i >= 0; i--) {
        block_step[i] = dcr ? position * Cs : position;
        position *= B[i];
    }
    auto space_channel = [&](int64_t c) { return (c / ks) * sC + c % ks; };
    auto deep_channel = [&](int64_t cd) { return (cd / kd) * dC + cd % kd; };

    // c = q*cv + ci: the smallest q that is a multiple of ks with q*chan_step a multiple of kd, if
    // it divides Cs; otherwise q = Cs and every channel is enumerated (cv has extent 1).
    const int64_t g = std::gcd(kd, chan_step), q0 = std::lcm(ks, kd / g);
    const int64_t q = Cs % q0 == 0 ? q0 : Cs;
    if (Cs / q > 1) {  // cv's step in cd, q*chan_step/kd groups, formed without overflow
        digits.push_back({Cs / q, (q / ks) * sC, (chan_step / g) * (q / (kd / g)) * dC});
    }
    // ci in two digits where the two sides' wrap points differ: the space side wraps every ks
    // channels, the deep side every kd/g. Split at the smaller, each part can turn out affine on
    // its own (NCHWc8 CRD, block 2x2, 8 channels: both parts, so no fragment at all).
    FragmentDigits fragment_digits;
    const int64_t low = std::min(ks, kd / g);
    if (q > 1 && low > 1 && low < q && q % low == 0) {
        fragment_digits.push_back({low, -1, 1});
        fragment_digits.push_back({q / low, -1, low});
    } else if (q > 1) {
        fragment_digits.push_back({q, -1, 1});
    }
    for (int i = 0; i < kMaxSpatialRank; i++) {
        if (B[i] > 1 && block_step[i] % kd != 0) {
            fragment_digits.push_back({B[i], i});
        } else {
            digits.push_back({B[i], S.strides[2 + i], (block_step[i] / kd) * dC});
        }
    }

    int64_t points = 1;
    for (const FragmentDigit &f : fragment_digits) points *= f.extent;  // <= Cs * area
    if (points > kMaxFragments) {
        return error(SD_ERROR_UNSUPPORTED,
                     std::string(op_label(p.op)) + ": " + std::to_string(Cs) + " small-side channels in " +
                         layout_label(S.layout) + " against " + layout_label(D.layout) + " in " + order_label(p.order) +
                         " order need " + std::to_string(points) + " copy fragments (at most " +
                         std::to_string(kMaxFragments) + "): a channel count that is a multiple of " +
                         std::to_string(q0) + " needs none");
    }
    // (space, deep) offsets of a point of the fragment digits.
    auto offsets = [&](const FragmentDigits &f, const Point &x) {
        int64_t space = 0, c = 0, cd = 0;
        for (size_t j = 0; j < f.size(); j++) {
            if (f[j].block_dim < 0) {
                c += x[j] * f[j].scale;
            } else {
                space += x[j] * S.strides[2 + f[j].block_dim];
                cd += x[j] * block_step[f[j].block_dim];
            }
        }
        return std::pair<int64_t, int64_t>(space + space_channel(c), deep_channel(cd + c * chan_step));
    };
    // A fragment digit whose offsets are affine in it becomes a dim again.
    for (size_t j = 0; j < fragment_digits.size();) {
        Point unit(fragment_digits.size(), 0);
        unit[j] = 1;
        const auto step = offsets(fragment_digits, unit);
        bool affine = true;
        for_each_point(fragment_digits, [&](const Point &x) {
            Point base = x;
            base[j] = 0;
            const auto at = offsets(fragment_digits, x), from = offsets(fragment_digits, base);
            affine &= at.first == from.first + x[j] * step.first && at.second == from.second + x[j] * step.second;
        });
        if (!affine) {
            j++;
            continue;
        }
        digits.push_back({fragment_digits[j].extent, step.first, step.second});
        FragmentDigits rest;
        for (size_t k = 0; k < fragment_digits.size(); k++) {
            if (k != j) rest.push_back(fragment_digits[k]);
        }
        fragment_digits = rest;
        j = 0;
    }
    Fragments fragments;  // (space, deep); empty: the single pair (0, 0)
    if (!fragment_digits.empty()) {
        for_each_point(fragment_digits, [&](const Point &x) { fragments.push_back(offsets(fragment_digits, x)); });
    }

    const bool space_is_input = p.op == SD_SPACE_TO_DEPTH;
    view->dims.clear();
    for (const Digit &d : digits) {
        view->dims.push_back(space_is_input ? ViewDim{d.extent, d.space_stride, d.deep_stride}
                                            : ViewDim{d.extent, d.deep_stride, d.space_stride});
    }
    view->fragments.clear();
    for (auto [space_off, deep_off] : fragments) {
        view->fragments.emplace_back(space_is_input ? space_off : deep_off, space_is_input ? deep_off : space_off);
    }
    return {};
}

}  // namespace spacedepth::detail
