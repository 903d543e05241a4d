#include "bench/cases.h"

#include <algorithm>
#include <cmath>

namespace bench {

using namespace spacedepth;

namespace {

std::string short_name(DType d) {
    switch (d) {
    case DType::Float32: return "f32";
    case DType::UInt8: return "u8";
    case DType::Int8: return "i8";
    case DType::Float16: return "f16";
    case DType::Float64: return "f64";
    case DType::Complex128: return "c128";
    default: return dtype_name(d);
    }
}

// A layout's name as spelled at a spatial rank: NCHW is NCW at rank 1 and NCDHW at rank 3.
std::string rank_name(Layout l, int rank) {
    std::string name = layout_name(l);
    const size_t hw = name.find("HW");
    if (rank != 2 && hw != std::string::npos) name.replace(hw, 2, rank == 1 ? "W" : "DHW");
    return name;
}

Case make(Op op, Order order, Layout in, Layout out, DType dtype, int64_t c, int64_t bh, int64_t bw, int rank = 2,
          int64_t bd = 1) {
    std::string layouts =
        in == out ? rank_name(in, rank) : rank_name(in, rank) + std::string("to") + rank_name(out, rank);
    std::string block = "b";
    if (rank == 3) {
        block += bd == bh && bh == bw ? std::to_string(bd)
                                      : std::to_string(bd) + "x" + std::to_string(bh) + "x" + std::to_string(bw);
    } else {
        block += bh == bw || rank == 1 ? std::to_string(bw) : std::to_string(bh) + "x" + std::to_string(bw);
    }
    return {std::string(op == Op::DepthToSpace ? "D2S" : "S2D") + "_" + layouts + "_" + order_name(order) + "_" +
                short_name(dtype) + "_C" + std::to_string(c) + "_" + block,
            op,
            order,
            in,
            out,
            dtype,
            c,
            rank == 1 ? 1 : bh,
            bw,
            rank,
            rank == 3 ? bd : 1};
}

}  // namespace

std::vector<Case> all_cases() {
    std::vector<Case> cases;
    for (Op op : {Op::DepthToSpace, Op::SpaceToDepth})
        for (Layout l : {Layout::NHWC, Layout::NCHW})
            for (Order order : {Order::DCR, Order::CRD})
                for (DType d : {DType::Float32, DType::UInt8})
                    for (int64_t c : {1, 3, 16, 64}) cases.push_back(make(op, order, l, l, d, c, 2, 2));
    for (Op op : {Op::DepthToSpace, Op::SpaceToDepth}) {
        for (int64_t b : {3, 4}) {
            cases.push_back(make(op, Order::CRD, Layout::NCHW, Layout::NCHW, DType::Float32, 3, b, b));
            cases.push_back(make(op, Order::DCR, Layout::NHWC, Layout::NHWC, DType::Float32, 16, b, b));
        }
        for (Order order : {Order::DCR, Order::CRD})
            cases.push_back(make(op, order, Layout::NCHW_VECT_C, Layout::NCHW_VECT_C, DType::Int8, 16, 2, 2));
    }
    cases.push_back(make(Op::DepthToSpace, Order::DCR, Layout::NHWC, Layout::NHWC, DType::Float32, 16, 2, 3));
    cases.push_back(make(Op::SpaceToDepth, Order::CRD, Layout::NCHW, Layout::NCHW, DType::Float32, 3, 2, 3));
    cases.push_back(make(Op::DepthToSpace, Order::DCR, Layout::NCHW, Layout::NHWC, DType::Float32, 16, 2, 2));
    cases.push_back(make(Op::SpaceToDepth, Order::DCR, Layout::NHWC, Layout::NCHW, DType::Float32, 16, 2, 2));
    cases.push_back(make(Op::DepthToSpace, Order::DCR, Layout::NHWC, Layout::NHWC, DType::Float16, 16, 2, 2));
    cases.push_back(make(Op::DepthToSpace, Order::CRD, Layout::NCHW, Layout::NCHW, DType::Float64, 3, 2, 2));
    cases.push_back(make(Op::SpaceToDepth, Order::CRD, Layout::NHWC, Layout::NHWC, DType::Complex128, 3, 2, 2));
    return cases;
}

nlohmann::json describe(const Case &c) {
    return {{"name", c.name},
            {"op", op_name(c.op)},
            {"order", order_name(c.order)},
            {"layout", layout_name(c.layout)},
            {"out_layout", layout_name(c.out_layout)},
            {"dtype", dtype_name(c.dtype)},
            {"channels", c.small_channels},
            {"bh", c.bh},
            {"bw", c.bw},
            {"rank", c.rank},
            {"bd", c.bd}};
}

Block Case::block() const { return rank == 3 ? Block(bd, bh, bw) : Block(bh, bw); }

void Case::dims(int64_t bytes, Dims *space, Dims *deep, int64_t *exact_bytes) const {
    const int64_t elem = dtype_size(dtype);
    const int64_t pixels = std::max<int64_t>(1, bytes / (elem * small_channels));
    // About equal spatial dims, each a multiple of its block size.
    const int64_t side = static_cast<int64_t>(std::pow(static_cast<double>(pixels), 1.0 / rank) + 1e-9);
    const int64_t blocks[3] = {bd, bh, bw};
    int64_t sizes[3];
    int64_t count = small_channels;
    for (int i = 0; i < rank; i++) {
        const int64_t b = blocks[3 - rank + i];
        sizes[i] = std::max<int64_t>(b, side / b * b);
        count *= sizes[i];
    }
    *space = rank == 1   ? Dims{1, small_channels, 1}
             : rank == 2 ? Dims{1, small_channels, 1, 1}
                         : Dims{1, small_channels, 1, 1, 1};
    *deep = *space;
    for (int i = 0; i < rank; i++) {
        const int64_t b = blocks[3 - rank + i];
        (*space)[2 + i] = sizes[i];
        (*deep)[2 + i] = sizes[i] / b;
        (*deep)[1] *= b;
    }
    *exact_bytes = count * elem;
}

std::vector<Case> rank_cases() {
    const Op d2s = Op::DepthToSpace, s2d = Op::SpaceToDepth;
    const Order dcr = Order::DCR, crd = Order::CRD;
    const Layout nhwc = Layout::NHWC, nchw = Layout::NCHW, c8 = Layout::NCHWc8, c16 = Layout::NCHWc16;
    const DType f32 = DType::Float32, f16 = DType::Float16, u8 = DType::UInt8;
    return {
        // Volumetric pixel shuffle and unshuffle (video and volumetric super-resolution), CRD.
        make(d2s, crd, nchw, nchw, f32, 3, 2, 2, 3, 2),
        make(s2d, crd, nchw, nchw, f32, 3, 2, 2, 3, 2),
        make(d2s, crd, nchw, nchw, f16, 8, 2, 2, 3, 2),
        // Channels-last volumes, DCR; a temporal block of 1 (per-frame shuffle of a clip).
        make(d2s, dcr, nhwc, nhwc, f32, 16, 2, 2, 3, 2),
        make(s2d, dcr, nhwc, nhwc, f32, 16, 2, 2, 3, 2),
        make(d2s, dcr, nhwc, nhwc, u8, 8, 2, 2, 3, 1),
        // 1-D (audio and sequence models: PyTorch #6340's request).
        make(d2s, crd, nchw, nchw, f32, 16, 1, 4, 1),
        make(s2d, dcr, nhwc, nhwc, f32, 16, 1, 2, 1),
        make(d2s, dcr, nhwc, nhwc, u8, 3, 1, 4, 1),
        // Blocked channel layouts (oneDNN-style CPU inference), in place and converted.
        make(d2s, dcr, c16, c16, f32, 16, 2, 2),
        make(s2d, dcr, c8, c8, f32, 8, 2, 2),
        make(d2s, dcr, c16, nchw, f32, 16, 2, 2),
        make(s2d, dcr, nchw, c16, f32, 16, 2, 2),
        make(d2s, crd, c8, c8, f32, 8, 2, 2),
        make(d2s, dcr, c16, c16, u8, 16, 2, 2),
        make(d2s, dcr, c16, c16, f32, 16, 2, 2, 3, 2),
    };
}

std::vector<Case> model_cases() {
    const Op d2s = Op::DepthToSpace, s2d = Op::SpaceToDepth;
    const Order dcr = Order::DCR, crd = Order::CRD;
    const Layout nhwc = Layout::NHWC, nchw = Layout::NCHW;
    const DType f32 = DType::Float32, f16 = DType::Float16, u8 = DType::UInt8;
    return {
        // PyTorch pixel_shuffle / pixel_unshuffle heads (ESPCN, Real-ESRGAN): 3 * r^2 channels.
        make(d2s, crd, nchw, nchw, f32, 3, 3, 3),  // ESPCN x3: 27 -> 3
        make(d2s, crd, nchw, nchw, f16, 3, 4, 4),  // fp16 x4: 48 -> 3
        make(d2s, crd, nchw, nchw, f32, 6, 2, 2),
        make(d2s, crd, nchw, nchw, f32, 24, 3, 3),
        make(d2s, crd, nchw, nchw, u8, 3, 4, 4),
        make(s2d, crd, nchw, nchw, f16, 3, 4, 4),  // Real-ESRGAN x1: 3 -> 48
        make(s2d, crd, nchw, nchw, f32, 6, 2, 2),
        make(s2d, crd, nchw, nchw, f32, 12, 2, 1),  // rectangular
        // YOLO Focus-style S2D of images and early feature maps.
        make(s2d, dcr, nchw, nchw, f16, 12, 2, 2),
        make(s2d, dcr, nchw, nchw, f32, 48, 2, 2),
        make(d2s, dcr, nchw, nchw, f32, 24, 2, 2),
        // TFLite NHWC DCR: super-resolution and segmentation heads, float and quantised.
        make(d2s, dcr, nhwc, nhwc, f32, 3, 4, 4),  // 48 -> 3
        make(d2s, dcr, nhwc, nhwc, f32, 12, 2, 2),
        make(d2s, dcr, nhwc, nhwc, f32, 48, 2, 2),
        make(d2s, dcr, nhwc, nhwc, f32, 27, 3, 3),
        make(d2s, dcr, nhwc, nhwc, u8, 3, 4, 4),
        make(d2s, dcr, nhwc, nhwc, u8, 6, 3, 3),
        make(d2s, dcr, nhwc, nhwc, f16, 24, 2, 2),
        make(d2s, dcr, nhwc, nhwc, f32, 12, 1, 2),  // rectangular
        make(s2d, dcr, nhwc, nhwc, f32, 12, 2, 2),
        make(s2d, dcr, nhwc, nhwc, f32, 6, 3, 3),
        make(s2d, dcr, nhwc, nhwc, u8, 24, 2, 2),
        make(s2d, dcr, nhwc, nhwc, f16, 3, 4, 4),
        // NHWC in CRD order (ONNX mode "CRD" on channels-last runtimes).
        make(d2s, crd, nhwc, nhwc, f32, 12, 2, 2),
        make(s2d, crd, nhwc, nhwc, u8, 6, 2, 2),
        make(s2d, crd, nhwc, nhwc, f16, 12, 3, 3),
    };
}

}  // namespace bench
