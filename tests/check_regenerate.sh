#!/usr/bin/env bash
# Regenerating the kernels for another target takes one cache variable, SPACEDEPTH_TARGETS
# (ctest regenerate_*, in make test). This configures a separate build with only that variable
# (and a toolchain file for another architecture) set, reusing this build's generator, builds
# the library with its kernels, and checks the archives are for that target.
# usage: check_regenerate.sh CMAKE NINJA SOURCE_DIR HOST_BUILD_DIR OUT_DIR TARGET [TOOLCHAIN_FILE]
set -euo pipefail
cmake="$1"; ninja="$2"; src="$3"; host_build="$4"; out="$5"; target="$6"; toolchain="${7:-}"
args=(-DSPACEDEPTH_TARGETS="$target")
# Not part of the change, only of keeping the check short: the generator of this build, no
# tests, benchmark or GPU kernels.
args+=(-Dspacedepth-halide_generators_ROOT="$host_build" -DSPACEDEPTH_BUILD_TESTS=OFF -DSPACEDEPTH_BUILD_BENCH=OFF
       -DSPACEDEPTH_CUDA=OFF -DSPACEDEPTH_BUILD_CLI=OFF -DSPACEDEPTH_BUILD_PYTHON=OFF)
[ -n "$toolchain" ] && args+=(-DCMAKE_TOOLCHAIN_FILE="$toolchain")
"$cmake" -S "$src" -B "$out" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" -DCMAKE_BUILD_TYPE=Release "${args[@]}" >/dev/null
"$cmake" --build "$out" > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }

case "$target" in
    arm-64*) want=aarch64; objdump=aarch64-linux-gnu-objdump ;;
    x86-64*) want=x86-64; objdump=objdump ;;
    *) echo "check_regenerate: no architecture check for $target"; want=""; objdump=objdump ;;
esac
# Halide's own CMake rules put a cross build's kernel archives in generators/, a native one's in lib/.
archives=$(ls "$out"/lib/*.a "$out"/generators/*.a 2>/dev/null || true)
[ "$(echo "$archives" | wc -w)" -ge 14 ] || { echo "FAIL: expected libspacedepth, 12 kernel archives and the runtime, got: $archives"; exit 1; }
status=0
for lib in $archives; do
    arch=$("$objdump" -f "$lib" | grep -m1 -o 'architecture: [a-zA-Z0-9:-]*' || true)
    printf '%-40s %8s bytes  %s\n' "$(basename "$lib")" "$(stat -c %s "$lib")" "$arch"
    [[ -z "$want" || "$arch" == *"$want"* ]] || { echo "FAIL: $lib is not $want"; status=1; }
done
python3 "$src/scripts/archive_sizes.py" "$out/lib" "$out/generators"
if [[ "$target" == *avx512* ]]; then
    # The kernels really use AVX-512 registers.
    zmm=$(objdump -d "$out"/lib/libspacedepth_general_u32.a | grep -c zmm || true)
    echo "zmm instructions in the u32 general kernel: $zmm"
    [ "$zmm" -gt 0 ] || { echo "FAIL: no AVX-512 code for $target"; status=1; }
fi
exit $status
