// The shuffle family's microkernel (block_shuffle.h): the window search and tables, then one
// loop per instruction set, each compiled for its set (target regions below) and chosen from the
// CPU probe under SPACEDEPTH_MAX_ISA, as the Halide wrappers' paths are.
#include "runtime/block_shuffle.h"
#include "runtime/checked_math.h"
#include "runtime/isa.h"
#include "runtime/microkernel_slots.h"
#include "runtime/simd_target.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace spacedepth::detail {

const char *shuffle_isa_name(ShuffleIsa isa) {
    static const char *const kNames[] = {"scalar", "SSSE3", "AVX2", "AVX-512 VBMI", "NEON"};
    return kNames[static_cast<int>(isa)];
}

namespace {
ShuffleIsa probe_shuffle_isa() {
#if defined(__x86_64__)
    // avx512_cannonlake is Skylake's AVX-512 (BW: the masked byte stores) with VBMI (VPERMB);
    // SSE4.1 brings SSSE3's PSHUFB.
    if (cpu_has_feature("avx512_cannonlake")) return ShuffleIsa::Vbmi;
    if (cpu_has_feature("avx2")) return ShuffleIsa::Avx2;
    if (cpu_has_feature("sse41")) return ShuffleIsa::Ssse3;
    return ShuffleIsa::Scalar;
#elif defined(__aarch64__)
    return ShuffleIsa::Neon;
#else
    return ShuffleIsa::Scalar;
#endif
}
}  // namespace

// Once per process, as the ISA cap is read: every host plan asks.
ShuffleIsa best_shuffle_isa() {
    static const ShuffleIsa isa = probe_shuffle_isa();
    return isa;
}

