// The contract between the runtime's planners (runtime/plan_cpu.cpp, runtime/plan_gpu.cpp) and
// the schedules (schedules/): what a kernel is called with, and what each slot of its view means.
// Both sides include this header; nothing else states these facts. Plain C++, no Halide.
//
// Every kernel computes out(x0..x5) = in(x0..x5) over a 6-D strided view (the generator,
// generators/permute_copy_generator.cpp). A kernel is one (device, family, element width); the
// build declares each set of them once (generators/CMakeLists.txt, spacedepth_add_kernel_set).
#pragma once

#include <cstdint>
#include <string_view>

struct halide_buffer_t;

namespace spacedepth {

// Rank of every kernel's buffers. The planners fit every call into this many dims and run any
// further outer dims as a loop of kernel calls.
constexpr int kKernelRank = 6;

// halide_dimension_t holds int32 extents and strides; larger ones become executor loops.
constexpr int64_t kMaxKernelExtent = INT32_MAX;
constexpr int64_t kMaxKernelStride = INT32_MAX;

// The entry point of every kernel: (user_context, input, parallel, output). `parallel` false
// keeps the kernel in the caller's thread, away from the thread pool.
using KernelFn = int (*)(void const *, halide_buffer_t *, bool, halide_buffer_t *);

// Where a call's tensors live and which build of the kernels runs it.
//   Host:   host memory, the CPU kernels.
//   Cuda:   CUDA device memory, the CUDA kernels.
//   OpenCL: host memory, run by the OpenCL build of the GPU schedules (the tests run it on PoCL).
enum class Device : int { Host, Cuda, OpenCL };

// The schedule families, one line each: the enumerator, the name the generator parameter
// `family`, wisdom files and plan descriptions use, and the devices that build it ("stream": the
// host kernels also get a streaming-store twin, generators/stream_stores.py). Everything
// else follows from this list: the enum and its names below, the kernel sets the build declares
// and the tables it writes (generators/CMakeLists.txt reads the lines), the generator's
// parameter, MEASURE's candidates and the wisdom's parser.
//   General:   CPU: the specialisation ladder (contract/cpu_ladder_table.h). GPU: block digits
//              unrolled in a thread, coalesced threads.
//   Transpose: register tiles (CPU) or shared-memory tiles (GPU) for views whose output is dense
//              along slot 0 and whose input is dense along slot 1 (fused NCHW <-> NHWC). No
//              streaming twin: a tile writes 16-32 bytes into each of several lines, and
//              streaming stores to part of a line ran 1.03-4.2x slower (64 MiB, 2-core EPYC);
//              the tile family takes its 4-byte views on the host.
//   Small:     CPU only: serial, least entry cost, for tensors of a few KiB; never streams (a
//              streaming store pays off only past the last-level cache).
//   Shuffle:   CPU only, serial, and no Halide kernel ("microkernel": no device builds it): the
//              runtime's table-lookup microkernel (runtime/block_shuffle.h) for views whose output
//              is dense from its first byte, where the ladder's rows are slowest (byte
//              permutations, short runs, tiny planes).
//   Tile:      CPU only, no Halide kernel: the runtime's transpose of 4-byte elements
//              (runtime/tile_transpose.h), called as a kernel on the transpose family's slots,
//              with a streaming twin that writes whole output lines.
//   Regroup:   CPU only, no Halide kernel: the runtime's NCHW_VECT_C CRD 2 x 2 regroup of bytes
//              (runtime/vect_c_regroup.h), called as a kernel on the slots the general family
//              gets for those views, with a streaming twin.
#define SPACEDEPTH_KERNEL_FAMILIES(FAMILY)              \
    FAMILY(General, general, "host stream cuda opencl") \
    FAMILY(Transpose, transpose, "host cuda opencl")    \
    FAMILY(Small, small, "host")                        \
    FAMILY(Shuffle, shuffle, "microkernel")             \
    FAMILY(Tile, tile, "microkernel")                   \
    FAMILY(Regroup, regroup, "microkernel")

#define SPACEDEPTH_FAMILY_ENUMERATOR(enumerator, name, devices) enumerator,
enum class KernelFamily : int { SPACEDEPTH_KERNEL_FAMILIES(SPACEDEPTH_FAMILY_ENUMERATOR) };
#undef SPACEDEPTH_FAMILY_ENUMERATOR
#define SPACEDEPTH_FAMILY_NAME(enumerator, name, devices) #name,
constexpr const char *kKernelFamilyNames[] = {SPACEDEPTH_KERNEL_FAMILIES(SPACEDEPTH_FAMILY_NAME)};
#undef SPACEDEPTH_FAMILY_NAME
constexpr int kKernelFamilyCount = static_cast<int>(sizeof(kKernelFamilyNames) / sizeof(kKernelFamilyNames[0]));
#define SPACEDEPTH_FAMILY_VALUE(enumerator, name, devices) KernelFamily::enumerator,
constexpr KernelFamily kKernelFamilies[] = {SPACEDEPTH_KERNEL_FAMILIES(SPACEDEPTH_FAMILY_VALUE)};
#undef SPACEDEPTH_FAMILY_VALUE
// The runtime's hand-written families ("microkernel"): they split a parallel call into tasks
// themselves, where the executor splits a Halide kernel's (runtime/execute.cpp).
#define SPACEDEPTH_FAMILY_MICROKERNEL(enumerator, name, devices) std::string_view(devices) == "microkernel",
constexpr bool kFamilyIsMicrokernel[] = {SPACEDEPTH_KERNEL_FAMILIES(SPACEDEPTH_FAMILY_MICROKERNEL)};
#undef SPACEDEPTH_FAMILY_MICROKERNEL

constexpr const char *kernel_family_name(KernelFamily f) { return kKernelFamilyNames[static_cast<int>(f)]; }
constexpr const char *device_name(Device d) {
    return d == Device::Host ? "host" : d == Device::Cuda ? "cuda" : "opencl";
}

// Kernel element widths in bytes, ascending; a wider dtype moves as several elements of the
// widest. The one list of them: the planner widens over it, the build reads it for its kernel
// sets and tuning values (generators/CMakeLists.txt, cmake/Tuning.cmake), the tests walk it.
constexpr int kKernelWidths[] = {1, 2, 4, 8};
constexpr int kKernelWidthCount = static_cast<int>(sizeof(kKernelWidths) / sizeof(kKernelWidths[0]));
static_assert(kKernelWidths[0] == 1, "every view moves as bytes at worst");
// The index of a kernel width in kKernelWidths, -1 for any other width. The registry checks its
// generated rows at compile time (kernel_registry.h), so no kernel has another width.
constexpr int kernel_width_index(int width) {
    for (int i = 0; i < kKernelWidthCount; i++) {
        if (kKernelWidths[i] == width) return i;
    }
    return -1;
}

// ---- CPU views (runtime/plan_cpu.cpp -> schedules/cpu_ladder.cpp).
// Dims are sorted by output stride (slot 0 is the output's densest dim), size-1 dims dropped,
// dims contiguous on both sides merged, the element widened as far as runs and strides allow.
// Slots 0 .. kCpuPatternSlots-1 hold the innermost dims: the ladder's patterns are stride and
// extent tests on these. In a parallel call the last kCpuParallelSlots slots hold the outermost
// dims, which the executor splits into tasks of one to three kernel calls (runtime/execute.cpp),
// and unit dims (extent 1) pad the slots between; in a serial call the dims fill the slots from 0
// and unit dims pad the top.
constexpr int kCpuPatternSlots = 4;
constexpr int kCpuParallelSlots = 2;
static_assert(kCpuPatternSlots + kCpuParallelSlots == kKernelRank, "every CPU slot has one role");

// ---- GPU views (runtime/plan_gpu.cpp -> schedules/gpu.cpp).
// General family, by slot:
//   0, 1  block digits (extent <= kGpuMaxThreadDigit) with a stride of 1 on one side, done
//         inside one thread;
//   2     the thread index: dense on the output or, when the output's dense dim is a block
//         digit, on the input, so a warp's loads and stores both cover contiguous memory;
//   3     the thread index's outer part (grid y, in tiles of kGpuTileEdge);
//   4, 5  the rest, fused into grid z.
// Transpose family: slot 0 the output's dense dim, slot 1 the input's (both at least
// kGpuMinTransposeExtent long; grid y in tiles of kGpuTileEdge), slots 2-5 fused into grid z.
constexpr int kGpuThreadSlot = 2;
constexpr int kGpuTiledSlot = 3;           // general: the slot cut into grid-y tiles
constexpr int kGpuTransposeTiledSlot = 1;  // transpose: the same
constexpr int64_t kGpuMaxThreadDigit = 8;
constexpr int64_t kGpuMinTransposeExtent = 16;
// A 32 x 32 tile per block of 32 x 8 threads, four rows a thread.
constexpr int kGpuTileEdge = 32;
constexpr int kGpuThreadRows = 8;
// CUDA's limit on grid y and z: the planner keeps both within it, chunking larger views.
constexpr int64_t kMaxGpuGridBlocks = 65535;

}  // namespace spacedepth
