// The index algebra's result (view_algebra.cpp): the whole op as a permuted copy.
#pragma once

#include "runtime/problem.h"
#include "runtime/small_vector.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace spacedepth::detail {

// One dimension of a copy: out[i * out_stride] = in[i * in_stride], i < extent.
struct ViewDim {
    int64_t extent;
    int64_t in_stride;
    int64_t out_stride;
};

// At most: the element's byte dim plus the ten digits (n, d, h, w, cv, two of ci, bz, by, bx).
constexpr size_t kMaxDims = 11;
// A view needing more fragments than this is refused (SD_ERROR_UNSUPPORTED): only channel counts
// that no block of the layouts' groups divides get near it (view_algebra.cpp).
constexpr int64_t kMaxFragments = 65536;
using DimList = SmallVector<ViewDim, kMaxDims>;
// Constant (in, out) offset pairs; empty means the single pair (0, 0).
using Fragments = std::vector<std::pair<int64_t, int64_t>>;

// A box of dims, repeated at a list of constant offset pairs (only where a layout's index split
// is not affine; see view_algebra.cpp).
struct View {
    DimList dims;         // strides in elements
    Fragments fragments;  // (in, out) offsets in elements
};

// The view of a validated call, or SD_ERROR_UNSUPPORTED past kMaxFragments.
Status build_view(const Problem &problem, View *view);

}  // namespace spacedepth::detail
