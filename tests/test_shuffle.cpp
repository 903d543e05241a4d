// The shuffle family's microkernel (runtime/block_shuffle.h), on every instruction-set path this
// CPU runs, against the independent reference: random calls (both ops and orders, every layout
// and fused conversion, 1- to 16-byte elements, strided and reversed views), shapes whose windows
// leave tails, and inputs that end right after their last byte, where the windows whose loads
// would pass the end run on copies of their input bytes (the asan build checks no load passes
// it). Then the
// plan: a chosen shuffle runs the family, and the rules take it where it measured faster.
#include "runtime/block_shuffle.h"
#include "runtime/execute.h"
#include "runtime/plan.h"
#include "runtime/switch_points.h"
#include "tests/harness.h"
#include "tests/planned_call.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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
    int programs = 0, vector_programs = 0, whole_vector_programs = 0;
};

// Runs the call's shuffle program on `isa` (if its view has one) and compares with the reference.
void check_call(const Params &p, const TestTensor &in, const TestTensor &out, ShuffleIsa isa, const std::string &what,
                Checked *checked, bool join_rows = false,
                std::shared_ptr<const ShuffleProgram> *checked_program = nullptr) {
    spacedepth::detail::Problem problem;
    const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
    ASSERT_TRUE(spacedepth::detail::validate(as_c(p, in.tensor.dims.ndim()), cin, cout, &problem).ok()) << what;
    if (problem.empty) return;
    spacedepth::detail::View view;
    ASSERT_TRUE(spacedepth::detail::build_view(problem, &view).ok()) << what;
    int64_t in_offset = 0, out_offset = 0;
    const std::shared_ptr<const ShuffleProgram> program =
        spacedepth::detail::plan_shuffle(problem, view, isa, &in_offset, &out_offset, join_rows);
    if (program == nullptr) return;
    if (checked_program != nullptr) *checked_program = program;
    checked->programs++;
    checked->vector_programs += !program->vectors.empty();
    checked->whole_vector_programs +=
        program->whole_windows > 0 ||
        std::any_of(program->vectors.begin(), program->vectors.end(), [](const auto &v) { return v.store_whole; });
    const TestTensor want = expected_output(p, in, out);
    const auto *in_bytes = static_cast<const uint8_t *>(in.tensor.data);
    const uint8_t *in_begin = in_bytes + problem.in_low_bytes, *in_end = in_begin + problem.in_span_bytes;
    // Plain and streaming stores (a program that cannot stream keeps plain ones), serial and in
    // tasks on the thread pool.
    for (bool stream : {false, true}) {
        for (bool parallel : {false, true}) {
            TestTensor got = out;
            got.rebase();
            ASSERT_EQ(spacedepth::detail::run_shuffle(*program, in_bytes + in_offset,
                                                      static_cast<uint8_t *>(got.tensor.data) + out_offset, in_begin,
                                                      in_end, stream, parallel),
                      0);
            ASSERT_EQ(compare(got, want), "")
                << what << " on the " << spacedepth::detail::shuffle_isa_name(isa) << " path"
                << (stream ? ", streaming" : "") << (parallel ? ", parallel" : "") << (join_rows ? ", rows joined" : "")
                << ", windows of " << program->window_bytes << " bytes";
        }
    }
}

