// The one table of each enum's names (and the dtypes' sizes), and dense strides: the core's,
// which the C API (c_api.cpp) and the C++ API (api.cpp) both read.
#include "runtime/checked_math.h"
#include "runtime/problem.h"

#include <cstring>

namespace spacedepth::detail {

namespace {

struct DTypeInfo {
    const char *name;
    int size;
};

// Indexed by sd_dtype.
constexpr DTypeInfo kDTypes[] = {
    {"bool", 1},   {"int8", 1},    {"uint8", 1},    {"qint8", 1},   {"quint8", 1},    {"int16", 2},
    {"uint16", 2}, {"float16", 2}, {"bfloat16", 2}, {"int32", 4},   {"uint32", 4},    {"float32", 4},
    {"qint32", 4}, {"int64", 8},   {"uint64", 8},   {"float64", 8}, {"complex64", 8}, {"complex128", 16},
};
static_assert(sizeof(kDTypes) / sizeof(kDTypes[0]) == SD_DTYPE_COUNT, "one entry per sd_dtype, in order");

// Indexed by sd_layout, sd_op and sd_order.
constexpr const char *kLayouts[] = {"NHWC", "NCHW", "NCHW_VECT_C"};
constexpr const char *kOps[] = {"space_to_depth", "depth_to_space"};
constexpr const char *kOrders[] = {"DCR", "CRD"};

template <size_t N>
const char *label(const char *const (&names)[N], int i) {
    return i >= 0 && i < static_cast<int>(N) ? names[i] : nullptr;
}

template <size_t N>
int index_of(const char *const (&names)[N], const std::string &name) {
    for (size_t i = 0; i < N; i++) {
        if (name == names[i]) return static_cast<int>(i);
    }
    return -1;
}

// "NHWC (0), NCHW (1) or NCHW_VECT_C (2)": the values a message says an enum may take.
template <size_t N>
std::string choices(const char *const (&names)[N]) {
    std::string s;
    for (size_t i = 0; i < N; i++) {
        s += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i]) + " (" + std::to_string(i) + ")";
    }
    return s;
}

}  // namespace

int dtype_bytes(sd_dtype d) { return d >= 0 && d < SD_DTYPE_COUNT ? kDTypes[d].size : 0; }
const char *dtype_label(sd_dtype d) { return d >= 0 && d < SD_DTYPE_COUNT ? kDTypes[d].name : nullptr; }
const char *layout_label(sd_layout l) { return label(kLayouts, l); }
const char *op_label(sd_op op) { return label(kOps, op); }
const char *order_label(sd_order order) { return label(kOrders, order); }
std::string layout_choices() { return choices(kLayouts); }
std::string op_choices() { return choices(kOps); }
std::string order_choices() { return choices(kOrders); }

int dtype_index(const std::string &name) {
    for (int i = 0; i < SD_DTYPE_COUNT; i++) {
        if (name == kDTypes[i].name) return i;
    }
    return -1;
}
int layout_index(const std::string &name) { return index_of(kLayouts, name); }
int op_index(const std::string &name) { return index_of(kOps, name); }
int order_index(const std::string &name) { return index_of(kOrders, name); }

Status dense_strides(sd_layout layout, const int64_t dims[4], int64_t strides[4]) {
    for (int i = 0; i < 4; i++) {
        if (dims[i] < 0) {
            return error(SD_ERROR_INVALID_ARGUMENT, "dims must be >= 0: got " + dims_str(dims));
        }
    }
    // Memory order, innermost first, as logical dims.
    static const int kNHWC[4] = {1, 3, 2, 0}, kNCHW[4] = {3, 2, 1, 0};
    const int *order = nullptr;
    int64_t c_extent = dims[1];
    if (layout == SD_LAYOUT_NHWC) {
        order = kNHWC;
    } else if (layout == SD_LAYOUT_NCHW || layout == SD_LAYOUT_NCHW_VECT_C) {
        order = kNCHW;
        if (layout == SD_LAYOUT_NCHW_VECT_C) {
            if (dims[1] % 4 != 0) {
                return error(SD_ERROR_SHAPE,
                             "NCHW_VECT_C needs channels divisible by 4: got C=" + std::to_string(dims[1]));
            }
            c_extent = dims[1] / 4;
        }
    } else {
        return error(SD_ERROR_INVALID_ARGUMENT, "layout " + std::to_string(layout) + " is not " + layout_choices());
    }
    int64_t stride = layout == SD_LAYOUT_NCHW_VECT_C ? 4 : 1;
    for (int i = 0; i < 4; i++) {
        const int k = order[i];
        strides[k] = stride;
        if (!checked_mul(stride, k == 1 ? c_extent : dims[k], &stride)) {
            return error(SD_ERROR_OVERFLOW, "dense strides overflow int64 for dims " + dims_str(dims));
        }
    }
    return {};
}

}  // namespace spacedepth::detail
