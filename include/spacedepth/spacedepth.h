// spacedepth: SpaceToDepth and DepthToSpace kernels. The C++17 API.
//
//   #include <spacedepth/spacedepth.h>
//   std::vector<float> x(1 * 4 * 4 * 1), y(1 * 2 * 2 * 4);
//   auto in  = spacedepth::Tensor::dense(x.data(), spacedepth::DType::Float32, spacedepth::Layout::NHWC, {1, 1, 4, 4});
//   auto out = spacedepth::Tensor::dense(y.data(), spacedepth::DType::Float32, spacedepth::Layout::NHWC, {1, 4, 2, 2});
//   spacedepth::Status s = spacedepth::space_to_depth(in, out, 2);
//   if (!s.ok()) std::cerr << s.message() << "\n";
//
// Dims are always logical, whatever the memory layout: N, C, then the spatial dims, so (N, C, W),
// (N, C, H, W) or (N, C, D, H, W) for spatial rank 1, 2 or 3. The block has as many sizes:
// Block(2) is square at every rank, Block(bh, bw) rank 2, Block(bd, bh, bw) rank 3. Nothing here
// throws.
#pragma once

#include "spacedepth/spacedepth_c.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace spacedepth {

enum class Op : int { SpaceToDepth = SD_SPACE_TO_DEPTH, DepthToSpace = SD_DEPTH_TO_SPACE };
enum class Order : int { DCR = SD_ORDER_DCR, CRD = SD_ORDER_CRD };
// At every spatial rank (sd_layout): NHWC channels last, NCHW channels first, NCHWc4/8/16 blocked
// channels [N, C/k, spatial..., k], NCHW_VECT_C = NCHWc4 with 1-byte elements.
enum class Layout : int {
    NHWC = SD_LAYOUT_NHWC,
    NCHW = SD_LAYOUT_NCHW,
    NCHW_VECT_C = SD_LAYOUT_NCHW_VECT_C,
    NCHWc4 = SD_LAYOUT_NCHWC4,
    NCHWc8 = SD_LAYOUT_NCHWC8,
    NCHWc16 = SD_LAYOUT_NCHWC16,
};
// clang-format off
enum class DType : int {
    Bool = SD_BOOL, Int8 = SD_INT8, UInt8 = SD_UINT8, QInt8 = SD_QINT8, QUInt8 = SD_QUINT8,
    Int16 = SD_INT16, UInt16 = SD_UINT16, Float16 = SD_FLOAT16, BFloat16 = SD_BFLOAT16,
    Int32 = SD_INT32, UInt32 = SD_UINT32, Float32 = SD_FLOAT32, QInt32 = SD_QINT32,
    Int64 = SD_INT64, UInt64 = SD_UINT64, Float64 = SD_FLOAT64, Complex64 = SD_COMPLEX64,
    Complex128 = SD_COMPLEX128,
};
// clang-format on

// Logical dims, or strides: N, C, then 1-3 spatial dims. Default: 4 zeros (N, C, H, W).
// Dims{1, 3, 8, 8} is rank 2; Dims{1, 3, 4, 8, 8} rank 3. More than SD_MAX_NDIM values keep
// the first SD_MAX_NDIM and a count that validation rejects.
class Dims {
public:
    Dims() = default;
    Dims(std::initializer_list<int64_t> values) : count_(static_cast<int>(values.size())) {
        std::copy_n(values.begin(), size(), values_.begin());
    }
    Dims(int ndim, const int64_t *values) : count_(ndim < 0 ? 0 : ndim) {
        std::copy_n(values, size(), values_.begin());
    }
    size_t size() const { return static_cast<size_t>(count_ < SD_MAX_NDIM ? count_ : SD_MAX_NDIM); }
    int ndim() const { return count_; }  // as given: may be out of range
    int64_t &operator[](size_t i) { return values_[i]; }
    const int64_t &operator[](size_t i) const { return values_[i]; }
    int64_t *data() { return values_.data(); }
    const int64_t *data() const { return values_.data(); }
    int64_t *begin() { return values_.data(); }
    int64_t *end() { return values_.data() + size(); }
    const int64_t *begin() const { return values_.data(); }
    const int64_t *end() const { return values_.data() + size(); }
    bool operator==(const Dims &o) const { return count_ == o.count_ && std::equal(begin(), end(), o.begin()); }
    bool operator!=(const Dims &o) const { return !(*this == o); }

private:
    std::array<int64_t, SD_MAX_NDIM> values_{};
    int count_ = 4;
};

struct Tensor {
    void *data = nullptr;
    DType dtype = DType::Float32;
    Layout layout = Layout::NHWC;
    Dims dims{};     // N, C, spatial...
    Dims strides{};  // elements per step along each logical dim (blocked layouts: C steps a group of k);
                     // negative: a reversed dim (data is logical element 0)

    // A dense tensor: the strides its layout implies. A size that overflows gives strides that
    // validation rejects with an overflow error.
    static Tensor dense(void *data, DType dtype, Layout layout, const Dims &dims);
};

// d = 0: no depth given (rank 1 or 2). A square block fills the sizes of the tensors' rank.
struct Block {
    int64_t d = 0, h = 1, w = 1;
    bool square = false;
    Block(int64_t b) : d(b), h(b), w(b), square(true) {}  // NOLINT: a square block converts implicitly
    Block(int64_t bh, int64_t bw) : h(bh), w(bw) {}
    Block(int64_t bd, int64_t bh, int64_t bw) : d(bd), h(bh), w(bw) {}
};

