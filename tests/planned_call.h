// The rules' plan of one call on dense tensors (runtime/plan_cpu.cpp), run and checked against the
// reference: for the tests of what the rules choose (test_shuffle.cpp, test_plan.cpp).
#pragma once

#include "runtime/execute.h"
#include "runtime/plan.h"
#include "tests/harness.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

namespace testing_support {

// A call on dense tensors; logical dims are N, C, H, W whatever the layout.
struct Call {
    spacedepth::Params p;
    spacedepth::DType dtype;
    spacedepth::Layout layout;
    Dims in;
    std::optional<spacedepth::Layout> out_layout = {};  // a fused layout conversion; else the input's
    Dims out_dims() const {
        return p.op == spacedepth::Op::DepthToSpace
                   ? Dims{in[0], in[1] / (p.block.h * p.block.w), in[2] * p.block.h, in[3] * p.block.w}
                   : deep_dims(in, p);
    }
};

// The rules' plan for a call, run and checked against the reference; *bytes: the call's.
inline spacedepth::detail::KernelPlan planned_and_checked(const Call &c, int64_t *bytes) {
    TestTensor in = make_tensor(c.dtype, c.layout, c.in);
    TestTensor out = make_tensor(c.dtype, c.out_layout.value_or(c.layout), c.out_dims());
    fill_unique(in, 3);
    spacedepth::detail::Problem problem;
    const sd_tensor cin = as_c(in.tensor), cout = as_c(out.tensor);
    EXPECT_TRUE(spacedepth::detail::validate(as_c(c.p, in.tensor.dims.ndim()), cin, cout, &problem).ok());
    spacedepth::detail::View view;
    EXPECT_TRUE(spacedepth::detail::build_view(problem, &view).ok());
    spacedepth::detail::KernelPlan plan =
        spacedepth::detail::make_kernel_plan(problem, view, spacedepth::Device::Host, nullptr);
    TestTensor got = out;
    got.rebase();
    EXPECT_TRUE(spacedepth::detail::execute(problem, plan, nullptr, in.tensor.data, got.tensor.data, {}).ok());
    EXPECT_EQ(compare(got, expected_output(c.p, in, out)), "") << spacedepth::detail::describe_plan(plan);
    *bytes = problem.bytes;
    return plan;
}

}  // namespace testing_support
