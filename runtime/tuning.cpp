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
    int64_t switch_points[4];  // parallel_min_bytes, small_max_bytes, long_run_bytes, transpose_min_extent; -1: default
};

const TunedTarget kTunedTargets[] = {
#include "runtime/tuned_targets.inc"
    {nullptr, nullptr, nullptr, {-1, -1, -1, -1}},
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

struct CurrentSwitchPoints {
    explicit CurrentSwitchPoints(const SwitchPoints &p)
        : parallel_min_bytes(p.parallel_min_bytes), small_max_bytes(p.small_max_bytes), long_run_bytes(p.long_run_bytes),
          transpose_min_extent(p.transpose_min_extent) {}
    std::atomic<int64_t> parallel_min_bytes, small_max_bytes, long_run_bytes, transpose_min_extent;
};

CurrentSwitchPoints &current() {
    static CurrentSwitchPoints points(tuning_info().switch_points);
    return points;
}

}  // namespace

std::vector<Feature> cpu_features() {
#if defined(__x86_64__) || defined(__i386__)
    return {{"sse41", __builtin_cpu_supports("sse4.1") != 0}, {"avx", __builtin_cpu_supports("avx") != 0},
            {"avx2", __builtin_cpu_supports("avx2") != 0},    {"fma", __builtin_cpu_supports("fma") != 0},
            {"f16c", has_f16c()},                             {"avx512", __builtin_cpu_supports("avx512f") != 0},
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
        int64_t *fields[] = {&info.switch_points.parallel_min_bytes, &info.switch_points.small_max_bytes,
                             &info.switch_points.long_run_bytes, &info.switch_points.transpose_min_extent};
        for (int i = 0; i < 4; i++) {
            if (t->switch_points[i] >= 0) *fields[i] = t->switch_points[i];
        }
    }
    return info;
}

SwitchPoints switch_points() {
    const CurrentSwitchPoints &c = current();
    return {c.parallel_min_bytes.load(std::memory_order_relaxed), c.small_max_bytes.load(std::memory_order_relaxed),
            c.long_run_bytes.load(std::memory_order_relaxed), c.transpose_min_extent.load(std::memory_order_relaxed)};
}

void set_switch_points(const SwitchPoints &points) {
    CurrentSwitchPoints &c = current();
    c.parallel_min_bytes = points.parallel_min_bytes;
    c.small_max_bytes = points.small_max_bytes;
    c.long_run_bytes = points.long_run_bytes;
    c.transpose_min_extent = points.transpose_min_extent;
}

}  // namespace spacedepth::detail
