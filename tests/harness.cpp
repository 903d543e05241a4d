#include "tests/harness.h"

#include "runtime/execute.h"

#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace testing_support {

namespace {

reference::Layout ref_layout(Layout l) {
    return l == Layout::NHWC   ? reference::Layout::NHWC
           : l == Layout::NCHW ? reference::Layout::NCHW
                               : reference::Layout::NCHW_VECT_C;
}

uint64_t mix(uint64_t x) {  // splitmix64
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

template <typename F>
void for_each_coord(const spacedepth::Dims &d, F f) {
    for (int64_t n = 0; n < d[0]; n++)
        for (int64_t c = 0; c < d[1]; c++)
            for (int64_t h = 0; h < d[2]; h++)
                for (int64_t w = 0; w < d[3]; w++) f(n, c, h, w);
}

}  // namespace

spacedepth::Status run_op(const spacedepth::Params &p, const spacedepth::Tensor &in, const spacedepth::Tensor &out) {
    using spacedepth::Device;
    static const Device device = [] {
        const char *name = std::getenv("SPACEDEPTH_TEST_DEVICE");
        return name != nullptr && std::strcmp(name, "opencl") == 0 ? Device::OpenCL : Device::Host;
    }();
    return spacedepth::detail::run_on(p, in, out, {device, nullptr, nullptr});
}

reference::TensorRef as_reference(const spacedepth::Tensor &t) {
    reference::TensorRef r;
    r.data = static_cast<uint8_t *>(t.data);
    r.elem_bytes = spacedepth::dtype_size(t.dtype);
    r.layout = ref_layout(t.layout);
    for (int i = 0; i < 4; i++) {
        r.dims[i] = t.dims[i];
        r.strides[i] = t.strides[i];
    }
    return r;
}

reference::TensorRef TestTensor::ref() const {
    reference::TensorRef r = as_reference(tensor);
    r.data = const_cast<uint8_t *>(storage.data());
    return r;
}

int64_t TestTensor::elements() const { return tensor.dims[0] * tensor.dims[1] * tensor.dims[2] * tensor.dims[3]; }

TestTensor make_tensor(DType dtype, Layout layout, const spacedepth::Dims &dims, std::mt19937_64 *rng) {
    TestTensor t;
    t.tensor.dtype = dtype;
    t.tensor.layout = layout;
    t.tensor.dims = dims;
    // Memory order, innermost first, as logical dim indices; VECT_C has 4 adjacent lanes first.
    std::vector<int> order = layout == Layout::NHWC ? std::vector<int>{1, 3, 2, 0} : std::vector<int>{3, 2, 1, 0};
    int64_t stride = layout == Layout::NCHW_VECT_C ? 4 : 1;
    int64_t last = layout == Layout::NCHW_VECT_C ? 3 : 0;  // largest element offset
    bool empty = false;
    for (int k : order) {
        if (rng) {
            stride += static_cast<int64_t>((*rng)() % 4) * (layout == Layout::NCHW_VECT_C ? 4 : 1);
        }
        t.tensor.strides[k] = stride;
        const int64_t extent = (k == 1 && layout == Layout::NCHW_VECT_C) ? dims[1] / 4 : dims[k];
        empty |= extent == 0;
        last += (extent > 0 ? extent - 1 : 0) * stride;
        stride *= extent > 0 ? extent : 1;
    }
    const size_t bytes = static_cast<size_t>(empty ? 1 : last + 1) * spacedepth::dtype_size(dtype);
    t.storage.assign(bytes, kSentinel);
    t.tensor.data = t.storage.data();
    return t;
}

void fill_unique(TestTensor &t, uint64_t salt) {
    const reference::TensorRef r = t.ref();
    uint64_t i = 0;
    for_each_coord(t.tensor.dims, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
        uint8_t *e = t.storage.data() + reference::byte_offset(r, n, c, h, w);
        const uint64_t counter = i + 1 + salt;
        for (int b = 0; b < r.elem_bytes; b++) {
            // Low bytes count (unique while they can), high bytes hash (catch lane swaps).
            e[b] = b < 4 ? static_cast<uint8_t>((r.elem_bytes == 1 ? counter * 37 + 11 : counter) >> (8 * b))
                         : static_cast<uint8_t>(mix(counter * 131 + b));
        }
        i++;
    });
}

