#!/usr/bin/env bash
# The prepared GPU check, for a machine with an NVIDIA GPU and driver but no Halide and no
# network (the lent H200 of the device tool). Everything it runs is built here first:
#
#   bench/gpu_check.sh --prepare   on the development machine: configures the release build with
#                                  the CUDA schedule variants (SPACEDEPTH_CUDA_VARIANTS=ON),
#                                  builds, and gathers what the GPU machine needs into
#                                  build/gpu_carry (binaries, the archives the Python module
#                                  links, link.txt), then runs the dry run against it.
#   bench/gpu_check.sh --dry-run   checks the binaries exist and are self-contained (ldd), then stops.
#   bench/gpu_check.sh [--out DIR] on the GPU machine (SPACEDEPTH_BUILD_DIR=build/gpu_carry), about 5 min:
#     1. the tests through GPU memory (SPACEDEPTH_TEST_DEVICE=cuda): the CUDA tests, the whole
#        correctness matrix and the rank matrix against the independent reference, the GPU plan
#        tests, and the tensor over 2^31 elements;
#     2. the Python module, built there for its python3 from the carried archives, on torch CUDA
#        tensors on torch's stream, and the peers (torch, CuPy, JAX) on the same tensors
#        (bench/gpu_torch.py);
#     3. the GPU bench (bench/gpu_bench.cpp): every op x order x layout (and a fused conversion) x
#        1/2/4-byte element at 4 MiB, 64 MiB and 1 GiB beside cuMemcpyDtoD, with every schedule
#        variant built.
#   Results: JSON lines and logs in DIR ($OUT where set, else gpu_check/).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=run
out="${OUT:-gpu_check}"
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) mode=dry ;;
        --prepare) mode=prepare ;;
        --out) out="$2"; shift ;;
        *) echo "gpu_check: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

if [ "$mode" = prepare ]; then
    set -e
    export PATH="$PWD/.venv/bin:$PATH"
    cmake --preset release -DSPACEDEPTH_CUDA_VARIANTS=ON >/dev/null
    cmake --build --preset release -j "$(nproc)" --target spacedepth_tests spacedepth_gpu_bench spacedepth_python
    carry=build/gpu_carry
    rm -rf "$carry"
    mkdir -p "$carry/bin" "$carry/lib" "$carry/include"
    for b in spacedepth_tests spacedepth_gpu_bench; do
        strip -o "$carry/bin/$b" "build/bin/$b"
    done
    # The archives the build's own Python module links, in its link order (build.ninja's line).
    python3 - "$carry" <<'PY'
import pathlib, re, shlex, shutil, sys
carry = pathlib.Path(sys.argv[1])
ninja = pathlib.Path("build/build.ninja").read_text()
block = ninja[ninja.index("build python/spacedepth/_core"):]
libs = re.search(r"\n  LINK_LIBRARIES = (.*)\n", block).group(1)
names = []
for word in shlex.split(libs):
    if word.endswith(".a") or word.endswith(".o"):
        src = pathlib.Path("build") / word if not word.startswith("/") else pathlib.Path(word)
        name = src.name
        if name.startswith("libnanobind"):
            continue  # built there, for that machine's Python
        if name not in names:
            names.append(name)
            shutil.copy(src, carry / "lib" / name)
(carry / "lib" / "link.txt").write_text("\n".join(names) + "\n")
print(f"gpu_check: {len(names)} archives for the Python module")
PY
    cp -r build/include/. "$carry/include/"
    echo "$(git rev-parse HEAD)$(git diff --quiet HEAD || echo ' with uncommitted changes')" > "$carry/commit.txt"
    set +e
    SPACEDEPTH_BUILD_DIR="$carry" "$0" --dry-run || exit $?
    # One compressed file, within the device tool's 64 MiB (the binaries alone are about 50 MiB).
    tar -C build -cf - gpu_carry | xz -6 -T2 > build/gpu_carry.tar.xz
    echo "gpu_check: build/gpu_carry.tar.xz, $(du -h build/gpu_carry.tar.xz | cut -f1): carry it; the run unpacks it"
    exit 0
fi

if [ -z "${SPACEDEPTH_BUILD_DIR:-}" ] && [ "$mode" = run ] && [ -f build/gpu_carry.tar.xz ]; then
    python3 -c "import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" build/gpu_carry.tar.xz /tmp/sd_carry
    SPACEDEPTH_BUILD_DIR=/tmp/sd_carry/gpu_carry
