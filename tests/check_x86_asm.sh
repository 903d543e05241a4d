#!/usr/bin/env bash
# Assembly checks on the x86 kernels (run by ctest):
#  1. every AVX-512 (Skylake) kernel object moves data with zmm registers;
#  2. the one shared Halide runtime has no VEX-encoded instruction, so nothing in it can raise
#     SIGILL on a CPU without AVX (the kernels' own paths are chosen at run time).
set -euo pipefail
# usage: check_x86_asm.sh BUILD/generators AVX512_TARGET (as in SPACEDEPTH_TARGETS)
dir="$1"
target="$2"
status=0
for family in general transpose; do
    for bits in 8 16 32 64; do
        obj="$dir/spacedepth_${family}_u${bits}-${target}-user_context-large_buffers-no_asserts-no_runtime.o"
        zmm=$(objdump -d --no-show-raw-insn "$obj" | grep -cE 'vmov[a-z0-9]* .*zmm' || true)
        echo "${family} u${bits} ${target}: ${zmm} zmm vector moves"
        [ "$zmm" -gt 0 ] || { echo "FAIL: no zmm moves in $obj"; status=1; }
    done
done
vex=$(objdump -d --no-show-raw-insn "$dir"/spacedepth_halide_runtime.o | grep -cE '^\s+[0-9a-f]+:\s+v[a-z]' || true)
echo "shared runtime: ${vex} VEX instructions"
[ "$vex" -eq 0 ] || { echo "FAIL: the shared runtime contains AVX instructions"; status=1; }
exit $status
