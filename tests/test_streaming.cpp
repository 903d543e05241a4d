// Streaming stores (the kernels' streaming-store twins, generators/stream_stores.py): the plan
// takes them past stream_min_bytes for dense outputs written in whole lines, or in rows that start
// inside lines on the twin's words (stored as aligned pieces: 4 bytes on x86, 8 on ARM64) where
// that measured faster, past stream_partial_min_bytes for lines it leaves partly written for
// longer, and never otherwise; every streaming plan matches the reference on random calls, at
// odd alignments of both tensors, on 1 and 2 threads; the choice survives the wisdom. Tests lower
// the switch point so small tensors reach the twins (correctness does not depend on the size; the
// benchmark measures that).
#include "runtime/block_shuffle.h"
#include "runtime/isa.h"
#include "runtime/kernel_registry.h"
#include "runtime/switch_points.h"
#include "runtime/tile_transpose.h"
#include "runtime/vect_c_regroup.h"
#include "tests/harness.h"
#include "tools/memcpy_yardstick.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace testing_support;

bool build_streams() {
    const auto *k = spacedepth::detail::find_kernel(spacedepth::Device::Host, spacedepth::KernelFamily::General, 4);
    return k != nullptr && k->stream != nullptr;
}

bool streams(const std::string &plan) { return plan.find("streaming stores") != std::string::npos; }

// Whether the twin streams vectors that start 4 bytes past an 8-byte word (as MOVNTI pieces: the
// AVX2 and AVX-512 twins); the SSE4.1 and ARM64 twins store them plainly, so such rows keep plain
// stores there.
bool dword_rows_stream() {
#if defined(__x86_64__)
    return spacedepth::detail::cpu_has_feature("avx2");
#else
    return false;
#endif
}

// Every build the runtime table lists has its twin wherever the contract says "stream" (x86 with
// LLVM >= 21), and a twin computes what its kernel computes, so it is registered beside it;
// `spacedepth info` lists the twins and, on x86, how far ahead they prefetch their input.
TEST(Streaming, TwinsAreRegisteredBesideTheirKernels) {
    int twins = 0;
    const std::string info = spacedepth::build_info();
    const size_t line = info.find("streaming-store twins:");
    ASSERT_NE(line, std::string::npos) << info;
    const std::string twins_line = info.substr(line, info.find('\n', line) - line);
    for (const auto &k : spacedepth::detail::kRegisteredKernels) {
        if (k.stream == nullptr) continue;
        EXPECT_NE(twins_line.find(k.stream->name), std::string::npos) << twins_line;
        twins++;
        EXPECT_EQ(k.stream->family, k.family) << k.name;
        EXPECT_EQ(k.stream->width, k.width) << k.name;
        EXPECT_EQ(std::string(k.stream->name), std::string(k.name) + "_stream");
        EXPECT_NE(k.family, spacedepth::KernelFamily::Small) << "the small family never streams";
    }
#if SPACEDEPTH_HAS_STREAMING
    EXPECT_GT(twins, 0) << "the build made streaming twins, yet none is registered";
#if defined(__x86_64__)
    const std::string ahead =
        SPACEDEPTH_STREAM_PREFETCH_BYTES > 0
            ? "(input prefetched " + std::to_string(SPACEDEPTH_STREAM_PREFETCH_BYTES) + " bytes ahead)"
            : std::string("(no input prefetch)");
    EXPECT_NE(twins_line.find(ahead), std::string::npos) << twins_line;
#endif
#else
    EXPECT_EQ(twins, 0);
    EXPECT_NE(twins_line.find("none"), std::string::npos) << twins_line;
#endif
}

