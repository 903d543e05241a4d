// The shuffle family's microkernel (runtime/block_shuffle.h), on every instruction-set path this
// CPU runs, against the independent reference: random calls (both ops and orders, every layout
// and fused conversion, 1- to 16-byte elements, strided and reversed views), shapes whose windows
// leave tails, and inputs that end right after their last byte, where the windows whose loads
// would pass the end are copied byte by byte (the asan build checks no load passes it). Then the
// plan: a chosen shuffle runs the family, and the rules take it where it measured faster.
#include "runtime/block_shuffle.h"
#include "runtime/execute.h"
#include "runtime/plan.h"
#include "tests/harness.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

using namespace testing_support;
using spacedepth::detail::ShuffleIsa;
using spacedepth::detail::ShuffleProgram;

// Every path this CPU can run: the scalar loop and each vector set up to the best one.
std::vector<ShuffleIsa> paths_this_cpu_runs() {
    const ShuffleIsa best = spacedepth::detail::best_shuffle_isa();
    std::vector<ShuffleIsa> paths = {ShuffleIsa::Scalar};
    if (best == ShuffleIsa::Neon) paths.push_back(ShuffleIsa::Neon);
    for (ShuffleIsa isa : {ShuffleIsa::Ssse3, ShuffleIsa::Avx2, ShuffleIsa::Vbmi}) {
        if (best != ShuffleIsa::Neon && static_cast<int>(isa) <= static_cast<int>(best)) paths.push_back(isa);
    }
    return paths;
}

struct Checked {
    int programs = 0, vector_programs = 0;
};

// Runs the call's shuffle program on `isa` (if its view has one) and compares with the reference.
void check_call(const Params &p, const TestTensor &in, const TestTensor &out, ShuffleIsa isa, const std::string &what,
                Checked *checked) {
    spacedepth::detail::Problem problem;
    const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
    ASSERT_TRUE(spacedepth::detail::validate(as_c(p, in.tensor.dims.ndim()), cin, cout, &problem).ok()) << what;
    if (problem.empty) return;
    spacedepth::detail::View view;
    ASSERT_TRUE(spacedepth::detail::build_view(problem, &view).ok()) << what;
    int64_t in_offset = 0, out_offset = 0;
    const std::shared_ptr<const ShuffleProgram> program =
        spacedepth::detail::plan_shuffle(problem, view, isa, &in_offset, &out_offset);
    if (program == nullptr) return;
    checked->programs++;
    checked->vector_programs += !program->vectors.empty();
    TestTensor got = out;
    got.rebase();
    const auto *in_bytes = static_cast<const uint8_t *>(in.tensor.data);
    const uint8_t *in_end = in_bytes + problem.in_low_bytes + problem.in_span_bytes;
    spacedepth::detail::run_shuffle(*program, in_bytes + in_offset,
                                    static_cast<uint8_t *>(got.tensor.data) + out_offset, in_end);
    ASSERT_EQ(compare(got, expected_output(p, in, out)), "")
        << what << " on the " << spacedepth::detail::shuffle_isa_name(isa) << " path, windows of "
        << program->window_bytes << " bytes";
}

TEST(Shuffle, EveryPathMatchesTheReferenceOnRandomCalls) {
    for (ShuffleIsa isa : paths_this_cpu_runs()) {
        std::mt19937_64 rng(77);
        Checked checked;
        for (int i = 0; i < 400; i++) {
            auto [p, in, out] = random_call(rng, 7, 5);
            fill_unique(in, i);
            check_call(p, in, out, isa, "random call " + std::to_string(i), &checked);
            if (HasFatalFailure()) return;
        }
        // Most views have an output dense from its first byte (unpadded outputs).
        EXPECT_GT(checked.programs, 150) << spacedepth::detail::shuffle_isa_name(isa);
        if (isa != ShuffleIsa::Scalar) {
            EXPECT_EQ(checked.vector_programs, checked.programs);
        }
    }
}

