#!/usr/bin/env bash
# Regenerating the kernels for another ARM64 target is a matter of the Halide target string
# (SPACEDEPTH_TARGETS). This check runs the host generator for arm-64-android (run by ctest in
# the ARM build): the u8 and u32 general kernels and the runtime must compile to AArch64 objects.
# usage: check_arm_targets.sh GENERATOR OUTDIR [TARGET]
set -euo pipefail
gen="$1"
out="$2"
target="${3:-arm-64-android}"
mkdir -p "$out"
"$gen" -r spacedepth_runtime_android -o "$out" -e static_library "target=$target"
for bits in 8 32; do
    "$gen" -g permute_copy -f "spacedepth_permute_copy_u$bits" -o "$out" -e static_library,c_header \
        "target=$target-no_runtime-user_context-large_buffers" "input.type=uint$bits" pattern=general
done
status=0
for lib in "$out"/spacedepth_runtime_android.a "$out"/spacedepth_permute_copy_u8.a "$out"/spacedepth_permute_copy_u32.a; do
    arch=$(aarch64-linux-gnu-objdump -f "$lib" | grep -m1 -o 'architecture: [a-z0-9-]*' || true)
    echo "$(basename "$lib") ($target): $arch"
    [[ "$arch" == *aarch64* ]] || { echo "FAIL: $lib is not an AArch64 object"; status=1; }
done
exit $status