namespace {

int vector_bytes_of(ShuffleIsa isa) {
    switch (isa) {
    case ShuffleIsa::Vbmi: return 64;
    case ShuffleIsa::Avx2: return 32;
    default: return 16;
    }
}

// Instructions per window beyond its vectors (the loop, the bound check), and per byte copied by
// the scalar loop; with each vector's count below they rank the windows (block_shuffle.h).
constexpr double kWindowCost = 3, kScalarByteCost = 2, kRowCost = 10;
// The sets whose partial stores go in pieces (8, 4, 2 and 1 bytes); VBMI's are one masked store.
bool stores_in_pieces(ShuffleIsa isa) {
    return isa == ShuffleIsa::Avx2 || isa == ShuffleIsa::Ssse3 || isa == ShuffleIsa::Neon;
}

// Per row, each vector's loop over the row's windows (its tables' loads, the loop's entry and
// exit), in the ranking only: the rules' cost bounds were measured without it. Without it the
// ranking took windows of twice the vectors and half the windows a row, which ran slower (AVX2,
// 4 KiB, S2D NCHW DCR u8 C16 and f32 C64: 0.12 -> 0.08 of memcpy, S2D NHWC CRD f32 C3 0.12 ->
// 0.06); at 30 it took VBMI windows of half the vectors, which ran slower too (D2S NCHW DCR u8
// C64: 0.40 -> 0.27). AMD EPYC Zen 4.
constexpr double kVectorLoopCost = 12;
// A vector shorter than the instruction set's, stored in pieces (8, 4, 2 and 1 bytes).
constexpr double kPieceCost = 3;
// A row's tail run by its own vectors: the bound check and each vector's loop entry, once a row.
// At 0 the windows of 60 bytes and a tail took rows they did not speed up (D2S NHWC CRD u8 C3
// at 128 and 512 KiB, 0.97x); from 32 they lost the short rows they do speed up (D2S at 32 KiB
// 1.15x, S2D at 128 KiB 1.18x; VBMI, AMD EPYC Zen 4).
constexpr double kTailCost = 24;

// Whether every 16-byte lane of the vector at `start` takes its bytes from within 16 input bytes.
bool lanes_within_16(const std::vector<int64_t> &offsets, int64_t start, int bytes) {
    for (int lane = 0; 16 * lane < bytes; lane++) {
        const auto first = offsets.begin() + start + 16 * lane;
        const auto [lo, hi] = std::minmax_element(first, first + std::min(16, bytes - 16 * lane));
        if (*hi - *lo >= kShuffleChunkBytes) return false;
    }
    return true;
}

// The vector of output bytes [start, start + bytes) of a window, its instruction count and the
// end of its loads; false where its input bytes need more chunks than the set's tables hold.
bool build_vector(const std::vector<int64_t> &offsets, int64_t start, int bytes, ShuffleIsa isa, bool join_rows,
                  ShuffleVector *out, double *cost, int64_t *read_end) {
    const int vector_bytes = vector_bytes_of(isa);
    const int max_chunks = isa == ShuffleIsa::Vbmi ? kMaxShuffleChunks : 4;
    if (bytes < 1 || bytes > vector_bytes) return false;
    ShuffleVector &v = *out;
    v = ShuffleVector();
    v.out_offset = start;
    v.bytes = bytes;
    int64_t sorted[64];
    std::copy(offsets.begin() + start, offsets.begin() + start + v.bytes, sorted);
    std::sort(sorted, sorted + v.bytes);
    const int64_t lowest = sorted[0], span = sorted[v.bytes - 1] - lowest + 1;
    const bool partial = v.bytes < vector_bytes;
    double vector_cost = 0;
    int64_t end = 0;
    // VBMI: the input bytes within two 64-byte loads, from the lowest byte and from the lowest
    // byte past the first load's reach (the next 64 bytes where they follow; joining rows,
    // wherever the second of two short rows or planes starts).
    const int64_t *past_first = std::lower_bound(sorted, sorted + v.bytes, lowest + 64);
    const int64_t second = span <= 128 || !join_rows ? lowest + 64 : *past_first;
    if (isa == ShuffleIsa::Vbmi && (span <= 64 || sorted[v.bytes - 1] < second + 64)) {
        // One VPERMB or VPERMT2B.
        v.span_tables = span <= 64 ? 1 : 2;
        v.chunk_offset[0] = lowest;
        v.chunk_offset[1] = second;
        for (int t = 0; t < v.bytes; t++) {
            const int64_t offset = offsets[start + t];
            v.index[0][t] = static_cast<uint8_t>(offset < lowest + 64 ? offset - lowest : 64 + offset - second);
        }
        vector_cost = v.span_tables + 2;
        end = v.chunk_offset[v.span_tables - 1] + 64;
    } else if (isa == ShuffleIsa::Avx2 && lanes_within_16(offsets, start, v.bytes)) {
        // One 16-byte load per lane (one 32-byte load where the two are consecutive), one PSHUFB.
        v.lane_loads = true;
        v.chunks = (v.bytes + 15) / 16;
        for (int lane = 0; lane < v.chunks; lane++) {
            const auto first = offsets.begin() + start + 16 * lane;
            const int n = std::min(16, v.bytes - 16 * lane);
            v.chunk_offset[lane] = *std::min_element(first, first + n);
            for (int t = 0; t < n; t++) {
                v.index[0][16 * lane + t] = static_cast<uint8_t>(first[t] - v.chunk_offset[lane]);
            }
            end = std::max(end, v.chunk_offset[lane] + kShuffleChunkBytes);
        }
        const bool one_load = v.chunks == 1 || v.chunk_offset[1] == v.chunk_offset[0] + kShuffleChunkBytes;
        vector_cost = (one_load ? 1 : 3) + 2;  // loads (and the insert), the PSHUFB, the store
    } else {
        // Chunks from the lowest offset not yet covered: the fewest 16-byte loads that cover all.
        for (int i = 0; i < v.bytes; i++) {
            if (v.chunks > 0 && sorted[i] < v.chunk_offset[v.chunks - 1] + kShuffleChunkBytes) continue;
            if (v.chunks == max_chunks) return false;
            v.chunk_offset[v.chunks++] = sorted[i];
        }
        auto chunk_of = [&](int64_t offset) {
            int c = 0;
            while (c + 1 < v.chunks && offset >= v.chunk_offset[c + 1]) c++;
            return c;
        };
        const bool per_chunk_controls = isa == ShuffleIsa::Avx2 || isa == ShuffleIsa::Ssse3;
        if (per_chunk_controls) std::memset(v.index, 0x80, sizeof v.index);
        for (int t = 0; t < v.bytes; t++) {
            const int64_t offset = offsets[start + t];
            const int c = chunk_of(offset);
            const auto within = static_cast<uint8_t>(offset - v.chunk_offset[c]);
            if (per_chunk_controls) {
                v.index[c][t] = within;
            } else {
                v.index[0][t] = static_cast<uint8_t>(c * kShuffleChunkBytes + within);
            }
        }
        end = v.chunk_offset[v.chunks - 1] + kShuffleChunkBytes;
        if (isa == ShuffleIsa::Vbmi) {
            vector_cost = 2 * v.chunks + 1;  // a load and an insert per chunk, the permute, the store
        } else {
            vector_cost = isa == ShuffleIsa::Neon ? v.chunks + 2 : 3 * v.chunks;  // loads, lookups, ORs, store
        }
    }
    if (partial && isa != ShuffleIsa::Vbmi) vector_cost += kPieceCost;  // VBMI: a masked store
    *cost = vector_cost;
    *read_end = end;
    return true;
}

// The vectors of a window whose output bytes come from input offsets `offsets`, their
// instruction count and the end of their loads; false where a window needs more chunks than the
// instruction set's tables hold. A vector whose input bytes spread past the tables is cut short,
// to no less than half the set's width, in windows of whole dims (`cut_short`): D2S NHWC CRD u8
// C3 pixels reach 131 input bytes in 64 output bytes, and at 54 bytes a whole output row of 108
// is two vectors, so the windows can take whole rows and step along the next dim instead of
// paying the row loop twice a row. Windows of part of a dim in cut vectors ran slower than the
// single-vector windows they displaced (S2D NCHW DCR u8 C64 at 4 KiB: 2 half vectors, 1.2x the
// time on VBMI, 1.4x on AVX2; AMD EPYC Zen 4).
bool build_vectors(const std::vector<int64_t> &offsets, ShuffleIsa isa, bool join_rows, bool cut_short,
                   std::vector<ShuffleVector> *vectors, double *cost, int64_t *read_end) {
    const int vector_bytes = vector_bytes_of(isa);
    const int64_t window_bytes = static_cast<int64_t>(offsets.size());
    vectors->clear();
    *cost = kWindowCost;
    *read_end = 0;
    for (int64_t start = 0; start < window_bytes;) {
        ShuffleVector v;
        double vector_cost = 0;
        int64_t end = 0;
        const int bytes = static_cast<int>(std::min<int64_t>(vector_bytes, window_bytes - start));
        if (!build_vector(offsets, start, bytes, isa, join_rows, &v, &vector_cost, &end)) {
            if (!cut_short) return false;
            // A prefix of a vector that fits fits too: the longest, by bisection.
            int fits = std::min(bytes, vector_bytes / 2), fails = bytes;
            if (!build_vector(offsets, start, fits, isa, join_rows, &v, &vector_cost, &end)) return false;
            while (fails - fits > 1) {
                const int mid = (fits + fails) / 2;
                (build_vector(offsets, start, mid, isa, join_rows, &v, &vector_cost, &end) ? fits : fails) = mid;
            }
            build_vector(offsets, start, fits, isa, join_rows, &v, &vector_cost, &end);
        }
        // A short vector that the window's later vectors (run after it) cover past its end is
        // stored whole on the sets whose partial stores go in pieces.
        if (stores_in_pieces(isa) && v.bytes < vector_bytes && start + vector_bytes <= window_bytes) {
            v.store_whole = true;
            vector_cost -= kPieceCost;
        }
        *cost += vector_cost;
        *read_end = std::max(*read_end, end);
        vectors->push_back(v);
        start += v.bytes;
    }
    return true;
}

// How many of a row's windows may store their one vector whole, past the window's bytes, where
// the later windows and the tail of the same row (all written after it) cover what it spills:
// rows of single-vector windows that follow each other, on the sets whose partial stores go in
// pieces (VBMI's are masked, one instruction).
int64_t whole_vector_windows(ShuffleIsa isa, const std::vector<ShuffleVector> &vectors, int64_t window_bytes,
                             int64_t out_step, int64_t windows, int64_t tail_bytes) {
    const int vector_bytes = vector_bytes_of(isa);
    if (!stores_in_pieces(isa) || vectors.size() != 1 || window_bytes >= vector_bytes || out_step != window_bytes)
        return 0;
    const int64_t row_bytes = windows * window_bytes + tail_bytes;
    if (row_bytes < vector_bytes) return 0;
    return std::min(windows, (row_bytes - vector_bytes) / window_bytes + 1);
}

}  // namespace

