// docs/SPEC.md section 5: every rule, with its message, and the output untouched after every error.
#include "tests/harness.h"

#include <gtest/gtest.h>

#include <climits>

namespace {

using namespace testing_support;

struct Fixture {
    TestTensor in, out;
    Fixture(Dims in_dims, Dims out_dims, DType dtype = DType::Float32, Layout in_l = Layout::NHWC,
            Layout out_l = Layout::NHWC)
        : in(make_tensor(dtype, in_l, in_dims)), out(make_tensor(dtype, out_l, out_dims)) {
        fill_unique(in);
    }
};

// Runs the call, expects the error code and a message containing every fragment, and checks
// that the output storage still holds only the sentinel.
void expect_error(const Params &p, const spacedepth::Tensor &in, const spacedepth::Tensor &out, sd_status code,
                  std::initializer_list<const char *> fragments, const std::vector<uint8_t> *out_storage = nullptr) {
    spacedepth::Status s = spacedepth::run(p, in, out);
    EXPECT_EQ(s.code(), code) << s.message();
    for (const char *f : fragments) {
        EXPECT_NE(s.message().find(f), std::string::npos) << "message '" << s.message() << "' lacks '" << f << "'";
    }
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << "one line: " << s.message();
    if (out_storage) {
        for (uint8_t b : *out_storage) {
            ASSERT_EQ(b, kSentinel) << "output written after an error";
        }
    }
}

TEST(Validation, EnumsAndBlock) {
    Fixture f({1, 1, 4, 4}, {1, 4, 2, 2});
    const auto &in = f.in.tensor, &out = f.out.tensor;
    Params p{Op::SpaceToDepth, 2};
    Params bad = p;
    bad.op = static_cast<Op>(7);
    expect_error(bad, in, out, SD_ERROR_INVALID_ARGUMENT, {"op must be", "got 7"}, &f.out.storage);
    bad = p;
    bad.order = static_cast<Order>(-1);
    expect_error(bad, in, out, SD_ERROR_INVALID_ARGUMENT, {"order must be DCR", "got -1"}, &f.out.storage);
    expect_error({Op::SpaceToDepth, Block(0, 2)}, in, out, SD_ERROR_INVALID_ARGUMENT,
                 {"block sizes must be >= 1", "0x2"}, &f.out.storage);
    expect_error({Op::DepthToSpace, Block(2, -3)}, in, out, SD_ERROR_INVALID_ARGUMENT,
                 {"block sizes must be >= 1", "2x-3"}, &f.out.storage);
    bad = p;
    bad.threads = -2;
    expect_error(bad, in, out, SD_ERROR_INVALID_ARGUMENT, {"threads must be >= 0", "-2"}, &f.out.storage);
}

TEST(Validation, TensorDescriptors) {
    Fixture f({1, 1, 4, 4}, {1, 4, 2, 2});
    Params p{Op::SpaceToDepth, 2};
    spacedepth::Tensor in = f.in.tensor, out = f.out.tensor;
    in.dtype = static_cast<DType>(99);
    expect_error(p, in, out, SD_ERROR_INVALID_ARGUMENT, {"input dtype 99"}, &f.out.storage);
    in = f.in.tensor;
    in.layout = static_cast<Layout>(5);
    expect_error(p, in, out, SD_ERROR_INVALID_ARGUMENT, {"input layout 5"}, &f.out.storage);
    in = f.in.tensor;
    in.dims[2] = -4;
    expect_error(p, in, out, SD_ERROR_INVALID_ARGUMENT, {"input dim H is negative", "[1,1,-4,4]"}, &f.out.storage);
    in = f.in.tensor;
    in.strides[3] = -1;
    expect_error(p, in, out, SD_ERROR_INVALID_ARGUMENT, {"input stride of W is negative"}, &f.out.storage);
    in = f.in.tensor;
    out.dtype = DType::Int32;
    expect_error(p, in, out, SD_ERROR_INVALID_ARGUMENT, {"input dtype float32 differs from output dtype int32"},
                 &f.out.storage);
}

TEST(Validation, NchwVectCRules) {
    Fixture f({1, 4, 2, 2}, {1, 16, 1, 1}, DType::Float32, Layout::NCHW_VECT_C, Layout::NCHW);
    expect_error({Op::SpaceToDepth, 2}, f.in.tensor, f.out.tensor, SD_ERROR_INVALID_ARGUMENT,
                 {"NCHW_VECT_C holds 1-byte elements only", "float32", "4 bytes"}, &f.out.storage);
    // D2S of 4 channels, block 2: the output has 1 channel, not a multiple of 4.
    Fixture g({1, 4, 1, 1}, {1, 1, 2, 2}, DType::Int8, Layout::NCHW, Layout::NCHW_VECT_C);
    g.out.tensor.strides = {4, 4, 2, 1};
    expect_error({Op::DepthToSpace, 2}, g.in.tensor, g.out.tensor, SD_ERROR_SHAPE,
                 {"output channels C=1 are not divisible by 4", "NCHW_VECT_C"}, &g.out.storage);
}

TEST(Validation, Divisibility) {
    Fixture f({1, 1, 5, 4}, {1, 4, 2, 2});
    expect_error({Op::SpaceToDepth, 2}, f.in.tensor, f.out.tensor, SD_ERROR_SHAPE,
                 {"input height H=5 is not divisible by block height bh=2", "H % bh == 0"}, &f.out.storage);
    Fixture g({1, 1, 4, 6}, {1, 4, 2, 2});
    expect_error({Op::SpaceToDepth, Block(2, 4)}, g.in.tensor, g.out.tensor, SD_ERROR_SHAPE,
                 {"input width W=6 is not divisible by block width bw=4", "W % bw == 0"}, &g.out.storage);
    Fixture h({1, 6, 2, 2}, {1, 1, 4, 4});
    expect_error({Op::DepthToSpace, 2}, h.in.tensor, h.out.tensor, SD_ERROR_SHAPE,
                 {"input channels C=6 are not divisible by bh*bw=4", "C % (bh*bw) == 0"}, &h.out.storage);
}

TEST(Validation, OutputShapeMustBeTheImpliedOne) {
    // A smaller output is exactly what Halide would silently accept; the runtime must not.
    Fixture f({1, 1, 4, 4}, {1, 4, 1, 2});
    expect_error({Op::SpaceToDepth, 2}, f.in.tensor, f.out.tensor, SD_ERROR_SHAPE,
                 {"output dims [1,4,1,2] are not the implied [1,4,2,2]"}, &f.out.storage);
    Fixture g({1, 8, 2, 2}, {1, 2, 4, 4});
    expect_error({Op::DepthToSpace, Block(2, 1)}, g.in.tensor, g.out.tensor, SD_ERROR_SHAPE,
                 {"not the implied [1,4,4,2]"}, &g.out.storage);
}

TEST(Validation, OverflowIsAnErrorNeverAWrap) {
    Fixture f({1, 1, 4, 4}, {1, 4, 2, 2});
    // bh*bw overflows int64.
    expect_error({Op::SpaceToDepth, Block(int64_t{1} << 32, int64_t{1} << 32)}, f.in.tensor, f.out.tensor,
                 SD_ERROR_OVERFLOW, {"block area bh*bw overflows"}, &f.out.storage);
    // TensorFlow aborted on block_size = 2^31-1 (tensorflow#46939) and raised SIGFPE on 2^29 (#61541).
    expect_error({Op::SpaceToDepth, Block(INT32_MAX)}, f.in.tensor, f.out.tensor, SD_ERROR_SHAPE,
                 {"H=4 is not divisible by block height bh=2147483647"}, &f.out.storage);
    expect_error({Op::DepthToSpace, Block(1 << 29)}, f.in.tensor, f.out.tensor, SD_ERROR_SHAPE,
                 {"C=1 are not divisible by bh*bw=288230376151711744"}, &f.out.storage);
    // C*bh*bw overflows.
    spacedepth::Tensor in = f.in.tensor;
    in.dims = {1, INT64_MAX / 2, 2, 2};
    expect_error({Op::SpaceToDepth, 2}, in, f.out.tensor, SD_ERROR_OVERFLOW, {"output channels C*bh*bw overflow"},
                 &f.out.storage);
    // H*bh overflows.
    in.dims = {1, 4, INT64_MAX / 2 + 1, 1};
    expect_error({Op::DepthToSpace, 2}, in, f.out.tensor, SD_ERROR_OVERFLOW, {"output height H*bh overflows", "bh=2"},
                 &f.out.storage);
    // Element count overflows: dims whose product passes 2^63.
    spacedepth::Tensor big_in = f.in.tensor, big_out = f.out.tensor;
    big_in.dims = {int64_t{1} << 31, 1, int64_t{1} << 31, int64_t{1} << 2};
    big_out.dims = {int64_t{1} << 31, 4, int64_t{1} << 30, int64_t{1} << 1};
    expect_error({Op::SpaceToDepth, 2}, big_in, big_out, SD_ERROR_OVERFLOW, {"input size overflows 64-bit"},
                 &f.out.storage);
    // A span that overflows through a huge stride.
    spacedepth::Tensor strided = f.in.tensor;
    strided.strides[0] = INT64_MAX / 2;
    strided.dims[0] = 3;
    spacedepth::Tensor out3 = f.out.tensor;
    out3.dims[0] = 3;
    expect_error({Op::SpaceToDepth, 2}, strided, out3, SD_ERROR_OVERFLOW, {"input size overflows 64-bit", "strides"},
                 &f.out.storage);
}

TEST(Validation, NullDataAndZeroSize) {
    Fixture f({1, 1, 4, 4}, {1, 4, 2, 2});
    spacedepth::Tensor in = f.in.tensor;
    in.data = nullptr;
    expect_error({Op::SpaceToDepth, 2}, in, f.out.tensor, SD_ERROR_NULL_DATA, {"input data is null", "16 elements"},
                 &f.out.storage);
    spacedepth::Tensor out = f.out.tensor;
    out.data = nullptr;
    expect_error({Op::SpaceToDepth, 2}, f.in.tensor, out, SD_ERROR_NULL_DATA, {"output data is null"});
    // Zero-size dims are valid and do nothing, null data included.
    spacedepth::Tensor zin = spacedepth::Tensor::dense(nullptr, DType::Float32, Layout::NHWC, {0, 3, 4, 4});
    spacedepth::Tensor zout = spacedepth::Tensor::dense(nullptr, DType::Float32, Layout::NHWC, {0, 12, 2, 2});
    EXPECT_TRUE(spacedepth::space_to_depth(zin, zout, 2).ok());
    zin = spacedepth::Tensor::dense(f.in.storage.data(), DType::Float32, Layout::NCHW, {1, 0, 4, 4});
    zout = spacedepth::Tensor::dense(f.out.storage.data(), DType::Float32, Layout::NCHW, {1, 0, 2, 2});
    EXPECT_TRUE(spacedepth::space_to_depth(zin, zout, 2).ok());
    for (uint8_t b : f.out.storage) ASSERT_EQ(b, kSentinel);
}

TEST(Validation, OverlapAndAliasing) {
    Fixture f({1, 1, 4, 4}, {1, 4, 2, 2});
    // In place: the same buffer.
    spacedepth::Tensor out = f.out.tensor;
    out.data = f.in.tensor.data;
    expect_error({Op::SpaceToDepth, 2}, f.in.tensor, out, SD_ERROR_OVERLAP, {"overlaps output memory", "not in place"});
    // Partial overlap: output starts inside the input.
    std::vector<float> shared(40, 0.0f);
    spacedepth::Tensor a = spacedepth::Tensor::dense(shared.data(), DType::Float32, Layout::NHWC, {1, 1, 4, 4});
    spacedepth::Tensor b = spacedepth::Tensor::dense(shared.data() + 15, DType::Float32, Layout::NHWC, {1, 4, 2, 2});
    expect_error({Op::SpaceToDepth, 2}, a, b, SD_ERROR_OVERLAP, {"overlaps"});
    for (size_t i = 15; i < shared.size(); i++) ASSERT_EQ(shared[i], 0.0f);
    // Adjacent is fine.
    b.data = shared.data() + 16;
    EXPECT_TRUE(spacedepth::space_to_depth(a, b, 2).ok());
    // An output whose strides make two elements share an address.
    spacedepth::Tensor self = f.out.tensor;
    self.strides = {16, 1, 0, 4};
    expect_error({Op::SpaceToDepth, 2}, f.in.tensor, self, SD_ERROR_OVERLAP, {"share memory", "[16,1,0,4]"},
                 &f.out.storage);
    // Zero strides on the input (a broadcast view) are a valid read.
    spacedepth::Tensor bcast = f.in.tensor;
    bcast.strides = {0, 0, 0, 0};
    EXPECT_TRUE(spacedepth::space_to_depth(bcast, f.out.tensor, 2).ok());
}

TEST(Validation, OutputDimsHelperErrors) {
    Dims out;
    spacedepth::Status s = spacedepth::output_dims({Op::SpaceToDepth, 3}, {1, 1, 4, 3}, &out);
    EXPECT_EQ(s.code(), SD_ERROR_SHAPE);
    EXPECT_NE(s.message().find("H=4 is not divisible by block height bh=3"), std::string::npos) << s.message();
    s = spacedepth::output_dims({Op::DepthToSpace, 0}, {1, 1, 4, 3}, &out);
    EXPECT_EQ(s.code(), SD_ERROR_INVALID_ARGUMENT);
}

TEST(Validation, CApiReportsTheSameRules) {
    float in[16] = {0}, out[16];
    sd_tensor ti, to;
    ASSERT_EQ(sd_tensor_init_dense(&ti, in, SD_FLOAT32, SD_LAYOUT_NHWC, 1, 1, 4, 4), SD_OK);
    ASSERT_EQ(sd_tensor_init_dense(&to, out, SD_FLOAT32, SD_LAYOUT_NHWC, 1, 4, 2, 2), SD_OK);
    sd_params p = {SD_SPACE_TO_DEPTH, 3, 3, SD_ORDER_DCR, 0};
    EXPECT_EQ(sd_run(&p, &ti, &to), SD_ERROR_SHAPE);
    EXPECT_NE(std::string(sd_last_error()).find("H % bh == 0"), std::string::npos) << sd_last_error();
    EXPECT_STREQ(sd_status_name(SD_ERROR_SHAPE), "shape error");
    EXPECT_EQ(sd_tensor_init_dense(&ti, in, SD_INT8, SD_LAYOUT_NCHW_VECT_C, 1, 3, 1, 1), SD_ERROR_SHAPE);
    EXPECT_EQ(sd_tensor_init_dense(&ti, in, SD_INT8, SD_LAYOUT_NCHW, INT64_MAX, 3, 4, 1), SD_ERROR_OVERFLOW);
    sd_dtype d;
    EXPECT_EQ(sd_dtype_from_name("bfloat16", &d), SD_OK);
    EXPECT_EQ(d, SD_BFLOAT16);
    EXPECT_EQ(sd_dtype_size(SD_COMPLEX128), 16);
    EXPECT_EQ(sd_dtype_from_name("float128", &d), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(sd_last_error()).find("float128"), std::string::npos);
}

// Dense strides from the library match the layouts' definitions.
TEST(Validation, DenseStrides) {
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::UInt8, Layout::NHWC, {2, 3, 5, 7}).strides,
              (Dims{105, 1, 21, 3}));
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::UInt8, Layout::NCHW, {2, 3, 5, 7}).strides,
              (Dims{105, 35, 7, 1}));
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::Int8, Layout::NCHW_VECT_C, {2, 8, 5, 7}).strides,
              (Dims{280, 140, 28, 4}));
}

}  // namespace

