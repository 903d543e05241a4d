// The plan API (sd_plan_create / sd_plan_run / sd_plan_destroy, spacedepth::Plan): the same results
// as the one-shot call, on any memory of the planned shape, and the same rules: create rejects what
// sd_run rejects for the shapes, run what it rejects for the memory, and nothing is written then.
#include "runtime/call.h"
#include "runtime/switch_points.h"
#include "runtime/tile_transpose.h"
#include "tests/harness.h"
#include "tests/planned_call.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace {

using namespace testing_support;

// Random calls over ops, orders, layouts (fused conversions included), widths, blocks and strided
// views: a plan made from the descriptors alone, run on two different pairs of tensors.
TEST(Plan, MatchesTheReferenceOnAnyMemoryOfTheShape) {
    std::mt19937_64 rng(77);
    for (int i = 0; i < 200; i++) {
        auto [p, in, out] = random_call(rng, 6, 6);
        spacedepth::Plan plan;
        spacedepth::Tensor in_desc = in.tensor, out_desc = out.tensor;
        in_desc.data = out_desc.data = nullptr;  // descriptors: the data pointers are ignored
        ASSERT_TRUE(plan.create(p, in_desc, out_desc).ok()) << i;
        for (int round = 0; round < 2; round++) {
            TestTensor x = in, y = out;  // fresh storage each round
            x.rebase();
            y.rebase();
            fill_unique(x, 10 * i + round);
            const spacedepth::Status s = plan.run(x.tensor.data, y.tensor.data);
            ASSERT_TRUE(s.ok()) << s.message();
            const std::string diff = compare(y, expected_output(p, x, y));
            ASSERT_EQ(diff, "") << "call " << i << " round " << round << " (" << plan.describe() << ")";
        }
    }
}

// A plan assumes addresses aligned for its widest element; others are planned again, and right.
TEST(Plan, MisalignedAddressesAreRight) {
    const Params p{Op::DepthToSpace, Block(2), Order::DCR, 1};
    TestTensor in = make_tensor(DType::Float32, Layout::NHWC, {1, 4, 8, 8});  // C1 b2 runs: 8-byte elements
    TestTensor out = make_tensor(DType::Float32, Layout::NHWC, {1, 1, 16, 16});
    spacedepth::Plan plan;
    ASSERT_TRUE(plan.create(p, in.tensor, out.tensor).ok());
    EXPECT_NE(plan.describe().find("u64"), std::string::npos) << plan.describe();
    std::vector<uint8_t> in_bytes(in.storage.size() + 4), out_bytes(out.storage.size() + 4, kSentinel);
    fill_unique(in);
    std::memcpy(in_bytes.data() + 4, in.storage.data(), in.storage.size());
    ASSERT_TRUE(plan.run(in_bytes.data() + 4, out_bytes.data() + 4).ok());
    TestTensor want = expected_output(p, in, out);
    EXPECT_EQ(std::memcmp(out_bytes.data() + 4, want.storage.data(), want.storage.size()), 0);
    for (int k = 0; k < 4; k++) EXPECT_EQ(out_bytes[k], kSentinel);
}

TEST(Plan, CreateRejectsWhatTheOneShotCallRejects) {
    const Params p{Op::SpaceToDepth, Block(2), Order::DCR, 0};
    TestTensor in = make_tensor(DType::Float32, Layout::NHWC, {1, 3, 5, 4});  // H=5: not divisible by 2
    TestTensor out = make_tensor(DType::Float32, Layout::NHWC, {1, 12, 2, 2});
    const spacedepth::Status one_shot = spacedepth::run(p, in.tensor, out.tensor);
    spacedepth::Plan plan;
    const spacedepth::Status s = plan.create(p, in.tensor, out.tensor);
    EXPECT_EQ(s.code(), SD_ERROR_SHAPE);
    EXPECT_EQ(s.message(), one_shot.message());
    EXPECT_FALSE(plan.ready());
    EXPECT_EQ(plan.run(in.tensor.data, out.tensor.data).code(), SD_ERROR_INVALID_ARGUMENT);

    // The C API: the same status and message, *plan set to NULL.
    const sd_params cp = as_c(p, 4);
    const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
    sd_plan *handle = reinterpret_cast<sd_plan *>(&handle);  // garbage in: must come back NULL
    EXPECT_EQ(sd_plan_create(&cp, &cin, &cout, &handle), SD_ERROR_SHAPE);
    EXPECT_EQ(handle, nullptr);
    EXPECT_EQ(std::string(sd_last_error()), one_shot.message());
    for (uint8_t b : out.storage) ASSERT_EQ(b, kSentinel);
}

