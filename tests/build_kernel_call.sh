#!/usr/bin/env bash
# Compiles tests/kernel_call.cpp against one kernel archive of a separate build directory and that
# build's Halide runtime, with the build's own C++ compiler and Halide's runtime header (beside
# its CMake package): the program ctest regenerate_*, tuning_database and emulated_demo_build run.
# usage: build_kernel_call.sh SOURCE_DIR BUILD_DIR KERNEL ARCHIVE OUTPUT [COMPILER FLAGS...]
set -euo pipefail
src="$1"; build="$2"; kernel="$3"; archive="$4"; output="$5"; shift 5
halide_include=$(sed -n 's|^HalideHelpers_DIR:PATH=\(.*\)/lib[0-9]*/cmake/HalideHelpers$|\1/include|p' "$build/CMakeCache.txt")
cxx=$(sed -n 's|^CMAKE_CXX_COMPILER:[A-Z]*=||p' "$build/CMakeCache.txt")
"$cxx" -std=c++17 -O1 -DKERNEL="$kernel" "$@" -I "$halide_include" -I "$build/generators" "$src/tests/kernel_call.cpp" \
    "$archive" "$build/lib/libspacedepth_halide_runtime.a" -lpthread -ldl -o "$output"
