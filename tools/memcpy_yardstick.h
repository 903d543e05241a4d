// memcpy as the yardstick of every benchmark figure: on one thread, or split across the same
// (process-wide, persistent) Halide thread pool the kernels use, so a 2-thread figure is set
// against a 2-thread copy rather than against thread start-up.
#pragma once

#include <cstddef>

namespace yardstick {

// Copies bytes with `threads` parts on Halide's thread pool (threads <= 1: plain memcpy).
void parallel_memcpy(void *dst, const void *src, size_t bytes, int threads);

// GB/s (bytes read + written) of copying bytes on `threads` threads, timed over one batch of
// about 20 ms.
double memcpy_gbps(void *dst, const void *src, size_t bytes, int threads);

}  // namespace yardstick
