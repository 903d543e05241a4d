// The one table of each enum's names (and the dtypes' sizes), and dense strides: the core's,
// which the C API (c_api.cpp) and the C++ API (api.cpp) both read.
#include "runtime/checked_math.h"
#include "runtime/problem.h"

#include <algorithm>
#include <cstring>

namespace spacedepth::detail {

namespace {

struct DTypeInfo {
    const char *name;
    int size;
    const char *numpy;  // numpy's array-interface kind and size ("f4"), or nullptr: numpy has no such type
};

// Indexed by sd_dtype.
constexpr DTypeInfo kDTypes[] = {
    {"bool", 1, "b1"},        {"int8", 1, "i1"},         {"uint8", 1, "u1"},  {"qint8", 1, nullptr},
    {"quint8", 1, nullptr},   {"int16", 2, "i2"},        {"uint16", 2, "u2"}, {"float16", 2, "f2"},
    {"bfloat16", 2, nullptr}, {"int32", 4, "i4"},        {"uint32", 4, "u4"}, {"float32", 4, "f4"},
    {"qint32", 4, nullptr},   {"int64", 8, "i8"},        {"uint64", 8, "u8"}, {"float64", 8, "f8"},
    {"complex64", 8, "c8"},   {"complex128", 16, "c16"},
};

// The dtype that carries raw elements of a width (ml_dtypes' bfloat16 and float8, long double,
// void): the ops move bytes, so any type of that width carries them.
sd_dtype raw_carrier(int bytes) {
    switch (bytes) {
    case 1: return SD_UINT8;
    case 2: return SD_UINT16;
    case 4: return SD_UINT32;
    case 8: return SD_UINT64;
    case 16: return SD_COMPLEX128;
    default: return SD_DTYPE_COUNT;
    }
}
static_assert(sizeof(kDTypes) / sizeof(kDTypes[0]) == SD_DTYPE_COUNT, "one entry per sd_dtype, in order");

// Indexed by sd_layout, sd_op and sd_order.
constexpr const char *kLayouts[] = {"NHWC", "NCHW", "NCHW_VECT_C", "NCHWc4", "NCHWc8", "NCHWc16"};
// The same layouts as spelled at spatial rank 1 and 3, and oneDNN's names, for layout_index().
struct LayoutAlias {
    const char *name;
    sd_layout layout;
};
constexpr LayoutAlias kLayoutAliases[] = {
    {"NWC", SD_LAYOUT_NHWC},         {"NDHWC", SD_LAYOUT_NHWC},     {"NCW", SD_LAYOUT_NCHW},
    {"NCDHW", SD_LAYOUT_NCHW},       {"NCWc4", SD_LAYOUT_NCHWC4},   {"NCDHWc4", SD_LAYOUT_NCHWC4},
    {"NCWc8", SD_LAYOUT_NCHWC8},     {"NCDHWc8", SD_LAYOUT_NCHWC8}, {"NCWc16", SD_LAYOUT_NCHWC16},
    {"NCDHWc16", SD_LAYOUT_NCHWC16}, {"nCw4c", SD_LAYOUT_NCHWC4},   {"nChw4c", SD_LAYOUT_NCHWC4},
    {"nCdhw4c", SD_LAYOUT_NCHWC4},   {"nCw8c", SD_LAYOUT_NCHWC8},   {"nChw8c", SD_LAYOUT_NCHWC8},
    {"nCdhw8c", SD_LAYOUT_NCHWC8},   {"nCw16c", SD_LAYOUT_NCHWC16}, {"nChw16c", SD_LAYOUT_NCHWC16},
    {"nCdhw16c", SD_LAYOUT_NCHWC16},
};
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
Status dtype_from_typestr(const std::string &typestr, sd_dtype *dtype) {
    const std::string quoted = "'" + typestr + "'";
    // One byte-order character, which does not matter to a permutation of whole elements.
    const size_t at = !typestr.empty() && std::strchr("<>|=", typestr[0]) != nullptr ? 1 : 0;
    const char kind = typestr.size() > at ? typestr[at] : '\0';
    const char *what = kind == 'O'                  ? "objects"
                       : kind == 'S' || kind == 'a' ? "byte strings"
                       : kind == 'U'                ? "unicode strings"
                       : kind == 'M'                ? "datetimes"
                       : kind == 'm'                ? "timedeltas"
                                                    : nullptr;
    if (what != nullptr) {
        return error(SD_ERROR_UNSUPPORTED, "unsupported dtype " + quoted + ": " + what +
                                               " are no tensor elements (spacedepth moves numbers, bools and raw "
                                               "elements of 1, 2, 4, 8 or 16 bytes)");
    }
    const std::string digits = typestr.substr(std::min(typestr.size(), at + 1));
    if (std::strchr("biufcV", kind) == nullptr || kind == '\0' || digits.empty() || digits.size() > 3 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
        return error(SD_ERROR_INVALID_ARGUMENT,
                     "dtype " + quoted +
                         " is not a numpy type string: an optional byte order (<, >, |, =), a kind (b, i, u, f, c, "
                         "V) and a size in bytes, as in '<f4'");
    }
    const int bytes = std::stoi(digits);
    for (int i = 0; i < SD_DTYPE_COUNT; i++) {
        if (kDTypes[i].numpy != nullptr && kind + digits == kDTypes[i].numpy) {
            *dtype = static_cast<sd_dtype>(i);
            return {};
        }
    }
    const sd_dtype carrier = raw_carrier(bytes);
    if (carrier == SD_DTYPE_COUNT) {
        return error(SD_ERROR_UNSUPPORTED, "unsupported dtype " + quoted + ": elements of " + std::to_string(bytes) +
                                               " bytes (spacedepth moves elements of 1, 2, 4, 8 or 16 bytes)");
    }
    *dtype = carrier;
    return {};
}

int layout_index(const std::string &name) {
    if (const int i = index_of(kLayouts, name); i >= 0) return i;  // the usual spellings first
    for (const LayoutAlias &a : kLayoutAliases) {
        if (name == a.name) return a.layout;
    }
    return -1;
}

int64_t layout_lanes(sd_layout layout) {
    switch (layout) {
    case SD_LAYOUT_NCHW_VECT_C:
    case SD_LAYOUT_NCHWC4: return 4;
    case SD_LAYOUT_NCHWC8: return 8;
    case SD_LAYOUT_NCHWC16: return 16;
    default: return 1;
    }
}

Status check_ndim(int ndim, const char *op, const char *which) {
    if (ndim < 3 || ndim > SD_MAX_NDIM) {
        return error(SD_ERROR_INVALID_ARGUMENT, (op != nullptr ? std::string(op) + ": " : std::string()) + which +
                                                    " ndim must be 3, 4 or 5 (N, C and 1-3 spatial dims): got " +
                                                    std::to_string(ndim));
    }
    return {};
}

int op_index(const std::string &name) { return index_of(kOps, name); }
int order_index(const std::string &name) { return index_of(kOrders, name); }

Status dense_strides(sd_layout layout, int ndim, const int64_t *dims, int64_t *strides) {
    if (Status s = check_ndim(ndim, nullptr, "tensor"); !s.ok()) {
        return s;
    }
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 0) {
            return error(SD_ERROR_INVALID_ARGUMENT, "dims must be >= 0: got " + dims_str(ndim, dims));
        }
    }
    if (layout_label(layout) == nullptr) {
        return error(SD_ERROR_INVALID_ARGUMENT, "layout " + std::to_string(layout) + " is not " + layout_choices());
    }
    const int64_t lanes = layout_lanes(layout);
    if (dims[1] % lanes != 0) {
        return error(SD_ERROR_SHAPE, std::string(layout_label(layout)) + " needs channels divisible by " +
                                         std::to_string(lanes) + ": got C=" + std::to_string(dims[1]));
    }
    // Memory order, innermost first, as logical dims: channels last is C, then the spatial dims
    // from W outwards, then N; the others are the spatial dims from W outwards, C, N.
    int order[SD_MAX_NDIM], k = 0;
    if (layout == SD_LAYOUT_NHWC) order[k++] = 1;
    for (int i = ndim - 1; i >= 2; i--) order[k++] = i;
    if (layout != SD_LAYOUT_NHWC) order[k++] = 1;
    order[k++] = 0;
    int64_t stride = lanes;  // the lanes of a channel group are innermost (1 when unblocked)
    for (int i = 0; i < ndim; i++) {
        const int d = order[i];
        strides[d] = stride;
        if (!checked_mul(stride, d == 1 ? dims[1] / lanes : dims[d], &stride)) {
            return error(SD_ERROR_OVERFLOW, "dense strides overflow int64 for dims " + dims_str(ndim, dims));
        }
    }
    return {};
}

}  // namespace spacedepth::detail
