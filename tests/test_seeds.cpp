// docs/SPEC.md section 6: the seed examples, verbatim (TensorFlow SpaceToDepth / DepthToSpace, NHWC,
// DCR, block 2). Shapes below are NHWC [N, H, W, C] as in the seeds.
#include "spacedepth/spacedepth.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using spacedepth::DType;
using spacedepth::Layout;
using spacedepth::Tensor;

struct Seed {
    std::vector<int64_t> space_nhwc, deep_nhwc;
    std::vector<float> space, deep;
};

const std::vector<Seed> kSeeds = {
    {{1, 2, 2, 1}, {1, 1, 1, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}},
    {{1, 2, 2, 3}, {1, 1, 1, 12}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
    // rows [1,2,5,6] [3,4,7,8] [9,10,13,14] [11,12,15,16] -> [[[[1,2,3,4],[5,6,7,8]],[[9,10,11,12],[13,14,15,16]]]]
    {{1, 4, 4, 1},
     {1, 2, 2, 4},
     {1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16},
     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
};

Tensor nhwc(std::vector<float> &data, const std::vector<int64_t> &s) {
    return Tensor::dense(data.data(), DType::Float32, Layout::NHWC, {s[0], s[3], s[1], s[2]});
}

TEST(Seeds, SpaceToDepthNHWCDCRBlock2) {
    for (const Seed &seed : kSeeds) {
        std::vector<float> in = seed.space, out(seed.deep.size(), -1.0f);
        spacedepth::Status s = spacedepth::space_to_depth(nhwc(in, seed.space_nhwc), nhwc(out, seed.deep_nhwc), 2);
        ASSERT_TRUE(s.ok()) << s.message();
        EXPECT_EQ(out, seed.deep);
    }
}

TEST(Seeds, DepthToSpaceNHWCDCRBlock2) {
    for (const Seed &seed : kSeeds) {
        std::vector<float> in = seed.deep, out(seed.space.size(), -1.0f);
        spacedepth::Status s = spacedepth::depth_to_space(nhwc(in, seed.deep_nhwc), nhwc(out, seed.space_nhwc), 2);
        ASSERT_TRUE(s.ok()) << s.message();
        EXPECT_EQ(out, seed.space);
    }
}

TEST(Seeds, OutputDimsHelper) {
    spacedepth::Dims out;
    ASSERT_TRUE(spacedepth::output_dims({spacedepth::Op::SpaceToDepth, 2}, {1, 1, 4, 4}, &out).ok());
    EXPECT_EQ(out, (spacedepth::Dims{1, 4, 2, 2}));
    ASSERT_TRUE(spacedepth::output_dims({spacedepth::Op::DepthToSpace, 2}, {1, 12, 1, 1}, &out).ok());
    EXPECT_EQ(out, (spacedepth::Dims{1, 3, 2, 2}));
    ASSERT_TRUE(spacedepth::output_dims({spacedepth::Op::DepthToSpace, {2, 3}}, {2, 12, 5, 7}, &out).ok());
    EXPECT_EQ(out, (spacedepth::Dims{2, 2, 10, 21}));
}

// The same seeds through the plain C API.
TEST(Seeds, CApi) {
    float in[16] = {1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16}, out[16] = {0};
    sd_tensor ti, to;
    ASSERT_EQ(sd_tensor_init_dense(&ti, in, SD_FLOAT32, SD_LAYOUT_NHWC, 1, 1, 4, 4), SD_OK);
    ASSERT_EQ(sd_tensor_init_dense(&to, out, SD_FLOAT32, SD_LAYOUT_NHWC, 1, 4, 2, 2), SD_OK);
    sd_params p = {SD_SPACE_TO_DEPTH, 2, 2, SD_ORDER_DCR, 0};
    ASSERT_EQ(sd_run(&p, &ti, &to), SD_OK) << sd_last_error();
    for (int i = 0; i < 16; i++) EXPECT_EQ(out[i], i + 1) << "at " << i;
    int64_t dims[4];
    ASSERT_EQ(sd_output_dims(&p, ti.dims, dims), SD_OK);
    EXPECT_EQ(dims[1], 4);
    EXPECT_EQ(sd_run(nullptr, &ti, &to), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(sd_last_error(), "params is null");
}

}  // namespace
