// A validated call, and the core every public API calls (call.h). The core works in the C API's
// structs (sd_params, sd_tensor); the C API passes them through, the C++ API converts to them.
#pragma once

#include "spacedepth/spacedepth.h"

#include <cstdint>
#include <string>

namespace spacedepth::detail {

constexpr int kMaxSpatialRank = 3;  // D, H, W

// A validated call, at every rank in one form: in and out are 5-D (N, C, D, H, W), the dims the
// call's rank lacks given extent 1 and stride 0, and the block is (bd, bh, bw) with 1 for those
// dims. The "space" tensor is the one with the large spatial dims (S2D input, D2S output); the
// "deep" tensor has bd*bh*bw times the channels.
struct Problem {
    sd_op op;
    sd_order order;
    int64_t block[kMaxSpatialRank];  // bd, bh, bw
    int spatial_rank;                // of the call: 1, 2 or 3
    sd_tensor in, out;
    const sd_tensor *space() const { return op == SD_SPACE_TO_DEPTH ? &in : &out; }
    const sd_tensor *deep() const { return op == SD_SPACE_TO_DEPTH ? &out : &in; }
    int64_t elem_bytes;
    int64_t bytes;  // bytes of one tensor (input and output are the same size)
    bool empty;     // some dim is 0: valid, nothing to do
    int threads;
    int64_t in_low_bytes, out_low_bytes;    // each tensor's lowest byte from its data pointer (< 0: negative strides)
    int64_t in_span_bytes, out_span_bytes;  // from each tensor's lowest byte to one past its highest
};

// The op, order, block and thread rules, for tensors of ndim dims.
Status check_params(const sd_params &params, int ndim);
// The output dims params imply for ndim in_dims (after check_params): divisibility and overflow rules.
Status implied_dims(const sd_params &params, int ndim, const int64_t *in_dims, int64_t *out_dims);
// Checks every rule of docs/SPEC.md section 5. On success fills *problem.
Status validate(const sd_params &params, const sd_tensor &in, const sd_tensor &out, Problem *problem);
// The rules that do not depend on the data pointers (a plan's create), and those that do (its
// run): null data with a non-zero size, and overlapping input and output memory.
Status validate_layout(const sd_params &params, const sd_tensor &in, const sd_tensor &out, Problem *problem);
Status validate_memory(const Problem &problem, const void *in, const void *out);

// The names of the dtypes, layouts, ops and orders, and the dtypes' sizes: one table each
// (names.cpp), which both public APIs read. Out of range: 0 or nullptr; an unknown name: -1.
int dtype_bytes(sd_dtype dtype);
const char *dtype_label(sd_dtype dtype);
const char *layout_label(sd_layout layout);
const char *op_label(sd_op op);
const char *order_label(sd_order order);
int dtype_index(const std::string &name);
// The dtype policy of every front end (sd_dtype_from_typestr): numpy's type string to the dtype
// that moves it, or why not.
Status dtype_from_typestr(const std::string &typestr, sd_dtype *dtype);
int layout_index(const std::string &name);
int op_index(const std::string &name);
int order_index(const std::string &name);
// For messages: "NHWC (0), NCHW (1), ...", and the same for ops and orders.
std::string layout_choices();
std::string op_choices();
std::string order_choices();
// Channels per group of a blocked layout (NCHWC4/8/16, NCHW_VECT_C); 1 for NHWC and NCHW.
int64_t layout_lanes(sd_layout layout);
// The dense strides of a layout for ndim dims, or an error (ndim, negative dims, the blocked
// layouts' divisibility, overflow).
Status dense_strides(sd_layout layout, int ndim, const int64_t *dims, int64_t *strides);

// Shared formatting for error messages.
Status error(sd_status code, const std::string &message);
std::string dims_str(int ndim, const int64_t *dims);  // "[1,3,8,8]"
// "[op: ]which ndim must be 3, 4 or 5" for one tensor, or ok; the message is formed only on failure.
Status check_ndim(int ndim, const char *op, const char *which);

}  // namespace spacedepth::detail
