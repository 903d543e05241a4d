// GPU plans (runtime/plan_gpu.cpp): every view fits CUDA's grid limits (the GPU schedules put
// one slot on grid y in 32-element tiles and fuse the outer slots into grid z, both at most
// 65535 blocks), the kernel calls together cover every element exactly once, and
// views too large for one call still give the right answer. The correctness half goes through
// run_op, so ctest opencl_pocl runs it on the OpenCL build of the GPU schedules.
#include "runtime/plan.h"
#include "tests/harness.h"

#include <gtest/gtest.h>

namespace {

using namespace testing_support;
using namespace spacedepth::detail;
using spacedepth::Device;
using spacedepth::KernelFamily;
using spacedepth::kKernelRank;

struct Shape {
    Op op;
    Order order;
    Layout in_layout, out_layout;
    Dims space;
    int64_t block;
    bool split;  // more than one kernel call expected
};

// Large batches of small images (over 65535 blocks along the fused outer dims: walked in
// chunks) and tall images (over 65535 blocks along grid x, which allows 2^31 - 1: one call).
const Shape kShapes[] = {
    {Op::SpaceToDepth, Order::DCR, Layout::NCHW, Layout::NHWC, {70000, 3, 4, 4}, 2, true},
    {Op::DepthToSpace, Order::CRD, Layout::NHWC, Layout::NCHW, {70000, 3, 4, 4}, 2, true},
    {Op::SpaceToDepth, Order::CRD, Layout::NCHW, Layout::NCHW, {1, 1, 2 * 2200000, 4}, 2, false},
    {Op::DepthToSpace, Order::DCR, Layout::NCHW, Layout::NCHW, {1, 1, 2 * 2200000, 4}, 2, false},
};

Dims deep_dims(const Shape &s) {
    return {s.space[0], s.space[1] * s.block * s.block, s.space[2] / s.block, s.space[3] / s.block};
}

TEST(GpuPlan, FitsTheGridAndCoversEveryElement) {
    for (const Shape &s : kShapes) {
        const bool s2d = s.op == Op::SpaceToDepth;
        // Planning never touches the memory: addresses far apart, as for device memory.
        void *const in_data = reinterpret_cast<void *>(uintptr_t{1} << 40), *const out_data = reinterpret_cast<void *>(
                                                                                uintptr_t{1} << 41);
        const Dims in_dims = s2d ? s.space : deep_dims(s), out_dims = s2d ? deep_dims(s) : s.space;
        sd_tensor in{}, out{};
        ASSERT_EQ(sd_tensor_init_dense(&in, in_data, SD_UINT8, static_cast<sd_layout>(s.in_layout), in_dims[0],
                                       in_dims[1], in_dims[2], in_dims[3]),
                  SD_OK);
        ASSERT_EQ(sd_tensor_init_dense(&out, out_data, SD_UINT8, static_cast<sd_layout>(s.out_layout), out_dims[0],
                                       out_dims[1], out_dims[2], out_dims[3]),
                  SD_OK);
        const sd_params params{static_cast<sd_op>(s.op), s.block, s.block, static_cast<sd_order>(s.order), 0};
        Problem problem;
        const spacedepth::Status valid = validate(params, in, out, &problem);
        ASSERT_TRUE(valid.ok()) << valid.message();
        View view;
        ASSERT_TRUE(build_view(problem, &view).ok());
        const KernelPlan plan = make_kernel_plan(problem, view, Device::Cuda);
        const std::string what = describe_plan(plan);
        ASSERT_TRUE(plan.device == Device::Cuda && plan.family != KernelFamily::Small) << what;

        // Each slot's extent in one call (a chunked slot: its chunk) and the calls made.
        int64_t call_extent[kKernelRank], calls = 1, covered = 1;
        for (int k = 0; k < kKernelRank; k++) {
            call_extent[k] = plan.kernel_dims[k].extent;
        }
        for (const LoopDim &l : plan.loop_dims) {
            calls *= l.extent;
            if (l.chunked_dim >= 0) {
                call_extent[l.chunked_dim] = l.chunk;
                EXPECT_EQ(plan.kernel_dims[l.chunked_dim].extent, l.total) << what;
                covered *= l.total;
            } else {
                covered *= l.extent;
            }
        }
        const int tiled = plan.family == KernelFamily::Transpose ? 1 : 3;
        int64_t z_blocks = 1;
        for (int k = 0; k < kKernelRank; k++) {
            if (k > tiled) {
                z_blocks *= call_extent[k];
            }
            bool chunked = false;
            for (const LoopDim &l : plan.loop_dims) chunked |= l.chunked_dim == k;
            if (!chunked) covered *= plan.kernel_dims[k].extent;
        }
        EXPECT_LE((call_extent[tiled] + 31) / 32, 65535) << what;
        EXPECT_LE(z_blocks, 65535) << what;
        EXPECT_EQ(calls > 1, s.split) << what;
        EXPECT_EQ(covered * plan.width, problem.bytes) << what;
    }
}

TEST(GpuPlan, LargeViewsMatchReference) {
    for (const Shape &s : kShapes) {
        const Params p{s.op, Block(s.block), s.order, 0};
        const bool s2d = s.op == Op::SpaceToDepth;
        TestTensor in = make_tensor(DType::UInt8, s.in_layout, s2d ? s.space : deep_dims(s));
        TestTensor out = make_tensor(DType::UInt8, s.out_layout, s2d ? deep_dims(s) : s.space);
        fill_unique(in, 7);
        const spacedepth::Status status = run_op(p, in.tensor, out.tensor);
        ASSERT_TRUE(status.ok()) << status.message();
        EXPECT_EQ(compare(out, expected_output(p, in, out)), "") << spacedepth::describe_call(p, in.tensor, out.tensor);
    }
}

}  // namespace
