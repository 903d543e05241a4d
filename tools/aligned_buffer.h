// Page-aligned byte buffers for timing. glibc 2.36's memcpy (rep movsb) on this Zen 3 runs 20x
// slower when (dst - src) % 4096 == 16, which is exactly what two back-to-back std::vector
// allocations give (measured: 3.8 vs 81 GB/s at 128 KiB). Benchmarks put every buffer on a page
// boundary so memcpy, the yardstick, is not handicapped by where malloc happened to put it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

struct AlignedBuffer {
    explicit AlignedBuffer(size_t bytes)
        : size(bytes), ptr(static_cast<uint8_t *>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096 + 4096))) {
        if (!ptr) throw std::bad_alloc();
    }
    uint8_t *data() const { return ptr.get(); }
    size_t size;

private:
    struct Free {
        void operator()(uint8_t *p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t, Free> ptr;
};
