// docs/SPEC.md section 5: every rule, with its message, and the output untouched after every error.
#include "tests/harness.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <tuple>
#include <utility>

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

// The process-wide thread count: outside 0 to SD_MAX_THREADS refused in both APIs with the rule
// and the value, and the count left as it was (Halide's pool would cap a larger one silently).
TEST(Validation, ThreadCountsOutsideThePoolAreRefused) {
    ASSERT_EQ(sd_set_num_threads(2), SD_OK);
    for (int bad : {-1, SD_MAX_THREADS + 1, 1000, INT_MIN, INT_MAX}) {
        EXPECT_EQ(sd_set_num_threads(bad), SD_ERROR_INVALID_ARGUMENT) << bad;
        EXPECT_EQ(std::string(sd_last_error()),
                  "threads must be 0 to 256 (0: one per core; the pool holds at most 256): got " + std::to_string(bad));
        const spacedepth::Status s = spacedepth::set_num_threads(bad);
        EXPECT_FALSE(s.ok()) << bad;
        EXPECT_EQ(s.message(), std::string(sd_last_error()));
        EXPECT_EQ(sd_get_num_threads(), 2);
    }
    EXPECT_EQ(sd_set_num_threads(SD_MAX_THREADS), SD_OK);
    EXPECT_EQ(sd_get_num_threads(), SD_MAX_THREADS);
    EXPECT_TRUE(spacedepth::set_num_threads(0).ok());
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
    in.layout = static_cast<Layout>(6);
    expect_error(p, in, out, SD_ERROR_INVALID_ARGUMENT, {"input layout 6"}, &f.out.storage);
    in = f.in.tensor;
    in.dims[2] = -4;
    expect_error(p, in, out, SD_ERROR_INVALID_ARGUMENT, {"input dim H is negative", "[1,1,-4,4]"}, &f.out.storage);
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

// Negative strides are reversed views (numpy's x[:, ::-1]): data points at logical element 0,
// and the tensor's bytes reach below it. They are valid on both sides; what they can break is
// the arithmetic and the memory rules, each with its own error.
TEST(Validation, NegativeStrides) {
    // A reversed W on the input and a reversed H on the output: right, and nothing else written.
    Fixture f({1, 1, 4, 4}, {1, 4, 2, 2});
    TestTensor rin = make_tensor(DType::Float32, Layout::NHWC, {1, 1, 4, 4}, nullptr, 1u << 3);
    TestTensor rout = make_tensor(DType::Float32, Layout::NHWC, {1, 4, 2, 2}, nullptr, 1u << 2);
    EXPECT_LT(rin.tensor.strides[3], 0);
    fill_unique(rin);
    ASSERT_TRUE(spacedepth::space_to_depth(rin.tensor, rout.tensor, 2).ok());
    EXPECT_EQ(compare(rout, expected_output({Op::SpaceToDepth, 2}, rin, rout)), "");

    // A reach below the data pointer that overflows, and one that passes address 0.
    spacedepth::Tensor in = f.in.tensor;
    in.strides[0] = INT64_MIN;
    in.dims[0] = 2;
    spacedepth::Tensor out2 = f.out.tensor;
    out2.dims[0] = 2;
    out2.strides[0] = 16;
    expect_error({Op::SpaceToDepth, 2}, in, out2, SD_ERROR_OVERFLOW, {"input size overflows 64-bit"}, &f.out.storage);
    in = f.in.tensor;
    in.strides = {16, 1, -4, -1};
    in.data = reinterpret_cast<void *>(uintptr_t{8});  // 60 bytes of the view lie below address 8
    expect_error({Op::SpaceToDepth, 2}, in, f.out.tensor, SD_ERROR_OVERFLOW,
                 {"input data", "reaches 60 bytes below", "address space"}, &f.out.storage);
    spacedepth::Tensor low_out = f.out.tensor;
    low_out.strides = {16, 1, 8, -4};
    low_out.data = reinterpret_cast<void *>(uintptr_t{8});  // 16 bytes of the view lie below address 8
    expect_error({Op::SpaceToDepth, 2}, f.in.tensor, low_out, SD_ERROR_OVERFLOW,
                 {"output data", "reaches 16 bytes below", "address space"});

    // Overlap is judged on the bytes a reversed view really spans: an output just below a
    // reversed input's data pointer overlaps it.
    std::vector<float> shared(64, 0.0f);
    spacedepth::Tensor a = spacedepth::Tensor::dense(shared.data() + 40, DType::Float32, Layout::NHWC, {1, 1, 4, 4});
    a.strides = {16, 1, -4, -1};  // spans shared[25..40]
    spacedepth::Tensor b = spacedepth::Tensor::dense(shared.data() + 20, DType::Float32, Layout::NHWC, {1, 4, 2, 2});
    expect_error({Op::SpaceToDepth, 2}, a, b, SD_ERROR_OVERLAP, {"overlaps output memory"});
    for (size_t i = 0; i < 25; i++) ASSERT_EQ(shared[i], 0.0f);
    b.data = shared.data() + 9;  // [9, 25): just below
    EXPECT_TRUE(spacedepth::space_to_depth(a, b, 2).ok());

    // An output whose reversed strides make two elements share an address.
    spacedepth::Tensor self = f.out.tensor;
    self.strides = {16, 1, -2, 4};
    self.data = static_cast<float *>(f.out.tensor.data) + 4;
    expect_error({Op::SpaceToDepth, 2}, f.in.tensor, self, SD_ERROR_OVERLAP, {"share memory", "[16,1,-2,4]"},
                 &f.out.storage);
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

// The dtype policy every front end applies (the CLI's .npy files, Python's numpy arrays): numpy's
// type strings, written out here from numpy's documentation, not from the library's table.
TEST(Validation, DTypeFromTypestr) {
    const std::pair<const char *, sd_dtype> accepted[] = {
        {"<f4", SD_FLOAT32},     {">f4", SD_FLOAT32},   {"=f8", SD_FLOAT64},     {"|b1", SD_BOOL},
        {"|i1", SD_INT8},        {"|u1", SD_UINT8},     {"<i2", SD_INT16},       {"<u2", SD_UINT16},
        {"<f2", SD_FLOAT16},     {"<i4", SD_INT32},     {"<u4", SD_UINT32},      {"<i8", SD_INT64},
        {"<u8", SD_UINT64},      {"<c8", SD_COMPLEX64}, {"<c16", SD_COMPLEX128}, {"f4", SD_FLOAT32},  // no byte order
        {"|V2", SD_UINT16},  // raw: ml_dtypes' bfloat16 reads as V2
        {"|V1", SD_UINT8},       {"|V4", SD_UINT32},    {"|V8", SD_UINT64},      {"|V16", SD_COMPLEX128},
        {"<f16", SD_COMPLEX128},  // long double: its 16 bytes move
        {"|u16", SD_COMPLEX128},
    };
    for (const auto &[typestr, want] : accepted) {
        sd_dtype d = SD_DTYPE_COUNT;
        EXPECT_EQ(sd_dtype_from_typestr(typestr, &d), SD_OK) << typestr << ": " << sd_last_error();
        EXPECT_EQ(d, want) << typestr;
    }
    const std::tuple<const char *, sd_status, const char *> refused[] = {
        {"<M8[ns]", SD_ERROR_UNSUPPORTED, "datetimes are no tensor elements"},
        {"<m8[ms]", SD_ERROR_UNSUPPORTED, "timedeltas"},
        {"|O", SD_ERROR_UNSUPPORTED, "objects"},
        {"|O8", SD_ERROR_UNSUPPORTED, "objects"},
        {"<U3", SD_ERROR_UNSUPPORTED, "unicode strings"},
        {"|S3", SD_ERROR_UNSUPPORTED, "byte strings"},
        {"|V3", SD_ERROR_UNSUPPORTED, "elements of 3 bytes"},
        {"<f32", SD_ERROR_UNSUPPORTED, "elements of 32 bytes"},
        {"|V0", SD_ERROR_UNSUPPORTED, "elements of 0 bytes"},
        {"", SD_ERROR_INVALID_ARGUMENT, "not a numpy type string"},
        {"<", SD_ERROR_INVALID_ARGUMENT, "not a numpy type string"},
        {"<f", SD_ERROR_INVALID_ARGUMENT, "not a numpy type string"},
        {"<f4x", SD_ERROR_INVALID_ARGUMENT, "not a numpy type string"},
        {"<f-4", SD_ERROR_INVALID_ARGUMENT, "not a numpy type string"},
        {"<f99999999999999999999", SD_ERROR_INVALID_ARGUMENT, "not a numpy type string"},
        {"<x4", SD_ERROR_INVALID_ARGUMENT, "a kind (b, i, u, f, c, V)"},
        {"<<f4", SD_ERROR_INVALID_ARGUMENT, "not a numpy type string"},
        {"float32", SD_ERROR_INVALID_ARGUMENT, "as in '<f4'"},
    };
    for (const auto &[typestr, status, says] : refused) {
        sd_dtype d = SD_INT8;
        EXPECT_EQ(sd_dtype_from_typestr(typestr, &d), status) << typestr;
        EXPECT_NE(std::string(sd_last_error()).find(says), std::string::npos) << typestr << ": " << sd_last_error();
        EXPECT_NE(std::string(sd_last_error()).find(std::string("'") + typestr + "'"), std::string::npos)
            << "the message quotes the type string: " << sd_last_error();
        EXPECT_EQ(d, SD_INT8) << typestr << ": unchanged on failure";
    }
    sd_dtype d;
    EXPECT_EQ(sd_dtype_from_typestr(nullptr, &d), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sd_dtype_from_typestr("<f4", nullptr), SD_ERROR_INVALID_ARGUMENT);
    DType cxx = DType::Int8;
    EXPECT_TRUE(spacedepth::dtype_from_typestr(">i2", &cxx).ok());
    EXPECT_EQ(cxx, DType::Int16);
    EXPECT_EQ(spacedepth::dtype_from_typestr("<M8[s]", &cxx).code(), SD_ERROR_UNSUPPORTED);
}

// Dense strides from the library match the layouts' definitions.
TEST(Validation, DenseStrides) {
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::UInt8, Layout::NHWC, {2, 3, 5, 7}).strides,
              (Dims{105, 1, 21, 3}));
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::UInt8, Layout::NCHW, {2, 3, 5, 7}).strides,
              (Dims{105, 35, 7, 1}));
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::Int8, Layout::NCHW_VECT_C, {2, 8, 5, 7}).strides,
              (Dims{280, 140, 28, 4}));
    // Rank 1 and 3, and the blocked layouts at any width: [N, C/k, spatial..., k].
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::Float32, Layout::NHWC, {2, 3, 7}).strides, (Dims{21, 1, 3}));
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::Float32, Layout::NCHW, {2, 3, 7}).strides, (Dims{21, 7, 1}));
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::Float32, Layout::NHWC, {2, 3, 4, 5, 6}).strides,
              (Dims{360, 1, 90, 18, 3}));
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::Float32, Layout::NCHW, {2, 3, 4, 5, 6}).strides,
              (Dims{360, 120, 30, 6, 1}));
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::Float32, Layout::NCHWc8, {2, 16, 5, 7}).strides,
              (Dims{560, 280, 56, 8}));
    EXPECT_EQ(spacedepth::Tensor::dense(nullptr, DType::Float16, Layout::NCHWc16, {1, 32, 2, 3, 4}).strides,
              (Dims{768, 384, 192, 64, 16}));
    int64_t strides[5];
    const int64_t dims[5] = {1, 8, 2, 3, 4};
    sd_tensor t;
    ASSERT_EQ(sd_tensor_init_dense_nd(&t, nullptr, SD_FLOAT32, SD_LAYOUT_NCHWC4, 5, dims), SD_OK);
    std::copy(t.strides, t.strides + 5, strides);
    EXPECT_EQ((Dims{5, strides}), (Dims{192, 96, 48, 16, 4}));
    EXPECT_EQ(t.ndim, 5);
    EXPECT_EQ(sd_tensor_init_dense_nd(&t, nullptr, SD_FLOAT32, SD_LAYOUT_NCHWC16, 5, dims), SD_ERROR_SHAPE);
    EXPECT_NE(std::string(sd_last_error()).find("NCHWc16 needs channels divisible by 16: got C=8"), std::string::npos)
        << sd_last_error();
    EXPECT_EQ(sd_tensor_init_dense_nd(&t, nullptr, SD_FLOAT32, SD_LAYOUT_NCHW, 6, dims), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(sd_last_error()).find("ndim must be 3, 4 or 5"), std::string::npos) << sd_last_error();
    EXPECT_EQ(sd_tensor_init_dense_nd(&t, nullptr, SD_FLOAT32, SD_LAYOUT_NCHW, 2, dims), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sd_tensor_init_dense_nd(&t, nullptr, SD_FLOAT32, SD_LAYOUT_NCHW, 3, nullptr), SD_ERROR_INVALID_ARGUMENT);
}