// Each call, in tensors that end right after their last byte, through check_call; the programs
// checked, in the calls' order (null where a view has none).
template <size_t N>
std::vector<std::shared_ptr<const ShuffleProgram>> check_calls(const Call (&calls)[N], ShuffleIsa isa, bool join_rows,
                                                               Checked *checked) {
    std::vector<std::shared_ptr<const ShuffleProgram>> programs(N);
    for (size_t i = 0; i < N; i++) {
        const Call &c = calls[i];
        TestTensor in = make_tensor(c.dtype, c.layout, c.in);
        TestTensor out = make_tensor(c.dtype, c.layout, c.out_dims());
        fill_unique(in, 5);
        check_call(c.p, in, out, isa, spacedepth::describe_call(c.p, in.tensor, out.tensor), checked, join_rows,
                   &programs[i]);
        if (::testing::Test::HasFatalFailure()) break;
    }
    return programs;
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
            // The programs that join rows (the planner's for NCHW rows under 64 bytes), on any view.
            Checked joined;
            check_call(p, in, out, isa, "random call " + std::to_string(i), &joined, true);
            if (HasFatalFailure()) return;
        }
        // Most views have an output dense from its first byte (unpadded outputs).
        EXPECT_GT(checked.programs, 150) << spacedepth::detail::shuffle_isa_name(isa);
        if (isa != ShuffleIsa::Scalar) {
            EXPECT_EQ(checked.vector_programs, checked.programs);
        }
        // Windows or vectors that store whole vectors past their bytes (the padding check sees a
        // spill past the window).
        if (isa == ShuffleIsa::Avx2 || isa == ShuffleIsa::Ssse3 || isa == ShuffleIsa::Neon) {
            EXPECT_GT(checked.whole_vector_programs, 10) << spacedepth::detail::shuffle_isa_name(isa);
        }
    }
}

// Shapes of the views the rules send it (short output runs, byte permutations, tiny planes),
// with extents that leave tails, in tensors that end right after their last byte.
TEST(Shuffle, ShortRunsTinyPlanesAndTails) {
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
        check_calls(calls, isa, false, &checked);
        if (HasFatalFailure()) return;
        EXPECT_EQ(checked.programs, static_cast<int>(std::size(calls))) << spacedepth::detail::shuffle_isa_name(isa);
    }
}

// Rows under a VBMI vector: S2D NCHW output rows of 23 and 29 bytes (two rows of a plane a
// vector, two input rows apart) and D2S NCHW output rows of 46 and 60 bytes (two planes a vector,
// 115 and 1200 bytes apart: the windows at the input's end run on its copy, or byte by byte past
// the copy's reach), rows per plane odd (a tail), in tensors that end right after their last
// byte. On the VBMI path their vectors load from two places 64 bytes apart or more, and where a
// row's windows divide into blocks (88 windows of the third call: two blocks of 44), the phases'
// loop runs inside the blocks' loop.
TEST(Shuffle, VectorsThatJoinTwoShortRowsOrPlanes) {
    const Call calls[] = {
        {{Op::SpaceToDepth, Block(2), Order::DCR, 1}, DType::UInt8, Layout::NCHW, {1, 8, 22, 46}},
        {{Op::SpaceToDepth, Block(2), Order::DCR, 1}, DType::UInt8, Layout::NCHW, {1, 8, 44, 46}},
        {{Op::SpaceToDepth, Block(2), Order::CRD, 1}, DType::UInt8, Layout::NCHW, {1, 4, 14, 58}},
        {{Op::DepthToSpace, Block(2), Order::DCR, 1}, DType::UInt8, Layout::NCHW, {1, 256, 5, 23}},
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, DType::UInt8, Layout::NCHW, {1, 8, 40, 30}},
    };
    for (ShuffleIsa isa : paths_this_cpu_runs()) {
        Checked checked;
        const auto programs = check_calls(calls, isa, true, &checked);
        if (HasFatalFailure()) return;
        EXPECT_EQ(checked.programs, static_cast<int>(std::size(calls))) << spacedepth::detail::shuffle_isa_name(isa);
        if (isa != ShuffleIsa::Vbmi) continue;
        int blocked = 0;
        for (const auto &program : programs) {
            ASSERT_NE(program, nullptr);
            EXPECT_TRUE(std::any_of(
                program->vectors.begin(), program->vectors.end(),
                [](const auto &v) { return v.span_tables == 2 && v.chunk_offset[1] > v.chunk_offset[0] + 64; }))
                << "windows of " << program->window_bytes << " bytes";
            const auto &outer = program->outer;
            blocked += outer.size() > 1 && std::abs(outer[0].in_stride) < program->window_in_step &&
                       outer[1].in_stride == program->windows * program->window_in_step;
        }
        EXPECT_EQ(blocked, 1);
    }
}

