// Google Benchmark harness (`make bench`). Every case runs three ways on the same tensors:
//   spacedepth  the library call
//   memcpy      a same-size memcpy, the bandwidth limit these ops are measured against
//   naive       the scalar reference of tests/reference.cpp (a TF-style per-element loop)
// Counters: bytes_per_second counts bytes read + written (2 x tensor bytes).
// Ratios to memcpy belong beside each other from the same run (bench/RESULTS.md).
#include "spacedepth/spacedepth.h"
#include "tests/harness.h"
#include "tests/reference.h"
#include "tools/aligned_buffer.h"

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace spacedepth;

struct Case {
    const char *name;
    Op op;
    Order order;
    Layout layout, out_layout;
    DType dtype;
    int64_t small_channels;  // the space side's C
    int64_t block;
};

const Case kCases[] = {
    {"D2S_NHWC_DCR_f32_C16_b2", Op::DepthToSpace, Order::DCR, Layout::NHWC, Layout::NHWC, DType::Float32, 16, 2},
    {"D2S_NHWC_DCR_f32_C1_b2", Op::DepthToSpace, Order::DCR, Layout::NHWC, Layout::NHWC, DType::Float32, 1, 2},
    {"S2D_NHWC_DCR_f32_C16_b2", Op::SpaceToDepth, Order::DCR, Layout::NHWC, Layout::NHWC, DType::Float32, 16, 2},
    {"D2S_NHWC_DCR_u8_C3_b2", Op::DepthToSpace, Order::DCR, Layout::NHWC, Layout::NHWC, DType::UInt8, 3, 2},
    {"D2S_NCHW_CRD_f32_C3_b2", Op::DepthToSpace, Order::CRD, Layout::NCHW, Layout::NCHW, DType::Float32, 3, 2},
    {"D2S_NCHW_CRD_f32_C3_b3", Op::DepthToSpace, Order::CRD, Layout::NCHW, Layout::NCHW, DType::Float32, 3, 3},
    {"S2D_NCHW_CRD_f32_C3_b2", Op::SpaceToDepth, Order::CRD, Layout::NCHW, Layout::NCHW, DType::Float32, 3, 2},
    {"S2D_NCHW_DCR_u8_C16_b2", Op::SpaceToDepth, Order::DCR, Layout::NCHW, Layout::NCHW, DType::UInt8, 16, 2},
    {"D2S_NHWC_CRD_f32_C16_b2", Op::DepthToSpace, Order::CRD, Layout::NHWC, Layout::NHWC, DType::Float32, 16, 2},
    {"S2D_NHWC_CRD_f32_C16_b2", Op::SpaceToDepth, Order::CRD, Layout::NHWC, Layout::NHWC, DType::Float32, 16, 2},
    {"D2S_VECTC_DCR_i8_C16_b2", Op::DepthToSpace, Order::DCR, Layout::NCHW_VECT_C, Layout::NCHW_VECT_C, DType::Int8, 16, 2},
    {"D2S_VECTC_CRD_i8_C16_b2", Op::DepthToSpace, Order::CRD, Layout::NCHW_VECT_C, Layout::NCHW_VECT_C, DType::Int8, 16, 2},
    {"D2S_NCHW_to_NHWC_f32_C16_b2", Op::DepthToSpace, Order::DCR, Layout::NCHW, Layout::NHWC, DType::Float32, 16, 2},
};

// Tensor sizes (bytes of one tensor): in L2, in L3, and well beyond the caches.
const int64_t kSizes[] = {128 << 10, 2 << 20, 64 << 20};

struct Setup {
    std::unique_ptr<AlignedBuffer> src, dst;
    Tensor in, out;
    Params params;
    int64_t bytes;
};

// Space-side dims about square with the requested byte size.
Setup make_setup(const Case &c, int64_t bytes, int threads) {
    Setup s;
    const int64_t elem = dtype_size(c.dtype);
    const int64_t pixels = std::max<int64_t>(1, bytes / (elem * c.small_channels));
    int64_t side = static_cast<int64_t>(std::sqrt(static_cast<double>(pixels)));
    side = std::max<int64_t>(c.block, side / c.block * c.block);
    const Dims space{1, c.small_channels, side, side};
    const Dims deep{1, c.small_channels * c.block * c.block, side / c.block, side / c.block};
    const Dims in_dims = c.op == Op::SpaceToDepth ? space : deep;
    const Dims out_dims = c.op == Op::SpaceToDepth ? deep : space;
    s.bytes = side * side * c.small_channels * elem;
    s.src = std::make_unique<AlignedBuffer>(s.bytes);
    s.dst = std::make_unique<AlignedBuffer>(s.bytes);
    for (int64_t i = 0; i < s.bytes; i++) s.src->data()[i] = static_cast<uint8_t>(i * 131 + 7);
    std::memset(s.dst->data(), 0, s.bytes);
    s.in = Tensor::dense(s.src->data(), c.dtype, c.layout, in_dims);
    s.out = Tensor::dense(s.dst->data(), c.dtype, c.out_layout, out_dims);
    s.params = Params{c.op, Block(c.block), c.order, threads};
    return s;
}

void finish(benchmark::State &state, int64_t bytes) {
    state.SetBytesProcessed(2 * bytes * static_cast<int64_t>(state.iterations()));
    state.counters["MiB"] = bytes / double(1 << 20);
}

void BM_spacedepth(benchmark::State &state, Case c) {
    Setup s = make_setup(c, state.range(0), static_cast<int>(state.range(1)));
    if (Status st = run(s.params, s.in, s.out); !st.ok()) {
        state.SkipWithError(st.message().c_str());
        return;
    }
    for (auto _ : state) {
        run(s.params, s.in, s.out);
        benchmark::DoNotOptimize(s.dst->data());
    }
    finish(state, s.bytes);
}

void BM_naive(benchmark::State &state, Case c) {
    Setup s = make_setup(c, state.range(0), 1);
    const bool crd = c.order == Order::CRD;
    for (auto _ : state) {
        if (c.op == Op::SpaceToDepth) {
            reference::space_to_depth(testing_support::as_reference(s.in), testing_support::as_reference(s.out), c.block, c.block, crd);
        } else {
            reference::depth_to_space(testing_support::as_reference(s.in), testing_support::as_reference(s.out), c.block, c.block, crd);
        }
        benchmark::DoNotOptimize(s.dst->data());
    }
    finish(state, s.bytes);
}

void BM_memcpy(benchmark::State &state) {
    const int64_t bytes = state.range(0);
    AlignedBuffer src(bytes), dst(bytes);
    std::memset(src.data(), 1, bytes);
    std::memset(dst.data(), 0, bytes);
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), bytes);
        benchmark::DoNotOptimize(dst.data());
    }
    finish(state, bytes);
}

int register_all() {
    for (int64_t size : kSizes) {
        benchmark::RegisterBenchmark("memcpy", BM_memcpy)->Arg(size)->ArgName("bytes")->UseRealTime();
        for (const Case &c : kCases) {
            for (int threads : {1, 2}) {
                benchmark::RegisterBenchmark((std::string("spacedepth/") + c.name).c_str(), BM_spacedepth, c)
                    ->Args({size, threads})
                    ->ArgNames({"bytes", "threads"})
                    ->UseRealTime();
            }
            if (size <= (2 << 20)) {  // the scalar loop takes seconds per call beyond cache
                benchmark::RegisterBenchmark((std::string("naive/") + c.name).c_str(), BM_naive, c)
                    ->Args({size, 1})
                    ->ArgNames({"bytes", "threads"})
                    ->UseRealTime();
            }
        }
    }
    return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
