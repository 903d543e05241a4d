// The CPU probe (runtime/cpu_probe.h): its decoding of CPUID and XCR0 words written here by hand
// from the vendors' manuals (Intel SDM vol. 2A, CPUID leaves 1 and 7; XCR0 in vol. 1 section 13),
// its target choice, the compilers' __builtin_cpu_supports on the CPU this runs on (ctest
// emulated_cpus runs this under qemu's CPU models), and the hook the kernels' wrappers ask.
#include "HalideRuntime.h"
#include "runtime/cpu_probe.h"
#include "runtime/isa.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using spacedepth::cpu_probe::CpuidWords;
using spacedepth::cpu_probe::decode;
using spacedepth::cpu_probe::Feature;
using spacedepth::cpu_probe::present_names;
using spacedepth::cpu_probe::select_target;

constexpr uint32_t kSse41 = 1u << 19, kFma = 1u << 12, kOsxsave = 1u << 27, kAvx = 1u << 28, kF16c = 1u << 29;
constexpr uint32_t kAvx2 = 1u << 5, kF = 1u << 16, kDq = 1u << 17, kIfma = 1u << 21, kCd = 1u << 28, kBw = 1u << 30,
                   kVl = 1u << 31;
constexpr uint32_t kVbmi = 1u << 1;

// A Haswell-class CPU under an OS that saves the YMM state (XCR0 = x87 | SSE | AVX).
CpuidWords avx2_cpu() {
    CpuidWords w;
    w.x86 = true;
    w.max_leaf = 0x10;
    w.leaf1_ecx = kSse41 | kFma | kOsxsave | kAvx | kF16c;
    w.leaf7_ebx = kAvx2;
    w.xcr0 = 0x7;
    return w;
}

// An Ice Lake-class CPU (AVX-512 F CD DQ BW VL IFMA VBMI) with the ZMM state saved (XCR0 0xe7).
CpuidWords avx512_cpu() {
    CpuidWords w = avx2_cpu();
    w.leaf7_ebx |= kF | kDq | kIfma | kCd | kBw | kVl;
    w.leaf7_ecx = kVbmi;
    w.xcr0 = 0xe7;
    return w;
}

const char *kAvx512Target = "x86-64-linux-avx512_skylake-avx512-avx2-avx-fma-f16c-sse41";
const char *kAvx2Target = "x86-64-linux-avx2-avx-fma-f16c-sse41";
const std::string kLadder =
    std::string("x86-64-linux-avx512_cannonlake-avx512_skylake-avx512-avx2-avx-fma-f16c-sse41,") + kAvx512Target + "," +
    kAvx2Target + ",x86-64-linux-sse41,x86-64-linux";

TEST(CpuProbe, ReadsFeatureBits) {
    EXPECT_EQ(present_names(decode(avx2_cpu())), "sse41 avx avx2 fma f16c");
    EXPECT_EQ(present_names(decode(avx512_cpu())), "sse41 avx avx2 fma f16c avx512 avx512_skylake avx512_cannonlake");
    CpuidWords sse = avx2_cpu();
    sse.leaf1_ecx = kSse41;
    sse.leaf7_ebx = 0;
    EXPECT_EQ(present_names(decode(sse)), "sse41");
    EXPECT_TRUE(decode(CpuidWords{}).empty()) << "not x86: no x86 features at all";
}

// The masked VM of the issue: a Zen 4 whose hypervisor clears AVX-512 in CPUID leaf 7 and whose
// OS saves no ZMM state. Nothing in the words but the model says Zen 4, and the probe reads none.
TEST(CpuProbe, IgnoresTheModelNumber) {
    CpuidWords zen4 = avx2_cpu();
    std::snprintf(zen4.vendor, sizeof zen4.vendor, "AuthenticAMD");
    zen4.family = 0x19;
    zen4.model = 0x61;
    EXPECT_EQ(select_target(kLadder, decode(zen4)), kAvx2Target);
    zen4.family = 0x1a;
    zen4.model = 0x02;
    EXPECT_EQ(select_target(kLadder, decode(zen4)), kAvx2Target);
}

// CPUID alone is not enough: AVX and AVX-512 instructions fault unless the OS saves their
// registers, which XCR0 says (and XGETBV may only be read when OSXSAVE is set).
TEST(CpuProbe, NeedsTheOsToSaveTheVectorState) {
    CpuidWords no_zmm = avx512_cpu();
    no_zmm.xcr0 = 0x7;  // CPUID shows AVX-512, the OS saves only up to YMM
    EXPECT_EQ(present_names(decode(no_zmm)), "sse41 avx avx2 fma f16c");
    EXPECT_EQ(select_target(kLadder, decode(no_zmm)), kAvx2Target);
    CpuidWords partial = avx512_cpu();
    partial.xcr0 = 0x67;  // opmask and ZMM_Hi256, not Hi16_ZMM
    EXPECT_EQ(select_target(kLadder, decode(partial)), kAvx2Target);
    CpuidWords no_ymm = avx512_cpu();
    no_ymm.xcr0 = 0x3;  // x87 and SSE only
    EXPECT_EQ(present_names(decode(no_ymm)), "sse41");
    EXPECT_EQ(select_target(kLadder, decode(no_ymm)), "x86-64-linux-sse41");
    CpuidWords no_osxsave = avx2_cpu();
    no_osxsave.leaf1_ecx &= ~kOsxsave;
    no_osxsave.xcr0 = 0;  // read_cpuid() leaves it 0: XGETBV would fault
    EXPECT_EQ(present_names(decode(no_osxsave)), "sse41");
}

