"""PyTorch operators over spacedepth, for eager code, autograd and torch.compile:

    import spacedepth.torch
    y = torch.ops.spacedepth.depth_to_space(x, [2, 2], "CRD", "NCHW")   # pixel_shuffle(x, 2)
    spacedepth.torch.depth_to_space(x, [2], order="CRD", layout="NCHW")  # the same, by name

Where libspacedepth_torch.so sits beside this file (`make test-frameworks` builds it; the
environment variable SPACEDEPTH_TORCH_LIBRARY names another), the operators are its C++ ones
(TORCH_LIBRARY on torch's stable ABI), with their gradient in C++ where
libspacedepth_torch_autograd-<torch version>.so was built for the running torch: 4.1 us a call
against 19 us for the Python operator (bench/RESULTS.md "Frameworks").
Otherwise they are registered here with torch.library.custom_op, running through the DLPack path
of the spacedepth module. Either way the same schema, a fake (meta) implementation here that
gives torch.compile, torch.export and meta tensors the output's shape (symbolic sizes too), and
the gradient of each op is the other op with the same block, order and layouts swapped. Checked
with torch.library.opcheck (tests/python/test_torch.py, tests/frameworks/).
`spacedepth.torch.NATIVE` and `CPP_AUTOGRAD` say which are in use.

Arguments: x a tensor in memory order for `layout` (any strides), block one size or one per
spatial dim, order "DCR" or "CRD", layout and out_layout as in spacedepth.depth_to_space (an
empty out_layout is the input's). The result is a new contiguous tensor.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple

import torch

import spacedepth as _sd
from . import _core

__all__ = ["depth_to_space", "space_to_depth", "NATIVE", "CPP_AUTOGRAD"]


def _output_shape(shape: Sequence, op: str, block: Sequence[int], layout: str, out_layout: str) -> Tuple:
    """The output array shape: the runtime's answer (and its errors) for concrete sizes, plain
    arithmetic for symbolic ones (torch.compile's dynamic shapes), whose rules the runtime checks
    when the op runs."""
    if all(isinstance(s, int) for s in shape):
        return tuple(_core.output_shape(op, tuple(shape), tuple(block), "DCR", layout, out_layout))
    lanes_in, lanes_out = _core.layout_lanes(layout), _core.layout_lanes(out_layout)
    channels_last_in = _core.canonical_layout(layout) == "NHWC"
    nd = len(shape) - (1 if lanes_in > 1 else 0)
    if channels_last_in:
        n, c, spatial = shape[0], shape[nd - 1], list(shape[1:nd - 1])
    else:
        n, c, spatial = shape[0], shape[1] * lanes_in, list(shape[2:nd])
    sizes = list(block) if len(block) == len(spatial) else [block[0]] * len(spatial)
    volume = 1
    for b in sizes:
        volume *= b
    if op == "space_to_depth":
        c, spatial = c * volume, [s // b for s, b in zip(spatial, sizes)]
    else:
        c, spatial = c // volume, [s * b for s, b in zip(spatial, sizes)]
    if _core.canonical_layout(out_layout) == "NHWC":
        return (n, *spatial, c)
    return (n, c // lanes_out, *spatial) + ((lanes_out,) if lanes_out > 1 else ())


def _define_python(op: str) -> None:
    @torch.library.custom_op(f"spacedepth::{op}", mutates_args=())
    def impl(x: torch.Tensor, block: List[int], order: str = "DCR", layout: str = "NHWC",
             out_layout: str = "") -> torch.Tensor:
        fn = _sd.depth_to_space if op == "depth_to_space" else _sd.space_to_depth
        if _core.layout_lanes(layout) > 1 and x.stride(-1) != 1:
            x = x.contiguous()  # a group's channels as a blocked layout needs them: adjacent
        return fn(x, tuple(block), order=order, layout=layout, out_layout=out_layout or layout)


def _define_fake(op: str) -> None:
    @torch.library.register_fake(f"spacedepth::{op}")
    def _(x, block, order="DCR", layout="NHWC", out_layout=""):
        return x.new_empty(_output_shape(x.shape, op, block, layout, out_layout or layout))


#: True where the operators are libspacedepth_torch's C++ ones.
_LIBRARY = _sd._framework_library("libspacedepth_torch.so", "SPACEDEPTH_TORCH_LIBRARY")
NATIVE = bool(_LIBRARY)
if NATIVE:
    torch.ops.load_library(_LIBRARY)
#: True where the gradient is C++ Autograd kernels (libspacedepth_torch_autograd-<torch version>.so,
#: built for this very torch): calls then run no Python. Otherwise the formula below, in Python.
CPP_AUTOGRAD = False
if NATIVE:
    _AUTOGRAD = _sd._framework_library(f"libspacedepth_torch_autograd-{torch.__version__}.so",
                                       "SPACEDEPTH_TORCH_AUTOGRAD_LIBRARY")
    if _AUTOGRAD:
        torch.ops.load_library(_AUTOGRAD)
        CPP_AUTOGRAD = True
for _op in ("depth_to_space", "space_to_depth"):
    if not NATIVE:
        _define_python(_op)
    _define_fake(_op)
_depth_to_space = torch.ops.spacedepth.depth_to_space.default
_space_to_depth = torch.ops.spacedepth.space_to_depth.default


def _setup_context(ctx, inputs, output):
    _, block, order, layout, out_layout = tuple(inputs) + ("DCR", "NHWC", "")[len(inputs) - 2:]
    ctx.args = (list(block), order, layout, out_layout or layout)


def _backward_with(inverse):
    def backward(ctx, grad):
        block, order, layout, out_layout = ctx.args
        # The gradient flows back through the inverse op: layouts swap sides.
        return inverse(grad, block, order, out_layout, layout), None, None, None, None
    return backward


if not CPP_AUTOGRAD:
    torch.library.register_autograd("spacedepth::depth_to_space", _backward_with(_space_to_depth),
                                    setup_context=_setup_context)
    torch.library.register_autograd("spacedepth::space_to_depth", _backward_with(_depth_to_space),
                                    setup_context=_setup_context)


def depth_to_space(x: torch.Tensor, block, *, order: str = "DCR", layout: str = "NHWC",
                   out_layout: str = "") -> torch.Tensor:
    """torch.ops.spacedepth.depth_to_space with keyword arguments (differentiable, compilable)."""
    return _depth_to_space(x, list(_sd._block(block)), order, layout, out_layout)


def space_to_depth(x: torch.Tensor, block, *, order: str = "DCR", layout: str = "NHWC",
                   out_layout: str = "") -> torch.Tensor:
    """torch.ops.spacedepth.space_to_depth with keyword arguments (differentiable, compilable)."""
    return _space_to_depth(x, list(_sd._block(block)), order, layout, out_layout)
