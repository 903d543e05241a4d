// Every cell of the semantic matrix (op x order x input layout x output layout x element width)
// against the independent reference, over randomised shapes: blocks 1-5 and rectangular, H != W,
// odd sizes, 1-pixel rows and columns, batch > 1, channel counts off the vector width, strided
// and reversed views (negative strides), one and several threads. Plus the round trip in both
// directions. A second matrix runs spatial rank 1 and 3 over the channels-last, channels-first
// and blocked layouts, and rank 2 over every pair with a blocked side (NCHWc4/8/16), each cell
// over every element width.
#include "runtime/switch_points.h"
#include "tests/harness.h"

#include <gtest/gtest.h>

#include <sstream>
#include <tuple>

namespace {

using namespace testing_support;

DType dtype_for_width(int width, int variant) {
    switch (width) {
    case 1: return variant % 2 ? DType::Int8 : DType::UInt8;
    case 2: return variant % 2 ? DType::BFloat16 : DType::Float16;
    case 4: return variant % 2 ? DType::Int32 : DType::Float32;
    case 8: return variant % 2 ? DType::Complex64 : DType::Float64;
    default: return DType::Complex128;
    }
}

struct Case {
    Dims space;  // logical dims of the space-side tensor
    Block block{1};
    bool strided = false;
    int threads = 0;
    bool reversed = false;  // some dims of each tensor with negative strides (numpy's x[:, ::-1])
};

std::string describe(const Params &p, const Case &c, DType dtype, Layout in, Layout out) {
    std::ostringstream s;
    s << spacedepth::op_name(p.op) << " " << spacedepth::order_name(p.order) << " " << spacedepth::layout_name(in)
      << "->" << spacedepth::layout_name(out) << " " << spacedepth::dtype_name(dtype) << " space dims [";
    for (size_t i = 0; i < c.space.size(); i++) s << (i ? "," : "") << c.space[i];
    int64_t block[3];
    const int rank = static_cast<int>(c.space.size()) - 2;
    block_sizes(p, rank, block);
    s << "] block ";
    for (int i = 0; i < rank; i++) s << (i ? "x" : "") << block[i];
    s << (c.strided ? " strided" : " dense") << (c.reversed ? " reversed" : "") << " threads " << c.threads;
    return s.str();
}

// Runs one case and its inverse; returns an empty string on success.
std::string run_case(Op op, Order order, Layout in_layout, Layout out_layout, DType dtype, const Case &c,
                     std::mt19937_64 &rng) {
    const Params p{op, c.block, order, c.threads};
    const Params inverse{op == Op::SpaceToDepth ? Op::DepthToSpace : Op::SpaceToDepth, c.block, order, c.threads};
    const Dims deep = deep_dims(c.space, p);
    const Dims in_dims = op == Op::SpaceToDepth ? c.space : deep;
    const Dims out_dims = op == Op::SpaceToDepth ? deep : c.space;

    const int nd = static_cast<int>(in_dims.size());
    const unsigned in_reversed = c.reversed ? random_reversal(rng, nd) : 0;
    const unsigned out_reversed = c.reversed ? random_reversal(rng, nd) : 0;
    TestTensor in = make_tensor(dtype, in_layout, in_dims, c.strided ? &rng : nullptr, in_reversed);
    fill_unique(in, rng() % 1000);
    TestTensor out = make_tensor(dtype, out_layout, out_dims, c.strided ? &rng : nullptr, out_reversed);
    const std::string what = describe(p, c, dtype, in_layout, out_layout) + " (reversed dims: input mask " +
                             std::to_string(in_reversed) + ", output mask " + std::to_string(out_reversed) + ")";

    spacedepth::Status s = run_op(p, in.tensor, out.tensor);
    if (!s.ok()) return what + ": " + s.message();
    if (std::string diff = compare(out, expected_output(p, in, out)); !diff.empty()) {
        return what + " (" + spacedepth::describe_call(p, in.tensor, out.tensor) + "):\n" + diff;
    }

    // Round trip: the inverse op with the same order and block restores the input bit for bit.
    TestTensor back = in;
    back.storage.assign(in.storage.size(), kSentinel);
    back.rebase();
    s = run_op(inverse, out.tensor, back.tensor);
    if (!s.ok()) return what + " inverse: " + s.message();
    if (std::string diff = compare(back, in); !diff.empty()) return what + " round trip:\n" + diff;
    return "";
}

using Cell = std::tuple<Op, Order, Layout, Layout, int>;

class Matrix : public ::testing::TestWithParam<Cell> {};

// Every cell runs three times: with the default switch points (small tensors take the
// small-tensor kernel), with that kernel switched off, so the general and transpose kernels see
// every small shape too (and serial SpaceToDepth of 2 x 2 blocks walks the output plane by plane
// at every size, as input_order_min_bytes has some CPU models do in cache), and with the
// streaming switch point at 0 as well, so every call whose output lines are written whole runs on
// the kernels' streaming-store twins.
void run_cell(const Cell &cell);

TEST_P(Matrix, MatchesReference) { run_cell(GetParam()); }

TEST_P(Matrix, MatchesReferenceWithoutSmallKernel) {
    spacedepth::detail::SwitchPoints no_small = spacedepth::detail::switch_points();
    no_small.small_max_bytes = 0;
    no_small.input_order_min_bytes = int64_t{1} << 62;
    const ScopedSwitchPoints scoped(no_small);
    run_cell(GetParam());
}

TEST_P(Matrix, MatchesReferenceStreaming) {
    const ScopedSwitchPoints scoped(streaming_at_any_size());
    run_cell(GetParam());
}

void run_cell(const Cell &cell) {
    const auto [op, order, in_layout, out_layout, width] = cell;
    const bool vect_c = in_layout == Layout::NCHW_VECT_C || out_layout == Layout::NCHW_VECT_C;
    std::mt19937_64 rng(std::hash<std::string>{}(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    auto pick = [&rng](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };

    std::vector<Case> cases;
    // Fixed corners: identity block, 1-pixel rows and columns, rectangular blocks.
    const int64_t c0 = vect_c ? 4 : 3;
    cases.push_back({{1, c0, 2, 2}, Block(1)});
    cases.push_back({{2, c0, 1 * 2, 7 * 2}, Block(2)});
    cases.push_back({{1, c0, 5 * 3, 1 * 3}, Block(3)});
    cases.push_back({{3, c0, 2 * 2, 3 * 3}, Block(2, 3), true});
    cases.push_back({{1, c0, 3 * 4, 2 * 1}, Block(4, 1)});
    cases.push_back({{1, c0, 0, 4}, Block(2)});  // zero-size: valid, does nothing
    // Randomised shapes.
    for (int i = 0; i < 24; i++) {
        Case c;
        c.block = Block(pick({1, 2, 3, 4, 5}), pick({1, 2, 3, 4, 5}));
        if (i % 3 == 0) c.block = Block(c.block.h);
        const int64_t channels = vect_c ? pick({4, 8, 12, 20}) : pick({1, 2, 3, 5, 8, 17, 33});
        c.space = {pick({1, 1, 2, 3}), channels, pick({1, 2, 3, 5, 6}) * c.block.h,
                   pick({1, 2, 4, 7, 9, 13}) * c.block.w};
        c.strided = i % 2 == 1;
        c.reversed = i % 3 == 1;
        c.threads = i % 4 == 2 ? 1 : 0;
        cases.push_back(c);
    }
    // Large enough for the parallel path (>= 256 KiB), once serial and once with 2 threads.
    // Model-shape channel counts the ladder has own patterns for: the [C, 2x2] pixel transpose
    // with C 4 and 6, and 18-byte runs (C6 block 3 at 1 byte: dense vectors overlapping).
    if (!vect_c) {
        cases.push_back({{1, 4, 2 * 10, 2 * 24}, Block(2)});
        cases.push_back({{1, 6, 2 * 12, 2 * 21}, Block(2), true});
        cases.push_back({{1, 6, 3 * 12, 3 * 20}, Block(3)});
    }
    const int64_t big_c = vect_c ? 16 : 6;
    cases.push_back({{2, big_c, 2 * 96, 2 * 80}, Block(2), false, 2});
    cases.push_back({{1, big_c, 3 * 64, 2 * 90}, Block(3, 2), true, 1});
    cases.push_back({{1, big_c, 2 * 80, 2 * 96}, Block(2), false, 2, true});

    int variant = 0;
    for (const Case &c : cases) {
        const DType dtype = dtype_for_width(width, variant++);
        const std::string failure = run_case(op, order, in_layout, out_layout, dtype, c, rng);
        ASSERT_TRUE(failure.empty()) << failure;
    }
}

std::vector<Cell> all_cells() {
    std::vector<Cell> cells;
    for (Op op : {Op::SpaceToDepth, Op::DepthToSpace})
        for (Order order : {Order::DCR, Order::CRD})
            for (Layout in : {Layout::NHWC, Layout::NCHW, Layout::NCHW_VECT_C})
                for (Layout out : {Layout::NHWC, Layout::NCHW, Layout::NCHW_VECT_C}) {
                    const bool vect_c = in == Layout::NCHW_VECT_C || out == Layout::NCHW_VECT_C;
                    for (int width : {1, 2, 4, 8, 16}) {
                        if (!vect_c || width == 1) cells.emplace_back(op, order, in, out, width);
                    }
                }
    return cells;
}

std::string cell_name(const ::testing::TestParamInfo<Cell> &info) {
    const auto [op, order, in, out, width] = info.param;
    std::string s = std::string(op == Op::SpaceToDepth ? "S2D" : "D2S") + "_" + spacedepth::order_name(order) + "_" +
                    spacedepth::layout_name(in) + "_to_" + spacedepth::layout_name(out) + "_" + std::to_string(width) +
                    "B";
    return s;
}

INSTANTIATE_TEST_SUITE_P(AllCells, Matrix, ::testing::ValuesIn(all_cells()), cell_name);

// Spatial rank 1 and 3, and rank 2 with blocked layouts: (op, order, rank, input, output).
using RankCell = std::tuple<Op, Order, int, Layout, Layout>;

class RankMatrix : public ::testing::TestWithParam<RankCell> {};

// A space-side shape of the rank with `c` channels: dims as multiples of the block.
Dims space_dims(int rank, int64_t n, int64_t c, const int64_t *block, const int64_t *blocks) {
    Dims d = rank == 1 ? Dims{n, c, 1} : rank == 2 ? Dims{n, c, 1, 1} : Dims{n, c, 1, 1, 1};
    for (int i = 0; i < rank; i++) d[2 + i] = block[i] * blocks[i];
    return d;
}

Block make_block(int rank, const int64_t *b) {
    return rank == 1 ? Block(1, b[0]) : rank == 2 ? Block(b[0], b[1]) : Block(b[0], b[1], b[2]);
}

TEST_P(RankMatrix, MatchesReference) {
    const auto [op, order, rank, in_layout, out_layout] = GetParam();
    std::mt19937_64 rng(std::hash<std::string>{}(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    auto pick = [&rng](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
    const bool vect_c = in_layout == Layout::NCHW_VECT_C || out_layout == Layout::NCHW_VECT_C;
    const int64_t space_lanes = lanes(op == Op::SpaceToDepth ? in_layout : out_layout);
    const int64_t deep_lanes = lanes(op == Op::SpaceToDepth ? out_layout : in_layout);

    std::vector<Case> cases;
    for (int i = 0; i < 14; i++) {
        const bool square = i % 4 == 3;  // Block(b): the same size along every spatial dim
        int64_t block[3], blocks[3], volume = 1;
        for (int k = 0; k < rank; k++) {
            block[k] = i == 0 ? 1 : square && k > 0 ? block[0] : rank == 3 ? pick({1, 2, 3}) : pick({1, 2, 3, 4, 5});
            blocks[k] = i == 1 ? 1 : rank == 3 ? pick({1, 2, 3}) : pick({1, 2, 3, 5, 9});
            volume *= block[k];
        }
        // Channel counts both sides' groups divide: off the group size where they allow it (the
        // channel split then enumerates fragments), and multiples of 16 (no fragment at all).
        int64_t c = 0;
        for (int64_t candidate : {pick({1, 2, 3, 5, 6, 12, 27}), pick({4, 8, 12, 20, 24}), pick({16, 32, 48})}) {
            if (c == 0 && candidate % space_lanes == 0 && candidate * volume % deep_lanes == 0) c = candidate;
        }
        if (c == 0) c = 16;
        Case cs;
        cs.space = space_dims(rank, pick({1, 1, 2}), c, block, blocks);
        cs.block = square ? Block(block[0]) : make_block(rank, block);
        cs.strided = i % 2 == 1;
        cs.reversed = i % 3 == 2;
        cs.threads = i % 5 == 2 ? 2 : i % 5 == 3 ? 1 : 0;
        cases.push_back(cs);
    }
    // Large enough for the parallel path, and a zero-size tensor.
    {
        const int64_t block[3] = {2, 2, 2}, blocks[3] = {rank == 1 ? 2048 : rank == 2 ? 40 : 8, 12, 14};
        cases.push_back({space_dims(rank, 1, 16, block, blocks), Block(2), rank != 2, 2});
        Case empty{space_dims(rank, 0, 16, block, blocks), Block(2)};
        cases.push_back(empty);
    }
    for (size_t k = 0; k < cases.size(); k++) {
        const Case &c = cases[k];
        const int widths[] = {1, 2, 4, 8, 16};
        const DType dtype =
            vect_c ? dtype_for_width(1, static_cast<int>(k)) : dtype_for_width(widths[k % 5], static_cast<int>(k / 5));
        const std::string failure = run_case(op, order, in_layout, out_layout, dtype, c, rng);
        ASSERT_TRUE(failure.empty()) << failure;
    }
}

std::vector<RankCell> rank_cells() {
    const Layout layouts[] = {Layout::NHWC, Layout::NCHW, Layout::NCHWc4, Layout::NCHWc8, Layout::NCHWc16};
    auto blocked = [](Layout l) { return lanes(l) > 1; };
    std::vector<RankCell> cells;
    for (Op op : {Op::SpaceToDepth, Op::DepthToSpace})
        for (Order order : {Order::DCR, Order::CRD})
            for (int rank : {1, 2, 3})
                for (Layout in : layouts)
                    for (Layout out : layouts) {
                        if (rank != 2 || blocked(in) || blocked(out)) cells.emplace_back(op, order, rank, in, out);
                    }
    // NCHW_VECT_C at ranks 1 and 3, against the plain layouts.
    for (Op op : {Op::SpaceToDepth, Op::DepthToSpace})
        for (int rank : {1, 3}) {
            cells.emplace_back(op, Order::CRD, rank, Layout::NCHW_VECT_C, Layout::NHWC);
            cells.emplace_back(op, Order::DCR, rank, Layout::NCHW, Layout::NCHW_VECT_C);
        }
    return cells;
}

std::string rank_cell_name(const ::testing::TestParamInfo<RankCell> &info) {
    const auto [op, order, rank, in, out] = info.param;
    return std::string(op == Op::SpaceToDepth ? "S2D" : "D2S") + "_" + spacedepth::order_name(order) + "_rank" +
           std::to_string(rank) + "_" + spacedepth::layout_name(in) + "_to_" + spacedepth::layout_name(out);
}

INSTANTIATE_TEST_SUITE_P(Ranks, RankMatrix, ::testing::ValuesIn(rank_cells()), rank_cell_name);

}  // namespace