fi
build="${SPACEDEPTH_BUILD_DIR:-build}"
tests="$build/bin/spacedepth_tests"
gpu_bench="$build/bin/spacedepth_gpu_bench"
status=0
for b in "$tests" "$gpu_bench"; do
    if [ ! -x "$b" ]; then
        echo "gpu_check: $b is missing (bench/gpu_check.sh --prepare builds it)"; status=1; continue
    fi
    if ldd "$b" | grep -q 'not found'; then
        echo "gpu_check: $b has missing libraries:"; ldd "$b" | grep 'not found'; status=1
    fi
    # Only the C/C++ runtime every Linux has; anything else (Debian's gtest, a CUDA runtime)
    # would be missing on the GPU machine.
    libs=$(ldd "$b" | awk '{print $1}')
    extra=$(echo "$libs" | grep -vE '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|lib(stdc\+\+|m|gcc_s|c|dl|pthread|rt)\.so\.[0-9]+)$' || true)
    if [ -n "$extra" ]; then
        echo "gpu_check: $b needs libraries the GPU machine may not have: $(echo $extra)"; status=1
    else
        echo "gpu_check: $b is self-contained ($(echo $libs | wc -w) system libraries)"
    fi
done
[ $status -eq 0 ] || exit $status
test_filter='Cuda*:*CudaMatrix*:AllCells/Matrix.MatchesReference/*:Ranks/RankMatrix.*:GpuPlan.*:LargeTensors.*'
if [ "$mode" = dry ]; then
    echo "gpu_check: dry run: would run $(SPACEDEPTH_TEST_DEVICE=cuda "$tests" --gtest_filter="$test_filter" --gtest_list_tests | grep -c '^  ') tests through GPU memory,"
    echo "  $gpu_bench --models --json DIR/gpu_bench.jsonl ($("$gpu_bench" --help >/dev/null && echo "its options parse"))"
    if [ -f "$build/lib/link.txt" ]; then
        echo "  and build the Python module from $(wc -l < "$build/lib/link.txt") archives for bench/gpu_torch.py"
    fi
    exit 0
fi

mkdir -p "$out"
step() { echo; echo "== $(date +%T) $*"; }
step "device"
cat "$build/commit.txt" 2>/dev/null | sed 's/^/built from /' | tee "$out/device.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee -a "$out/device.txt"

# The Python module for this machine's python3, built while the tests run.
pybuild=/tmp/spacedepth_gpu_python
(
    cmake -S bench/gpu_python -B "$pybuild" -G Ninja -DSPACEDEPTH_SOURCE_DIR="$PWD" \
        -DSPACEDEPTH_ARCHIVE_DIR="$(realpath "$build/lib")" -DPython_EXECUTABLE="$(command -v python3)" \
        -DCMAKE_CXX_FLAGS="-I$(realpath "$build/include")" &&
        cmake --build "$pybuild" -j 8 &&
        mkdir -p "$pybuild/pkg/spacedepth" &&
        cp python/spacedepth/*.py python/spacedepth/py.typed "$pybuild/pkg/spacedepth/" &&
        cp "$pybuild"/_core*.so "$pybuild/pkg/spacedepth/"
) >"$out/python_build.log" 2>&1 &
pypid=$!

step "tests through GPU memory (SPACEDEPTH_TEST_DEVICE=cuda)"
SPACEDEPTH_TEST_DEVICE=cuda timeout 150 "$tests" --gtest_filter="$test_filter" --gtest_brief=1 \
    --gtest_output="json:$out/tests.json" 2>&1 | tail -n 60 | tee "$out/tests.log"
tests_rc=${PIPESTATUS[0]}
echo "gpu_check: tests exit $tests_rc"

step "GPU bench"
timeout 240 "$gpu_bench" --models --json "$out/gpu_bench.jsonl" 2>&1 | tail -n 12
bench_rc=${PIPESTATUS[0]}

step "Python module on torch CUDA tensors, and the peers"
wait $pypid
py_rc=$?
if [ $py_rc -eq 0 ]; then
    XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH="$pybuild/pkg" PYTHONUNBUFFERED=1 \
        timeout 150 python3 bench/gpu_torch.py --json "$out/gpu_torch.jsonl" 2>&1 | tail -n 60
    py_rc=${PIPESTATUS[0]}
else
    echo "gpu_check: the Python module did not build:"; tail -n 20 "$out/python_build.log"
fi

step "done: tests $tests_rc, bench $bench_rc, python $py_rc"
[ $tests_rc -eq 0 ] && [ $bench_rc -eq 0 ] && [ $py_rc -eq 0 ]
