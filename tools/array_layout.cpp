#include "tools/array_layout.h"

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

}  // namespace array_layout