// The rule: past the switch point (serial plans' or parallel plans'), outputs whose rows start
// on cache lines stream, and rows that start inside lines but on the twin's words; under it,
// strided, rows off words (the twin stores those vectors plainly), or where the kernel has no
// twin, they do not.
TEST(Streaming, PlanStreamsDenseOutputsPastTheSwitchPoint) {
    spacedepth::detail::SwitchPoints points = spacedepth::detail::switch_points();
    points.stream_min_bytes = 1 << 20;
    points.stream_parallel_min_bytes = 4 << 20;
    const ScopedSwitchPoints scoped(points);
    const Params p{Op::DepthToSpace, Block(2), Order::DCR, 1};
    std::mt19937_64 rng(5);
    struct Shape {
        DType dtype;
        Dims deep;
        bool strided;
        bool want;
    };
    const Shape shapes[] = {
        {DType::Float32, {1, 64, 64, 64}, false, true},                 // 1 MiB of f32: at the switch point
        {DType::Float32, {1, 64, 32, 64}, false, false},                // 512 KiB
        {DType::Float32, {1, 64, 64, 64}, true, false},                 // strided output: lines written in part
        {DType::Float32, {1, 60, 96, 99}, false, true},                 // 792-byte rows, starting inside lines
        {DType::Float16, {1, 60, 96, 100}, false, true},                // 400-byte f16 rows (8-byte MOVNTIs too)
        {DType::Float16, {1, 60, 96, 99}, false, dword_rows_stream()},  // 396-byte rows: every other one 4 past a word
        {DType::UInt8, {1, 60, 192, 100}, false, true},                 // 200-byte u8 rows, on words
        {DType::UInt8, {1, 60, 192, 99}, false, false},                 // 198-byte u8 rows, off words
    };
    for (const Shape &s : shapes) {
        TestTensor in = make_tensor(s.dtype, Layout::NCHW, s.deep);
        const Dims space{s.deep[0], s.deep[1] / 4, s.deep[2] * 2, s.deep[3] * 2};
        TestTensor out = make_tensor(s.dtype, Layout::NCHW, space, s.strided ? &rng : nullptr);
        const std::string plan = spacedepth::describe_call(p, in.tensor, out.tensor);
        EXPECT_EQ(streams(plan), s.want && build_streams()) << plan;
        fill_unique(in, 3);
        ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok()) << plan;
        EXPECT_EQ(compare(out, expected_output(p, in, out)), "") << plan;
    }
    // A parallel plan of the same 1 MiB stays plain under its own, higher switch point.
    const Params parallel{Op::DepthToSpace, Block(2), Order::DCR, 2};
    TestTensor in = make_tensor(DType::Float32, Layout::NCHW, {1, 64, 64, 64});
    TestTensor out = make_tensor(DType::Float32, Layout::NCHW, {1, 16, 128, 128});
    const std::string plan = spacedepth::describe_call(parallel, in.tensor, out.tensor);
    EXPECT_NE(plan.find("parallel"), std::string::npos) << plan;
    EXPECT_FALSE(streams(plan)) << plan;
}

// The runtime's kernel-shaped microkernels stream from stream_min_bytes where every vector they
// store starts on a line, on 1 and 2 threads, and keep plain stores elsewhere: the tile transpose
// (fused f32 conversions: pixels of 32 floats and planes of 2 KiB rows stream, pixels of 24
// floats, whose last tile overlaps inside lines, do not) and the NCHW_VECT_C CRD regroup (rows
// of whole lines stream, 360-byte rows do not). Each plan computes what the reference does,
// with the output on a line and 4 bytes past one.
TEST(Streaming, MicrokernelsStreamWholeLines) {
    spacedepth::detail::SwitchPoints points = spacedepth::detail::switch_points();
    points.stream_min_bytes = points.stream_parallel_min_bytes = 1 << 20;
    const ScopedSwitchPoints scoped(points);
    const bool tiles = spacedepth::detail::best_tile_isa() != spacedepth::detail::TileIsa::Scalar;
    const bool regroups = spacedepth::detail::best_regroup_isa() != spacedepth::detail::RegroupIsa::Scalar;
    struct Call {
        Op op;
        Order order;
        DType dtype;
        Layout in_layout, out_layout;
        Dims in;
        const char *family;  // where this CPU runs its vector loop
        bool want;
    };
    const Call calls[] = {
        {Op::DepthToSpace, Order::DCR, DType::Float32, Layout::NCHW, Layout::NHWC, {1, 64, 64, 64}, "tile", true},
        {Op::SpaceToDepth, Order::DCR, DType::Float32, Layout::NHWC, Layout::NCHW, {1, 16, 128, 128}, "tile", true},
        {Op::DepthToSpace, Order::DCR, DType::Float32, Layout::NCHW, Layout::NHWC, {1, 48, 80, 80}, "tile", false},
        {Op::SpaceToDepth,
         Order::CRD,
         DType::Int8,
         Layout::NCHW_VECT_C,
         Layout::NCHW_VECT_C,
         {1, 16, 256, 256},
         "regroup",
         true},
        {Op::DepthToSpace,
         Order::CRD,
         DType::Int8,
         Layout::NCHW_VECT_C,
         Layout::NCHW_VECT_C,
         {1, 64, 128, 128},
         "regroup",
         true},
        {Op::SpaceToDepth,
         Order::CRD,
         DType::Int8,
         Layout::NCHW_VECT_C,
         Layout::NCHW_VECT_C,
         {1, 32, 180, 180},
         "regroup",
         false},
    };
    for (const Call &c : calls) {
        const bool vector_loop = std::string(c.family) == "tile" ? tiles : regroups;
        for (int threads : {1, 2}) {
            for (int64_t offset : {0, 4}) {
                const Params p{c.op, Block(2), c.order, threads};
                Dims out_dims;
                ASSERT_TRUE(spacedepth::output_dims(p, c.in, &out_dims).ok());
                TestTensor in = make_tensor(c.dtype, c.in_layout, c.in);
                TestTensor out = make_tensor(c.dtype, c.out_layout, out_dims);
                out.storage.resize(out.storage.size() + 64, kSentinel);
                const auto base = reinterpret_cast<uintptr_t>(out.storage.data());
                out.tensor.data = out.storage.data() + ((64 - base % 64) % 64 + offset);
                const std::string plan = spacedepth::describe_call(p, in.tensor, out.tensor);
                if (vector_loop) {
                    EXPECT_EQ(plan.find(c.family), 0u) << plan;
                    EXPECT_EQ(streams(plan), c.want) << plan;
                }
                fill_unique(in, 9);
                ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok()) << plan;
                TestTensor got = make_tensor(c.dtype, c.out_layout, out_dims);
                std::memcpy(got.storage.data(), out.tensor.data, got.storage.size());
                EXPECT_EQ(compare(got, expected_output(p, in, got)), "")
                    << plan << ", " << offset << " bytes past a line";
            }
        }
    }
}

