// spacedepth._core: the Python binding (nanobind) over the C API. It turns an array (numpy, or
// any DLPack producer: PyTorch, JAX, CuPy, ...) into an sd_tensor without copying, calls sd_run,
// sd_run_cuda or a plan, and turns a failed status into a Python exception carrying the
// runtime's message. The Python-facing API (spacedepth/__init__.py) wraps these functions.
#include "spacedepth/spacedepth.h"
#include "tools/array_layout.h"
#include "tools/cuda_driver.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

using Array = nb::ndarray<nb::ro>;        // any array; read-only ones too (the input)
using MutableArray = nb::ndarray<>;       // a writable array (the output)
using Shape = std::vector<int64_t>;       // an array's shape, in its own dim order
using BlockSizes = std::vector<int64_t>;  // one size (square) or one per spatial dim, outermost first

constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3;

// A failed status as the Python exception a caller would expect: MemoryError for allocation,
// RuntimeError for a kernel or device failure, ValueError for every rule about the call.
[[noreturn]] void raise(sd_status status, const std::string &message) {
    switch (status) {
    case SD_ERROR_OUT_OF_MEMORY: throw std::bad_alloc();
    case SD_ERROR_KERNEL: throw std::runtime_error(message);
    default: throw nb::value_error(message.c_str());
    }
}

void check(sd_status status) {
    if (status != SD_OK) raise(status, sd_last_error());
}

int lanes_of(sd_layout layout) { return spacedepth::layout_lanes(static_cast<spacedepth::Layout>(layout)); }

// A rule the call breaks (array_layout's message) as ValueError.
void require(const std::string &broken) {
    if (!broken.empty()) throw nb::value_error(broken.c_str());
}

sd_layout parse_layout(const std::string &name, const char *which) {
    sd_layout layout = SD_LAYOUT_NHWC;
    require(array_layout::parse_layout(name, which, &layout));
    return layout;
}

sd_order parse_order(const std::string &name) {
    sd_order order = SD_ORDER_DCR;
    require(array_layout::parse_order(name, &order));
    return order;
}

sd_op parse_op(const std::string &name) {
    sd_op op = SD_SPACE_TO_DEPTH;
    require(array_layout::parse_op(name, &op));
    return op;
}

// The element type, by its DLPack code and width, through the library's dtype policy
// (sd_dtype_from_typestr) as numpy's kind letter; bfloat16, which numpy has no letter for, by
// name. Only the width matters to the kernels; the named types keep messages readable.
sd_dtype dtype_of(nb::dlpack::dtype t) {
    using Code = nb::dlpack::dtype_code;
    const auto code = static_cast<Code>(t.code);
    const char kind = code == Code::Int       ? 'i'
                      : code == Code::UInt    ? 'u'
                      : code == Code::Float   ? 'f'
                      : code == Code::Bool    ? 'b'
                      : code == Code::Complex ? 'c'
                                              : 'V';  // Bfloat, opaque handles: raw elements of their width
    sd_dtype d = SD_UINT8;
    if (code == Code::Bfloat && t.bits == 16 && t.lanes == 1) return SD_BFLOAT16;
    const std::string typestr = kind + std::to_string(t.bits / 8);
    if (t.lanes == 1 && t.bits % 8 == 0 && sd_dtype_from_typestr(typestr.c_str(), &d) == SD_OK) return d;
    throw nb::type_error(("unsupported dtype: DLPack code " + std::to_string(t.code) + " with " +
                          std::to_string(t.bits) + " bits and " + std::to_string(t.lanes) +
                          " lanes (spacedepth moves elements of 1, 2, 4, 8 or 16 bytes)")
                             .c_str());
}

using array_layout::shape_str;

// The logical dims (N, C, spatial...) of an array in a layout (tools/array_layout.h); `strides`
// (optional, elements) become the logical strides the same way.
void to_logical(const Shape &shape, const Shape *strides, sd_layout layout, const char *which, sd_tensor *t) {
    require(array_layout::describe(shape, strides, layout, which, t));
}

// An array's shape and strides (elements), whatever produced it.
template <typename A>
void shape_and_strides(const A &a, Shape *shape, Shape *strides) {
    shape->resize(a.ndim());
    strides->resize(a.ndim());
    for (size_t i = 0; i < a.ndim(); i++) {
        (*shape)[i] = static_cast<int64_t>(a.shape(i));
        (*strides)[i] = a.stride(i);
    }
}

