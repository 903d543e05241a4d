// Per-ISA tests. The kernels are Halide multi-target libraries whose wrapper picks the best
// compiled path the CPU can run, once, at the first call. The library's SPACEDEPTH_MAX_ISA
// (avx512_cannonlake, avx512_skylake, avx2, sse41, baseline) caps that choice, so this whole binary runs on that
// path; ctest runs it once per ISA, each in its own process because the choice is cached (as
// Halide's test/generator/multitarget_aottest.cpp does). The hook here only watches which path
// the wrappers accept: the library's cap decides.
#include "HalideRuntime.h"
#include "runtime/block_shuffle.h"
#include "runtime/isa.h"
#include "runtime/switch_points.h"
#include "spacedepth/spacedepth.h"
#include "tests/harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

const char *kLevels[] = {"baseline", "sse41", "avx2", "avx512_skylake", "avx512_cannonlake"};

bool has_feature(const uint64_t *features, int bit) { return (features[bit >> 6] >> (bit & 63)) & 1; }

// The ISA level of a compiled path, from its feature bits.
int level_of(const uint64_t *f) {
    if (has_feature(f, halide_target_feature_avx512_cannonlake)) return 4;
    if (has_feature(f, halide_target_feature_avx512_skylake)) return 3;
    if (has_feature(f, halide_target_feature_avx2)) return 2;
    if (has_feature(f, halide_target_feature_sse41)) return 1;
    return 0;
}

int cpu_level() {
#if defined(__x86_64__)
    const bool vbmi = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512ifma");
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"))
        return vbmi ? 4 : 3;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) return 2;
    if (__builtin_cpu_supports("sse4.1")) return 1;
#endif
    return 0;
}

int forced_level = -1;             // -1: no cap
std::atomic<int> chosen_level{0};  // the best path a wrapper accepted; the baseline is taken
                                   // without a query when every better path was refused
std::atomic<int> queries{0};
halide_can_use_target_features_t next_hook = nullptr;  // the library's cap, or Halide's default

int watching_hook(int count, const uint64_t *features) {
    queries++;
    const int level = level_of(features);
    const int ok = next_hook(count, features);
    // The best path any wrapper accepted: the 1-byte kernels have one more rung than the others.
    if (ok && level > chosen_level.load()) {
        chosen_level = level;
    }
    return ok;
}

// Installed before main(), before any kernel's first call. It chains to whatever was installed
// before it, and the library's cap chains to whatever was there when it was installed, so the
// cap decides in either order of static initialisation.
const bool hook_installed = [] {
    if (const char *isa = std::getenv("SPACEDEPTH_MAX_ISA")) {
        for (int i = 0; i < 5; i++) {
            if (std::strcmp(isa, kLevels[i]) == 0) forced_level = i;
        }
    }
    next_hook = halide_set_custom_can_use_target_features(watching_hook);
    return true;
}();

TEST(IsaDispatch, RunsTheForcedPath) {
    ASSERT_TRUE(hook_installed);
    const char *isa = std::getenv("SPACEDEPTH_MAX_ISA");
    if (isa && forced_level < 0) {
        FAIL() << "unknown SPACEDEPTH_MAX_ISA=" << isa;
    }
    const int want = forced_level >= 0 ? forced_level : cpu_level();
    if (want > cpu_level()) {
        GTEST_SKIP() << "this CPU cannot run the " << kLevels[want] << " path (it has " << kLevels[cpu_level()] << ")";
    }
    // A 1-byte kernel (the VBMI rung is built for those only): NCHW with one channel reads every
    // other byte, so the runtime cannot widen the element; rows of 32 bytes, which the rules
    // leave to the Halide kernels (the shuffle microkernel takes shorter ones).
    std::vector<uint8_t> in(4096), out(4096);
    for (int i = 0; i < 4096; i++) in[i] = static_cast<uint8_t>(i);
    auto tin = spacedepth::Tensor::dense(in.data(), spacedepth::DType::UInt8, spacedepth::Layout::NCHW, {1, 1, 64, 64});
    auto tout =
        spacedepth::Tensor::dense(out.data(), spacedepth::DType::UInt8, spacedepth::Layout::NCHW, {1, 4, 32, 32});
    ASSERT_TRUE(spacedepth::space_to_depth(tin, tout, 2).ok());
    // The wrappers take the baseline without asking when every better path is refused, and a cap
    // installed after this hook refuses them before it is asked.
    if (want > 0) {
        ASSERT_GT(queries.load(), 0) << "the kernel wrappers never asked which path to run";
    }
    EXPECT_EQ(chosen_level.load(), want) << "ran " << kLevels[chosen_level.load()] << ", expected " << kLevels[want];
    std::printf("kernel path: %s\n", kLevels[chosen_level.load()]);
    // `spacedepth info` says so: the cap, and a target of that level.
    const std::string info = spacedepth::build_info();
    if (isa) {
        EXPECT_NE(info.find(std::string("ISA cap (SPACEDEPTH_MAX_ISA): ") + isa + " (kernels take at most"),
                  std::string::npos)
            << info;
        const char *const kTargetOf[] = {
            "target this CPU runs: x86-64-linux\n", "target this CPU runs: x86-64-linux-sse41",
            "target this CPU runs: x86-64-linux-avx2", "target this CPU runs: x86-64-linux-avx512_skylake",
            "target this CPU runs: x86-64-linux-avx512_cannonlake"};
        EXPECT_NE(info.find(kTargetOf[want]), std::string::npos) << info;
    }
}

