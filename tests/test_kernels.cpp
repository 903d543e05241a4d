// Every registered kernel (runtime/kernel_registry.h), called directly on 6-D views of its family,
// in the manner of XNNPACK's microkernel tests: a broken kernel is reported by its own name, not
// as a wrong op result. Each ISA path of a multi-target kernel is called by itself (as XNNPACK's
// ISA-checked microkernel tests do), where this CPU runs it; the general family's views are one
// per row of the CPU ladder (contract/cpu_ladder_table.h), built from the row's terms, with tails
// and odd strides. The expected output is a plain strided copy computed here, element by element,
// from the view's strides; nothing of the runtime's planning is used. Host kernels run here; the
// GPU kernels run the whole matrix on PoCL (ctest opencl_pocl) and on a GPU.
#include "contract/cpu_ladder_table.h"
#include "runtime/cpu_probe.h"
#include "runtime/device_backend.h"
#include "runtime/halide_errors.h"
#include "runtime/isa.h"
#include "runtime/kernel_registry.h"
#include "runtime/vect_c_regroup.h"

#include "HalideRuntime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using spacedepth::Device;
using spacedepth::KernelFamily;
using spacedepth::KernelFn;
using spacedepth::kKernelRank;
using spacedepth::detail::kKernelPaths;
using spacedepth::detail::kRegisteredKernels;
using spacedepth::detail::RegisteredKernel;
namespace ladder = spacedepth::ladder;

constexpr uint8_t kSentinel = 0xA5;

// A 6-D copy: extents and per-slot strides (in elements) of both sides.
struct KernelView {
    std::string name;
    int64_t extent[kKernelRank];
    int64_t in_stride[kKernelRank];
    int64_t out_stride[kKernelRank];
};

int64_t span(const int64_t *extent, const int64_t *stride) {
    int64_t last = 0;
    for (int i = 0; i < kKernelRank; i++) last += (extent[i] - 1) * stride[i];
    return last + 1;
}

// Dense strides for `extent` in the slot order `order` (innermost first).
void dense(const int64_t *extent, std::initializer_list<int> order, int64_t *stride) {
    int64_t s = 1;
    for (int k : order) {
        stride[k] = s;
        s *= extent[k];
    }
}

// The view with `slot` a unit slot as the planner pads them: extent 1, strides 0.
KernelView with_unit_slot(KernelView v, int slot) {
    v.name += ", unit slot " + std::to_string(slot);
    v.extent[slot] = 1;
    v.in_stride[slot] = v.out_stride[slot] = 0;
    return v;
}

KernelView make_view(const std::string &name, std::initializer_list<int64_t> extents,
                     std::initializer_list<int> in_order, std::initializer_list<int> out_order) {
    KernelView v{name, {}, {}, {}};
    int i = 0;
    for (int64_t e : extents) v.extent[i++] = e;
    for (; i < kKernelRank; i++) v.extent[i] = 1;
    dense(v.extent, in_order, v.in_stride);
    dense(v.extent, out_order, v.out_stride);
    return v;
}

