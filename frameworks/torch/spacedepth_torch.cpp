// spacedepth_torch: the ops as PyTorch C++ operators, torch.ops.spacedepth.space_to_depth and
// depth_to_space, on torch's stable ABI (TORCH_TARGET_VERSION 2.10), so one build loads into
// every torch from 2.10 on. CPU tensors run through the library's one-shot path (a plan per
// shape, cached per thread); CUDA tensors on torch's current stream of their device. The fake
// kernel (shapes for torch.compile and torch.export, symbolic sizes included) and the autograd
// formula are registered in Python (spacedepth/torch.py), where symbolic shapes can be computed.
//
//   torch.ops.load_library("libspacedepth_torch.so")
//   y = torch.ops.spacedepth.depth_to_space(x, [2, 2], "CRD", "NCHW", "")   # pixel_shuffle(x, 2)
#define TORCH_TARGET_VERSION (((0ULL + 2) << 56) | ((0ULL + 10) << 48))
#include "frameworks/framework_call.h"
#include "tools/array_layout.h"

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>

#include <dlfcn.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;
using IntList = torch::headeronly::HeaderOnlyArrayRef<int64_t>;
namespace fw = spacedepth::framework;

void require(const std::string &broken) {
    if (!broken.empty()) throw std::runtime_error(broken);
}

sd_dtype dtype_of(const Tensor &t) {
    switch (t.scalar_type()) {
    case ScalarType::Bool: return SD_BOOL;
    case ScalarType::Byte: return SD_UINT8;
    case ScalarType::Char: return SD_INT8;
    case ScalarType::Short: return SD_INT16;
    case ScalarType::Half: return SD_FLOAT16;
    case ScalarType::BFloat16: return SD_BFLOAT16;
    case ScalarType::Int: return SD_INT32;
    case ScalarType::Float: return SD_FLOAT32;
    case ScalarType::Long: return SD_INT64;
    case ScalarType::Double: return SD_FLOAT64;
    case ScalarType::ComplexFloat: return SD_COMPLEX64;
    case ScalarType::ComplexDouble: return SD_COMPLEX128;
    case ScalarType::QInt8:
    case ScalarType::QUInt8:
    case ScalarType::QInt32:
    case ScalarType::QUInt4x2:
    case ScalarType::QUInt2x4:
        throw std::runtime_error(
            "unsupported dtype: quantized tensors carry a scale and zero point per tensor or "
            "channel; dequantize, or pass int_repr()");
    default: break;
    }
    // float8, uint16/32/64, ...: whole elements of their width.
    const sd_dtype d = fw::dtype_of_width(static_cast<int64_t>(t.element_size()));
    if (d == SD_DTYPE_COUNT) {
        throw std::runtime_error("unsupported dtype of " + std::to_string(t.element_size()) +
                                 " bytes (spacedepth moves elements of 1, 2, 4, 8 or 16 bytes)");
    }
    return d;
}

// torch's current CUDA stream of a device, from libtorch_cuda's shim, looked up when a CUDA tensor
// arrives: a CPU-only torch has no such symbol, and the library must load there too.
void *current_cuda_stream(int32_t device) {
    using Getter = int32_t (*)(int32_t, void **);  // aoti_torch_get_current_cuda_stream
    static const auto get = reinterpret_cast<Getter>(dlsym(RTLD_DEFAULT, "aoti_torch_get_current_cuda_stream"));
    void *stream = nullptr;
    if (get == nullptr || get(device, &stream) != 0) {
        throw std::runtime_error("no current CUDA stream for device " + std::to_string(device) +
                                 " (this torch has no CUDA shim)");
    }
    return stream;
}

// A new C-contiguous tensor of x's dtype and device: the shim's empty_strided directly, about
// 1 us a call less than torch::stable::new_empty, which boxes its arguments for the dispatcher.
Tensor new_contiguous(const Tensor &x, const std::vector<int64_t> &shape) {
    const std::vector<int64_t> strides = array_layout::contiguous_strides(shape);
    int32_t dtype = 0, device_type = 0, device_index = 0;
    AtenTensorHandle handle = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(x.get(), &dtype));
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(x.get(), &device_type));
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_index(x.get(), &device_index));
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(static_cast<int64_t>(shape.size()), shape.data(),
                                                           strides.data(), dtype, device_type, device_index, &handle));
    return Tensor(handle);
}

Tensor run(sd_op op, Tensor x, IntList block, const std::string &order, const std::string &layout,
           const std::string &out_layout) {
    const std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    std::vector<int64_t> strides(x.strides().begin(), x.strides().end());
    fw::Call call;
    std::string broken = fw::prepare(op, shape, strides, dtype_of(x), std::vector<int64_t>(block.begin(), block.end()),
                                     order, layout, out_layout, 0, &call);
    if (!broken.empty() && x.dim() > 0 && x.stride(x.dim() - 1) != 1) {
        // A blocked layout needs a group's channels adjacent: a contiguous copy has them.
        x = torch::stable::contiguous(x);
        strides.assign(x.strides().begin(), x.strides().end());
        broken = fw::prepare(op, shape, strides, dtype_of(x), std::vector<int64_t>(block.begin(), block.end()), order,
                             layout, out_layout, 0, &call);
    }
    require(broken);
    Tensor y = new_contiguous(x, call.out_shape);
    if (x.is_cpu()) {
        require(fw::run_host(call, x.const_data_ptr(), y.mutable_data_ptr()));
    } else if (x.is_cuda()) {
        const int32_t device = x.get_device_index();
        require(fw::run_cuda(call, x.const_data_ptr(), y.mutable_data_ptr(), device, current_cuda_stream(device)));
    } else {
        throw std::runtime_error("spacedepth runs CPU and CUDA tensors");
    }
    return y;
}

// TORCH_BOX unboxes each argument into a parameter of its own type: strings by value.
// NOLINTBEGIN(performance-unnecessary-value-param)
Tensor space_to_depth(Tensor x, IntList block, std::string order, std::string layout, std::string out_layout) {
    return run(SD_SPACE_TO_DEPTH, std::move(x), block, order, layout, out_layout);
}

Tensor depth_to_space(Tensor x, IntList block, std::string order, std::string layout, std::string out_layout) {
    return run(SD_DEPTH_TO_SPACE, std::move(x), block, order, layout, out_layout);
}

// NOLINTEND(performance-unnecessary-value-param)

}  // namespace

// The schema of the Python module's torch.library fallback (spacedepth/torch.py), so code and
// traced graphs read the same with and without this library.
STABLE_TORCH_LIBRARY(spacedepth, m) {
    m.def(
        "space_to_depth(Tensor x, int[] block, str order=\"DCR\", str layout=\"NHWC\", str out_layout=\"\") -> "
        "Tensor");
    m.def(
        "depth_to_space(Tensor x, int[] block, str order=\"DCR\", str layout=\"NHWC\", str out_layout=\"\") -> "
        "Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(spacedepth, CPU, m) {
    m.impl("space_to_depth", TORCH_BOX(&space_to_depth));
    m.impl("depth_to_space", TORCH_BOX(&depth_to_space));
}

STABLE_TORCH_LIBRARY_IMPL(spacedepth, CUDA, m) {
    m.impl("space_to_depth", TORCH_BOX(&space_to_depth));
    m.impl("depth_to_space", TORCH_BOX(&depth_to_space));
}