std::shared_ptr<const ShuffleProgram> make_shuffle_program(const DimList &dims, const Fragments &fragments,
                                                           ShuffleIsa isa, bool join_rows) {
    // The output's dense prefix: windows are made of its dims.
    size_t dense = 0;
    for (int64_t run = 1; dense < dims.size() && dims[dense].out_stride == run; dense++) run *= dims[dense].extent;
    if (dense == 0) return nullptr;
    const int vector_bytes = vector_bytes_of(isa);
    const int64_t max_window = std::max(4 * vector_bytes, 256);

    // Each candidate window: dims 0..j-1 whole and m consecutive indices of dim j. The cost of a
    // row (dim j and the dims below it) per byte ranks them, a tail of extent % m indices costed
    // as the vectors it runs.
    auto program = std::make_shared<ShuffleProgram>();
    std::vector<ShuffleVector> vectors, tail_program;
    std::vector<int64_t> offsets;
    double best = -1;
    int64_t unit = 1;  // bytes of dims 0..j-1
    for (size_t j = 0; j < dense && unit <= max_window; unit *= dims[j].extent, j++) {
        const int64_t extent = dims[j].extent, most = std::min(extent, max_window / unit);
        for (int64_t m = 1; m <= most; m++) {
            const int64_t window = unit * m;
            // Windows of whole chunks, the widest window, a divisor of the dim (no tail), or the
            // widest window of its vector count: every m took up to 0.4 ms a program (S2D NCHW u8
            // rows of 418 bytes) and chose the same windows on the matrix.
            const int64_t vector_count = (window + vector_bytes - 1) / vector_bytes;
            const bool fills_vectors = window + unit > vector_count * vector_bytes;
            if (window % kShuffleChunkBytes != 0 && m != most && extent % m != 0 && !fills_vectors) continue;
            offsets.assign(static_cast<size_t>(window), 0);
            for (int64_t t = 0; t < window; t++) {
                int64_t rest = t, offset = 0;
                for (size_t i = 0; i < j; i++) {
                    offset += rest % dims[i].extent * dims[i].in_stride;
                    rest /= dims[i].extent;
                }
                offsets[static_cast<size_t>(t)] = offset + rest * dims[j].in_stride;
            }
            // A window of whole dims steps along the next dim, whatever its strides: rows of one
            // window each would pay the row loop per window.
            const bool whole = m == extent && j + 1 < dims.size();
            double window_cost = kWindowCost + kScalarByteCost * static_cast<double>(window);
            int64_t read_end = 0;
            if (isa != ShuffleIsa::Scalar &&
                !build_vectors(offsets, isa, join_rows, whole, &vectors, &window_cost, &read_end)) {
                continue;
            }
            if (isa == ShuffleIsa::Scalar) vectors.clear();
            const size_t step_dim = whole ? j + 1 : j;
            const int64_t windows = whole ? dims[step_dim].extent : extent / m, tail = whole ? 0 : extent % m;
            const int64_t out_step = whole ? dims[step_dim].out_stride : window;
            const int64_t whole_windows = whole_vector_windows(isa, vectors, window, out_step, windows, tail * unit);
            // The tail as the vectors it runs (the first bytes of a window: the same offsets, fewer
            // of them), or byte by byte where none fit.
            double tail_cost = kScalarByteCost * static_cast<double>(tail * unit);
            size_t tail_vectors = 0;
            int64_t tail_read_end = 0;
            if (tail > 0 && isa != ShuffleIsa::Scalar) {
                const std::vector<int64_t> tail_offsets(offsets.begin(), offsets.begin() + tail * unit);
                double vectors_cost = 0;
                if (build_vectors(tail_offsets, isa, join_rows, false, &tail_program, &vectors_cost, &tail_read_end)) {
                    tail_cost = vectors_cost + kTailCost;
                    tail_vectors = tail_program.size();
                }
            }
            const double row_cost = static_cast<double>(windows) * window_cost -
                                    kPieceCost * static_cast<double>(whole_windows) + tail_cost + kRowCost;
            const double row_bytes = static_cast<double>(windows * window + tail * unit);
            const double per_byte = row_cost / row_bytes;
            const double rank =
                per_byte + kVectorLoopCost * static_cast<double>(vectors.size() + tail_vectors) / row_bytes;
            if (best >= 0 && rank >= best) continue;
            best = rank;
            program->window_bytes = window;
            program->vectors = vectors;
            program->byte_offset = offsets;
            program->read_end = read_end;
            program->windows = windows;
            program->window_in_step = whole ? dims[step_dim].in_stride : m * dims[j].in_stride;
            program->window_out_step = out_step;
            program->whole_windows = whole_windows;
            program->tail_units = tail;
            program->tail_vectors = tail_vectors > 0 ? tail_program : std::vector<ShuffleVector>();
            program->tail_read_end = tail_read_end;
            program->unit_bytes = unit;
            program->unit_in_step = dims[j].in_stride;
            program->outer.clear();
            for (size_t i = step_dim + 1; i < dims.size(); i++) {
                program->outer.push_back({dims[i].extent, dims[i].in_stride, dims[i].out_stride});
            }
            program->cost_per_byte = per_byte;
        }
    }
    if (best < 0) return nullptr;
    program->read_begin = *std::min_element(program->byte_offset.begin(), program->byte_offset.end());
    // A row whose input the next outer loop's iterations read again (NCHW SpaceToDepth's phases
    // of one input row: slot 1 steps a byte or an element) is cut into blocks of 16-64 windows (a
    // divisor of the row's), with that loop inside the block loop: each block's input is still in
    // L1 when the next phase reads it, not in L2 a plane later.
    int64_t block_windows = 64;
    while (block_windows >= 16 && program->windows % block_windows != 0) block_windows--;
    if (join_rows && !program->outer.empty() && program->tail_units == 0 && block_windows >= 16 &&
        program->windows > block_windows &&
        magnitude(program->outer[0].in_stride) < program->read_end - program->read_begin) {
        const ShuffleProgram::Loop phases = program->outer[0];
        program->outer[0] = {program->windows / block_windows, block_windows * program->window_in_step,
                             block_windows * program->window_out_step};
        program->outer.insert_front(phases);
        program->windows = block_windows;
        program->whole_windows = whole_vector_windows(isa, program->vectors, program->window_bytes,
                                                      program->window_out_step, program->windows, 0);
    }
    if (program->tail_units > 0) {
        const auto first = program->byte_offset.begin();
        program->tail_read_begin = *std::min_element(first, first + program->tail_units * program->unit_bytes);
    }
    program->isa = isa;
    program->vector_bytes = vector_bytes;
    program->fragments = fragments;
    return program;
}

