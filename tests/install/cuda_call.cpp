// One run_cuda call from an installed package's consumer (tests/check_install.sh): built against
// SpaceDepth::spacedepth alone it must say that the CUDA component is not linked; built against
// SpaceDepth::cuda too it must get past that, to the driver (absent here) or the GPU.
// usage: cuda_call linked|unlinked; exits 0 only if the status says what that case should.
#include <spacedepth/spacedepth.h>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
    if (argc != 2 || (std::strcmp(argv[1], "linked") != 0 && std::strcmp(argv[1], "unlinked") != 0)) {
        std::fprintf(stderr, "usage: cuda_call linked|unlinked\n");
        return 2;
    }
    const bool linked = std::strcmp(argv[1], "linked") == 0;
    using namespace spacedepth;
    // Not device memory: no call gets as far as reading it.
    float space[16] = {}, deep[16] = {};
    const Tensor in = Tensor::dense(space, DType::Float32, Layout::NHWC, {1, 1, 4, 4});
    const Tensor out = Tensor::dense(deep, DType::Float32, Layout::NHWC, {1, 4, 2, 2});
    const Status s = run_cuda(Params{}, in, out, CudaStream{});
    const bool says_unlinked = s.message().find("linked without spacedepth's CUDA kernels") != std::string::npos;
    std::printf("run_cuda (%s): %s\n", argv[1], s.ok() ? "ok" : s.message().c_str());
    if (linked ? says_unlinked : (s.ok() || !says_unlinked)) {
        std::fprintf(stderr, "FAIL: run_cuda's status does not fit a program %s the CUDA component\n",
                     linked ? "linking" : "not linking");
        return 1;
    }
    return 0;
}
