// The runtime's switch points between kernel variants, and which kernel target this CPU runs.
// Defaults come from the benchmark (bench/RESULTS.md) and are declared in schedules/tunables.json;
// a tuning database (tuning/<target>.json, README "Tuning") replaces them for its target; tests
// move them to reach every variant with small tensors.
#pragma once

#include "runtime/cpu_probe.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spacedepth::detail {

// The switch points between kernel variants. schedules/tunables.json declares each one, its
// default and the measurement behind it; the build writes switch_points.inc from it.
struct SwitchPoints {
#define SPACEDEPTH_SWITCH_POINT(name, default_value) int64_t name = default_value;
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
};
constexpr int kSwitchPointCount = 0
#define SPACEDEPTH_SWITCH_POINT(name, default_value) +1
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
    ;

// "name=value name=value ...", by name (build_info(), `spacedepth info`).
std::string format_switch_points(const SwitchPoints &points);
// Sets the switch point called `name`; false if there is none.
bool set_switch_point(SwitchPoints *points, const std::string &name, int64_t value);

// The switch points calls use: the tuned ones for this CPU's kernel target, or the defaults,
// until set_switch_points() replaces them (tests and benchmarks).
SwitchPoints switch_points();
void set_switch_points(const SwitchPoints &points);
// How many times set_switch_points() has run: plans cached under one generation are stale in the
// next (plan_cache.cpp's one-shot plan cache).
uint64_t switch_points_generation();

// What the tuning database set for this CPU's kernel target; empty names if it has none.
struct TuningInfo {
    std::string database;          // file name under tuning/
    std::string generator_params;  // its u32 schedule values, name:value pairs
    SwitchPoints switch_points;    // the defaults with its runtime values on top
};
TuningInfo tuning_info();

// SPACEDEPTH_MAX_ISA (as oneDNN's ONEDNN_MAX_CPU_ISA): the best x86 path the kernels may take,
// one of cpu_probe::kIsaLevels; read once, at the first call. Unset or unknown: no cap (level -1).
using cpu_probe::kIsaLevelCount;
using cpu_probe::kIsaLevels;
struct IsaCap {
    std::string value;  // as set; empty when unset
    int level = -1;     // index into kIsaLevels; -1: no cap
};
const IsaCap &isa_cap();

// x86 features named in Halide target strings, as the CPU probe reads them (runtime/cpu_probe.h),
// less those above the ISA cap.
using cpu_probe::Feature;
const std::vector<Feature> &cpu_features();
// The first of the build's kernel targets (best first) whose features this CPU has: the one
// Halide's multi-target wrappers run, since the hook this file installs answers them from
// cpu_features(). "none" if it can run none of them.
const std::string &cpu_kernel_target();
// Whether the hook's table maps this probe feature name to a Halide feature bit (every name the
// probe decodes must have one, or the wrappers could take a path the probe never judged).
bool x86_feature_has_halide_bit(const char *halide_name);
// Whether the kernels' AVX2 paths are an alternative to the path the wrappers run: this CPU
// runs both, the ISA cap allows AVX2, and the wrappers take an AVX-512 one.
bool avx2_path_beside_best();

}  // namespace spacedepth::detail
