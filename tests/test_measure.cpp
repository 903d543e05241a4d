// Measured plans (SD_PLAN_MEASURE) and the wisdom: every choice the planner may make instead of
// its rules computes the reference's result; measured plans are right and say how they were
// made; the wisdom round-trips, is taken by later plans and one-shot calls, and a hostile file is
// refused whole, with its line named.
#include "runtime/call.h"
#include "runtime/wisdom.h"
#include "tests/harness.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace {

using namespace testing_support;
using spacedepth::KernelFamily;
using spacedepth::detail::PlanChoice;

// The wisdom is process-wide: each test starts and ends without any.
class Wisdom : public ::testing::Test {
protected:
    void SetUp() override { spacedepth::forget_wisdom(); }
    void TearDown() override { spacedepth::forget_wisdom(); }
};
using Measure = Wisdom;

std::vector<PlanChoice> every_choice() {
    std::vector<PlanChoice> all;
    for (KernelFamily f : spacedepth::kKernelFamilies) {
        for (int bits = 0; bits < 8; bits++) all.push_back({f, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0});
    }
    return all;
}

// The wisdom file's header as this process writes it, for hand-made files.
std::string header() {
    const std::string text = spacedepth::wisdom_text();
    size_t end = 0;
    for (int line = 0; line < 5; line++) end = text.find('\n', end) + 1;
    return text.substr(0, end);
}

std::string temp_path(const char *name) { return ::testing::TempDir() + "/" + name + "_" + std::to_string(getpid()); }

// Every choice (family, serial or parallel, AVX2 path, loop order) on random calls: each
// computes what the reference does, so a measured plan can only differ in time.
TEST(PlanChoices, EveryChoiceMatchesTheReference) {
    std::mt19937_64 rng(31);
    const std::vector<PlanChoice> choices = every_choice();
    for (int i = 0; i < 60; i++) {
        auto [p, in, out] = random_call(rng, 6, 5);
        fill_unique(in, i);
        const TestTensor want = expected_output(p, in, out);
        spacedepth::detail::Problem problem;
        const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
        ASSERT_TRUE(spacedepth::detail::validate(as_c(p, in.tensor.dims.ndim()), cin, cout, &problem).ok()) << i;
        if (problem.empty) continue;
        spacedepth::detail::View view;
        ASSERT_TRUE(spacedepth::detail::build_view(problem, &view).ok());
        for (const PlanChoice &c : choices) {
            const spacedepth::detail::KernelPlan plan =
                spacedepth::detail::make_kernel_plan(problem, view, spacedepth::Device::Host, &c);
            TestTensor got = out;
            got.rebase();
            ASSERT_TRUE(spacedepth::detail::execute(problem, plan, nullptr, in.tensor.data, got.tensor.data, {}).ok());
            ASSERT_EQ(compare(got, want), "") << "call " << i << ": " << spacedepth::detail::describe_plan(plan);
        }
    }
}

TEST_F(Measure, MeasuredPlansMatchTheReference) {
    std::mt19937_64 rng(43);
    int measured = 0;
    for (int i = 0; i < 80; i++) {
        auto [p, in, out] = random_call(rng, 6, 6);
        spacedepth::Tensor in_desc = in.tensor, out_desc = out.tensor;
        in_desc.data = out_desc.data = nullptr;
        spacedepth::Plan plan;
        const spacedepth::Status s = plan.create(p, in_desc, out_desc, spacedepth::PlanOptions{true, 1.0});
        ASSERT_TRUE(s.ok()) << s.message();
        const std::string how = plan.describe();
        measured += how.find("; measured ") != std::string::npos;
        if (how.find("; measured ") != std::string::npos) {
            // A whole sentence: the rules' plan is named with its time, or as the one kept.
            EXPECT_TRUE(std::regex_search(how, std::regex("(, which is| against [0-9.e+]+ us for) the rules' plan$")))
                << how;
        }
        EXPECT_TRUE(how.find("; measured ") != std::string::npos || how.find("; not measured: ") != std::string::npos ||
                    how.find("from wisdom") != std::string::npos || how.find("empty tensor") != std::string::npos)
            << how;
        fill_unique(in, i);
        ASSERT_TRUE(plan.run(in.tensor.data, out.tensor.data).ok());
        ASSERT_EQ(compare(out, expected_output(p, in, out)), "") << "call " << i << " (" << how << ")";
    }
    EXPECT_GT(measured, 40);  // small tensors: most have alternatives and fit 1 ms
}

