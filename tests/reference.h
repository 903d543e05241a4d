// The test reference: a scalar SpaceToDepth / DepthToSpace written straight from docs/SPEC.md
// sections 1-3, one element at a time over logical coordinates. It shares no index code with the
// runtime's view algebra (runtime/view_algebra.cpp), so one bug cannot hide in both.
#pragma once

#include <cstdint>

namespace reference {

enum class Layout { NHWC, NCHW, NCHW_VECT_C };

struct TensorRef {
    uint8_t *data;
    int elem_bytes;
    Layout layout;
    int64_t dims[4];     // N, C, H, W
    int64_t strides[4];  // elements; NCHW_VECT_C: C's stride steps a group of 4 channels
};

// Byte offset of logical element (n, c, h, w).
int64_t byte_offset(const TensorRef &t, int64_t n, int64_t c, int64_t h, int64_t w);

// out = depth_to_space(in) or space_to_depth(in); crd selects the CRD order, else DCR.
void depth_to_space(const TensorRef &in, const TensorRef &out, int64_t bh, int64_t bw, bool crd);
void space_to_depth(const TensorRef &in, const TensorRef &out, int64_t bh, int64_t bw, bool crd);

}  // namespace reference