// Spatial rank 1 and 3: the same rules, named for the rank's dims and block sizes.
TEST(Validation, RankOneAndThree) {
    Fixture f({1, 2, 4, 6, 8}, {1, 16, 2, 3, 4});
    const Params s2d{Op::SpaceToDepth, Block(2, 2, 2)};
    ASSERT_TRUE(spacedepth::run(s2d, f.in.tensor, f.out.tensor).ok());
    // Block(bh, bw) on 5-D tensors leaves block_d at 0: refused, not read as 1.
    expect_error({Op::SpaceToDepth, Block(2, 2)}, f.in.tensor, f.out.tensor, SD_ERROR_INVALID_ARGUMENT,
                 {"block sizes must be >= 1", "block_d=0"});
    Fixture g({1, 2, 5, 6, 8}, {1, 16, 2, 3, 4});
    expect_error(s2d, g.in.tensor, g.out.tensor, SD_ERROR_SHAPE,
                 {"input depth D=5 is not divisible by block depth bd=2", "D % bd == 0"}, &g.out.storage);
    Fixture h({1, 12, 2, 2, 2}, {1, 1, 4, 4, 4});
    expect_error({Op::DepthToSpace, 2}, h.in.tensor, h.out.tensor, SD_ERROR_SHAPE,
                 {"input channels C=12 are not divisible by bd*bh*bw=8", "block 2x2x2"}, &h.out.storage);
    Fixture i({1, 16, 2, 2, 2}, {1, 2, 4, 4, 5});
    expect_error({Op::DepthToSpace, 2}, i.in.tensor, i.out.tensor, SD_ERROR_SHAPE,
                 {"output dims [1,2,4,4,5] are not the implied [1,2,4,4,4]"}, &i.out.storage);
    // Rank 1: block_w only; a block_h other than 0 or 1 names the rule.
    Fixture r1({1, 3, 8}, {1, 12, 2});
    ASSERT_TRUE(spacedepth::run({Op::SpaceToDepth, 4}, r1.in.tensor, r1.out.tensor).ok());
    ASSERT_TRUE(spacedepth::run({Op::SpaceToDepth, Block(1, 4)}, r1.in.tensor, r1.out.tensor).ok());
    expect_error({Op::SpaceToDepth, Block(2, 4)}, r1.in.tensor, r1.out.tensor, SD_ERROR_INVALID_ARGUMENT,
                 {"block_h=2 but 3-dim tensors have spatial rank 1", "0 or 1"});
    Fixture r1b({1, 3, 7}, {1, 12, 2});
    expect_error({Op::SpaceToDepth, 4}, r1b.in.tensor, r1b.out.tensor, SD_ERROR_SHAPE,
                 {"input width W=7 is not divisible by block width bw=4"}, &r1b.out.storage);
    // Rank 2 with a block_d: only 0 or 1.
    Fixture r2({1, 1, 4, 4}, {1, 4, 2, 2});
    expect_error({Op::SpaceToDepth, Block(3, 2, 2)}, r2.in.tensor, r2.out.tensor, SD_ERROR_INVALID_ARGUMENT,
                 {"block_d=3 but 4-dim tensors have spatial rank 2"});
    // ndim: both tensors the same, and 3 to 5.
    expect_error({Op::SpaceToDepth, 2}, r2.in.tensor, f.out.tensor, SD_ERROR_INVALID_ARGUMENT,
                 {"output ndim 5 differs from input ndim 4"});
    spacedepth::Tensor six = f.in.tensor;
    six.dims = {1, 2, 1, 4, 6, 8};
    expect_error(s2d, six, f.out.tensor, SD_ERROR_INVALID_ARGUMENT, {"ndim must be 3, 4 or 5", "got 6"});
    spacedepth::Tensor two = r1.in.tensor;
    two.dims = {1, 3};
    expect_error(s2d, two, r1.out.tensor, SD_ERROR_INVALID_ARGUMENT, {"ndim must be 3, 4 or 5", "got 2"});
    // Overflow at rank 3: the volume, and D*bd.
    expect_error({Op::SpaceToDepth, Block(int64_t{1} << 21, int64_t{1} << 21, int64_t{1} << 22)}, f.in.tensor,
                 f.out.tensor, SD_ERROR_OVERFLOW, {"block volume bd*bh*bw overflows"});
    spacedepth::Tensor deep = h.in.tensor;
    deep.dims = {1, 8, INT64_MAX / 2 + 1, 1, 1};
    expect_error({Op::DepthToSpace, 2}, deep, h.out.tensor, SD_ERROR_OVERFLOW, {"output depth D*bd overflows"});
    // output_dims at rank 1 and 3.
    Dims out{};
    ASSERT_TRUE(spacedepth::output_dims({Op::DepthToSpace, Block(2, 3, 4)}, {2, 48, 1, 2, 3}, &out).ok());
    EXPECT_EQ(out, (Dims{2, 2, 2, 6, 12}));
    ASSERT_TRUE(spacedepth::output_dims({Op::SpaceToDepth, 3}, {1, 5, 9}, &out).ok());
    EXPECT_EQ(out, (Dims{1, 15, 3}));
    sd_params cp{SD_DEPTH_TO_SPACE, 2, 2, SD_ORDER_DCR, 0, 2};
    const int64_t in5[5] = {1, 8, 1, 2, 3};
    int64_t out5[5] = {0};
    ASSERT_EQ(sd_output_dims_nd(&cp, 5, in5, out5), SD_OK);
    EXPECT_EQ((Dims{5, out5}), (Dims{1, 1, 2, 4, 6}));
    EXPECT_EQ(sd_output_dims_nd(&cp, 4, in5, out5), SD_ERROR_INVALID_ARGUMENT);  // block_d=2 at rank 2
    EXPECT_NE(std::string(sd_last_error()).find("block_d=2"), std::string::npos) << sd_last_error();
}

