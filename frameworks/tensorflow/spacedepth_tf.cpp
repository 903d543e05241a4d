// spacedepth_tf: the ops as TensorFlow ops for tf.load_op_library (spacedepth/tensorflow.py loads
// it and registers the gradients). The arguments are tf.nn.space_to_depth / depth_to_space's,
// block_size and data_format (NHWC, NCHW, NCHW_VECT_C), plus order (DCR, TensorFlow's own, or
// CRD) and out_format (a fused layout conversion; "" keeps data_format). CPU kernels for every
// element type; TensorFlow's tensors are dense row-major.
#include "frameworks/framework_call.h"
#include "tools/array_layout.h"

#include <tensorflow/core/framework/op.h>
#include <tensorflow/core/framework/op_kernel.h>
#include <tensorflow/core/framework/shape_inference.h>

#include <string>
#include <vector>

namespace {

namespace fw = spacedepth::framework;
using tensorflow::OpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::Status;
using tensorflow::Tensor;
using tensorflow::TensorShape;
using tensorflow::shape_inference::InferenceContext;

sd_dtype dtype_of(tensorflow::DataType t) {
    switch (t) {
    case tensorflow::DT_BOOL: return SD_BOOL;
    case tensorflow::DT_INT8: return SD_INT8;
    case tensorflow::DT_UINT8: return SD_UINT8;
    case tensorflow::DT_QINT8: return SD_QINT8;
    case tensorflow::DT_QUINT8: return SD_QUINT8;
    case tensorflow::DT_INT16: return SD_INT16;
    case tensorflow::DT_UINT16: return SD_UINT16;
    case tensorflow::DT_HALF: return SD_FLOAT16;
    case tensorflow::DT_BFLOAT16: return SD_BFLOAT16;
    case tensorflow::DT_INT32: return SD_INT32;
    case tensorflow::DT_UINT32: return SD_UINT32;
    case tensorflow::DT_FLOAT: return SD_FLOAT32;
    case tensorflow::DT_QINT32: return SD_QINT32;
    case tensorflow::DT_INT64: return SD_INT64;
    case tensorflow::DT_UINT64: return SD_UINT64;
    case tensorflow::DT_DOUBLE: return SD_FLOAT64;
    case tensorflow::DT_COMPLEX64: return SD_COMPLEX64;
    case tensorflow::DT_COMPLEX128: return SD_COMPLEX128;
    case tensorflow::DT_STRING:
    case tensorflow::DT_RESOURCE:
    case tensorflow::DT_VARIANT: return SD_DTYPE_COUNT;  // handles, not elements
    default: return fw::dtype_of_width(tensorflow::DataTypeSize(t));
    }
}

std::vector<int64_t> dims_of(const TensorShape &shape) {
    std::vector<int64_t> d(static_cast<size_t>(shape.dims()));
    for (int i = 0; i < shape.dims(); i++) d[i] = shape.dim_size(i);
    return d;
}

// The output shape where the input's is known; otherwise unknown dims of the output's rank.
template <sd_op kOp>
Status infer_shape(InferenceContext *c) {
    std::vector<int> block;
    std::string order, format, out_format;
    TF_RETURN_IF_ERROR(c->GetAttr("block_size", &block));
    TF_RETURN_IF_ERROR(c->GetAttr("order", &order));
    TF_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
    TF_RETURN_IF_ERROR(c->GetAttr("out_format", &out_format));
    const auto in = c->input(0);
    if (!c->RankKnown(in)) {
        c->set_output(0, c->UnknownShape());
        return Status();
    }
    std::vector<int64_t> shape;
    for (int i = 0; i < c->Rank(in); i++) {
        if (!c->ValueKnown(c->Dim(in, i))) {
            c->set_output(0, c->UnknownShapeOfRank(c->Rank(in)));
            return Status();
        }
        shape.push_back(c->Value(c->Dim(in, i)));
    }
    const std::vector<int64_t> strides = array_layout::contiguous_strides(shape);
    fw::Call call;
    const std::string broken =
        fw::prepare(kOp, shape, strides, SD_UINT8, std::vector<int64_t>(block.begin(), block.end()), order, format,
                    out_format, 0, &call);
    if (!broken.empty()) return tensorflow::errors::InvalidArgument(broken);
    std::vector<tensorflow::shape_inference::DimensionHandle> out;
    for (int64_t d : call.out_shape) out.push_back(c->MakeDim(d));
    c->set_output(0, c->MakeShape(out));
    return Status();
}

template <sd_op kOp>
class SpaceDepthOp : public OpKernel {
public:
    explicit SpaceDepthOp(OpKernelConstruction *c) : OpKernel(c) {
        std::vector<int> block;
        OP_REQUIRES_OK(c, c->GetAttr("block_size", &block));
        block_.assign(block.begin(), block.end());
        OP_REQUIRES_OK(c, c->GetAttr("order", &order_));
        OP_REQUIRES_OK(c, c->GetAttr("data_format", &format_));
        OP_REQUIRES_OK(c, c->GetAttr("out_format", &out_format_));
    }

    void Compute(OpKernelContext *c) override {
        const Tensor &x = c->input(0);
        const sd_dtype dtype = dtype_of(x.dtype());
        OP_REQUIRES(c, dtype != SD_DTYPE_COUNT,
                    tensorflow::errors::InvalidArgument("unsupported dtype ", tensorflow::DataTypeString(x.dtype()),
                                                        " (spacedepth moves elements of 1, 2, 4, 8 or 16 bytes)"));
        const std::vector<int64_t> shape = dims_of(x.shape());
        const std::vector<int64_t> strides = array_layout::contiguous_strides(shape);
        fw::Call call;
        const std::string broken =
            fw::prepare(kOp, shape, strides, dtype, block_, order_, format_, out_format_, 0, &call);
        OP_REQUIRES(c, broken.empty(), tensorflow::errors::InvalidArgument(broken));
        TensorShape out_shape;
        for (int64_t d : call.out_shape) OP_REQUIRES_OK(c, out_shape.AddDimWithStatus(d));
        Tensor *y = nullptr;
        OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &y));
        const std::string failed =
            fw::run_host(call, x.tensor_data().data(), const_cast<char *>(y->tensor_data().data()));
        OP_REQUIRES(c, failed.empty(), tensorflow::errors::Internal(failed));
    }

private:
    std::vector<int64_t> block_;
    std::string order_, format_, out_format_;
};

}  // namespace

// block_size: one size (square) or one per spatial dim, as tf.nn's int block_size generalised.
#define SPACEDEPTH_TF_OP(name, op)             \
    REGISTER_OP(name)                          \
        .Input("input: T")                     \
        .Output("output: T")                   \
        .Attr("T: type")                       \
        .Attr("block_size: list(int) >= 1")    \
        .Attr("order: {'DCR', 'CRD'} = 'DCR'") \
        .Attr("data_format: string = 'NHWC'")  \
        .Attr("out_format: string = ''")       \
        .SetShapeFn(infer_shape<op>);          \
    REGISTER_KERNEL_BUILDER(Name(name).Device(tensorflow::DEVICE_CPU), SpaceDepthOp<op>)

SPACEDEPTH_TF_OP("SpacedepthSpaceToDepth", SD_SPACE_TO_DEPTH);
SPACEDEPTH_TF_OP("SpacedepthDepthToSpace", SD_DEPTH_TO_SPACE);
