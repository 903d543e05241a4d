// memcpy as the yardstick of every benchmark figure: on one thread, or split across the same
// (process-wide, persistent) Halide thread pool the kernels use, so a 2-thread figure is set
// against a 2-thread copy rather than against thread start-up. Beside it the streaming-store
// copy, the limit past the last-level cache: it skips the read-for-ownership of every line that
// memcpy's stores pay (2-core AMD EPYC, 64 MiB: 1.31-1.48x memcpy).
#pragma once

#include <cstddef>

namespace yardstick {

// Copies bytes with `threads` parts on Halide's thread pool (threads <= 1: plain memcpy).
void parallel_memcpy(void *dst, const void *src, size_t bytes, int threads);

// The same split, each part copied with vector loads and non-temporal stores (AVX2 where the CPU
// has it, SSE2 otherwise; plain memcpy off x86), then SFENCE.
void parallel_stream_copy(void *dst, const void *src, size_t bytes, int threads);

enum class Copy { Memcpy, Stream };

// GB/s (bytes read + written) of copying bytes on `threads` threads, timed over one batch of
// about 20 ms.
double memcpy_gbps(void *dst, const void *src, size_t bytes, int threads);
double copy_gbps(Copy copy, void *dst, const void *src, size_t bytes, int threads);

// The streaming copy with a permutation's row pattern, the limit for a kernel that reads or
// writes several short rows at once: the bytes move in groups of `rows` runs of `run_bytes`, the
// runs of a group read (RowSide::Read) or written (RowSide::Write) together, 64 bytes from each
// in turn, the other side in order. SpaceToDepth NHWC reads bh input rows per output row;
// DepthToSpace NHWC writes bh output rows per input row. Past the cache each run is a stream
// the hardware prefetcher must pick up again, which a one-stream copy never pays. 1 thread,
// AVX2 loads and non-temporal stores; on CPUs without AVX2 row_stream_copy moves nothing and
// row_stream_copy_gbps is 0 (the benchmark then leaves the figure out).
enum class RowSide { Read, Write };
void row_stream_copy(void *dst, const void *src, size_t bytes, RowSide side, int rows, size_t run_bytes);
double row_stream_copy_gbps(void *dst, const void *src, size_t bytes, RowSide side, int rows, size_t run_bytes);

}  // namespace yardstick
