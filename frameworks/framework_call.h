// One op call as the framework libraries (spacedepth_torch, spacedepth_jax, spacedepth_tf) receive
// it: an input array in its layout's memory order (shape and strides in elements), the block and
// the names of order and layouts. Each library allocates the output in its framework's way and
// turns a failure, one line naming the rule and the values, into its framework's error.
#pragma once

#include "spacedepth/spacedepth_c.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spacedepth::framework {

// A call ready to run: params, and the descriptors of the input and of a C-contiguous output of
// out_shape (array order), data pointers unset.
struct Call {
    sd_params params{};
    sd_tensor in{}, out{};
    std::vector<int64_t> out_shape;
};

// Prepares op on an input array. out_layout "" is the input's layout; threads as sd_params.
// Returns "" or the message.
std::string prepare(sd_op op, const std::vector<int64_t> &shape, const std::vector<int64_t> &strides, sd_dtype dtype,
                    const std::vector<int64_t> &block, const std::string &order, const std::string &layout,
                    const std::string &out_layout, int threads, Call *call);

// The element type of a width in bytes, where the framework's own type has no spacedepth name
// (float8, uint16, ...): the op moves whole elements. SD_DTYPE_COUNT for an unsupported width.
sd_dtype dtype_of_width(int64_t bytes);

// Runs a prepared call on host memory (sd_run, whose one-shot calls keep their plans per shape
// and thread) or on CUDA device memory on `stream` (sd_run_cuda, in the device's primary
// context, the one PyTorch and JAX use). Returns "" or the message; nothing is written then.
std::string run_host(const Call &call, const void *in, void *out);
std::string run_cuda(const Call &call, const void *in, void *out, int device, void *stream);

}  // namespace spacedepth::framework
