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

double memcpy_gbps(void *dst, const void *src, size_t bytes, int threads) {
    return copy_gbps(Copy::Memcpy, dst, src, bytes, threads);
}

double copy_gbps(Copy copy, void *dst, const void *src, size_t bytes, int threads) {
    using clock = std::chrono::steady_clock;
    const CopyFn fn = copy == Copy::Stream ? stream_copy_fn() : plain_copy;
    // Doubling batches up to 2 ms estimate the rate; one batch of about 20 ms measures it.
    parallel_copy(fn, dst, src, bytes, threads);
    auto batch_seconds = [&](int64_t reps) {
        const auto t0 = clock::now();
        for (int64_t i = 0; i < reps; i++) parallel_copy(fn, dst, src, bytes, threads);
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

}  // namespace yardstick