void expect_shuffle_streams_beyond_the_cache(bool wide_pixels) {
    spacedepth::detail::SwitchPoints points = spacedepth::detail::switch_points();
    points.stream_min_bytes = points.stream_parallel_min_bytes = 1 << 20;
    points.stream_serial_shuffle_min_bytes = wide_pixels ? 1 << 20 : int64_t{1} << 62;
    const ScopedSwitchPoints scoped(points);
    const spacedepth::detail::ShuffleIsa isa = spacedepth::detail::best_shuffle_isa();
    int shuffled = 0;
    struct Call {
        Op op;
        DType dtype;
        Dims in;
        Order order = Order::CRD;
    };
    const Call calls[] = {
        {Op::DepthToSpace, DType::UInt8, {1, 12, 300, 301}},
        {Op::SpaceToDepth, DType::UInt8, {1, 3, 600, 602}},
        {Op::SpaceToDepth, DType::Float32, {1, 3, 300, 302}},
        {Op::DepthToSpace, DType::Float32, {1, 12, 150, 151}},
        {Op::DepthToSpace, DType::UInt8, {1, 12, 300, 301}, Order::DCR},
        {Op::SpaceToDepth, DType::UInt8, {1, 3, 600, 602}, Order::DCR},
    };
    for (const Call &c : calls) {
        for (int threads : {1, 2}) {
            for (int64_t offset : {0, 4, 61}) {
                const Params p{c.op, Block(2), c.order, threads};
                Dims out_dims;
                ASSERT_TRUE(spacedepth::output_dims(p, c.in, &out_dims).ok());
                TestTensor in = make_tensor(c.dtype, Layout::NHWC, c.in);
                TestTensor out = make_tensor(c.dtype, Layout::NHWC, out_dims);
                const size_t bytes = out.storage.size();
                out.storage.resize(bytes + 128, kSentinel);
                const auto base = reinterpret_cast<uintptr_t>(out.storage.data());
                const int64_t shift = c.dtype == DType::UInt8 ? offset : offset / 4 * 4;
                out.tensor.data = out.storage.data() + ((64 - base % 64) % 64 + shift);
                const std::string plan = spacedepth::describe_call(p, in.tensor, out.tensor);
                if (plan.find("shuffle") == 0) {
                    shuffled++;
                    // On one thread the pixels of bytes, and of f32 past stream_serial_shuffle_min_bytes.
                    EXPECT_TRUE(threads == 2 || c.dtype == DType::UInt8 || wide_pixels) << plan;
                    EXPECT_NE(plan.find(threads == 2 ? "streaming stores, parallel" : "streaming stores, serial"),
                              std::string::npos)
                        << plan;
                }
                fill_unique(in, 3);
                ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok()) << plan;
                TestTensor got = make_tensor(c.dtype, Layout::NHWC, out_dims);
                std::memcpy(got.storage.data(), out.tensor.data, bytes);
                EXPECT_EQ(compare(got, expected_output(p, in, got)), "")
                    << plan << ", " << shift << " bytes past a line";
                const auto *first = static_cast<const uint8_t *>(out.tensor.data);
                const auto touched = std::count_if(out.storage.begin(), out.storage.end(), [&](const uint8_t &b) {
                    return (&b < first || &b >= first + bytes) && b != kSentinel;
                });
                EXPECT_EQ(touched, 0) << plan << ": bytes written outside the output";
            }
        }
    }
    // Within the cost bound on VBMI all four CRD calls on 2 threads, the two of u8 on 1 (and those
    // of f32 past stream_serial_shuffle_min_bytes) and the two DCR calls on both; on AVX2 (PSHUFB per
    // 16-byte chunk) the S2D ones on 2 threads.
    if (isa == spacedepth::detail::ShuffleIsa::Vbmi) {
        EXPECT_EQ(shuffled, (wide_pixels ? 12 : 10) * 3);
    } else if (isa == spacedepth::detail::ShuffleIsa::Avx2) {
        EXPECT_GE(shuffled, 2 * 3);
    }
}

