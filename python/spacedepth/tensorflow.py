"""TensorFlow ops over spacedepth (libspacedepth_tf.so, which `make test-frameworks` builds beside
this file; SPACEDEPTH_TF_LIBRARY names another), with tf.nn's arguments and more:

    import tensorflow as tf, spacedepth.tensorflow as sdtf
    y = sdtf.depth_to_space(x, 2)                                  # tf.nn.depth_to_space(x, 2)
    y = sdtf.depth_to_space(x, 2, data_format="NCHW", order="CRD")  # no TF CPU kernel for either

data_format "NHWC", "NCHW" or "NCHW_VECT_C" (and the rank's own spellings, NWC, NCDHW, ...; the
layouts of spacedepth.depth_to_space), block_size one size or one per spatial dim, order "DCR"
(TensorFlow's) or "CRD" (PyTorch's), out_format "" for data_format or another layout (a fused
conversion). CPU tensors; gradients registered (each op's is the other op, formats swapped).
"""

from __future__ import annotations

import tensorflow as tf

import spacedepth as _sd

__all__ = ["depth_to_space", "space_to_depth"]


_ops = tf.load_op_library(
    _sd._framework_library("libspacedepth_tf.so", "SPACEDEPTH_TF_LIBRARY", "spacedepth.tensorflow"))


def _inverse_gradient(inverse):
    def gradient(op, grad):
        return inverse(grad, block_size=op.get_attr("block_size"), order=op.get_attr("order").decode(),
                       data_format=op.get_attr("out_format").decode() or op.get_attr("data_format").decode(),
                       out_format=op.get_attr("data_format").decode())
    return gradient


tf.RegisterGradient("SpacedepthSpaceToDepth")(_inverse_gradient(_ops.spacedepth_depth_to_space))
tf.RegisterGradient("SpacedepthDepthToSpace")(_inverse_gradient(_ops.spacedepth_space_to_depth))


def _run(fn, x, block_size, data_format, order, out_format, name):
    order, data_format, out_format = _sd._names(order, data_format, out_format or None)
    return fn(x, block_size=list(_sd._block(block_size)), order=order, data_format=data_format,
              out_format=out_format, name=name)


def depth_to_space(x, block_size, data_format: str = "NHWC", *, order: str = "DCR", out_format: str = "",
                   name=None):
    """tf.nn.depth_to_space with order and out_format, on every layout and element type."""
    return _run(_ops.spacedepth_depth_to_space, x, block_size, data_format, order, out_format, name)


def space_to_depth(x, block_size, data_format: str = "NHWC", *, order: str = "DCR", out_format: str = "",
                   name=None):
    """tf.nn.space_to_depth with order and out_format, on every layout and element type."""
    return _run(_ops.spacedepth_space_to_depth, x, block_size, data_format, order, out_format, name)
