// Which kernel target this CPU runs, and the switch points tuned for it (runtime/tuning.h).
#include "runtime/tuning.h"

#include "HalideRuntime.h"

#include <atomic>
#include <cstdlib>
#include <sstream>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#ifndef SPACEDEPTH_KERNEL_TARGETS
#define SPACEDEPTH_KERNEL_TARGETS "unknown"
#endif

namespace spacedepth::detail {

namespace {

// One row per kernel target that has a tuning database (cmake/Tuning.cmake writes them).
struct TunedTarget {
    const char *target;
    const char *database;
    const char *generator_params;
    int64_t switch_points[kSwitchPointCount];  // in switch_points.inc's order; -1: the default
};

const TunedTarget kTunedTargets[] = {
#include "runtime/tuned_targets.inc"
    {nullptr, nullptr, nullptr, {}},
};

#if defined(__x86_64__) || defined(__i386__)
bool has_f16c() {  // CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports has no "f16c")
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
}
#endif

std::string select_target(const std::string &targets) {
    const std::vector<Feature> features = cpu_features();
    std::istringstream list(targets);
    std::string target;
    while (std::getline(list, target, ',')) {
        target.erase(0, target.find_first_not_of(' '));
        bool runnable = true;
        std::istringstream parts(target);
        std::string part;
        while (std::getline(parts, part, '-')) {
            for (const Feature &f : features) {
                runnable &= part != f.halide_name || f.present;
            }
        }
        if (runnable) {
            return target;
        }
    }
    return "none";
}

// The switch points in use, readable while another thread sets them.
struct CurrentSwitchPoints {
    explicit CurrentSwitchPoints(const SwitchPoints &p) { store(p); }
    void store(const SwitchPoints &p) {
#define SPACEDEPTH_SWITCH_POINT(name, default_value) name.store(p.name, std::memory_order_relaxed);
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
    }
    SwitchPoints load() const {
        SwitchPoints p;
#define SPACEDEPTH_SWITCH_POINT(name, default_value) p.name = name.load(std::memory_order_relaxed);
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
        return p;
    }
#define SPACEDEPTH_SWITCH_POINT(name, default_value) std::atomic<int64_t> name{default_value};
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
};

CurrentSwitchPoints &current() {
    static CurrentSwitchPoints points(tuning_info().switch_points);
    return points;
}

}  // namespace

std::vector<Feature> cpu_features() {
#if defined(__x86_64__) || defined(__i386__)
    std::vector<Feature> features = {
        {"sse41", __builtin_cpu_supports("sse4.1") != 0, 1},
        {"avx", __builtin_cpu_supports("avx") != 0, 2},
        {"avx2", __builtin_cpu_supports("avx2") != 0, 2},
        {"fma", __builtin_cpu_supports("fma") != 0, 2},
        {"f16c", has_f16c(), 2},
        {"avx512", __builtin_cpu_supports("avx512f") != 0, 3},
        {"avx512_skylake",
         __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512cd"),
         3},
        {"avx512_cannonlake", __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512ifma"), 4}};
    const IsaCap &cap = isa_cap();
    for (Feature &f : features) {
        f.present &= cap.level < 0 || f.level <= cap.level;
    }
    return features;
#else
    return {};
#endif
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

// The ISA level of one of the multi-target wrappers' paths, from its Halide feature bits.
int level_of(const uint64_t *features) {
    auto has = [features](int bit) { return (features[bit >> 6] >> (bit & 63)) & 1; };
    if (has(halide_target_feature_avx512_cannonlake)) return 4;
    if (has(halide_target_feature_avx512_skylake) || has(halide_target_feature_avx512)) return 3;
    if (has(halide_target_feature_avx2) || has(halide_target_feature_fma) || has(halide_target_feature_avx)) return 2;
    if (has(halide_target_feature_sse41)) return 1;
    return 0;
}

halide_can_use_target_features_t uncapped_can_use = nullptr;

// The wrappers ask this which path to take, once each, at their first call: paths above the cap
// are refused, the rest decided as before (by Halide's default, or by a hook installed earlier).
int capped_can_use(int count, const uint64_t *features) {
    if (level_of(features) > isa_cap().level) return 0;
    return uncapped_can_use(count, features);
}

// The cap must be in place before any wrapper's first call, so it is installed when the library
// is loaded, and again (once) at the first call, for a process that reaches the library before
// static initialisation has run this file.
bool install_isa_cap() {
    static const bool installed = [] {
        if (isa_cap().level >= 0) {
            uncapped_can_use = halide_set_custom_can_use_target_features(capped_can_use);
        }
        return true;
    }();
    return installed;
}
const bool isa_cap_installed_at_load = install_isa_cap();

}  // namespace

const std::string &cpu_kernel_target() {
    static const std::string target = [] {
        install_isa_cap();
        return select_target(SPACEDEPTH_KERNEL_TARGETS);
    }();
    return target;
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

TuningInfo tuning_info() {
    TuningInfo info;
    for (const TunedTarget *t = kTunedTargets; t->target != nullptr; t++) {
        if (cpu_kernel_target() != t->target) continue;
        info.database = t->database;
        info.generator_params = t->generator_params;
        int i = 0;
#define SPACEDEPTH_SWITCH_POINT(name, default_value) \
    if (t->switch_points[i++] >= 0) info.switch_points.name = t->switch_points[i - 1];
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
    }
    return info;
}

SwitchPoints switch_points() { return current().load(); }

namespace {
std::atomic<uint64_t> switch_point_changes{0};
}  // namespace

void set_switch_points(const SwitchPoints &points) {
    current().store(points);
    switch_point_changes.fetch_add(1, std::memory_order_release);
}

uint64_t switch_points_generation() { return switch_point_changes.load(std::memory_order_acquire); }

std::string format_switch_points(const SwitchPoints &points) {
    std::string s;
#define SPACEDEPTH_SWITCH_POINT(name, default_value) \
    s += (s.empty() ? "" : " ") + std::string(#name "=") + std::to_string(points.name);
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
    return s;
}

bool set_switch_point(SwitchPoints *points, const std::string &name, int64_t value) {
#define SPACEDEPTH_SWITCH_POINT(field, default_value) \
    if (name == #field) {                             \
        points->field = value;                        \
        return true;                                  \
    }
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
    return false;
}

}  // namespace spacedepth::detail