// Plans whose views run faster on 256-bit vectors call the kernels' AVX2 paths directly, beside
// the wrappers' AVX-512 choice (runtime/plan_cpu.cpp): the views the rule names take it and are
// right, the others do not, and under a cap below AVX-512 no plan does (the wrappers' own path).
TEST(IsaDispatch, ShortRunsAndShortDeinterleavesTakeTheAvx2Path) {
    using namespace testing_support;
    const bool beside = cpu_level() >= 3 && (forced_level < 0 || forced_level >= 3);
    EXPECT_EQ(spacedepth::detail::avx2_path_beside_best(), beside);
    struct Call {
        Op op;
        Layout layout;
        DType dtype;
        int64_t channels, block, side;
        bool avx2;                 // whether the rule names the view
        bool vbmi_joined = false;  // on AVX-512 VBMI the shuffle's joined rows take it (in cache)
    };
    const Call calls[] = {
        {Op::DepthToSpace, Layout::NHWC, DType::Float32, 12, 2, 52, true},        // 96-byte runs
        {Op::SpaceToDepth, Layout::NHWC, DType::UInt8, 24, 2, 72, true},          // 48-byte runs
        {Op::DepthToSpace, Layout::NHWC, DType::Float32, 16, 2, 44, false},       // 128-byte runs
        {Op::DepthToSpace, Layout::NHWC, DType::Float32, 3, 2, 104, false},       // 24-byte runs
        {Op::SpaceToDepth, Layout::NCHW, DType::Float32, 64, 2, 22, true, true},  // 11-element rows
        {Op::SpaceToDepth, Layout::NCHW, DType::Float32, 3, 2, 104, false},       // 52-element rows
        {Op::SpaceToDepth, Layout::NCHW, DType::UInt8, 64, 2, 22, false},         // 1-byte rows
    };
    std::mt19937_64 rng(11);
    for (const Call &c : calls) {
        for (const bool strided : {false, true}) {
            const Params p{c.op, Block(c.block), Order::DCR, 1};
            const Dims space{1, c.channels, c.side, c.side};
            const Dims deep{1, c.channels * c.block * c.block, c.side / c.block, c.side / c.block};
            const bool s2d = c.op == Op::SpaceToDepth;
            TestTensor in = make_tensor(c.dtype, c.layout, s2d ? space : deep, strided ? &rng : nullptr);
            TestTensor out = make_tensor(c.dtype, c.layout, s2d ? deep : space);
            fill_unique(in, c.channels);
            const std::string plan = spacedepth::describe_call(p, in.tensor, out.tensor);
            const bool avx2 = plan.find("AVX2 path") != std::string::npos;
            const bool joined =
                c.vbmi_joined && spacedepth::detail::best_shuffle_isa() == spacedepth::detail::ShuffleIsa::Vbmi;
            if (!strided) {
                EXPECT_EQ(avx2, c.avx2 && beside && !joined) << plan;
                EXPECT_EQ(plan.find("shuffle microkernel") != std::string::npos, joined) << plan;
            }
            ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok()) << plan;
            EXPECT_EQ(compare(out, expected_output(p, in, out)), "") << plan;
        }
    }
}

// With the rule widened to every run copy and every 4-byte deinterleave by 2, random calls (every
// op, order, layout pair, width, block, strided views) run on the AVX2 paths and match the reference.
TEST(IsaDispatch, Avx2PathsMatchTheReferenceOnEveryView) {
    using namespace testing_support;
    spacedepth::detail::SwitchPoints wide = spacedepth::detail::switch_points();
    wide.small_max_bytes = 0;
    wide.avx2_run_min_bytes = 1;
    wide.avx2_run_max_bytes = INT64_MAX;
    wide.avx2_deinterleave_max_extent = INT64_MAX;
    const ScopedSwitchPoints scoped(wide);
    std::mt19937_64 rng(23);
    int on_avx2 = 0;
    for (int i = 0; i < 300; i++) {
        auto [p, in, out] = random_call(rng, 24, 12);
        fill_unique(in, i);
        const std::string plan = spacedepth::describe_call(p, in.tensor, out.tensor);
        on_avx2 += plan.find("AVX2 path") != std::string::npos;
        ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok()) << plan;
        ASSERT_EQ(compare(out, expected_output(p, in, out)), "") << i << ": " << plan;
    }
    if (spacedepth::detail::avx2_path_beside_best()) {
        EXPECT_GE(on_avx2, 30) << "too few calls reached the AVX2 paths";  // 51 of the 300 with this seed
    } else {
        EXPECT_EQ(on_avx2, 0);
    }
}

}  // namespace
