// docs/SPEC.md section 5: what is accepted, and the error for what is not. Every message names the rule
// and the values. Nothing here touches tensor memory.
#include "runtime/checked_math.h"
#include "runtime/problem.h"
#include "runtime/small_vector.h"

#include <algorithm>
#include <cstdint>
#include <sstream>

namespace spacedepth::detail {

namespace {

const char *kDimNames[4] = {"N", "C", "H", "W"};

// A tensor's memory as (extent, stride) pairs in elements, the NCHW_VECT_C lane dim included.
SmallVector<std::pair<int64_t, int64_t>, 5> memory_dims(const sd_tensor &t) {
    SmallVector<std::pair<int64_t, int64_t>, 5> d;
    for (int i = 0; i < 4; i++) {
        int64_t extent = t.dims[i];
        if (i == 1 && t.layout == SD_LAYOUT_NCHW_VECT_C) {
            extent = t.dims[1] / 4;
            d.push_back({4, 1});
        }
        d.push_back({extent, t.strides[i]});
    }
    return d;
}

struct Sizes {
    int64_t count = 0;       // elements
    int64_t span_bytes = 0;  // from the first byte to one past the last
};

// Sizes of one tensor, overflow-checked. `which` is "input" or "output".
Status tensor_sizes(const char *op, const char *which, const sd_tensor &t, int64_t elem, Sizes *s) {
    const auto dims = memory_dims(t);
    // An empty tensor has no elements, however large its other dims: their product is never
    // formed (the fuzzer found 2^21 x 2^21 x 2^21 x 0 rejected as an overflow).
    const bool empty = std::any_of(dims.begin(), dims.end(), [](auto d) { return d.first == 0; });
    int64_t count = empty ? 0 : 1, last = 0;
    bool overflow = false;
    for (auto [extent, stride] : dims) {
        overflow |= !empty && !checked_mul(count, extent, &count);
    }
    if (!overflow && count > 0) {
        for (auto [extent, stride] : dims) {
            int64_t reach;
            overflow |= !checked_mul(extent - 1, stride, &reach) || !checked_add(last, reach, &last);
        }
    }
    int64_t span = 0;
    if (!overflow && count > 0) {
        overflow |= !checked_add(last, 1, &span) || !checked_mul(span, elem, &span);
    }
    int64_t bytes;
    overflow |= !checked_mul(count, elem, &bytes);
    if (overflow || static_cast<uint64_t>(span) > SIZE_MAX) {
        std::ostringstream m;
        m << op << ": " << which << " size overflows 64-bit arithmetic (dims " << dims_str(t.dims) << ", strides "
          << dims_str(t.strides) << ", " << elem << "-byte elements)";
        return error(SD_ERROR_OVERFLOW, m.str());
    }
    s->count = count;
    s->span_bytes = span;
    return {};
}

// The output must not write one element twice: sorted by stride, each dim must step past
// everything the smaller dims reach. (Conservative: it also rejects exotic interleaved views.)
bool output_aliases_itself(const sd_tensor &t) {
    auto d = memory_dims(t);
    d.erase(std::remove_if(d.begin(), d.end(), [](auto p) { return p.first <= 1; }), d.end());
    std::sort(d.begin(), d.end(), [](auto a, auto b) { return a.second < b.second; });
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

Status check_params(const sd_params &p) {
    if (p.op != SD_SPACE_TO_DEPTH && p.op != SD_DEPTH_TO_SPACE) {
        return error(SD_ERROR_INVALID_ARGUMENT, "op must be " + op_choices() + ": got " + std::to_string(p.op));
    }
    const std::string op = op_label(p.op);
    if (p.order != SD_ORDER_DCR && p.order != SD_ORDER_CRD) {
        return error(SD_ERROR_INVALID_ARGUMENT,
                     op + ": order must be " + order_choices() + ": got " + std::to_string(p.order));
    }
    if (p.block_h < 1 || p.block_w < 1) {
        return error(SD_ERROR_INVALID_ARGUMENT, op + ": block sizes must be >= 1: got block " +
                                                    std::to_string(p.block_h) + "x" + std::to_string(p.block_w));
    }
    if (p.threads < 0) {
        return error(SD_ERROR_INVALID_ARGUMENT, op + ": threads must be >= 0: got " + std::to_string(p.threads));
    }
    return {};
}

Status implied_dims(const sd_params &p, const int64_t in_dims[4], int64_t implied[4]) {
    const std::string op = op_label(p.op);
    auto fail = [&op](sd_status code, const std::string &what) { return error(code, op + ": " + what); };
    for (int i = 0; i < 4; i++) {
        if (in_dims[i] < 0) {
            return fail(SD_ERROR_INVALID_ARGUMENT,
                        std::string("input dim ") + kDimNames[i] + " is negative: dims " + dims_str(in_dims));
        }
    }
    auto block = [&p] { return std::to_string(p.block_h) + "x" + std::to_string(p.block_w); };
    int64_t area;
    if (!checked_mul(p.block_h, p.block_w, &area)) {
        return fail(SD_ERROR_OVERFLOW, "block area bh*bw overflows int64: block " + block());
    }
    const int64_t n = in_dims[0], c = in_dims[1], h = in_dims[2], w = in_dims[3];
    implied[0] = n;
    if (p.op == SD_SPACE_TO_DEPTH) {
        if (h % p.block_h != 0) {
            return fail(SD_ERROR_SHAPE, "input height H=" + std::to_string(h) +
                                            " is not divisible by block height bh=" + std::to_string(p.block_h) +
                                            " (rule: H % bh == 0)");
        }
        if (w % p.block_w != 0) {
            return fail(SD_ERROR_SHAPE, "input width W=" + std::to_string(w) + " is not divisible by block width bw=" +
                                            std::to_string(p.block_w) + " (rule: W % bw == 0)");
        }
        if (!checked_mul(c, area, &implied[1])) {
            return fail(SD_ERROR_OVERFLOW,
                        "output channels C*bh*bw overflow int64: C=" + std::to_string(c) + ", block " + block());
        }
        implied[2] = h / p.block_h;
        implied[3] = w / p.block_w;
    } else {
        if (c % area != 0) {
            return fail(SD_ERROR_SHAPE, "input channels C=" + std::to_string(c) + " are not divisible by bh*bw=" +
                                            std::to_string(area) + " (rule: C % (bh*bw) == 0, block " + block() + ")");
        }
        implied[1] = c / area;
        if (!checked_mul(h, p.block_h, &implied[2])) {
            return fail(SD_ERROR_OVERFLOW, "output height H*bh overflows int64: H=" + std::to_string(h) +
                                               ", bh=" + std::to_string(p.block_h));
        }
        if (!checked_mul(w, p.block_w, &implied[3])) {
            return fail(SD_ERROR_OVERFLOW, "output width W*bw overflows int64: W=" + std::to_string(w) +
                                               ", bw=" + std::to_string(p.block_w));
        }
    }
    return {};
}

Status validate_layout(const sd_params &p, const sd_tensor &in, const sd_tensor &out, Problem *problem) {
    if (Status s = check_params(p); !s.ok()) {
        return s;
    }
    const char *op = op_label(p.op);
    auto fail = [op](sd_status code, const std::string &what) { return error(code, std::string(op) + ": " + what); };

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
        for (int i = 0; i < 4; i++) {
            if (t->dims[i] < 0) {
                return fail(SD_ERROR_INVALID_ARGUMENT,
                            std::string(which) + " dim " + kDimNames[i] + " is negative: dims " + dims_str(t->dims));
            }
            if (t->strides[i] < 0) {
                return fail(SD_ERROR_INVALID_ARGUMENT, std::string(which) + " stride of " + kDimNames[i] +
                                                           " is negative: strides " + dims_str(t->strides) +
                                                           " (strides must be >= 0)");
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

    int64_t implied[4];
    if (Status s = implied_dims(p, in.dims, implied); !s.ok()) {
        return s;
    }
    if (!std::equal(implied, implied + 4, out.dims)) {
        return fail(SD_ERROR_SHAPE, "output dims " + dims_str(out.dims) + " are not the implied " + dims_str(implied) +
                                        " for input dims " + dims_str(in.dims) + " and block " +
                                        std::to_string(p.block_h) + "x" + std::to_string(p.block_w));
    }
    if (vect_c) {
        for (const sd_tensor *t : {&in, &out}) {
            if (t->dims[1] % 4 != 0) {
                return fail(SD_ERROR_SHAPE, std::string(t == &in ? "input" : "output") +
                                                " channels C=" + std::to_string(t->dims[1]) +
                                                " are not divisible by 4 (rule: with NCHW_VECT_C on either side, both "
                                                "channel counts must be multiples of 4)");
            }
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
        return fail(SD_ERROR_OVERLAP, "output strides " + dims_str(out.strides) + " make elements of dims " +
                                          dims_str(out.dims) +
                                          " share memory (rule: each output element has its own address)");
    }
    *problem = Problem{p.op,  p.order,   p.block_h,          p.block_w,          in, out, elem, in_size.count * elem,
                       empty, p.threads, in_size.span_bytes, out_size.span_bytes};
    return {};
}

Status validate_memory(const Problem &problem, const void *in, const void *out) {
    if (problem.empty) {
        return {};
    }
    if (in == nullptr || out == nullptr) {
        return error(SD_ERROR_NULL_DATA,
                     std::string(op_label(problem.op)) + ": " + (in == nullptr ? "input" : "output") +
                         " data is null but the tensor has " + std::to_string(problem.bytes / problem.elem_bytes) +
                         " elements (rule: null data only with a zero size)");
    }
    const uintptr_t in_lo = reinterpret_cast<uintptr_t>(in), out_lo = reinterpret_cast<uintptr_t>(out);
    const uintptr_t in_hi = in_lo + static_cast<uintptr_t>(problem.in_span_bytes);
    const uintptr_t out_hi = out_lo + static_cast<uintptr_t>(problem.out_span_bytes);
    if (in_lo < out_hi && out_lo < in_hi) {
        std::ostringstream m;
        m << op_label(problem.op) << ": input memory [" << in << ", +" << problem.in_span_bytes
          << " bytes) overlaps output memory [" << out << ", +" << problem.out_span_bytes
          << " bytes) (rule: the operation is not in place)";
        return error(SD_ERROR_OVERLAP, m.str());
    }
    return {};
}

Status validate(const sd_params &p, const sd_tensor &in, const sd_tensor &out, Problem *problem) {
    if (Status s = validate_layout(p, in, out, problem); !s.ok()) {
        return s;
    }
    return validate_memory(*problem, in.data, out.data);
}

}  // namespace spacedepth::detail
