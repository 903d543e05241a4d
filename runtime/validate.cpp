// docs/SPEC.md section 5: what is accepted, and the error for what is not. Every message names the rule
// and the values. Nothing here touches tensor memory.
#include "runtime/checked_math.h"
#include "runtime/problem.h"
#include "runtime/small_vector.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <sstream>

namespace spacedepth::detail {

namespace {

// The name of logical dim i of an ndim-dim tensor, and of the block size along spatial dim i.
const char *dim_name(int ndim, int i) {
    static const char *const kNames[] = {"D", "H", "W"};
    return i == 0 ? "N" : i == 1 ? "C" : kNames[i - 2 + SD_MAX_NDIM - ndim];
}
const char *dim_word(int ndim, int i) {
    static const char *const kWords[] = {"depth", "height", "width"};
    return kWords[i - 2 + SD_MAX_NDIM - ndim];
}

// The block sizes of the call's spatial dims, outermost first: (bd, bh, bw), (bh, bw) or (bw).
SmallVector<int64_t, kMaxSpatialRank> block_sizes(const sd_params &p, int ndim) {
    const int64_t all[kMaxSpatialRank] = {p.block_d, p.block_h, p.block_w};
    SmallVector<int64_t, kMaxSpatialRank> b;
    for (int i = SD_MAX_NDIM - ndim; i < kMaxSpatialRank; i++) b.push_back(all[i]);
    return b;
}

// "bh" for spatial dim i, and the block volume's product: "bw", "bh*bw" or "bd*bh*bw".
std::string block_name(int ndim, int i) {
    return std::string("b") + static_cast<char>(std::tolower(dim_name(ndim, i)[0]));
}
const char *volume_expr(int ndim) { return ndim == 3 ? "bw" : ndim == 4 ? "bh*bw" : "bd*bh*bw"; }

std::string block_str(const sd_params &p, int ndim) {
    std::string s;
    for (int64_t b : block_sizes(p, ndim)) s += (s.empty() ? "" : "x") + std::to_string(b);
    return s;
}

using MemoryDims = SmallVector<std::pair<int64_t, int64_t>, SD_MAX_NDIM + 1>;

// A tensor's memory as (extent, stride) pairs in elements, a blocked layout's lane dim included.
MemoryDims memory_dims(const sd_tensor &t) {
    MemoryDims d;
    const int64_t lanes = layout_lanes(t.layout);
    for (int i = 0; i < t.ndim; i++) {
        int64_t extent = t.dims[i];
        if (i == 1 && lanes > 1) {
            extent = t.dims[1] / lanes;
            d.push_back({lanes, 1});
        }
        d.push_back({extent, t.strides[i]});
    }
    return d;
}

struct Sizes {
    int64_t count = 0;       // elements
    int64_t low_bytes = 0;   // the lowest byte's offset from the data pointer: < 0 with negative strides
    int64_t span_bytes = 0;  // from the lowest byte to one past the highest
};

// Sizes of one tensor, overflow-checked. `which` is "input" or "output". A negative stride
// reaches below the data pointer (the element at logical index 0), as in numpy and DLPack.
Status tensor_sizes(const char *op, const char *which, const sd_tensor &t, int64_t elem, Sizes *s) {
    const auto dims = memory_dims(t);
    // An empty tensor has no elements, however large its other dims: their product is never
    // formed (the fuzzer found 2^21 x 2^21 x 2^21 x 0 rejected as an overflow).
    const bool empty = std::any_of(dims.begin(), dims.end(), [](auto d) { return d.first == 0; });
    int64_t count = empty ? 0 : 1, low = 0, high = 0;
    bool overflow = false;
    for (auto [extent, stride] : dims) {
        overflow |= !empty && !checked_mul(count, extent, &count);
    }
    if (!overflow && count > 0) {
        for (auto [extent, stride] : dims) {
            int64_t reach;
            overflow |= !checked_mul(extent - 1, stride, &reach) ||
                        !(reach < 0 ? checked_add(low, reach, &low) : checked_add(high, reach, &high));
        }
    }
    int64_t span = 0, low_bytes = 0;
    if (!overflow && count > 0) {
        overflow |= !checked_sub(high, low, &span) || !checked_add(span, 1, &span) || !checked_mul(span, elem, &span) ||
                    !checked_mul(low, elem, &low_bytes);
    }
    int64_t bytes;
    overflow |= !checked_mul(count, elem, &bytes);
    if (overflow || static_cast<uint64_t>(span) > SIZE_MAX) {
        std::ostringstream m;
        m << op << ": " << which << " size overflows 64-bit arithmetic (dims " << dims_str(t.ndim, t.dims)
          << ", strides " << dims_str(t.ndim, t.strides) << ", " << elem << "-byte elements)";
        return error(SD_ERROR_OVERFLOW, m.str());
    }
    s->count = count;
    s->low_bytes = low_bytes;
    s->span_bytes = span;
    return {};
}

// The output must not write one element twice: sorted by stride, each dim must step past
// everything the smaller dims reach. (Conservative: it also rejects exotic interleaved views.)
// A stride's sign does not matter: a reversed dim reaches as far the other way.
bool output_aliases_itself(const sd_tensor &t) {
    auto d = memory_dims(t);
    d.erase(std::remove_if(d.begin(), d.end(), [](auto p) { return p.first <= 1; }), d.end());
    for (auto &[extent, stride] : d) stride = magnitude(stride);
    // By stride, a few dims: insertion sort (std::sort's 16-element branch, dead here, draws
    // GCC 12's -Warray-bounds on the small vector's inline storage).
    for (size_t i = 1; i < d.size(); i++) {
        for (size_t j = i; j > 0 && d[j].second < d[j - 1].second; j--) std::swap(d[j], d[j - 1]);
    }
    int64_t reach = 0;  // largest offset reachable with the dims so far
    for (auto [extent, stride] : d) {
        if (stride <= reach) {
            return true;
        }
        reach += (extent - 1) * stride;  // cannot overflow: the span check passed
    }
    return false;
}

}  // namespace

Status check_params(const sd_params &p, int ndim) {
    if (p.op != SD_SPACE_TO_DEPTH && p.op != SD_DEPTH_TO_SPACE) {
        return error(SD_ERROR_INVALID_ARGUMENT, "op must be " + op_choices() + ": got " + std::to_string(p.op));
    }
    const char *op = op_label(p.op);  // messages are formed only on failure
    if (p.order != SD_ORDER_DCR && p.order != SD_ORDER_CRD) {
        return error(SD_ERROR_INVALID_ARGUMENT,
                     std::string(op) + ": order must be " + order_choices() + ": got " + std::to_string(p.order));
    }
    if (Status s = check_ndim(ndim, op, "input"); !s.ok()) {
        return s;
    }
    const int64_t all[kMaxSpatialRank] = {p.block_d, p.block_h, p.block_w};
    static const char *const kFields[kMaxSpatialRank] = {"block_d", "block_h", "block_w"};
    for (int i = 0; i < kMaxSpatialRank; i++) {
        const bool used = i >= SD_MAX_NDIM - ndim;
        if (used && all[i] < 1) {
            return error(SD_ERROR_INVALID_ARGUMENT, std::string(op) + ": block sizes must be >= 1: got block " +
                                                        block_str(p, ndim) + " (" + kFields[i] + "=" +
                                                        std::to_string(all[i]) + ")");
        }
        if (!used && all[i] != 0 && all[i] != 1) {
            return error(SD_ERROR_INVALID_ARGUMENT, std::string(op) + ": " + kFields[i] + "=" + std::to_string(all[i]) +
                                                        " but " + std::to_string(ndim) +
                                                        "-dim tensors have spatial rank " + std::to_string(ndim - 2) +
                                                        " (rule: a block size for a dim the tensors lack is 0 or 1)");
        }
    }
    if (p.threads < 0) {
        return error(SD_ERROR_INVALID_ARGUMENT,
                     std::string(op) + ": threads must be >= 0: got " + std::to_string(p.threads));
    }
    return {};
}

Status implied_dims(const sd_params &p, int ndim, const int64_t *in_dims, int64_t *implied) {
    const char *op = op_label(p.op);
    auto fail = [op](sd_status code, const std::string &what) { return error(code, std::string(op) + ": " + what); };
    for (int i = 0; i < ndim; i++) {
        if (in_dims[i] < 0) {
            return fail(SD_ERROR_INVALID_ARGUMENT, std::string("input dim ") + dim_name(ndim, i) +
                                                       " is negative: dims " + dims_str(ndim, in_dims));
        }
    }
    const auto blocks = block_sizes(p, ndim);
    int64_t area = 1;
    for (int64_t b : blocks) {
        if (!checked_mul(area, b, &area)) {
            return fail(SD_ERROR_OVERFLOW, std::string(ndim == 5 ? "block volume " : "block area ") +
                                               volume_expr(ndim) + " overflows int64: block " + block_str(p, ndim));
        }
    }
    const int64_t c = in_dims[1];
    implied[0] = in_dims[0];
    if (p.op == SD_SPACE_TO_DEPTH) {
        for (int i = 2; i < ndim; i++) {
            const int64_t b = blocks[i - 2];
            if (in_dims[i] % b != 0) {
                const std::string dim = dim_name(ndim, i), bn = block_name(ndim, i);
                return fail(SD_ERROR_SHAPE, std::string("input ") + dim_word(ndim, i) + " " + dim + "=" +
                                                std::to_string(in_dims[i]) + " is not divisible by block " +
                                                dim_word(ndim, i) + " " + bn + "=" + std::to_string(b) +
                                                " (rule: " + dim + " % " + bn + " == 0)");
            }
            implied[i] = in_dims[i] / b;
        }
        if (!checked_mul(c, area, &implied[1])) {
            return fail(SD_ERROR_OVERFLOW, std::string("output channels C*") + volume_expr(ndim) +
                                               " overflow int64: C=" + std::to_string(c) + ", block " +
                                               block_str(p, ndim));
        }
    } else {
        if (c % area != 0) {
            const std::string volume = volume_expr(ndim);
            return fail(SD_ERROR_SHAPE, "input channels C=" + std::to_string(c) + " are not divisible by " + volume +
                                            "=" + std::to_string(area) + " (rule: C % (" + volume + ") == 0, block " +
                                            block_str(p, ndim) + ")");
        }
        implied[1] = c / area;
        for (int i = 2; i < ndim; i++) {
            if (!checked_mul(in_dims[i], blocks[i - 2], &implied[i])) {
                const std::string dim = dim_name(ndim, i), bn = block_name(ndim, i);
                return fail(SD_ERROR_OVERFLOW, std::string("output ") + dim_word(ndim, i) + " " + dim + "*" + bn +
                                                   " overflows int64: " + dim + "=" + std::to_string(in_dims[i]) +
                                                   ", " + bn + "=" + std::to_string(blocks[i - 2]));
            }
        }
    }
    return {};
}

namespace {

// The call in its one internal form: 5-D tensors and a 3-D block (problem.h).
sd_tensor as_5d(const sd_tensor &t) {
    sd_tensor r = t;
    const int missing = SD_MAX_NDIM - t.ndim;
    r.ndim = SD_MAX_NDIM;
    for (int i = 0; i < SD_MAX_NDIM; i++) {
        const bool spatial_missing = i >= 2 && i < 2 + missing;
        const int from = i < 2 ? i : i - missing;
        r.dims[i] = spatial_missing ? 1 : t.dims[from];
        r.strides[i] = spatial_missing ? 0 : t.strides[from];
    }
    return r;
}

}  // namespace

Status validate_layout(const sd_params &p, const sd_tensor &in, const sd_tensor &out, Problem *problem) {
    if (Status s = check_params(p, in.ndim); !s.ok()) {
        return s;
    }
    const char *op = op_label(p.op);
    auto fail = [op](sd_status code, const std::string &what) { return error(code, std::string(op) + ": " + what); };
    if (out.ndim != in.ndim) {
        return fail(SD_ERROR_INVALID_ARGUMENT, "output ndim " + std::to_string(out.ndim) + " differs from input ndim " +
                                                   std::to_string(in.ndim) + " (both tensors have the same rank)");
    }
    const int ndim = in.ndim;

    for (const sd_tensor *t : {&in, &out}) {
        const char *which = t == &in ? "input" : "output";
        if (dtype_bytes(t->dtype) == 0) {
            return fail(SD_ERROR_INVALID_ARGUMENT,
                        std::string(which) + " dtype " + std::to_string(t->dtype) + " is not a known dtype");
        }
        if (layout_label(t->layout) == nullptr) {
            return fail(SD_ERROR_INVALID_ARGUMENT,
                        std::string(which) + " layout " + std::to_string(t->layout) + " is not " + layout_choices());
        }
        for (int i = 0; i < ndim; i++) {
            if (t->dims[i] < 0) {
                return fail(SD_ERROR_INVALID_ARGUMENT, std::string(which) + " dim " + dim_name(ndim, i) +
                                                           " is negative: dims " + dims_str(ndim, t->dims));
            }
        }
    }
    if (in.dtype != out.dtype) {
        return fail(SD_ERROR_INVALID_ARGUMENT, std::string("input dtype ") + dtype_label(in.dtype) +
                                                   " differs from output dtype " + dtype_label(out.dtype) +
                                                   " (the element types must be equal)");
    }
    const int64_t elem = dtype_bytes(in.dtype);
    const bool vect_c = in.layout == SD_LAYOUT_NCHW_VECT_C || out.layout == SD_LAYOUT_NCHW_VECT_C;
    if (vect_c && elem != 1) {
        return fail(SD_ERROR_INVALID_ARGUMENT, std::string("NCHW_VECT_C holds 1-byte elements only: dtype ") +
                                                   dtype_label(in.dtype) + " has " + std::to_string(elem) + " bytes");
    }

    int64_t implied[SD_MAX_NDIM];
    if (Status s = implied_dims(p, ndim, in.dims, implied); !s.ok()) {
        return s;
    }
    if (!std::equal(implied, implied + ndim, out.dims)) {
        return fail(SD_ERROR_SHAPE, "output dims " + dims_str(ndim, out.dims) + " are not the implied " +
                                        dims_str(ndim, implied) + " for input dims " + dims_str(ndim, in.dims) +
                                        " and block " + block_str(p, ndim));
    }
    for (const sd_tensor *t : {&in, &out}) {
        const int64_t lanes = layout_lanes(t->layout);
        if (t->dims[1] % lanes != 0) {
            return fail(SD_ERROR_SHAPE, std::string(t == &in ? "input" : "output") +
                                            " channels C=" + std::to_string(t->dims[1]) + " are not divisible by " +
                                            std::to_string(lanes) + " (rule: " + layout_label(t->layout) +
                                            " stores channels in groups of " + std::to_string(lanes) + ")");
        }
    }

    Sizes in_size, out_size;
    if (Status s = tensor_sizes(op, "input", in, elem, &in_size); !s.ok()) {
        return s;
    }
    if (Status s = tensor_sizes(op, "output", out, elem, &out_size); !s.ok()) {
        return s;
    }
    const bool empty = in_size.count == 0;
    if (!empty && output_aliases_itself(out)) {
        return fail(SD_ERROR_OVERLAP, "output strides " + dims_str(ndim, out.strides) + " make elements of dims " +
                                          dims_str(ndim, out.dims) +
                                          " share memory (rule: each output element has its own address)");
    }
    const int missing = SD_MAX_NDIM - ndim;  // outermost spatial dims the call lacks
    *problem = Problem{p.op,
                       p.order,
                       {missing > 0 ? 1 : p.block_d, missing > 1 ? 1 : p.block_h, p.block_w},
                       ndim - 2,
                       as_5d(in),
                       as_5d(out),
                       elem,
                       in_size.count * elem,
                       empty,
                       p.threads,
                       in_size.low_bytes,
                       out_size.low_bytes,
                       in_size.span_bytes,
                       out_size.span_bytes};
    return {};
}

namespace {

// A tensor's bytes, [data + low, data + low + span) (low < 0 with negative strides); false when
// that range wraps around the address space: no memory a caller can own.
inline bool address_range(const void *data, int64_t low, int64_t span, uintptr_t *lo, uintptr_t *hi) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(data), below = static_cast<uintptr_t>(-low);
    *lo = at - below;
    *hi = *lo + static_cast<uintptr_t>(span);
    return at >= below && *hi >= *lo;
}

// The errors of validate_memory, out of line: a plan's run checks its memory on every call, and
// the checks alone stay in the caller (a 64-byte call through a plan spent 13 % of its time in
// them while they built their messages' streams in the same functions).
[[gnu::cold, gnu::noinline]] Status memory_error(const Problem &problem, const void *in, const void *out) {
    if (in == nullptr || out == nullptr) {
        return error(SD_ERROR_NULL_DATA,
                     std::string(op_label(problem.op)) + ": " + (in == nullptr ? "input" : "output") +
                         " data is null but the tensor has " + std::to_string(problem.bytes / problem.elem_bytes) +
                         " elements (rule: null data only with a zero size)");
    }
    const auto wraps = [&](const char *which, const void *data, int64_t low, int64_t span) {
        std::ostringstream m;
        m << op_label(problem.op) << ": " << which << " data " << data << " with its strides reaches " << -low
          << " bytes below and " << span
          << " bytes in all, past the ends of the address space (rule: a tensor's bytes are addressable memory)";
        return error(SD_ERROR_OVERFLOW, m.str());
    };
    uintptr_t in_lo, in_hi, out_lo, out_hi;
    if (!address_range(in, problem.in_low_bytes, problem.in_span_bytes, &in_lo, &in_hi)) {
        return wraps("input", in, problem.in_low_bytes, problem.in_span_bytes);
    }
    if (!address_range(out, problem.out_low_bytes, problem.out_span_bytes, &out_lo, &out_hi)) {
        return wraps("output", out, problem.out_low_bytes, problem.out_span_bytes);
    }
    std::ostringstream m;
    m << op_label(problem.op) << ": input memory [" << reinterpret_cast<const void *>(in_lo) << ", +"
      << problem.in_span_bytes << " bytes) overlaps output memory [" << reinterpret_cast<const void *>(out_lo) << ", +"
      << problem.out_span_bytes << " bytes) (rule: the operation is not in place)";
    return error(SD_ERROR_OVERLAP, m.str());
}

}  // namespace

Status validate_memory(const Problem &problem, const void *in, const void *out) {
    if (problem.empty) {
        return {};
    }
    uintptr_t in_lo, in_hi, out_lo, out_hi;
    const bool fits = in != nullptr && out != nullptr &&
                      address_range(in, problem.in_low_bytes, problem.in_span_bytes, &in_lo, &in_hi) &&
                      address_range(out, problem.out_low_bytes, problem.out_span_bytes, &out_lo, &out_hi);
    if (fits && !(in_lo < out_hi && out_lo < in_hi)) {
        return {};
    }
    return memory_error(problem, in, out);
}

Status validate(const sd_params &p, const sd_tensor &in, const sd_tensor &out, Problem *problem) {
    if (Status s = validate_layout(p, in, out, problem); !s.ok()) {
        return s;
    }
    return validate_memory(*problem, in.data, out.data);
}

}  // namespace spacedepth::detail
