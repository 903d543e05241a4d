// The first seed example of docs/SPEC.md section 6 through the installed C++ API, both directions:
// TensorFlow SpaceToDepth, NHWC, DCR, block 2, input [1, 4, 4, 1]; then DepthToSpace from the
// blocked layout NCHWc8 into NCHW. Exits 0 only if every result is exactly docs/SPEC.md's.
#include <spacedepth/spacedepth.h>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
    // NHWC [1, 4, 4, 1] -> [1, 2, 2, 4]
    std::vector<float> space = {1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16};
    const std::vector<float> want = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    std::vector<float> deep(16, -1.0f), back(16, -1.0f);

    using namespace spacedepth;
    // Tensor dims are always (N, C, H, W); the layout says how they sit in memory.
    const Tensor in = Tensor::dense(space.data(), DType::Float32, Layout::NHWC, {1, 1, 4, 4});
    const Tensor out = Tensor::dense(deep.data(), DType::Float32, Layout::NHWC, {1, 4, 2, 2});
    Status s = space_to_depth(in, out, Block(2));
    if (!s.ok()) {
        std::fprintf(stderr, "space_to_depth failed: %s\n", s.message().c_str());
        return 1;
    }
    s = depth_to_space(out, Tensor::dense(back.data(), DType::Float32, Layout::NHWC, {1, 1, 4, 4}), Block(2));
    if (!s.ok()) {
        std::fprintf(stderr, "depth_to_space failed: %s\n", s.message().c_str());
        return 1;
    }
    if (deep != want || back != space) {
        std::fprintf(stderr, "wrong result\n");
        return 1;
    }
    // NCHWc8 [1, 32/8, 1, 1, 8] -> NCHW [1, 8, 2, 2], DCR: output channel c at block position
    // k = by*2 + bx comes from input channel k*8 + c, which NCHWc8 stores at k*8 + c here.
    std::vector<float> blocked(32), plain(32, -1.0f);
    for (int i = 0; i < 32; i++) blocked[i] = static_cast<float>(i);
    s = depth_to_space(Tensor::dense(blocked.data(), DType::Float32, Layout::NCHWc8, {1, 32, 1, 1}),
                       Tensor::dense(plain.data(), DType::Float32, Layout::NCHW, {1, 8, 2, 2}), Block(2));
    if (!s.ok()) {
        std::fprintf(stderr, "depth_to_space (NCHWc8) failed: %s\n", s.message().c_str());
        return 1;
    }
    for (int c = 0; c < 8; c++) {
        for (int k = 0; k < 4; k++) {
            if (plain[c * 4 + k] != blocked[k * 8 + c]) {
                std::fprintf(stderr, "wrong NCHWc8 result at c=%d k=%d\n", c, k);
                return 1;
            }
        }
    }
    if (std::strcmp(spacedepth_version(), SPACEDEPTH_VERSION_STRING) != 0) {
        std::fprintf(stderr, "library %s, headers %s\n", spacedepth_version(), SPACEDEPTH_VERSION_STRING);
        return 1;
    }
    std::printf("spacedepth %s (C++): seed example and NCHWc8 OK\n", spacedepth_version());
    return 0;
}