// Outputs of many buffers' worth (the streaming walk drains its L1 buffer mid-run) written
// through programs that stream, both tensors on a line and 4, 32 and 61 bytes past one: the same
// bytes as the reference, and nothing written outside the output.
TEST(Shuffle, StreamingRowsAtEveryAlignment) {
    const Call calls[] = {
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, DType::UInt8, Layout::NHWC, {1, 12, 23, 301}},
        {{Op::SpaceToDepth, Block(2), Order::CRD, 1}, DType::UInt8, Layout::NHWC, {2, 3, 46, 602}},
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, DType::Float32, Layout::NHWC, {1, 12, 9, 151}},
        {{Op::SpaceToDepth, Block(2), Order::DCR, 1}, DType::UInt8, Layout::NCHW, {1, 16, 38, 66}},
    };
    constexpr int64_t kLine = 64, kGuard = 128;
    for (ShuffleIsa isa : paths_this_cpu_runs()) {
        int streamed = 0;
        for (const Call &c : calls) {
            TestTensor in = make_tensor(c.dtype, c.layout, c.in), out = make_tensor(c.dtype, c.layout, c.out_dims());
            fill_unique(in, 9);
            const TestTensor want = expected_output(c.p, in, out);
            spacedepth::detail::Problem problem;
            const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
            ASSERT_TRUE(spacedepth::detail::validate(as_c(c.p, 4), cin, cout, &problem).ok());
            spacedepth::detail::View view;
            ASSERT_TRUE(spacedepth::detail::build_view(problem, &view).ok());
            int64_t in_offset = 0, out_offset = 0;
            const auto program = spacedepth::detail::plan_shuffle(problem, view, isa, &in_offset, &out_offset);
            ASSERT_NE(program, nullptr);
            streamed += spacedepth::detail::shuffle_streams(*program);
            const std::string what = spacedepth::describe_call(c.p, in.tensor, out.tensor) + " on the " +
                                     spacedepth::detail::shuffle_isa_name(isa) + " path";
            const size_t in_bytes = in.storage.size(), out_bytes = out.storage.size();
            std::vector<uint8_t> in_memory(in_bytes + 2 * kLine), out_memory(out_bytes + 2 * kLine + 2 * kGuard);
            for (int64_t shift : {0, 4, 32, 61}) {
                auto *in_at = in_memory.data() + (kLine - reinterpret_cast<uintptr_t>(in_memory.data()) % kLine) +
                              (shift * 3) % kLine;
                auto *out_at = out_memory.data() + kGuard +
                               (kLine - reinterpret_cast<uintptr_t>(out_memory.data() + kGuard) % kLine) + shift;
                std::memcpy(in_at, in.storage.data(), in_bytes);
                for (bool parallel : {false, true}) {
                    std::fill(out_memory.begin(), out_memory.end(), kSentinel);
                    ASSERT_EQ(spacedepth::detail::run_shuffle(*program, in_at + in_offset, out_at + out_offset, in_at,
                                                              in_at + in_bytes, true, parallel),
                              0);
                    EXPECT_EQ(std::memcmp(out_at, want.storage.data(), out_bytes), 0)
                        << what << ", " << shift << " bytes past a line" << (parallel ? ", parallel" : "");
                    const auto outside = std::count_if(out_memory.begin(), out_memory.end(), [&](const uint8_t &b) {
                        return (&b < out_at || &b >= out_at + out_bytes) && b != kSentinel;
                    });
                    EXPECT_EQ(outside, 0) << what << ": bytes written outside the output";
                }
            }
        }
        if (isa != ShuffleIsa::Scalar) {
            EXPECT_EQ(streamed, static_cast<int>(std::size(calls)));
        }
    }
}

