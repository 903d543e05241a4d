// Arrays (a .npy file, a numpy or DLPack array) hold a tensor in its layout's memory order:
// channels last [N, spatial..., C], channels first [N, C, spatial...], blocked
// [N, C/k, spatial..., k]. The library takes logical dims (N, C, spatial...); these helpers map
// between the two for the CLI and the Python module.
#pragma once

#include "spacedepth/spacedepth.h"

#include <cstdint>
#include <string>
#include <vector>

namespace array_layout {

// "" when an array of this shape fits the layout (3-5 dims, plus the lane dim of extent k for a
// blocked layout); otherwise the shapes the layout needs, for a message: "[N,W,C], [N,H,W,C] or
// [N,D,H,W,C]".
std::string misfit(const std::vector<int64_t> &shape, spacedepth::Layout layout);

// Per-array-dim values (a shape or strides) in logical order (N, C or C/k, spatial...), a blocked
// layout's lane dim dropped. The array must fit the layout.
std::vector<int64_t> logical_order(const std::vector<int64_t> &values, spacedepth::Layout layout);

// The array shape of logical dims (N, C, spatial...) in a layout.
std::vector<int64_t> array_shape(const int64_t *dims, int ndim, spacedepth::Layout layout);

}  // namespace array_layout