TEST(CpuProbe, SelectsTheFirstRunnableTarget) {
    EXPECT_EQ(select_target(kLadder, decode(avx512_cpu())),
              "x86-64-linux-avx512_cannonlake-avx512_skylake-avx512-avx2-avx-fma-f16c-sse41");
    CpuidWords skylake = avx512_cpu();
    skylake.leaf7_ecx = 0;  // no VBMI
    EXPECT_EQ(select_target(kLadder, decode(skylake)), kAvx512Target);
    // Parts that name no x86 feature do not count; features the probe never reads are refused.
    EXPECT_EQ(select_target(" x86-64-linux-avx2-no_asserts-large_buffers , x86-64-linux", decode(avx2_cpu())),
              "x86-64-linux-avx2-no_asserts-large_buffers");
    EXPECT_EQ(select_target("x86-64-linux-avx512_zen5-avx2,x86-64-linux-sse41", decode(avx512_cpu())),
              "x86-64-linux-sse41");
    EXPECT_EQ(select_target(kAvx512Target, decode(avx2_cpu())), "none");
    EXPECT_EQ(select_target("", decode(avx2_cpu())), "none");
}

#if defined(__x86_64__)
// The hook maps every feature the probe names to Halide's bit, so no path escapes its judgement.
TEST(CpuProbe, EveryFeatureHasAHalideBit) {
    for (const Feature &f : decode(avx512_cpu())) {
        EXPECT_TRUE(spacedepth::detail::x86_feature_has_halide_bit(f.halide_name)) << f.halide_name;
    }
}

// GCC's and clang's __builtin_cpu_supports (libgcc, compiler-rt) read the same CPUID bits and
// XCR0 state: this runs in the release build (g++) and the ASan build (clang), on the CPU here
// and under qemu's CPU models (ctest emulated_cpus).
TEST(CpuProbe, AgreesWithTheCompilersBuiltins) {
    __builtin_cpu_init();
    const std::vector<Feature> features = decode(spacedepth::cpu_probe::read_cpuid());
    auto present = [&](const char *name) {
        for (const Feature &f : features) {
            if (std::string(f.halide_name) == name) return f.present;
        }
        ADD_FAILURE() << "no feature " << name;
        return false;
    };
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd");
    const bool skylake = avx512 && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                         __builtin_cpu_supports("avx512dq");
    EXPECT_EQ(present("sse41"), __builtin_cpu_supports("sse4.1") != 0);
    EXPECT_EQ(present("avx"), __builtin_cpu_supports("avx") != 0);
    EXPECT_EQ(present("avx2"), __builtin_cpu_supports("avx2") != 0);
    EXPECT_EQ(present("fma"), __builtin_cpu_supports("fma") != 0);
    EXPECT_EQ(present("avx512"), avx512);
    EXPECT_EQ(present("avx512_skylake"), skylake);
    EXPECT_EQ(present("avx512_cannonlake"),
              skylake && __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512ifma"));
    std::printf("%s (%s): %s\n", spacedepth::cpu_probe::identity(spacedepth::cpu_probe::read_cpuid()).c_str(),
#if defined(__clang__)
                "clang " __clang_version__,
#else
                "g++ " __VERSION__,
#endif
                present_names(features).c_str());
}

// What the kernels' multi-target wrappers are told: the probe's answer under the ISA cap, for
// each rung, whatever Halide's own table would say for this CPU's model.
TEST(CpuProbe, TheWrappersHookAnswersFromTheProbe) {
    const std::vector<Feature> &capped = spacedepth::detail::cpu_features();
    auto has = [&](const char *name) {
        for (const Feature &f : capped) {
            if (std::string(f.halide_name) == name) return f.present;
        }
        return false;
    };
    struct Rung {
        std::vector<halide_target_feature_t> bits;
        bool runnable;
    };
    const Rung rungs[] = {
        {{halide_target_feature_sse41}, has("sse41")},
        {{halide_target_feature_avx2, halide_target_feature_avx, halide_target_feature_fma, halide_target_feature_f16c,
          halide_target_feature_sse41},
         has("avx2") && has("avx") && has("fma") && has("f16c")},
        {{halide_target_feature_avx512_skylake, halide_target_feature_avx512, halide_target_feature_avx2},
         has("avx512_skylake") && has("avx512")},
        {{halide_target_feature_avx512_cannonlake, halide_target_feature_avx512_skylake},
         has("avx512_cannonlake") && has("avx512_skylake")},
        {{halide_target_feature_avx512_zen5}, false},
        {{halide_target_feature_large_buffers, halide_target_feature_no_asserts}, true},
    };
    for (const Rung &r : rungs) {
        uint64_t words[(halide_target_feature_end + 63) / 64] = {};
        for (halide_target_feature_t b : r.bits) words[b / 64] |= uint64_t(1) << (b % 64);
        EXPECT_EQ(halide_can_use_target_features(sizeof words / sizeof words[0], words), r.runnable ? 1 : 0)
            << "a path with feature bit " << r.bits[0];
    }
}
#endif

}  // namespace