TEST_F(Measure, ALargeTensorKeepsTheRulesPlanAndSaysWhy) {
    const Params p{Op::DepthToSpace, Block(2), Order::DCR, 0};
    spacedepth::Tensor in = spacedepth::Tensor::dense(nullptr, DType::Float32, Layout::NHWC, {1, 256, 1024, 1024});
    spacedepth::Tensor out = spacedepth::Tensor::dense(nullptr, DType::Float32, Layout::NHWC, {1, 64, 2048, 2048});
    spacedepth::Plan plan;
    ASSERT_TRUE(plan.create(p, in, out, spacedepth::PlanOptions{true, 1.0}).ok());  // 1 GiB: no scratch allocated
    EXPECT_NE(plan.describe().find("not measured: the tensor is too large to time within 1 ms"), std::string::npos)
        << plan.describe();
    EXPECT_EQ(spacedepth::wisdom_text().find("\nplan "), std::string::npos) << "nothing measured, nothing remembered";
}

TEST_F(Measure, OptionsAreChecked) {
    TestTensor in = make_tensor(DType::UInt8, Layout::NHWC, {1, 4, 4, 4});
    TestTensor out = make_tensor(DType::UInt8, Layout::NHWC, {1, 1, 8, 8});
    const Params p{Op::DepthToSpace, Block(2), Order::DCR, 1};
    const sd_params cp = as_c(p, 4);
    const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    struct Bad {
        sd_plan_options options;
        const char *says;
    } bad[] = {
        {{2, 0}, "plan flags must be SD_PLAN_ESTIMATE (0) or SD_PLAN_MEASURE (1): got 2"},
        {{0xffffffffu, 0}, "got 4294967295"},
        {{SD_PLAN_MEASURE, -1}, "time_limit_ms must be 0 (the default, 5) up to 60000: got -1"},
        {{SD_PLAN_MEASURE, nan}, "got nan"},
        {{SD_PLAN_MEASURE, inf}, "got inf"},
        {{SD_PLAN_ESTIMATE, 60001}, "got 60001"},
    };
    for (const Bad &b : bad) {
        sd_plan *plan = reinterpret_cast<sd_plan *>(&plan);  // garbage in: must come back NULL
        EXPECT_EQ(sd_plan_create_with(&cp, &cin, &cout, &b.options, &plan), SD_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(plan, nullptr);
        EXPECT_NE(std::string(sd_last_error()).find(b.says), std::string::npos) << sd_last_error();
    }
    spacedepth::Plan cxx;
    EXPECT_EQ(cxx.create(p, in.tensor, out.tensor, spacedepth::PlanOptions{true, -5}).code(),
              SD_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(cxx.ready());
    // NULL options: an estimate; NULL plan pointer or descriptors: named.
    sd_plan *plan = nullptr;
    ASSERT_EQ(sd_plan_create_with(&cp, &cin, &cout, nullptr, &plan), SD_OK);
    char text[16];
    const int length = sd_plan_describe(plan, text, sizeof(text));
    EXPECT_GT(length, 15);
    EXPECT_EQ(std::string(text).size(), 15u) << "cut to fit, NUL-terminated";
    EXPECT_EQ(sd_plan_describe(plan, nullptr, 0), length);
    EXPECT_EQ(sd_plan_describe(nullptr, text, sizeof(text)), -1);
    sd_plan_destroy(plan);
    const sd_plan_options measure{SD_PLAN_MEASURE, 0};
    EXPECT_EQ(sd_plan_create_with(&cp, &cin, &cout, &measure, nullptr), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(sd_last_error(), "plan is null");
    EXPECT_EQ(sd_plan_create_with(&cp, nullptr, &cout, &measure, &plan), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(sd_last_error(), "input descriptor is null");
}

TEST_F(Wisdom, RoundTripsAndLaterPlansTakeIt) {
    const Params p{Op::DepthToSpace, Block(2), Order::CRD, 0};
    TestTensor in = make_tensor(DType::Float32, Layout::NCHW, {1, 12, 16, 16});
    TestTensor out = make_tensor(DType::Float32, Layout::NHWC, {1, 3, 32, 32});
    spacedepth::Plan measured;
    ASSERT_TRUE(measured.create(p, in.tensor, out.tensor, spacedepth::PlanOptions{true, 20}).ok());
    ASSERT_NE(measured.describe().find("; measured "), std::string::npos) << measured.describe();
    const std::string text = spacedepth::wisdom_text();
    EXPECT_EQ(text.substr(0, header().size()), header());
    EXPECT_NE(text.find("\nplan depth_to_space CRD 1 2 2 2 0 float32 NCHW 1 12 1 16 16 3072 256 0 16 1 float32 NHWC "
                        "1 3 1 32 32 3072 1 0 96 3 "),
              std::string::npos)
        << text;

    const std::string path = temp_path("wisdom");
    ASSERT_TRUE(spacedepth::export_wisdom(path).ok());
    spacedepth::forget_wisdom();
    EXPECT_EQ(spacedepth::wisdom_text().find("\nplan "), std::string::npos);
    EXPECT_EQ(sd_wisdom_import(path.c_str()), SD_OK) << sd_last_error();
    EXPECT_EQ(spacedepth::wisdom_text(), text);
    std::remove(path.c_str());

    // An estimate of the same shape takes the measured choice, without timing.
    spacedepth::Plan estimated;
    ASSERT_TRUE(estimated.create(p, in.tensor, out.tensor).ok());
    const std::string words = estimated.describe();
    EXPECT_NE(words.find("; from wisdom"), std::string::npos) << words;
    EXPECT_EQ(words.substr(0, words.find(';')), measured.describe().substr(0, measured.describe().find(';')));
    // A measured plan of it too.
    spacedepth::Plan again;
    ASSERT_TRUE(again.create(p, in.tensor, out.tensor, spacedepth::PlanOptions{true, 0}).ok());
    EXPECT_NE(again.describe().find("; from wisdom"), std::string::npos) << again.describe();
}

TEST_F(Wisdom, OneShotCallsTakeItAndItsChangesReplanThem) {
    // S2D NHWC u8 C3, 192 bytes: the rules run it with the small family.
    const Params p{Op::SpaceToDepth, Block(2), Order::DCR, 1};
    TestTensor in = make_tensor(DType::UInt8, Layout::NHWC, {1, 3, 8, 8});
    TestTensor out = make_tensor(DType::UInt8, Layout::NHWC, {1, 12, 4, 4});
    fill_unique(in);
    ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok());
    const uint64_t hits = spacedepth::detail::one_shot_plan_cache_hits();
    const std::string key =
        "plan space_to_depth DCR 1 2 2 2 1 uint8 NHWC 1 3 1 8 8 192 1 0 24 3 uint8 NHWC 1 12 1 4 4 192 1 0 48 12";
    const std::string choice = " general serial best input\n";
    ASSERT_TRUE(spacedepth::import_wisdom_text(header() + key + choice).ok());
    TestTensor got = out;
    got.rebase();
    ASSERT_TRUE(spacedepth::run(p, in.tensor, got.tensor).ok());
    EXPECT_EQ(spacedepth::detail::one_shot_plan_cache_hits(), hits) << "the import made the cached plan stale";
    EXPECT_EQ(compare(got, expected_output(p, in, got)), "");
    spacedepth::Plan plan;
    ASSERT_TRUE(plan.create(p, in.tensor, out.tensor).ok());
    EXPECT_EQ(plan.describe().rfind("general u", 0), 0u) << plan.describe();
    EXPECT_NE(plan.describe().find("from wisdom"), std::string::npos) << plan.describe();
    // Another thread count is another shape.
    spacedepth::Plan other;
    ASSERT_TRUE(other.create(Params{Op::SpaceToDepth, Block(2), Order::DCR, 2}, in.tensor, out.tensor).ok());
    EXPECT_EQ(other.describe().find("from wisdom"), std::string::npos) << other.describe();
}

TEST_F(Wisdom, HostileFilesAreRefusedWhole) {
    const std::string h = header();
    const std::string good =
        "plan depth_to_space DCR 1 2 2 2 0 float32 NHWC 1 8 1 4 4 128 1 0 32 8 float32 NHWC 1 2 1 8 8 128 1 0 16 2 "
        "general serial best output plain\n";
    std::string library_line = h.substr(h.find('\n') + 1);
    library_line = library_line.substr(0, library_line.find('\n'));
    struct Case {
        std::string text;
        sd_status code;
        std::string says;
    };
    std::string many = h;
    for (int i = 0; i <= 100000; i++) {
        many += "plan depth_to_space DCR 1 2 2 2 0 float32 NHWC 1 8 1 4 4 128 1 0 32 " + std::to_string(i) +
                " float32 NHWC 1 2 1 8 8 128 1 0 16 2 general serial best output plain\n";
    }
    const std::string other_cpu =
        "spacedepth-wisdom 1\n" + library_line + "\ncpu Some Other CPU\n" + h.substr(h.find("\nkernel-target ") + 1);
    const Case cases[] = {
        {"", SD_ERROR_INVALID_ARGUMENT, "line 1: the header ends early"},
        {"spacedepth-wisdom 2\n", SD_ERROR_INVALID_ARGUMENT, "line 1: not a wisdom file"},
        {std::string("spacedepth-wisdom 1\n\0\x01\x02", 23), SD_ERROR_INVALID_ARGUMENT, "holds a NUL byte"},
        {"spacedepth-wisdom 1\nlibrary 0.0.1\n", SD_ERROR_UNSUPPORTED, "measured with library '0.0.1', this process"},
        {"spacedepth-wisdom 1\ncpu x\n", SD_ERROR_INVALID_ARGUMENT, "line 2: expected the 'library' line"},
        {other_cpu, SD_ERROR_UNSUPPORTED, "measured with cpu 'Some Other CPU'"},
        {h.substr(0, h.find("\ncores ") + 1) + "cores 1000\n", SD_ERROR_UNSUPPORTED, "cores '1000'"},
        {h.substr(0, h.find("\nkernel-target ") + 1) + "kernel-target riscv-64-linux\n", SD_ERROR_UNSUPPORTED,
         "kernel-target 'riscv-64-linux'"},
        {h.substr(0, h.size() - 1), SD_OK, ""},  // no final newline: still the whole header
        {h + good + "plan depth_to_space DCR\n", SD_ERROR_INVALID_ARGUMENT, "line 7: a plan line has 36 fields"},
        {h + "plan " + good, SD_ERROR_INVALID_ARGUMENT,
         "line 6: a plan line has 36 fields after 'plan' (35 without the stores), this one 37"},
        {h + "junk\n", SD_ERROR_INVALID_ARGUMENT, "line 6: expected 'plan' or a '#' comment"},
        {h + std::string(good).replace(good.find(" DCR"), 4, " XYZ"), SD_ERROR_INVALID_ARGUMENT, "unknown order 'XYZ'"},
        {h + std::string(good).replace(good.find(" 1 2 2"), 6, " 0 2 2"), SD_ERROR_INVALID_ARGUMENT,
         "block size '0' is not >= 1"},
        {h + std::string(good).replace(good.find(" 1 2 2 2"), 8, " 1 2 2 7"), SD_ERROR_INVALID_ARGUMENT,
         "rank '7' is not 1, 2 or 3"},
        {h + std::string(good).replace(good.find(" 0 float32"), 2, " -3"), SD_ERROR_INVALID_ARGUMENT,
         "threads '-3' is not >= 0"},
        {h + std::string(good).replace(good.find(" float32"), 8, " float99"), SD_ERROR_INVALID_ARGUMENT,
         "unknown dtype 'float99'"},
        {h + std::string(good).replace(good.find(" NHWC"), 5, " nChw8c"), SD_ERROR_INVALID_ARGUMENT,
         "unknown layout 'nChw8c'"},
        {h + std::string(good).replace(good.find(" 1 8 1 4 4"), 2, " -1"), SD_ERROR_INVALID_ARGUMENT,
         "dim '-1' is not an integer >= 0"},
        {h + std::string(good).replace(good.find(" 128 1 0 32"), 4, " 99999999999999999999"), SD_ERROR_INVALID_ARGUMENT,
         "stride '99999999999999999999' is not a 64-bit integer"},
        {h + std::string(good).replace(good.find(" 128 1 0 32"), 4, " 0x80"), SD_ERROR_INVALID_ARGUMENT,
         "stride '0x80' is not"},
        {h + std::string(good).replace(good.find("general"), 7, "fastest"), SD_ERROR_INVALID_ARGUMENT,
         "unknown kernel family 'fastest'"},
        {h + std::string(good).replace(good.find("serial"), 6, "maybe"), SD_ERROR_INVALID_ARGUMENT,
         "'maybe' is not serial or parallel"},
        {h + std::string(good).replace(good.find("best"), 4, "avx9"), SD_ERROR_INVALID_ARGUMENT,
         "'avx9' is not best or avx2"},
        {h + std::string(good).replace(good.find("output"), 6, "sideways"), SD_ERROR_INVALID_ARGUMENT,
         "'sideways' is not output or input"},
        {h + std::string(good).replace(good.find("plain"), 5, "sometimes"), SD_ERROR_INVALID_ARGUMENT,
         "'sometimes' is not plain or stream"},
        {many, SD_ERROR_INVALID_ARGUMENT, "line 100006: more than 100000 plans"},
        {h + std::string(17 << 20, '#'), SD_ERROR_INVALID_ARGUMENT, "is over 16 MiB"},
    };
    spacedepth::forget_wisdom();
    ASSERT_TRUE(spacedepth::import_wisdom_text(h + "# a comment\n\n" + good).ok());
    const std::string before = spacedepth::wisdom_text();
    for (const Case &c : cases) {
        const spacedepth::Status s = spacedepth::import_wisdom_text(c.text);
        if (c.code == SD_OK) {
            EXPECT_TRUE(s.ok()) << s.message();
            continue;
        }
        EXPECT_EQ(s.code(), c.code) << s.message();
        EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
        EXPECT_NE(s.message().find("nothing imported"), std::string::npos) << s.message();
        EXPECT_EQ(spacedepth::wisdom_text(), before) << "nothing of a refused file is kept: " << c.says;
    }
    // CRLF line ends are text too.
    std::string crlf = h + good;
    for (size_t at = 0; (at = crlf.find('\n', at)) != std::string::npos; at += 2) crlf.insert(at, "\r");
    EXPECT_TRUE(spacedepth::import_wisdom_text(crlf).ok());

    // Files: missing, a directory, a null path; export into a missing directory leaves nothing.
    EXPECT_EQ(sd_wisdom_import("/nonexistent/wisdom"), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(sd_last_error()).find("cannot read wisdom '/nonexistent/wisdom'"), std::string::npos);
    EXPECT_EQ(sd_wisdom_import("/"), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(sd_last_error(), "wisdom '/' is not a regular file");
    EXPECT_EQ(sd_wisdom_import(nullptr), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sd_wisdom_export(nullptr), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(sd_last_error(), "path is null");
    EXPECT_EQ(sd_wisdom_export("/nonexistent/dir/wisdom"), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(sd_last_error()).find("cannot write wisdom to '/nonexistent/dir/wisdom'"), std::string::npos);
    // A file over the size limit is refused before it is read.
    const std::string big = temp_path("big_wisdom");
    {
        std::ofstream f(big);
        f << h << std::string(17 << 20, '#');
    }
    EXPECT_EQ(sd_wisdom_import(big.c_str()), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(sd_last_error()).find("is over 16 MiB"), std::string::npos);
    std::remove(big.c_str());
}

// The cap holds for the store, not only for one file: an import that would take the store over
// 100,000 plans is refused before anything merges, so the store, and the generation the plan
// caches watch, stay as they were. A file whose plans are already held adds nothing and passes.
TEST_F(Wisdom, AnImportOverTheCapChangesNothing) {
    auto plans = [](int first, int count) {
        std::string text = header();
        for (int i = first; i < first + count; i++) {
            text += "plan depth_to_space DCR 1 2 2 2 0 float32 NHWC 1 8 1 4 4 128 1 0 32 " + std::to_string(i) +
                    " float32 NHWC 1 2 1 8 8 128 1 0 16 2 general serial best output plain\n";
        }
        return text;
    };
    spacedepth::forget_wisdom();
    ASSERT_TRUE(spacedepth::import_wisdom_text(plans(0, 60000)).ok());
    const std::string before = spacedepth::wisdom_text();
    const uint64_t generation = spacedepth::detail::wisdom_generation();
    const spacedepth::Status s = spacedepth::import_wisdom_text(plans(60000, 60000));
    EXPECT_EQ(s.code(), SD_ERROR_INVALID_ARGUMENT) << s.message();
    EXPECT_NE(s.message().find("would hold 120000 plans, more than 100000; nothing imported"), std::string::npos)
        << s.message();
    EXPECT_EQ(spacedepth::wisdom_text(), before) << "a refused import kept plans";
    EXPECT_EQ(spacedepth::detail::wisdom_generation(), generation);
    // 40,000 held already and 40,000 new: 100,000 in all, at the cap, taken.
    EXPECT_TRUE(spacedepth::import_wisdom_text(plans(20000, 80000)).ok());
    EXPECT_EQ(spacedepth::import_wisdom_text(plans(99999, 2)).code(), SD_ERROR_INVALID_ARGUMENT);
}

// A hostile choice for a real shape (a parallel plan for a single-thread call, a transpose for a
// view the transpose kernels cannot take) is clamped to what the call allows, and stays right.
TEST_F(Wisdom, AChoiceTheCallCannotTakeIsClamped) {
    const Params p{Op::DepthToSpace, Block(2), Order::DCR, 1};
    TestTensor in = make_tensor(DType::Float32, Layout::NHWC, {1, 8, 4, 4});
    TestTensor out = make_tensor(DType::Float32, Layout::NHWC, {1, 2, 8, 8});
    const std::string line =
        "plan depth_to_space DCR 1 2 2 2 1 float32 NHWC 1 8 1 4 4 128 1 0 32 8 float32 NHWC 1 2 1 8 8 128 1 0 16 2 "
        "transpose parallel avx2 input\n";
    ASSERT_TRUE(spacedepth::import_wisdom_text(header() + line).ok());
    spacedepth::Plan plan;
    ASSERT_TRUE(plan.create(p, in.tensor, out.tensor).ok());
    EXPECT_NE(plan.describe().find(", serial; from wisdom"), std::string::npos) << plan.describe();
    fill_unique(in);
    ASSERT_TRUE(plan.run(in.tensor.data, out.tensor.data).ok());
    EXPECT_EQ(compare(out, expected_output(p, in, out)), "");
}

}  // namespace
