#!/usr/bin/env bash
# Assembly checks on the x86 kernels (run by ctest):
#  1. every AVX-512 (Skylake) kernel object moves data with zmm registers;
#  2. the one shared Halide runtime has no VEX-encoded instruction, so nothing in it can raise
#     SIGILL on a CPU without AVX (the kernels' own paths are chosen at run time).
set -euo pipefail
dir="$1"
status=0
for bits in 8 16 32 64; do
    obj=$(ls "$dir"/spacedepth_permute_copy_u${bits}-x86-64-linux-avx512_skylake*.o)
    zmm=$(objdump -d --no-show-raw-insn "$obj" | grep -cE 'vmov[a-z0-9]* .*zmm' || true)
    echo "u${bits} avx512_skylake kernel: ${zmm} zmm vector moves"
    [ "$zmm" -gt 0 ] || { echo "FAIL: no zmm moves in $obj"; status=1; }
done
vex=$(objdump -d --no-show-raw-insn "$dir"/spacedepth_halide_runtime.o | grep -cE '^\s+[0-9a-f]+:\s+v[a-z]' || true)
echo "shared runtime: ${vex} VEX instructions"
[ "$vex" -eq 0 ] || { echo "FAIL: the shared runtime contains AVX instructions"; status=1; }
exit $status
