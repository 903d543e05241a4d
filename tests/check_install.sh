#!/usr/bin/env bash
# The installed package, used the way a consumer would (ctest install_consumer, in make test):
#   1. `cmake --install` the build into a temporary prefix, then move the prefix elsewhere (the
#      package must be relocatable);
#   2. check the layout, and that no installed CMake or pkg-config file points into the source
#      tree, the build tree or Halide;
#   3. build examples/consumer from a copy outside the source tree with find_package(SpaceDepth)
#      and run it (C++ and C seed examples; exit 0 only if right);
#   4. build the same sources with its Makefile from pkg-config alone, and run them;
#   5. run the installed CLI;
#   6. check that a CPU-only consumer links no GPU code (and print its size), then install the
#      CUDA component too (where built) and link a consumer against it, with CMake and with
#      pkg-config, whose run_cuda gets past the component check.
# usage: check_install.sh CMAKE NINJA BUILD_DIR SOURCE_DIR
set -euo pipefail
cmake="$1"; ninja="$2"; build="$3"; src="$4"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$cmake" --install "$build" --prefix "$work/staging" >/dev/null
mv "$work/staging" "$work/prefix"
prefix="$work/prefix"

fail() { echo "FAIL: $*"; exit 1; }
for f in include/spacedepth/spacedepth.h include/spacedepth/spacedepth_c.h include/spacedepth/version.h \
         lib/libspacedepth.a lib/libspacedepth_halide_runtime.a lib/cmake/SpaceDepth/SpaceDepthConfig.cmake \
         lib/cmake/SpaceDepth/SpaceDepthConfigVersion.cmake lib/cmake/SpaceDepth/SpaceDepthTargets.cmake \
         lib/pkgconfig/spacedepth.pc bin/spacedepth share/doc/spacedepth/CHANGELOG.md; do
    [ -e "$prefix/$f" ] || fail "$f is not installed"
done
echo "installed: $(ls "$prefix"/lib/*.a | wc -l) archives, $(du -sh "$prefix/lib" | cut -f1) in lib/"
python3 "$src/scripts/archive_sizes.py" "$prefix/lib"
if grep -rlE "$src|$build|[Hh]alide::|site-packages" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"; then
    fail "an installed package file points into the source tree, the build tree or Halide"
fi

# CMake consumer, from a copy of the example outside the source tree.
cp -r "$src/examples/consumer" "$work/consumer"
"$cmake" -S "$work/consumer" -B "$work/consumer-build" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release | grep "SpaceDepth" || true
"$cmake" --build "$work/consumer-build" -j 1 >/dev/null  # one job: ctest PROCESSORS 1
"$work/consumer-build/consumer"
"$work/consumer-build/consumer_c"

# README's own CMake snippet and first C++ example, built against the install and run.
python3 "$src/tests/check_readme.py" --readme "$src/README.md" --consumer "$work/readme-app"
"$cmake" -S "$work/readme-app" -B "$work/readme-app/build" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
"$cmake" --build "$work/readme-app/build" -j 1 >/dev/null
"$work/readme-app/build/app"
# README's line without CMake, as written: c++ app.cpp $(pkg-config --cflags --libs spacedepth)
(cd "$work/readme-app" && PKG_CONFIG_PATH="$prefix/lib/pkgconfig" && export PKG_CONFIG_PATH \
    && c++ app.cpp $(pkg-config --cflags --libs spacedepth) -o app-pc && ./app-pc)
echo "README's CMake snippet, its pkg-config line and its first C++ example: built and run"

# The link line README points to: pkg-config names every archive installed, each once.
libs=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs spacedepth)
named=$(tr ' ' '\n' <<< "$libs" | grep '\.a$' | xargs -n1 basename | sort)
installed=$(ls "$prefix/lib" | grep '\.a$' | sort)
[ "$named" = "$installed" ] || fail "pkg-config --libs names $(echo $named) but lib/ holds $(echo $installed)"
echo "pkg-config --libs: all $(wc -l <<< "$installed") installed archives, then $(tr ' ' '\n' <<< "$libs" | grep -v '\.a$' | tr '\n' ' ')"