// The blocked layouts: each tensor's channels fill whole groups; any element width.
TEST(Validation, BlockedLayouts) {
    Fixture f({1, 8, 2, 2}, {1, 2, 4, 4}, DType::Float32, Layout::NCHWc8, Layout::NCHWc4);
    expect_error({Op::DepthToSpace, 2}, f.in.tensor, f.out.tensor, SD_ERROR_SHAPE,
                 {"output channels C=2 are not divisible by 4", "NCHWc4 stores channels in groups of 4"},
                 &f.out.storage);
    // The other side may be anything the group divides: NCHWc16 in, 4 channels out.
    Fixture g({1, 16, 2, 2}, {1, 4, 4, 4}, DType::Float64, Layout::NCHWc16, Layout::NCHW);
    fill_unique(g.in);
    ASSERT_TRUE(spacedepth::run({Op::DepthToSpace, 2}, g.in.tensor, g.out.tensor).ok());
    EXPECT_EQ(compare(g.out, expected_output({Op::DepthToSpace, 2}, g.in, g.out)), "");
    // A channel count no group lines up with needs a fragment per channel and block position:
    // refused past the limit, with the count and the fix.
    Fixture h({1, 16 * 4097, 1, 1}, {1, 4097, 2, 8}, DType::UInt8, Layout::NCHWc16, Layout::NCHW);
    expect_error({Op::DepthToSpace, Block(2, 8)}, h.in.tensor, h.out.tensor, SD_ERROR_UNSUPPORTED,
                 {"4097 small-side channels", "copy fragments", "multiple of 16"}, &h.out.storage);
    spacedepth::Plan plan;
    EXPECT_EQ(plan.create({Op::DepthToSpace, Block(2, 8)}, h.in.tensor, h.out.tensor).code(), SD_ERROR_UNSUPPORTED);
    // The channel split in two parts: NCHWc8 CRD, block 2x2, 8 channels needs no fragment (one
    // part steps whole deep groups, the other lanes); NCHW_VECT_C CRD with block 3 still does.
    Fixture k({1, 32, 2, 2}, {1, 8, 4, 4}, DType::Float32, Layout::NCHWc8, Layout::NCHWc8);
    const std::string unfragmented =
        spacedepth::describe_call({Op::DepthToSpace, 2, Order::CRD}, k.in.tensor, k.out.tensor);
    EXPECT_EQ(unfragmented.find("fragments"), std::string::npos) << unfragmented;
    Fixture v({1, 36, 2, 2}, {1, 4, 6, 6}, DType::Int8, Layout::NCHW_VECT_C, Layout::NCHW);
    const std::string fragmented =
        spacedepth::describe_call({Op::DepthToSpace, 3, Order::CRD}, v.in.tensor, v.out.tensor);
    EXPECT_NE(fragmented.find("fragments"), std::string::npos) << fragmented;
}

}  // namespace

