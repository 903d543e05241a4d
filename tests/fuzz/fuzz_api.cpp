// libFuzzer target: the public C API with arbitrary descriptors. Built with ASan + UBSan (preset
// asan); ctest fuzz_short runs it for 45 s, `make fuzz` for longer.
//
// Each input becomes one sd_run call, and the same call again through a plan (sd_plan_create or
// sd_plan_create_with: estimated, measured, or with hostile options, which must be refused),
// which must agree with it exactly; some inputs first import the rest of their bytes as a wisdom
// file after a valid header (refused, or taken: the results must not change). A quarter of the
// inputs (by their first byte, so the corpus keeps its meaning) run with the streaming switch
// points at 0, so every plan the rule lets stream runs the kernels' streaming-store twins.
// The call: op, order, layouts (the blocked ones included), dtypes, ndim (3-5 and out of range,
// the two tensors' sometimes different), block (block_d too) and threads from the full range of
// their types (out-of-range enums, zero, negative and huge values included); dims and strides
// small, dense, padded, random, reversed (negative strides: data then points inside its buffer)
// or huge enough to overflow; null data, and input and output in one overlapping buffer. Memory
// is real and exactly as large as each tensor's span (so ASan sees any read or write outside it)
// whenever that span is at most 1 MiB; calls whose tensors would need more are made only if they
// overflow 64 bits, since then no memory is touched.
//
// What must hold, checked here with rules written from docs/SPEC.md section 5 (not the runtime's code):
//   - the call returns, whatever the input (no crash, no sanitizer report, no hang);
//   - a rejected call leaves the output buffer and the input untouched, and sets a message;
//   - an accepted call satisfied every rule, and its output, padding included, equals the
//     independent reference's (tests/reference.cpp); the input is untouched;
//   - a call that satisfies every rule, with real memory, is accepted.
#include "spacedepth/spacedepth_c.h"
#include "tests/harness.h"
#include "tests/reference.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

constexpr int64_t kMaxBufferBytes = 1 << 20;

[[noreturn]] void fail(const char *what, const sd_params &p, const sd_tensor &in, const sd_tensor &out, sd_status s) {
    std::fprintf(
        stderr, "FUZZ FAILURE: %s\n  status %d (%s): %s\n  op %d order %d block d %lld h %lld w %lld threads %d\n",
        what, static_cast<int>(s), sd_status_name(s), sd_last_error(), p.op, p.order, static_cast<long long>(p.block_d),
        static_cast<long long>(p.block_h), static_cast<long long>(p.block_w), p.threads);
    for (const sd_tensor *t : {&in, &out}) {
        std::fprintf(stderr, "  %s: dtype %d layout %d ndim %d dims", t == &in ? "in " : "out", t->dtype, t->layout,
                     t->ndim);
        for (int i = 0; i < SD_MAX_NDIM; i++) std::fprintf(stderr, " %lld", static_cast<long long>(t->dims[i]));
        std::fprintf(stderr, " strides");
        for (int i = 0; i < SD_MAX_NDIM; i++) std::fprintf(stderr, " %lld", static_cast<long long>(t->strides[i]));
        std::fprintf(stderr, " data %p\n", t->data);
    }
    std::abort();
}

// Channels per group: docs/SPEC.md section 1's layouts.
int64_t lanes_of(sd_layout l) {
    return l == SD_LAYOUT_NCHW_VECT_C || l == SD_LAYOUT_NCHWC4 ? 4
           : l == SD_LAYOUT_NCHWC8                             ? 8
           : l == SD_LAYOUT_NCHWC16                            ? 16
                                                               : 1;
}

bool ndim_ok(int ndim) { return ndim >= 3 && ndim <= SD_MAX_NDIM; }

// The dims a tensor's memory has: ndim when valid, else as many as the arrays hold.
int used_dims(const sd_tensor &t) { return ndim_ok(t.ndim) ? t.ndim : SD_MAX_NDIM; }

