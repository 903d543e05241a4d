#include "tests/harness.h"

#include "runtime/call.h"
#include "tools/cuda_driver.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace testing_support {

namespace {

reference::Layout ref_layout(Layout l) {
    return l == Layout::NHWC   ? reference::Layout::ChannelsLast
           : l == Layout::NCHW ? reference::Layout::ChannelsFirst
                               : reference::Layout::Blocked;
}

uint64_t mix(uint64_t x) {  // splitmix64
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Calls f(coord, byte offset) on every logical element of t, the last dim fastest; each dim's
// offsets are computed once (the reference's per-dim formula) and summed per element.
template <typename F>
void for_each_element(const reference::TensorRef &t, F f) {
    int64_t count = 1;
    std::vector<int64_t> along[reference::kMaxDims];
    for (int i = 0; i < t.ndim; i++) {
        count *= t.dims[i];
        for (int64_t x = 0; x < t.dims[i]; x++) along[i].push_back(reference::dim_byte_offset(t, i, x));
    }
    int64_t coord[reference::kMaxDims] = {};
    for (int64_t e = 0; e < count; e++, reference::next_coord(coord, t.dims, t.ndim)) {
        int64_t offset = 0;
        for (int i = 0; i < t.ndim; i++) offset += along[i][coord[i]];
        f(coord, offset);
    }
}

std::string coord_str(const spacedepth::Dims &d, const int64_t *coord) {
    static const char *const kNames[] = {"d", "h", "w"};
    std::ostringstream s;
    s << "(n=" << coord[0] << ", c=" << coord[1];
    for (size_t k = 2; k < d.size(); k++) s << ", " << kNames[k - 2 + 5 - d.size()] << "=" << coord[k];
    s << ")";
    return s.str();
}

}  // namespace

namespace {

spacedepth::Device test_device() {
    using spacedepth::Device;
    static const Device device = [] {
        const char *name = std::getenv("SPACEDEPTH_TEST_DEVICE");
        if (name != nullptr && std::strcmp(name, "opencl") == 0) return Device::OpenCL;
        if (name != nullptr && std::strcmp(name, "cuda") == 0) return Device::Cuda;
        return Device::Host;
    }();
    return device;
}

// The bytes a tensor's elements occupy, [low, high) from its data pointer, by the reference's
// offsets; false where the descriptor has no such span (a bad call the library must refuse).
bool byte_span(const spacedepth::Tensor &t, int64_t *low, int64_t *high) {
    if (t.dims.size() != t.strides.size() || t.dims.size() == 0 || t.dims.size() > reference::kMaxDims) return false;
    const reference::TensorRef r = as_reference(t);
    *low = 0;
    *high = r.elem_bytes;
    for (int i = 0; i < r.ndim; i++) {
        if (r.dims[i] <= 0 || r.dims[i] > (int64_t{1} << 40)) return false;
        int64_t lo = 0, hi = 0;
        auto reach = [&](int64_t x) {
            const int64_t o = reference::dim_byte_offset(r, i, x);
            lo = std::min(lo, o);
            hi = std::max(hi, o);
        };
        // Offsets are linear along every dim but a blocked layout's channels: those are walked.
        if (i == 1 && r.layout == reference::Layout::Blocked) {
            for (int64_t x = 0; x < r.dims[i]; x++) reach(x);
        } else {
            reach(r.dims[i] - 1);  // the far end; the near one is 0
        }
        *low += lo;
        *high += hi;
    }
    return *high - *low <= (int64_t{1} << 36);
}

// SPACEDEPTH_TEST_DEVICE=cuda: each tensor's span (padding and sentinels included) is copied to
// GPU memory, the op runs there on the default stream, and the output's span comes back, so the
// tests compare exactly the bytes the kernel wrote, and those it must have left alone.
spacedepth::Status run_through_cuda(const Params &p, const spacedepth::Tensor &in, const spacedepth::Tensor &out) {
    cuda_driver::Driver &d = cuda_driver::driver();
    if (!d.usable()) {
        return spacedepth::Status(SD_ERROR_UNSUPPORTED, "SPACEDEPTH_TEST_DEVICE=cuda: " + d.why_not);
    }
    int64_t in_low = 0, in_high = 0, out_low = 0, out_high = 0;
    if (!byte_span(in, &in_low, &in_high) || !byte_span(out, &out_low, &out_high)) {
        return spacedepth::run_cuda(p, in, out,
                                    spacedepth::CudaStream{d.context, nullptr});  // refused before the device
    }
    const size_t in_bytes = static_cast<size_t>(in_high - in_low), out_bytes = static_cast<size_t>(out_high - out_low);
    uint64_t din = 0, dout = 0;
    auto fail = [&](const char *what) {
        if (din) d.cuMemFree(din);
        if (dout) d.cuMemFree(dout);
        return spacedepth::Status(SD_ERROR_KERNEL, std::string("SPACEDEPTH_TEST_DEVICE=cuda: ") + what + " failed");
    };
    const uint8_t *in_host = static_cast<const uint8_t *>(in.data) + in_low;
    uint8_t *out_host = static_cast<uint8_t *>(out.data) + out_low;
    if (d.cuMemAlloc(&din, in_bytes) != 0 || d.cuMemAlloc(&dout, out_bytes) != 0) return fail("cuMemAlloc");
    if (d.cuMemcpyHtoD(din, in_host, in_bytes) != 0 || d.cuMemcpyHtoD(dout, out_host, out_bytes) != 0) {
        return fail("cuMemcpyHtoD");
    }
    spacedepth::Tensor din_t = in, dout_t = out;
    din_t.data = reinterpret_cast<void *>(din - in_low);
    dout_t.data = reinterpret_cast<void *>(dout - out_low);
    spacedepth::Status s = spacedepth::run_cuda(p, din_t, dout_t, spacedepth::CudaStream{d.context, nullptr});
    if (d.cuCtxSynchronize() != 0) return fail("cuCtxSynchronize after the kernel");
    if (s.ok() && d.cuMemcpyDtoH(out_host, dout, out_bytes) != 0) return fail("cuMemcpyDtoH");
    d.cuMemFree(din);
    d.cuMemFree(dout);
    return s;
}

}  // namespace

spacedepth::Status run_op(const spacedepth::Params &p, const spacedepth::Tensor &in, const spacedepth::Tensor &out) {
    if (test_device() == spacedepth::Device::Cuda) return run_through_cuda(p, in, out);
    return spacedepth::detail::run_on(p, in, out, {test_device(), nullptr, nullptr});
}

bool test_device_takes_negative_strides() { return test_device() != spacedepth::Device::OpenCL; }

unsigned random_reversal(std::mt19937_64 &rng, int ndim) {
    if (!test_device_takes_negative_strides()) return 0;
    const unsigned all = (1u << ndim) - 1;
    return 1 + static_cast<unsigned>(rng() % all);
}

reference::TensorRef as_reference(const spacedepth::Tensor &t) {
    reference::TensorRef r;
    r.data = static_cast<uint8_t *>(t.data);
    r.elem_bytes = spacedepth::dtype_size(t.dtype);
    r.layout = ref_layout(t.layout);
    r.lanes = lanes(t.layout);
    r.ndim = static_cast<int>(t.dims.size());
    for (int i = 0; i < r.ndim; i++) {
        r.dims[i] = t.dims[i];
        r.strides[i] = t.strides[i];
    }
    return r;
}

reference::TensorRef TestTensor::ref() const {
    reference::TensorRef r = as_reference(tensor);
    r.data = const_cast<uint8_t *>(storage.data()) + origin;
    return r;
}

void TestTensor::rebase() { tensor.data = storage.data() + origin; }

int64_t TestTensor::elements() const {
    int64_t count = 1;
    for (int64_t e : tensor.dims) count *= e;
    return count;
}

int lanes(Layout layout) {
    switch (layout) {
    case Layout::NCHW_VECT_C:
    case Layout::NCHWc4: return 4;
    case Layout::NCHWc8: return 8;
    case Layout::NCHWc16: return 16;
    default: return 1;
    }
}

void block_sizes(const Params &p, int rank, int64_t *block) {
    const spacedepth::Block &b = p.block;
    const int64_t given[3] = {b.d, b.h, b.w};
    for (int i = 0; i < rank; i++) block[i] = b.square ? b.w : given[3 - rank + i];
}

Dims deep_dims(const Dims &space, const Params &p) {
    const int rank = static_cast<int>(space.size()) - 2;
    int64_t block[3];
    block_sizes(p, rank, block);
    Dims deep = space;
    for (int i = 0; i < rank; i++) {
        deep[1] *= block[i];
        deep[2 + i] /= block[i];
    }
    return deep;
}

TestTensor make_tensor(DType dtype, Layout layout, const spacedepth::Dims &dims, std::mt19937_64 *rng,
                       unsigned reversed_dims) {
    TestTensor t;
    t.tensor.dtype = dtype;
    t.tensor.layout = layout;
    t.tensor.dims = dims;
    t.tensor.strides = dims;  // the same count
    // Memory order, innermost first, as logical dim indices: channels last is C, W, (H, D,) N;
    // the others W, (H, D,) C, N, with a blocked layout's k lanes innermost of all.
    const int nd = static_cast<int>(dims.size());
    std::vector<int> order;
    if (layout == Layout::NHWC) order.push_back(1);
    for (int k = nd - 1; k >= 2; k--) order.push_back(k);
    if (layout != Layout::NHWC) order.push_back(1);
    order.push_back(0);
    const int k_lanes = lanes(layout);
    int64_t stride = k_lanes;
    int64_t last = k_lanes - 1;  // largest element offset
    bool empty = false;
    for (int k : order) {
        if (rng) {
            stride += static_cast<int64_t>((*rng)() % 4) * k_lanes;
        }
        t.tensor.strides[k] = stride;
        const int64_t extent = k == 1 ? dims[1] / k_lanes : dims[k];
        empty |= extent == 0;
        last += (extent > 0 ? extent - 1 : 0) * stride;
        stride *= extent > 0 ? extent : 1;
    }
    const int elem = spacedepth::dtype_size(dtype);
    const size_t bytes = static_cast<size_t>(empty ? 1 : last + 1) * elem;
    // A reversed dim starts at its last element and steps back.
    for (int k = 0; k < nd; k++) {
        if (reversed_dims & (1u << k)) {
            const int64_t extent = k == 1 ? dims[1] / k_lanes : dims[k];
            if (!empty) t.origin += (extent > 0 ? extent - 1 : 0) * t.tensor.strides[k] * elem;
            t.tensor.strides[k] = -t.tensor.strides[k];
        }
    }
    t.storage.assign(bytes, kSentinel);
    t.rebase();
    return t;
}

void fill_unique(TestTensor &t, uint64_t salt) {
    const reference::TensorRef r = t.ref();
    uint64_t i = 0;
    for_each_element(r, [&](const int64_t *, int64_t offset) {
        uint8_t *e = r.data + offset;
        const uint64_t counter = i + 1 + salt;
        // Low bytes count (unique while they can), high bytes hash (catch lane swaps): one hash
        // for bytes 4-11, a second for 12-15.
        const uint64_t hash[2] = {r.elem_bytes > 4 ? mix(counter * 131) : 0,
                                  r.elem_bytes > 12 ? mix(counter * 137) : 0};
        for (int b = 0; b < r.elem_bytes; b++) {
            e[b] = b < 4 ? static_cast<uint8_t>((r.elem_bytes == 1 ? counter * 37 + 11 : counter) >> (8 * b))
                         : static_cast<uint8_t>(hash[(b - 4) / 8] >> (8 * ((b - 4) % 8)));
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
    for_each_element(g, [&](const int64_t *coord, int64_t offset) {
        const int64_t off = got.origin + offset;
        for (int b = 0; b < g.elem_bytes; b++) is_element[off + b] = true;
        if (std::memcmp(&got.storage[off], &want.storage[off], g.elem_bytes) != 0) {
            if (mismatches++ < 64) {
                s << "  at " << coord_str(got.tensor.dims, coord) << ": got 0x";
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
    want.rebase();
    const bool crd = p.order == spacedepth::Order::CRD;
    int64_t block[3];
    block_sizes(p, static_cast<int>(in.tensor.dims.size()) - 2, block);
    if (p.op == spacedepth::Op::SpaceToDepth) {
        reference::space_to_depth(in.ref(), want.ref(), block, crd);
    } else {
        reference::depth_to_space(in.ref(), want.ref(), block, crd);
    }
    return want;
}

RandomCall random_call(std::mt19937_64 &rng, int64_t max_channels, int64_t max_blocks, int rank) {
    const Layout layouts[] = {Layout::NHWC,   Layout::NCHW,   Layout::NHWC,    Layout::NCHW,
                              Layout::NCHWc4, Layout::NCHWc8, Layout::NCHWc16, Layout::NCHW_VECT_C};
    const DType dtypes[] = {DType::UInt8, DType::Float16, DType::Float32, DType::Float64, DType::Complex128};
    if (rank == 0) rank = 1 + static_cast<int>(rng() % 3);
    const Op op = rng() % 2 ? Op::SpaceToDepth : Op::DepthToSpace;
    const Order order = rng() % 2 ? Order::DCR : Order::CRD;
    const Layout in_layout = layouts[rng() % 8], out_layout = layouts[rng() % 8];
    const bool vect_c = in_layout == Layout::NCHW_VECT_C || out_layout == Layout::NCHW_VECT_C;
    const DType dtype = vect_c ? DType::Int8 : dtypes[rng() % 5];
    // Rank 3 has three block digits and three spatial dims: smaller sizes keep it quick.
    const int64_t max_block = rank == 3 ? 3 : 4, blocks_cap = rank == 3 ? std::min<int64_t>(max_blocks, 3) : max_blocks;
    int64_t block[3], volume = 1;
    for (int i = 0; i < rank; i++) volume *= block[i] = 1 + static_cast<int64_t>(rng() % max_block);
    // Channel counts both tensors' channel groups divide, off the group size as often as they allow.
    const int64_t space_lanes = lanes(op == Op::SpaceToDepth ? in_layout : out_layout);
    const int64_t deep_lanes = lanes(op == Op::SpaceToDepth ? out_layout : in_layout);
    int64_t c = 0;
    for (int tries = 0; tries < 64 && c == 0; tries++) {
        const int64_t range = space_lanes * deep_lanes == 1 ? max_channels : std::max<int64_t>(max_channels, 32);
        const int64_t candidate = 1 + static_cast<int64_t>(rng() % range);
        if (candidate % space_lanes == 0 && candidate * volume % deep_lanes == 0) c = candidate;
    }
    if (c == 0) c = std::lcm(space_lanes, deep_lanes);
    Dims space = rank == 1 ? Dims{1, c, 1} : rank == 2 ? Dims{1, c, 1, 1} : Dims{1, c, 1, 1, 1};
    space[0] = 1 + static_cast<int64_t>(rng() % 2);
    for (int i = 0; i < rank; i++) space[2 + i] = block[i] * (1 + static_cast<int64_t>(rng() % blocks_cap));
    const spacedepth::Block b = rank == 1   ? Block(1, block[0])
                                : rank == 2 ? Block(block[0], block[1])
                                            : Block(block[0], block[1], block[2]);
    RandomCall call{Params{op, b, order, static_cast<int>(rng() % 3)}, {}, {}};
    const Dims deep = deep_dims(space, call.params);
    const bool s2d = op == Op::SpaceToDepth;
    const int nd = rank + 2;
    const unsigned in_reversed = rng() % 4 == 0 ? random_reversal(rng, nd) : 0;
    const unsigned out_reversed = rng() % 4 == 0 ? random_reversal(rng, nd) : 0;
    call.in = make_tensor(dtype, in_layout, s2d ? space : deep, rng() % 2 ? &rng : nullptr, in_reversed);
    call.out = make_tensor(dtype, out_layout, s2d ? deep : space, rng() % 2 ? &rng : nullptr, out_reversed);
    return call;
}

sd_tensor as_c(const spacedepth::Tensor &t) {
    sd_tensor c{};
    c.data = t.data;
    c.dtype = static_cast<sd_dtype>(t.dtype);
    c.layout = static_cast<sd_layout>(t.layout);
    c.ndim = t.dims.ndim();
    for (size_t i = 0; i < t.dims.size(); i++) {
        c.dims[i] = t.dims[i];
        c.strides[i] = t.strides[i];
    }
    return c;
}

sd_params as_c(const spacedepth::Params &p, int ndim) {
    const int rank = ndim - 2;
    int64_t block[3] = {1, 1, 1};  // outermost first: (bw), (bh, bw) or (bd, bh, bw)
    block_sizes(p, rank, block);
    return {static_cast<sd_op>(p.op),
            rank >= 2 ? block[rank - 2] : 1,
            block[rank - 1],
            static_cast<sd_order>(p.order),
            p.threads,
            rank == 3 ? block[0] : 0};
}

spacedepth::detail::SwitchPoints streaming_everywhere() {
    spacedepth::detail::SwitchPoints points = spacedepth::detail::switch_points();
    points.stream_min_bytes = 0;
    points.stream_parallel_min_bytes = 0;
    points.stream_partial_min_bytes = 0;
    points.stream_many_rows_min_bytes = 0;
    return points;
}

spacedepth::detail::SwitchPoints streaming_at_any_size() {
    spacedepth::detail::SwitchPoints points = streaming_everywhere();
    points.small_max_bytes = 0;
    return points;
}

}  // namespace testing_support
