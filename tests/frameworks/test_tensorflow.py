"""spacedepth.tensorflow (TensorFlow ops in libspacedepth_tf): against tf.nn.space_to_depth /
depth_to_space where TensorFlow's CPU kernels exist (NHWC, DCR), the independent numpy reference
elsewhere (NCHW, CRD, fused layouts, ranks 1 and 3), tf.function with unknown shapes, gradients
against tf.nn's, and hostile input."""
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import spacedepth.tensorflow as sdtf  # noqa: E402
from huge_pages import advised  # noqa: E402
from numpy_reference import reference  # noqa: E402


def as_bytes(t):
    """A tensor's elements as raw bytes (numpy views; qint8's numpy form is a record of one int8)."""
    a = np.ascontiguousarray(t.numpy())
    return a.view(np.uint8).reshape(a.shape + (-1,))


@pytest.mark.parametrize("dtype", [tf.float32, tf.float16, tf.bfloat16, tf.int8, tf.uint8, tf.int64, tf.bool,
                                   tf.complex128, tf.qint8])
def test_as_tf_nn(dtype):
    raw = (np.arange(2 * 4 * 6 * 12) % 97).reshape(2, 4, 6, 12)
    x = tf.cast(raw, dtype) if dtype != tf.qint8 else tf.constant(raw.astype(np.int8), dtype=tf.qint8)
    peer = x if dtype != tf.qint8 else tf.constant(raw.astype(np.int8))  # TF has no CPU kernel for qint8
    got, want = sdtf.space_to_depth(x, 2), tf.nn.space_to_depth(peer, 2)
    assert got.dtype == dtype and got.shape == want.shape and np.array_equal(as_bytes(got), as_bytes(want))
    back = sdtf.depth_to_space(got, 2)
    assert np.array_equal(as_bytes(back), as_bytes(peer))


@pytest.mark.parametrize("layout,out_layout", [("NHWC", ""), ("NCHW", ""), ("NHWC", "NCHW"), ("NCHW", "NHWC")])
@pytest.mark.parametrize("order", ["DCR", "CRD"])
@pytest.mark.parametrize("shape,block", [((2, 3, 12), [2]), ((1, 3, 4, 6), [2, 3]), ((1, 8, 4, 2, 6), [2, 1, 2])])
def test_against_the_reference(shape, block, order, layout, out_layout):
    logical = np.random.default_rng(len(shape)).integers(0, 1000, size=shape).astype(np.int32)
    array = np.ascontiguousarray(np.moveaxis(logical, 1, -1)) if layout == "NHWC" else logical
    got = sdtf.space_to_depth(tf.constant(array), block, layout, order=order, out_format=out_layout)
    assert np.array_equal(got.numpy(), reference(array, "space_to_depth", block, order, layout, out_layout or layout))


def test_nchw_vect_c_int8():
    x = np.arange(1 * 4 * 4 * 6 * 4, dtype=np.int8).reshape(1, 4, 4, 6, 4)  # [N, C/4, H, W, 4], C = 16
    got = sdtf.depth_to_space(tf.constant(x), 2, "NCHW_VECT_C")
    assert np.array_equal(got.numpy(), reference(x, "depth_to_space", 2, "DCR", "NCHW_VECT_C", "NCHW_VECT_C"))


def test_tf_function_and_gradients_as_tf_nn():
    x = tf.random.stateless_normal((2, 4, 6, 12), seed=(1, 2))
    f = tf.function(lambda t: sdtf.depth_to_space(t, 2), input_signature=[tf.TensorSpec([None, None, None, 12])])
    assert np.array_equal(f(x).numpy(), tf.nn.depth_to_space(x, 2).numpy())
    w = tf.random.stateless_normal((2, 8, 12, 3), seed=(3, 4))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ours = tf.reduce_sum(sdtf.depth_to_space(x, 2) * w)
        theirs = tf.reduce_sum(tf.nn.depth_to_space(x, 2) * w)
    assert np.array_equal(tape.gradient(ours, x).numpy(), tape.gradient(theirs, x).numpy())
    y = tf.random.stateless_normal((1, 8, 4, 6), seed=(5, 6))  # NCHW CRD -> NHWC: no TF kernel; the inverse op
    with tf.GradientTape() as tape:
        tape.watch(y)
        z = sdtf.depth_to_space(y, 2, "NCHW", order="CRD", out_format="NHWC")
    v = tf.reshape(tf.range(tf.size(z), dtype=tf.float32), z.shape)
    grad = tape.gradient(z, y, output_gradients=v)
    assert np.array_equal(grad.numpy(), sdtf.space_to_depth(v, 2, "NHWC", order="CRD", out_format="NCHW").numpy())


@pytest.mark.parametrize("call,match", [
    (lambda: sdtf.depth_to_space(tf.zeros((1, 2, 2, 6)), 2), "divisible"),
    (lambda: sdtf.depth_to_space(tf.zeros((1, 2, 2, 8)), 2, order="XYZ"), "order"),
    (lambda: sdtf.depth_to_space(tf.zeros((1, 2, 2, 8)), 2, "NHCW"), "layout"),
    (lambda: sdtf.depth_to_space(tf.zeros((1, 2, 2, 8)), [2, 2, 2]), "block has 3 sizes"),
    (lambda: sdtf.depth_to_space(tf.zeros((1, 2, 2, 8)), 0), "block"),
    (lambda: sdtf.depth_to_space(tf.zeros((2, 8)), 2), "does not fit"),
    (lambda: sdtf.depth_to_space(tf.constant(["a", "b", "c", "d"]), 2), "fit|dtype"),
])
def test_hostile_input_raises_one_clear_error(call, match):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError, TypeError), match=match):
        call()


class SharedBuffer:
    """A tensor's own buffer as numpy sees it through DLPack (t.numpy() may copy)."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, **kwargs):
        return tf.experimental.dlpack.to_dlpack(self.tensor)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


def test_large_outputs_are_advised_huge_pages():
    # TensorFlow's new output of 4 MiB and more: the kernel advises its whole 2 MiB pages for
    # transparent huge pages before writing them (framework_call.cpp).
    x = tf.reshape(tf.range(128 * 256 * 64, dtype=tf.float32), (1, 128, 256, 64))  # 8 MiB
    y = np.from_dlpack(SharedBuffer(sdtf.depth_to_space(x, 2)))
    assert np.array_equal(y, tf.nn.depth_to_space(x, 2).numpy())
    assert advised(y.__array_interface__["data"][0] + (4 << 20))
