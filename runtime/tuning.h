// The runtime's switch points between kernel variants. Defaults come from the benchmark
// (bench/RESULTS.md); tests move them to reach every variant with small tensors.
#pragma once

#include <cstdint>

namespace spacedepth::detail {

struct SwitchPoints {
    // Tensors at or above this many bytes may use the thread pool. bench/RESULTS.md "Parallel
    // threshold" (2 threads, pool forced on vs off): from 256 KiB the pool wins in every case
    // measured (1.08-1.36x), below it the result depends on the case (0.53-1.25x at 64-128 KiB).
    int64_t parallel_min_bytes = 256 * 1024;
    // Tensors under this many bytes go to the small-tensor kernel (least fixed cost per call).
    int64_t small_max_bytes = 4 * 1024;
};

SwitchPoints switch_points();
void set_switch_points(const SwitchPoints &points);

}  // namespace spacedepth::detail