int64_t pick_extent(FuzzedDataProvider &fdp) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return fdp.ConsumeIntegral<int64_t>();                         // anything, negative included
    case 1: return int64_t{1} << fdp.ConsumeIntegralInRange<int>(20, 62);  // huge
    case 2: return INT32_MAX + fdp.ConsumeIntegralInRange<int64_t>(-1, 2);
    case 3: return 0;
    default: return fdp.ConsumeIntegralInRange<int64_t>(1, 9);
    }
}

bool valid_enums(const sd_params &p, const sd_tensor &in, const sd_tensor &out) {
    auto layout_ok = [](sd_layout l) { return l >= SD_LAYOUT_NHWC && l <= SD_LAYOUT_NCHWC16; };
    auto dtype_ok = [](sd_dtype d) { return d >= SD_BOOL && d < SD_DTYPE_COUNT; };
    return (p.op == SD_SPACE_TO_DEPTH || p.op == SD_DEPTH_TO_SPACE) &&
           (p.order == SD_ORDER_DCR || p.order == SD_ORDER_CRD) && layout_ok(in.layout) && layout_ok(out.layout) &&
           dtype_ok(in.dtype) && dtype_ok(out.dtype);
}

// A tensor's memory: `span` bytes from its lowest to one past its highest, and `low`, the lowest
// byte's offset from the data pointer (negative strides reach below it, as in numpy). span is -1
// when any dim is negative or the span does not fit in int64; 0 when the tensor is empty.
struct Extent {
    int64_t low = 0, span = 0;
};

Extent memory_extent(const sd_tensor &t, int elem) {
    __int128 lo = 0, hi = 0;
    const int nd = used_dims(t);
    const int64_t k = lanes_of(t.layout);
    for (int i = 0; i < nd; i++) {
        if (t.dims[i] < 0) return {0, -1};
    }
    for (int i = 0; i < nd; i++) {
        if (t.dims[i] == 0) return {0, 0};
    }
    for (int i = 0; i < nd; i++) {
        const __int128 extent = i == 1 ? (static_cast<__int128>(t.dims[1]) + k - 1) / k : t.dims[i];
        const __int128 reach = (extent - 1) * static_cast<__int128>(t.strides[i]);  // |reach| < 2^126
        (reach < 0 ? lo : hi) += reach;
        if (hi > INT64_MAX || lo < INT64_MIN) return {0, -1};
    }
    hi += k - 1;
    const __int128 bytes = (hi - lo + 1) * elem;
    if (bytes > INT64_MAX) return {0, -1};
    return {static_cast<int64_t>(lo * elem), static_cast<int64_t>(bytes)};
}

int64_t span_bytes(const sd_tensor &t, int elem) { return memory_extent(t, elem).span; }

