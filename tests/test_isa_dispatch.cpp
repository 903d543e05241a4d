// Per-ISA tests. The kernels are Halide multi-target libraries whose wrapper picks the best
// compiled path the CPU can run, once, at the first call. The library's SPACEDEPTH_MAX_ISA
// (avx512_cannonlake, avx512_skylake, avx2, sse41, baseline) caps that choice, so this whole binary runs on that
// path; ctest runs it once per ISA, each in its own process because the choice is cached (as
// Halide's test/generator/multitarget_aottest.cpp does). The hook here only watches which path
// the wrappers accept: the library's cap decides.
#include "HalideRuntime.h"
#include "spacedepth/spacedepth.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
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
    // other byte, so the runtime cannot widen the element.
    std::vector<uint8_t> in(64), out(64);
    for (int i = 0; i < 64; i++) in[i] = static_cast<uint8_t>(i);
    auto tin = spacedepth::Tensor::dense(in.data(), spacedepth::DType::UInt8, spacedepth::Layout::NCHW, {1, 1, 8, 8});
    auto tout = spacedepth::Tensor::dense(out.data(), spacedepth::DType::UInt8, spacedepth::Layout::NCHW, {1, 4, 4, 4});
    ASSERT_TRUE(spacedepth::space_to_depth(tin, tout, 2).ok());
    // The wrappers take the baseline without asking when every better path is refused, and a cap
    // installed after this hook refuses them before it is asked.
    if (want > 0) ASSERT_GT(queries.load(), 0) << "the kernel wrappers never asked which path to run";
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

}  // namespace
