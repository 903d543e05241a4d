// The runtime's switch points between kernel variants (the planner's thresholds). Defaults come
// from the benchmark (bench/RESULTS.md) and are declared in schedules/tunables.json; a tuning
// database (tuning/<target>.json, README "Tuning") replaces them for its kernel target; tests
// move them to reach every variant with small tensors.
#pragma once

#include <cstdint>
#include <string>

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

// What the tuning database set for this CPU's kernel target; empty names if it has none. Its
// "machines" entry for this CPU model, if any, sets switch points on top of the target's: where
// the output starts to bypass the cache depends on the machine's caches, not on its instruction
// set (on two 2-core VMs of one AVX-512 target, an AMD EPYC's crossover was 8 MiB, an Intel
// Xeon's between 16 and 32 MiB).
struct TuningInfo {
    std::string database;          // file name under tuning/
    std::string generator_params;  // its u32 schedule values, name:value pairs
    std::string cpu_model;         // the machines entry applied (cpu_probe::model_key()), or ""
    SwitchPoints switch_points;    // the defaults with its runtime values on top
};
TuningInfo tuning_info();

}  // namespace spacedepth::detail
