// The tile family's transpose (tile_transpose.h): the plane walk and tiles, generic over an
// instruction set's block transpose, then one block transpose per set in its target region
// (simd_target.h), chosen from the CPU probe under SPACEDEPTH_MAX_ISA.
#include "runtime/tile_transpose.h"
#include "runtime/isa.h"
#include "runtime/microkernel_slots.h"
#include "runtime/simd_target.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics initialise their undefined vectors from themselves, which
// -Wuninitialized reports at the header's lines once they inline.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace spacedepth::detail {

const char *tile_isa_name(TileIsa isa) {
    static const char *const kNames[] = {"scalar", "AVX2", "AVX-512", "NEON"};
    return kNames[static_cast<int>(isa)];
}

namespace {

TileIsa probe_tile_isa() {
#if defined(__x86_64__)
    if (cpu_has_feature("avx512")) return TileIsa::Avx512;
    if (cpu_has_feature("avx2")) return TileIsa::Avx2;
    return TileIsa::Scalar;
#elif defined(__aarch64__)
    return TileIsa::Neon;
#else
    return TileIsa::Scalar;
#endif
}

// One plane of slots 0 and 1: out[i0 + i1 * o1] = in[i0 * s0 + i1], i0 < e0, i1 < e1.
struct Plane {
    int64_t e0, s0, e1, o1;
};

// ---- The block transposes, one struct per instruction set, each in its target region.

#if defined(__x86_64__)

SPACEDEPTH_TARGET_BEGIN("avx2")
namespace avx2_loop {
struct Isa {
    static constexpr int kLanes = 8;
    static void store(uint32_t *o, __m256 v, bool stream) {
        if (stream && reinterpret_cast<uintptr_t>(o) % 32 == 0) {
            _mm256_stream_ps(reinterpret_cast<float *>(o), v);
        } else {
            _mm256_storeu_ps(reinterpret_cast<float *>(o), v);
        }
    }
    // 8 x 8: unpacks and 4 x 4 shuffles within each 128-bit lane, then the lanes exchanged
    // (24 shuffles per 256 bytes). Float shuffles move bits unchanged.
    template <int L, bool Stream>
    static void block(const uint32_t *in, int64_t s0, uint32_t *out, int64_t o1) {
        static_assert(L == 8, "8 x 8 blocks");
        // Rows k and k + 4 as one vector's two 128-bit lanes (the second half inserted from
        // memory), so that 4 x 4 transposes within the lanes finish the block: 16 shuffles.
        __m256 r[8], t[8];
        for (int k = 0; k < 4; k++) {
            for (int h = 0; h < 2; h++) {
                const float *lo = reinterpret_cast<const float *>(in + k * s0 + 4 * h);
                const float *hi = reinterpret_cast<const float *>(in + (k + 4) * s0 + 4 * h);
                r[4 * h + k] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi), 1);
            }
        }
        for (int g = 0; g < 8; g += 4) {
            t[g] = _mm256_unpacklo_ps(r[g], r[g + 1]);
            t[g + 1] = _mm256_unpackhi_ps(r[g], r[g + 1]);
            t[g + 2] = _mm256_unpacklo_ps(r[g + 2], r[g + 3]);
            t[g + 3] = _mm256_unpackhi_ps(r[g + 2], r[g + 3]);
            store(out + (g + 0) * o1, _mm256_shuffle_ps(t[g], t[g + 2], 0x44), Stream);
            store(out + (g + 1) * o1, _mm256_shuffle_ps(t[g], t[g + 2], 0xEE), Stream);
            store(out + (g + 2) * o1, _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44), Stream);
            store(out + (g + 3) * o1, _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE), Stream);
        }
    }
    template <int N>
    static void stream_row(uint32_t *out, const uint32_t *buf) {
        for (int i = 0; i < N; i += 8) store(out + i, _mm256_load_ps(reinterpret_cast<const float *>(buf + i)), true);
    }
    static void fence() { _mm_sfence(); }
};
#include "runtime/tile_transpose_planes.inc"
}  // namespace avx2_loop
SPACEDEPTH_TARGET_END