// A plan that chooses the family runs it (with the choice's threads and, where its program can,
// streaming stores) and computes what the reference does; a view with no shuffle program (an
// output that is not dense from its first byte) keeps the rules' family.
TEST(Shuffle, AChosenShufflePlanRunsTheFamily) {
    const spacedepth::detail::PlanChoice choice{spacedepth::KernelFamily::Shuffle, true, false, false, true};
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
            EXPECT_EQ(plan.parallel, problem.threads != 1) << how;
            EXPECT_EQ(plan.stream, spacedepth::detail::shuffle_streams(*plan.shuffle)) << how;
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

// The rules take the short runs of NHWC DCR pixels (slot 0 a contiguous run under 16 bytes) in
// serial calls under four times shuffle_max_bytes on the paths measured (AVX-512 VBMI, AVX2), and
// leave them to the ladder above; either way the output is the reference's.
TEST(Shuffle, TheRulesTakeShortRunsOfSmallTensors) {
    const ShuffleIsa isa = spacedepth::detail::best_shuffle_isa();
    const bool measured_path = isa == ShuffleIsa::Vbmi || isa == ShuffleIsa::Avx2;
    const int64_t limit = 4 * spacedepth::detail::switch_points().shuffle_max_bytes;
    for (int64_t side : {int64_t{18}, int64_t{40}}) {
        int64_t bytes = 0;
        const spacedepth::detail::KernelPlan plan = planned_and_checked(
            {{Op::DepthToSpace, Block(2), Order::DCR, 1}, DType::UInt8, Layout::NHWC, {1, 12, side, side}}, &bytes);
        EXPECT_EQ(plan.family == spacedepth::KernelFamily::Shuffle, measured_path && bytes < limit)
            << bytes << " bytes: " << spacedepth::detail::describe_plan(plan);
    }
}

// Gathers of 16-byte runs (NHWC CRD of 16-byte elements, each output element one chunk) take the
// shuffle in cache from 8 KiB on the paths measured, serial calls only, and copy right.
TEST(Shuffle, TheRulesTakeChunkGathersInCache) {
    const ShuffleIsa isa = spacedepth::detail::best_shuffle_isa();
    const bool measured_path = isa == ShuffleIsa::Vbmi || isa == ShuffleIsa::Avx2;
    struct Case {
        int64_t side;
        int threads;
        bool shuffled;
    };
    // 3 KiB, 16 KiB and 130 KiB; 130 KiB on 2 threads is serial too (parallel from 256 KiB).
    for (const Case k : {Case{8, 1, false}, Case{18, 1, true}, Case{52, 1, true}, Case{52, 2, true}}) {
        int64_t bytes = 0;
        const spacedepth::detail::KernelPlan plan =
            planned_and_checked({{Op::SpaceToDepth, Block(2), Order::CRD, k.threads},
                                 DType::Complex128,
                                 Layout::NHWC,
                                 {1, 3, k.side, k.side}},
                                &bytes);
        EXPECT_EQ(plan.family == spacedepth::KernelFamily::Shuffle, measured_path && k.shuffled)
            << bytes << " bytes, " << k.threads << " thread(s): " << spacedepth::detail::describe_plan(plan);
    }
}

// Deinterleaves by 2 of 2- and 8-byte units whose phases are adjacent output rows (D2S NHWC C1 of
// bytes and f32) take the shuffle serially in cache from 24 KiB on AVX-512 VBMI, and copy right;
// under 24 KiB, on 2 threads past parallel_min_bytes, and on other paths the ladder keeps them.
TEST(Shuffle, TheRulesTakePhaseRowDeinterleavesOnVbmi) {
    const bool vbmi = spacedepth::detail::best_shuffle_isa() == ShuffleIsa::Vbmi;
    const int64_t parallel_min = spacedepth::detail::switch_points().parallel_min_bytes;
    struct Case {
        DType dtype;
        int64_t side;  // of the output
        int threads;
    };
    for (const Case k : {Case{DType::UInt8, 90, 1}, Case{DType::UInt8, 362, 1}, Case{DType::Float32, 182, 1},
                         Case{DType::UInt8, 1024, 2}}) {
        int64_t bytes = 0;
        const spacedepth::detail::KernelPlan plan =
            planned_and_checked({{Op::DepthToSpace, Block(2), Order::DCR, k.threads},
                                 k.dtype,
                                 Layout::NHWC,
                                 {1, 4, k.side / 2, k.side / 2}},
                                &bytes);
        const bool serial = k.threads == 1 || bytes < parallel_min;
        EXPECT_EQ(plan.family == spacedepth::KernelFamily::Shuffle, vbmi && serial && bytes >= (24 << 10))
            << bytes << " bytes, " << k.threads << " thread(s): " << spacedepth::detail::describe_plan(plan);
    }
}

// Tiny NCHW_VECT_C CRD 2 x 2 calls: the shuffle takes them over the regroup on VBMI under
// shuffle_max_bytes (whole calls in a few vectors); from there, and on the other paths from
// small_max_bytes, the regroup keeps them. Both ops at 256 B to 4 KiB, checked against the reference.
TEST(Shuffle, TinyRegroupCallsTakeTheShuffleOnVbmi) {
    const bool vbmi = spacedepth::detail::best_shuffle_isa() == ShuffleIsa::Vbmi;
    const spacedepth::detail::SwitchPoints &points = spacedepth::detail::switch_points();
    for (const Op op : {Op::SpaceToDepth, Op::DepthToSpace}) {
        for (const int64_t side : {4, 8, 12, 16}) {
            const Dims in = op == Op::SpaceToDepth ? Dims{1, 16, side, side} : Dims{1, 16, side / 2, side / 2};
            int64_t bytes = 0;
            const spacedepth::detail::KernelPlan plan =
                planned_and_checked({{op, Block(2), Order::CRD, 1}, DType::Int8, Layout::NCHW_VECT_C, in}, &bytes);
            const bool shuffle = plan.family == spacedepth::KernelFamily::Shuffle;
            if (vbmi) {
                EXPECT_EQ(shuffle, bytes < points.shuffle_max_bytes) << bytes << " bytes: " << describe_plan(plan);
            } else if (bytes >= points.small_max_bytes) {
                EXPECT_FALSE(shuffle) << bytes << " bytes: " << describe_plan(plan);
            }
        }
    }
}

// Windows that fill their vectors and leave a row a tail, which runs as its own vectors: D2S NHWC
// CRD u8 C3 b2 pixels of 6 output bytes, 209 a row, in windows of 10 (60 bytes, one VBMI vector)
// or 5 (30 bytes, one AVX2 vector) and a tail of 9 or 4 pixels; the output is the reference's.
TEST(Shuffle, WindowsThatFillTheirVectorsLeaveATail) {
    const ShuffleIsa isa = spacedepth::detail::best_shuffle_isa();
    int64_t bytes = 0;
    const spacedepth::detail::KernelPlan plan = planned_and_checked(
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, DType::UInt8, Layout::NHWC, {1, 12, 209, 209}}, &bytes);
    if (isa != ShuffleIsa::Vbmi && isa != ShuffleIsa::Avx2) GTEST_SKIP() << "the rules take no shuffle on this path";
    ASSERT_EQ(plan.family, spacedepth::KernelFamily::Shuffle) << spacedepth::detail::describe_plan(plan);
    const int64_t pixels = isa == ShuffleIsa::Vbmi ? 10 : 5;
    EXPECT_EQ(plan.shuffle->window_bytes, 6 * pixels) << spacedepth::detail::describe_plan(plan);
    EXPECT_EQ(plan.shuffle->tail_units, 209 % pixels) << spacedepth::detail::describe_plan(plan);
    EXPECT_FALSE(plan.shuffle->tail_vectors.empty()) << spacedepth::detail::describe_plan(plan);
}

}  // namespace