# pkg-config consumer: compiler flags and archives from the .pc file only.
mkdir "$work/pc"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -s -C "$work/consumer" OUT="$work/pc" run

"$prefix/bin/spacedepth" info | head -1

# A CPU-only consumer: no GPU kernels, no Halide GPU runtime, no glue; run_cuda says what to link.
gpu_symbols='(cuda|opencl|OpenCL|cuModule|cuLaunch|clEnqueue|ptx)'
cp -r "$src/tests/install" "$work/install-check"
"$cmake" -S "$work/install-check" -B "$work/cpu-only" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
"$cmake" --build "$work/cpu-only" -j 1 >/dev/null
"$work/cpu-only/cpu_only" unlinked
for exe in "$work/cpu-only/cpu_only" "$work/consumer-build/consumer" "$work/pc/consumer"; do
    found=$(nm -C --defined-only "$exe" | grep -E " [TtWwDdRrBbVv] .*$gpu_symbols" | grep -v "run_cuda\|spacedepth_cuda_backend\|cuda_context\|cuda_stream" || true)
    [ -z "$found" ] || fail "$(basename "$exe"), a CPU-only consumer, links GPU code: $(head -5 <<< "$found")"
    cp "$exe" "$work/stripped" && strip "$work/stripped"
    echo "CPU-only consumer $(basename "$exe") ($(dirname "$exe" | xargs basename)): $(stat -c %s "$exe") bytes, $(stat -c %s "$work/stripped") stripped, no GPU symbols"
done

# A plain install has no CUDA component, whether the build had one or not, and says so.
[ ! -e "$prefix/lib/cmake/SpaceDepth/SpaceDepthCudaTargets.cmake" ] || fail "a plain install installed the CUDA component"
if "$cmake" -S "$work/install-check" -B "$work/no-cuda" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" \
    -DCMAKE_PREFIX_PATH="$prefix" -DWITH_CUDA=ON > "$work/no-cuda.log" 2>&1; then
    fail "find_package(SpaceDepth COMPONENTS cuda) succeeded without the component"
fi
grep -q "component cuda is not installed" "$work/no-cuda.log" \
    || fail "find_package's refusal does not name the component: $(tail -5 "$work/no-cuda.log")"

if [ -e "$build/lib/libspacedepth_cuda.a" ]; then
    "$cmake" --install "$build" --prefix "$prefix" --component cuda >/dev/null
    for f in lib/libspacedepth_cuda.a lib/libspacedepth_halide_runtime_cuda.a lib/cmake/SpaceDepth/SpaceDepthCudaTargets.cmake \
             lib/pkgconfig/spacedepth-cuda.pc; do
        [ -e "$prefix/$f" ] || fail "$f is not installed by --component cuda"
    done
    "$cmake" -S "$work/install-check" -B "$work/with-cuda" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release -DWITH_CUDA=ON >/dev/null
    "$cmake" --build "$work/with-cuda" -j 1 >/dev/null
    "$work/with-cuda/with_cuda" linked
    "$work/with-cuda/cpu_only" unlinked  # the same package, the component not asked for
    # pkg-config: spacedepth-cuda names the component's archives, then spacedepth's.
    cuda_libs=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs spacedepth-cuda)
    named=$(tr ' ' '\n' <<< "$cuda_libs" | grep '\.a$' | xargs -n1 basename | sort)
    installed=$(ls "$prefix/lib" | grep '\.a$' | sort)
    [ "$named" = "$installed" ] || fail "pkg-config --libs spacedepth-cuda names $(echo $named) but lib/ holds $(echo $installed)"
    c++ -std=c++17 -O2 $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags spacedepth-cuda) \
        "$src/tests/install/cuda_call.cpp" -o "$work/pc/cuda_call" $cuda_libs
    "$work/pc/cuda_call" linked
    echo "CUDA consumer: $(stat -c %s "$work/with-cuda/with_cuda") bytes"
fi
echo "install_consumer: OK"