// ---- The loops, one namespace per instruction set, each in its target region (simd_target.h).

// Calls f with the chunk count (1-4) as a compile-time constant: each set's run_chunks<N>()
// keeps its tables in N registers.
template <typename F>
void with_chunk_count(int chunks, F &&f) {
    switch (chunks) {
    case 1: f(std::integral_constant<int, 1>()); return;
    case 2: f(std::integral_constant<int, 2>()); return;
    case 3: f(std::integral_constant<int, 3>()); return;
    default: f(std::integral_constant<int, 4>()); return;
    }
}

// The input's last bytes, copied into an L1 buffer and followed there by zeros, for the windows
// (and tails) whose vector loads would pass the input's end: they load from the copy instead, at
// the same offsets from their image of the base. A window whose loads span at most `span` bytes
// from its first byte (a byte of the input) and end past in_end starts less than `span` before
// in_end, so one copy of the input's last `span` bytes, made when a walk first needs it, serves
// every such window: D2S NHWC CRD u8 C3 at 4 KiB (the last of a row of 18 windows of 216
// bytes) ran 224 ns a call with that window byte by byte, 206 with a copy per window (AMD EPYC
// Zen 4, a scratch harness).
class InputEndCopy {
public:
    static constexpr int64_t kMaxSpan = 1024;
    InputEndCopy(const uint8_t *in_begin, const uint8_t *in_end, int64_t span)
        : in_end_(in_end), begin_(in_end - std::min(span, in_end - in_begin)), span_(span) {}
    // Where `base`, whose windows load from at or after in_end - span, lies in the copy.
    const uint8_t *image_of(const uint8_t *base) {
        if (!copied_) {
            const auto have = static_cast<size_t>(in_end_ - begin_);
            std::memcpy(buffer_, begin_, have);
            std::memset(buffer_ + have, 0, static_cast<size_t>(span_));
            copied_ = true;
        }
        return reinterpret_cast<const uint8_t *>(reinterpret_cast<uintptr_t>(buffer_) +
                                                 static_cast<uintptr_t>(base - begin_));
    }

private:
    const uint8_t *in_end_, *begin_;
    int64_t span_;
    bool copied_ = false;
    alignas(64) uint8_t buffer_[2 * kMaxSpan];
};

