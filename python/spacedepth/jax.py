"""JAX functions over spacedepth's XLA FFI handlers (libspacedepth_jax.so, which
`make test-frameworks` builds beside this file; SPACEDEPTH_JAX_LIBRARY names another):

    import jax, jax.numpy as jnp, spacedepth.jax as sdj
    y = jax.jit(lambda x: sdj.depth_to_space(x, 2, order="CRD", layout="NCHW"))(x)   # pixel_shuffle

Arguments as spacedepth.depth_to_space: x in memory order for `layout`, block one size or one per
spatial dim, order "DCR" or "CRD", out_layout "" for the input's. They work under jit, grad (the
VJP of each op is the other op, layouts swapped) and vmap: the batch dims reach the handler as
leading dims, which it folds into N, one call for the whole batch. The CPU handler is registered
always, the CUDA one where this jaxlib has a CUDA backend.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Tuple

import jax
import numpy as np

import spacedepth as _sd
from . import _core

__all__ = ["depth_to_space", "space_to_depth"]

_OPS = {"space_to_depth": 0, "depth_to_space": 1}  # sd_op


_library = ctypes.cdll.LoadLibrary(
    _sd._framework_library("libspacedepth_jax.so", "SPACEDEPTH_JAX_LIBRARY", "spacedepth.jax"))
jax.ffi.register_ffi_target("spacedepth", jax.ffi.pycapsule(_library.SpacedepthCpu), platform="cpu")
try:
    jax.ffi.register_ffi_target("spacedepth", jax.ffi.pycapsule(_library.SpacedepthCuda), platform="CUDA")
except Exception:  # noqa: BLE001 - a jaxlib without a CUDA backend refuses the platform
    pass


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4, 5))
def _call(x, op: str, block: Tuple[int, ...], order: str, layout: str, out_layout: str):
    out_shape = _sd._output_shape(op, tuple(int(s) for s in x.shape), block, order, layout, out_layout)
    call = jax.ffi.ffi_call("spacedepth", jax.ShapeDtypeStruct(out_shape, x.dtype), vmap_method="broadcast_all")
    return call(x, op=np.int32(_OPS[op]), ndim=np.int64(x.ndim), block=np.array(block, dtype=np.int64),
                order=order, layout=layout, out_layout=out_layout)


def _forward(x, op, block, order, layout, out_layout):
    return _call(x, op, block, order, layout, out_layout), None


def _backward(op, block, order, layout, out_layout, _, grad):
    inverse = "depth_to_space" if op == "space_to_depth" else "space_to_depth"
    return (_call(grad, inverse, block, order, out_layout, layout),)


_call.defvjp(_forward, _backward)


def _run(op: str, x, block, order: str, layout: str, out_layout: str):
    order, layout, out_layout = _sd._names(order, layout, out_layout or None)
    x = jax.numpy.asarray(x)
    return _call(x, op, _sd._block(block), order, layout, out_layout)


def depth_to_space(x, block, *, order: str = "DCR", layout: str = "NHWC", out_layout: str = ""):
    """DepthToSpace on a JAX array (jit, grad and vmap-able)."""
    return _run("depth_to_space", x, block, order, layout, out_layout)


def space_to_depth(x, block, *, order: str = "DCR", layout: str = "NHWC", out_layout: str = ""):
    """SpaceToDepth on a JAX array (jit, grad and vmap-able)."""
    return _run("space_to_depth", x, block, order, layout, out_layout)
