#!/usr/bin/env bash
# Regenerating the kernels for another target takes one cache variable, SPACEDEPTH_TARGETS
# (ctest regenerate_*, in make test). This configures a separate build with only that variable
# (and a toolchain file for another architecture) set, reusing this build's generator, and
# regenerates one representative kernel, the small family at 4 bytes, with the Halide
# runtime for that target. What it proves:
#   - the configure takes the target as users write it (x86-64-linux-avx512 is completed to the
#     features LLVM needs, cmake/HalideTargets.cmake) and hands it to the generator;
#   - the kernel and the runtime are generated for that architecture (objdump), with the target's
#     vectors (zmm registers for AVX-512);
#   - on x86 the kernel links with that runtime alone and, where this CPU has the target's
#     features, runs right (tests/kernel_call.cpp: transposes, serially and on the thread pool).
# Every family at every width of these targets' code is compiled and tested elsewhere: the
# default x86 build holds the same AVX-512 code (its avx512_skylake path, ctest isa_*), and the
# ARM build (build-arm/, arm-64-linux) the same AArch64 schedules, tested under qemu. So the
# other eleven kernels here would only compile that code again: building all twelve took each
# check 4-5 minutes (2-core AMD EPYC, under ctest -j2), this one about 4 seconds.
# usage: check_regenerate.sh CMAKE NINJA SOURCE_DIR HOST_BUILD_DIR OUT_DIR TARGET [TOOLCHAIN_FILE]
set -euo pipefail
cmake="$1"; ninja="$2"; src="$3"; host_build="$4"; out="$5"; target="$6"; toolchain="${7:-}"
kernel=spacedepth_small_u32
args=(-DSPACEDEPTH_TARGETS="$target")
# Not part of the change, only of keeping the check short: the generator of this build, no
# tests, benchmark, CLI, Python module or GPU kernels.
args+=(-Dspacedepth-halide_generators_ROOT="$host_build" -DSPACEDEPTH_BUILD_TESTS=OFF -DSPACEDEPTH_BUILD_BENCH=OFF
       -DSPACEDEPTH_CUDA=OFF -DSPACEDEPTH_BUILD_CLI=OFF -DSPACEDEPTH_BUILD_PYTHON=OFF)
[ -n "$toolchain" ] && args+=(-DCMAKE_TOOLCHAIN_FILE="$toolchain")
"$cmake" -S "$src" -B "$out" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" -DCMAKE_BUILD_TYPE=Release "${args[@]}" >/dev/null
# Halide's CMake rules name a cross build's kernels <name>.update (imported archives).
suffix=""
[ -n "$toolchain" ] && suffix=.update
# One job: ctest runs this beside other tests (PROCESSORS 1 in tests/CMakeLists.txt).
"$cmake" --build "$out" -j 1 --target "$kernel$suffix" "spacedepth_halide_runtime$suffix" > "$out/build.log" 2>&1 \
    || { tail -20 "$out/build.log"; exit 1; }
generated=$(sed -n "s|^\(.*\) -g permute_copy -f $kernel .* target=\([^ ]*\) .*|\2|p" <("$ninja" -C "$out" -t commands "$kernel$suffix"))
echo "generator target: $generated"
[[ "$generated" == "$target"* ]] || { echo "FAIL: $kernel was not generated for $target"; exit 1; }

case "$target" in
    arm-64*) want=aarch64; objdump=aarch64-linux-gnu-objdump ;;
    x86-64*) want=x86-64; objdump=objdump ;;
    *) echo "check_regenerate: no architecture check for $target"; want=""; objdump=objdump ;;
esac
# Halide's own CMake rules put a cross build's kernel archives in generators/, a native one's in lib/.
archives=$(ls "$out"/lib/*.a "$out"/generators/*.a 2>/dev/null || true)
[ "$(echo "$archives" | wc -w)" -eq 2 ] || { echo "FAIL: expected $kernel and the runtime, got: $archives"; exit 1; }
status=0
for lib in $archives; do
    arch=$("$objdump" -f "$lib" | grep -m1 -o 'architecture: [a-zA-Z0-9:-]*' || true)
    printf '%-40s %8s bytes  %s\n' "$(basename "$lib")" "$(stat -c %s "$lib")" "$arch"
    [[ -z "$want" || "$arch" == *"$want"* ]] || { echo "FAIL: $lib is not $want"; status=1; }
done
kernel_archive=$(ls $archives | grep "$kernel")
if [[ "$target" == *avx512* ]]; then
    # The kernel really uses AVX-512 registers.
    zmm=$("$objdump" -d "$kernel_archive" | grep -c zmm || true)
    echo "zmm instructions in $kernel: $zmm"
    [ "$zmm" -gt 0 ] || { echo "FAIL: no AVX-512 code for $target"; status=1; }
fi
[ $status -eq 0 ] || exit $status

if [[ "$target" != x86-64* ]]; then
    # Linking an Android (or other OS) runtime needs that OS's C library: not on this machine.
    echo "ok: $target regenerates (not linked: no $target sysroot here)"
    exit 0
fi
# Link and call it.
"$src/tests/build_kernel_call.sh" "$src" "$out" "$kernel" "$kernel_archive" "$out/kernel_call"
# Halide's names for the target's x86 features, as /proc/cpuinfo spells them.
declare -A cpu_flag=([sse41]=sse4_1 [avx]=avx [avx2]=avx2 [fma]=fma [f16c]=f16c [avx512]="avx512f avx512cd"
                     [avx512_skylake]="avx512f avx512cd avx512vl avx512bw avx512dq"
                     [avx512_cannonlake]="avx512ifma avx512vbmi")
missing=""
for feature in ${generated//-/ }; do
    for flag in ${cpu_flag[$feature]:-}; do
        grep -qw "$flag" /proc/cpuinfo || missing+=" $flag"
    done
done
if [ -n "$missing" ]; then
    echo "ok: $target regenerates and links (not run: this CPU lacks$missing)"
    exit 0
fi
"$out/kernel_call"
echo "ok: $target regenerates, links and runs right"