// Shapes of the views the rules send it (short output runs, byte permutations, tiny planes),
// with extents that leave tails, in tensors that end right after their last byte.
TEST(Shuffle, ShortRunsTinyPlanesAndTails) {
    struct Call {
        Params p;
        DType dtype;
        Layout layout;
        Dims in;
    };
    const Call calls[] = {
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, DType::UInt8, Layout::NHWC, {1, 12, 7, 13}},
        {{Op::SpaceToDepth, Block(2), Order::CRD, 1}, DType::UInt8, Layout::NHWC, {1, 3, 6, 26}},
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, DType::UInt8, Layout::NCHW, {1, 256, 4, 4}},
        {{Op::DepthToSpace, Block(2), Order::DCR, 1}, DType::UInt8, Layout::NCHW, {1, 256, 2, 3}},
        {{Op::SpaceToDepth, Block(2), Order::DCR, 1}, DType::Float32, Layout::NCHW, {2, 64, 6, 10}},
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, DType::Float32, Layout::NHWC, {1, 12, 5, 9}},
        {{Op::SpaceToDepth, Block(3), Order::CRD, 1}, DType::UInt8, Layout::NHWC, {1, 5, 9, 15}},
        {{Op::DepthToSpace, Block(2, 3), Order::DCR, 1}, DType::UInt16, Layout::NHWC, {1, 18, 3, 11}},
        {{Op::DepthToSpace, Block(4), Order::CRD, 1}, DType::UInt8, Layout::NCHW, {1, 48, 1, 1}},
    };
    for (ShuffleIsa isa : paths_this_cpu_runs()) {
        Checked checked;
        for (const Call &c : calls) {
            // Logical dims are N, C, H, W whatever the layout.
            TestTensor in = make_tensor(c.dtype, c.layout, c.in);
            const Dims out_dims = c.p.op == Op::DepthToSpace ? Dims{c.in[0], c.in[1] / (c.p.block.h * c.p.block.w),
                                                                    c.in[2] * c.p.block.h, c.in[3] * c.p.block.w}
                                                             : deep_dims(c.in, c.p);
            TestTensor out = make_tensor(c.dtype, c.layout, out_dims);
            fill_unique(in, 5);
            check_call(c.p, in, out, isa, spacedepth::describe_call(c.p, in.tensor, out.tensor), &checked);
            if (HasFatalFailure()) return;
        }
        EXPECT_EQ(checked.programs, static_cast<int>(std::size(calls))) << spacedepth::detail::shuffle_isa_name(isa);
    }
}

// A plan that chooses the family runs it (serially) and computes what the reference does; a
// view with no shuffle program (an output that is not dense from its first byte) keeps the
// rules' family.
TEST(Shuffle, AChosenShufflePlanRunsTheFamily) {
    const spacedepth::detail::PlanChoice choice{spacedepth::KernelFamily::Shuffle, true, false, false, false};
    std::mt19937_64 rng(11);
    int shuffled = 0;
    for (int i = 0; i < 120; i++) {
        auto [p, in, out] = random_call(rng, 6, 4);
        fill_unique(in, i);
        spacedepth::detail::Problem problem;
        const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
        ASSERT_TRUE(spacedepth::detail::validate(as_c(p, in.tensor.dims.ndim()), cin, cout, &problem).ok());
        if (problem.empty) continue;
        spacedepth::detail::View view;
        ASSERT_TRUE(spacedepth::detail::build_view(problem, &view).ok());
        const spacedepth::detail::KernelPlan plan =
            spacedepth::detail::make_kernel_plan(problem, view, spacedepth::Device::Host, &choice);
        const std::string how = spacedepth::detail::describe_plan(plan);
        if (plan.family == spacedepth::KernelFamily::Shuffle) {
            shuffled++;
            EXPECT_NE(plan.shuffle, nullptr) << how;
            EXPECT_FALSE(plan.parallel) << how;
            EXPECT_NE(how.find("shuffle"), std::string::npos) << how;
        } else {
            EXPECT_EQ(plan.shuffle, nullptr) << how;
        }
        TestTensor got = out;
        got.rebase();
        ASSERT_TRUE(spacedepth::detail::execute(problem, plan, nullptr, in.tensor.data, got.tensor.data, {}).ok());
        ASSERT_EQ(compare(got, expected_output(p, in, out)), "") << "call " << i << ": " << how;
    }
    EXPECT_GT(shuffled, 40);
}

}  // namespace