// Beyond the cache the rules give the shuffle family the NHWC CRD pixels of 3 channels (within
// its cost bound) where the ladder's plan runs in tasks, with streaming stores
// (runtime/plan_cpu.cpp shuffle_rule); on one thread the pixels of bytes, and those of f32 from
// stream_serial_shuffle_min_bytes. With VBMI the NHWC DCR u8 C3 pixels (6-byte runs) take it on 1 and 2
// threads. Each plan computes what the reference does, with the output on a line and 4 and 61
// bytes past one.
TEST(Streaming, ShuffleStreamsInTasksBeyondTheCache) {
    for (const bool wide_pixels : {false, true}) {
        SCOPED_TRACE(wide_pixels ? "stream_serial_shuffle_min_bytes 1 MiB" : "stream_serial_shuffle_min_bytes never");
        expect_shuffle_streams_beyond_the_cache(wide_pixels);
    }
}

// Rows that start inside lines stream from stream_min_bytes only within the limits measured for
// them (runtime/plan_cpu.cpp line_fit): not with 16 output rows open at once (S2D NCHW block 4,
// which waits for the later switch point), not as a row copy of 2 KiB or more, but the same copy
// of shorter rows does.
TEST(Streaming, MisalignedRowsStreamOnlyWithinTheMeasuredLimits) {
    spacedepth::detail::SwitchPoints points = spacedepth::detail::switch_points();
    points.stream_min_bytes = 1 << 20;
    points.stream_partial_min_bytes = int64_t{1} << 62;
    const ScopedSwitchPoints scoped(points);
    struct Call {
        Params p;
        Dims in;
        bool want;
    };
    const Call calls[] = {
        // 16 output planes written a 600-byte run at a time.
        {{Op::SpaceToDepth, Block(4), Order::CRD, 1}, {1, 3, 600, 600}, false},
        // Block 2x1: whole rows copied, 4,760 bytes each.
        {{Op::SpaceToDepth, Block(2, 1), Order::CRD, 1}, {1, 12, 60, 1190}, false},
        // The same with 1,200-byte rows.
        {{Op::SpaceToDepth, Block(2, 1), Order::CRD, 1}, {1, 12, 240, 300}, true},
    };
    for (const Call &c : calls) {
        TestTensor in = make_tensor(DType::Float32, Layout::NCHW, c.in);
        TestTensor out = make_tensor(DType::Float32, Layout::NCHW, deep_dims(c.in, c.p));
        const std::string plan = spacedepth::describe_call(c.p, in.tensor, out.tensor);
        EXPECT_EQ(streams(plan), c.want && build_streams()) << plan;
        fill_unique(in, 7);
        ASSERT_TRUE(spacedepth::run(c.p, in.tensor, out.tensor).ok()) << plan;
        EXPECT_EQ(compare(out, expected_output(c.p, in, out)), "") << plan;
    }
}