// docs/SPEC.md section 5, written out independently. Memory rules (null data, overlap, aliasing) are
// checked by the caller.
bool shapes_valid(const sd_params &p, const sd_tensor &in, const sd_tensor &out) {
    if (!valid_enums(p, in, out) || p.threads < 0) return false;
    if (!ndim_ok(in.ndim) || out.ndim != in.ndim || in.dtype != out.dtype) return false;
    const int nd = in.ndim, rank = nd - 2;
    // The block: one size per spatial dim, >= 1; the sizes of dims the tensors lack are 0 or 1.
    const int64_t given[3] = {p.block_d, p.block_h, p.block_w};
    int64_t block[3];
    for (int i = 0; i < 3; i++) {
        const bool used = i >= 3 - rank;
        if (used ? given[i] < 1 : (given[i] != 0 && given[i] != 1)) return false;
        if (used) block[i - (3 - rank)] = given[i];
    }
    const int elem = sd_dtype_size(in.dtype);
    if ((in.layout == SD_LAYOUT_NCHW_VECT_C || out.layout == SD_LAYOUT_NCHW_VECT_C) && elem != 1) return false;
    __int128 volume = 1;
    for (int i = 0; i < rank; i++) {
        volume *= block[i];
        if (volume > INT64_MAX) return false;  // docs/SPEC.md: the block volume is overflow-checked
    }
    const bool s2d = p.op == SD_SPACE_TO_DEPTH;
    const int64_t *d = in.dims;
    for (int i = 0; i < nd; i++) {
        if (in.dims[i] < 0 || out.dims[i] < 0) return false;
    }
    __int128 want[SD_MAX_NDIM];
    want[0] = d[0];
    if (s2d) {
        for (int i = 0; i < rank; i++) {
            if (d[2 + i] % block[i]) return false;
            want[2 + i] = d[2 + i] / block[i];
        }
        want[1] = d[1] * volume;
    } else {
        if (d[1] % volume) return false;
        want[1] = d[1] / volume;
        for (int i = 0; i < rank; i++) want[2 + i] = static_cast<__int128>(d[2 + i]) * block[i];
    }
    for (int i = 0; i < nd; i++) {
        if (want[i] != out.dims[i]) return false;
    }
    // A blocked layout's channels fill whole groups.
    for (const sd_tensor *t : {&in, &out}) {
        if (t->dims[1] % lanes_of(t->layout)) return false;
        if (span_bytes(*t, elem) < 0) return false;
    }
    return true;
}

// docs/SPEC.md section 5's fragment limit, from its formula: the channels the split enumerates
// times the block sizes whose deep-channel step is not a multiple of the deep side's group.
bool within_fragment_limit(const sd_params &p, const sd_tensor &in, const sd_tensor &out) {
    const bool s2d = p.op == SD_SPACE_TO_DEPTH;
    const sd_tensor &space = s2d ? in : out, &deep = s2d ? out : in;
    const int rank = in.ndim - 2;
    const int64_t given[3] = {p.block_d, p.block_h, p.block_w};
    const int64_t ks = lanes_of(space.layout), kd = lanes_of(deep.layout), cs = space.dims[1];
    int64_t volume = 1;
    for (int i = 3 - rank; i < 3; i++) volume *= given[i];
    const bool dcr = p.order == SD_ORDER_DCR;
    const int64_t channel_step = dcr ? 1 : volume;
    const int64_t q0 = std::lcm(ks, kd / std::gcd(kd, channel_step));
    __int128 count = cs % q0 == 0 ? q0 : cs;
    int64_t inner = 1;  // block sizes of the dims inside dim i
    for (int i = 2; i >= 3 - rank; i--) {
        const int64_t step = dcr ? inner * cs : inner;
        if (given[i] > 1 && step % kd != 0) count *= given[i];
        inner *= given[i];
    }
    return count <= 65536;
}

// Does some pair of distinct output elements share an address? (Checked by brute force on the
// small tensors the fuzzer allocates.)
reference::TensorRef as_ref(const sd_tensor &t, uint8_t *data) {
    const reference::Layout layout = t.layout == SD_LAYOUT_NHWC   ? reference::Layout::ChannelsLast
                                     : t.layout == SD_LAYOUT_NCHW ? reference::Layout::ChannelsFirst
                                                                  : reference::Layout::Blocked;
    reference::TensorRef r{data, sd_dtype_size(t.dtype), layout, static_cast<int>(lanes_of(t.layout)), t.ndim, {}, {}};
    std::copy(t.dims, t.dims + t.ndim, r.dims);
    std::copy(t.strides, t.strides + t.ndim, r.strides);
    return r;
}

