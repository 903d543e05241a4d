// Many threads calling the library at once, each on its own tensors, with the process-wide thread
// count changed underneath them: every result must match the reference, every error stay with
// its own call. Run under ThreadSanitizer by `make test-tsan`.
#include "tests/harness.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using namespace testing_support;

constexpr int kCallers = 8;
constexpr int kCallsEach = 24;

// One caller's share: random ops on random shapes (some large enough for the parallel path),
// plus one invalid call whose message must be its own.
std::string caller(int id) {
    std::mt19937_64 rng(1000 + id);
    auto pick = [&rng](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
    for (int i = 0; i < kCallsEach; i++) {
        const Op op = rng() % 2 ? Op::SpaceToDepth : Op::DepthToSpace;
        const Order order = rng() % 2 ? Order::DCR : Order::CRD;
        const Layout layout = rng() % 2 ? Layout::NHWC : Layout::NCHW;
        const DType dtype = pick({1, 2, 4}) == 1 ? DType::UInt8 : rng() % 2 ? DType::Float16 : DType::Float32;
        const int64_t b = pick({2, 3, 4}), c = pick({1, 3, 16}), big = i % 4 == 0 ? 48 : 4;
        const Dims space{pick({1, 2}), c, b * pick({1, 5, big}), b * pick({2, 7, big})};
        const Dims deep{space[0], c * b * b, space[2] / b, space[3] / b};
        const bool s2d = op == Op::SpaceToDepth;
        TestTensor in = make_tensor(dtype, layout, s2d ? space : deep, rng() % 2 ? &rng : nullptr);
        TestTensor out = make_tensor(dtype, layout, s2d ? deep : space);
        fill_unique(in, id * 100 + i);
        const Params p{op, Block(b), order, static_cast<int>(pick({0, 1, 2}))};
        const spacedepth::Status s = run_op(p, in.tensor, out.tensor);
        if (!s.ok()) return "caller " + std::to_string(id) + ": " + s.message();
        if (std::string diff = compare(out, expected_output(p, in, out)); !diff.empty()) {
            return "caller " + std::to_string(id) + " call " + std::to_string(i) + ":\n" + diff;
        }
        // An invalid call between valid ones: its message names its own values.
        TestTensor bad = make_tensor(dtype, layout, {1, c, b * 3 + 1, b});
        const spacedepth::Status e = run_op(Params{Op::SpaceToDepth, Block(b), order, 0}, bad.tensor, out.tensor);
        const std::string want = "H=" + std::to_string(b * 3 + 1) + " is not divisible";
        if (e.ok() || e.message().find(want) == std::string::npos) {
            return "caller " + std::to_string(id) + ": expected an error naming '" + want + "', got: " + e.message();
        }
    }
    return "";
}

void many_callers_while_the_thread_count_changes() {
    const int saved = spacedepth::num_threads();
    std::atomic<bool> done{false};
    std::vector<std::string> failures(kCallers);
    std::vector<std::thread> threads;
    threads.reserve(kCallers);
    for (int id = 0; id < kCallers; id++) {
        threads.emplace_back([id, &failures] { failures[id] = caller(id); });
    }
    // The process-wide setting changes while calls run (set_num_threads is documented as safe).
    std::thread resizer([&done] {
        for (int n = 0; !done.load(); n++) {
            spacedepth::set_num_threads(1 + n % 4);
            std::this_thread::yield();
        }
    });
    for (std::thread &t : threads) t.join();
    done = true;
    resizer.join();
    spacedepth::set_num_threads(saved);
    for (const std::string &f : failures) EXPECT_EQ(f, "");
}

TEST(Concurrency, ManyCallersWhileTheThreadCountChanges) { many_callers_while_the_thread_count_changes(); }

// The same with every call whose lines are written whole on the streaming-store twins: each
// worker's streaming stores are fenced before its task ends (generators/stream_stores.py).
TEST(Concurrency, StreamingCallersWhileTheThreadCountChanges) {
    const ScopedSwitchPoints scoped(streaming_everywhere());
    many_callers_while_the_thread_count_changes();
}

}  // namespace

