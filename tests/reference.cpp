#include "tests/reference.h"

#include <cstring>

namespace reference {

int64_t byte_offset(const TensorRef &t, int64_t n, int64_t c, int64_t h, int64_t w) {
    int64_t element;
    if (t.layout == Layout::NCHW_VECT_C) {
        // [N, C/4, H, W, 4]: channel c lives in group c/4, lane c%4.
        element = n * t.strides[0] + (c / 4) * t.strides[1] + h * t.strides[2] + w * t.strides[3] + c % 4;
    } else {
        element = n * t.strides[0] + c * t.strides[1] + h * t.strides[2] + w * t.strides[3];
    }
    return element * t.elem_bytes;
}

namespace {

// docs/SPEC.md section 2: the deep-side channel for small-side channel c at block position (by, bx).
int64_t deep_channel(int64_t c, int64_t by, int64_t bx, int64_t small_channels, int64_t bh, int64_t bw, bool crd) {
    return crd ? c * bh * bw + by * bw + bx : (by * bw + bx) * small_channels + c;
}

// Walks every element of the space-side tensor and copies it to or from the deep side.
void walk(const TensorRef &space, const TensorRef &deep, int64_t bh, int64_t bw, bool crd, bool space_to_deep) {
    const int64_t N = space.dims[0], C = space.dims[1], H = space.dims[2], W = space.dims[3];
    for (int64_t n = 0; n < N; n++) {
        for (int64_t c = 0; c < C; c++) {
            for (int64_t y = 0; y < H; y++) {
                for (int64_t x = 0; x < W; x++) {
                    const int64_t by = y % bh, bx = x % bw;
                    const int64_t cd = deep_channel(c, by, bx, C, bh, bw, crd);
                    uint8_t *s = space.data + byte_offset(space, n, c, y, x);
                    uint8_t *d = deep.data + byte_offset(deep, n, cd, y / bh, x / bw);
                    if (space_to_deep) {
                        std::memcpy(d, s, space.elem_bytes);
                    } else {
                        std::memcpy(s, d, space.elem_bytes);
                    }
                }
            }
        }
    }
}

}  // namespace

void depth_to_space(const TensorRef &in, const TensorRef &out, int64_t bh, int64_t bw, bool crd) {
    walk(out, in, bh, bw, crd, /*space_to_deep=*/false);
}

void space_to_depth(const TensorRef &in, const TensorRef &out, int64_t bh, int64_t bw, bool crd) {
    walk(in, out, bh, bw, crd, /*space_to_deep=*/true);
}

}  // namespace reference