// u8 NCHW DepthToSpace rows 4 bytes past an 8-byte word every other row (724 bytes) stream with
// AVX2 and AVX-512, whose twins store them as MOVNTI pieces; rows 2 bytes past a 4-byte word
// (726), and every row on SSE4.1 and ARM64, keep plain stores, as the twin would store them plainly.
TEST(Streaming, RowsOnTheTwinsWordsStream) {
    spacedepth::detail::SwitchPoints points = spacedepth::detail::switch_points();
    points.stream_min_bytes = points.stream_parallel_min_bytes = 1 << 20;
    const ScopedSwitchPoints scoped(points);
    struct Call {
        Params p;
        Dims space;  // the output (1.3 MB)
        bool want;
    };
    const Call calls[] = {
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, {1, 3, 600, 724}, dword_rows_stream()},
        {{Op::DepthToSpace, Block(2), Order::DCR, 2}, {1, 3, 600, 724}, dword_rows_stream()},
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, {1, 3, 600, 726}, false},
    };
    for (const Call &c : calls) {
        TestTensor in = make_tensor(DType::UInt8, Layout::NCHW, deep_dims(c.space, c.p));
        TestTensor out = make_tensor(DType::UInt8, Layout::NCHW, c.space);
        const std::string plan = spacedepth::describe_call(c.p, in.tensor, out.tensor);
        EXPECT_EQ(streams(plan), c.want && build_streams()) << plan;
        fill_unique(in, 5);
        ASSERT_TRUE(spacedepth::run(c.p, in.tensor, out.tensor).ok()) << plan;
        EXPECT_EQ(compare(out, expected_output(c.p, in, out)), "") << plan;
    }
}

// Outputs whose lines the twin leaves partly written for longer (many open rows, odd counts of
// copied pieces, 4- and 8-byte elements gathered in threes) stream only from the later switch point,
// stream_partial_min_bytes, and those with 16 or more rows open also only from
// stream_many_rows_min_bytes; other odd pieces, gathered or copied in runs under 24 bytes, never.
TEST(Streaming, PartlyWrittenLinesStreamFromTheLaterSwitchPoint) {
    struct Call {
        Params p;
        DType dtype;
        Layout layout;
        Dims space;
        bool partial;            // streams once stream_partial_min_bytes is at or under its size
        bool many_rows = false;  // ... and stream_many_rows_min_bytes too
    };
    const Call calls[] = {
        // 16 output planes written a 600-byte run at a time (4.3 MB).
        {{Op::SpaceToDepth, Block(4), Order::CRD, 1}, DType::Float32, Layout::NCHW, {1, 3, 600, 600}, true, true},
        // 9 of them, 800-byte runs: not many.
        {{Op::SpaceToDepth, Block(3), Order::CRD, 1}, DType::Float32, Layout::NCHW, {1, 3, 600, 600}, true},
        // NHWC DCR C3 f32: each 64-byte line in 24-byte pieces, copied (1.2 MB).
        {{Op::DepthToSpace, Block(2), Order::DCR, 1}, DType::Float32, Layout::NHWC, {1, 3, 320, 320}, true},
        // The same in CRD order: each pixel's 3 channels gathered, 4 bytes at a time.
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, DType::Float32, Layout::NHWC, {1, 3, 320, 320}, true},
        // ... but not 12 of them.
        {{Op::DepthToSpace, Block(2), Order::CRD, 1}, DType::Float32, Layout::NHWC, {1, 12, 160, 160}, false},
        // u8 NHWC DCR C3: 6-byte pieces, never the twin (beyond the cache the shuffle streams
        // them with VBMI: ShuffleStreamsInTasksBeyondTheCache).
        {{Op::DepthToSpace, Block(2), Order::DCR, 1}, DType::UInt8, Layout::NHWC, {1, 3, 640, 640}, false},
        // NCHW b3: rows interleaved from 3 input planes, f32 (1.1 MB) and u8.
        {{Op::DepthToSpace, Block(3), Order::CRD, 1}, DType::Float32, Layout::NCHW, {1, 3, 318, 300}, true},
        {{Op::DepthToSpace, Block(3), Order::CRD, 1}, DType::UInt8, Layout::NCHW, {1, 3, 636, 600}, false},
    };
    for (const Call &c : calls) {
        const Dims deep = deep_dims(c.space, c.p);
        const bool s2d = c.p.op == Op::SpaceToDepth;
        TestTensor in = make_tensor(c.dtype, c.layout, s2d ? c.space : deep);
        TestTensor out = make_tensor(c.dtype, c.layout, s2d ? deep : c.space);
        int64_t bytes = dtype_size(c.dtype);
        for (int64_t d : c.space) bytes *= d;
        for (const auto &[past, past_many_rows] : {std::pair{false, true}, {true, false}, {true, true}}) {
            spacedepth::detail::SwitchPoints points = spacedepth::detail::switch_points();
            points.stream_min_bytes = 1 << 20;
            points.stream_partial_min_bytes = past ? bytes : bytes + 1;
            points.stream_many_rows_min_bytes = past_many_rows ? bytes : bytes + 1;
            const ScopedSwitchPoints scoped(points);
            const std::string plan = spacedepth::describe_call(c.p, in.tensor, out.tensor);
            if (plan.find("shuffle") == 0) {
                EXPECT_TRUE(c.dtype == DType::UInt8 && c.layout == Layout::NHWC && streams(plan)) << plan;
            } else {
                EXPECT_EQ(streams(plan), past && c.partial && (past_many_rows || !c.many_rows) && build_streams())
                    << plan;
            }
            fill_unique(in, 11);
            ASSERT_TRUE(spacedepth::run(c.p, in.tensor, out.tensor).ok()) << plan;
            EXPECT_EQ(compare(out, expected_output(c.p, in, out)), "") << plan;
        }
    }
}