struct Params {
    Op op = Op::SpaceToDepth;
    Block block = 2;
    Order order = Order::DCR;
    int threads = 0;  // 0: the library setting; 1: the caller's thread only; N: up to N threads
};

class Status {
public:
    Status() = default;
    Status(sd_status code, std::string message) : code_(code), message_(std::move(message)) {}
    bool ok() const { return code_ == SD_OK; }
    sd_status code() const { return code_; }
    const std::string &message() const { return message_; }

private:
    sd_status code_ = SD_OK;
    std::string message_;
};

namespace detail {
struct PlannedCall;
}

// How Plan::create makes a plan (sd_plan_options): by the planner's rules, or, with measure, by
// timing the rules' plan and its alternatives on scratch tensors within time_limit_ms (0: the
// default, SD_PLAN_DEFAULT_TIME_LIMIT_MS) and keeping the fastest. The wisdom's choice for the
// call's shape, where it has one, is taken either way.
struct PlanOptions {
    bool measure = false;
    double time_limit_ms = 0;
};

// A call validated and planned once, then run on any memory of that shape (sd_plan_create and
// sd_plan_run in C). create() checks every rule but the two about memory; the tensors' data
// pointers are ignored. run() checks only those two (null data with a non-zero size, overlap)
// and calls the kernels; it reads the plan only, so many threads may run one plan at once.
//
//   spacedepth::Plan plan;
//   if (Status s = plan.create(Params{Op::DepthToSpace, 2}, in_desc, out_desc); !s.ok()) ...
//   for (...) plan.run(x, y);
class Plan {
public:
    Plan() = default;
    ~Plan();
    Plan(Plan &&other) noexcept;
    Plan &operator=(Plan &&other) noexcept;
    Plan(const Plan &) = delete;
    Plan &operator=(const Plan &) = delete;

    Status create(const Params &params, const Tensor &in, const Tensor &out);
    Status create(const Params &params, const Tensor &in, const Tensor &out, const PlanOptions &options);
    Status run(const void *in, void *out) const;
    bool ready() const { return planned_ != nullptr; }
    // Which kernel variant runs, in words (as describe_call()), and how the plan was made.
    std::string describe() const;

private:
    detail::PlannedCall *planned_ = nullptr;
};

// The wisdom (sd_wisdom_export and the rest): measured choices per call shape, kept for the
// process. The text functions are the file's contents, for callers that store it themselves.
Status export_wisdom(const std::string &path);
Status import_wisdom(const std::string &path);
std::string wisdom_text();
Status import_wisdom_text(const std::string &text);
void forget_wisdom();

// The output dims that params imply for input dims (of any rank), or an error.
Status output_dims(const Params &params, const Dims &in_dims, Dims *out_dims);

Status run(const Params &params, const Tensor &in, const Tensor &out);

// The caller's CUDA context and stream (CUcontext, CUstream). A null context lets Halide create
// its own; a null stream is the default stream.
struct CudaStream {
    void *context = nullptr;
    void *stream = nullptr;
};
// run() on CUDA device memory: in.data and out.data are device pointers the caller owns. The
// kernel is queued on the stream and not waited for. Without a driver or GPU, or in a build
// without CUDA kernels, the status names the cause.
Status run_cuda(const Params &params, const Tensor &in, const Tensor &out, const CudaStream &stream);
Status space_to_depth(const Tensor &in, const Tensor &out, Block block, Order order = Order::DCR, int threads = 0);
Status depth_to_space(const Tensor &in, const Tensor &out, Block block, Order order = Order::DCR, int threads = 0);

// Which kernel variant a call would use, in words (for `spacedepth info`), or why it would fail.
std::string describe_call(const Params &params, const Tensor &in, const Tensor &out);

// What this build contains: version, kernels and their targets, CPU features seen.
std::string build_info();

// Process-wide; 0 = one per core. Outside 0 to SD_MAX_THREADS (256): an error status, nothing set.
Status set_num_threads(int threads);
int num_threads();

// Names: "float32", "NCHWc8", "space_to_depth", "DCR"; nullptr for a value out of range.
// The *_from_name functions return false for an unknown name; layout_from_name also takes the
// rank's own spellings (NWC, NDHWC, NCW, NCDHW, NCDHWc16, ...).
int dtype_size(DType dtype);      // bytes; 0 when out of range
int layout_lanes(Layout layout);  // channels per group: 4, 8 or 16 for the blocked layouts; 1 otherwise
const char *dtype_name(DType dtype);
bool dtype_from_name(const std::string &name, DType *dtype);
// sd_dtype_from_typestr: numpy's type string ("<f4") to the dtype that moves it, or why not.
Status dtype_from_typestr(const std::string &typestr, DType *dtype);
const char *op_name(Op op);
bool op_from_name(const std::string &name, Op *op);
const char *order_name(Order order);
bool order_from_name(const std::string &name, Order *order);
const char *layout_name(Layout layout);
bool layout_from_name(const std::string &name, Layout *layout);
const char *version();  // the library version, as spacedepth_version() (spacedepth/version.h)

}  // namespace spacedepth