template <typename A>
sd_tensor tensor_of(const A &a, sd_layout layout, const char *which) {
    Shape shape, strides;
    shape_and_strides(a, &shape, &strides);
    sd_tensor t{};
    to_logical(shape, &strides, layout, which, &t);
    t.data = const_cast<void *>(static_cast<const void *>(a.data()));
    t.dtype = dtype_of(a.dtype());
    return t;
}

// The block as sd_params fields for tensors of ndim logical dims: one size is square.
sd_params params_of(sd_op op, const BlockSizes &block, sd_order order, int ndim, int threads) {
    sd_params p{};
    require(array_layout::params_of(op, block, order, ndim, threads, &p));
    return p;
}

bool on_host(int device_type) { return device_type == kDLCPU || device_type == kDLCUDAHost; }

// The output array shape for an input array shape (ValueError with the runtime's message when
// the shapes do not divide).
Shape output_shape(const std::string &op, const Shape &in_shape, const BlockSizes &block, const std::string &order,
                   const std::string &layout, const std::string &out_layout) {
    Shape out;
    require(array_layout::output_shape(parse_op(op), in_shape, block, parse_order(order),
                                       parse_layout(layout, "layout"), parse_layout(out_layout, "out_layout"), &out));
    return out;
}

// The CUDA context of a device's tensors: its primary context, the one PyTorch, CuPy and JAX use.
void *cuda_context(int device_id) {
    std::string why;
    void *context = cuda_driver::tensor_context(device_id, &why);
    if (context == nullptr) throw std::runtime_error(why);
    return context;
}

// Arrays of this many bytes or more run with the GIL released; below it the release costs more
// than it frees.
constexpr int64_t kReleaseGilBytes = 64 << 10;

int64_t tensor_bytes(const sd_tensor &t) {
    int64_t n = sd_dtype_size(t.dtype);
    for (int i = 0; i < t.ndim; i++) n *= t.dims[i];  // validated by the runtime before any use
    return n;
}

// Where a tensor lives: DLPack's device type and id.
struct Device {
    int type = kDLCPU, id = 0;
};

// Runs the op on two tensors already described, after the checks that concern both at once.
void run_tensors(sd_op op, const sd_tensor &in, Device in_device, const sd_tensor &out, Device out_device,
                 const BlockSizes &block, const std::string &order, int threads, uintptr_t stream) {
    if (in.dtype != out.dtype) {
        throw nb::type_error((std::string("out dtype ") + sd_dtype_name(out.dtype) + " differs from x dtype " +
                              sd_dtype_name(in.dtype) + " (the op moves elements; they must be the same type)")
                                 .c_str());
    }
    const bool host = on_host(in_device.type);
    if (host != on_host(out_device.type) || (!host && in_device.id != out_device.id)) {
        throw nb::value_error("x and out are on different devices");
    }
    if (!host && in_device.type != kDLCUDA) {
        throw nb::value_error(
            ("arrays on DLPack device type " + std::to_string(in_device.type) + " are not supported (CPU and CUDA are)")
                .c_str());
    }
    const sd_params p = params_of(op, block, parse_order(order), in.ndim, threads);
    sd_status status;
    if (host) {
        if (tensor_bytes(in) >= kReleaseGilBytes) {
            nb::gil_scoped_release release;
            status = sd_run(&p, &in, &out);
        } else {
            status = sd_run(&p, &in, &out);
        }
    } else {
        void *context = cuda_context(in_device.id);
        status = sd_run_cuda(&p, &in, &out, context, reinterpret_cast<void *>(stream));
    }
    check(status);
}

void run(const std::string &op, const Array &x, const MutableArray &out, const BlockSizes &block,
         const std::string &order, const std::string &layout, const std::string &out_layout, int threads,
         uintptr_t stream) {
    const sd_op o = parse_op(op);
    const sd_tensor in = tensor_of(x, parse_layout(layout, "layout"), "x");
    const sd_tensor dst = tensor_of(out, parse_layout(out_layout, "out_layout"), "out");
    if (x.dtype() != out.dtype()) {  // the same width and name, yet other DLPack types (int32 / uint32, ...)
        throw nb::type_error("out dtype differs from x dtype (the op moves elements; they must be the same type)");
    }
    run_tensors(o, in, {x.device_type(), x.device_id()}, dst, {out.device_type(), out.device_id()}, block, order,
                threads, stream);
}

// A tensor described by its parts, for frameworks whose DLPack export costs more than the copy
// of a small tensor (PyTorch: about 4 us a tensor): (data pointer, shape, strides in elements,
// spacedepth dtype name, DLPack device type, device id). The caller keeps the tensor alive.
using RawTensor = std::tuple<uintptr_t, Shape, Shape, std::string, int, int>;

