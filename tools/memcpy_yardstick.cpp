#include "tools/memcpy_yardstick.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace yardstick {

namespace {

using CopyFn = void (*)(uint8_t *, const uint8_t *, size_t);

#if defined(__x86_64__)
// The middle of a streaming copy: from `i` (32-byte-aligned at dst) while 4 whole vectors fit;
// returns where it stopped.
using StreamLoop = size_t (*)(uint8_t *dst, const uint8_t *src, size_t i, size_t bytes);

__attribute__((target("avx2"))) size_t stream_loop_avx2(uint8_t *dst, const uint8_t *src, size_t i, size_t bytes) {
    for (; i + 128 <= bytes; i += 128) {
        for (int v = 0; v < 4; v++) {
            const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i + 32 * v));
            _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i + 32 * v), x);
        }
    }
    return i;
}

size_t stream_loop_sse2(uint8_t *dst, const uint8_t *src, size_t i, size_t bytes) {
    for (; i + 64 <= bytes; i += 64) {
        for (int v = 0; v < 4; v++) {
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 16 * v));
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16 * v), x);
        }
    }
    return i;
}

// Plain stores up to the first 32-byte-aligned destination byte and after the loop's last
// vectors, streaming stores between them, then SFENCE.
void stream_copy(uint8_t *dst, const uint8_t *src, size_t bytes) {
    static const StreamLoop loop = __builtin_cpu_supports("avx2") ? stream_loop_avx2 : stream_loop_sse2;
    const size_t head = std::min(bytes, (32 - reinterpret_cast<uintptr_t>(dst) % 32) % 32);
    std::memcpy(dst, src, head);
    const size_t i = loop(dst, src, head, bytes);
    std::memcpy(dst + i, src + i, bytes - i);
    _mm_sfence();
}
#endif

void plain_copy(uint8_t *dst, const uint8_t *src, size_t bytes) { std::memcpy(dst, src, bytes); }

#if defined(__x86_64__)
// 64 bytes from src to dst with non-temporal stores wherever dst's alignment allows, as the
// kernels' twins store (generators/stream_stores.py): two 32-byte stores on 32 bytes, four
// 16-byte ones on 16, an 8-byte MOVNTI, three 16-byte stores and a MOVNTI on 8; plain off words.
__attribute__((target("avx2"), always_inline)) inline void stream_64(uint8_t *dst, const uint8_t *src) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(dst);
    if (at % 32 == 0) {
        for (int i = 0; i < 64; i += 32) {
            _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i)));
        }
    } else if (at % 8 == 0) {
        const int head = at % 16 == 0 ? 0 : 8;
        if (head) {
            long long word;
            std::memcpy(&word, src, 8);
            _mm_stream_si64(reinterpret_cast<long long *>(dst), word);
        }
        int i = head;
        for (; i + 16 <= 64; i += 16) {
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i),
                             _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i)));
        }
        if (i < 64) {
            long long word;
            std::memcpy(&word, src + i, 8);
            _mm_stream_si64(reinterpret_cast<long long *>(dst + i), word);
        }
    } else {
        std::memcpy(dst, src, 64);
    }
}

// One group of row_stream_copy at `dst` and `src`: `rows` runs, 64 bytes of each in turn, read
// from the runs into the bytes in order (read_rows) or from the bytes in order into the runs; the
// runs' last bytes short of 64 with memcpy.
__attribute__((target("avx2"))) void row_group_avx2(uint8_t *dst, const uint8_t *src, bool read_rows, int rows,
                                                    size_t run) {
    const size_t whole = run / 64 * 64;
    size_t in_order = 0;
    for (size_t at = 0; at < whole; at += 64) {
        for (int r = 0; r < rows; r++, in_order += 64) {
            const size_t at_run = r * run + at;
            stream_64(dst + (read_rows ? in_order : at_run), src + (read_rows ? at_run : in_order));
        }
    }
    for (int r = 0; r < rows; r++, in_order += run - whole) {
        const size_t at_run = r * run + whole;
        std::memcpy(dst + (read_rows ? in_order : at_run), src + (read_rows ? at_run : in_order), run - whole);
    }
}
#endif