SPACEDEPTH_TARGET_BEGIN("avx512f")
namespace avx512_loop {
struct Isa {
    static constexpr int kLanes = 16;
    static void store(uint32_t *o, __m512 v, bool stream) {
        if (stream && reinterpret_cast<uintptr_t>(o) % 64 == 0) {
            _mm512_stream_ps(reinterpret_cast<float *>(o), v);
        } else {
            _mm512_storeu_ps(reinterpret_cast<float *>(o), v);
        }
    }
    // 16 x 16: the 4 x 4 transposes within 128-bit lanes, then two rounds of lane exchanges
    // (64 shuffles per KiB); each output row one 64-byte store. 8 x 8: the AVX2 blocks.
    template <int L, bool Stream>
    static void block(const uint32_t *in, int64_t s0, uint32_t *out, int64_t o1) {
        if constexpr (L == 8) {
            avx2_loop::Isa::block<8, Stream>(in, s0, out, o1);
            return;
        }
        __m512 r[16], t[16], u[16], v[16];
        for (int k = 0; k < 16; k++) r[k] = _mm512_loadu_ps(reinterpret_cast<const float *>(in + k * s0));
        for (int k = 0; k < 16; k += 2) {
            t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
            t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
        }
        for (int g = 0; g < 16; g += 4) {
            u[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
            u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
            u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
            u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
        }
        // u[4q + j], lane l: column 4l + j of rows 4q..4q+3.
        for (int h = 0; h < 16; h += 8) {
            for (int j = 0; j < 4; j++) {
                v[h + j] = _mm512_shuffle_f32x4(u[h + j], u[h + 4 + j], 0x88);      // columns j, 8 + j
                v[h + 4 + j] = _mm512_shuffle_f32x4(u[h + j], u[h + 4 + j], 0xDD);  // columns 4 + j, 12 + j
            }
        }
        for (int j = 0; j < 8; j++) {
            store(out + j * o1, _mm512_shuffle_f32x4(v[j], v[j + 8], 0x88), Stream);
            store(out + (j + 8) * o1, _mm512_shuffle_f32x4(v[j], v[j + 8], 0xDD), Stream);
        }
    }
    template <int N>
    static void stream_row(uint32_t *out, const uint32_t *buf) {
        avx2_loop::Isa::stream_row<N>(out, buf);
    }
    static void fence() { _mm_sfence(); }
};
#include "runtime/tile_transpose_planes.inc"
}  // namespace avx512_loop
SPACEDEPTH_TARGET_END

#elif defined(__aarch64__)

namespace neon_loop {
struct Isa {
    static constexpr int kLanes = 4;
    // 4 x 4: TRN1/TRN2 on 32-bit lanes, then on 64-bit halves.
    template <int L, bool Stream>
    static void block(const uint32_t *in, int64_t s0, uint32_t *out, int64_t o1) {
        static_assert(L == 4 && !Stream,
                      "4 x 4 blocks, which never fill a tile row: streaming goes through the buffer");
        const uint32x4_t a = vld1q_u32(in), b = vld1q_u32(in + s0), c = vld1q_u32(in + 2 * s0),
                         d = vld1q_u32(in + 3 * s0);
        const uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(a, b)), t1 = vreinterpretq_u64_u32(vtrn2q_u32(a, b)),
                         t2 = vreinterpretq_u64_u32(vtrn1q_u32(c, d)), t3 = vreinterpretq_u64_u32(vtrn2q_u32(c, d));
        vst1q_u32(out, vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)));
        vst1q_u32(out + o1, vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)));
        vst1q_u32(out + 2 * o1, vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)));
        vst1q_u32(out + 3 * o1, vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)));
    }
    // STNP of 32-byte pairs where aligned to 16 bytes.
    template <int N>
    static void stream_row(uint32_t *out, const uint32_t *buf) {
        for (int i = 0; i < N; i += 8) {
            const uint32x4_t lo = vld1q_u32(buf + i), hi = vld1q_u32(buf + i + 4);
            if (reinterpret_cast<uintptr_t>(out + i) % 16 == 0) {
                __asm__ volatile("stnp %q0, %q1, [%2]" : : "w"(lo), "w"(hi), "r"(out + i) : "memory");
            } else {
                vst1q_u32(out + i, lo);
                vst1q_u32(out + i + 4, hi);
            }
        }
    }
    static void fence() { __asm__ volatile("dmb ishst" : : : "memory"); }
};
#include "runtime/tile_transpose_planes.inc"
}  // namespace neon_loop

#endif

// The planes at outer iterations [begin, end) of slots 2-5 on `isa`, or any view element by
// element where the tiles do not apply.
void run_range(TileIsa isa, bool stream, bool tiles, const uint32_t *in, uint32_t *out, const Slots &s, int64_t begin,
               int64_t end) {
    if (!tiles) return copy_slots(in, out, s, begin * s.extent[1], end * s.extent[1]);
    switch (isa) {
#if defined(__x86_64__)
    case TileIsa::Avx512: return avx512_loop::planes(in, out, s, begin, end, stream);
    case TileIsa::Avx2: return avx2_loop::planes(in, out, s, begin, end, stream);
#elif defined(__aarch64__)
    case TileIsa::Neon: return neon_loop::planes(in, out, s, begin, end, stream);
#endif
    default: return copy_slots(in, out, s, begin * s.extent[1], end * s.extent[1]);
    }
}

}  // namespace

TileIsa best_tile_isa() {
    static const TileIsa isa = probe_tile_isa();
    return isa;
}

int run_tile_transpose(TileIsa isa, bool stream, void const *user_context, const halide_buffer_t *in, bool parallel,
                       const halide_buffer_t *out) {
    Slots s;
    if (!slots_of(in, out, &s)) return 0;
    // Slot 0 dense in the output, slot 1 in the input, both at least one 8-element tile.
    const bool tiles = s.out_stride[0] == 1 && s.in_stride[1] == 1 && s.extent[0] >= 8 && s.extent[1] >= 8;
    const auto *src = reinterpret_cast<const uint32_t *>(in->host);
    auto *dst = reinterpret_cast<uint32_t *>(out->host);
    stream = stream && isa != TileIsa::Scalar;
    return for_outer_ranges(user_context, parallel, OuterSlots(s, {2, 3, 4, 5}).total, [&](int64_t begin, int64_t end) {
        run_range(isa, stream, tiles, src, dst, s, begin, end);
    });
}

extern "C" int spacedepth_tile_transpose_u32(void const *user_context, halide_buffer_t *in, bool parallel,
                                             halide_buffer_t *out) {
    return run_tile_transpose(best_tile_isa(), false, user_context, in, parallel, out);
}

extern "C" int spacedepth_tile_transpose_u32_stream(void const *user_context, halide_buffer_t *in, bool parallel,
                                                    halide_buffer_t *out) {
    return run_tile_transpose(best_tile_isa(), true, user_context, in, parallel, out);
}

}  // namespace spacedepth::detail
