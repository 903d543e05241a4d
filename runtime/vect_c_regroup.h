// The regroup family (contract/kernel_contract.h): SpaceToDepth and DepthToSpace in CRD order
// with 2 x 2 blocks on NCHW_VECT_C (and NCHWc4 of bytes), where the 4 lanes of each input pixel
// go to 4 output channel planes and each output pixel's 4 lanes are the 2 x 2 block of one lane:
// a 4 x 4 byte transpose per pixel, which the general family gathers a byte at a time. Called as
// a kernel (KernelFn) on the slots the planner gives these views (regroup_kind below); with
// AVX-512 VBMI each 16 output pixels of a lane are two rounds of VPERMT2B over 64-byte loads of
// two rows (SpaceToDepth) or four planes (DepthToSpace), tails by masked loads and stores; with
// AVX2 8 pixels a step in PSHUFB, unpacks and lane permutes, a last step overlapping the one
// before for a tail (rows under 8 pixels a pixel at a time). Other
// views, and CPUs without AVX2, run a plain strided copy.
#pragma once

#include "runtime/view.h"

#include <cstdint>

struct halide_buffer_t;

namespace spacedepth::detail {

enum class RegroupIsa { Scalar, Avx2, Vbmi };
const char *regroup_isa_name(RegroupIsa isa);
RegroupIsa best_regroup_isa();

// Which regroup a kernel's kKernelRank slots of bytes are (extent:in_stride:out_stride):
//   SpaceToDepth: slot 0 (bw) 2:4:1, slot 1 (bh) 2:R:2, slot 2 (w) W:8:4, the lanes 4:1:P;
//   DepthToSpace: slot 0 (lanes) 4:P:1, slot 1 (bw) 2:1:4, slot 2 (w) W:4:8, bh 2:2:R;
// the lanes or bh in one of slots 3-5, the other two any (the rows and the channel groups),
// every stride positive.
enum class RegroupKind { None, SpaceToDepth, DepthToSpace };
RegroupKind regroup_kind(const DimList &slots);
// Whether every 64-byte vector the kernel stores starts on a line when the output does (its rows,
// planes and outer steps whole lines), so that its twin streams them all.
bool regroup_writes_whole_lines(const DimList &slots);

// The kernel entries (KernelFn) for 1-byte elements, on best_regroup_isa(): plain stores, and the
// streaming twin (aligned whole 64-byte vectors non-temporal, fenced before each task returns).
extern "C" int spacedepth_vect_c_regroup_u8(void const *user_context, halide_buffer_t *in, bool parallel,
                                            halide_buffer_t *out);
extern "C" int spacedepth_vect_c_regroup_u8_stream(void const *user_context, halide_buffer_t *in, bool parallel,
                                                   halide_buffer_t *out);

// The same on a given path (the per-path tests): isa must be one this CPU runs.
int run_vect_c_regroup(RegroupIsa isa, bool stream, void const *user_context, const halide_buffer_t *in, bool parallel,
                       const halide_buffer_t *out);

}  // namespace spacedepth::detail