std::string compare(const TestTensor &got, const TestTensor &want) {
    if (got.storage == want.storage) {
        return "";
    }
    std::ostringstream s;
    const reference::TensorRef g = got.ref(), w = want.ref();
    std::vector<bool> is_element(got.storage.size(), false);
    int64_t mismatches = 0;
    for_each_coord(got.tensor.dims, [&](int64_t n, int64_t c, int64_t h, int64_t x) {
        const int64_t off = reference::byte_offset(g, n, c, h, x);
        for (int b = 0; b < g.elem_bytes; b++) is_element[off + b] = true;
        if (std::memcmp(&got.storage[off], &want.storage[off], g.elem_bytes) != 0) {
            if (mismatches++ < 64) {
                s << "  at (n=" << n << ", c=" << c << ", h=" << h << ", w=" << x << "): got 0x";
                for (int b = g.elem_bytes - 1; b >= 0; b--)
                    s << std::hex << std::setw(2) << std::setfill('0') << int(got.storage[off + b]);
                s << ", want 0x";
                for (int b = w.elem_bytes - 1; b >= 0; b--)
                    s << std::hex << std::setw(2) << std::setfill('0') << int(want.storage[off + b]);
                s << std::dec << "\n";
            }
        }
    });
    int64_t padding = 0;
    for (size_t i = 0; i < got.storage.size(); i++) {
        padding += !is_element[i] && got.storage[i] != want.storage[i];
    }
    s << mismatches << " of " << got.elements() << " elements differ";
    if (padding) s << "; " << padding << " padding bytes outside the view were written";
    return s.str();
}

TestTensor expected_output(const spacedepth::Params &p, const TestTensor &in, const TestTensor &out) {
    TestTensor want = out;
    want.storage.assign(out.storage.size(), kSentinel);
    want.tensor.data = want.storage.data();
    const bool crd = p.order == spacedepth::Order::CRD;
    if (p.op == spacedepth::Op::SpaceToDepth) {
        reference::space_to_depth(in.ref(), want.ref(), p.block.h, p.block.w, crd);
    } else {
        reference::depth_to_space(in.ref(), want.ref(), p.block.h, p.block.w, crd);
    }
    return want;
}

RandomCall random_call(std::mt19937_64 &rng, int64_t max_channels, int64_t max_blocks) {
    const Layout layouts[] = {Layout::NHWC, Layout::NCHW, Layout::NCHW_VECT_C};
    const DType dtypes[] = {DType::UInt8, DType::Float16, DType::Float32, DType::Float64, DType::Complex128};
    const Op op = rng() % 2 ? Op::SpaceToDepth : Op::DepthToSpace;
    const Order order = rng() % 2 ? Order::DCR : Order::CRD;
    const Layout in_layout = layouts[rng() % 3], out_layout = layouts[rng() % 3];
    const bool vect_c = in_layout == Layout::NCHW_VECT_C || out_layout == Layout::NCHW_VECT_C;
    const DType dtype = vect_c ? DType::Int8 : dtypes[rng() % 5];
    const int64_t bh = 1 + rng() % 4, bw = 1 + rng() % 4;
    const int64_t c = vect_c ? 4 * (1 + rng() % 3) : 1 + rng() % max_channels;
    const auto blocks = [&rng, max_blocks] { return 1 + static_cast<int64_t>(rng() % max_blocks); };
    const Dims space{1 + static_cast<int64_t>(rng() % 2), c, bh * blocks(), bw * blocks()};
    const Dims deep{space[0], c * bh * bw, space[2] / bh, space[3] / bw};
    const bool s2d = op == Op::SpaceToDepth;
    RandomCall call{Params{op, Block(bh, bw), order, static_cast<int>(rng() % 3)}, {}, {}};
    call.in = make_tensor(dtype, in_layout, s2d ? space : deep, rng() % 2 ? &rng : nullptr);
    call.out = make_tensor(dtype, out_layout, s2d ? deep : space, rng() % 2 ? &rng : nullptr);
    return call;
}

}  // namespace testing_support
