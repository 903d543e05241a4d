// Halide's own errors reach the caller as a return code and a message, never abort(): the
// runtime's strong halide_error() replaces Halide's default handler (which aborts).
#include "runtime/block_shuffle.h"
#include "runtime/halide_errors.h"
#include "runtime/tile_transpose.h"

#include "HalideRuntime.h"
#include "spacedepth_checked_small_u8.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "spacedepth/spacedepth.h"
#include "tests/harness.h"

namespace {

TEST(HalideErrors, KernelErrorIsCapturedNotAborted) {
    // An input smaller than the output: the kernel's own bounds check fails before any write. The
    // library's kernels are built without Halide's checks (the runtime validates first,
    // generators/CMakeLists.txt); this checked build of the small family keeps them.
    std::vector<uint8_t> in(4, 1), out(8, 0xA5);
    halide_dimension_t in_dims[6], out_dims[6];
    for (int i = 0; i < 6; i++) {
        in_dims[i] = out_dims[i] = halide_dimension_t(0, 1, 1);
    }
    in_dims[0].extent = 4;
    out_dims[0].extent = 8;
    halide_buffer_t in_buf{}, out_buf{};
    in_buf.host = in.data();
    out_buf.host = out.data();
    in_buf.type = out_buf.type = halide_type_t(halide_type_uint, 8);
    in_buf.dimensions = out_buf.dimensions = 6;
    in_buf.dim = in_dims;
    out_buf.dim = out_dims;

    spacedepth::detail::ErrorSink sink;
    const int rc = spacedepth_checked_small_u8(&sink, &in_buf, false, &out_buf);
    EXPECT_NE(rc, 0);
    EXPECT_NE(sink.message.find("Input buffer input is accessed at 7, which is beyond the max (3) in dimension 0"),
              std::string::npos)
        << sink.message;
    for (uint8_t b : out) EXPECT_EQ(b, 0xA5) << "nothing written after a kernel error";
    EXPECT_EQ(spacedepth::detail::take_orphan_halide_errors(), "");
}

std::atomic<int> malloc_calls{0};
void *failing_malloc(void *, size_t) {
    malloc_calls++;
    return nullptr;
}

TEST(HalideErrors, KernelsNeverAllocate) {
    // A heap allocation that fails inside a kernel could fail in one task of a parallel call after
    // other tasks wrote their rows: a partial output. So no CPU kernel allocates: the transpose
    // tile has a fixed size (bound_storage) and lives on the stack. With an allocator that always
    // fails, every family, serial and parallel, must still run and be right.
    using namespace testing_support;
    using spacedepth::Op;
    struct Case {
        Op op;
        Layout in_layout, out_layout;
        spacedepth::Dims in_dims;
        int threads;
        const char *family;
        DType dtype = DType::Float32;
    };
    const spacedepth::detail::ShuffleIsa isa = spacedepth::detail::best_shuffle_isa();
    const bool rules_take_shuffle =
        isa == spacedepth::detail::ShuffleIsa::Vbmi || isa == spacedepth::detail::ShuffleIsa::Avx2;
    // The runtime's tile transpose takes 4-byte transposes where it has a vector loop.
    const char *const f32_transpose =
        spacedepth::detail::best_tile_isa() != spacedepth::detail::TileIsa::Scalar ? "tile" : "transpose";
    const Case cases[] = {
        {Op::DepthToSpace, Layout::NCHW, Layout::NHWC, {1, 64, 33, 35}, 1, "transpose", DType::UInt16},  // tails
        {Op::DepthToSpace, Layout::NCHW, Layout::NHWC, {2, 64, 64, 70}, 2, "transpose", DType::UInt16},  // parallel
        {Op::DepthToSpace, Layout::NCHW, Layout::NHWC, {1, 64, 33, 35}, 1, f32_transpose},
        {Op::DepthToSpace, Layout::NCHW, Layout::NHWC, {2, 64, 64, 70}, 2, f32_transpose},
        {Op::SpaceToDepth, Layout::NHWC, Layout::NHWC, {2, 16, 128, 128}, 2, "general"},
        {Op::SpaceToDepth, Layout::NHWC, Layout::NHWC, {1, 4, 4, 4}, 0, "small"},  // 256 B: under any small_max_bytes
        // The runtime's microkernel, where the rules take it (AVX2 and AVX-512 VBMI).
        {Op::SpaceToDepth, Layout::NCHW, Layout::NCHW, {1, 3, 4, 6}, 0, rules_take_shuffle ? "shuffle" : "small"},
    };
    for (const Case &c : cases) {
        spacedepth::Dims out_dims;
        const spacedepth::Params p{c.op, spacedepth::Block(2), spacedepth::Order::DCR, c.threads};
        ASSERT_TRUE(spacedepth::output_dims(p, c.in_dims, &out_dims).ok());
        TestTensor in = make_tensor(c.dtype, c.in_layout, c.in_dims);
        TestTensor out = make_tensor(c.dtype, c.out_layout, out_dims);
        fill_unique(in);
        const std::string plan = spacedepth::describe_call(p, in.tensor, out.tensor);
        ASSERT_EQ(plan.find(c.family), 0u) << plan;
        malloc_calls = 0;
        halide_malloc_t saved = halide_set_custom_malloc(failing_malloc);
        const spacedepth::Status s = spacedepth::run(p, in.tensor, out.tensor);
        halide_set_custom_malloc(saved);
        EXPECT_EQ(malloc_calls.load(), 0) << plan;
        ASSERT_TRUE(s.ok()) << plan << ": " << s.message();
        EXPECT_EQ(compare(out, expected_output(p, in, out)), "") << plan;
    }
}

}  // namespace
