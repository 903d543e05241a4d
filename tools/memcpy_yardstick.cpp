#include "tools/memcpy_yardstick.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace yardstick {

namespace {

struct CopyJob {
    uint8_t *dst;
    const uint8_t *src;
    size_t bytes;
    int parts;
};

int copy_part(void *, int part, uint8_t *closure) {
    const CopyJob *job = reinterpret_cast<const CopyJob *>(closure);
    const size_t chunk = (job->bytes / job->parts + 63) / 64 * 64;
    const size_t begin = std::min(job->bytes, chunk * part), end = std::min(job->bytes, begin + chunk);
    std::memcpy(job->dst + begin, job->src + begin, end - begin);
    return 0;
}

}  // namespace

void parallel_memcpy(void *dst, const void *src, size_t bytes, int threads) {
    if (threads <= 1) {
        std::memcpy(dst, src, bytes);
        return;
    }
    CopyJob job{static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src), bytes, threads};
    halide_do_par_for(nullptr, copy_part, 0, threads, reinterpret_cast<uint8_t *>(&job));
}

double memcpy_gbps(void *dst, const void *src, size_t bytes, int threads) {
    using clock = std::chrono::steady_clock;
    // Doubling batches up to 2 ms estimate the rate; one batch of about 20 ms measures it.
    parallel_memcpy(dst, src, bytes, threads);
    auto batch_seconds = [&](int64_t reps) {
        const auto t0 = clock::now();
        for (int64_t i = 0; i < reps; i++) parallel_memcpy(dst, src, bytes, threads);
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
