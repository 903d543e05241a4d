// The regroup family's kernel (vect_c_regroup.h): the slot patterns, the VBMI loops in their
// target region (simd_target.h), and the plain copy for every other view.
#include "runtime/vect_c_regroup.h"
#include "runtime/isa.h"
#include "runtime/microkernel_slots.h"
#include "runtime/simd_target.h"

#include <cstring>

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics initialise their undefined vectors from themselves, which
// -Wuninitialized reports at the header's lines once they inline.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace spacedepth::detail {

const char *regroup_isa_name(RegroupIsa isa) {
    return isa == RegroupIsa::Vbmi ? "AVX-512 VBMI" : isa == RegroupIsa::Avx2 ? "AVX2" : "scalar";
}

RegroupIsa best_regroup_isa() {
#if defined(__x86_64__)
    // avx512_cannonlake is AVX-512 BW (the masked byte loads and stores) with VBMI (VPERMT2B).
    static const RegroupIsa isa = cpu_has_feature("avx512_cannonlake") ? RegroupIsa::Vbmi
                                  : cpu_has_feature("avx2")            ? RegroupIsa::Avx2
                                                                       : RegroupIsa::Scalar;
    return isa;
#else
    return RegroupIsa::Scalar;
#endif
}

namespace {

// The kind of a view and its fourth pattern slot (the lanes of SpaceToDepth, the block rows of
// DepthToSpace); the remaining two slots are the outer loop.
struct Pattern {
    RegroupKind kind = RegroupKind::None;
    int slot = -1;
};

Pattern find_pattern(const int64_t *e, const int64_t *is, const int64_t *os) {
    for (int d = 0; d < kKernelRank; d++) {
        if (e[d] > 1 && (is[d] < 0 || os[d] <= 0)) return {};  // unit slots pad
    }
    auto slot_with = [&](int64_t extent, int64_t in_stride) {
        for (int d = 3; d < kKernelRank; d++) {
            if (e[d] == extent && is[d] == in_stride) return d;
        }
        return -1;
    };
    if (e[0] == 2 && is[0] == 4 && os[0] == 1 && e[1] == 2 && os[1] == 2 && is[2] == 8 && os[2] == 4) {
        if (const int lanes = slot_with(4, 1); lanes >= 0) return {RegroupKind::SpaceToDepth, lanes};
    }
    if (e[0] == 4 && os[0] == 1 && e[1] == 2 && is[1] == 1 && os[1] == 4 && is[2] == 4 && os[2] == 8) {
        if (const int rows = slot_with(2, 2); rows >= 0) return {RegroupKind::DepthToSpace, rows};
    }
    return {};
}

// The two slots of 3-5 that are not the pattern's fourth.
[[maybe_unused]] OuterSlots outer_of(const Slots &s, int pattern_slot) {
    int rest[2], n = 0;
    for (int d = 3; d < kKernelRank; d++) {
        if (d != pattern_slot) rest[n++] = d;
    }
    return OuterSlots(s, {rest[0], rest[1]});
}

// One output pixel of every lane, for the vector loops' tails: SpaceToDepth from two input rows
// into four lane planes, DepthToSpace back.
inline void space_to_depth_pixel(const uint8_t *row0, int64_t row_step, uint8_t *out, int64_t plane_step, int64_t w) {
    for (int l = 0; l < 4; l++) {
        for (int q = 0; q < 4; q++)
            out[l * plane_step + 4 * w + q] = row0[(q / 2) * row_step + 8 * w + 4 * (q % 2) + l];
    }
}
inline void depth_to_space_pixel(const uint8_t *in, int64_t plane_step, uint8_t *row0, int64_t row_step, int64_t w) {
    for (int l = 0; l < 4; l++) {
        for (int q = 0; q < 4; q++) row0[(q / 2) * row_step + 8 * w + 4 * (q % 2) + l] = in[l * plane_step + 4 * w + q];
    }
}

// The outer iterations [begin, end) of a pattern's view, each a pair of rows of one channel group
// through an instruction set's row functions; streaming stores fenced before it returns. Each
// instruction set's run_rows flattens it (for_each_outer and the row functions inline into one
// loop compiled for that set): called through pointers, the 8-pixel row pairs of D2S NCHW_VECT_C
// CRD i8 C16 at 4 KiB spent about as long in the call and the table loads as in their 16 vector
// instructions (AMD EPYC VM, AVX-512, 1 thread: 0.10-0.11 -> 0.13-0.14 of memcpy, 16 KiB 0.31-0.33
// -> 0.44-0.45; AVX2 path 0.13-0.17 -> 0.17-0.22 and 0.28-0.29 -> 0.34-0.36).
template <class SpaceToDepthRows, class DepthToSpaceRows>
void walk_rows(Pattern pattern, const uint8_t *in, uint8_t *out, const Slots &s, int64_t begin, int64_t end,
               bool stream, const SpaceToDepthRows &space_to_depth_rows, const DepthToSpaceRows &depth_to_space_rows) {
    for_each_outer(s, outer_of(s, pattern.slot), begin, end, [&](int64_t in_off, int64_t out_off) {
        if (pattern.kind == RegroupKind::SpaceToDepth) {
            space_to_depth_rows(in + in_off, s.in_stride[1], out + out_off, s.out_stride[pattern.slot], s.extent[2],
                                stream);
        } else {
            depth_to_space_rows(in + in_off, s.in_stride[0], out + out_off, s.out_stride[pattern.slot], s.extent[2],
                                stream);
        }
    });
#if defined(__x86_64__)
    if (stream) _mm_sfence();  // each worker fences its own non-temporal stores
#endif
}

#if defined(__x86_64__)

SPACEDEPTH_TARGET_BEGIN("avx2")
namespace avx2_loop {

// Within each 128-bit lane, 4 pixels of 4 lanes become 4 lanes of 4 pixels (and back: it is its
// own inverse).
inline __m256i transpose_4x4(__m256i v) {
    const __m256i t = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9, 13,
                                       2, 6, 10, 14, 3, 7, 11, 15);
    return _mm256_shuffle_epi8(v, t);
}
inline __m256i load(const uint8_t *p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)); }
inline void store(uint8_t *p, __m256i v, bool stream) {
    if (stream && reinterpret_cast<uintptr_t>(p) % 32 == 0) {
        _mm256_stream_si256(reinterpret_cast<__m256i *>(p), v);
    } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), v);
    }
}

