// What this x86 CPU runs: CPUID's feature bits and the register state the OS saves (XCR0), never
// the model number. The one reading of the CPU that the runtime (runtime/isa.cpp: the kernel
// target, `spacedepth info`, the wisdom header), Halide's multi-target wrappers (through the hook
// isa.cpp installs) and the build's host-target choice (tools/cpu_probe_main.cpp, run by
// cmake/HalideTargets.cmake) all take. Plain C++ with no other header of the project, so the
// configure can compile it on its own.
//
// Why not the alternatives: Halide 21's get_host_target() and its runtime's
// halide_default_can_use_target_features() take AVX-512 for AMD family 0x19 model 0x61 and every
// family 0x1a from the model number alone, so on a VM whose hypervisor masks AVX-512 the wrappers
// ran AVX-512 code and died of SIGILL. GCC's and clang's __builtin_cpu_supports read the same bits
// as this (tests/test_cpu_probe.cpp checks they agree), but know no f16c in clang 14.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spacedepth::cpu_probe {

// The CPUID and XGETBV words the decision reads (and the identity, for messages only).
struct CpuidWords {
    bool x86 = false;
    char vendor[13] = {};
    uint32_t family = 0, model = 0;  // with the extended fields, as the vendors' manuals define them
    uint32_t max_leaf = 0;
    uint32_t leaf1_ecx = 0;
    uint32_t leaf7_ebx = 0, leaf7_ecx = 0, leaf7_edx = 0;
    uint32_t leaf7_1_eax = 0;
    uint64_t xcr0 = 0;  // 0 where CPUID's OSXSAVE bit is clear: XGETBV would fault
};
CpuidWords read_cpuid();  // all zero (x86 false) on other architectures

// The ISA rungs SPACEDEPTH_MAX_ISA names, lowest first.
constexpr const char *kIsaLevels[] = {"baseline", "sse41", "avx2", "avx512_skylake", "avx512_cannonlake"};
constexpr int kIsaLevelCount = 5;

// One x86 feature as Halide target strings name it.
struct Feature {
    const char *halide_name;
    bool present;
    int level;  // the kIsaLevels index that brings it; kIsaLevelCount for features above every rung
};
// Every x86 feature of Halide 21's targets, present or not: a target naming one this table marks
// absent (or does not list) is never chosen. avx512_zen5, avx512_sapphirerapids, avx10_1,
// x86_apx and fma4 are never present: spacedepth builds no kernels for them and does not decode them.
std::vector<Feature> decode(const CpuidWords &words);
// decode(read_cpuid()), read once.
const std::vector<Feature> &features_of_this_cpu();

// Of a comma-separated list of Halide targets, best first, the first whose every x86 feature is
// present: what the wrappers pick. Target parts that name no x86 feature (arch, bits, os,
// no_asserts, ...) do not count. "none" if there is no such target.
std::string select_target(const std::string &targets, const std::vector<Feature> &features);

// "sse41 avx avx2 fma f16c": the present features, as `spacedepth info` prints them.
std::string present_names(const std::vector<Feature> &features);
// "AuthenticAMD family 0x19 model 0x11": the CPU model, which picks a tuning database's switch
// points measured on that model (runtime/switch_points.cpp), never an instruction set; "" off x86.
std::string model_key(const CpuidWords &words);
// model_key() and XCR0 ("..., XCR0 0xe7"), for messages.
std::string identity(const CpuidWords &words);

}  // namespace spacedepth::cpu_probe
