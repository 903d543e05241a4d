// spacedepth_cpu_probe: what the CPU probe (runtime/cpu_probe.h) reads on this machine, and which
// of a list of Halide targets it would run. The configure compiles and runs it for
// SPACEDEPTH_HOST_TARGET_ONLY (cmake/HalideTargets.cmake); the build also has it as
// bin/spacedepth_cpu_probe, which tests run under emulated CPUs. No library beyond the C++ one,
// so the configure builds it before anything else exists.
// usage: spacedepth_cpu_probe [TARGET,TARGET,...]
#include "runtime/cpu_probe.h"

#include <cstdio>

int main(int argc, char **argv) {
    using namespace spacedepth::cpu_probe;
    if (argc > 2) {
        std::fprintf(stderr, "usage: %s [comma-separated Halide targets, best first]\n", argv[0]);
        return 2;
    }
    const CpuidWords words = read_cpuid();
    const std::vector<Feature> features = decode(words);
    std::printf("cpu: %s\n", identity(words).c_str());
    std::printf("features: %s\n", present_names(features).c_str());
    if (argc == 2) std::printf("target: %s\n", select_target(argv[1], features).c_str());
    return 0;
}
