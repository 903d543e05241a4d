// The shuffle family (contract/kernel_contract.h): a hand-written microkernel for the views whose
// Halide rows are slowest, byte permutations and short runs (tiny NCHW planes, the pixels of
// NHWC CRD with 3-16 channels). The output is cut into windows of consecutive bytes whose input
// bytes lie at the same offsets from a base that steps by a constant, so one table per window
// vector, built when the plan is made, serves every window: each output vector is one table
// lookup over up to kMaxShuffleChunks 16-byte chunks of the input (VPERMB / VPERMT2B with AVX-512
// VBMI, a PSHUFB per chunk with AVX2 and SSSE3, TBL on NEON), and a scalar loop over the same
// offsets where no vector ISA is present. Windows whose loads would read past the input load
// from a copy of its last bytes, or go through the scalar loop where they are short.
#pragma once

#include "runtime/small_vector.h"
#include "runtime/view.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace spacedepth::detail {

// The instruction sets the microkernel has a loop for, the best present under SPACEDEPTH_MAX_ISA.
enum class ShuffleIsa { Scalar, Ssse3, Avx2, Vbmi, Neon };
const char *shuffle_isa_name(ShuffleIsa isa);
ShuffleIsa best_shuffle_isa();

constexpr int kMaxShuffleChunks = 8;  // VBMI: two 64-byte tables; the others take 4
constexpr int kShuffleChunkBytes = 16;

// One output vector of a window.
struct ShuffleVector {
    int64_t out_offset = 0;  // from the window's first output byte
    int bytes = 0;           // <= the ISA's vector bytes; fewer: stored in pieces
    int chunks = 0;
    int64_t chunk_offset[kMaxShuffleChunks] = {};  // input bytes from the window's base
    // VBMI: where the vector's input bytes lie within 128 bytes (or, joining rows, two 64-byte
    // ranges), its tables are 1 or 2 64-byte loads, from its lowest input byte (chunk_offset[0])
    // and from chunk_offset[1] (the next 64 bytes, or the lowest input byte past them), and its
    // indexes count from those.
    int span_tables = 0;
    // AVX2: where each 128-bit lane's input bytes lie within 16 bytes, the lane is one 16-byte
    // load at chunk_offset[lane] and the vector one PSHUFB with index[0] as its control.
    bool lane_loads = false;
    // AVX2, SSSE3 and NEON: a vector shorter than the set's that stores the set's whole width,
    // past its bytes, where its window's later vectors (run after it) write them.
    bool store_whole = false;
    // VBMI and NEON: one index per output byte, chunk * 16 + byte. AVX2 and SSSE3: per chunk a
    // PSHUFB control, the byte within the chunk or 0x80 for bytes another chunk supplies.
    alignas(64) uint8_t index[4][64] = {};
};

// A view as windows: `windows` windows per row, stepping window_in_step input bytes and
// window_out_step output bytes (window_bytes where the windows split a dense dim, a dim's own
// stride where each window is whole dims); then tail_units units of unit_bytes (the first
// unit_bytes entries of byte_offset) each unit_in_step further; rows repeat over `outer` and the
// fragments.
struct ShuffleProgram {
    ShuffleIsa isa = ShuffleIsa::Scalar;
    int vector_bytes = 1;
    int64_t window_bytes = 0;
    std::vector<ShuffleVector> vectors;
    // The tail's units as one part-window (the first tail_units * unit_bytes bytes of a window),
    // with its own loads' reach; empty where it is copied byte by byte.
    std::vector<ShuffleVector> tail_vectors;
    int64_t tail_read_begin = 0, tail_read_end = 0;
    std::vector<int64_t> byte_offset;  // per output byte of a window, its input offset from the base
    // The input bytes a window's vector loads reach, from the base: from its lowest byte to
    // read_end. A window whose loads would pass the input's end runs on a copy of them.
    int64_t read_begin = 0, read_end = 0;
    int64_t windows = 0, window_in_step = 0, window_out_step = 0;
    // Windows [0, whole_windows) of a row store their one vector whole (AVX2, SSSE3, NEON), past
    // the window's bytes: the row's later windows and tail overwrite it. With plain stores only.
    int64_t whole_windows = 0;
    int64_t tail_units = 0, unit_bytes = 0, unit_in_step = 0;
    struct Loop {
        int64_t extent, in_stride, out_stride;  // bytes
    };
    SmallVector<Loop, 2 * kMaxDims> outer;  // innermost first
    Fragments fragments;                    // bytes; empty: the single pair (0, 0)
    double cost_per_byte = 0;               // the planner's estimate, in instructions
};

// The program for byte dims in output order (innermost first, every out_stride > 0, the output
// dense along a prefix of them) and byte fragments, on `isa`; null where no window of at most
// four vectors fits (the output's dense prefix is not at dim 0). `join_rows` (the planner's NCHW
// views of rows under 64 bytes): VBMI vectors may load from two places further apart than 64
// bytes (two short rows or planes), and a row whose input the next outer loop reads again is cut
// into blocks with that loop inside. Elsewhere neither measured faster (S2D NHWC CRD u8 C3 at
// 128 KiB 1.24x the time, D2S NHWC CRD f32 C12 1.21x; Intel Xeon VM, VBMI).
std::shared_ptr<const ShuffleProgram> make_shuffle_program(const DimList &byte_dims, const Fragments &fragments,
                                                           ShuffleIsa isa, bool join_rows = false);

// The rows a fragment has: the outer loops' iterations.
inline int64_t shuffle_rows_per_fragment(const ShuffleProgram &p) {
    int64_t rows = 1;
    for (const ShuffleProgram::Loop &l : p.outer) rows *= l.extent;
    return rows;
}

// Whether the program can stream its output: a vector loop, and rows whose windows follow each
// other in the output (window_out_step == window_bytes), so that each piece of windows the walk
// writes is whole output bytes. Other programs run with plain stores whatever the plan says.
bool shuffle_streams(const ShuffleProgram &p);

// Runs the program from the bases (the origin of each tensor); [in_begin, in_end) are the
// input's bytes, whose end no load may pass. `stream`: whole output lines go out with non-temporal
// stores through an L1 buffer, fenced before the call (each task) returns, where
// shuffle_streams(); `parallel`: the rows split into tasks on Halide's thread pool. Halide's
// return code (non-zero only where the pool fails a task).
int run_shuffle(const ShuffleProgram &program, const uint8_t *in, uint8_t *out, const uint8_t *in_begin,
                const uint8_t *in_end, bool stream = false, bool parallel = false, void *user_context = nullptr);

}  // namespace spacedepth::detail
