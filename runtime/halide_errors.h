// Capture of Halide's error messages. Each kernel call passes its own ErrorSink as Halide's
// user_context; the strong halide_error() in execute.cpp appends to it instead of printing and
// aborting (Halide's default handler, posix_error_handler.cpp, prints and calls abort(), in
// Halide 21 as in earlier releases).
#pragma once

#include <string>

namespace spacedepth::detail {

struct ErrorSink {
    std::string message;
    void *cuda_context = nullptr;  // the caller's CUcontext for a CUDA call, else null
    void *cuda_stream = nullptr;   // the caller's CUstream (null: the default stream)
};

// Messages Halide raised with no user_context on this thread (e.g. from its thread pool).
std::string take_orphan_halide_errors();

}  // namespace spacedepth::detail
