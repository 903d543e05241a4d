// Every registered kernel (runtime/kernel_registry.h), called directly on 6-D views of its family,
// in the manner of XNNPACK's microkernel tests: a broken kernel is reported by its own name, not
// as a wrong op result. The expected output is a plain strided copy computed here, element by
// element, from the view's strides; nothing of the runtime's planning is used. Host kernels run
// here; the GPU kernels run the whole matrix on PoCL (ctest opencl_pocl) and on a GPU.
#include "runtime/device_backend.h"
#include "runtime/halide_errors.h"
#include "runtime/kernel_registry.h"

#include "HalideRuntime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using spacedepth::Device;
using spacedepth::KernelFamily;
using spacedepth::kKernelRank;
using spacedepth::detail::kRegisteredKernels;
using spacedepth::detail::RegisteredKernel;

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
    case KernelFamily::Small:
        return {
            make_view("small run copy", {24, 2, 2, 1, 1, 1}, {0, 2, 1, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("small interleave", {2, 9, 2, 2, 1, 1}, {1, 3, 0, 2, 4, 5}, {0, 1, 2, 3, 4, 5}),
            make_view("small gather", {3, 5, 2, 2, 2, 1}, {2, 1, 0, 3, 4, 5}, {0, 1, 2, 3, 4, 5}),
        };
    }
    return {};
}

// Runs `kernel` on `view` and returns what is wrong, or "".
std::string check(const RegisteredKernel &kernel, const KernelView &v, bool parallel) {
    const int64_t w = kernel.width;
    std::vector<uint8_t> in(span(v.extent, v.in_stride) * w), out(span(v.extent, v.out_stride) * w, kSentinel);
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
    in_buf.host = in.data();
    out_buf.host = out.data();
    in_buf.type = out_buf.type = halide_type_t(halide_type_uint, static_cast<uint8_t>(8 * w));
    in_buf.dimensions = out_buf.dimensions = kKernelRank;
    in_buf.dim = in_dims;
    out_buf.dim = out_dims;
    spacedepth::detail::ErrorSink sink;
    if (int rc = kernel.fn(&sink, &in_buf, parallel, &out_buf); rc != 0) {
        return "returned " + std::to_string(rc) + ": " + sink.message;
    }
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
            EXPECT_EQ(check(k, v, parallel), "")
                << k.name << " on the " << v.name << " view" << (parallel ? ", parallel" : ", serial");
        }
    }
}

std::vector<RegisteredKernel> host_kernels() {
    std::vector<RegisteredKernel> host;
    for (const RegisteredKernel &k : kRegisteredKernels) {
        if (k.device == Device::Host) host.push_back(k);
    }
    return host;
}

std::string kernel_name(const testing::TestParamInfo<RegisteredKernel> &info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Registered, Kernels, testing::ValuesIn(host_kernels()), kernel_name);

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