namespace {

// The one table of names (runtime/names.cpp), read back through both APIs.
TEST(Names, RoundTripAndRejectUnknown) {
    for (Layout l : {Layout::NHWC, Layout::NCHW, Layout::NCHW_VECT_C}) {
        Layout back{};
        ASSERT_NE(spacedepth::layout_name(l), nullptr);
        EXPECT_TRUE(spacedepth::layout_from_name(spacedepth::layout_name(l), &back));
        EXPECT_EQ(back, l);
    }
    EXPECT_STREQ(spacedepth::layout_name(Layout::NCHW_VECT_C), "NCHW_VECT_C");
    EXPECT_EQ(spacedepth::layout_name(static_cast<Layout>(3)), nullptr);
    for (Op op : {Op::SpaceToDepth, Op::DepthToSpace}) {
        Op back{};
        EXPECT_TRUE(spacedepth::op_from_name(spacedepth::op_name(op), &back));
        EXPECT_EQ(back, op);
    }
    for (Order order : {Order::DCR, Order::CRD}) {
        Order back{};
        EXPECT_TRUE(spacedepth::order_from_name(spacedepth::order_name(order), &back));
        EXPECT_EQ(back, order);
    }
    EXPECT_STREQ(spacedepth::op_name(Op::DepthToSpace), "depth_to_space");
    EXPECT_STREQ(spacedepth::order_name(Order::CRD), "CRD");
    Layout l = Layout::NCHW;
    Op op = Op::DepthToSpace;
    Order order = Order::CRD;
    DType d = DType::Int8;
    EXPECT_FALSE(spacedepth::layout_from_name("VECTC", &l));
    EXPECT_FALSE(spacedepth::op_from_name("s2d", &op));
    EXPECT_FALSE(spacedepth::order_from_name("dcr", &order));
    EXPECT_FALSE(spacedepth::dtype_from_name("float", &d));
    EXPECT_EQ(l, Layout::NCHW);  // untouched on failure
    EXPECT_EQ(op, Op::DepthToSpace);
    EXPECT_EQ(order, Order::CRD);
    EXPECT_EQ(d, DType::Int8);
    for (int i = 0; i < SD_DTYPE_COUNT; i++) {
        const char *name = sd_dtype_name(static_cast<sd_dtype>(i));
        sd_dtype back = SD_DTYPE_COUNT;
        ASSERT_NE(name, nullptr);
        EXPECT_EQ(sd_dtype_from_name(name, &back), SD_OK);
        EXPECT_EQ(back, i);
        EXPECT_EQ(sd_dtype_size(back), spacedepth::dtype_size(static_cast<DType>(i)));
    }
    EXPECT_EQ(sd_dtype_name(SD_DTYPE_COUNT), nullptr);
    EXPECT_EQ(sd_dtype_size(SD_DTYPE_COUNT), 0);
}

}  // namespace
