# Cross-compiling for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu, running the results
# under qemu-user (Debian's qemu-user). Used by the `arm64` preset and `make test-arm`.
# The Halide generators run on the build machine: the cross build imports them from a host build
# (spacedepth-halide_generators_ROOT, set by the preset), so only Halide's helpers and runtime
# headers are needed here (find_package(HalideHelpers)).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# ctest runs every test binary through the emulator; -L points it at the ARM sysroot's loader
# and libraries.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)

set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
# Header-only packages (CLI11, nlohmann_json, xtensor) and Halide's helpers live outside the
# sysroot and are architecture-independent.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