bool output_self_aliases(const sd_tensor &t, int64_t low, int64_t span) {
    std::vector<uint8_t> seen(static_cast<size_t>(span), 0);
    const reference::TensorRef r = as_ref(t, static_cast<uint8_t *>(t.data));
    // Stride-0 dims can make the count huge while the span is small: then an address repeats
    // within the first span + 1 elements, and the loop ends there.
    __int128 count = 1;
    int64_t coord[SD_MAX_NDIM];
    for (int i = 0; i < t.ndim; i++) count = std::min<__int128>(count * t.dims[i], INT64_MAX);
    for (int64_t e = 0; e < count; e++) {
        int64_t rest = e;
        for (int i = t.ndim - 1; i >= 0; i--) {
            coord[i] = rest % t.dims[i];
            rest /= t.dims[i];
        }
        const int64_t off = reference::byte_offset(r, coord) - low;
        if (seen[off]) return true;
        seen[off] = 1;
    }
    return false;
}

// The documented output-stride rule (README, "Using the library"): sorted by stride, each dim
// of extent > 1 steps past every offset the dims inside it reach. Views that do not nest but
// still give every element its own address are rejected too.
bool output_strides_nest(const sd_tensor &t) {
    std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, extent)
    const int64_t k = lanes_of(t.layout);
    for (int i = 0; i < t.ndim; i++) {
        const int64_t extent =
            i == 1 ? static_cast<int64_t>((static_cast<__int128>(t.dims[1]) + k - 1) / k) : t.dims[i];
        // A reversed dim reaches as far the other way. INT64_MIN never gets here: its span overflows.
        if (extent > 1) dims.emplace_back(t.strides[i] < 0 ? -t.strides[i] : t.strides[i], extent);
        if (k > 1 && i == 1 && t.dims[1] > 1) dims.emplace_back(1, k);  // the k channels of a group
    }
    std::sort(dims.begin(), dims.end());
    __int128 reach = 0;
    for (auto [stride, extent] : dims) {
        if (stride <= reach) return false;
        reach += static_cast<__int128>(extent - 1) * stride;
    }
    return true;
}

// This process's wisdom header, so that imported bytes reach the plan lines' parser.
const std::string &wisdom_header() {
    static const std::string header = [] {
        char path[] = "/tmp/fuzz_wisdom_XXXXXX";
        const int fd = mkstemp(path);
        if (fd >= 0) close(fd);
        std::string text;
        if (fd >= 0 && sd_wisdom_export(path) == SD_OK) {
            if (FILE *f = std::fopen(path, "rb")) {
                char chunk[4096];
                for (size_t n; (n = std::fread(chunk, 1, sizeof(chunk), f)) > 0;) text.append(chunk, n);
                std::fclose(f);
            }
        }
        std::remove(path);
        return text;
    }();
    return header;
}

