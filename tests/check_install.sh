#!/usr/bin/env bash
# The installed package, used the way a consumer would (ctest install_consumer, in make test):
#   1. `cmake --install` the build into a temporary prefix, then move the prefix elsewhere (the
#      package must be relocatable);
#   2. check the layout, and that no installed CMake or pkg-config file points into the source
#      tree, the build tree or Halide;
#   3. build examples/consumer from a copy outside the source tree with find_package(SpaceDepth)
#      and run it (C++ and C seed examples; exit 0 only if right);
#   4. build the same sources with its Makefile from pkg-config alone, and run them;
#   5. run the installed CLI.
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
echo "install_consumer: OK"