// The streaming walk moves whole cache lines: stream_line(dst, src) stores one 64-byte line, both
// addresses on a line, with the set's non-temporal stores; stream_fence() orders them.
constexpr int64_t kLineBytes = 64;

namespace scalar_loop {
inline void vector_run(const ShuffleVector &, const uint8_t *, uint8_t *, int64_t, int64_t, int64_t, bool) {}
inline void stream_line(uint8_t *dst, const uint8_t *src) { std::memcpy(dst, src, kLineBytes); }
inline void stream_fence() {}
#include "runtime/block_shuffle_rows.inc"
}  // namespace scalar_loop

#if defined(__x86_64__)

// The 128-bit sets' helpers: SSSE3 is the least of them.
SPACEDEPTH_TARGET_BEGIN("ssse3")
namespace x86 {
inline __m128i load16(const uint8_t *p) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)); }
// Stores the first `bytes` (< 16) bytes of x.
inline void store_pieces(uint8_t *o, __m128i x, int bytes) {
    if (bytes & 8) {
        _mm_storel_epi64(reinterpret_cast<__m128i *>(o), x);
        x = _mm_srli_si128(x, 8);
        o += 8;
    }
    if (bytes & 4) {
        const int32_t v = _mm_cvtsi128_si32(x);
        std::memcpy(o, &v, 4);
        x = _mm_srli_si128(x, 4);
        o += 4;
    }
    if (bytes & 2) {
        const auto v = static_cast<uint16_t>(_mm_cvtsi128_si32(x));
        std::memcpy(o, &v, 2);
        x = _mm_srli_si128(x, 2);
        o += 2;
    }
    if (bytes & 1) *o = static_cast<uint8_t>(_mm_cvtsi128_si32(x));
}
// The streaming walk's line stores for SSSE3 and AVX2 (16-byte MOVNTDQ: the write-combining
// buffer joins them into the line either way).
inline void stream_line(uint8_t *dst, const uint8_t *src) {
    for (int i = 0; i < kLineBytes; i += 16) {
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i),
                         _mm_load_si128(reinterpret_cast<const __m128i *>(src + i)));
    }
}
inline void stream_fence() { _mm_sfence(); }
}  // namespace x86
SPACEDEPTH_TARGET_END

