// Test tensors with their own storage (optionally padded into strided views), unique fills, and
// comparisons that report every mismatching coordinate, in the manner of XNNPACK's testers.
#pragma once

#include "runtime/switch_points.h"
#include "spacedepth/spacedepth.h"
#include "tests/reference.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace testing_support {

using spacedepth::Block;
using spacedepth::Dims;
using spacedepth::DType;
using spacedepth::Layout;
using spacedepth::Op;
using spacedepth::Order;
using spacedepth::Params;

constexpr uint8_t kSentinel = 0xA5;  // every byte outside the written elements keeps this value

// The reference's view of a library tensor descriptor.
reference::TensorRef as_reference(const spacedepth::Tensor &t);

struct TestTensor {
    std::vector<uint8_t> storage;
    spacedepth::Tensor tensor;  // a view into storage
    int64_t origin = 0;         // bytes from storage's start to logical element 0 (> 0 when reversed)
    reference::TensorRef ref() const;
    int64_t elements() const;
    void rebase();  // points tensor.data at this object's own storage (after a copy)
};

// A tensor of the given logical dims. With rng, each stride gets 0-3 elements of padding, so the
// tensor is a strided view into a larger buffer; without, it is dense. Each logical dim in the
// bit mask reversed_dims (bit i: dim i) gets a negative stride, as numpy's x[:, ::-1] has: data
// points at logical element 0, which then lies past the start of storage. Storage is filled
// with kSentinel.
TestTensor make_tensor(DType dtype, Layout layout, const spacedepth::Dims &dims, std::mt19937_64 *rng = nullptr,
                       unsigned reversed_dims = 0);
// A random non-empty mask of reversed dims for an ndim-dim tensor, or 0 where the test device
// takes no negative strides (the OpenCL test path).
unsigned random_reversal(std::mt19937_64 &rng, int ndim);
bool test_device_takes_negative_strides();

// Writes a distinct value into every logical element (distinct while the count fits the width).
void fill_unique(TestTensor &t, uint64_t salt = 0);

// Empty when got and want are byte-identical, padding included; otherwise one line per
// mismatching logical coordinate (up to a limit), plus the count of damaged padding bytes.
std::string compare(const TestTensor &got, const TestTensor &want);

// Runs the op on the device this test process was asked for: the host kernels, or, with
// SPACEDEPTH_TEST_DEVICE=opencl, the OpenCL build of the GPU schedules (ctest opencl_pocl runs
// the matrix that way on PoCL, so the GPU index algebra and tiling are tested without a GPU).
spacedepth::Status run_op(const spacedepth::Params &p, const spacedepth::Tensor &in, const spacedepth::Tensor &out);

// The expected output: a tensor shaped like `out`, filled by the independent reference.
TestTensor expected_output(const spacedepth::Params &p, const TestTensor &in, const TestTensor &out);

// Channels per group of a blocked layout (NCHWc4/8/16, NCHW_VECT_C); 1 otherwise. The tests'
// own table, not spacedepth::layout_lanes: a wrong group size must not hide in both.
int lanes(Layout layout);
// The block sizes of a call at spatial rank `rank`, outermost first (a square block repeated).
void block_sizes(const Params &p, int rank, int64_t *block);
// The deep-side dims for space-side dims under p's block.
Dims deep_dims(const Dims &space, const Params &p);

// The C API's structs for a tensor and for a call's params at ndim dims (the block's sizes of
// that rank; a square block repeated), for tests calling the C API or the core directly.
sd_tensor as_c(const spacedepth::Tensor &t);
sd_params as_c(const spacedepth::Params &p, int ndim);

// A random call: op, order, spatial rank (1-3, or `rank`), input and output layout (fused
// conversions, blocked layouts; NCHW_VECT_C with int8), element width, block 1-4 per dim (rank 3:
// 1-3), 1 to max_channels channels that both tensors' channel groups divide, 1 to max_blocks
// blocks per spatial dim (rank 3: at most 3), batch 1 or 2, 0-2 threads, each tensor dense or
// strided.
struct RandomCall {
    spacedepth::Params params;
    TestTensor in, out;
};
RandomCall random_call(std::mt19937_64 &rng, int64_t max_channels, int64_t max_blocks, int rank = 0);

// The runtime's switch points with the streaming ones at 0: every plan the rule lets stream runs
// the kernels' streaming-store twins, whatever its size.
spacedepth::detail::SwitchPoints streaming_everywhere();
// The same with the small family off, so small tensors reach the twins too.
spacedepth::detail::SwitchPoints streaming_at_any_size();

// The runtime's switch points set for a scope (tests reaching other kernel variants), restored after.
class ScopedSwitchPoints {
public:
    explicit ScopedSwitchPoints(const spacedepth::detail::SwitchPoints &points)
        : saved_(spacedepth::detail::switch_points()) {
        spacedepth::detail::set_switch_points(points);
    }
    ~ScopedSwitchPoints() { spacedepth::detail::set_switch_points(saved_); }
    ScopedSwitchPoints(const ScopedSwitchPoints &) = delete;
    ScopedSwitchPoints &operator=(const ScopedSwitchPoints &) = delete;

private:
    spacedepth::detail::SwitchPoints saved_;
};

}  // namespace testing_support
