"""spacedepth.jax (XLA FFI handlers in libspacedepth_jax): against the reshape / transpose forms JAX
users write and the independent numpy reference, under jit, grad (the VJP is the other op) and
vmap (one handler call for the batch), every element width, and hostile input."""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import spacedepth.jax as sdj  # noqa: E402
from huge_pages import advised  # noqa: E402
from numpy_reference import reference  # noqa: E402


def pixel_shuffle_by_transpose(x, r):
    """What JAX users write for torch's pixel_shuffle (NCHW, CRD)."""
    n, c, h, w = x.shape
    return x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // (r * r), h * r, w * r)


def depth_to_space_by_transpose(x, r):
    """tf.nn.depth_to_space (NHWC, DCR) as reshape + transpose."""
    n, h, w, c = x.shape
    return x.reshape(n, h, w, r, r, c // (r * r)).transpose(0, 1, 3, 2, 4, 5).reshape(n, h * r, w * r, c // (r * r))


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16, jnp.int8, jnp.uint16, jnp.int32, jnp.bool_,
                                   jnp.complex64, jnp.float8_e4m3fn])
def test_against_the_transpose_forms(dtype):
    x = (jnp.arange(2 * 12 * 5 * 7) % 97).astype(dtype).reshape(2, 12, 5, 7)
    assert (sdj.depth_to_space(x, 2, order="CRD", layout="NCHW") == pixel_shuffle_by_transpose(x, 2)).all()
    y = jnp.moveaxis(x, 1, -1)
    assert (sdj.depth_to_space(y, 2) == depth_to_space_by_transpose(y, 2)).all()
    assert sdj.depth_to_space(y, 2).dtype == dtype


@pytest.mark.parametrize("layout,out_layout", [("NHWC", ""), ("NCHW", ""), ("NHWC", "NCHW"), ("NCHW", "NHWC")])
@pytest.mark.parametrize("order", ["DCR", "CRD"])
@pytest.mark.parametrize("shape,block", [((2, 3, 12), [2]), ((1, 3, 4, 6), [2, 3]), ((1, 8, 4, 2, 6), [2, 1, 2])])
def test_against_the_reference(shape, block, order, layout, out_layout):
    logical = np.random.default_rng(len(shape)).integers(0, 1000, size=shape).astype(np.float32)
    array = np.ascontiguousarray(np.moveaxis(logical, 1, -1)) if layout == "NHWC" else logical
    got = sdj.space_to_depth(jnp.asarray(array), block, order=order, layout=layout, out_layout=out_layout)
    assert np.array_equal(np.asarray(got), reference(array, "space_to_depth", block, order, layout,
                                                     out_layout or layout))


def test_jit_grad_and_vmap():
    x = jnp.arange(3 * 2 * 8 * 4 * 6, dtype=jnp.float32).reshape(3, 2, 8, 4, 6)  # a batch of 3 NCHW arrays
    f = jax.jit(lambda t: sdj.depth_to_space(t, 2, order="CRD", layout="NCHW"))
    assert (f(x[0]) == pixel_shuffle_by_transpose(x[0], 2)).all()
    batched = jax.vmap(f)(x)
    assert batched.shape == (3, 2, 2, 8, 12)
    assert all((batched[i] == pixel_shuffle_by_transpose(x[i], 2)).all() for i in range(3))
    assert "spacedepth" in jax.jit(jax.vmap(f)).lower(x).as_text()  # one custom call, not a loop of them
    # The VJP is the inverse op: the gradient of sum(w * f(x)) is f's inverse applied to w.
    w = jnp.arange(2 * 2 * 8 * 12, dtype=jnp.float32).reshape(2, 2, 8, 12)
    grad = jax.grad(lambda t: (f(t) * w).sum())(x[0])
    assert (grad == sdj.space_to_depth(w, 2, order="CRD", layout="NCHW")).all()
    assert (jax.grad(lambda t: (pixel_shuffle_by_transpose(t, 2) * w).sum())(x[0]) == grad).all()


@pytest.mark.parametrize("call,match", [
    (lambda: sdj.depth_to_space(jnp.zeros((1, 6, 2, 2)), 2, layout="NCHW"), "divisible"),
    (lambda: sdj.depth_to_space(jnp.zeros((1, 8, 2, 2)), 2, order="XYZ", layout="NCHW"), "order"),
    (lambda: sdj.depth_to_space(jnp.zeros((1, 8, 2, 2)), 2, layout="NHCW"), "layout"),
    (lambda: sdj.depth_to_space(jnp.zeros((1, 8, 2, 2)), [2, 2, 2], layout="NCHW"), "block has 3 sizes"),
    (lambda: sdj.depth_to_space(jnp.zeros((1, 8, 2, 2)), 0, layout="NCHW"), "block"),
    (lambda: sdj.depth_to_space(jnp.zeros((8, 2)), 2, layout="NCHW"), "does not fit"),
    (lambda: sdj.depth_to_space(jnp.zeros((1, 8, 2, 2)), "2", layout="NCHW"), "int"),
])
def test_hostile_input_raises_one_clear_error(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_large_outputs_are_advised_huge_pages():
    # XLA's new output of 4 MiB and more: the handler advises its whole 2 MiB pages for transparent
    # huge pages before writing them (framework_call.cpp); 64 MiB calls ran 25 -> 7-10 ms with it.
    x = jnp.arange(64 * 128 * 256, dtype=jnp.float32).reshape(1, 64, 128, 256)  # 8 MiB
    y = jax.jit(lambda t: sdj.depth_to_space(t, 2, order="CRD", layout="NCHW"))(x)
    assert (y == pixel_shuffle_by_transpose(x, 2)).all()
    assert advised(y.unsafe_buffer_pointer() + (4 << 20))