SPACEDEPTH_TARGET_BEGIN("ssse3")
namespace ssse3_loop {
using x86::load16;
using x86::stream_fence;
using x86::stream_line;
template <int Chunks>
inline void run_chunks(const ShuffleVector &v, const uint8_t *in, uint8_t *out, int64_t n, int64_t in_step,
                       int64_t out_step, bool whole) {
    __m128i control[Chunks];
    int64_t offset[Chunks];
    for (int c = 0; c < Chunks; c++) {
        control[c] = load16(v.index[c]);
        offset[c] = v.chunk_offset[c];
    }
    // Read once: a byte store may alias the program, which the loop would otherwise reload.
    const int bytes = v.bytes;
    const bool full = bytes == 16 || whole;
    for (int64_t i = 0; i < n; i++, in += in_step, out += out_step) {
        __m128i r = _mm_shuffle_epi8(load16(in + offset[0]), control[0]);
        for (int c = 1; c < Chunks; c++) r = _mm_or_si128(r, _mm_shuffle_epi8(load16(in + offset[c]), control[c]));
        if (full) {
            _mm_storeu_si128(reinterpret_cast<__m128i *>(out), r);
        } else {
            x86::store_pieces(out, r, bytes);
        }
    }
}
inline void vector_run(const ShuffleVector &v, const uint8_t *in, uint8_t *out, int64_t n, int64_t in_step,
                       int64_t out_step, bool whole) {
    with_chunk_count(v.chunks, [&](auto chunks) { run_chunks<chunks()>(v, in, out, n, in_step, out_step, whole); });
}
#include "runtime/block_shuffle_rows.inc"
}  // namespace ssse3_loop
SPACEDEPTH_TARGET_END

