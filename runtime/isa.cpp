// Which kernel target this CPU runs, and the hook that answers the kernels' multi-target wrappers
// (runtime/isa.h).
#include "runtime/isa.h"

#include "HalideRuntime.h"

#include <cstdlib>
#include <cstring>

#ifndef SPACEDEPTH_KERNEL_TARGETS
#define SPACEDEPTH_KERNEL_TARGETS "unknown"
#endif

namespace spacedepth::detail {

const std::vector<Feature> &cpu_features() {
    static const std::vector<Feature> features = [] {
        std::vector<Feature> f = cpu_probe::features_of_this_cpu();
        const IsaCap &cap = isa_cap();
        for (Feature &feature : f) {
            feature.present &= cap.level < 0 || feature.level <= cap.level;
        }
        return f;
    }();
    return features;
}

const IsaCap &isa_cap() {
    static const IsaCap cap = [] {
        IsaCap c;
        if (const char *value = std::getenv("SPACEDEPTH_MAX_ISA"); value != nullptr && *value != '\0') {
            c.value = value;
            for (int i = 0; i < kIsaLevelCount; i++) {
                if (c.value == kIsaLevels[i]) c.level = i;
            }
        }
        return c;
    }();
    return cap;
}

namespace {

#if defined(__x86_64__) || defined(__i386__)
// Halide's feature bit for each x86 feature the probe names (its table lists every x86 feature
// of Halide 21's targets).
struct FeatureBit {
    halide_target_feature_t bit;
    const char *halide_name;
};
constexpr FeatureBit kX86FeatureBits[] = {
    {halide_target_feature_sse41, "sse41"},
    {halide_target_feature_avx, "avx"},
    {halide_target_feature_avx2, "avx2"},
    {halide_target_feature_fma, "fma"},
    {halide_target_feature_f16c, "f16c"},
    {halide_target_feature_avxvnni, "avxvnni"},
    {halide_target_feature_avx512, "avx512"},
    {halide_target_feature_avx512_knl, "avx512_knl"},
    {halide_target_feature_avx512_skylake, "avx512_skylake"},
    {halide_target_feature_avx512_cannonlake, "avx512_cannonlake"},
    {halide_target_feature_avx512_zen4, "avx512_zen4"},
    {halide_target_feature_avx512_zen5, "avx512_zen5"},
    {halide_target_feature_avx512_sapphirerapids, "avx512_sapphirerapids"},
    {halide_target_feature_avx10_1, "avx10_1"},
    {halide_target_feature_x86_apx, "x86_apx"},
    {halide_target_feature_fma4, "fma4"},
};

// A hook installed before this one by the program itself (not Halide's default), asked after the
// probe says yes.
halide_can_use_target_features_t program_hook = nullptr;

// The kernels' multi-target wrappers ask this which path to take, once each, at their first call.
// It answers from the probe (and the ISA cap), never from Halide's default, which reads AVX-512
// from the model number of some AMD CPUs (runtime/cpu_probe.h).
int probe_can_use(int count, const uint64_t *features) {
    const std::vector<Feature> &present = cpu_features();
    for (const FeatureBit &f : kX86FeatureBits) {
        if (f.bit / 64 >= count || ((features[f.bit / 64] >> (f.bit % 64)) & 1) == 0) continue;
        bool available = false;
        for (const Feature &p : present) {
            available |= p.present && std::strcmp(p.halide_name, f.halide_name) == 0;
        }
        if (!available) return 0;
    }
    return program_hook != nullptr ? program_hook(count, features) : 1;
}
#endif

// The hook must be in place before any wrapper's first call, so it is installed when the library
// is loaded, and again (once) at the first call, for a process that reaches the library before
// static initialisation has run this file.
bool install_probe_hook() {
    static const bool installed = [] {
#if defined(__x86_64__) || defined(__i386__)
        const halide_can_use_target_features_t before = halide_set_custom_can_use_target_features(probe_can_use);
        if (before != halide_default_can_use_target_features && before != probe_can_use) program_hook = before;
#endif
        return true;
    }();
    return installed;
}
const bool probe_hook_installed_at_load = install_probe_hook();

}  // namespace

bool x86_feature_has_halide_bit(const char *halide_name) {
#if defined(__x86_64__) || defined(__i386__)
    for (const FeatureBit &f : kX86FeatureBits) {
        if (std::strcmp(f.halide_name, halide_name) == 0) return true;
    }
#else
    (void)halide_name;  // no x86 bits on this architecture
#endif
    return false;
}

const char *kernel_targets() { return SPACEDEPTH_KERNEL_TARGETS; }

const std::string &cpu_kernel_target() {
    static const std::string target = [] {
        install_probe_hook();
        return cpu_probe::select_target(kernel_targets(), cpu_features());
    }();
    return target;
}

bool cpu_has_feature(std::string_view halide_name) {
    for (const Feature &f : cpu_features()) {
        if (f.present && halide_name == f.halide_name) return true;
    }
    return false;
}

bool avx2_path_beside_best() {
    static const bool beside = [] {
        bool avx2 = true;
        for (const Feature &f : cpu_features()) {
            avx2 &= f.level > 2 || f.present;
        }
        return avx2 && cpu_kernel_target().find("avx512") != std::string::npos;
    }();
    return beside;
}

}  // namespace spacedepth::detail