// Random calls (every op, order, layout pair, width, block, strided views, 0-2 threads) with the
// switch point at 0: every call the rule lets stream streams, and all match.
TEST(Streaming, RandomCallsMatchTheReference) {
    const ScopedSwitchPoints scoped(streaming_at_any_size());
    std::mt19937_64 rng(41);
    int streamed = 0;
    for (int i = 0; i < 300; i++) {
        auto [p, in, out] = random_call(rng, 24, 12);
        fill_unique(in, i);
        const std::string plan = spacedepth::describe_call(p, in.tensor, out.tensor);
        streamed += streams(plan);
        ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok()) << plan;
        ASSERT_EQ(compare(out, expected_output(p, in, out)), "") << i << ": " << plan;
    }
    if (build_streams()) {
        EXPECT_GE(streamed, 30) << "too few calls streamed";
    } else {
        EXPECT_EQ(streamed, 0);
    }
}

// The output at every offset from 0 to 67 bytes of a 64-byte-aligned block, the input at some
// (the twin's vectors stream where they land aligned, as aligned pieces where they land on 4
// (x86), 8, 16 or 32 bytes, plainly elsewhere), 1 and 2 threads, u8 and f32 (f32 at offsets of whole
// elements): the output matches, and no byte around it is touched.
TEST(Streaming, OddAlignmentsOfBothTensors) {
    const ScopedSwitchPoints scoped(streaming_at_any_size());
    for (DType dtype : {DType::UInt8, DType::Float32}) {
        const int64_t size = dtype == DType::UInt8 ? 1 : 4;
        for (int threads : {1, 2}) {
            const Params p{Op::DepthToSpace, Block(2), Order::DCR, threads};
            const Dims deep{1, 32, 24, 64}, space{1, 8, 48, 128};  // rows of whole lines
            TestTensor in = make_tensor(dtype, Layout::NCHW, deep);
            TestTensor out = make_tensor(dtype, Layout::NCHW, space);
            fill_unique(in, threads);
            const TestTensor want = expected_output(p, in, out);
            const size_t bytes = in.storage.size();
            spacedepth::Plan plan;
            ASSERT_TRUE(plan.create(p, in.tensor, out.tensor).ok());
            EXPECT_EQ(streams(plan.describe()), build_streams()) << plan.describe();
            for (int64_t in_offset = 0; in_offset < 68; in_offset += size * (in_offset < 8 ? 1 : 5)) {
                for (int64_t out_offset = 0; out_offset < 68; out_offset += size) {
                    alignas(64) static uint8_t src[1 << 20], dst[1 << 20];
                    ASSERT_LE(bytes + 256, sizeof(src));
                    std::memcpy(src + in_offset, in.storage.data(), bytes);
                    std::memset(dst, kSentinel, bytes + 256);
                    const spacedepth::Status s = plan.run(src + in_offset, dst + out_offset);
                    ASSERT_TRUE(s.ok()) << s.message();
                    ASSERT_EQ(std::memcmp(dst + out_offset, want.storage.data(), bytes), 0)
                        << spacedepth::dtype_name(dtype) << " threads " << threads << " offsets " << in_offset << ", "
                        << out_offset << " (" << plan.describe() << ")";
                    for (int64_t b = 0; b < out_offset; b++) ASSERT_EQ(dst[b], kSentinel) << "byte " << b;
                    for (size_t b = out_offset + bytes; b < bytes + 256; b++) ASSERT_EQ(dst[b], kSentinel);
                }
            }
        }
    }
}

