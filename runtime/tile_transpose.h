// The tile family (contract/kernel_contract.h): a hand-written transpose of 4-byte elements for
// the transpose family's views (fused NCHW <-> NHWC conversions of f32 and other 4-byte types),
// called as a kernel (KernelFn) on the same slots: out(i0, i1, ...) = in(i0, i1, ...) with slot 0
// dense in the output and slot 1 dense in the input. Each plane of slots 0 and 1 is cut into
// tiles of 8 or 16 x 8 or 16 elements that read whole 64-byte input lines and write whole output
// lines, each tile a set of register transposes (8 x 8 with AVX2, 16 x 16 with AVX-512, 4 x 4 on
// NEON); a last tile that does not fit overlaps the one before it. The streaming twin writes each
// output row of a tile with non-temporal stores where it is aligned (through an L1 buffer where
// a register holds less than a row), and fences before it returns. Any other view, and planes
// under 8 x 8, run a scalar loop over every slot.
#pragma once

#include <cstdint>

struct halide_buffer_t;

namespace spacedepth::detail {

// The instruction sets the transpose has a loop for, the best present under SPACEDEPTH_MAX_ISA.
enum class TileIsa { Scalar, Avx2, Avx512, Neon };
const char *tile_isa_name(TileIsa isa);
TileIsa best_tile_isa();

// The kernel entries (KernelFn), on best_tile_isa(): plain stores, and the streaming twin.
// `parallel` splits the outer slots (2-5) into tasks on Halide's thread pool.
extern "C" int spacedepth_tile_transpose_u32(void const *user_context, halide_buffer_t *in, bool parallel,
                                             halide_buffer_t *out);
extern "C" int spacedepth_tile_transpose_u32_stream(void const *user_context, halide_buffer_t *in, bool parallel,
                                                    halide_buffer_t *out);

// The same on a given path (the per-path tests): isa must be one this CPU runs.
int run_tile_transpose(TileIsa isa, bool stream, void const *user_context, const halide_buffer_t *in, bool parallel,
                       const halide_buffer_t *out);

}  // namespace spacedepth::detail