namespace {

// The one table of names (runtime/names.cpp), read back through both APIs.
TEST(Names, RoundTripAndRejectUnknown) {
    for (Layout l :
         {Layout::NHWC, Layout::NCHW, Layout::NCHW_VECT_C, Layout::NCHWc4, Layout::NCHWc8, Layout::NCHWc16}) {
        Layout back{};
        ASSERT_NE(spacedepth::layout_name(l), nullptr);
        EXPECT_TRUE(spacedepth::layout_from_name(spacedepth::layout_name(l), &back));
        EXPECT_EQ(back, l);
    }
    EXPECT_STREQ(spacedepth::layout_name(Layout::NCHW_VECT_C), "NCHW_VECT_C");
    EXPECT_EQ(spacedepth::layout_name(static_cast<Layout>(6)), nullptr);
    // The rank's own spellings and oneDNN's name the same layouts.
    const std::pair<const char *, Layout> aliases[] = {
        {"NDHWC", Layout::NHWC},      {"NWC", Layout::NHWC},       {"NCDHW", Layout::NCHW},  {"NCW", Layout::NCHW},
        {"nChw16c", Layout::NCHWc16}, {"NCDHWc8", Layout::NCHWc8}, {"nCw4c", Layout::NCHWc4}};
    for (auto [name, want] : aliases) {
        Layout back{};
        EXPECT_TRUE(spacedepth::layout_from_name(name, &back)) << name;
        EXPECT_EQ(back, want) << name;
    }
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