sd_tensor tensor_of_raw(const RawTensor &r, sd_layout layout, const char *which, Device *device) {
    const auto &[data, shape, strides, dtype, device_type, device_id] = r;
    sd_tensor t{};
    to_logical(shape, &strides, layout, which, &t);
    t.data = reinterpret_cast<void *>(data);
    if (sd_dtype_from_name(dtype.c_str(), &t.dtype) != SD_OK) {
        throw nb::type_error(("unsupported dtype '" + dtype + "'").c_str());
    }
    *device = {device_type, device_id};
    return t;
}

void run_raw(const std::string &op, const RawTensor &x, const RawTensor &out, const BlockSizes &block,
             const std::string &order, const std::string &layout, const std::string &out_layout, int threads,
             uintptr_t stream) {
    Device in_device, out_device;
    const sd_op o = parse_op(op);
    const sd_tensor in = tensor_of_raw(x, parse_layout(layout, "layout"), "x", &in_device);
    const sd_tensor dst = tensor_of_raw(out, parse_layout(out_layout, "out_layout"), "out", &out_device);
    run_tensors(o, in, in_device, dst, out_device, block, order, threads, stream);
}

// A call planned once (sd_plan_create) for arrays of one shape, dtype and strides, then run on
// any such arrays. Host memory only, as sd_plan_run.
class Plan {
public:
    // like: an array of the planned input's dtype, shape and strides (its data is not read);
    // out_strides: the output's strides in elements, or empty for a C-contiguous output.
    Plan(const std::string &op, const Array &like, const BlockSizes &block, const std::string &order,
         const std::string &layout, const std::string &out_layout, const Shape &out_strides, int threads, bool measure,
         double time_limit_ms)
        : dtype_(like.dtype()) {
        if (!on_host(like.device_type())) {
            throw nb::value_error("plans run on host memory; call the function itself for CUDA arrays");
        }
        shape_and_strides(like, &in_shape_, &in_strides_);
        out_shape_ = output_shape(op, in_shape_, block, order, layout, out_layout);
        out_strides_ = out_strides;
        if (out_strides_.empty()) {
            out_strides_ = array_layout::contiguous_strides(out_shape_);
        } else if (out_strides_.size() != out_shape_.size()) {
            throw nb::value_error(("out_strides has " + std::to_string(out_strides_.size()) +
                                   " values; the output has shape " + shape_str(out_shape_))
                                      .c_str());
        }
        sd_tensor in = tensor_of(like, parse_layout(layout, "layout"), "x"), out{};
        to_logical(out_shape_, &out_strides_, parse_layout(out_layout, "out_layout"), "out", &out);
        out.dtype = in.dtype;
        const sd_params p = params_of(parse_op(op), block, parse_order(order), in.ndim, threads);
        const sd_plan_options options{measure ? SD_PLAN_MEASURE : SD_PLAN_ESTIMATE, time_limit_ms};
        check(sd_plan_create_with(&p, &in, &out, &options, &plan_));
        bytes_ = tensor_bytes(in);
    }
    const Shape &out_shape() const { return out_shape_; }
    const Shape &out_strides() const { return out_strides_; }
    std::string describe() const {
        std::string text(static_cast<size_t>(sd_plan_describe(plan_, nullptr, 0)) + 1, '\0');
        text.resize(static_cast<size_t>(sd_plan_describe(plan_, text.data(), static_cast<int>(text.size()))));
        return text;
    }
    ~Plan() { sd_plan_destroy(plan_); }
    Plan(const Plan &) = delete;
    Plan &operator=(const Plan &) = delete;

    void run(const Array &x, const MutableArray &out) const {
        expect("x", x, in_shape_, in_strides_);
        expect("out", out, out_shape_, out_strides_);
        sd_status status;
        if (bytes_ >= kReleaseGilBytes) {
            nb::gil_scoped_release release;
            status = sd_plan_run(plan_, x.data(), out.data());
        } else {
            status = sd_plan_run(plan_, x.data(), out.data());
        }
        check(status);
    }

private:
    // The array is the planned one's kind: same dtype, shape and strides (a stride of a dim of
    // extent 1 never moves anything and is not compared), in host memory.
    template <typename A>
    void expect(const char *which, const A &a, const Shape &shape, const Shape &strides) const {
        Shape got_shape, got_strides;
        shape_and_strides(a, &got_shape, &got_strides);
        std::string why;
        if (a.dtype() != dtype_) {
            throw nb::type_error((std::string(which) + " dtype differs from the planned one").c_str());
        }
        if (!on_host(a.device_type())) {
            why = "is not in host memory (plans run on the CPU; call the function itself for CUDA arrays)";
        } else if (got_shape != shape) {
            why = "has shape " + shape_str(got_shape) + ", the plan " + shape_str(shape);
        } else {
            for (size_t i = 0; i < shape.size(); i++) {
                if (shape[i] > 1 && got_strides[i] != strides[i]) {
                    why = "has strides " + shape_str(got_strides) + " (elements), the plan " + shape_str(strides);
                    break;
                }
            }
        }
        if (!why.empty()) throw nb::value_error((std::string(which) + " " + why).c_str());
    }

