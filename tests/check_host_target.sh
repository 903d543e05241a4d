#!/usr/bin/env bash
# SPACEDEPTH_HOST_TARGET_ONLY (make demo's build) keeps the target this machine runs: the
# configure's CPU probe (cmake/HalideTargets.cmake, runtime/cpu_probe.cpp compiled on its own)
# and the runtime of the host build (`spacedepth info`), which answers the kernels' multi-target
# wrappers, agree, and the kernels are generated for that target alone.
# With --emulate CPU, both run under qemu-x86_64 -cpu CPU (SPACEDEPTH_CPU_PROBE_LAUNCHER): the
# answer of another CPU, such as a Zen 4 whose VM masks AVX-512, and an AVX-512-only target
# list must stop that configure with a message naming the CPU and its features. With --build,
# one kernel of the demo build made that way is built and run under the same emulated CPU, and
# the seed examples are printed there (scripts/demo.py --no-bench).
# usage: check_host_target.sh CMAKE NINJA SOURCE_DIR HOST_BUILD_DIR OUT_DIR [--emulate CPU] [--build]
set -euo pipefail
cmake="$1"; ninja="$2"; src="$3"; host="$4"; out="$5"; shift 5
emulator=(); build=0
while [ $# -gt 0 ]; do
    case "$1" in
        --emulate) emulator=(qemu-x86_64 -cpu "$2"); shift 2 ;;
        --build) build=1; shift ;;
        *) echo "check_host_target.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
launcher=$(IFS=';'; echo "${emulator[*]:-}")
# A host-target-only configure of DIR with this build's generator, the probe under the launcher;
# its output in DIR.log.
configure() {
    rm -rf "$1"
    "$cmake" -S "$src" -B "$1" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" -DCMAKE_BUILD_TYPE=Release \
        -DSPACEDEPTH_HOST_TARGET_ONLY=ON -DSPACEDEPTH_CPU_PROBE_LAUNCHER="$launcher" \
        -Dspacedepth-halide_generators_ROOT="$host" -DSPACEDEPTH_BUILD_TESTS=OFF -DSPACEDEPTH_BUILD_BENCH=OFF \
        -DSPACEDEPTH_CUDA=OFF "${@:2}" > "$1.log" 2>&1
}
if [ ${#emulator[@]} -gt 0 ]; then
    # A target list this CPU runs none of stops the configure, naming the CPU, its features and
    # the targets (the emulated CPUs here have no AVX-512).
    if configure "$out.none" -DSPACEDEPTH_TARGETS=x86-64-linux-avx512 -DSPACEDEPTH_BUILD_PYTHON=OFF; then
        echo "FAIL: an AVX-512-only build configured for a CPU without AVX-512"; exit 1
    fi
    message=$(tr -s ' \n' ' ' < "$out.none.log")
    features=$("${emulator[@]}" "$host/bin/spacedepth_cpu_probe" 2>/dev/null | sed -n 's/^features: //p')
    for want in "runs none of the targets x86-64-linux-avx512-avx512_skylake" "features: $features)" " family 0x"; do
        grep -qF -- "$want" <<< "$message" || { cat "$out.none.log"; echo "FAIL: the error does not say '$want'"; exit 1; }
    done
    echo "ok: an AVX-512-only build is refused: $(grep -o 'this CPU (.*' <<< "$message" | cut -c1-200)"
fi
python=OFF
[ $build -eq 1 ] && python=ON
# Without the streaming twins: they are built for whichever target is kept, and generating them
# one at a time (-j 1) took 36 s of this test's 175.
configure "$out" -DSPACEDEPTH_BUILD_PYTHON=$python -DSPACEDEPTH_STREAMING=OFF || { cat "$out.log"; echo "FAIL: configure"; exit 1; }
grep "^-- kernels: this machine's target only" "$out.log"
kept=$(sed -n "s/^-- kernels: this machine's target only, \([^ ]*\) (CPU probe: .*/\1/p" "$out.log")
runs=$("${emulator[@]}" "$host/bin/spacedepth" info 2>/dev/null | sed -n 's/^target this CPU runs: //p')
echo "configure kept: $kept"
echo "runtime runs:   $runs${emulator:+ (under ${emulator[*]})}"
[ -n "$kept" ] || { cat "$out.log"; echo "FAIL: the configure did not keep one target"; exit 1; }
[ "$kept" = "$runs" ] || { echo "FAIL: the configure keeps a target the runtime would not run"; exit 1; }
# The kernels are generated for that target alone. (grep reads all of ninja's output: with -q it
# could stop early, ninja then dies of SIGPIPE, and pipefail failed the check now and then.)
"$ninja" -C "$out" -t commands spacedepth | grep -E -- "-f spacedepth_general_u8 .* target=$kept-[^ ,]* " >/dev/null \
    || { echo "FAIL: general_u8 is not generated for $kept alone"; exit 1; }
echo "ok: SPACEDEPTH_HOST_TARGET_ONLY keeps $kept"
[ $build -eq 1 ] || exit 0

# The kept target's code runs on this CPU: general_u32 of the demo build, generated for that
# target alone, called directly (tests/kernel_call.cpp: runs, padded rows and transposes,
# serially and on the thread pool) under the same emulated CPU. One job: ctest runs this beside
# other tests (PROCESSORS 1 in tests/CMakeLists.txt). The demo build's eleven other kernels are
# the same generator for the same target, and its runtime, CLI and Python module the host
# build's sources: building them all again took 170 s of one core, 1.5 minutes of make test.
"$cmake" --build "$out" -j 1 --target spacedepth_general_u32 spacedepth_halide_runtime > "$out/build.log" 2>&1 \
    || { tail -30 "$out/build.log"; echo "FAIL: the demo build's general_u32"; exit 1; }
"$src/tests/build_kernel_call.sh" "$src" "$out" spacedepth_general_u32 "$out/lib/libspacedepth_general_u32.a" \
    "$out/kernel_call" -DGENERAL_FAMILY
"${emulator[@]}" "$out/kernel_call" > "$out/kernel_call.log" 2>"$out/kernel_call.err" \
    || { cat "$out/kernel_call.log" "$out/kernel_call.err"; echo "FAIL: general_u32 for $kept"; exit 1; }
echo "ok: the demo build's general_u32 for $kept runs right"
# The demo itself, Python and the CLI, under the emulated CPU through the host build, whose
# runtime runs the kept target there (checked above). stderr: qemu's warnings about features
# TCG lacks.
PYTHONPATH="$host/python" SPACEDEPTH_CLI_EMULATOR="${emulator[*]:-}" \
    "${emulator[@]}" "$src/.venv/bin/python" "$src/scripts/demo.py" --no-bench "$host/bin/spacedepth" 2>"$out/demo.err" \
    || { cat "$out/demo.err"; echo "FAIL: the demo"; exit 1; }
echo "ok: the demo printed the seed examples on the $kept path"
