// Halide's own errors reach the caller as a return code and a message, never abort(): the
// runtime's strong halide_error() replaces Halide's default handler (which aborts).
#include "runtime/halide_errors.h"

#include "HalideRuntime.h"
#include "spacedepth_permute_copy_u8.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(HalideErrors, KernelErrorIsCapturedNotAborted) {
    // An input smaller than the output: the kernel's own bounds check fails before any write.
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
    const int rc = spacedepth_permute_copy_u8(&sink, &in_buf, false, &out_buf);
    EXPECT_NE(rc, 0);
    EXPECT_NE(sink.message.find("Input buffer input is accessed at 7, which is beyond the max (3) in dimension 0"), std::string::npos)
        << sink.message;
    for (uint8_t b : out) EXPECT_EQ(b, 0xA5) << "nothing written after a kernel error";
    EXPECT_EQ(spacedepth::detail::take_orphan_halide_errors(), "");
}

}  // namespace
