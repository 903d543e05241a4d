#include "tools/array_layout.h"

#include <algorithm>

namespace array_layout {

using spacedepth::Layout;

std::string misfit(const std::vector<int64_t> &shape, Layout layout) {
    const int k = spacedepth::layout_lanes(layout);
    const size_t extra = k > 1 ? 1 : 0;  // the lane dim
    if (shape.size() >= 3 + extra && shape.size() <= SD_MAX_NDIM + extra && (k == 1 || shape.back() == k)) {
        return "";
    }
    return layout == Layout::NHWC   ? "[N,W,C], [N,H,W,C] or [N,D,H,W,C]"
           : layout == Layout::NCHW ? "[N,C,W], [N,C,H,W] or [N,C,D,H,W]"
                                    : "[N,C/k,(D,)(H,)W,k] with k=" + std::to_string(k);
}

std::vector<int64_t> logical_order(const std::vector<int64_t> &v, Layout layout) {
    const int ndim = static_cast<int>(v.size()) - (spacedepth::layout_lanes(layout) > 1 ? 1 : 0);
    std::vector<int64_t> d = {v[0]};
    if (layout == Layout::NHWC) {
        d.push_back(v[ndim - 1]);
        d.insert(d.end(), v.begin() + 1, v.begin() + ndim - 1);
    } else {
        d.insert(d.end(), v.begin() + 1, v.begin() + ndim);
    }
    return d;
}

std::vector<int64_t> array_shape(const int64_t *dims, int ndim, Layout layout) {
    const int k = spacedepth::layout_lanes(layout);
    std::vector<int64_t> s = {dims[0]};
    if (layout == Layout::NHWC) {
        s.insert(s.end(), dims + 2, dims + ndim);
        s.push_back(dims[1]);
        return s;
    }
    s.push_back(dims[1] / k);
    s.insert(s.end(), dims + 2, dims + ndim);
    if (k > 1) s.push_back(k);
    return s;
}

std::string parse_layout(const std::string &name, const char *which, sd_layout *layout) {
    spacedepth::Layout l;
    if (!spacedepth::layout_from_name(name, &l)) {
        return std::string(which) + " '" + name +
               "' is not a layout: NHWC, NCHW, NCHWc4, NCHWc8, NCHWc16 or NCHW_VECT_C (or the rank's own "
               "spellings: NWC, NDHWC, NCW, NCDHW, nChw16c, ...)";
    }
    *layout = static_cast<sd_layout>(l);
    return "";
}

std::string parse_order(const std::string &name, sd_order *order) {
    spacedepth::Order o;
    if (!spacedepth::order_from_name(name, &o)) return "order '" + name + "' is not DCR or CRD";
    *order = static_cast<sd_order>(o);
    return "";
}

std::string parse_op(const std::string &name, sd_op *op) {
    spacedepth::Op o;
    if (!spacedepth::op_from_name(name, &o)) return "op '" + name + "' is not space_to_depth or depth_to_space";
    *op = static_cast<sd_op>(o);
    return "";
}

std::string shape_str(const std::vector<int64_t> &s) {
    std::string r = "(";
    for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + (s.size() == 1 ? ",)" : ")");
}

std::string describe(const std::vector<int64_t> &shape, const std::vector<int64_t> *strides, sd_layout layout,
                     const char *which, sd_tensor *t) {
    const auto l = static_cast<Layout>(layout);
    if (const std::string want = misfit(shape, l); !want.empty()) {
        return std::string(which) + " of shape " + shape_str(shape) + " does not fit layout " +
               spacedepth::layout_name(l) + ", which needs " + want;
    }
    if (strides != nullptr && strides->size() != shape.size()) {
        return std::string(which) + ": " + std::to_string(shape.size()) + " dims but " +
               std::to_string(strides->size()) + " strides";
    }
    const int k = spacedepth::layout_lanes(l);
    const std::vector<int64_t> dims = logical_order(shape, l);
    t->ndim = static_cast<int>(dims.size());
    t->layout = layout;
    for (int i = 0; i < t->ndim; i++) t->dims[i] = dims[i] * (i == 1 ? k : 1);
    if (strides == nullptr) return "";
    const std::vector<int64_t> logical_strides = logical_order(*strides, l);
    std::copy(logical_strides.begin(), logical_strides.end(), t->strides);
    if (const int64_t lane = strides->back(); k > 1 && lane != 1) {
        // Lanes that are not adjacent: still one channel stride when groups step k lanes (a
        // broadcast, stride 0 for both, is one): the same memory as channels first.
        if (layout == SD_LAYOUT_NCHW_VECT_C || t->strides[1] != k * lane) {
            return std::string(which) + ": the " + std::to_string(k) +
                   " channels of a group (its last dim) must be adjacent (stride 1): got stride " +
                   std::to_string(lane);
        }
        t->layout = SD_LAYOUT_NCHW;
        t->strides[1] = lane;
    }
    return "";
}

std::string params_of(sd_op op, const std::vector<int64_t> &block, sd_order order, int ndim, int threads,
                      sd_params *params) {
    const int spatial = ndim - 2;
    if (block.size() != 1 && static_cast<int>(block.size()) != spatial) {
        return "block has " + std::to_string(block.size()) + " sizes, but the tensors have " + std::to_string(spatial) +
               " spatial dim" + (spatial == 1 ? "" : "s") + ": give one size (square) or " + std::to_string(spatial);
    }
    int64_t sizes[3] = {0, 0, 0};  // d, h, w; 0 for a dim the tensors lack
    for (int i = 0; i < spatial; i++) sizes[3 - spatial + i] = block.size() == 1 ? block[0] : block[i];
    *params = sd_params{op, sizes[1], sizes[2], order, threads, sizes[0]};
    return "";
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t> &shape) {
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = strides.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    return strides;
}

std::string output_shape(sd_op op, const std::vector<int64_t> &in_shape, const std::vector<int64_t> &block,
                         sd_order order, sd_layout layout, sd_layout out_layout, std::vector<int64_t> *out_shape) {
    sd_tensor in{};
    sd_params p{};
    if (std::string e = describe(in_shape, nullptr, layout, "x", &in); !e.empty()) return e;
    if (std::string e = params_of(op, block, order, in.ndim, 0, &p); !e.empty()) return e;
    return output_array_shape(p, in, out_layout, out_shape);
}

std::string output_array_shape(const sd_params &params, const sd_tensor &in, sd_layout out_layout,
                               std::vector<int64_t> *out_shape) {
    sd_tensor out{};
    if (sd_output_dims_nd(&params, in.ndim, in.dims, out.dims) != SD_OK) return sd_last_error();
    const auto l = static_cast<Layout>(out_layout);
    if (const int k = spacedepth::layout_lanes(l); out.dims[1] % k != 0) {  // as validation words it
        return std::string(params.op == SD_SPACE_TO_DEPTH ? "space_to_depth" : "depth_to_space") +
               ": output channels C=" + std::to_string(out.dims[1]) + " are not divisible by " + std::to_string(k) +
               " (rule: " + spacedepth::layout_name(l) + " stores channels in groups of " + std::to_string(k) + ")";
    }
    *out_shape = array_shape(out.dims, in.ndim, l);
    return "";
}

}  // namespace array_layout
