// Which x86 path this CPU runs: the CPU probe's features (runtime/cpu_probe.h) under the
// SPACEDEPTH_MAX_ISA cap, the kernel target they select, and the hook that answers the kernels'
// multi-target wrappers from them.
#pragma once

#include "runtime/cpu_probe.h"

#include <string>
#include <string_view>
#include <vector>

namespace spacedepth::detail {

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
// Whether cpu_features() holds the feature of that Halide name, present (and under the cap).
bool cpu_has_feature(std::string_view halide_name);
// The build's kernel targets, best first, comma-separated (SPACEDEPTH_TARGETS).
const char *kernel_targets();
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