// Imports header + bytes as a wisdom file: refused with a message, or taken.
void import_fuzzed_wisdom(const std::string &bytes) {
    char path[] = "/tmp/fuzz_wisdom_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return;
    const std::string text = wisdom_header() + bytes;
    const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
    if (written) {
        const sd_status s = sd_wisdom_import(path);
        if (s != SD_OK && std::strlen(sd_last_error()) == 0) {
            std::fprintf(stderr, "FUZZ FAILURE: a refused wisdom file without a message\n");
            std::abort();
        }
    }
    std::remove(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::optional<testing_support::ScopedSwitchPoints> streaming;
    if (size > 0 && data[0] % 4 == 0) streaming.emplace(testing_support::streaming_everywhere());
    FuzzedDataProvider fdp(data, size);
    sd_wisdom_forget();
    if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) {
        import_fuzzed_wisdom(fdp.ConsumeRandomLengthString(512));
    }
    sd_params p{};
    p.op = static_cast<sd_op>(fdp.ConsumeIntegralInRange<int>(-1, 2));
    p.order = static_cast<sd_order>(fdp.ConsumeIntegralInRange<int>(-1, 2));
    p.block_h = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int64_t>(1, 5) : pick_extent(fdp);
    p.block_w = fdp.ConsumeBool()   ? p.block_h
                : fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int64_t>(1, 5)
                                    : pick_extent(fdp);
    p.threads = fdp.ConsumeIntegralInRange<int>(-1, 3);

    sd_tensor in{}, out{};
    // ndim: mostly 3-5, the same on both sides; sometimes anything nearby.
    in.ndim = fdp.ConsumeIntegralInRange<int>(0, 7) ? fdp.ConsumeIntegralInRange<int>(3, 5)
                                                    : fdp.ConsumeIntegralInRange<int>(-1, 7);
    out.ndim = fdp.ConsumeIntegralInRange<int>(0, 15) ? in.ndim : fdp.ConsumeIntegralInRange<int>(-1, 7);
    // block_d: 0 (unset) or 1 where the rank lacks depth; a size at rank 3; sometimes anything.
    switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: p.block_d = pick_extent(fdp); break;
    case 1: p.block_d = 1; break;
    default: p.block_d = in.ndim == 5 ? fdp.ConsumeIntegralInRange<int64_t>(1, 3) : 0;
    }
    in.dtype = static_cast<sd_dtype>(fdp.ConsumeIntegralInRange<int>(-1, SD_DTYPE_COUNT));
    out.dtype = fdp.ConsumeIntegralInRange<int>(0, 15)
                    ? in.dtype
                    : static_cast<sd_dtype>(fdp.ConsumeIntegralInRange<int>(-1, SD_DTYPE_COUNT));
    in.layout = static_cast<sd_layout>(fdp.ConsumeIntegralInRange<int>(-1, 6));
    out.layout = fdp.ConsumeBool() ? in.layout : static_cast<sd_layout>(fdp.ConsumeIntegralInRange<int>(-1, 6));
    for (int i = 0; i < used_dims(in); i++) in.dims[i] = pick_extent(fdp);
    // Mostly the implied output shape, so valid calls are common; sometimes anything.
    if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0 || out.ndim != in.ndim ||
        sd_output_dims_nd(&p, in.ndim, in.dims, out.dims) != SD_OK) {
        for (int i = 0; i < used_dims(out); i++) out.dims[i] = pick_extent(fdp);
    }
    const int elem = std::max(1, sd_dtype_size(in.dtype));
    for (sd_tensor *t : {&in, &out}) {
        const int nd = used_dims(*t);
        const sd_layout layout =
            t->layout >= SD_LAYOUT_NHWC && t->layout <= SD_LAYOUT_NCHWC16 ? t->layout : SD_LAYOUT_NCHW;
        const int64_t k = lanes_of(layout);
        int64_t dims[SD_MAX_NDIM];
        std::copy(t->dims, t->dims + SD_MAX_NDIM, dims);
        if (dims[1] >= 0 && dims[1] < INT64_MAX - k) dims[1] = (dims[1] + k - 1) / k * k;
        sd_tensor dense = *t;
        const bool dense_ok = sd_tensor_init_dense_nd(&dense, nullptr, SD_UINT8, layout, nd, dims) == SD_OK;
        switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:  // dense
            for (int i = 0; i < nd; i++) t->strides[i] = dense_ok ? dense.strides[i] : 1;
            break;
        case 1:  // padded: a view into a larger buffer (each stride above the innermost grows by 0-3 groups)
            for (int i = 0; i < nd; i++) {
                const int64_t base = dense_ok ? dense.strides[i] : 1;
                const bool inner = base <= k;
                t->strides[i] =
                    base + (inner || base > INT64_MAX - 3 * k ? 0 : k * fdp.ConsumeIntegralInRange<int64_t>(0, 3));
            }
            break;
        case 2:  // random small strides (may alias), negative ones included
            for (int i = 0; i < nd; i++) t->strides[i] = fdp.ConsumeIntegralInRange<int64_t>(-40, 40);
            break;
        default:  // anything
            for (int i = 0; i < nd; i++)
                t->strides[i] = fdp.ConsumeBool() ? fdp.ConsumeIntegral<int64_t>() : pick_extent(fdp);
        }
        // Reversed dims (numpy's x[:, ::-1]): some strides negated.
        if (fdp.ConsumeIntegralInRange<int>(0, 3) == 0) {
            const unsigned mask = fdp.ConsumeIntegral<uint8_t>();
            for (int i = 0; i < nd; i++) {
                if ((mask >> i & 1) && t->strides[i] != INT64_MIN) t->strides[i] = -t->strides[i];
            }
        }
    }

    const Extent in_extent = memory_extent(in, elem), out_extent = memory_extent(out, elem);
    const int64_t in_span = in_extent.span, out_span = out_extent.span;
    const int memory_mode = fdp.ConsumeIntegralInRange<int>(0, 7);  // 0: null input, 1: null output, 2: overlap
    const bool overflow = in_span < 0 || out_span < 0;
    if (!overflow && (in_span > kMaxBufferBytes || out_span > kMaxBufferBytes)) {
        return 0;  // valid-looking but too large to allocate here: a call would touch real memory
    }
    // Exactly-sized buffers (ASan catches any access beyond them). For overlap, one buffer.
    // (With an overflowing tensor nothing is allocated: the other one may be huge.)
    std::vector<uint8_t> in_buf(overflow ? 1 : std::max<int64_t>(in_span, 1)),
        out_buf(overflow ? 1 : std::max<int64_t>(out_span, 1), 0xA5);
    for (uint8_t &b : in_buf) b = fdp.ConsumeIntegral<uint8_t>() ^ static_cast<uint8_t>(&b - in_buf.data());
    // data is logical element 0, -low bytes into each buffer.
    in.data = in_buf.data() - in_extent.low;
    out.data = out_buf.data() - out_extent.low;
    if (overflow) {  // no memory may be touched: sizes are rejected first
        in.data = reinterpret_cast<void *>(uintptr_t{1} << 40);
        out.data = reinterpret_cast<void *>(uintptr_t{1} << 41);
    }
    std::vector<uint8_t> shared;
    bool overlapping = false;
    if (!overflow && memory_mode == 2 && in_span > 0 && out_span > 0) {
        const int64_t shift = fdp.ConsumeIntegralInRange<int64_t>(0, in_span - 1);
        shared.assign(static_cast<size_t>(shift + std::max(in_span - shift, out_span)), 0);
        std::copy(in_buf.begin(), in_buf.end(), shared.begin());
        in.data = shared.data() - in_extent.low;
        out.data = shared.data() + shift - out_extent.low;
        overlapping = true;
    }
    if (memory_mode == 0) in.data = nullptr;
    if (memory_mode == 1) out.data = nullptr;

    const std::vector<uint8_t> in_before = overlapping ? shared : in_buf;
    const std::vector<uint8_t> out_before = out_buf;
    const sd_status s = sd_run(&p, &in, &out);

    // The plan path on the same call must agree with sd_run: create from the descriptors (their
    // data pointers ignored), then run on the same memory, restored to what sd_run saw. Same
    // status, same message, same bytes everywhere (the overlapping case included).
    {
        const std::string run_message = sd_last_error();
        const std::vector<uint8_t> run_out = out_buf, run_shared = shared;
        out_buf = out_before;
        if (overlapping) shared = in_before;
        sd_tensor in_desc = in, out_desc = out;
        in_desc.data = fdp.ConsumeBool() ? nullptr : in.data;
        out_desc.data = fdp.ConsumeBool() ? nullptr : out.data;
        // Options: none (sd_plan_create), estimate, measure within a short limit, or hostile.
        const int how = fdp.ConsumeIntegralInRange<int>(0, 3);
        sd_plan_options options{how == 2 ? unsigned{SD_PLAN_MEASURE} : unsigned{SD_PLAN_ESTIMATE},
                                fdp.ConsumeProbability<double>() * 0.2};
        bool hostile = false;
        if (how == 3) {
            options.flags = fdp.ConsumeIntegral<unsigned>();
            const double limits[] = {
                -1,    std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 60000.5,
                1e300, fdp.ConsumeFloatingPoint<double>()};
            options.time_limit_ms = limits[fdp.ConsumeIntegralInRange<int>(0, 5)];
            hostile = options.flags > 1 || !(options.time_limit_ms >= 0 && options.time_limit_ms <= 60000);
        }
        sd_plan *plan = nullptr;
        sd_status ps = how == 0 ? sd_plan_create(&p, &in_desc, &out_desc, &plan)
                                : sd_plan_create_with(&p, &in_desc, &out_desc, &options, &plan);
        if ((ps == SD_OK) != (plan != nullptr)) fail("sd_plan_create's status and plan disagree", p, in, out, ps);
        if (hostile) {
            if (ps != SD_ERROR_INVALID_ARGUMENT || std::strncmp(sd_last_error(), "plan ", 5) != 0) {
                fail("hostile plan options were not refused", p, in, out, ps);
            }
            if (out_buf != out_before || (overlapping && shared != in_before)) {
                fail("a refused plan wrote", p, in, out, ps);
            }
            out_buf = run_out;  // sd_run's results, for the checks below
            shared = run_shared;
        } else {
            if (ps == SD_OK) {
                char words[64];
                if (sd_plan_describe(plan, words, sizeof(words)) <= 0) fail("a plan without words", p, in, out, ps);
                ps = sd_plan_run(plan, in.data, out.data);
            }
            if (ps != s) fail("the plan path's status differs from sd_run's", p, in, out, ps);
            if (s != SD_OK && run_message != sd_last_error()) fail("the plan path's message differs", p, in, out, ps);
            if (out_buf != run_out || shared != run_shared) fail("the plan path wrote other bytes", p, in, out, ps);
        }
        sd_plan_destroy(plan);
    }

    const bool valid_shapes = shapes_valid(p, in, out);
    const bool nonempty = valid_shapes && in_span > 0;
    const bool null_data = (in.data == nullptr && in_span > 0) || (out.data == nullptr && out_span > 0);
    const bool self_alias =
        valid_shapes && !null_data && out_span > 0 && output_self_aliases(out, out_extent.low, out_span);
    const bool fully_valid = valid_shapes && !null_data && !overlapping && !overflow &&
                             (out_span == 0 || output_strides_nest(out)) &&
                             (!nonempty || within_fragment_limit(p, in, out));

    if (s != SD_OK) {
        if (std::strlen(sd_last_error()) == 0) fail("an error without a message", p, in, out, s);
        if (!overlapping && out_buf != out_before) fail("a rejected call wrote to the output", p, in, out, s);
        if ((overlapping ? shared : in_buf) != in_before) fail("a rejected call changed the input", p, in, out, s);
        if (fully_valid) fail("a valid call was rejected", p, in, out, s);
        return 0;
    }
    if (!valid_shapes) fail("a call breaking a docs/SPEC.md rule was accepted", p, in, out, s);
    if (null_data && nonempty) fail("null data with a non-zero size was accepted", p, in, out, s);
    if (overlapping && nonempty) fail("overlapping input and output were accepted", p, in, out, s);
    if (self_alias) fail("an output whose elements share memory was accepted", p, in, out, s);
    if (!nonempty) return 0;
    if (in_buf != in_before) fail("the input changed", p, in, out, s);
    std::vector<uint8_t> want = out_before;
    const reference::TensorRef rin = as_ref(in, in_buf.data() - in_extent.low),
                               rout = as_ref(out, want.data() - out_extent.low);
    const int64_t all_blocks[3] = {p.block_d, p.block_h, p.block_w};
    const int64_t *block = all_blocks + (SD_MAX_NDIM - in.ndim);  // the sizes of the call's spatial dims
    if (p.op == SD_SPACE_TO_DEPTH) {
        reference::space_to_depth(rin, rout, block, p.order == SD_ORDER_CRD);
    } else {
        reference::depth_to_space(rin, rout, block, p.order == SD_ORDER_CRD);
    }
    if (out_buf != want) fail("the output differs from the reference", p, in, out, s);
    return 0;
}
