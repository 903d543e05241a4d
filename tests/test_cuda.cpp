// spacedepth::run_cuda: device pointers in and out, the caller's context and stream.
//
// Without a CUDA driver (this development machine), the GPU tests skip with the reason, and one
// test checks the promise made for that case: a clear error naming the cause, no crash. With a
// driver and a GPU (bench/gpu_check.sh on a GPU machine), the tests allocate device memory with
// the driver API (loaded with dlopen, so no link-time CUDA dependency) and compare every layout
// x order x width 1/2/4 against the independent reference.
#include "spacedepth/spacedepth.h"
#include "spacedepth/spacedepth_c.h"
#include "tests/harness.h"
#include "tools/cuda_driver.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace spacedepth;
using testing_support::TestTensor;

using cuda_driver::driver;
using cuda_driver::Driver;

bool mentions_cuda(const std::string &message) {
    std::string lower(message);
    for (char &c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower.find("cuda") != std::string::npos;
}

TEST(Cuda, WithoutADriverTheCallFailsClearly) {
    if (driver().has_library) {
        GTEST_SKIP() << "a CUDA driver is present; the GPU tests below cover the call";
    }
    // Device addresses that were never allocated: the call must stop at loading the driver.
    const Tensor in =
        Tensor::dense(reinterpret_cast<void *>(uintptr_t{1} << 40), DType::Float32, Layout::NHWC, {1, 4, 8, 8});
    const Tensor out =
        Tensor::dense(reinterpret_cast<void *>(uintptr_t{1} << 41), DType::Float32, Layout::NHWC, {1, 16, 4, 4});
    const Status s = run_cuda(Params{Op::SpaceToDepth, Block(2), Order::DCR, 0}, in, out, CudaStream{});
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(mentions_cuda(s.message())) << s.message();
    std::printf("without a driver: %s\n", s.message().c_str());

    // The C API says the same.
    sd_tensor cin{}, cout{};
    ASSERT_EQ(sd_tensor_init_dense(&cin, in.data, SD_FLOAT32, SD_LAYOUT_NHWC, 1, 4, 8, 8), SD_OK);
    ASSERT_EQ(sd_tensor_init_dense(&cout, out.data, SD_FLOAT32, SD_LAYOUT_NHWC, 1, 16, 4, 4), SD_OK);
    const sd_params p{SD_SPACE_TO_DEPTH, 2, 2, SD_ORDER_DCR, 0};
    EXPECT_NE(sd_run_cuda(&p, &cin, &cout, nullptr, nullptr), SD_OK);
    EXPECT_TRUE(mentions_cuda(sd_last_error())) << sd_last_error();
}

TEST(Cuda, InvalidShapesAreRejectedBeforeTheDevice) {
    // Validation runs first, so a bad call never reaches the driver, GPU or not.
    const Tensor in =
        Tensor::dense(reinterpret_cast<void *>(uintptr_t{1} << 40), DType::Float32, Layout::NHWC, {1, 4, 7, 8});
    const Tensor out =
        Tensor::dense(reinterpret_cast<void *>(uintptr_t{1} << 41), DType::Float32, Layout::NHWC, {1, 16, 3, 4});
    const Status s = run_cuda(Params{Op::SpaceToDepth, Block(2), Order::DCR, 0}, in, out, CudaStream{});
    ASSERT_FALSE(s.ok());
    EXPECT_FALSE(mentions_cuda(s.message())) << s.message();
}

struct GpuCase {
    Op op;
    Order order;
    Layout layout;
    DType dtype;
};

class CudaMatrix : public ::testing::TestWithParam<GpuCase> {};

TEST_P(CudaMatrix, MatchesReference) {
    Driver &d = driver();
    if (!d.usable()) {
        GTEST_SKIP() << d.why_not;
    }
    const GpuCase c = GetParam();
    const int64_t b = 2, channels = c.layout == Layout::NCHW_VECT_C ? 8 : 3;
    const Dims space{2, channels, 6 * b, 10 * b}, deep{2, channels * b * b, 6, 10};
    const bool s2d = c.op == Op::SpaceToDepth;
    TestTensor in = testing_support::make_tensor(c.dtype, c.layout, s2d ? space : deep);
    TestTensor out = testing_support::make_tensor(c.dtype, c.layout, s2d ? deep : space);
    testing_support::fill_unique(in);
    const Params params{c.op, Block(b), c.order, 0};
    const TestTensor want = testing_support::expected_output(params, in, out);

    uint64_t din = 0, dout = 0;
    ASSERT_EQ(d.cuMemAlloc(&din, in.storage.size()), 0);
    ASSERT_EQ(d.cuMemAlloc(&dout, out.storage.size()), 0);
    ASSERT_EQ(d.cuMemcpyHtoD(din, in.storage.data(), in.storage.size()), 0);
    ASSERT_EQ(d.cuMemcpyHtoD(dout, out.storage.data(), out.storage.size()), 0);  // sentinel bytes
    Tensor tin = in.tensor, tout = out.tensor;
    tin.data = reinterpret_cast<void *>(din);
    tout.data = reinterpret_cast<void *>(dout);
    const Status s = run_cuda(params, tin, tout, CudaStream{d.context, nullptr});
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(d.cuCtxSynchronize(), 0);
    ASSERT_EQ(d.cuMemcpyDtoH(out.storage.data(), dout, out.storage.size()), 0);
    d.cuMemFree(din);
    d.cuMemFree(dout);
    EXPECT_EQ(testing_support::compare(out, want), "");
}

std::vector<GpuCase> gpu_cases() {
    std::vector<GpuCase> cases;
    for (Op op : {Op::DepthToSpace, Op::SpaceToDepth})
        for (Order order : {Order::DCR, Order::CRD})
            for (Layout layout : {Layout::NHWC, Layout::NCHW, Layout::NCHW_VECT_C})
                for (DType dtype : {DType::UInt8, DType::Float16, DType::Float32}) {
                    if (layout == Layout::NCHW_VECT_C && dtype != DType::UInt8) continue;
                    cases.push_back({op, order, layout, dtype});
                }
    return cases;
}

std::string case_name(const ::testing::TestParamInfo<GpuCase> &info) {
    const GpuCase &c = info.param;
    std::string layout = c.layout == Layout::NHWC ? "NHWC" : c.layout == Layout::NCHW ? "NCHW" : "VECT_C";
    return std::string(c.op == Op::SpaceToDepth ? "S2D" : "D2S") + "_" + (c.order == Order::DCR ? "DCR" : "CRD") + "_" +
           layout + "_" + std::to_string(dtype_size(c.dtype)) + "B";
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, CudaMatrix, ::testing::ValuesIn(gpu_cases()), case_name);

}  // namespace