// Views of the shapes each family is sent (contract/kernel_contract.h): the general family's
// run copies, interleaves, deinterleaves and gathers; the transpose family's dense-output,
// dense-input-along-slot-1 views; and small tensors.
std::vector<KernelView> views_for(KernelFamily family) {
    switch (family) {
    case KernelFamily::General:
        return {
            make_view("run copy", {67, 3, 5, 1, 2, 3}, {0, 1, 2, 3, 4, 5}, {0, 2, 1, 3, 5, 4}),
            make_view("interleave by 2", {2, 37, 2, 5, 3, 2}, {1, 3, 0, 2, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("interleave by 3", {3, 19, 3, 4, 1, 2}, {1, 3, 0, 2, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("deinterleave by 2", {45, 2, 2, 3, 2, 2}, {1, 0, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("short runs (3 units, 2 rows)", {3, 41, 2, 3, 1, 2}, {0, 2, 1, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("pixel transpose 2x2", {2, 2, 35, 3, 2, 1}, {2, 0, 1, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("gather", {29, 7, 3, 2, 2, 3}, {3, 1, 0, 2, 5, 4}, {0, 1, 2, 3, 4, 5}),
            make_view("strided output", {5, 4, 3, 2, 3, 2}, {0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}),
        };
    case KernelFamily::Transpose:
        return {
            make_view("tile-sized transpose", {32, 32, 2, 1, 1, 2}, {1, 0, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("transpose with tails", {37, 45, 3, 1, 2, 1}, {1, 0, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("transpose below one tile", {5, 9, 2, 2, 1, 1}, {1, 0, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
        };
    case KernelFamily::Tile: {
        // The transpose family's views, then tiles of 16 and 8 with overlapped last tiles along
        // each dim (22 = 16 + 8, 30 = 16 + 16, 9-15 = 8 + 8), whole tiles in planes 2^k apart,
        // input planes walked 16 at a time (slot 0 of 32 and 48 stepping over them),
        // and views the tiles do not take (a plane under 8 x 8, an output not dense along slot
        // 0), which its scalar loop copies.
        std::vector<KernelView> views = views_for(KernelFamily::Transpose);
        for (const KernelView &v : {
                 make_view("tiles of 16 and 8", {22, 30, 2, 1, 1, 2}, {1, 0, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
                 make_view("tiles of 8", {9, 15, 3, 1, 1, 1}, {1, 0, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
                 make_view("fused D2S pixel rows", {32, 40, 2, 3, 1, 1}, {1, 3, 0, 2, 4, 5}, {0, 2, 1, 3, 4, 5}),
                 make_view("fused S2D planes", {48, 32, 2, 3, 1, 1}, {1, 0, 2, 3, 4, 5}, {0, 3, 1, 2, 4, 5}),
                 make_view("fused D2S planes by 16", {48, 20, 2, 2, 1, 1}, {1, 3, 2, 0, 4, 5}, {0, 1, 2, 3, 4, 5}),
                 make_view("plane of 8 x 8", {8, 8, 2, 2, 1, 1}, {1, 0, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
                 make_view("plane under 8", {7, 20, 2, 1, 1, 1}, {1, 0, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
             }) {
            views.push_back(v);
        }
        for (const KernelView &v : views_for(KernelFamily::General)) views.push_back(v);
        return views;
    }
    case KernelFamily::Regroup: {
        // NCHW_VECT_C CRD 2 x 2 (runtime/vect_c_regroup.h): SpaceToDepth's slots (bw, bh, w, h,
        // lanes, groups) and DepthToSpace's (lanes, bw, w, bh, h, groups), rows of 16 pixels and
        // with masked tails (5, 21, 45), tails of 8 (a 32-byte half stored plainly: 8, 24), the
        // lanes or block rows in each of slots 3-5; then views it copies with its plain loop.
        std::vector<KernelView> views = {
            make_view("S2D rows of 16", {2, 2, 16, 3, 4, 2}, {4, 0, 2, 1, 3, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("S2D rows of 45", {2, 2, 45, 2, 4, 3}, {4, 0, 2, 1, 3, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("S2D rows of 5, lanes in slot 5", {2, 2, 5, 3, 2, 4}, {5, 0, 2, 1, 3, 4}, {0, 1, 2, 3, 5, 4}),
            make_view("S2D rows of 21, lanes in slot 3", {2, 2, 21, 4, 3, 1}, {3, 0, 2, 1, 4, 5}, {0, 1, 2, 4, 3, 5}),
            make_view("S2D rows of 8", {2, 2, 8, 3, 4, 2}, {4, 0, 2, 1, 3, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("S2D rows of 24", {2, 2, 24, 2, 4, 1}, {4, 0, 2, 1, 3, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("D2S rows of 16", {4, 2, 16, 2, 3, 2}, {1, 3, 2, 4, 0, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("D2S rows of 45", {4, 2, 45, 2, 2, 3}, {1, 3, 2, 4, 0, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("D2S rows of 5, block rows in slot 5", {4, 2, 5, 3, 2, 2}, {1, 5, 2, 3, 0, 4},
                      {0, 1, 2, 5, 3, 4}),
            make_view("D2S rows of 21, block rows in slot 4", {4, 2, 21, 3, 2, 1}, {1, 4, 2, 3, 0, 5},
                      {0, 1, 2, 4, 3, 5}),
            make_view("D2S rows of 8", {4, 2, 8, 2, 3, 2}, {1, 3, 2, 4, 0, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("D2S rows of 24", {4, 2, 24, 2, 2, 1}, {1, 3, 2, 4, 0, 5}, {0, 1, 2, 3, 4, 5}),
        };
        // One channel group: the planner pads the slot (as for C = 4).
        views.push_back(with_unit_slot(views[0], 5));
        views.push_back(with_unit_slot(views[6], 5));  // D2S rows of 16
        for (const KernelView &v : views_for(KernelFamily::General)) views.push_back(v);
        return views;
    }
    case KernelFamily::Small:
        return {
            make_view("small run copy", {24, 2, 2, 1, 1, 1}, {0, 2, 1, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("small interleave", {2, 9, 2, 2, 1, 1}, {1, 3, 0, 2, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("small gather", {3, 5, 2, 2, 2, 1}, {2, 1, 0, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
        };
    default:  // a family that takes any view, as the general family does
        return views_for(KernelFamily::General);
    }
}

// Runs `fn`, a kernel of `width`-byte elements, on `view` and returns what is wrong, or "". The
// tensors start `offset` bytes past a 64-byte boundary (streaming stores take aligned vectors).
std::string check(KernelFn fn, int width, const KernelView &v, bool parallel, int offset = 0) {
    const int64_t w = width;
    struct Aligned64 {
        alignas(64) uint8_t bytes[64];
    };
    const int64_t in_bytes = span(v.extent, v.in_stride) * w, out_bytes = span(v.extent, v.out_stride) * w;
    std::vector<Aligned64> in_block((in_bytes + offset + 63) / 64), out_block((out_bytes + offset + 63) / 64);
    uint8_t *const in_host = in_block.front().bytes + offset, *const out_host = out_block.front().bytes + offset;
    std::vector<uint8_t> in(in_bytes), out(out_bytes, kSentinel);
    std::mt19937_64 rng(1234);
    for (uint8_t &b : in) b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> want(out.size(), kSentinel);
    int64_t index[kKernelRank] = {};
    while (true) {
        int64_t i = 0, o = 0;
        for (int k = 0; k < kKernelRank; k++) {
            i += index[k] * v.in_stride[k];
            o += index[k] * v.out_stride[k];
        }
        std::memcpy(&want[o * w], &in[i * w], w);
        int k = 0;
        for (; k < kKernelRank && ++index[k] == v.extent[k]; k++) index[k] = 0;
        if (k == kKernelRank) break;
    }

    halide_dimension_t in_dims[kKernelRank], out_dims[kKernelRank];
    for (int k = 0; k < kKernelRank; k++) {
        in_dims[k] = halide_dimension_t(0, static_cast<int32_t>(v.extent[k]), static_cast<int32_t>(v.in_stride[k]));
        out_dims[k] = halide_dimension_t(0, static_cast<int32_t>(v.extent[k]), static_cast<int32_t>(v.out_stride[k]));
    }
    halide_buffer_t in_buf{}, out_buf{};
    std::memcpy(in_host, in.data(), in.size());
    std::memcpy(out_host, out.data(), out.size());
    in_buf.host = in_host;
    out_buf.host = out_host;
    in_buf.type = out_buf.type = halide_type_t(halide_type_uint, static_cast<uint8_t>(8 * w));
    in_buf.dimensions = out_buf.dimensions = kKernelRank;
    in_buf.dim = in_dims;
    out_buf.dim = out_dims;
    spacedepth::detail::ErrorSink sink;
    if (int rc = fn(&sink, &in_buf, parallel, &out_buf); rc != 0) {
        return "returned " + std::to_string(rc) + ": " + sink.message;
    }
    std::memcpy(out.data(), out_host, out.size());
    for (size_t b = 0; b < out.size(); b++) {
        if (out[b] != want[b]) {
            return "byte " + std::to_string(b) + " of the output is " + std::to_string(out[b]) + ", want " +
                   std::to_string(want[b]);
        }
    }
    return "";
}

class Kernels : public testing::TestWithParam<RegisteredKernel> {};

TEST_P(Kernels, CopiesEveryViewOfItsFamily) {
    const RegisteredKernel &k = GetParam();
    for (const KernelView &v : views_for(k.family)) {
        for (bool parallel : {false, true}) {
            if (parallel && k.family == KernelFamily::Small) continue;  // serial by design
            EXPECT_EQ(check(k.fn, k.width, v, parallel), "")
                << k.name << " on the " << v.name << " view" << (parallel ? ", parallel" : ", serial");
        }
    }
}

// The host kernels and their streaming-store twins.
std::vector<RegisteredKernel> host_kernels() {
    std::vector<RegisteredKernel> host;
    for (const RegisteredKernel &k : kRegisteredKernels) {
        if (k.device != Device::Host) continue;
        host.push_back(k);
        if (k.stream != nullptr) host.push_back(*k.stream);
    }
    // The runtime's tile transpose and regroup, called as the kernels are.
    host.push_back(spacedepth::detail::kTileKernel);
    host.push_back(spacedepth::detail::kTileStreamKernel);
    host.push_back(spacedepth::detail::kRegroupKernel);
    host.push_back(spacedepth::detail::kRegroupStreamKernel);
    return host;
}

std::string kernel_name(const testing::TestParamInfo<RegisteredKernel> &info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Registered, Kernels, testing::ValuesIn(host_kernels()), kernel_name);

// ---- The tile transpose (runtime/tile_transpose.h) on each instruction-set path this CPU runs
// (its kernel entries take the best), plain and streaming, serial and parallel, with both tensors
// on a 64-byte line and 4 and 32 bytes past one (streaming stores only aligned vectors).

// A microkernel's path (select(stream) points `fn` at it) on every view of its family: plain and
// streaming stores, serial and parallel, both tensors on a line and 4 and 32 bytes past one.
template <class Select>
void check_microkernel_path(KernelFn fn, int width, KernelFamily family, const std::string &path,
                            const Select &select) {
    for (bool stream : {false, true}) {
        select(stream);
        for (const KernelView &v : views_for(family)) {
            for (bool parallel : {false, true}) {
                for (int offset : {0, 4, 32}) {
                    EXPECT_EQ(check(fn, width, v, parallel, offset), "")
                        << path << (stream ? " streaming" : "") << " on the " << v.name << " view"
                        << (parallel ? ", parallel" : ", serial") << ", " << offset << " bytes past a line";
                }
            }
        }
    }
}

spacedepth::detail::TileIsa tile_path = spacedepth::detail::TileIsa::Scalar;
bool tile_streams = false;
int tile_on_path(void const *user_context, halide_buffer_t *in, bool parallel, halide_buffer_t *out) {
    return spacedepth::detail::run_tile_transpose(tile_path, tile_streams, user_context, in, parallel, out);
}

TEST(TileKernel, EveryPathCopiesItsViewsAtEveryAlignment) {
    using spacedepth::detail::TileIsa;
    const TileIsa best = spacedepth::detail::best_tile_isa();
    std::vector<TileIsa> paths = {TileIsa::Scalar};
    if (best == TileIsa::Neon) paths.push_back(TileIsa::Neon);
    if (best == TileIsa::Avx2 || best == TileIsa::Avx512) paths.push_back(TileIsa::Avx2);
    if (best == TileIsa::Avx512) paths.push_back(TileIsa::Avx512);
    for (TileIsa isa : paths) {
        check_microkernel_path(tile_on_path, 4, KernelFamily::Tile, spacedepth::detail::tile_isa_name(isa),
                               [&](bool stream) {
                                   tile_path = isa;
                                   tile_streams = stream;
                               });
    }
}

// The regroup (runtime/vect_c_regroup.h) on each path this CPU runs, as the tile transpose above;
// its views are recognised as the planner's slots for the layout, so each pattern view takes the
// vector loop where the CPU has VBMI.
spacedepth::detail::RegroupIsa regroup_path = spacedepth::detail::RegroupIsa::Scalar;
bool regroup_streams = false;
int regroup_on_path(void const *user_context, halide_buffer_t *in, bool parallel, halide_buffer_t *out) {
    return spacedepth::detail::run_vect_c_regroup(regroup_path, regroup_streams, user_context, in, parallel, out);
}

TEST(RegroupKernel, EveryPathCopiesItsViewsAtEveryAlignment) {
    using spacedepth::detail::RegroupIsa;
    std::vector<RegroupIsa> paths = {RegroupIsa::Scalar};
    const RegroupIsa best = spacedepth::detail::best_regroup_isa();
    if (best == RegroupIsa::Avx2 || best == RegroupIsa::Vbmi) paths.push_back(RegroupIsa::Avx2);
    if (best == RegroupIsa::Vbmi) paths.push_back(RegroupIsa::Vbmi);
    int patterns = 0;
    for (const KernelView &v : views_for(KernelFamily::Regroup)) {
        spacedepth::detail::DimList slots;
        for (int d = 0; d < kKernelRank; d++) slots.push_back({v.extent[d], v.in_stride[d], v.out_stride[d]});
        patterns += spacedepth::detail::regroup_kind(slots) != spacedepth::detail::RegroupKind::None;
    }
    EXPECT_EQ(patterns, 14) << "every S2D and D2S view above is the regroup's pattern";
    for (RegroupIsa isa : paths) {
        check_microkernel_path(regroup_on_path, 1, KernelFamily::Regroup, spacedepth::detail::regroup_isa_name(isa),
                               [&](bool stream) {
                                   regroup_path = isa;
                                   regroup_streams = stream;
                               });
    }
}

// ---- Every path of every host kernel, and the general family's views one per ladder row.

// One compiled path of a host kernel: a multi-target kernel's paths (kKernelPaths), or the
// kernel itself where it was built for one target (ARM, a host-target-only build).
struct PathUnderTest {
    RegisteredKernel kernel;
    std::string target;
    KernelFn fn;
};

std::vector<PathUnderTest> host_kernel_paths() {
    std::vector<PathUnderTest> paths;
    for (const RegisteredKernel &k : host_kernels()) {
        const size_t before = paths.size();
        for (const spacedepth::detail::KernelPath &registered : kKernelPaths) {
            if (registered.kernel != nullptr && std::string(registered.kernel) == k.name) {
                paths.push_back({k, registered.target, registered.fn});
            }
        }
        if (paths.size() == before) paths.push_back({k, "", k.fn});  // one target: the one this CPU runs
    }
    return paths;
}

// Native vector bytes of a Halide target: 64 with AVX-512, 32 with AVX2, 16 otherwise (SSE, the
// x86-64 baseline, NEON): where the ladder's widths start.
int vector_bytes(const std::string &target) {
    if (target.find("avx512") != std::string::npos) return 64;
    if (target.find("-avx2") != std::string::npos) return 32;
    return 16;
}

std::string row_name(const ladder::Row &r) {
    std::string name = r.pattern;
    for (int i = 0; i < r.param_count; i++) name += (i ? "," : " ") + std::to_string(r.params[i]);
    return name;
}

// Whether an extent meets a row's width terms on its slot at some width its group tries on a
// target with `vec`-element vectors: run copies from one vector up, the pixel patterns one
// vector, the other groups any power of two up to two vectors (a LadderShape's lists lie there).
bool meets_width_terms(ladder::Widths group, const ladder::Row &r, int slot, int64_t e, int vec) {
    const int widest = group == ladder::Widths::RunFactors || group == ladder::Widths::Vector ? vec : 2 * vec;
    const int narrowest = group == ladder::Widths::RunFactors || group == ladder::Widths::Vector ? vec : 1;
    for (int w = widest; w >= narrowest; w /= 2) {
        bool ok = true;
        for (int i = 0; i < r.term_count; i++) {
            const ladder::Term &t = r.terms[i];
            if (t.slot != slot || t.unit != ladder::Unit::Widths || t.of != ladder::Of::Extent) continue;
            ok = ok && ladder::meets(t.test, e, int64_t{t.value} * w);
        }
        if (ok) return true;
    }
    return false;
}

// The output strides leave no two elements on one address.
bool output_is_injective(const KernelView &v) {
    const int64_t n = span(v.extent, v.out_stride);
    std::vector<bool> seen(static_cast<size_t>(n), false);
    int64_t index[kKernelRank] = {};
    while (true) {
        int64_t o = 0;
        for (int k = 0; k < kKernelRank; k++) o += index[k] * v.out_stride[k];
        if (seen[static_cast<size_t>(o)]) return false;
        seen[static_cast<size_t>(o)] = true;
        int k = 0;
        for (; k < kKernelRank && ++index[k] == v.extent[k]; k++) index[k] = 0;
        if (k == kKernelRank) return true;
    }
}

// Views that meet a row's terms, for a target with vectors of `vec` elements: the constants as
// the row states them, the slot its widths test at one vector, with a tail, and (where the row
// allows) long enough for the vector loop's steady state; the other extents small; the strides
// the row leaves free placed after the ones it fixes, one element apart (odd strides, gaps the
// kernel must not write), the outermost slot first, so that slot 0's input stride, when free, is
// the largest (a gather) and its output stride, when free, is not 1 (the scalar row).
std::vector<KernelView> views_for_row(ladder::Widths group, const ladder::Row &r, int vec) {
    // The row's constants; -1 where it leaves a stride free.
    int64_t extent[kKernelRank], in[kKernelRank], out[kKernelRank];
    bool extent_fixed[kKernelRank] = {};
    int width_slot = -1;
    for (int k = 0; k < kKernelRank; k++) {
        extent[k] = k < spacedepth::kCpuPatternSlots ? 3 : 2;
        in[k] = out[k] = -1;
    }
    for (int i = 0; i < r.term_count; i++) {
        const ladder::Term &t = r.terms[i];
        if (t.unit == ladder::Unit::Widths) {
            width_slot = t.slot;
            continue;
        }
        int64_t *q = t.of == ladder::Of::InStride ? in : t.of == ladder::Of::OutStride ? out : extent;
        q[t.slot] = t.test == ladder::Test::Lt ? t.value - 1 : t.value;  // Eq, Ge: the value itself
        extent_fixed[t.slot] |= t.of == ladder::Of::Extent;
    }
    std::vector<int64_t> slot_extents = {0};  // no width slot: one view
    if (width_slot >= 0) {
        slot_extents.clear();
        for (int64_t e : {int64_t{vec}, int64_t{vec} + vec / 2 + 1, int64_t{vec} / 2 + 1, 17 * int64_t{vec} + 3}) {
            if (e >= 1 && meets_width_terms(group, r, width_slot, e, vec) &&
                std::find(slot_extents.begin(), slot_extents.end(), e) == slot_extents.end()) {
                slot_extents.push_back(e);
            }
        }
    }
    // Free strides: past the highest element the fixed ones reach, plus a gap of one element.
    auto place = [](const int64_t *fixed, const int64_t *extents, int64_t *strides) {
        int64_t next = 1;
        for (int k = 0; k < kKernelRank; k++) {
            if (fixed[k] >= 0) {
                strides[k] = fixed[k];
                next += (extents[k] - 1) * fixed[k];
            }
        }
        for (int k = kKernelRank - 1; k >= 0; k--) {
            if (fixed[k] < 0) {
                strides[k] = next + 1;
                next = strides[k] * extents[k];
            }
        }
    };
    std::vector<KernelView> views;
    for (int64_t e : slot_extents) {
        KernelView v{row_name(r), {}, {}, {}};
        std::copy(extent, extent + kKernelRank, v.extent);
        if (width_slot >= 0) {
            v.extent[width_slot] = e;
            v.name += ", slot " + std::to_string(width_slot) + " of " + std::to_string(e);
            if (e > 4 * int64_t{vec}) {  // the steady-state view: the free slots at 2, to keep it small
                for (int k = 0; k < kKernelRank; k++) {
                    if (k != width_slot && !extent_fixed[k]) v.extent[k] = std::min<int64_t>(v.extent[k], 2);
                }
            }
        }
        place(in, v.extent, v.in_stride);
        place(out, v.extent, v.out_stride);
        views.push_back(v);
    }
    return views;
}

class KernelPaths : public testing::TestWithParam<PathUnderTest> {};

TEST_P(KernelPaths, CopyEveryViewOfTheirFamily) {
    const PathUnderTest &p = GetParam();
    const std::string target = p.target.empty() ? spacedepth::detail::cpu_kernel_target() : p.target;
    if (!p.target.empty() &&
        spacedepth::cpu_probe::select_target(p.target, spacedepth::detail::cpu_features()) == "none") {
        GTEST_SKIP() << "this CPU cannot run " << p.target;
    }
    const int vec = std::max(1, vector_bytes(target) / p.kernel.width);
    std::vector<KernelView> views = views_for(p.kernel.family);
    if (p.kernel.family == KernelFamily::General) {
        // Every row's views: a row an earlier one shadows at this path's widths (u32 short runs
        // of 4 units are run copies on 4-lane vectors) still gets its views copied, by that row.
        for (const ladder::Group &g : ladder::kLadder) {
            for (const ladder::Row &r : g) {
                for (const KernelView &v : views_for_row(g.widths, r, vec)) {
                    ASSERT_TRUE(output_is_injective(v)) << "the row " << v.name << " gives an overlapping output";
                    views.push_back(v);
                }
            }
        }
    }
    for (const KernelView &v : views) {
        for (bool parallel : {false, true}) {
            if (parallel && p.kernel.family == KernelFamily::Small) continue;  // serial by design
            EXPECT_EQ(check(p.fn, p.kernel.width, v, parallel), "")
                << p.kernel.name << " path " << target << " on the " << v.name << " view"
                << (parallel ? ", parallel" : ", serial");
        }
    }
}

// spacedepth_general_u8_avx2: the kernel and the ISA rung of its path ("only" for one target).
std::string path_name(const testing::TestParamInfo<PathUnderTest> &info) {
    std::string isa = info.param.target.empty() ? "only" : "baseline";
    for (const char *level : spacedepth::cpu_probe::kIsaLevels) {
        if (info.param.target.find(std::string("-") + level) != std::string::npos) isa = level;
    }
    return std::string(info.param.kernel.name) + "_" + isa;
}

INSTANTIATE_TEST_SUITE_P(Host, KernelPaths, testing::ValuesIn(host_kernel_paths()), path_name);

// Every row of the ladder is some view's pattern at some native vector (4 to 64 elements): no
// row is shadowed by the rows before it on every target, and the views the path tests build for
// a row are that row's (or a width variant's) where the vectors allow.
TEST(LadderTable, EveryRowIsTheFirstMatchOfItsViews) {
    int rows = 0;
    for (const ladder::Group &g : ladder::kLadder) {
        for (const ladder::Row &r : g) {
            rows++;
            bool reached = false;
            for (int vec : {4, 8, 16, 32, 64}) {
                for (const KernelView &v : views_for_row(g.widths, r, vec)) {
                    EXPECT_TRUE(output_is_injective(v)) << "the row " << v.name << " gives an overlapping output";
                    reached |= ladder::same_pattern(ladder::pattern_of(v.in_stride, v.out_stride, v.extent, vec), r);
                }
            }
            EXPECT_TRUE(reached) << "no view of the row " << row_name(r)
                                 << " reaches it: an earlier row takes them all";
        }
    }
    EXPECT_GE(rows, 40) << "the ladder table lost its rows";
}

// The planner's pattern limits (plan_cpu.cpp's loop order and family choice) follow the rows: the
// longest block digit a row unrolls in slot 0 (interleaves by up to 8) and the largest constant
// input stride a row deinterleaves there (the [C, 4x4] transpose of D2S NHWC CRD, 16). A row that
// moves either changes which views the planner sends where: re-measure those (bench/) with it.
TEST(LadderTable, PlannerLimitsAreTheRowsOfToday) {
    EXPECT_EQ(ladder::kMaxUnrolledExtent, 8);
    EXPECT_EQ(ladder::kMaxDeinterleaveStride, 16);
}

// Every kernel's name says its device, family and width: the registry and the build agree.
TEST(KernelRegistry, NamesSayDeviceFamilyAndWidth) {
    for (const RegisteredKernel *k : spacedepth::detail::linked_kernels()) {
        const std::string device =
            k->device == Device::Host ? "" : std::string(spacedepth::device_name(k->device)) + "_";
        EXPECT_EQ(std::string(k->name), "spacedepth_" + device + spacedepth::kernel_family_name(k->family) + "_u" +
                                            std::to_string(8 * k->width));
    }
}

// The tests link every GPU component built, and libspacedepth reaches each of them.
TEST(KernelRegistry, GpuComponentsAreReachedWhereBuilt) {
    EXPECT_EQ(spacedepth::detail::device_backend(Device::Cuda) != nullptr, SPACEDEPTH_HAS_CUDA != 0);
    EXPECT_EQ(spacedepth::detail::device_backend(Device::OpenCL) != nullptr, SPACEDEPTH_HAS_OPENCL != 0);
    EXPECT_EQ(spacedepth::detail::device_backend(Device::Host), nullptr);
}

TEST(KernelRegistry, EveryHostFamilyAndWidthIsRegisteredOnce) {
    for (int f = 0; f < spacedepth::kKernelFamilyCount; f++) {
        // The runtime's microkernels have no Halide kernel (test_shuffle.cpp, the tests above).
        const auto family = static_cast<KernelFamily>(f);
        if (family == KernelFamily::Shuffle || family == KernelFamily::Tile || family == KernelFamily::Regroup) {
            continue;
        }
        for (int width : spacedepth::kKernelWidths) {
            int count = 0;
            for (const RegisteredKernel &k : kRegisteredKernels) {
                count += k.device == Device::Host && static_cast<int>(k.family) == f && k.width == width;
            }
            EXPECT_EQ(count, 1) << spacedepth::kernel_family_name(static_cast<KernelFamily>(f)) << " u" << 8 * width;
        }
    }
}

}  // namespace
