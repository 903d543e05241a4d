"""The C++ PyTorch operators (libspacedepth_torch, stable ABI): loaded by spacedepth.torch, against
torch's own pixel_shuffle / pixel_unshuffle (CRD) and the independent numpy reference (DCR, NHWC,
ranks 1 and 3, fused layouts, strided and channels_last tensors), the gradient (C++ or Python),
torch.compile with dynamic shapes and torch.export without graph breaks, and hostile input. tests/python/test_torch.py runs
opcheck, gradcheck and the rest on these operators too (make test-frameworks)."""
import os

import numpy as np
import pytest
import torch

import spacedepth.torch as sdt
from huge_pages import advised
from numpy_reference import reference

F = torch.nn.functional
ops = torch.ops.spacedepth


def test_the_native_operators_are_loaded():
    assert sdt.NATIVE
    # The C++ gradient unless the run turned it off (make test-frameworks runs both ways).
    assert sdt.CPP_AUTOGRAD == (os.environ.get("SPACEDEPTH_TORCH_AUTOGRAD_LIBRARY") != "")


def test_second_derivatives_through_the_inverse_op():
    x = torch.randn(1, 8, 2, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda t: ops.depth_to_space(t, [2], "DCR", "NCHW", "NHWC"), (x,))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
                                   torch.int16, torch.int32, torch.int64, torch.bool, torch.complex64,
                                   torch.float8_e4m3fn, torch.uint16])
def test_pixel_shuffle_and_unshuffle_as_torch(dtype):
    x = torch.randint(0, 100, (2, 27 * 4, 5, 7)).to(dtype) if dtype != torch.bool else torch.rand(2, 108, 5, 7) > .5
    for memory_format in (torch.contiguous_format, torch.channels_last):
        xm = x.contiguous(memory_format=memory_format)
        y = ops.depth_to_space(xm, [2], "CRD", "NCHW", "")
        raw = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[dtype.itemsize]  # torch lacks some
        assert y.dtype == dtype and torch.equal(y.view(raw), F.pixel_shuffle(xm.view(raw), 2))
        back = ops.space_to_depth(y, [2], "CRD", "NCHW", "")
        assert torch.equal(back.view(raw), x.view(raw))


@pytest.mark.parametrize("layout,out_layout", [("NHWC", ""), ("NCHW", ""), ("NHWC", "NCHW"), ("NCHW", "NHWC")])
@pytest.mark.parametrize("order", ["DCR", "CRD"])
@pytest.mark.parametrize("shape,block", [((2, 3, 12), [2]), ((1, 3, 4, 6), [2, 3]), ((1, 8, 4, 2, 6), [2, 1, 2])])
def test_against_the_reference(shape, block, order, layout, out_layout):
    rng = np.random.default_rng(len(shape))
    logical = rng.integers(0, 1000, size=shape).astype(np.int32)
    array = np.ascontiguousarray(np.moveaxis(logical, 1, -1)) if layout == "NHWC" else logical
    got = ops.space_to_depth(torch.from_numpy(array), block, order, layout, out_layout)
    want = reference(array, "space_to_depth", block, order, layout, out_layout or layout)
    assert np.array_equal(got.numpy(), want)
    back = ops.depth_to_space(got, block, order, out_layout or layout, layout)
    assert np.array_equal(back.numpy(), array)


def test_strided_views_and_blocked_layouts():
    base = torch.arange(2 * 8 * 6 * 12, dtype=torch.float32).reshape(2, 8, 6, 12)
    view = base[:, :, :, ::2]  # strides of a column slice
    assert torch.equal(ops.space_to_depth(view, [2], "CRD", "NCHW", ""), F.pixel_unshuffle(view.contiguous(), 2))
    flipped = base.flip(2)  # a negative stride in torch is a copy; a transposed view is not
    assert torch.equal(ops.depth_to_space(flipped.transpose(2, 3), [2], "CRD", "NCHW", ""),
                       F.pixel_shuffle(flipped.transpose(2, 3).contiguous(), 2))
    blocked = torch.arange(1 * 4 * 4 * 4 * 4, dtype=torch.int8).reshape(1, 4, 4, 4, 4)  # NCHW_VECT_C, C = 16
    got = ops.space_to_depth(blocked, [2], "DCR", "NCHW_VECT_C", "")
    assert np.array_equal(got.numpy(), reference(blocked.numpy(), "space_to_depth", 2, "DCR", "NCHW_VECT_C",
                                                 "NCHW_VECT_C"))