CopyFn stream_copy_fn() {
#if defined(__x86_64__)
    return stream_copy;
#else
    return plain_copy;
#endif
}

struct CopyJob {
    uint8_t *dst;
    const uint8_t *src;
    size_t bytes;
    int parts;
    CopyFn fn;
};

int copy_part(void *, int part, uint8_t *closure) {
    const CopyJob *job = reinterpret_cast<const CopyJob *>(closure);
    const size_t chunk = (job->bytes / job->parts + 63) / 64 * 64;
    const size_t begin = std::min(job->bytes, chunk * part), end = std::min(job->bytes, begin + chunk);
    job->fn(job->dst + begin, job->src + begin, end - begin);
    return 0;
}

void parallel_copy(CopyFn fn, void *dst, const void *src, size_t bytes, int threads) {
    if (threads <= 1) {
        fn(static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src), bytes);
        return;
    }
    CopyJob job{static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src), bytes, threads, fn};
    halide_do_par_for(nullptr, copy_part, 0, threads, reinterpret_cast<uint8_t *>(&job));
}

}  // namespace

void parallel_memcpy(void *dst, const void *src, size_t bytes, int threads) {
    parallel_copy(plain_copy, dst, src, bytes, threads);
}

void parallel_stream_copy(void *dst, const void *src, size_t bytes, int threads) {
    parallel_copy(stream_copy_fn(), dst, src, bytes, threads);
}

void row_stream_copy(void *dst, const void *src, size_t bytes, RowSide side, int rows, size_t run_bytes) {
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("avx2")) return;
    auto *out = static_cast<uint8_t *>(dst);
    const auto *in = static_cast<const uint8_t *>(src);
    const size_t group = static_cast<size_t>(rows) * run_bytes;
    size_t done = 0;
    for (; group > 0 && done + group <= bytes; done += group) {
        row_group_avx2(out + done, in + done, side == RowSide::Read, rows, run_bytes);
    }
    stream_copy(out + done, in + done, bytes - done);  // the last part short of a group; SFENCE
#else
    (void)dst, (void)src, (void)bytes, (void)side, (void)rows, (void)run_bytes;
#endif
}

namespace {

// GB/s (bytes read + written) of `copy`, timed over one batch of about 20 ms.
template <typename CopyOnce>
double batch_gbps(size_t bytes, const CopyOnce &copy) {
    using clock = std::chrono::steady_clock;
    // Doubling batches up to 2 ms estimate the rate; one batch of about 20 ms measures it.
    copy();
    auto batch_seconds = [&](int64_t reps) {
        const auto t0 = clock::now();
        for (int64_t i = 0; i < reps; i++) copy();
        return std::chrono::duration<double>(clock::now() - t0).count();
    };
    int64_t reps = 1;
    double seconds = batch_seconds(reps);
    while (seconds < 0.002) seconds = batch_seconds(reps *= 2);
    if (seconds < 0.02) {
        reps = static_cast<int64_t>(std::ceil(reps * 0.02 / seconds));
        seconds = batch_seconds(reps);
    }
    return 2.0 * static_cast<double>(bytes) * static_cast<double>(reps) / seconds / 1e9;
}

}  // namespace

double memcpy_gbps(void *dst, const void *src, size_t bytes, int threads) {
    return copy_gbps(Copy::Memcpy, dst, src, bytes, threads);
}

double copy_gbps(Copy copy, void *dst, const void *src, size_t bytes, int threads) {
    const CopyFn fn = copy == Copy::Stream ? stream_copy_fn() : plain_copy;
    return batch_gbps(bytes, [&] { parallel_copy(fn, dst, src, bytes, threads); });
}

double row_stream_copy_gbps(void *dst, const void *src, size_t bytes, RowSide side, int rows, size_t run_bytes) {
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("avx2")) return 0;
    return batch_gbps(bytes, [&] { row_stream_copy(dst, src, bytes, side, rows, run_bytes); });
#else
    (void)dst, (void)src, (void)bytes, (void)side, (void)rows, (void)run_bytes;
    return 0;
#endif
}

}  // namespace yardstick
