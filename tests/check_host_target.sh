#!/usr/bin/env bash
# SPACEDEPTH_HOST_TARGET_ONLY (make demo's build) keeps the target this machine runs, as two
# independent readings of the CPU agree: the configure's, through Halide's Python bindings
# (cmake/HalideTargets.cmake), and the runtime's own choice through cpuid in this build
# (`spacedepth info`, runtime/tuning.cpp), which is what Halide's multi-target wrappers run.
# Configures only (a few seconds).
# usage: check_host_target.sh CMAKE NINJA SOURCE_DIR HOST_BUILD_DIR OUT_DIR
set -euo pipefail
cmake="$1"; ninja="$2"; src="$3"; host="$4"; out="$5"
rm -rf "$out"
"$cmake" -S "$src" -B "$out" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" -DCMAKE_BUILD_TYPE=Release \
    -DSPACEDEPTH_HOST_TARGET_ONLY=ON -Dspacedepth-halide_generators_ROOT="$host" -DSPACEDEPTH_BUILD_TESTS=OFF \
    -DSPACEDEPTH_BUILD_BENCH=OFF -DSPACEDEPTH_BUILD_PYTHON=OFF -DSPACEDEPTH_CUDA=OFF > "$out.log" 2>&1 \
    || { cat "$out.log"; echo "FAIL: configure"; exit 1; }
kept=$(sed -n "s/^-- kernels: this machine's target only, \([^ ]*\) (Halide sees .*/\1/p" "$out.log")
runs=$("$host/bin/spacedepth" info | sed -n 's/^target this CPU runs: //p')
echo "configure kept: $kept"
echo "runtime runs:   $runs"
[ -n "$kept" ] || { cat "$out.log"; echo "FAIL: the configure did not keep one target"; exit 1; }
[ "$kept" = "$runs" ] || { echo "FAIL: the configure keeps a target the runtime would not run"; exit 1; }
# The kernels are generated for that target alone. (grep reads all of ninja's output: with -q it
# could stop early, ninja then dies of SIGPIPE, and pipefail failed the check now and then.)
"$ninja" -C "$out" -t commands spacedepth | grep -E -- "-f spacedepth_general_u8 .* target=$kept-[^ ,]* " >/dev/null \
    || { echo "FAIL: general_u8 is not generated for $kept alone"; exit 1; }
echo "ok: SPACEDEPTH_HOST_TARGET_ONLY keeps $kept"
