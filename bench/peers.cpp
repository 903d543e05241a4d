#include "bench/peers.h"

#include "HalideRuntime.h"

#define EIGEN_USE_THREADS
#include <pthreadpool.h>
#include <xnnpack.h>
#include <unsupported/Eigen/CXX11/Tensor>

#include <array>
#include <cstring>
#include <memory>

namespace bench {

using namespace spacedepth;

namespace {

// Axis ids of the 6-D views: n, c, h, by, w, bx.
enum Axis { kN, kC, kH, kBy, kW, kBx };
using Axes = std::array<int, 6>;

// Row-major (outermost first) 6-D views of the space and deep tensors, straight from the layout
// and order definitions (docs/SPEC.md sections 2 and 3).
Axes space_axes(Layout l) {
    return l == Layout::NHWC ? Axes{kN, kH, kBy, kW, kBx, kC} : Axes{kN, kC, kH, kBy, kW, kBx};
}

Axes deep_axes(Layout l, Order o) {
    if (l == Layout::NHWC) return o == Order::DCR ? Axes{kN, kH, kW, kBy, kBx, kC} : Axes{kN, kH, kW, kC, kBy, kBx};
    return o == Order::DCR ? Axes{kN, kBy, kBx, kC, kH, kW} : Axes{kN, kC, kBy, kBx, kH, kW};
}

template <typename T>
std::function<void()> eigen_shuffle(const Case &c, const Tensor &in, const Tensor &out, int threads) {
    const Tensor &space = c.op == Op::SpaceToDepth ? in : out;
    const std::array<int64_t, 6> extent = {space.dims[0], space.dims[1],        space.dims[2] / c.bh,
                                           c.bh,          space.dims[3] / c.bw, c.bw};
    const Axes in_axes = c.op == Op::SpaceToDepth ? space_axes(c.layout) : deep_axes(c.layout, c.order);
    const Axes out_axes = c.op == Op::SpaceToDepth ? deep_axes(c.layout, c.order) : space_axes(c.layout);
    Eigen::array<Eigen::Index, 6> in_dims, out_dims, perm;
    for (int i = 0; i < 6; i++) {
        in_dims[i] = extent[in_axes[i]];
        out_dims[i] = extent[out_axes[i]];
        for (int j = 0; j < 6; j++) {
            if (in_axes[j] == out_axes[i]) perm[i] = j;
        }
    }
    using Map = Eigen::TensorMap<Eigen::Tensor<T, 6, Eigen::RowMajor>>;
    auto src = std::make_shared<Map>(static_cast<T *>(in.data), in_dims);
    auto dst = std::make_shared<Map>(static_cast<T *>(out.data), out_dims);
    if (threads <= 1) {
        return [src, dst, perm] { *dst = src->shuffle(perm); };
    }
    auto pool = std::make_shared<Eigen::ThreadPool>(threads);
    auto device = std::make_shared<Eigen::ThreadPoolDevice>(pool.get(), threads);
    return [src, dst, perm, pool, device] { dst->device(*device) = src->shuffle(perm); };
}

struct XnnOp {
    xnn_operator_t op = nullptr;
    pthreadpool_t pool = nullptr;
    ~XnnOp() {
        if (op) xnn_delete_operator(op);
        if (pool) pthreadpool_destroy(pool);
    }
};

}  // namespace

bool eigen_applies(const Case &c) {
    return c.layout == c.out_layout && c.layout != Layout::NCHW_VECT_C && dtype_size(c.dtype) <= 8;
}

bool xnnpack_applies(const Case &c) {
    const bool nhwc = c.layout == Layout::NHWC && c.out_layout == Layout::NHWC;
    const bool nchw2nhwc = c.layout == Layout::NCHW && c.out_layout == Layout::NHWC;
    return c.op == Op::DepthToSpace && c.order == Order::DCR && dtype_size(c.dtype) == 4 && c.bh == c.bw &&
           (nhwc || nchw2nhwc);
}

std::function<void()> eigen_peer(const Case &c, const Tensor &in, const Tensor &out, int threads) {
    if (!eigen_applies(c)) return {};
    switch (dtype_size(c.dtype)) {
    case 1: return eigen_shuffle<uint8_t>(c, in, out, threads);
    case 2: return eigen_shuffle<uint16_t>(c, in, out, threads);
    case 4: return eigen_shuffle<uint32_t>(c, in, out, threads);
    case 8: return eigen_shuffle<uint64_t>(c, in, out, threads);
    default: return {};
    }
}

std::function<void()> xnnpack_peer(const Case &c, const Tensor &in, const Tensor &out, int threads) {
    if (!xnnpack_applies(c)) return {};
    const bool nhwc = c.layout == Layout::NHWC;
    static const bool initialized = xnn_initialize(nullptr) == xnn_status_success;
    if (!initialized) return {};
    auto x = std::make_shared<XnnOp>();
    const size_t cs = out.dims[1], b = c.bh;
    const xnn_status st = nhwc ? xnn_create_depth_to_space_nhwc_x32(cs, cs * b * b, cs, b, 0, &x->op)
                               : xnn_create_depth_to_space_nchw2nhwc_x32(cs, cs * b * b, cs, b, 0, &x->op);
    if (st != xnn_status_success) return {};
    if (threads > 1) x->pool = pthreadpool_create(threads);
    const size_t n = in.dims[0], h = in.dims[2], w = in.dims[3];
    const xnn_status setup = nhwc ? xnn_setup_depth_to_space_nhwc_x32(x->op, n, h, w, in.data, out.data, x->pool)
                                  : xnn_setup_depth_to_space_nchw2nhwc_x32(x->op, n, h, w, in.data, out.data, x->pool);
    if (setup != xnn_status_success) return {};
    return [x] { xnn_run_operator(x->op, x->pool); };
}

}  // namespace bench