// 8 output pixels of every lane a step: each row's 16 pixels as lanes within 128-bit halves
// (PSHUFB), the two rows' 2-byte pairs side by side (PUNPCKLWD/HWD), then the halves in order
// (VPERMQ, VPERM2I128): 16 shuffles per 128 bytes.
inline void space_to_depth_rows(const uint8_t *row0, int64_t row_step, uint8_t *out, int64_t plane_step, int64_t width,
                                bool stream) {
    const uint8_t *row1 = row0 + row_step;
    // Steps of 8; a tail of a row at least 8 long as a last step that overlaps the one before
    // (it stores the same values again), a shorter row a pixel at a time.
    for (int64_t step = 0; step < width && width >= 8; step += 8) {
        const int64_t w = std::min(step, width - 8);
        const __m256i r0a = transpose_4x4(load(row0 + 8 * w)), r0b = transpose_4x4(load(row0 + 8 * w + 32));
        const __m256i r1a = transpose_4x4(load(row1 + 8 * w)), r1b = transpose_4x4(load(row1 + 8 * w + 32));
        const __m256i a01 = _mm256_permute4x64_epi64(_mm256_unpacklo_epi16(r0a, r1a), 0xD8);  // lanes 0, 1 of w 0-3
        const __m256i b01 = _mm256_permute4x64_epi64(_mm256_unpacklo_epi16(r0b, r1b), 0xD8);  // ... of w 4-7
        const __m256i a23 = _mm256_permute4x64_epi64(_mm256_unpackhi_epi16(r0a, r1a), 0xD8);
        const __m256i b23 = _mm256_permute4x64_epi64(_mm256_unpackhi_epi16(r0b, r1b), 0xD8);
        uint8_t *o = out + 4 * w;
        store(o, _mm256_permute2x128_si256(a01, b01, 0x20), stream);
        store(o + plane_step, _mm256_permute2x128_si256(a01, b01, 0x31), stream);
        store(o + 2 * plane_step, _mm256_permute2x128_si256(a23, b23, 0x20), stream);
        store(o + 3 * plane_step, _mm256_permute2x128_si256(a23, b23, 0x31), stream);
    }
    for (int64_t w = 0; w < width && width < 8; w++) space_to_depth_pixel(row0, row_step, out, plane_step, w);
}

