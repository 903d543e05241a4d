"""PyTorch (skipped without torch): tensors through DLPack with no copy, the peer functions
torch.nn.functional.pixel_shuffle / pixel_unshuffle (contiguous and channels_last), and the
torch.library operators: opcheck, autograd and a torch.compile'd function."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import spacedepth as sd  # noqa: E402
import spacedepth.torch  # noqa: E402,F401  (registers torch.ops.spacedepth)
from numpy_reference import reference  # noqa: E402

F = torch.nn.functional
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.bool, torch.complex128, torch.int64]


def rand(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    raw = torch.randint(0, 256, (int(np.prod(shape)) * torch.empty((), dtype=dtype).element_size(),), generator=g,
                        dtype=torch.uint8)
    if dtype == torch.bool:
        raw = raw % 2
    return raw.view(dtype).reshape(shape)


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.contiguous().view(torch.uint8),
                                                                      b.contiguous().view(torch.uint8))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("r", [1, 2, 3])
def test_pixel_shuffle_as_torch(dtype, r):
    x = rand((2, 3 * r * r, 5, 4), dtype, seed=r)
    for memory_format in (torch.contiguous_format, torch.channels_last):
        xm = x.contiguous(memory_format=memory_format)
        got, want = sd.pixel_shuffle(xm, r), F.pixel_shuffle(xm, r)
        assert isinstance(got, torch.Tensor) and same(got, want)
        assert got.is_contiguous(memory_format=memory_format) == want.is_contiguous(memory_format=memory_format)
        back, want_back = sd.pixel_unshuffle(got, r), F.pixel_unshuffle(want, r)
        assert same(back, want_back) and same(back, xm)


def test_pixel_shuffle_batch_dims_as_torch():
    x = rand((2, 3, 8, 3, 5), torch.float32)
    assert same(sd.pixel_shuffle(x, 2), F.pixel_shuffle(x, 2))
    assert same(sd.pixel_shuffle(x[0, 0], 2), F.pixel_shuffle(x[0, 0], 2))


def test_out_writes_the_tensors_storage_in_place():
    x = rand((1, 8, 6, 4), torch.float32)
    out = torch.full((1, 2, 12, 8), -1.0)
    pointer = out.data_ptr()
    y = sd.depth_to_space(x, 2, order="CRD", layout="NCHW", out=out)
    assert y is out and out.data_ptr() == pointer
    assert same(out, F.pixel_shuffle(x, 2))
    # A strided out view into a larger tensor: the rest of it untouched.
    big = torch.full((1, 2, 12, 16), -1.0)
    sd.depth_to_space(x, 2, order="CRD", layout="NCHW", out=big[..., ::2])
    assert same(big[..., ::2], out) and bool((big[..., 1::2] == -1).all())


def test_strided_inputs_and_requires_grad():
    base = rand((2, 16, 10, 12), torch.float32)
    x = base[:, ::2, 1:9, ::3]  # non-contiguous in every dim but N
    got = sd.space_to_depth(x, 2, order="CRD", layout="NCHW")
    assert same(got, F.pixel_unshuffle(x, 2))
    xg = x.clone().requires_grad_()
    assert same(sd.space_to_depth(xg, 2, order="CRD", layout="NCHW"), got)
    with pytest.raises(ValueError, match="requires grad"):
        sd.space_to_depth(x, 2, order="CRD", layout="NCHW", out=torch.empty(got.shape, requires_grad=True))


def test_against_the_reference_in_nhwc():
    x = rand((1, 6, 4, 12), torch.float32)
    got = sd.depth_to_space(x, 2)  # NHWC, DCR
    assert np.array_equal(got.numpy().view(np.uint8),
                          reference(x.numpy(), "depth_to_space", 2, "DCR", "NHWC", "NHWC").view(np.uint8))


def test_hostile_tensors_raise_and_change_nothing():
    x = rand((1, 8, 6, 4), torch.float32)
    out = torch.zeros((1, 2, 12, 8), dtype=torch.float64)
    with pytest.raises(TypeError, match="out dtype"):
        sd.depth_to_space(x, 2, layout="NCHW", out=out)
    assert bool((out == 0).all())
    with pytest.raises(ValueError, match="not divisible"):
        sd.depth_to_space(x[:, :6], 2, layout="NCHW")
    with pytest.raises(ValueError, match="overlaps"):
        sd.depth_to_space(x, 1, layout="NCHW", out=x)


# ---- torch.library operators ---------------------------------------------------------------------

OPS = [torch.ops.spacedepth.depth_to_space.default, torch.ops.spacedepth.space_to_depth.default]


@pytest.mark.parametrize("args", [
    ((2, 12, 3, 4), [2], "CRD", "NCHW", ""),
    ((2, 3, 4, 12), [2], "DCR", "NHWC", ""),
    ((1, 4, 8, 18), [3, 1], "DCR", "NHWC", "NCHW"),
    ((2, 32, 2, 2), [2, 2], "CRD", "NCHW", "NCHWc8"),
])
def test_opcheck(args):
    shape, block, order, layout, out_layout = args
    x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(torch.ops.spacedepth.depth_to_space.default, (x, block, order, layout, out_layout))
    y = torch.ops.spacedepth.depth_to_space(x.detach(), block, order, layout, out_layout)
    torch.library.opcheck(torch.ops.spacedepth.space_to_depth.default,
                          (y.requires_grad_(), block, order, out_layout or layout, layout))


def test_the_gradient_is_the_inverse_op():
    x = torch.randn((1, 8, 3, 5), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: spacedepth.torch.depth_to_space(t, 2, order="CRD", layout="NCHW"), (x,))
    assert torch.autograd.gradgradcheck(lambda t: spacedepth.torch.space_to_depth(t, [1, 1], layout="NCHW"), (x,))


def test_torch_compile():
    def model(x):
        y = torch.ops.spacedepth.depth_to_space(x * 2, [2], "CRD", "NCHW", "")
        return torch.ops.spacedepth.space_to_depth(y + 1, [2], "CRD", "NCHW", "")

    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    for shape in [(2, 8, 3, 5), (1, 4, 6, 2)]:
        x = torch.randn(shape)
        assert torch.equal(compiled(x), x * 2 + 1)
        assert torch.equal(compiled(x), model(x))


def test_meta_tensors():
    x = torch.empty((2, 12, 3, 4), device="meta")
    y = torch.ops.spacedepth.depth_to_space(x, [2], "CRD", "NCHW", "")
    assert y.shape == (2, 3, 6, 8) and y.device.type == "meta"
    z = torch.ops.spacedepth.space_to_depth(torch.empty((1, 2, 4, 4, 8), device="meta"), [2], "DCR", "NCHWc8", "NHWC")
    assert z.shape == (1, 2, 2, 64)
    with pytest.raises(ValueError, match="does not fit layout NCHWc8"):
        torch.ops.spacedepth.space_to_depth(torch.empty((1, 16, 4, 4), device="meta"), [2], "DCR", "NCHWc8", "NHWC")
