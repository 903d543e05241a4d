// Huge tensors: over 2 GiB, over 2^31 elements, one dimension over 2^31 - 1 (TF's GPU kernels
// overflowed int32 here, PR #108695). DepthToSpace NCHW uint8 with a 1 x 2 block interleaves two
// 2 GiB planes into one row of 2^31 + 16 elements; SpaceToDepth takes it back. Checked at a
// million random positions and at every element around the 2^31 boundary against docs/SPEC.md's
// formula (through the reference's offsets), and byte for byte after the round trip.
// Needs about 4.5 GiB of memory: skipped, saying why, where less is available (make test-large
// runs only these tests). Through GPU memory with SPACEDEPTH_TEST_DEVICE=cuda (bench/gpu_check.sh).
#include "spacedepth/spacedepth.h"
#include "tests/harness.h"
#include "tests/reference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include <sys/mman.h>

namespace {

using namespace spacedepth;

int64_t available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    int64_t kib = 0;
    while (meminfo >> key >> kib) {
        if (key == "MemAvailable:") return kib * 1024;
        meminfo.ignore(256, '\n');
    }
    return 0;
}

// 2 GiB of zero pages, on 2 MiB pages where the kernel gives them (transparent huge pages are
// often "madvise" only). Most of this test's time is the kernel clearing pages it touches for
// the first time (perf on the 2-core AMD EPYC VM: 77 % in clear_page_erms), so it touches two
// tensors, not three: 26 s (34 s of CPU) -> 13 s (20 s of CPU).
struct HugeBuffer {
    explicit HugeBuffer(int64_t bytes) : size(static_cast<size_t>(bytes)) {
        void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            madvise(p, size, MADV_HUGEPAGE);  // advice only: 4 KiB pages where refused
            data = static_cast<uint8_t *>(p);
        }
    }
    ~HugeBuffer() {
        if (data != nullptr) munmap(data, size);
    }
    HugeBuffer(const HugeBuffer &) = delete;
    HugeBuffer &operator=(const HugeBuffer &) = delete;
    uint8_t *get() const { return data; }
    uint8_t &operator[](int64_t i) const { return data[i]; }
    size_t size;
    uint8_t *data = nullptr;
};

uint8_t value_at(int64_t i) {  // a pattern whose neighbours differ, so misplaced bytes show
    uint64_t x = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    return static_cast<uint8_t>(x >> 56);
}

TEST(LargeTensors, DimensionOver2To31AndOver2GiB) {
#if defined(SPACEDEPTH_SANITIZED) || defined(SPACEDEPTH_NO_LARGE_TESTS)
    GTEST_SKIP() << "6.5 GiB of tensors under a sanitizer or an emulator: run in the plain native build";
#endif
    const int64_t w = (int64_t{1} << 30) + 8;  // per plane
    const int64_t bytes = 2 * w;               // 2^31 + 16 bytes per tensor
    if (available_bytes() < 2 * bytes + (int64_t{1} << 29)) {
        GTEST_SKIP() << "needs " << (2 * bytes >> 20) << " MiB free, " << (available_bytes() >> 20) << " MiB available";
    }
    const HugeBuffer in(bytes), out(bytes);
    ASSERT_TRUE(in.get() && out.get()) << "mmap of 2 x " << bytes << " bytes failed";
    for (int64_t i = 0; i < bytes; i++) in[i] = value_at(i);

    // Deep side: NCHW (1, 2, 1, w); space side: NCHW (1, 1, 1, 2w), W over 2^31 - 1.
    const Tensor deep = Tensor::dense(in.get(), DType::UInt8, Layout::NCHW, {1, 2, 1, w});
    const Tensor space = Tensor::dense(out.get(), DType::UInt8, Layout::NCHW, {1, 1, 1, 2 * w});
    ASSERT_GT(space.dims[3], int64_t{INT32_MAX});
    const Params d2s{Op::DepthToSpace, Block(1, 2), Order::DCR, 0};
    const Status s = testing_support::run_op(d2s, deep, space);
    ASSERT_TRUE(s.ok()) << s.message();

    // docs/SPEC.md section 2, DCR: out(n, c, h*bh + by, w*bw + bx) = in(n, (by*bw + bx)*C + c, h, w).
    const reference::TensorRef in_ref{in.get(),        1, reference::Layout::ChannelsFirst, 1, 4, {1, 2, 1, w},
                                      {2 * w, w, w, 1}};
    const reference::TensorRef out_ref{
        out.get(), 1, reference::Layout::ChannelsFirst, 1, 4, {1, 1, 1, 2 * w}, {2 * w, 2 * w, 2 * w, 1}};
    auto check = [&](int64_t x) {  // x: the output column
        const int64_t bx = x % 2, wd = x / 2;
        const int64_t in_coord[4] = {0, bx, 0, wd}, out_coord[4] = {0, 0, 0, x};
        const uint8_t want = in[reference::byte_offset(in_ref, in_coord)];
        const uint8_t got = out[reference::byte_offset(out_ref, out_coord)];
        return want == got
                   ? std::string()
                   : "column " + std::to_string(x) + ": got " + std::to_string(got) + ", want " + std::to_string(want);
    };
    std::mt19937_64 rng(42);
    int failures = 0;
    for (int i = 0; i < 1000000 && failures < 10; i++) {
        const std::string f = check(static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * w)));
        failures += !f.empty();
        EXPECT_EQ(f, "");
    }
    for (int64_t x = INT32_MAX - 4096; x < 2 * w && failures < 10; x++) {
        const std::string f = check(x);
        failures += !f.empty();
        EXPECT_EQ(f, "");
    }

    // And back, into the input's memory: the round trip restores every byte of the pattern.
    std::memset(in.get(), 0xA5, bytes);
    const Status r = testing_support::run_op(Params{Op::SpaceToDepth, Block(1, 2), Order::DCR, 0}, space,
                                             Tensor::dense(in.get(), DType::UInt8, Layout::NCHW, {1, 2, 1, w}));
    ASSERT_TRUE(r.ok()) << r.message();
    int64_t first_wrong = -1;
    for (int64_t i = 0; i < bytes && first_wrong < 0; i++) {
        if (in[i] != value_at(i)) first_wrong = i;
    }
    EXPECT_EQ(first_wrong, -1) << "byte " << first_wrong << " of the round trip is " << int(in[first_wrong])
                               << ", want " << int(value_at(first_wrong));
}

}  // namespace