// Half of the inverse step: output pixels w 0-3 (Half 0x20: the planes' low 128-bit halves) or
// 4-7 (0x31) of both rows. The lane selector is an immediate, hence a template.
template <int Half>
inline void depth_to_space_half(__m256i p0, __m256i p1, __m256i p2, __m256i p3, uint8_t *row0, uint8_t *row1,
                                bool stream) {
    const __m256i rows_apart = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9,
                                                12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    const __m256i a01 =
        _mm256_shuffle_epi8(_mm256_permute4x64_epi64(_mm256_permute2x128_si256(p0, p1, Half), 0xD8), rows_apart);
    const __m256i a23 =
        _mm256_shuffle_epi8(_mm256_permute4x64_epi64(_mm256_permute2x128_si256(p2, p3, Half), 0xD8), rows_apart);
    store(row0, transpose_4x4(_mm256_unpacklo_epi64(a01, a23)), stream);
    store(row1, transpose_4x4(_mm256_unpackhi_epi64(a01, a23)), stream);
}

// The inverse, step by step backwards.
inline void depth_to_space_rows(const uint8_t *in, int64_t plane_step, uint8_t *row0, int64_t row_step, int64_t width,
                                bool stream) {
    uint8_t *row1 = row0 + row_step;
    for (int64_t step = 0; step < width && width >= 8; step += 8) {
        const int64_t w = std::min(step, width - 8);
        const uint8_t *p = in + 4 * w;
        const __m256i p0 = load(p), p1 = load(p + plane_step), p2 = load(p + 2 * plane_step),
                      p3 = load(p + 3 * plane_step);
        depth_to_space_half<0x20>(p0, p1, p2, p3, row0 + 8 * w, row1 + 8 * w, stream);
        depth_to_space_half<0x31>(p0, p1, p2, p3, row0 + 8 * w + 32, row1 + 8 * w + 32, stream);
    }
    for (int64_t w = 0; w < width && width < 8; w++) depth_to_space_pixel(in, plane_step, row0, row_step, w);
}

__attribute__((flatten)) void run_rows(Pattern pattern, const uint8_t *in, uint8_t *out, const Slots &s, int64_t begin,
                                       int64_t end, bool stream) {
    walk_rows(pattern, in, out, s, begin, end, stream, space_to_depth_rows, depth_to_space_rows);
}

}  // namespace avx2_loop
SPACEDEPTH_TARGET_END

