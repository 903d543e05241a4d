// What this x86 CPU runs, from CPUID and XCR0 (runtime/cpu_probe.h).
#include "runtime/cpu_probe.h"

#include <cstdio>
#include <cstring>
#include <sstream>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace spacedepth::cpu_probe {

namespace {

bool bit(uint64_t word, int n) { return (word >> n) & 1; }

#if defined(__x86_64__) || defined(__i386__)
uint64_t read_xcr0() {
    uint32_t lo = 0, hi = 0;
    // XGETBV with ECX = 0, as bytes: assemblers without the mnemonic still take it.
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
    return (static_cast<uint64_t>(hi) << 32) | lo;
}
#endif

}  // namespace

CpuidWords read_cpuid() {
    CpuidWords w;
#if defined(__x86_64__) || defined(__i386__)
    w.x86 = true;
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid(0, a, b, c, d);
    w.max_leaf = a;
    std::memcpy(w.vendor, &b, 4);
    std::memcpy(w.vendor + 4, &d, 4);
    std::memcpy(w.vendor + 8, &c, 4);
    if (w.max_leaf >= 1) {
        __cpuid(1, a, b, c, d);
        w.leaf1_ecx = c;
        const uint32_t base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
        w.family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
        w.model = base_family == 0x6 || base_family == 0xf ? base_model + (((a >> 16) & 0xf) << 4) : base_model;
    }
    if (w.max_leaf >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        w.leaf7_ebx = b;
        w.leaf7_ecx = c;
        w.leaf7_edx = d;
        const uint32_t subleaves = a;
        if (subleaves >= 1) {
            __cpuid_count(7, 1, a, b, c, d);
            w.leaf7_1_eax = a;
        }
    }
    if (bit(w.leaf1_ecx, 27)) {  // OSXSAVE: the OS enabled XGETBV
        w.xcr0 = read_xcr0();
    }
#endif
    return w;
}

std::vector<Feature> decode(const CpuidWords &w) {
    if (!w.x86) return {};
    // The OS saves the YMM halves (XCR0 bits 1-2) and, for AVX-512, the mask and ZMM registers
    // (bits 5-7): without that state an instruction of the family faults, whatever CPUID says.
    const bool ymm_state = (w.xcr0 & 0x6) == 0x6;
    const bool zmm_state = ymm_state && (w.xcr0 & 0xe0) == 0xe0;
    const uint32_t c1 = w.leaf1_ecx, b7 = w.leaf7_ebx, c7 = w.leaf7_ecx, a71 = w.leaf7_1_eax;
    const bool sse41 = bit(c1, 19);
    const bool avx = ymm_state && bit(c1, 28);
    const bool fma = avx && bit(c1, 12);
    const bool f16c = avx && bit(c1, 29);
    const bool avx2 = avx && bit(b7, 5);
    const bool avx512 = zmm_state && avx2 && bit(b7, 16) && bit(b7, 28);       // F, CD
    const bool knl = avx512 && bit(b7, 26) && bit(b7, 27);                     // PF, ER
    const bool skylake = avx512 && bit(b7, 17) && bit(b7, 30) && bit(b7, 31);  // DQ, BW, VL
    const bool cannonlake = skylake && bit(b7, 21) && bit(c7, 1);              // IFMA, VBMI
    const bool zen4 = cannonlake && bit(c7, 6) && bit(c7, 8) && bit(c7, 9) && bit(c7, 10) && bit(c7, 11) &&
                      bit(c7, 12) && bit(c7, 14) &&
                      bit(a71, 5);  // VBMI2 GFNI VAES VPCLMULQDQ VNNI BITALG VPOPCNTDQ BF16
    const bool avxvnni = avx2 && bit(a71, 4);
    constexpr int kAbove = kIsaLevelCount;
    return {{"sse41", sse41, 1},
            {"avx", avx, 2},
            {"avx2", avx2, 2},
            {"fma", fma, 2},
            {"f16c", f16c, 2},
            {"avxvnni", avxvnni, kAbove},
            {"avx512", avx512, 3},
            {"avx512_knl", knl, kAbove},
            {"avx512_skylake", skylake, 3},
            {"avx512_cannonlake", cannonlake, 4},
            {"avx512_zen4", zen4, kAbove},
            {"avx512_zen5", false, kAbove},
            {"avx512_sapphirerapids", false, kAbove},
            {"avx10_1", false, kAbove},
            {"x86_apx", false, kAbove},
            {"fma4", false, kAbove}};
}

const std::vector<Feature> &features_of_this_cpu() {
    static const std::vector<Feature> features = decode(read_cpuid());
    return features;
}

std::string select_target(const std::string &targets, const std::vector<Feature> &features) {
    std::istringstream list(targets);
    std::string target;
    while (std::getline(list, target, ',')) {
        target.erase(0, target.find_first_not_of(' '));
        target.erase(target.find_last_not_of(' ') + 1);
        if (target.empty()) continue;
        bool runnable = true;
        std::istringstream parts(target);
        std::string part;
        while (std::getline(parts, part, '-')) {
            for (const Feature &f : features) {
                runnable &= part != f.halide_name || f.present;
            }
        }
        if (runnable) return target;
    }
    return "none";
}

std::string present_names(const std::vector<Feature> &features) {
    std::string names;
    for (const Feature &f : features) {
        if (f.present) names += (names.empty() ? "" : " ") + std::string(f.halide_name);
    }
    return names.empty() ? "none" : names;
}

std::string model_key(const CpuidWords &w) {
    if (!w.x86) return "";
    char text[64];
    std::snprintf(text, sizeof text, "%s family 0x%x model 0x%x", w.vendor, w.family, w.model);
    return text;
}

std::string identity(const CpuidWords &w) {
    if (!w.x86) return "not x86";
    char xcr0[32];
    std::snprintf(xcr0, sizeof xcr0, ", XCR0 0x%llx", static_cast<unsigned long long>(w.xcr0));
    return model_key(w) + xcr0;
}

}  // namespace spacedepth::cpu_probe
