#!/usr/bin/env bash
# Assembly checks on the x86 kernels (run by ctest):
#  1. every AVX-512 (Skylake) kernel object holds AVX-512 code: the general family moves data with
#     zmm registers; the transpose family's u32 and u64 tiles are 4 elements (xmm / ymm) by design
#     (schedules/x86.cpp), so for every kernel the check counts AVX-512-only instructions: zmm,
#     xmm16-31 / ymm16-31, mask registers, vpermt2* / vpermi2* / vpternlog;
#  2. where the build has the VBMI rung (avx512_cannonlake, 1-byte kernels only), its general and
#     transpose u8 kernels use VBMI byte permutes (vpermb, vpermt2b, vpermi2b);
#  3. the one shared Halide runtime has no VEX-encoded instruction, so nothing in it can raise
#     SIGILL on a CPU without AVX (the kernels' own paths are chosen at run time).
set -euo pipefail
# usage: check_x86_asm.sh BUILD/generators "BITS..." AVX512_SKYLAKE_TARGET [VBMI_TARGET] (as in
# SPACEDEPTH_TARGETS; BITS: the contract's kernel widths, SPACEDEPTH_KERNEL_BITS)
dir="$1"
bits_list="$2"
target="$3"
vbmi_target="${4:-}"
status=0
for family in general transpose; do
    for bits in $bits_list; do
        obj="$dir/spacedepth_${family}_u${bits}-${target}-user_context-large_buffers-no_asserts-no_bounds_query-no_runtime.o"
        asm=$(objdump -d --no-show-raw-insn "$obj")
        zmm=$(grep -cE 'vmov[a-z0-9]* .*zmm' <<< "$asm" || true)
        evex=$(grep -cE 'zmm|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|%k[0-7]|vperm[it]2|vpternlog' <<< "$asm" || true)
        echo "${family} u${bits} ${target}: ${zmm} zmm vector moves, ${evex} AVX-512-only instructions"
        [ "$evex" -gt 0 ] || { echo "FAIL: no AVX-512 instruction in $obj"; status=1; }
        if [ "$family" = general ]; then
            [ "$zmm" -gt 0 ] || { echo "FAIL: no zmm moves in $obj"; status=1; }
        fi
    done
done
if [ -n "$vbmi_target" ]; then
    for family in general transpose; do
        obj="$dir/spacedepth_${family}_u8-${vbmi_target}-user_context-large_buffers-no_asserts-no_bounds_query-no_runtime.o"
        vbmi=$(objdump -d --no-show-raw-insn "$obj" | grep -cE 'vpermb|vperm[it]2b' || true)
        echo "${family} u8 ${vbmi_target}: ${vbmi} VBMI byte permutes"
        [ "$vbmi" -gt 0 ] || { echo "FAIL: no VBMI byte permute in $obj"; status=1; }
    done
fi
vex=$(objdump -d --no-show-raw-insn "$dir"/spacedepth_halide_runtime.o | grep -cE '^\s+[0-9a-f]+:\s+v[a-z]' || true)
echo "shared runtime: ${vex} VEX instructions"
[ "$vex" -eq 0 ] || { echo "FAIL: the shared runtime contains AVX instructions"; status=1; }
exit $status