SPACEDEPTH_TARGET_BEGIN("avx512f,avx512bw,avx512vbmi")
namespace vbmi_loop {

// VPERMT2B indexes (bit 6 picks the second table), built once.
struct Tables {
    alignas(64) uint8_t s2d_lanes[2][64];  // a row's 32 pixels: lanes 0-1, 2-3, each as 32 bytes
    alignas(64) uint8_t s2d_out[2][64];    // lane 0 or 1 of those: 16 output pixels of 2 x 2 bytes
    alignas(64) uint8_t d2s_rows[2][64];   // block row 0 or 1 of two planes: 32 pixels each
    alignas(64) uint8_t d2s_out[2][64];    // pixels 0-15 or 16-31 of a row, 4 lanes each
    Tables() {
        for (int j = 0; j < 64; j++) {
            const int pixel = j % 32, lane = j / 32, w = j / 4, q = j % 4;
            for (int k = 0; k < 2; k++) {
                s2d_lanes[k][j] = static_cast<uint8_t>(pixel * 4 + 2 * k + lane);
                s2d_out[k][j] = static_cast<uint8_t>((q / 2) * 64 + k * 32 + 2 * w + q % 2);
                d2s_rows[k][j] = static_cast<uint8_t>(lane * 64 + 4 * (pixel / 2) + 2 * k + pixel % 2);
                d2s_out[k][j] = static_cast<uint8_t>((q / 2) * 64 + (q % 2) * 32 + 16 * k + w);
            }
        }
    }
};

inline __m512i table(const uint8_t *t) { return _mm512_load_si512(t); }
inline __mmask64 first_bytes(int64_t n) { return n >= 64 ? ~__mmask64{0} : n <= 0 ? 0 : (__mmask64{1} << n) - 1; }
inline __m512i load(const uint8_t *p, int64_t n) { return _mm512_maskz_loadu_epi8(first_bytes(n), p); }
inline void store(uint8_t *p, __m512i v, int64_t n, bool stream) {
    if (n >= 64) {
        if (stream && reinterpret_cast<uintptr_t>(p) % 64 == 0) {
            _mm512_stream_si512(reinterpret_cast<__m512i *>(p), v);
        } else {
            _mm512_storeu_si512(p, v);
        }
    } else if (n > 0) {
        // A whole 32-byte half plainly: a masked store took about half the samples of the row
        // step (S2D NCHW_VECT_C CRD i8 C16 at 4 KiB, 32-byte plane rows: 0.09-0.10 -> 0.14-0.18
        // of memcpy; AMD EPYC VM, Zen 4).
        int64_t done = 0;
        if (n >= 32) {
            std::memcpy(p, &v, 32);  // the low half (GCC 12's cast intrinsic warns of undefined lanes)
            done = 32;
        }
        if (n > done) _mm512_mask_storeu_epi8(p, first_bytes(n) & ~first_bytes(done), v);
    }
}
inline __m512i perm(__m512i a, __m512i index, __m512i b) { return _mm512_permutex2var_epi8(a, index, b); }

// The tables in registers, loaded once a call: the stores are bytes, which may alias them for the
// compiler.
struct Indexes {
    __m512i s2d_lanes[2], s2d_out[2], d2s_rows[2], d2s_out[2];
    explicit Indexes(const Tables &t) {
        for (int k = 0; k < 2; k++) {
            s2d_lanes[k] = table(t.s2d_lanes[k]);
            s2d_out[k] = table(t.s2d_out[k]);
            d2s_rows[k] = table(t.d2s_rows[k]);
            d2s_out[k] = table(t.d2s_out[k]);
        }
    }
};

// Two input rows (row1 = row0 + row_step) of `width` output pixels' worth into four lane planes
// (out + l * plane_step), 16 output pixels at a time.
inline void space_to_depth_rows(const Indexes &x, const uint8_t *row0, int64_t row_step, uint8_t *out,
                                int64_t plane_step, int64_t width, bool stream) {
    const __m512i lanes01 = x.s2d_lanes[0], lanes23 = x.s2d_lanes[1], out0 = x.s2d_out[0], out1 = x.s2d_out[1];
    const uint8_t *row1 = row0 + row_step;
    for (int64_t w = 0; w < width; w += 16) {
        const int64_t n = std::min<int64_t>(16, width - w), in_bytes = 8 * n;
        // Rows of at most 8 pixels need no second load (an empty masked load cost as much as a
        // full one).
        const bool two = in_bytes > 64;
        const __m512i r0a = load(row0 + 8 * w, in_bytes), r1a = load(row1 + 8 * w, in_bytes);
        const __m512i r0b = two ? load(row0 + 8 * w + 64, in_bytes - 64) : _mm512_setzero_si512();
        const __m512i r1b = two ? load(row1 + 8 * w + 64, in_bytes - 64) : _mm512_setzero_si512();
        const __m512i t01 = perm(r0a, lanes01, r0b), t23 = perm(r0a, lanes23, r0b);
        const __m512i u01 = perm(r1a, lanes01, r1b), u23 = perm(r1a, lanes23, r1b);
        uint8_t *o = out + 4 * w;
        store(o, perm(t01, out0, u01), 4 * n, stream);
        store(o + plane_step, perm(t01, out1, u01), 4 * n, stream);
        store(o + 2 * plane_step, perm(t23, out0, u23), 4 * n, stream);
        store(o + 3 * plane_step, perm(t23, out1, u23), 4 * n, stream);
    }
}

// Four lane planes (in + l * plane_step) into two output rows (row1 = row0 + row_step).
inline void depth_to_space_rows(const Indexes &x, const uint8_t *in, int64_t plane_step, uint8_t *row0,
                                int64_t row_step, int64_t width, bool stream) {
    const __m512i rows0 = x.d2s_rows[0], rows1 = x.d2s_rows[1], out0 = x.d2s_out[0], out1 = x.d2s_out[1];
    uint8_t *row1 = row0 + row_step;
    for (int64_t w = 0; w < width; w += 16) {
        const int64_t n = std::min<int64_t>(16, width - w), out_bytes = 8 * n;
        const uint8_t *p = in + 4 * w;
        const __m512i p0 = load(p, 4 * n), p1 = load(p + plane_step, 4 * n), p2 = load(p + 2 * plane_step, 4 * n),
                      p3 = load(p + 3 * plane_step, 4 * n);
        const __m512i t01 = perm(p0, rows0, p1), t23 = perm(p2, rows0, p3);
        const __m512i u01 = perm(p0, rows1, p1), u23 = perm(p2, rows1, p3);
        store(row0 + 8 * w, perm(t01, out0, t23), out_bytes, stream);
        store(row0 + 8 * w + 64, perm(t01, out1, t23), out_bytes - 64, stream);
        store(row1 + 8 * w, perm(u01, out0, u23), out_bytes, stream);
        store(row1 + 8 * w + 64, perm(u01, out1, u23), out_bytes - 64, stream);
    }
}

__attribute__((flatten)) void run_rows(Pattern pattern, const uint8_t *in, uint8_t *out, const Slots &s, int64_t begin,
                                       int64_t end, bool stream) {
    static const Tables tables;
    const Indexes x(tables);
    walk_rows(
        pattern, in, out, s, begin, end, stream,
        [&](const uint8_t *row0, int64_t row_step, uint8_t *o, int64_t plane_step, int64_t width, bool st) {
            space_to_depth_rows(x, row0, row_step, o, plane_step, width, st);
        },
        [&](const uint8_t *i, int64_t plane_step, uint8_t *row0, int64_t row_step, int64_t width, bool st) {
            depth_to_space_rows(x, i, plane_step, row0, row_step, width, st);
        });
}

}  // namespace vbmi_loop
SPACEDEPTH_TARGET_END

