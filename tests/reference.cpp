#include "tests/reference.h"

#include <cstring>
#include <vector>

namespace reference {

int64_t dim_byte_offset(const TensorRef &t, int dim, int64_t x) {
    if (dim == 1 && t.layout == Layout::Blocked) {
        // [N, C/k, spatial..., k]: channel c lives in group c/k, lane c%k.
        return ((x / t.lanes) * t.strides[1] + x % t.lanes) * t.elem_bytes;
    }
    return x * t.strides[dim] * t.elem_bytes;
}

int64_t byte_offset(const TensorRef &t, const int64_t *coord) {
    int64_t offset = 0;
    for (int i = 0; i < t.ndim; i++) offset += dim_byte_offset(t, i, coord[i]);
    return offset;
}

void next_coord(int64_t *coord, const int64_t *dims, int ndim) {
    for (int i = ndim - 1; i >= 0 && ++coord[i] == dims[i]; i--) coord[i] = 0;
}

namespace {

// Every byte offset along one dim of t, by coordinate (the walk below visits each many times).
std::vector<int64_t> offsets_along(const TensorRef &t, int dim) {
    std::vector<int64_t> offsets(static_cast<size_t>(t.dims[dim]));
    for (int64_t x = 0; x < t.dims[dim]; x++) offsets[x] = dim_byte_offset(t, dim, x);
    return offsets;
}

// One element of `bytes` bytes; a fixed size per case, so the copy is one move, not a call.
void copy_element(uint8_t *to, const uint8_t *from, int bytes) {
    switch (bytes) {
    case 1: std::memcpy(to, from, 1); return;
    case 2: std::memcpy(to, from, 2); return;
    case 4: std::memcpy(to, from, 4); return;
    case 8: std::memcpy(to, from, 8); return;
    case 16: std::memcpy(to, from, 16); return;
    default: std::memcpy(to, from, static_cast<size_t>(bytes)); return;
    }
}

// Walks every element of the space-side tensor and copies it to or from the deep side.
// docs/SPEC.md section 2: for a space coordinate y_i, the block offset is b_i = y_i % block_i and
// the deep coordinate y_i / block_i; the block position is k = (b_0*block_1 + b_1)*block_2 + b_2
// (row-major over the block), and the deep channel is k*C + c (DCR) or c*volume + k (CRD).
// Each formula is evaluated once per coordinate value and dim, and looked up per element.
void walk(const TensorRef &space, const TensorRef &deep, const int64_t *block, bool crd, bool space_to_deep) {
    const int rank = space.ndim - 2;
    const int64_t C = space.dims[1];
    int64_t volume = 1, count = 1;
    for (int i = 0; i < rank; i++) volume *= block[i];
    for (int i = 0; i < space.ndim; i++) count *= space.dims[i];
    if (count == 0) return;
    std::vector<int64_t> space_offset[kMaxDims], deep_offset[kMaxDims], block_digit[kMaxDims];
    for (int i = 0; i < space.ndim; i++) space_offset[i] = offsets_along(space, i);
    deep_offset[0] = offsets_along(deep, 0);
    deep_offset[1] = offsets_along(deep, 1);  // by deep channel
    for (int i = 2; i < space.ndim; i++) {
        const std::vector<int64_t> deep_along = offsets_along(deep, i);
        for (int64_t y = 0; y < space.dims[i]; y++) {
            block_digit[i].push_back(y % block[i - 2]);
            deep_offset[i].push_back(deep_along[y / block[i - 2]]);
        }
    }
    int64_t coord[kMaxDims] = {};
    for (int64_t e = 0; e < count; e++, next_coord(coord, space.dims, space.ndim)) {
        int64_t k = 0, s = space_offset[0][coord[0]] + space_offset[1][coord[1]], d = deep_offset[0][coord[0]];
        for (int i = 2; i < space.ndim; i++) {
            k = k * block[i - 2] + block_digit[i][coord[i]];
            s += space_offset[i][coord[i]];
            d += deep_offset[i][coord[i]];
        }
        d += deep_offset[1][crd ? coord[1] * volume + k : k * C + coord[1]];
        if (space_to_deep) {
            copy_element(deep.data + d, space.data + s, space.elem_bytes);
        } else {
            copy_element(space.data + s, deep.data + d, space.elem_bytes);
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
