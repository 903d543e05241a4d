// Which kernel target this CPU runs, and the switch points tuned for it (runtime/tuning.h).
#include "runtime/tuning.h"

#include <atomic>
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
    return {{"sse41", __builtin_cpu_supports("sse4.1") != 0},
            {"avx", __builtin_cpu_supports("avx") != 0},
            {"avx2", __builtin_cpu_supports("avx2") != 0},
            {"fma", __builtin_cpu_supports("fma") != 0},
            {"f16c", has_f16c()},
            {"avx512", __builtin_cpu_supports("avx512f") != 0},
            {"avx512_skylake", __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                                   __builtin_cpu_supports("avx512cd")}};
#else
    return {};
#endif
}

const std::string &cpu_kernel_target() {
    static const std::string target = select_target(SPACEDEPTH_KERNEL_TARGETS);
    return target;
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

void set_switch_points(const SwitchPoints &points) { current().store(points); }

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
