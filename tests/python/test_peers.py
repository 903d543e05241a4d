"""The peers on the same arrays, each skipped with its reason when its package is missing:
ONNX Runtime's one-node DepthToSpace / SpaceToDepth models (DCR and CRD, built with the onnx
package) and TensorFlow's tf.nn.depth_to_space / space_to_depth. PyTorch's are in test_torch.py."""
import numpy as np
import pytest

import spacedepth as sd


def rand(shape, dtype, seed):
    return np.random.default_rng(seed).integers(-100, 100, size=shape).astype(dtype)


def onnx_model(op, block, mode, x):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import helper
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    attrs = {"blocksize": block}
    if mode is not None:
        attrs["mode"] = mode
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, x.shape)],
                              [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.float64])
@pytest.mark.parametrize("block", [2, 3])
def test_onnxruntime_depth_to_space(mode, dtype, block):
    x = rand((2, 4 * block * block, 5, 3), dtype, seed=block)
    want = onnx_model("DepthToSpace", block, mode, x)
    assert np.array_equal(sd.depth_to_space(x, block, order=mode, layout="NCHW"), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
@pytest.mark.parametrize("block", [2, 4])
def test_onnxruntime_space_to_depth(dtype, block):
    x = rand((1, 3, 4 * block, 2 * block), dtype, seed=block)
    want = onnx_model("SpaceToDepth", block, None, x)  # ONNX's SpaceToDepth is DCR
    assert np.array_equal(sd.space_to_depth(x, block, layout="NCHW"), want)


@pytest.fixture(scope="module")
def tf():
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return pytest.importorskip("tensorflow")


@pytest.mark.parametrize("block", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int64])
def test_tensorflow(tf, block, dtype):
    x = rand((2, 3 * block, 2 * block, 5), dtype, seed=block)
    assert np.array_equal(sd.tf_space_to_depth(x, block), tf.nn.space_to_depth(x, block).numpy())
    y = rand((2, 3, 4, 5 * block * block), dtype, seed=block + 1)
    assert np.array_equal(sd.tf_depth_to_space(y, block), tf.nn.depth_to_space(y, block).numpy())
    # The same call through the general form.
    assert np.array_equal(sd.depth_to_space(y, block, order="DCR", layout="NHWC"), tf.nn.depth_to_space(y, block).numpy())