def test_compile_and_export_have_no_graph_break():
    def model(x):
        return ops.space_to_depth(ops.depth_to_space(x * 2, [2], "CRD", "NCHW", ""), [2], "CRD", "NCHW", "") + 1

    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend="aot_eager")
    for h in (4, 6, 10):
        x = torch.randn(2, 8, h, 3)
        assert torch.equal(compiled(x), x * 2 + 1)
    class Shuffle(torch.nn.Module):
        def forward(self, x):
            return ops.depth_to_space(x, [2], "DCR", "NHWC", "NCHW")

    x = torch.randn(1, 4, 5, 12)
    program = torch.export.export(Shuffle(), (x,))
    assert any("spacedepth" in str(n.target) for n in program.graph.nodes)
    assert torch.equal(program.module()(x), Shuffle()(x))


def test_gradient_is_the_inverse_op():
    x = torch.randn(1, 4, 4, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: ops.space_to_depth(t, [2], "DCR", "NHWC", "NCHW"), (x,))


@pytest.mark.parametrize("call,match", [
    (lambda: ops.depth_to_space(torch.zeros(1, 6, 2, 2), [2], "CRD", "NCHW", ""), "divisible"),
    (lambda: ops.depth_to_space(torch.zeros(1, 8, 2, 2), [2], "XYZ", "NCHW", ""), "order"),
    (lambda: ops.depth_to_space(torch.zeros(1, 8, 2, 2), [2], "CRD", "NHCW", ""), "layout"),
    (lambda: ops.depth_to_space(torch.zeros(1, 8, 2, 2), [2, 2, 2], "CRD", "NCHW", ""), "block has 3 sizes"),
    (lambda: ops.depth_to_space(torch.zeros(1, 8, 2, 2), [0], "CRD", "NCHW", ""), "block"),
    (lambda: ops.depth_to_space(torch.zeros(1, 8, 2, 2), [-2], "CRD", "NCHW", ""), "block"),
    (lambda: ops.depth_to_space(torch.zeros(8, 2), [2], "CRD", "NCHW", ""), "does not fit"),
    (lambda: ops.depth_to_space(torch.zeros(1, 8, 2, 2, 2, 2), [2], "CRD", "NCHW", ""), "does not fit"),
    (lambda: ops.space_to_depth(torch.quantize_per_tensor(torch.zeros(1, 4, 2, 2), 1.0, 0, torch.qint8), [2], "CRD",
                                "NCHW", ""), "quantized|Quantized"),
    # A broadcast view whose output no allocator can hold: torch's allocation refuses it.
    (lambda: ops.space_to_depth(torch.zeros(1).expand(1, 4, 2, 2 ** 58), [2], "CRD", "NCHW", ""), "overflow"),
])
def test_hostile_input_raises_one_clear_error(call, match):
    with pytest.raises((RuntimeError, ValueError, NotImplementedError, MemoryError), match=match):
        call()


def test_empty_and_meta_tensors():
    assert ops.depth_to_space(torch.zeros(0, 8, 2, 2), [2], "CRD", "NCHW", "").shape == (0, 2, 4, 4)
    meta = ops.depth_to_space(torch.empty(1, 8, 3, 5, device="meta"), [2], "DCR", "NCHW", "NHWC")
    assert meta.device.type == "meta" and meta.shape == (1, 6, 10, 2)


def test_repeated_and_alternating_calls():
    # framework_call.cpp keeps the last prepared call per thread: a call that differs in any one
    # argument must not reuse it, and a broken one right after a good one must still raise.
    x = torch.arange(1 * 8 * 4 * 6, dtype=torch.int32).reshape(1, 8, 4, 6)
    calls = [("CRD", "NCHW", ""), ("DCR", "NCHW", ""), ("DCR", "NHWC", ""), ("DCR", "NCHW", "NHWC"), ("CRD", "NCHW", "")]
    for order, layout, out_layout in calls * 2:
        got = ops.space_to_depth(x, [2], order, layout, out_layout)
        want = reference(x.numpy(), "space_to_depth", 2, order, layout, out_layout or layout)
        assert np.array_equal(got.numpy(), want)
    assert np.array_equal(ops.space_to_depth(x[:, :, :, :4], [2], "CRD", "NCHW", "").numpy(),
                          reference(x[:, :, :, :4].numpy(), "space_to_depth", 2, "CRD", "NCHW", "NCHW"))
    with pytest.raises(RuntimeError, match="order"):
        ops.space_to_depth(x, [2], "RCD", "NCHW", "")
    with pytest.raises(RuntimeError, match="divisible"):
        ops.space_to_depth(x, [3], "CRD", "NCHW", "")


def test_large_outputs_are_advised_huge_pages():
    # A new output of 4 MiB and more is fresh memory from the allocator; the operator advises its
    # whole 2 MiB pages for transparent huge pages before writing them (framework_call.cpp).
    x = torch.arange(64 * 128 * 256, dtype=torch.float32).reshape(1, 64, 128, 256)  # 8 MiB
    y = ops.depth_to_space(x, [2], "CRD", "NCHW", "")
    assert torch.equal(y, torch.nn.functional.pixel_shuffle(x, 2))
    assert advised(y.data_ptr() + (4 << 20))