    sd_plan *plan_ = nullptr;
    Shape in_shape_, in_strides_, out_shape_, out_strides_;
    nb::dlpack::dtype dtype_;
    int64_t bytes_ = 0;
};

}  // namespace

NB_MODULE(_core, m) {
    m.doc() = "spacedepth's compiled core: array descriptors to the C API (see the spacedepth package for the API)";
    m.def("run", &run, nb::arg("op"), nb::arg("x"), nb::arg("out"), nb::arg("block"), nb::arg("order"),
          nb::arg("layout"), nb::arg("out_layout"), nb::arg("threads"), nb::arg("stream"),
          "Runs op from x into out (both arrays in their layouts); raises on any rule the call breaks.");
    m.def("run_raw", &run_raw, nb::arg("op"), nb::arg("x"), nb::arg("out"), nb::arg("block"), nb::arg("order"),
          nb::arg("layout"), nb::arg("out_layout"), nb::arg("threads"), nb::arg("stream"),
          "run() on tensors given as (data pointer, shape, strides, dtype name, DLPack device type, device id).");
    m.def("output_shape", &output_shape, nb::arg("op"), nb::arg("shape"), nb::arg("block"), nb::arg("order"),
          nb::arg("layout"), nb::arg("out_layout"), "The output array shape the op implies for an input array shape.");
    m.def(
        "dtype_name", [](const Array &a) { return std::string(sd_dtype_name(dtype_of(a.dtype()))); }, nb::arg("x"),
        "The element type spacedepth sees in an array (raises TypeError for an unsupported one).");
    m.def(
        "dtype_from_typestr",
        [](const std::string &typestr) {
            sd_dtype d = SD_UINT8;
            if (sd_dtype_from_typestr(typestr.c_str(), &d) != SD_OK) throw nb::type_error(sd_last_error());
            return std::string(sd_dtype_name(d));
        },
        nb::arg("typestr"), "The library's dtype policy: the dtype that moves a numpy type string's elements.");
    nb::class_<Plan>(m, "Plan")
        .def(nb::init<const std::string &, const Array &, const BlockSizes &, const std::string &, const std::string &,
                      const std::string &, const Shape &, int, bool, double>(),
             nb::arg("op"), nb::arg("like"), nb::arg("block"), nb::arg("order"), nb::arg("layout"),
             nb::arg("out_layout"), nb::arg("out_strides"), nb::arg("threads"), nb::arg("measure"),
             nb::arg("time_limit_ms"))
        .def("run", &Plan::run, nb::arg("x"), nb::arg("out"))
        .def("describe", &Plan::describe)
        .def_prop_ro("out_shape", &Plan::out_shape)
        .def_prop_ro("out_strides", &Plan::out_strides);
    m.def(
        "canonical_layout",
        [](const std::string &name) {
            return std::string(spacedepth::layout_name(static_cast<spacedepth::Layout>(parse_layout(name, "layout"))));
        },
        nb::arg("name"), "The layout's name as the library spells it (NWC -> NHWC, nChw16c -> NCHWc16, ...).");
    m.def(
        "layout_lanes", [](const std::string &name) { return lanes_of(parse_layout(name, "layout")); }, nb::arg("name"),
        "Channels per group of a blocked layout; 1 for NHWC and NCHW.");
    m.def(
        "export_wisdom", [](const std::string &path) { check(sd_wisdom_export(path.c_str())); }, nb::arg("path"));
    m.def(
        "import_wisdom", [](const std::string &path) { check(sd_wisdom_import(path.c_str())); }, nb::arg("path"));
    m.def("forget_wisdom", &sd_wisdom_forget);
    m.def("version", [] { return std::string(spacedepth::version()); });
    m.def("build_info", [] { return spacedepth::build_info(); });
    m.def(
        "set_num_threads", [](int threads) { check(sd_set_num_threads(threads)); }, nb::arg("threads"));
    m.def("num_threads", &spacedepth::num_threads);
}
