// Internal types shared by validation, the view algebra and the executor.
#pragma once

#include "runtime/small_vector.h"
#include "spacedepth/spacedepth.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

struct halide_buffer_t;

namespace spacedepth::detail {

// A validated call. The "space" tensor is the one with the large spatial dims (S2D input,
// D2S output); the "deep" tensor has bh*bw times the channels.
struct Problem {
    sd_op op;
    sd_order order;
    int64_t bh, bw;
    sd_tensor in, out;
    const sd_tensor *space() const { return op == SD_SPACE_TO_DEPTH ? &in : &out; }
    const sd_tensor *deep() const { return op == SD_SPACE_TO_DEPTH ? &out : &in; }
    int64_t elem_bytes;
    int64_t bytes;  // bytes of one tensor (input and output are the same size)
    bool empty;     // some dim is 0: valid, nothing to do
    int threads;
};

// The op, order, block and thread rules.
Status check_params(const sd_params &params);
// The output dims params imply for in_dims (after check_params): divisibility and overflow rules.
Status implied_dims(const sd_params &params, const int64_t in_dims[4], int64_t out_dims[4]);
// Checks every rule of SPEC section 5. On success fills *problem.
Status validate(const sd_params &params, const sd_tensor &in, const sd_tensor &out, Problem *problem);

// One dimension of a copy: out[i * out_stride] = in[i * in_stride], i < extent.
struct ViewDim {
    int64_t extent;
    int64_t in_stride;
    int64_t out_stride;
};

// At most: the element's byte dim plus the seven digits (n, h, w, cv, ci, by, bx).
constexpr size_t kMaxDims = 8;
using DimList = SmallVector<ViewDim, kMaxDims>;
// Constant (in, out) offset pairs; empty means the single pair (0, 0).
using Fragments = std::vector<std::pair<int64_t, int64_t>>;

// The whole op as a permuted copy: a box of dims, repeated at a list of constant offset pairs
// (only where a layout's index split is not affine; see view.cpp).
struct View {
    DimList dims;         // strides in elements
    Fragments fragments;  // (in, out) offsets in elements
};

View build_view(const Problem &problem);

// A view made ready for the kernels: in units of `width` bytes, at most kKernelRank dims for
// the kernel, and loop dims the executor runs around it.
constexpr int kKernelRank = 6;
constexpr int64_t kMaxKernelExtent = INT32_MAX;  // halide_dimension_t holds int32
constexpr int64_t kMaxKernelStride = INT32_MAX;

struct LoopDim {
    int64_t extent;       // iterations
    int64_t in_stride;    // in `width` units, per iteration
    int64_t out_stride;
    int chunked_dim = -1; // >= 0: this loop walks kernel dim chunked_dim in chunks of chunk
    int64_t chunk = 0;
    int64_t total = 0;    // the chunked dim's full extent
};

// Where a call's tensors live and which kernels run it.
//   Host:   host memory, the CPU kernels.
//   Cuda:   CUDA device memory (run_cuda), the CUDA kernels.
//   OpenCL: host memory, run by the OpenCL build of the GPU schedules (Halide copies to and from
//           the device). Internal: the tests use it to run the GPU schedules on PoCL.
enum class Device { Host, Cuda, OpenCL };

// The kernel families (generators/permute_copy_generator.cpp, parameter `pattern`): three for
// the CPU, two for GPUs (schedules/gpu.cpp).
enum class KernelFamily { General, Transpose, Small, GpuGeneral, GpuTranspose };

struct Plan {
    Device device = Device::Host;
    KernelFamily family = KernelFamily::General;
    int width = 1;                       // bytes per kernel element: 1, 2, 4 or 8
    DimList kernel_dims;                 // exactly kKernelRank slots, innermost first, width units
    SmallVector<LoopDim, 2 * kMaxDims> loop_dims;  // run by the executor, innermost first
    Fragments fragments;                 // in width units; empty: the single pair (0, 0)
    bool parallel = false;
};


Plan normalize(const Problem &problem, const View &view, Device device = Device::Host);

// A call's device; for CUDA, the caller's context and stream (a null context: Halide's own
// context; a null stream: the default stream).
// The entry point of every kernel (the permute_copy generator's signature).
using KernelFn = int (*)(void const *, halide_buffer_t *, bool, halide_buffer_t *);

struct DeviceCall {
    Device device = Device::Host;
    void *context = nullptr;  // CUcontext
    void *stream = nullptr;   // CUstream
    // Other builds of the same generator, run instead of the built-in host kernels, indexed by
    // KernelFamily (General, Transpose, Small) and log2 of the element width in bytes; null
    // keeps the built-in one. Only the schedule comparison in bench/ sets them (manual vs tuned
    // vs Halide's autoschedulers).
    KernelFn host_kernels[3][4] = {};
};

// Runs the plan; Halide errors come back in the status.
Status execute(const Problem &problem, const Plan &plan, const DeviceCall &call = {});

std::string describe_plan(const Plan &plan);

// The core the C and C++ APIs both call (api.cpp): validate, plan, execute.
Status run_c(const sd_params &params, const sd_tensor &in, const sd_tensor &out, const DeviceCall &call = {});
// The same from the C++ types: run() and run_cuda(), and the tests' OpenCL runs.
Status run_on(const Params &params, const Tensor &in, const Tensor &out, const DeviceCall &call);
Status output_dims_c(const sd_params &params, const int64_t in_dims[4], int64_t out_dims[4]);
// The kernel libraries this build contains, for build_info() (execute.cpp).
std::string kernel_names();

// Shared formatting for error messages.
Status error(sd_status code, const std::string &message);
std::string dims_str(const int64_t dims[4]);

}  // namespace spacedepth::detail
