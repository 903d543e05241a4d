// The OpenCL component (SpaceDepth::opencl): the GPU schedules built for OpenCL, which the tests
// run on the CPU through PoCL (ctest opencl_pocl). Tensors stay in host memory; each buffer's
// device memory is a copy of the whole byte range it spans, gaps included: one write each way
// instead of Halide's per-row copies of a strided view (thousands of commands on PoCL), and the
// gaps go back unchanged.
#include "runtime/device_backend.h"

#include "HalideRuntimeOpenCL.h"

#include <cstdint>
#include <iterator>

#define SPACEDEPTH_KERNEL SPACEDEPTH_GPU_KERNEL_DECLARATION
#include "contract/kernels_opencl.inc"
#undef SPACEDEPTH_KERNEL

namespace spacedepth::detail {
namespace {

constexpr RegisteredKernel kOpenCLKernels[] = {
#define SPACEDEPTH_KERNEL SPACEDEPTH_GPU_KERNEL_ROW
#include "contract/kernels_opencl.inc"
#undef SPACEDEPTH_KERNEL
};

void nothing_to_prepare() {}

int attach(ErrorSink &sink, halide_buffer_t &buf, halide_buffer_t &span, halide_dimension_t &span_dim,
           uint8_t *address) {
    buf.host = address;
    if (buf.size_in_bytes() > static_cast<size_t>(INT32_MAX)) {
        halide_error(&sink, "the OpenCL path copies at most 2 GiB per kernel call");
        return halide_error_code_buffer_extents_too_large;
    }
    span_dim = halide_dimension_t(0, static_cast<int32_t>(buf.size_in_bytes()), 1);
    span.host = address;
    span.type = halide_type_t(halide_type_uint, 8);
    span.dimensions = 1;
    span.dim = &span_dim;
    span.set_host_dirty(true);
    const int rc = halide_copy_to_device(&sink, &span, halide_opencl_device_interface());
    buf.device = span.device;
    buf.device_interface = span.device_interface;
    return rc;
}

// The output span back to host memory, and the spans' device memory released.
int detach(ErrorSink &sink, CallBuffers &b, int rc) {
    if (rc == 0) {
        b.out_span.set_device_dirty(true);
        rc = halide_copy_to_host(&sink, &b.out_span);
    }
    for (halide_buffer_t *span : {&b.in_span, &b.out_span}) {
        if (span->device != 0) {
            halide_device_free(&sink, span);
        }
    }
    return rc;
}

constexpr DeviceBackend kOpenCL = {kOpenCLKernels, std::size(kOpenCLKernels), nothing_to_prepare, attach, detach};

}  // namespace
}  // namespace spacedepth::detail

extern "C" const spacedepth::detail::DeviceBackend *spacedepth_opencl_backend() { return &spacedepth::detail::kOpenCL; }
