// The runtime's switch points between kernel variants. Defaults come from the benchmark
// (bench/RESULTS.md); tests move them to reach every variant with small tensors.
#pragma once

#include <cstdint>

namespace spacedepth::detail {

struct SwitchPoints {
    // Tensors at or above this many bytes may use the thread pool; below it the fork/join costs
    // more than the copy (shared/PERF-NOTES.md: 5-10 us fixed cost vs 3.5 us memcpy at 128 KiB).
    int64_t parallel_min_bytes = 256 * 1024;
    // Tensors under this many bytes go to the small-tensor kernel (least fixed cost per call).
    int64_t small_max_bytes = 4 * 1024;
};

SwitchPoints switch_points();
void set_switch_points(const SwitchPoints &points);

}  // namespace spacedepth::detail