TEST(Plan, HostileArguments) {
    TestTensor in = make_tensor(DType::UInt8, Layout::NCHW, {1, 1, 4, 4});
    TestTensor out = make_tensor(DType::UInt8, Layout::NCHW, {1, 4, 2, 2});
    const sd_params p = as_c(Params{Op::SpaceToDepth, Block(2), Order::CRD, 0}, 4);
    const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
    sd_plan *plan = nullptr;
    EXPECT_EQ(sd_plan_create(&p, &cin, &cout, nullptr), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(sd_last_error(), "plan is null");
    EXPECT_EQ(sd_plan_create(nullptr, &cin, &cout, &plan), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(sd_last_error(), "params is null");
    EXPECT_EQ(sd_plan_create(&p, nullptr, &cout, &plan), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(sd_last_error(), "input descriptor is null");
    EXPECT_EQ(sd_plan_create(&p, &cin, nullptr, &plan), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(plan, nullptr);
    sd_params bad = p;
    bad.op = static_cast<sd_op>(7);
    EXPECT_EQ(sd_plan_create(&bad, &cin, &cout, &plan), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sd_plan_run(nullptr, in.storage.data(), out.storage.data()), SD_ERROR_INVALID_ARGUMENT);
    sd_plan_destroy(nullptr);  // allowed

    sd_tensor desc_in = cin, desc_out = cout;
    desc_in.data = desc_out.data = nullptr;  // descriptors: null data is fine at create
    ASSERT_EQ(sd_plan_create(&p, &desc_in, &desc_out, &plan), SD_OK) << sd_last_error();
    EXPECT_EQ(sd_plan_run(plan, nullptr, out.storage.data()), SD_ERROR_NULL_DATA);
    EXPECT_NE(std::string(sd_last_error()).find("input data is null"), std::string::npos) << sd_last_error();
    EXPECT_EQ(sd_plan_run(plan, in.storage.data(), nullptr), SD_ERROR_NULL_DATA);
    // Overlapping spans: the output inside the input's buffer, shifted by one byte.
    std::vector<uint8_t> shared(64, kSentinel);
    EXPECT_EQ(sd_plan_run(plan, shared.data(), shared.data() + 1), SD_ERROR_OVERLAP);
    EXPECT_NE(std::string(sd_last_error()).find("overlaps output memory"), std::string::npos) << sd_last_error();
    for (uint8_t b : shared) ASSERT_EQ(b, kSentinel) << "nothing written after an overlap error";
    fill_unique(in);
    ASSERT_EQ(sd_plan_run(plan, in.storage.data(), out.storage.data()), SD_OK) << sd_last_error();
    EXPECT_EQ(compare(out, expected_output(Params{Op::SpaceToDepth, Block(2), Order::CRD, 0}, in, out)), "");
    sd_plan_destroy(plan);

    // An empty tensor: any pointers, nothing to do.
    sd_tensor empty_in = cin, empty_out = cout;
    empty_in.dims[0] = empty_out.dims[0] = 0;
    ASSERT_EQ(sd_plan_create(&p, &empty_in, &empty_out, &plan), SD_OK) << sd_last_error();
    EXPECT_EQ(sd_plan_run(plan, nullptr, nullptr), SD_OK);
    sd_plan_destroy(plan);
}

// The rank-generic descriptor from hostile C callers: ndim and block_d out of range, garbage past
// ndim, mismatched ranks; every one refused with its rule, *plan NULL, nothing read past the arrays.
TEST(Plan, HostileRankDescriptors) {
    TestTensor in = make_tensor(DType::Float32, Layout::NCHW, {1, 8, 2, 2, 2});
    TestTensor out = make_tensor(DType::Float32, Layout::NCHW, {1, 1, 4, 4, 4});
    const sd_params p{SD_DEPTH_TO_SPACE, 2, 2, SD_ORDER_CRD, 0, 2};
    const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
    sd_plan *plan = reinterpret_cast<sd_plan *>(&plan);
    struct Bad {
        int in_ndim, out_ndim;
        int64_t block_d;
        const char *rule;
    };
    const Bad cases[] = {
        {0, 5, 2, "ndim must be 3, 4 or 5"},
        {INT32_MIN, 5, 2, "got -2147483648"},
        {6, 6, 2, "ndim must be 3, 4 or 5"},
        {5, 4, 2, "output ndim 4 differs from input ndim 5"},
        {5, 5, 0, "block_d=0"},
        {5, 5, -1, "block sizes must be >= 1"},
        {4, 4, 2, "block_d=2 but 4-dim tensors"},
        {5, 5, INT64_MAX, "block volume bd*bh*bw overflows"},
    };
    for (const Bad &b : cases) {
        sd_tensor i = cin, o = cout;
        i.ndim = b.in_ndim;
        o.ndim = b.out_ndim;
        sd_params q = p;
        q.block_d = b.block_d;
        plan = reinterpret_cast<sd_plan *>(&plan);
        EXPECT_NE(sd_plan_create(&q, &i, &o, &plan), SD_OK) << b.rule;
        EXPECT_EQ(plan, nullptr);
        EXPECT_NE(std::string(sd_last_error()).find(b.rule), std::string::npos) << sd_last_error();
        EXPECT_NE(sd_run(&q, &i, &o), SD_OK) << b.rule;
    }
    for (uint8_t v : out.storage) ASSERT_EQ(v, kSentinel);
    // Entries past ndim are ignored: garbage there changes nothing.
    TestTensor in4 = make_tensor(DType::Float32, Layout::NCHW, {1, 8, 2, 2});
    TestTensor out4 = make_tensor(DType::Float32, Layout::NCHW, {1, 2, 4, 4});
    fill_unique(in4);
    sd_tensor i4 = as_c(in4.tensor), o4 = as_c(out4.tensor);
    i4.dims[4] = o4.dims[4] = -7;
    i4.strides[4] = o4.strides[4] = INT64_MIN;
    const sd_params p4{SD_DEPTH_TO_SPACE, 2, 2, SD_ORDER_CRD, 0, 0};
    ASSERT_EQ(sd_run(&p4, &i4, &o4), SD_OK) << sd_last_error();
    EXPECT_EQ(compare(out4, expected_output(Params{Op::DepthToSpace, Block(2), Order::CRD, 0}, in4, out4)), "");
    // The C helpers at every rank, and their hostile inputs.
    int64_t dims[5];
    const int64_t in_dims[5] = {1, 8, 2, 2, 2};
    EXPECT_EQ(sd_output_dims_nd(&p, 5, in_dims, dims), SD_OK);
    EXPECT_EQ(sd_output_dims_nd(&p, 5, nullptr, dims), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sd_output_dims_nd(&p, 5, in_dims, nullptr), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sd_output_dims_nd(&p, -3, in_dims, dims), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sd_output_dims_nd(&p, 99, in_dims, dims), SD_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sd_tensor_init_dense_nd(nullptr, nullptr, SD_FLOAT32, SD_LAYOUT_NCHW, 5, in_dims),
              SD_ERROR_INVALID_ARGUMENT);
    sd_tensor t;
    EXPECT_EQ(sd_tensor_init_dense_nd(&t, nullptr, SD_FLOAT32, static_cast<sd_layout>(9), 5, in_dims),
              SD_ERROR_INVALID_ARGUMENT);
}

TEST(Plan, MovesAndRecreates) {
    TestTensor in = make_tensor(DType::Float32, Layout::NCHW, {1, 8, 3, 3});
    TestTensor out = make_tensor(DType::Float32, Layout::NCHW, {1, 2, 6, 6});
    const Params p{Op::DepthToSpace, Block(2), Order::CRD, 0};
    spacedepth::Plan a;
    ASSERT_TRUE(a.create(p, in.tensor, out.tensor).ok());
    spacedepth::Plan b = std::move(a);
    EXPECT_FALSE(a.ready());  // NOLINT(bugprone-use-after-move): moved-from plans are empty
    EXPECT_TRUE(b.ready());
    fill_unique(in);
    ASSERT_TRUE(b.run(in.tensor.data, out.tensor.data).ok());
    EXPECT_EQ(compare(out, expected_output(p, in, out)), "");
    // A failed create leaves the plan empty, not holding the old call.
    EXPECT_FALSE(b.create(Params{Op::DepthToSpace, Block(3), Order::CRD, 0}, in.tensor, out.tensor).ok());
    EXPECT_FALSE(b.ready());
}

}  // namespace

namespace {

// One-shot calls keep the last few plans per thread, keyed by the whole call but the data
// pointers, and by the switch points: a repeat is found, another shape or a switch-point change
// is not, and results stay right on new memory.
TEST(Plan, OneShotCallsReuseTheirPlans) {
    const Params p{Op::SpaceToDepth, Block(2), Order::CRD, 1};
    TestTensor in = make_tensor(DType::Float32, Layout::NCHW, {1, 3, 8, 8});
    TestTensor out = make_tensor(DType::Float32, Layout::NHWC, {1, 12, 4, 4});
    fill_unique(in);
    ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok());
    const uint64_t hits = spacedepth::detail::one_shot_plan_cache_hits();
    TestTensor in2 = in, out2 = out;  // the same shape on other memory
    in2.rebase();
    out2.rebase();
    fill_unique(in2, 5);
    ASSERT_TRUE(spacedepth::run(p, in2.tensor, out2.tensor).ok());
    EXPECT_EQ(spacedepth::detail::one_shot_plan_cache_hits(), hits + 1);
    EXPECT_EQ(compare(out2, expected_output(p, in2, out2)), "");
    // Other strides: another call.
    std::mt19937_64 rng(3);
    TestTensor padded = make_tensor(DType::Float32, Layout::NCHW, {1, 3, 8, 8}, &rng);
    fill_unique(padded, 9);
    ASSERT_TRUE(spacedepth::run(p, padded.tensor, out2.tensor).ok());
    EXPECT_EQ(spacedepth::detail::one_shot_plan_cache_hits(), hits + 1);
    EXPECT_EQ(compare(out2, expected_output(p, padded, out2)), "");
    // New switch points (as the tests and the tuner set them): plans made before are not reused.
    spacedepth::detail::set_switch_points(spacedepth::detail::switch_points());
    ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok());
    EXPECT_EQ(spacedepth::detail::one_shot_plan_cache_hits(), hits + 1);
    ASSERT_TRUE(spacedepth::run(p, in.tensor, out.tensor).ok());
    EXPECT_EQ(spacedepth::detail::one_shot_plan_cache_hits(), hits + 2);
    // A rejected call is never kept: the same bad call fails the same way every time.
    TestTensor bad = make_tensor(DType::Float32, Layout::NCHW, {1, 3, 7, 8});
    for (int i = 0; i < 2; i++) {
        EXPECT_EQ(spacedepth::run(p, bad.tensor, out.tensor).code(), SD_ERROR_SHAPE);
    }
    EXPECT_EQ(spacedepth::detail::one_shot_plan_cache_hits(), hits + 2);
}

// Serial SpaceToDepth of 2 x 2 blocks within one layout walks the output plane by plane under
// input_order_min_bytes (runtime/plan_cpu.cpp plane_by_plane), from 8 KiB, where its output rows
// are 64 bytes or more; blocks of 3, shorter rows, parallel plans and calls past the switch point
// keep the input's row order, and at 0 (the default) every call does. Each plan copies right.
TEST(PlanRules, SpaceToDepthWalksPlanesUnderTheSwitchPoint) {
    struct Expect {
        Call call;
        bool planes;               // with the switch point at 1 MiB
        bool vbmi_joined = false;  // rows under 64 bytes: the shuffle's joined rows on VBMI
    };
    const Params b2{Op::SpaceToDepth, Block(2), Order::DCR, 1}, b2_crd{Op::SpaceToDepth, Block(2), Order::CRD, 1};
    const Params b2_threads{Op::SpaceToDepth, Block(2), Order::DCR, 2}, b3{Op::SpaceToDepth, Block(3), Order::CRD, 1};
    const Expect expects[] = {
        {{b2, DType::Float32, Layout::NCHW, {1, 3, 64, 64}}, true},             // 48 KiB, 128-byte rows
        {{b2_crd, DType::UInt8, Layout::NCHW, {1, 3, 208, 208}}, true},         // 127 KiB, 104-byte rows
        {{b2_threads, DType::Float32, Layout::NCHW, {1, 3, 64, 64}}, true},     // under parallel_min_bytes
        {{b2, DType::Float32, Layout::NCHW, {1, 3, 256, 256}}, true},           // 768 KiB, serial
        {{b2_threads, DType::Float32, Layout::NCHW, {1, 3, 256, 256}}, false},  // parallel
        {{b2, DType::Float32, Layout::NCHW, {1, 2, 512, 512}}, false},          // 2 MiB: past it
        {{b3, DType::Float32, Layout::NCHW, {1, 3, 96, 96}}, false},            // blocks of 3
        {{b2, DType::UInt8, Layout::NCHW, {1, 16, 64, 64}}, false, true},       // 32-byte rows
        {{b2, DType::Float32, Layout::NCHW, {1, 1, 32, 32}}, false},            // 4 KiB
    };
    for (int64_t min_bytes : {int64_t{1} << 20, int64_t{0}}) {
        spacedepth::detail::SwitchPoints points = spacedepth::detail::switch_points();
        points.input_order_min_bytes = min_bytes;
        points.small_max_bytes = 0;
        points.parallel_min_bytes = 256 << 10;  // the calls above and below it, whatever a database says
        const ScopedSwitchPoints scoped(points);
        for (const Expect &e : expects) {
            int64_t bytes = 0;
            const spacedepth::detail::KernelPlan plan = planned_and_checked(e.call, &bytes);
            const std::string how = std::to_string(bytes) + " bytes, switch point " + std::to_string(min_bytes) + ": " +
                                    spacedepth::detail::describe_plan(plan);
            if (e.vbmi_joined && spacedepth::detail::best_shuffle_isa() == spacedepth::detail::ShuffleIsa::Vbmi) {
                EXPECT_EQ(plan.family, spacedepth::KernelFamily::Shuffle) << how;
                continue;
            }
            ASSERT_EQ(plan.family, spacedepth::KernelFamily::General) << how;
            EXPECT_EQ(plan.input_loop_order, !(e.planes && min_bytes > 0)) << how;
        }
    }
}

// A fused NHWC -> NCHW SpaceToDepth whose output rows are short (4 elements and up, within the
// ladder's unroll) walks the input's order too, so its dense channels come to slot 1 and a
// transpose takes the view (runtime/plan_cpu.cpp choose_family): the tile transpose from
// transpose_min_extent, the Halide one below it, whose tiles fit rows the tile's vector loop does
// not; rows of 3 stay with the general family. Each plan copies right.
TEST(PlanRules, FusedConversionsOfShortRowsTakeTheTranspose) {
    const spacedepth::detail::SwitchPoints &points = spacedepth::detail::switch_points();
    const bool tile = spacedepth::detail::best_tile_isa() != spacedepth::detail::TileIsa::Scalar;
    for (const int64_t side : {6, 8, 10, 12, 16, 22, 32}) {
        int64_t bytes = 0;
        const spacedepth::detail::KernelPlan plan = planned_and_checked({{Op::SpaceToDepth, Block(2), Order::DCR, 1},
                                                                         DType::Float32,
                                                                         Layout::NHWC,
                                                                         {1, 16, side, side},
                                                                         Layout::NCHW},
                                                                        &bytes);
        if (bytes < points.small_max_bytes) continue;
        const int64_t rows = side / 2;
        const std::string how = std::to_string(bytes) + " bytes: " + spacedepth::detail::describe_plan(plan);
        if (rows >= points.transpose_min_extent) {
            EXPECT_EQ(plan.family, tile ? spacedepth::KernelFamily::Tile : spacedepth::KernelFamily::Transpose) << how;
        } else if (rows >= 4) {
            EXPECT_EQ(plan.family, spacedepth::KernelFamily::Transpose) << how;
        } else {
            EXPECT_EQ(plan.family, spacedepth::KernelFamily::General) << how;
        }
    }
}

// The Halide kernels are serial loop nests; the executor runs a parallel plan's call as tasks of
// the two outermost slots' iterations on the pool (runtime/execute.cpp), each one to three kernel
// calls: whole slot-5 rows, and with the blocked layouts (both slots real, slot 4 of 45 and 4)
// tasks that start and end inside a row (64 KiB: 21 of 45 iterations; 100 KiB: 3 of 4). Each plan
// is checked against the reference; the pool is reached only by a parallel plan, never a serial one.
TEST(PlanRules, ParallelCallsRunAsTasksOnThePool) {
    const Params d2s{Op::DepthToSpace, Block(2), Order::DCR, 2}, s2d{Op::SpaceToDepth, Block(2), Order::CRD, 2};
    const Params s2d_b3{Op::SpaceToDepth, Block(3), Order::DCR, 2};
    const Call calls[] = {
        {d2s, DType::Float32, Layout::NHWC, {1, 64, 64, 64}},    // 1 MiB
        {s2d, DType::UInt8, Layout::NCHW, {1, 3, 418, 418}},     // 512 KiB, odd planes
        {d2s, DType::Float16, Layout::NCHW, {2, 12, 101, 103}},  // two images, odd rows
        {s2d_b3, DType::Float32, Layout::NHWC, {1, 3, 297, 201}},
        {d2s, DType::Float32, Layout::NCHWc4, {3, 16, 45, 47}},  // u64 kernel: slots 4, 5 of 45 x 3
        {s2d, DType::Float32, Layout::NCHWc4, {3, 4, 90, 94}},   // 33 KiB a slot-4 iteration
    };
    for (int threads : {2, 1}) {
        for (int64_t task_bytes : {int64_t{16} << 10, int64_t{64} << 10, int64_t{100} << 10, int64_t{1} << 40}) {
            spacedepth::detail::SwitchPoints points = spacedepth::detail::switch_points();
            points.parallel_min_bytes = 256 << 10;
            points.parallel_task_bytes = task_bytes;
            points.stream_min_bytes = points.stream_parallel_min_bytes = int64_t{1} << 62;
            const ScopedSwitchPoints scoped(points);
            for (Call c : calls) {
                c.p.threads = threads;
                const long long before = spacedepth::detail::pool_task_loops();
                int64_t bytes = 0;
                const spacedepth::detail::KernelPlan plan = planned_and_checked(c, &bytes);
                const std::string how = std::to_string(bytes) + " bytes, " + std::to_string(threads) +
                                        " threads, tasks of " + std::to_string(task_bytes) +
                                        " bytes: " + spacedepth::detail::describe_plan(plan);
                const bool halide = plan.family == spacedepth::KernelFamily::General ||
                                    plan.family == spacedepth::KernelFamily::Transpose;
                EXPECT_EQ(plan.parallel, threads == 2) << how;
                const bool tasks = plan.parallel && halide && task_bytes < (int64_t{1} << 40);
                EXPECT_EQ(spacedepth::detail::pool_task_loops() > before, tasks) << how;
            }
        }
    }
}

}  // namespace