// The plan's choice as the wisdom keeps it ("stream" after the loop order) and reads it back; a
// line of the format before streaming (no stores field) reads as plain stores.
TEST(Streaming, WisdomKeepsTheChoice) {
    const ScopedSwitchPoints scoped(streaming_at_any_size());
    spacedepth::forget_wisdom();
    const Params p{Op::DepthToSpace, Block(2), Order::DCR, 1};
    TestTensor in = make_tensor(DType::Float32, Layout::NCHW, {1, 32, 24, 40});
    TestTensor out = make_tensor(DType::Float32, Layout::NCHW, {1, 8, 48, 80});
    spacedepth::Plan plan;
    ASSERT_TRUE(plan.create(p, in.tensor, out.tensor, spacedepth::PlanOptions{true, 200}).ok());
    const std::string text = spacedepth::wisdom_text();
    const bool measured_stream = streams(plan.describe());
    EXPECT_NE(text.find(measured_stream ? " stream\n" : " plain\n"), std::string::npos) << text;
    // The same line with its stores field dropped: the 0.8 format, plain stores.
    std::string old = text;
    const size_t field = old.rfind(measured_stream ? " stream\n" : " plain\n");
    ASSERT_NE(field, std::string::npos);
    old.erase(field, old.find('\n', field) - field);
    spacedepth::forget_wisdom();
    ASSERT_TRUE(spacedepth::import_wisdom_text(old).ok()) << old;
    spacedepth::Plan again;
    ASSERT_TRUE(again.create(p, in.tensor, out.tensor, spacedepth::PlanOptions{true, 200}).ok());
    EXPECT_FALSE(streams(again.describe())) << again.describe();
    spacedepth::forget_wisdom();
}

// The benchmark's row-pattern yardstick (tools/memcpy_yardstick.h, the limit RESULTS.md reads the
// NHWC misses against) moves every byte where its description puts it: per group of `rows` runs,
// the k-th 64 bytes of run r at sequential slot k * rows + r, the runs' last bytes short of 64
// after them in run order, and the bytes after the last whole group in place.
TEST(Streaming, RowPatternYardstickMovesEveryByte) {
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "the row-pattern copy needs AVX2";
#else
    GTEST_SKIP() << "the row-pattern copy is x86 only";
#endif
    for (const auto side : {yardstick::RowSide::Read, yardstick::RowSide::Write}) {
        for (const int rows : {2, 3}) {
            for (const size_t run : {size_t{64}, size_t{200}, size_t{4096 + 40}}) {
                const size_t bytes = 5 * rows * run + 77;
                std::vector<uint8_t> src(bytes + 32), dst(bytes + 32, 0);
                for (size_t i = 0; i < src.size(); i++) src[i] = static_cast<uint8_t>(i * 37 + i / 251);
                // Offsets keep the test off the buffers' own alignment.
                uint8_t *out = dst.data() + 8;
                const uint8_t *in = src.data() + 3;
                yardstick::row_stream_copy(out, in, bytes, side, rows, run);
                const size_t group = rows * run, whole = run / 64 * 64;
                for (size_t row_byte = 0; row_byte < bytes; row_byte++) {
                    size_t seq_byte = row_byte;  // the part after the last whole group
                    if (row_byte < bytes / group * group) {
                        const size_t g = row_byte / group, r = row_byte % group / run, at = row_byte % run;
                        seq_byte = g * group + (at < whole ? at / 64 * 64 * rows + r * 64 + at % 64
                                                           : whole * rows + r * (run - whole) + (at - whole));
                    }
                    const bool read = side == yardstick::RowSide::Read;
                    const size_t from = read ? row_byte : seq_byte, to = read ? seq_byte : row_byte;
                    ASSERT_EQ(out[to], in[from]) << "rows " << rows << ", run " << run << ", byte " << row_byte;
                }
            }
        }
    }
}

}  // namespace
