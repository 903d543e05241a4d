// The test reference: a scalar SpaceToDepth / DepthToSpace written straight from docs/SPEC.md
// sections 1-3, one element at a time over logical coordinates, at spatial rank 1, 2 and 3. It
// shares no index code with the runtime's view algebra (runtime/view_algebra.cpp), so one bug
// cannot hide in both.
#pragma once

#include <cstdint>

namespace reference {

// Channels last, channels first, or channels in groups of `lanes` ([N, C/k, spatial..., k]).
enum class Layout { ChannelsLast, ChannelsFirst, Blocked };

constexpr int kMaxDims = 5;

struct TensorRef {
    uint8_t *data;
    int elem_bytes;
    Layout layout;
    int lanes;                  // Blocked: channels per group (4, 8 or 16)
    int ndim;                   // 3, 4 or 5
    int64_t dims[kMaxDims];     // N, C, spatial...
    int64_t strides[kMaxDims];  // elements; Blocked: C's stride steps a group
};

// The logical coordinate after coord in row-major order (the last dim fastest); all zeros after
// the last one.
void next_coord(int64_t *coord, const int64_t *dims, int ndim);

// Byte offset of the logical element at coord (ndim entries: n, c, spatial...): the sum of its
// coordinates' offsets along each dim.
int64_t byte_offset(const TensorRef &t, const int64_t *coord);
int64_t dim_byte_offset(const TensorRef &t, int dim, int64_t x);

// out = depth_to_space(in) or space_to_depth(in); block has ndim-2 sizes, outermost first; crd
// selects the CRD order, else DCR.
void depth_to_space(const TensorRef &in, const TensorRef &out, const int64_t *block, bool crd);
void space_to_depth(const TensorRef &in, const TensorRef &out, const int64_t *block, bool crd);

}  // namespace reference
