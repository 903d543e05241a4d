// The runtime's switch points between kernel variants, and which kernel target this CPU runs.
// Defaults come from the benchmark (bench/RESULTS.md); a tuning database (tuning/<target>.json,
// README "Tuning") replaces them for its target; tests move them to reach every variant with
// small tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spacedepth::detail {

struct SwitchPoints {
    // Tensors at or above this many bytes may use the thread pool. bench/RESULTS.md "Parallel
    // threshold" (2 threads, pool forced on vs off): from 256 KiB the pool wins in every case
    // measured (1.08-1.36x), below it the result depends on the case (0.53-1.25x at 64-128 KiB).
    int64_t parallel_min_bytes = 256 * 1024;
    // Tensors under this many bytes go to the small-tensor kernel (least fixed cost per call).
    int64_t small_max_bytes = 4 * 1024;
    // Runs of at least this many bytes walk the deep tensor in memory order (view.cpp).
    int64_t long_run_bytes = 64;
    // Views whose two dense dims are both at least this long go to the transpose kernel.
    int64_t transpose_min_extent = 8;
};

// The switch points calls use: the tuned ones for this CPU's kernel target, or the defaults,
// until set_switch_points() replaces them (tests and benchmarks).
SwitchPoints switch_points();
void set_switch_points(const SwitchPoints &points);

// What the tuning database set for this CPU's kernel target; empty names if it has none.
struct TuningInfo {
    std::string database;          // file name under tuning/
    std::string generator_params;  // its u32 schedule values, name:value pairs
    SwitchPoints switch_points;    // the defaults with its runtime values on top
};
TuningInfo tuning_info();

// x86 features named in Halide target strings, as this CPU reports them.
struct Feature {
    const char *halide_name;
    bool present;
};
std::vector<Feature> cpu_features();
// The first of the build's kernel targets (best first) whose features this CPU has: the one
// Halide's multi-target wrapper runs. "none" if it can run none of them.
const std::string &cpu_kernel_target();

}  // namespace spacedepth::detail