namespace {

// One plan, run from many threads at once on each thread's own tensors (the plan is only read).
TEST(Concurrency, OnePlanRunFromManyThreads) {
    const Params p{Op::DepthToSpace, Block(2), Order::CRD, 0};
    const Dims deep{2, 12, 24, 40}, space{2, 3, 48, 80};
    spacedepth::Plan plan;
    const TestTensor in_desc = make_tensor(DType::Float32, Layout::NCHW, deep);
    const TestTensor out_desc = make_tensor(DType::Float32, Layout::NHWC, space);
    ASSERT_TRUE(plan.create(p, in_desc.tensor, out_desc.tensor).ok());
    std::vector<std::string> failures(kCallers);
    std::vector<std::thread> threads;
    threads.reserve(kCallers);
    for (int id = 0; id < kCallers; id++) {
        threads.emplace_back([&, id] {
            for (int i = 0; i < kCallsEach; i++) {
                TestTensor in = make_tensor(DType::Float32, Layout::NCHW, deep);
                TestTensor out = make_tensor(DType::Float32, Layout::NHWC, space);
                fill_unique(in, id * 1000 + i);
                const spacedepth::Status s = plan.run(in.tensor.data, out.tensor.data);
                std::string diff = s.ok() ? compare(out, expected_output(p, in, out)) : s.message();
                if (!diff.empty()) {
                    failures[id] = "thread " + std::to_string(id) + " run " + std::to_string(i) + ": " + diff;
                    return;
                }
            }
        });
    }
    for (std::thread &t : threads) t.join();
    for (const std::string &f : failures) EXPECT_EQ(f, "");
}

}  // namespace

namespace {

// Measured plans created while one-shot calls run and the wisdom is exported, imported and
// forgotten underneath them: every result right, every wisdom call whole.
TEST(Concurrency, MeasuredPlansWhileOthersRunAndTheWisdomChanges) {
    std::atomic<bool> done{false};
    std::vector<std::string> failures(kCallers);
    std::vector<std::thread> threads;
    threads.reserve(kCallers);
    for (int id = 0; id < kCallers; id++) {
        threads.emplace_back([id, &failures] {
            if (id % 2 == 1) {
                failures[id] = caller(id);  // one-shot calls, which take the wisdom too
                return;
            }
            std::mt19937_64 rng(2000 + id);
            for (int i = 0; i < kCallsEach / 2; i++) {
                auto [p, in, out] = random_call(rng, 6, 6);
                spacedepth::Plan plan;
                spacedepth::Status s = plan.create(p, in.tensor, out.tensor, spacedepth::PlanOptions{true, 0.5});
                fill_unique(in, id * 1000 + i);
                if (s.ok()) s = plan.run(in.tensor.data, out.tensor.data);
                std::string diff = s.ok() ? compare(out, expected_output(p, in, out)) : s.message();
                if (!diff.empty()) {
                    failures[id] = "thread " + std::to_string(id) + " plan " + std::to_string(i) + " (" +
                                   plan.describe() + "): " + diff;
                    return;
                }
            }
        });
    }
    std::string wisdom_failure;
    std::thread keeper([&done, &wisdom_failure] {
        const std::string path = ::testing::TempDir() + "/concurrent_wisdom_" + std::to_string(getpid());
        for (int n = 0; !done.load() && wisdom_failure.empty(); n++) {
            spacedepth::Status s = spacedepth::export_wisdom(path);
            if (s.ok()) s = n % 3 == 2 ? (spacedepth::forget_wisdom(), s) : spacedepth::import_wisdom(path);
            if (!s.ok()) wisdom_failure = s.message();
            std::this_thread::yield();
        }
        std::remove(path.c_str());
    });
    for (std::thread &t : threads) t.join();
    done = true;
    keeper.join();
    spacedepth::forget_wisdom();
    EXPECT_EQ(wisdom_failure, "");
    for (const std::string &f : failures) EXPECT_EQ(f, "");
}

}  // namespace
