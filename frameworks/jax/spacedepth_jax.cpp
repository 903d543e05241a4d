// spacedepth_jax: the ops as XLA FFI handlers for JAX (spacedepth/jax.py registers them and calls
// them through jax.ffi.ffi_call). XLA hands the handler dense row-major buffers. Under vmap the
// batch dims come first (vmap_method "broadcast_all"), and the handler folds them into N: one
// call for the whole batch. The CPU handler runs on host memory through the library's one-shot
// path (a plan per shape, cached per thread); the CUDA handler on XLA's stream of the device.
#include "frameworks/framework_call.h"
#include "tools/array_layout.h"

#include <xla/ffi/api/ffi.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ffi = xla::ffi;
namespace fw = spacedepth::framework;

namespace {

sd_dtype dtype_of(ffi::DataType t) {
    switch (t) {
    case ffi::DataType::PRED: return SD_BOOL;
    case ffi::DataType::S8: return SD_INT8;
    case ffi::DataType::U8: return SD_UINT8;
    case ffi::DataType::S16: return SD_INT16;
    case ffi::DataType::U16: return SD_UINT16;
    case ffi::DataType::F16: return SD_FLOAT16;
    case ffi::DataType::BF16: return SD_BFLOAT16;
    case ffi::DataType::S32: return SD_INT32;
    case ffi::DataType::U32: return SD_UINT32;
    case ffi::DataType::F32: return SD_FLOAT32;
    case ffi::DataType::S64: return SD_INT64;
    case ffi::DataType::U64: return SD_UINT64;
    case ffi::DataType::F64: return SD_FLOAT64;
    case ffi::DataType::C64: return SD_COMPLEX64;
    case ffi::DataType::C128: return SD_COMPLEX128;
    default: return fw::dtype_of_width(static_cast<int64_t>(ffi::ByteWidth(t)));  // float8: bytes
    }
}

// The call on x with its vmap batch dims (those before the op's own `ndim` array dims) folded
// into N, and checked against the output buffer XLA allocated.
ffi::Error prepare(sd_op op, const ffi::AnyBuffer &x, ffi::Result<ffi::AnyBuffer> &y, int64_t ndim,
                   ffi::Span<const int64_t> block, std::string_view order, std::string_view layout,
                   std::string_view out_layout, fw::Call *call) {
    const auto dims = x.dimensions();
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (ndim < 3 || rank < ndim) {
        return ffi::Error::InvalidArgument("x has " + std::to_string(rank) + " dims; the op's arrays have " +
                                           std::to_string(ndim) + " (3 to 5, plus a lane dim for a blocked layout)");
    }
    const sd_dtype dtype = dtype_of(x.element_type());
    if (dtype == SD_DTYPE_COUNT || x.element_type() != y->element_type()) {
        return ffi::Error::InvalidArgument(
            "unsupported element type (spacedepth moves elements of 1, 2, 4, 8 or 16 "
            "bytes; x and the result the same type)");
    }
    std::vector<int64_t> shape(dims.begin() + (rank - ndim), dims.end());
    for (int64_t i = 0; i < rank - ndim; i++) shape[0] *= dims[i];  // batch dims into N
    const std::vector<int64_t> strides = array_layout::contiguous_strides(shape);
    const std::string broken = fw::prepare(op, shape, strides, dtype, std::vector<int64_t>(block.begin(), block.end()),
                                           std::string(order), std::string(layout), std::string(out_layout), 0, call);
    if (!broken.empty()) return ffi::Error::InvalidArgument(broken);
    int64_t out_elements = 1;
    for (int64_t d : call->out_shape) out_elements *= d;
    if (static_cast<int64_t>(y->element_count()) != out_elements) {
        return ffi::Error::InvalidArgument("the result buffer has " + std::to_string(y->element_count()) +
                                           " elements; the op writes " + std::to_string(out_elements));
    }
    return ffi::Error::Success();
}

ffi::Error run_cpu(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, int32_t op, int64_t ndim,
                   ffi::Span<const int64_t> block, std::string_view order, std::string_view layout,
                   std::string_view out_layout) {
    fw::Call call;
    if (ffi::Error e = prepare(static_cast<sd_op>(op), x, y, ndim, block, order, layout, out_layout, &call);
        e.failure()) {
        return e;
    }
    const std::string broken = fw::run_host(call, x.untyped_data(), y->untyped_data());
    return broken.empty() ? ffi::Error::Success() : ffi::Error::Internal(broken);
}

ffi::Error run_gpu(void *stream, int32_t device, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, int32_t op,
                   int64_t ndim, ffi::Span<const int64_t> block, std::string_view order, std::string_view layout,
                   std::string_view out_layout) {
    fw::Call call;
    if (ffi::Error e = prepare(static_cast<sd_op>(op), x, y, ndim, block, order, layout, out_layout, &call);
        e.failure()) {
        return e;
    }
    const std::string broken = fw::run_cuda(call, x.untyped_data(), y->untyped_data(), device, stream);
    return broken.empty() ? ffi::Error::Success() : ffi::Error::Internal(broken);
}

}  // namespace

namespace {

// The operand, result and attributes of both handlers. op: SD_SPACE_TO_DEPTH or
// SD_DEPTH_TO_SPACE; ndim: the dims of one unbatched array.
template <typename Binding>
auto op_signature(Binding binding) {
    return std::move(binding)
        .template Arg<ffi::AnyBuffer>()
        .template Ret<ffi::AnyBuffer>()
        .template Attr<int32_t>("op")
        .template Attr<int64_t>("ndim")
        .template Attr<ffi::Span<const int64_t>>("block")
        .template Attr<std::string_view>("order")
        .template Attr<std::string_view>("layout")
        .template Attr<std::string_view>("out_layout");
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(SpacedepthCpu, run_cpu, op_signature(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    SpacedepthCuda, run_gpu,
    op_signature(ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void *>>().Ctx<ffi::DeviceOrdinal>()));
