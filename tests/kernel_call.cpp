// Calls one 4-byte kernel of a separate build directly (ctest regenerate_*, tuning_database and
// emulated_demo_build; tests/build_kernel_call.sh compiles it), on 6-D views laid out as
// contract/kernel_contract.h says, with `parallel` false and true (the kernels run serially
// either way: the library's executor splits a parallel call), and checks every element.
// Written against the kernel's own header and the contract alone, so it links with two archives,
// the kernel and the Halide runtime, and needs no runtime library or other kernel.
//   -DKERNEL=<name>: the kernel (its header is <name>.h); any family takes the transposes.
//   -DGENERAL_FAMILY: also row copies with padded rows (the general family's run copies).
#include "HalideRuntime.h"

#define SPACEDEPTH_STR(x) #x
#define SPACEDEPTH_XSTR(x) SPACEDEPTH_STR(x)
#define SPACEDEPTH_HEADER(x) SPACEDEPTH_STR(x.h)
#include SPACEDEPTH_HEADER(KERNEL)

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

namespace {

constexpr int kRank = 6;  // contract/kernel_contract.h, kKernelRank

halide_buffer_t view(uint32_t *data, const halide_dimension_t (&dims)[kRank], halide_dimension_t *storage) {
    for (int i = 0; i < kRank; i++) storage[i] = dims[i];
    halide_buffer_t b = {};
    b.host = reinterpret_cast<uint8_t *>(data);
    b.type = halide_type_t(halide_type_uint, 32, 1);
    b.dimensions = kRank;
    b.dim = storage;
    return b;
}

// A rows x cols matrix, row stride in_row, copied to out[c * out_col + r * out_row]: slot 0 the
// output's dense dim, slot 1 the other, slots 2-5 unit dims. 0 when every element is right.
int copy(const char *what, int rows, int cols, int in_row, int out_row, int out_col, bool parallel) {
    const size_t in_size = static_cast<size_t>(rows) * in_row;
    const size_t out_size = static_cast<size_t>(rows - 1) * out_row + static_cast<size_t>(cols - 1) * out_col + 1;
    std::vector<uint32_t> in(in_size), out(out_size, 0xFFFFFFFFu);
    for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<uint32_t>(i * 2654435761u);
    const bool transposed = out_row == 1;
    const int big = static_cast<int>(in_size + out_size);
    // The output's dense dim first: the row index r for a transpose, the column c for a copy.
    const halide_dimension_t r_in = {0, rows, in_row, 0}, c_in = {0, cols, 1, 0};
    const halide_dimension_t r_out = {0, rows, out_row, 0}, c_out = {0, cols, out_col, 0};
    const halide_dimension_t unit = {0, 1, big, 0};
    const halide_dimension_t in_dims[kRank] = {
        transposed ? r_in : c_in, transposed ? c_in : r_in, unit, unit, unit, unit};
    const halide_dimension_t out_dims[kRank] = {
        transposed ? r_out : c_out, transposed ? c_out : r_out, unit, unit, unit, unit};
    halide_dimension_t in_storage[kRank], out_storage[kRank];
    halide_buffer_t in_buf = view(in.data(), in_dims, in_storage);
    halide_buffer_t out_buf = view(out.data(), out_dims, out_storage);
    const int status = KERNEL(nullptr, &in_buf, parallel, &out_buf);
    if (status != 0) {
        std::printf("FAIL: %s %d x %d (parallel %d): the kernel returned %d\n", what, rows, cols, parallel, status);
        return 1;
    }
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
            const uint32_t want = in[static_cast<size_t>(r) * in_row + c];
            const uint32_t got = out[static_cast<size_t>(r) * out_row + static_cast<size_t>(c) * out_col];
            if (got != want) {
                std::printf("FAIL: %s %d x %d (parallel %d): element (%d, %d) is %u, want %u\n", what, rows, cols,
                            parallel, r, c, got, want);
                return 1;
            }
        }
    }
    std::printf("ok: %s, %s %d x %d, parallel %d\n", SPACEDEPTH_XSTR(KERNEL), what, rows, cols, parallel);
    return 0;
}

}  // namespace

int main() {
    int failures = 0;
    // Whole tiles with ragged edges, a matrix smaller than a tile, and one large enough for
    // several parallel tasks.
    for (const auto &[rows, cols] : {std::pair{37, 23}, std::pair{3, 5}, std::pair{700, 513}}) {
        for (bool parallel : {false, true}) {
            failures += copy("transpose", rows, cols, cols, 1, rows, parallel);
#ifdef GENERAL_FAMILY
            failures += copy("row copy", rows, cols, cols + 3, cols, 1, parallel);
#endif
        }
    }
    return failures == 0 ? 0 : 1;
}