SPACEDEPTH_TARGET_BEGIN("avx2")
namespace avx2_loop {
using x86::load16;
using x86::stream_fence;
using x86::stream_line;
// Stores the first `bytes` (<= 32) bytes of r.
inline void store_vector(uint8_t *out, __m256i r, int bytes) {
    if (bytes == 32) {
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(out), r);
        return;
    }
    __m128i half = _mm256_castsi256_si128(r);
    if (bytes >= 16) {
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out), half);
        half = _mm256_extracti128_si256(r, 1);
        out += 16;
        bytes -= 16;
    }
    if (bytes > 0) x86::store_pieces(out, half, bytes);
}
template <int Chunks>
inline void run_chunks(const ShuffleVector &v, const uint8_t *in, uint8_t *out, int64_t n, int64_t in_step,
                       int64_t out_step, bool whole) {
    __m256i control[Chunks];
    int64_t offset[Chunks];
    for (int c = 0; c < Chunks; c++) {
        control[c] = _mm256_load_si256(reinterpret_cast<const __m256i *>(v.index[c]));
        offset[c] = v.chunk_offset[c];
    }
    const int bytes = whole ? 32 : v.bytes;
    for (int64_t i = 0; i < n; i++, in += in_step, out += out_step) {
        // PSHUFB picks within each 128-bit lane: the chunk sits in both.
        __m256i r = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(load16(in + offset[0])), control[0]);
        for (int c = 1; c < Chunks; c++) {
            r = _mm256_or_si256(r,
                                _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(load16(in + offset[c])), control[c]));
        }
        store_vector(out, r, bytes);
    }
}
inline void run_lanes(const ShuffleVector &v, const uint8_t *in, uint8_t *out, int64_t n, int64_t in_step,
                      int64_t out_step, bool whole) {
    const __m256i control = _mm256_load_si256(reinterpret_cast<const __m256i *>(v.index[0]));
    const int64_t low = v.chunk_offset[0], high = v.chunks > 1 ? v.chunk_offset[1] : low;
    const int bytes = whole ? 32 : v.bytes;
    if (high == low + 16) {
        for (int64_t i = 0; i < n; i++, in += in_step, out += out_step) {
            const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + low));
            store_vector(out, _mm256_shuffle_epi8(x, control), bytes);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++, in += in_step, out += out_step) {
        const __m256i x = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(in + low)), load16(in + high), 1);
        store_vector(out, _mm256_shuffle_epi8(x, control), bytes);
    }
}
inline void vector_run(const ShuffleVector &v, const uint8_t *in, uint8_t *out, int64_t n, int64_t in_step,
                       int64_t out_step, bool whole) {
    if (v.lane_loads) {
        run_lanes(v, in, out, n, in_step, out_step, whole);
        return;
    }
    with_chunk_count(v.chunks, [&](auto chunks) { run_chunks<chunks()>(v, in, out, n, in_step, out_step, whole); });
}
#include "runtime/block_shuffle_rows.inc"
}  // namespace avx2_loop
SPACEDEPTH_TARGET_END

SPACEDEPTH_TARGET_BEGIN("avx512f,avx512bw,avx512vbmi")
namespace vbmi_loop {
using x86::load16;
// Table q of a vector in chunk mode: chunks 4q..4q+3, each loaded and inserted.
inline __m512i chunk_table(const ShuffleVector &v, const uint8_t *in, int q) {
    const int first = 4 * q, n = std::min(4, v.chunks - first);
    __m512i t = _mm512_castsi128_si512(load16(in + v.chunk_offset[first]));
    if (n > 1) t = _mm512_inserti32x4(t, load16(in + v.chunk_offset[first + 1]), 1);
    if (n > 2) t = _mm512_inserti32x4(t, load16(in + v.chunk_offset[first + 2]), 2);
    if (n > 3) t = _mm512_inserti32x4(t, load16(in + v.chunk_offset[first + 3]), 3);
    return t;
}
inline void vector_run(const ShuffleVector &v, const uint8_t *in, uint8_t *out, int64_t n, int64_t in_step,
                       int64_t out_step, bool whole) {
    const __m512i index = _mm512_load_si512(v.index[0]);
    const __mmask64 mask = v.bytes == 64 ? ~__mmask64{0} : (__mmask64{1} << v.bytes) - 1;
    (void)whole;  // masked stores: whole vectors cost no less
    const int64_t low = v.chunk_offset[0], high = v.chunk_offset[1];
    // The zero-masked single-table permute: GCC 12 warns of the unmasked one's undefined pass-through.
    if (v.span_tables == 1) {
        for (int64_t i = 0; i < n; i++, in += in_step, out += out_step) {
            _mm512_mask_storeu_epi8(out, mask,
                                    _mm512_maskz_permutexvar_epi8(~__mmask64{0}, index, _mm512_loadu_si512(in + low)));
        }
    } else if (v.span_tables == 2) {
        for (int64_t i = 0; i < n; i++, in += in_step, out += out_step) {
            const __m512i r =
                _mm512_permutex2var_epi8(_mm512_loadu_si512(in + low), index, _mm512_loadu_si512(in + high));
            _mm512_mask_storeu_epi8(out, mask, r);
        }
    } else {
        for (int64_t i = 0; i < n; i++, in += in_step, out += out_step) {
            const __m512i r = v.chunks > 4
                                  ? _mm512_permutex2var_epi8(chunk_table(v, in, 0), index, chunk_table(v, in, 1))
                                  : _mm512_maskz_permutexvar_epi8(~__mmask64{0}, index, chunk_table(v, in, 0));
            _mm512_mask_storeu_epi8(out, mask, r);
        }
    }
}
inline void stream_line(uint8_t *dst, const uint8_t *src) {
    _mm512_stream_si512(reinterpret_cast<__m512i *>(dst), _mm512_load_si512(src));
}
inline void stream_fence() { _mm_sfence(); }
#include "runtime/block_shuffle_rows.inc"
}  // namespace vbmi_loop
SPACEDEPTH_TARGET_END

