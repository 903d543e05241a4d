"""The cost of one framework call on a 16-float tensor (README "Frameworks"), 1 thread, beside the
framework's own ops: best of 7 rounds. Run with the frameworks venv and build:
    PYTHONPATH=build-frameworks/python .venv-frameworks/bin/python bench/framework_call_cost.py torch|jax|tf
(SPACEDEPTH_TORCH_LIBRARY= for the Python torch operators)."""
import sys, timeit
which = sys.argv[1]
def best(f, n=20000):
    f(); return min(timeit.repeat(f, number=n, repeat=7)) / n * 1e6
if which == "torch":
    import torch, spacedepth.torch as sdt
    torch.set_num_threads(1)
    x = torch.arange(16.).reshape(1, 4, 2, 2)
    print("torch native=%s op %.2f us" % (sdt.NATIVE, best(lambda: torch.ops.spacedepth.depth_to_space(x, [2], "CRD", "NCHW", ""))))
    print("torch pixel_shuffle %.2f us, clone %.2f us" % (best(lambda: torch.nn.functional.pixel_shuffle(x, 2)), best(lambda: x.clone())))
elif which == "jax":
    import jax, jax.numpy as jnp, spacedepth.jax as sdj
    x = jnp.arange(16.).reshape(1, 4, 2, 2)
    f = jax.jit(lambda t: sdj.depth_to_space(t, 2, order="CRD", layout="NCHW"))
    g = jax.jit(lambda t: t + 0)
    h = jax.jit(lambda t: t.reshape(1, 1, 2, 2, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(1, 1, 4, 4))
    print("jax jit op %.2f us, jit(x+0) %.2f us, jit reshape-transpose %.2f us" % (
        best(lambda: f(x).block_until_ready()), best(lambda: g(x).block_until_ready()), best(lambda: h(x).block_until_ready())))
elif which == "tf":
    import os; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow as tf, spacedepth.tensorflow as sdtf
    x = tf.reshape(tf.range(16.), (1, 2, 2, 4))
    print("tf eager op %.2f us, tf.nn.depth_to_space %.2f us, tf.identity %.2f us" % (
        best(lambda: sdtf.depth_to_space(x, 2), 5000), best(lambda: tf.nn.depth_to_space(x, 2), 5000), best(lambda: tf.identity(x), 5000)))
