// C++ peers benchmarked on the same rows as spacedepth: Eigen's TensorMap shuffle (ONNX Runtime's
// CPU method) and XNNPACK (Debian's 2022 build: NHWC DepthToSpace in DCR order for 4-byte
// elements, and its NCHW -> NHWC variant). Each returns an empty function where it does not apply.
#pragma once

#include "bench/cases.h"

#include <functional>

namespace bench {

bool eigen_applies(const Case &c);
bool xnnpack_applies(const Case &c);
std::function<void()> eigen_peer(const Case &c, const spacedepth::Tensor &in, const spacedepth::Tensor &out,
                                 int threads);
std::function<void()> xnnpack_peer(const Case &c, const spacedepth::Tensor &in, const spacedepth::Tensor &out,
                                   int threads);

}  // namespace bench