#elif defined(__aarch64__)

namespace neon_loop {
template <int Chunks>
inline void run_chunks(const ShuffleVector &v, const uint8_t *in, uint8_t *out, int64_t n, int64_t in_step,
                       int64_t out_step, bool whole) {
    const uint8x16_t index = vld1q_u8(v.index[0]);
    int64_t offset[4] = {};
    for (int c = 0; c < Chunks; c++) offset[c] = v.chunk_offset[c];
    // Read once: a byte store may alias the program, which the loop would otherwise reload.
    const int bytes = v.bytes;
    const bool full = bytes == 16 || whole;
    for (int64_t i = 0; i < n; i++, in += in_step, out += out_step) {
        uint8x16_t r;
        if constexpr (Chunks == 1) {
            r = vqtbl1q_u8(vld1q_u8(in + offset[0]), index);
        } else if constexpr (Chunks == 2) {
            r = vqtbl2q_u8(uint8x16x2_t{{vld1q_u8(in + offset[0]), vld1q_u8(in + offset[1])}}, index);
        } else if constexpr (Chunks == 3) {
            r = vqtbl3q_u8(uint8x16x3_t{{vld1q_u8(in + offset[0]), vld1q_u8(in + offset[1]), vld1q_u8(in + offset[2])}},
                           index);
        } else {
            r = vqtbl4q_u8(uint8x16x4_t{{vld1q_u8(in + offset[0]), vld1q_u8(in + offset[1]), vld1q_u8(in + offset[2]),
                                         vld1q_u8(in + offset[3])}},
                           index);
        }
        if (full) {
            vst1q_u8(out, r);
        } else {
            uint8_t pieces[16];
            vst1q_u8(pieces, r);
            std::memcpy(out, pieces, static_cast<size_t>(bytes));
        }
    }
}
inline void vector_run(const ShuffleVector &v, const uint8_t *in, uint8_t *out, int64_t n, int64_t in_step,
                       int64_t out_step, bool whole) {
    with_chunk_count(v.chunks, [&](auto chunks) { run_chunks<chunks()>(v, in, out, n, in_step, out_step, whole); });
}
// STNP: a pair of 16-byte registers per instruction.
inline void stream_line(uint8_t *dst, const uint8_t *src) {
    for (int i = 0; i < kLineBytes; i += 32) {
        const uint8x16_t lo = vld1q_u8(src + i), hi = vld1q_u8(src + i + 16);
        __asm__ volatile("stnp %q0, %q1, [%2]" : : "w"(lo), "w"(hi), "r"(dst + i) : "memory");
    }
}
inline void stream_fence() { __asm__ volatile("dmb ishst" : : : "memory"); }
#include "runtime/block_shuffle_rows.inc"
}  // namespace neon_loop

#endif

bool shuffle_streams(const ShuffleProgram &p) {
    return p.isa != ShuffleIsa::Scalar && p.window_out_step == p.window_bytes;
}

int run_shuffle(const ShuffleProgram &program, const uint8_t *in, uint8_t *out, const uint8_t *in_begin,
                const uint8_t *in_end, bool stream, bool parallel, void *user_context) {
    stream = stream && shuffle_streams(program);
    const int64_t rows = shuffle_rows_per_fragment(program) * std::max<int64_t>(1, program.fragments.size());
    return for_outer_ranges(user_context, parallel, rows, [&](int64_t begin, int64_t end) {
        switch (program.isa) {
#if defined(__x86_64__)
        case ShuffleIsa::Vbmi: vbmi_loop::run_rows(program, in, out, in_begin, in_end, begin, end, stream); return;
        case ShuffleIsa::Avx2: avx2_loop::run_rows(program, in, out, in_begin, in_end, begin, end, stream); return;
        case ShuffleIsa::Ssse3: ssse3_loop::run_rows(program, in, out, in_begin, in_end, begin, end, stream); return;
#elif defined(__aarch64__)
        case ShuffleIsa::Neon: neon_loop::run_rows(program, in, out, in_begin, in_end, begin, end, stream); return;
#endif
        default: scalar_loop::run_rows(program, in, out, in_begin, in_end, begin, end, false); return;
        }
    });
}

}  // namespace spacedepth::detail
