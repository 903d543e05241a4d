#include "tests/reference.h"

#include <cstring>

namespace reference {

int64_t byte_offset(const TensorRef &t, const int64_t *coord) {
    int64_t element = 0;
    for (int i = 0; i < t.ndim; i++) {
        if (i == 1 && t.layout == Layout::Blocked) {
            // [N, C/k, spatial..., k]: channel c lives in group c/k, lane c%k.
            element += (coord[1] / t.lanes) * t.strides[1] + coord[1] % t.lanes;
        } else {
            element += coord[i] * t.strides[i];
        }
    }
    return element * t.elem_bytes;
}

namespace {

// Walks every element of the space-side tensor and copies it to or from the deep side.
// docs/SPEC.md section 2: for a space coordinate y_i, the block offset is b_i = y_i % block_i and
// the deep coordinate y_i / block_i; the block position is k = (b_0*block_1 + b_1)*block_2 + b_2
// (row-major over the block), and the deep channel is k*C + c (DCR) or c*volume + k (CRD).
void walk(const TensorRef &space, const TensorRef &deep, const int64_t *block, bool crd, bool space_to_deep) {
    const int rank = space.ndim - 2;
    const int64_t C = space.dims[1];
    int64_t volume = 1, count = 1;
    for (int i = 0; i < rank; i++) volume *= block[i];
    for (int i = 0; i < space.ndim; i++) count *= space.dims[i];
    int64_t coord[kMaxDims] = {}, deep_coord[kMaxDims];
    for (int64_t e = 0; e < count; e++) {
        // coord: the e-th logical coordinate, the last dim fastest.
        int64_t rest = e;
        for (int i = space.ndim - 1; i >= 0; i--) {
            coord[i] = rest % space.dims[i];
            rest /= space.dims[i];
        }
        int64_t k = 0;
        for (int i = 0; i < rank; i++) {
            k = k * block[i] + coord[2 + i] % block[i];
            deep_coord[2 + i] = coord[2 + i] / block[i];
        }
        deep_coord[0] = coord[0];
        deep_coord[1] = crd ? coord[1] * volume + k : k * C + coord[1];
        uint8_t *s = space.data + byte_offset(space, coord);
        uint8_t *d = deep.data + byte_offset(deep, deep_coord);
        if (space_to_deep) {
            std::memcpy(d, s, space.elem_bytes);
        } else {
            std::memcpy(s, d, space.elem_bytes);
        }
    }
}

}  // namespace

void depth_to_space(const TensorRef &in, const TensorRef &out, const int64_t *block, bool crd) {
    walk(out, in, block, crd, /*space_to_deep=*/false);
}

void space_to_depth(const TensorRef &in, const TensorRef &out, const int64_t *block, bool crd) {
    walk(in, out, block, crd, /*space_to_deep=*/true);
}

}  // namespace reference
