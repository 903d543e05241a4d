// The PyTorch operators from C++ with no Python: libspacedepth_torch loaded into a libtorch
// program, torch::ops reached through the dispatcher, results against torch's own pixel_shuffle
// and pixel_unshuffle (CRD) and against the DCR index rule written out here, and a broken rule's
// message. Prints one line per check; exits 1 on the first failure.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <dlfcn.h>

#include <cstdio>
#include <exception>
#include <string>

namespace {

using Op = at::Tensor(const at::Tensor &, c10::IntArrayRef, c10::string_view, c10::string_view, c10::string_view);

c10::TypedOperatorHandle<Op> op(const char *name) {
    return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Op>();
}

int failures = 0;

void expect(bool ok, const std::string &what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    failures += ok ? 0 : 1;
}

}  // namespace

int main() {
    if (dlopen(SPACEDEPTH_TORCH_LIBRARY, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
        std::printf("FAIL dlopen %s: %s\n", SPACEDEPTH_TORCH_LIBRARY, dlerror());
        return 1;
    }
    const auto d2s = op("spacedepth::depth_to_space");
    const auto s2d = op("spacedepth::space_to_depth");

    const at::Tensor x = at::arange(2 * 12 * 5 * 7, at::kFloat).reshape({2, 12, 5, 7});
    const at::Tensor y = d2s.call(x, {2}, "CRD", "NCHW", "");
    expect(at::equal(y, at::pixel_shuffle(x, 2)), "depth_to_space CRD NCHW == at::pixel_shuffle");
    expect(at::equal(s2d.call(y, {2}, "CRD", "NCHW", ""), x), "space_to_depth CRD NCHW inverts it");
    const at::Tensor big = at::arange(1 * 3 * 8 * 6, at::kByte).reshape({1, 3, 8, 6});
    expect(at::equal(s2d.call(big, {2}, "CRD", "NCHW", ""), at::pixel_unshuffle(big, 2)),
           "space_to_depth CRD uint8 == at::pixel_unshuffle");

    // DCR, NHWC: output pixel (h, w), channel (by*b + bx)*C + c takes input (h*b + by, w*b + bx, c).
    const at::Tensor nhwc = at::arange(1 * 4 * 6 * 3, at::kInt).reshape({1, 4, 6, 3});
    const at::Tensor deep = s2d.call(nhwc, {2}, "DCR", "NHWC", "");
    bool same = deep.sizes() == c10::IntArrayRef({1, 2, 3, 12});
    for (int64_t h = 0; same && h < 2; h++)
        for (int64_t w = 0; w < 3; w++)
            for (int64_t k = 0; k < 12; k++) {
                const int64_t by = k / 6, bx = k / 3 % 2, c = k % 3;
                same = same && deep[0][h][w][k].item<int>() == nhwc[0][h * 2 + by][w * 2 + bx][c].item<int>();
            }
    expect(same, "space_to_depth DCR NHWC by the index rule");

    try {
        d2s.call(at::zeros({1, 6, 2, 2}), {4}, "DCR", "NCHW", "");
        expect(false, "a broken rule raises");
    } catch (const std::exception &e) {  // c10::Error or, through the stable ABI, std::runtime_error
        const std::string message = e.what();
        expect(message.find("divisible") != std::string::npos, "a broken rule raises: " + message.substr(0, 80));
    }
    return failures == 0 ? 0 : 1;
}