#endif

}  // namespace

namespace {
Slots slots_of(const DimList &dims) {
    Slots s{};
    for (int d = 0; d < kKernelRank; d++) {
        const bool present = d < static_cast<int>(dims.size());
        s.extent[d] = present ? dims[d].extent : 1;
        s.in_stride[d] = present ? dims[d].in_stride : 0;
        s.out_stride[d] = present ? dims[d].out_stride : 0;
    }
    return s;
}
}  // namespace

RegroupKind regroup_kind(const DimList &slots) {
    const Slots s = slots_of(slots);
    return find_pattern(s.extent, s.in_stride, s.out_stride).kind;
}

bool regroup_writes_whole_lines(const DimList &slots) {
    constexpr int64_t kLineBytes = 64;
    const Slots s = slots_of(slots);
    const Pattern pattern = find_pattern(s.extent, s.in_stride, s.out_stride);
    if (pattern.kind == RegroupKind::None) return false;
    const int64_t row_bytes = (pattern.kind == RegroupKind::SpaceToDepth ? 4 : 8) * s.extent[2];
    bool whole = row_bytes % kLineBytes == 0;
    for (int d = 3; d < kKernelRank; d++) whole &= s.extent[d] == 1 || s.out_stride[d] % kLineBytes == 0;
    return whole;
}

int run_vect_c_regroup(RegroupIsa isa, bool stream, void const *user_context, const halide_buffer_t *in, bool parallel,
                       const halide_buffer_t *out) {
    Slots s;
    if (!slots_of(in, out, &s)) return 0;
    const Pattern pattern = find_pattern(s.extent, s.in_stride, s.out_stride);
    const uint8_t *src = in->host;
    uint8_t *dst = out->host;
#if defined(__x86_64__)
    if (isa != RegroupIsa::Scalar && pattern.kind != RegroupKind::None) {
        return for_outer_ranges(user_context, parallel, outer_of(s, pattern.slot).total,
                                [&](int64_t begin, int64_t end) {
                                    if (isa == RegroupIsa::Vbmi) {
                                        vbmi_loop::run_rows(pattern, src, dst, s, begin, end, stream);
                                    } else {
                                        avx2_loop::run_rows(pattern, src, dst, s, begin, end, stream);
                                    }
                                });
    }
#else
    (void)isa, (void)stream, (void)pattern;  // no vector loop here
#endif
    return for_outer_ranges(user_context, parallel, OuterSlots(s, {1, 2, 3, 4, 5}).total,
                            [&](int64_t begin, int64_t end) { copy_slots(src, dst, s, begin, end); });
}

extern "C" int spacedepth_vect_c_regroup_u8(void const *user_context, halide_buffer_t *in, bool parallel,
                                            halide_buffer_t *out) {
    return run_vect_c_regroup(best_regroup_isa(), false, user_context, in, parallel, out);
}

extern "C" int spacedepth_vect_c_regroup_u8_stream(void const *user_context, halide_buffer_t *in, bool parallel,
                                                   halide_buffer_t *out) {
    return run_vect_c_regroup(best_regroup_isa(), true, user_context, in, parallel, out);
}

}  // namespace spacedepth::detail
