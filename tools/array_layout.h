// Arrays (a .npy file, a numpy or DLPack array) hold a tensor in its layout's memory order:
// channels last [N, spatial..., C], channels first [N, C, spatial...], blocked
// [N, C/k, spatial..., k]. The library takes logical dims (N, C, spatial...); these helpers map
// between the two for the CLI, the Python module and the framework libraries (frameworks/). The
// functions that can fail return "" or one line naming the rule, for each caller to raise its own
// way.
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

// A shape as Python prints a tuple: "(1, 2)", "(3,)".
std::string shape_str(const std::vector<int64_t> &shape);

// A layout or order by name (the C++ API's spellings); `which` names the argument.
std::string parse_layout(const std::string &name, const char *which, sd_layout *layout);
std::string parse_order(const std::string &name, sd_order *order);
std::string parse_op(const std::string &name, sd_op *op);

// t's ndim, dims, layout and (where strides, in elements, are given) strides for an array of this
// shape in a layout. A blocked layout whose lanes are not adjacent but whose groups step k lanes
// is the same memory as channels first, and becomes NCHW. `which` names the array.
std::string describe(const std::vector<int64_t> &shape, const std::vector<int64_t> *strides, sd_layout layout,
                     const char *which, sd_tensor *t);

// The block (one size: square at every spatial dim, or one per spatial dim, outermost first) as
// the sd_params of tensors of ndim logical dims.
std::string params_of(sd_op op, const std::vector<int64_t> &block, sd_order order, int ndim, int threads,
                      sd_params *params);

// The strides (elements) of a C-contiguous array of this shape.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t> &shape);

// The output array shape in out_layout of a call on an input already described (describe,
// params_of).
std::string output_array_shape(const sd_params &params, const sd_tensor &in, sd_layout out_layout,
                               std::vector<int64_t> *out_shape);

// The output array shape for an input array shape (the runtime's message where shapes do not
// divide).
std::string output_shape(sd_op op, const std::vector<int64_t> &in_shape, const std::vector<int64_t> &block,
                         sd_order order, sd_layout layout, sd_layout out_layout, std::vector<int64_t> *out_shape);

}  // namespace array_layout
