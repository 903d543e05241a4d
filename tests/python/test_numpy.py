"""The Python module on numpy arrays (numpy alone): results against the independent reference
(tests/numpy_reference.py, docs/SPEC.md's reshape/transpose definitions) over layouts, orders,
ranks, dtypes, odd and negative strides and zero-size arrays; zero copy; the plan object; the
peers' call forms; and hostile arrays, each of which raises and leaves both arrays unchanged."""
import itertools
import re

import numpy as np
import pytest

import spacedepth as sd
from numpy_reference import LANES, npy_shape, reference

try:
    import ml_dtypes
except ImportError:  # bfloat16 cases skip
    ml_dtypes = None

LAYOUTS = ["NHWC", "NCHW", "NCHWc4", "NCHWc8", "NCHWc16"]
DTYPES = [np.float32, np.uint8, np.int8, np.bool_, np.float16, np.int64, np.complex128, np.dtype(">f4")]


def fill(shape, dtype, rng):
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    if dtype == np.bool_:
        raw = raw % 2
    return raw.view(dtype).reshape(shape)


def space_and_deep(rank, c, block, blocks, n=1):
    space = (n, c) + tuple(b * k for b, k in zip(block, blocks))
    deep = (n, c * int(np.prod(block))) + tuple(blocks)
    return space, deep


def same(a, b):
    """Bit-identical (NaN payloads included), whatever the strides."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                                                                         np.ascontiguousarray(b).view(np.uint8))


def call(op, x, block, **kw):
    return (sd.space_to_depth if op == "space_to_depth" else sd.depth_to_space)(x, block, **kw)


def check(op, x, block, order, layout, out_layout=None, **kw):
    out_layout = out_layout or layout
    got = call(op, x, block, order=order, layout=layout, out_layout=out_layout, **kw)
    want = reference(x, op, block, order, layout, out_layout)
    assert got.shape == want.shape and got.dtype == x.dtype
    assert same(got, want), (op, order, layout, out_layout, block)
    return got


@pytest.mark.parametrize("op", ["space_to_depth", "depth_to_space"])
@pytest.mark.parametrize("order", ["DCR", "CRD"])
@pytest.mark.parametrize("layout,out_layout", [(a, b) for a in LAYOUTS for b in LAYOUTS
                                               if a == b or "NHWC" in (a, b) or "NCHW" in (a, b)])
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_matches_reference(op, order, layout, out_layout, rank, rng):
    block = {1: (3,), 2: (2, 3), 3: (2, 1, 2)}[rank]
    # Channels both sides' groups divide: 16 always does; 3 only for the unblocked layouts.
    lanes = max(LANES.get(layout, 1), LANES.get(out_layout, 1))
    for c in ([3, 16] if lanes == 1 else [16]):
        space, deep = space_and_deep(rank, c, block, (2,) * rank, n=2)
        dims = space if op == "space_to_depth" else deep
        x = fill(npy_shape(dims, layout), np.float32, rng)
        check(op, x, block, order, layout, out_layout)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype(dtype, rng):
    for op, order, layout in itertools.product(["space_to_depth", "depth_to_space"], ["DCR", "CRD"], ["NHWC", "NCHW"]):
        space, deep = space_and_deep(2, 3, (2, 2), (3, 4))
        x = fill(npy_shape(space if op == "space_to_depth" else deep, layout), dtype, rng)
        y = check(op, x, 2, order, layout)
        assert y.dtype == np.dtype(dtype)  # byte order kept too


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes is not installed")
def test_bfloat16_and_float8_move_as_their_width(rng):
    for dtype in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn):
        x = fill((1, 4, 6, 4), np.uint8 if np.dtype(dtype).itemsize == 1 else np.uint16, rng).view(dtype)
        y = sd.space_to_depth(x, 2, layout="NCHW")
        assert y.dtype == np.dtype(dtype)
        assert same(y.view(np.uint8), reference(x.view(np.uint8 if np.dtype(dtype).itemsize == 1 else
                                                                 np.uint16), "space_to_depth", 2, "DCR", "NCHW",
                                                          "NCHW").view(np.uint8))


def test_raw_void_elements_move_as_their_width(rng):
    bits = fill((1, 4, 6, 32), np.uint8, rng)
    for dtype, carrier in (("V2", np.uint16), ("V4", np.uint32), (">f4", np.uint32), ("V16", np.complex128)):
        x = bits.view(dtype)
        y = sd.space_to_depth(x, 2, layout="NCHW")
        assert y.dtype == np.dtype(dtype)
        assert same(y.view(np.uint8), reference(bits.view(carrier), "space_to_depth", 2, "DCR", "NCHW", "NCHW")
                    .view(np.uint8))
    assert sd._core.dtype_from_typestr("|V2") == "uint16"


def test_nchw_vect_c(rng):
    x = fill((2, 3, 4, 6, 4), np.int8, rng)  # [N, C/4, H, W, 4]
    check("space_to_depth", x, 2, "DCR", "NCHW_VECT_C")
    check("space_to_depth", x, 2, "CRD", "NCHW_VECT_C", "NHWC")
    with pytest.raises(ValueError, match="NCHW_VECT_C holds 1-byte elements only"):
        sd.space_to_depth(x.astype(np.float32), 2, layout="NCHW_VECT_C")


def test_odd_and_negative_strides(rng):
    base = fill((3, 9, 14, 11), np.float32, rng)
    views = {
        "step 2 in H and W": base[:, ::1, ::2, ::2][:, :, :6, :4],
        "reversed W": base[:, :, :6, ::-1][..., :8],
        "reversed N and H": base[::-1, :, ::-1][:, :, :8, :6],
        "transposed (W and H swapped)": base.transpose(0, 1, 3, 2)[:, :, :10, :6],
        "C sliced with a step": base[:, 1::2, :4, :4],
        "every dim reversed": base[::-1, ::-1, ::-1, ::-1][:, :, :4, :6],
    }
    for name, x in views.items():
        for op, order in itertools.product(["space_to_depth", "depth_to_space"], ["DCR", "CRD"]):
            if op == "depth_to_space" and x.shape[1] % 4:
                x4 = x[:, :4] if x.shape[1] >= 4 else None
                if x4 is None:
                    continue
                check(op, x4, 2, order, "NCHW")
            else:
                check(op, x, 2, order, "NCHW")
        # A reversed output view: written through its negative strides, nothing else touched.
        want = reference(x, "space_to_depth", 2, "DCR", "NCHW", "NCHW")
        big = np.zeros(want.shape[:3] + (want.shape[3] * 2,), np.float32)
        out = big[:, :, ::-1, ::-2]
        assert sd.space_to_depth(x, 2, layout="NCHW", out=out) is out
        assert same(out, want), name
        assert not big[..., 0::2].any()


def test_zero_size_arrays():
    for shape in [(0, 4, 4, 3), (1, 0, 4, 3), (1, 4, 4, 0)]:
        x = np.empty(shape, np.float32)
        y = sd.space_to_depth(x, 2)
        assert y.shape == sd.output_shape("space_to_depth", shape, 2)
        assert y.size == 0


def test_read_only_input_is_fine(rng):
    x = fill((1, 4, 4, 2), np.float32, rng)
    x.flags.writeable = False
    check("space_to_depth", x, 2, "DCR", "NHWC")


def test_out_is_written_in_place_zero_copy(rng):
    x = fill((2, 4, 6, 3), np.float32, rng)
    out = np.full((2, 2, 3, 12), -1.0, np.float32)
    pointer = out.__array_interface__["data"][0]
    y = sd.space_to_depth(x, 2, out=out)
    assert y is out and y.__array_interface__["data"][0] == pointer
    assert same(out, reference(x, "space_to_depth", 2, "DCR", "NHWC", "NHWC"))
    # A strided out: a view into a larger buffer, written in place.
    big = np.full((2, 2, 3, 24), -1.0, np.float32)
    view = big[..., ::2]
    sd.space_to_depth(x, 2, out=view)
    assert same(view, out) and (big[..., 1::2] == -1).all()


def test_generic_dlpack_producer(rng):
    class Producer:  # any object with the DLPack protocol, no numpy type
        def __init__(self, a):
            self.a, self.shape, self.dtype = a, a.shape, a.dtype

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    x = fill((1, 4, 4, 8), np.float32, rng)
    y = sd.space_to_depth(Producer(x), 2)
    assert same(np.asarray(y), reference(x, "space_to_depth", 2, "DCR", "NHWC", "NHWC"))
    out = np.empty((1, 2, 2, 32), np.float32)
    sd.space_to_depth(Producer(x), 2, out=Producer(out))
    assert same(out, y)


def test_threads(rng):
    x = fill((1, 8, 256, 256), np.uint8, rng)  # 512 KiB: the parallel path
    for threads in (None, 1, 2):
        check("depth_to_space", x, 2, "CRD", "NCHW", threads=threads)
    with pytest.raises(ValueError, match="threads must be >= 0"):
        sd.depth_to_space(x, 2, layout="NCHW", threads=-1)


def test_rectangular_and_per_rank_blocks(rng):
    x = fill((1, 6, 8, 9, 2), np.float32, rng)  # NDHWC
    check("space_to_depth", x, (3, 2, 3), "CRD", "NHWC")
    check("space_to_depth", x, 1, "DCR", "NHWC")  # the identity
    with pytest.raises(ValueError, match="block has 2 sizes, but the tensors have 3 spatial dims"):
        sd.space_to_depth(x, (2, 2))


# ---- The plan object ---------------------------------------------------------------------------

def test_plan_runs_and_checks_what_it_was_made_for(rng):
    x = fill((2, 8, 6, 4), np.float32, rng)
    plan = sd.Plan("depth_to_space", x, 2, order="CRD", layout="NCHW")
    assert plan.out_shape == (2, 2, 12, 8)
    for _ in range(3):
        x2 = fill(x.shape, np.float32, rng)
        assert same(plan(x2), reference(x2, "depth_to_space", 2, "CRD", "NCHW", "NCHW"))
    out = np.empty(plan.out_shape, np.float32)
    assert plan(x, out) is out
    with pytest.raises(ValueError, match="has shape"):
        plan(x[:1])
    with pytest.raises(ValueError, match="has strides"):
        plan(np.asfortranarray(x))
    with pytest.raises(TypeError, match="dtype"):
        plan(x.astype(np.float64))
    before = out.copy()
    with pytest.raises(ValueError, match="overlaps"):
        plan(x, x.reshape(plan.out_shape))
    assert same(out, before)
    with pytest.raises(ValueError, match="not divisible"):
        sd.Plan("depth_to_space", x[:, :6], 2, layout="NCHW")
    # Planned strides: a reversed view.
    rev = fill(x.shape, np.float32, rng)[:, :, ::-1]
    plan_rev = sd.Plan("depth_to_space", rev, 2, order="CRD", layout="NCHW")
    assert same(plan_rev(rev), reference(rev, "depth_to_space", 2, "CRD", "NCHW", "NCHW"))


def test_measured_plans_and_wisdom(rng, tmp_path):
    sd.forget_wisdom()
    x = fill((1, 12, 16, 16), np.float32, rng)
    plan = sd.Plan("depth_to_space", x, 2, order="CRD", layout="NCHW", measure=True, time_limit_ms=20)
    assert "; measured " in plan.describe()
    assert same(plan(x), reference(x, "depth_to_space", 2, "CRD", "NCHW", "NCHW"))
    path = tmp_path / "wisdom.txt"
    sd.export_wisdom(path)
    text = path.read_text()
    assert text.startswith("spacedepth-wisdom 1\n") and "\nplan depth_to_space CRD " in text
    sd.forget_wisdom()
    assert "from wisdom" not in sd.Plan("depth_to_space", x, 2, order="CRD", layout="NCHW").describe()
    sd.import_wisdom(str(path))
    again = sd.Plan("depth_to_space", x, 2, order="CRD", layout="NCHW")
    assert "; from wisdom" in again.describe()
    assert same(again(x), reference(x, "depth_to_space", 2, "CRD", "NCHW", "NCHW"))
    # Hostile files and options raise, and import nothing.
    bad = tmp_path / "bad.txt"
    bad.write_text(text.replace(" CRD ", " XYZ "))
    with pytest.raises(ValueError, match="unknown order 'XYZ'.*nothing imported"):
        sd.import_wisdom(bad)
    bad.write_text(text.replace("\ncpu ", "\ncpu Another "))
    with pytest.raises(Exception, match="measured with cpu 'Another"):
        sd.import_wisdom(bad)
    with pytest.raises(ValueError, match="cannot read wisdom"):
        sd.import_wisdom(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="time_limit_ms must be 0"):
        sd.Plan("depth_to_space", x, 2, layout="NCHW", measure=True, time_limit_ms=-1)
    sd.forget_wisdom()


# ---- The peers' call forms ---------------------------------------------------------------------

def test_pixel_shuffle_forms(rng):
    x = fill((2, 3, 8, 5, 4), np.float32, rng)  # two batch dims
    y = sd.pixel_shuffle(x, 2)
    flat = x.reshape(6, 8, 5, 4)
    assert y.shape == (2, 3, 2, 10, 8)
    assert same(y.reshape(6, 2, 10, 8), reference(flat, "depth_to_space", 2, "CRD", "NCHW", "NCHW"))
    z = sd.pixel_unshuffle(y, 2)
    assert same(z, x)
    x3 = fill((9, 4, 4), np.float32, rng)  # no batch dim
    assert sd.pixel_shuffle(x3, 3).shape == (1, 12, 12)
    with pytest.raises(ValueError, match="at least 3 dims"):
        sd.pixel_shuffle(x3[0], 2)


def test_tf_forms(rng):
    x = fill((2, 4, 6, 3), np.float32, rng)
    assert same(sd.tf_space_to_depth(x, 2), reference(x, "space_to_depth", 2, "DCR", "NHWC", "NHWC"))
    xn = fill((2, 12, 3, 4), np.float32, rng)
    assert same(sd.tf_depth_to_space(xn, 2, data_format="NCHW"),
                          reference(xn, "depth_to_space", 2, "DCR", "NCHW", "NCHW"))
    xv = fill((1, 4, 2, 3, 4), np.int8, rng)
    assert same(sd.tf_depth_to_space(xv, 2, data_format="NCHW_VECT_C"),
                          reference(xv, "depth_to_space", 2, "DCR", "NCHW_VECT_C", "NCHW_VECT_C"))
    with pytest.raises(ValueError, match="block_size must be > 1"):
        sd.tf_space_to_depth(x, 1)
    with pytest.raises(ValueError, match="data_format"):
        sd.tf_space_to_depth(x, 2, data_format="NDHWC")


# ---- Hostile arrays: each raises, and neither array changes -------------------------------------

def expect_raises(exc, match, x, out, **kw):
    x_before, out_before = x.copy(), out.copy()
    with pytest.raises(exc, match=match):
        sd.space_to_depth(x, kw.pop("block", 2), out=out, **kw)
    assert same(x, x_before)
    assert same(out, out_before)


def test_hostile_arrays(rng):
    x = fill((1, 4, 6, 3), np.float32, rng)
    out = np.full((1, 2, 3, 12), 7.0, np.float32)
    expect_raises(ValueError, "does not fit layout NHWC", x[0, 0], out)
    expect_raises(ValueError, "does not fit layout NHWC", x[None, None, None], out)
    # The output's shape in the caller's terms: both array shapes, in their layouts.
    expect_raises(ValueError, re.escape("out has shape (1, 2, 3, 12), but x of shape (4, 6, 3) in NHWC with block 2 "
                                        "gives (4, 3, 6) in NHWC"), x[0], out)
    expect_raises(TypeError, "out dtype int32 differs from x dtype float32", x, out.view(np.int32))
    expect_raises(TypeError, "out dtype", x, out.astype(np.float64))
    expect_raises(ValueError, "width W=5 is not divisible by block width bw=2", x[:, :, :5], out)
    expect_raises(ValueError, re.escape("space_to_depth: out has shape (1, 2, 3, 11), but x of shape (1, 4, 6, 3) in "
                                        "NHWC with block 2 gives (1, 2, 3, 12) in NHWC"),
                  x, np.zeros((1, 2, 3, 11), np.float32))
    expect_raises(ValueError, re.escape("gives (1, 12, 2, 3) in NCHW"), x, np.zeros((1, 12, 3, 2), np.float32),
                  out_layout="NCHW")
    # Arguments nanobind would have refused with a message about its own function.
    expect_raises(ValueError, "block size 18446744073709551616 does not fit a 64-bit integer", x, out, block=2**64)
    expect_raises(ValueError, "block size -9223372036854775809 does not fit", x, out, block=(2, -2**63 - 1))
    expect_raises(TypeError, r"block must be an int or a tuple of ints: got True \(bool\)", x, out, block=True)
    expect_raises(TypeError, r"each block size must be an int: got False", x, out, block=(2, False))
    expect_raises(TypeError, "block must be an int or a tuple of ints: got None", x, out, block=None)
    expect_raises(TypeError, r"layout must be a str such as 'NHWC': got None \(NoneType\)", x, out, layout=None)
    expect_raises(TypeError, "order must be a str such as 'DCR': got 1", x, out, order=1)
    expect_raises(TypeError, "out_layout must be a str", x, out, out_layout=b"NHWC")
    expect_raises(TypeError, "threads must be an int: got True", x, out, threads=True)
    expect_raises(TypeError, "threads must be an int: got 2.0", x, out, threads=2.0)
    expect_raises(ValueError, "threads must be >= 0 .* fit a C int: got 4294967296", x, out, threads=2**32)
    expect_raises(ValueError, "threads must be >= 0: got -1", x, out, threads=-1)
    # Datetimes and timedeltas are refused, in the words the CLI uses for .npy files (one policy,
    # sd_dtype_from_typestr).
    for kind, says in (("datetime64[s]", "'<M8[s]': datetimes are no tensor elements"),
                       ("timedelta64[ms]", "'<m8[ms]': timedeltas are no tensor elements")):
        expect_raises(TypeError, "unsupported dtype " + re.escape(says), x.view(np.int32).astype(kind),
                      out.view(np.int32).astype(kind))
    with pytest.raises(TypeError, match="structured"):
        sd.space_to_depth(np.zeros((1, 2, 2, 4), dtype=[("a", "<f4"), ("b", "u1")]), 2)
    with pytest.raises(TypeError, match=re.escape("unsupported dtype '|V3': elements of 3 bytes")):
        sd.space_to_depth(np.zeros((1, 2, 2, 4), dtype="V3"), 2)
    expect_raises(ValueError, "block sizes must be >= 1", x, out, block=0)
    expect_raises(ValueError, "block sizes must be >= 1", x, out, block=(2, -1))
    expect_raises(TypeError, "block must be an int", x, out, block=2.0)
    with pytest.raises(TypeError, match="op must be a str"):
        sd.output_shape(None, (1, 4, 4, 1), 2)
    with pytest.raises(ValueError, match="shape dim 18446744073709551616 does not fit"):
        sd.output_shape("space_to_depth", (1, 2**64, 4, 1), 2)
    with pytest.raises(TypeError, match="layout must be a str"):
        sd.Plan("space_to_depth", x, 2, layout=None)
    with pytest.raises(ValueError, match="out_strides .* do not fit"):
        sd.Plan("space_to_depth", x, 2, out_strides=(2**64, 1, 1, 1))
    expect_raises(ValueError, "not a layout", x, out, layout="NWHC")
    expect_raises(ValueError, "not DCR or CRD", x, out, order="dcr")
    with pytest.raises(ValueError, match="C=3 are not divisible by 4 .*groups of 4"):
        sd.depth_to_space(fill((1, 2, 3, 12), np.float32, rng), 2, out_layout="NCHWc4")
    # out= overlapping x, and out= aliasing x itself.
    buf = fill((2 * x.size,), np.float32, rng)
    xs, outs = buf[:x.size].reshape(x.shape), buf[x.size // 2:x.size // 2 + out.size].reshape(out.shape)
    before = buf.copy()
    with pytest.raises(ValueError, match="overlaps output memory"):
        sd.space_to_depth(xs, 2, out=outs)
    assert same(buf, before)
    sq = fill((1, 4, 4, 4), np.float32, rng)
    sq_before = sq.copy()
    with pytest.raises(ValueError, match="not in place"):
        sd.space_to_depth(sq, 1, out=sq)
    assert same(sq, sq_before)
    # An out whose strides give two elements one address.
    alias = np.lib.stride_tricks.as_strided(np.zeros(64, np.float32), (1, 2, 3, 12), (0, 0, 4, 4))
    with pytest.raises(ValueError, match="share memory"):
        sd.space_to_depth(x, 2, out=alias)
    ro = out.copy()
    ro.flags.writeable = False
    expect_raises(ValueError, "read-only", x, ro)
    for bad in (np.array([object()] * 12, dtype=object).reshape(1, 2, 2, 3), np.zeros((1, 2, 2, 3), "U3")):
        with pytest.raises(TypeError, match="unsupported dtype"):
            sd.space_to_depth(bad, 2)
    with pytest.raises(TypeError, match="numpy array or a DLPack producer"):
        sd.space_to_depth([[[[1.0]]]], 1)


def test_random_calls_against_the_reference(rng):
    """A seeded fuzz of valid calls: ops, orders, ranks, layouts, blocks, channel counts (3, 6, 12,
    27 and group multiples), dtypes, strided and reversed views of both arrays."""
    for i in range(300):
        op = ["space_to_depth", "depth_to_space"][i % 2]
        order = ["DCR", "CRD"][rng.integers(2)]
        rank = int(rng.integers(1, 4))
        layout, out_layout = (LAYOUTS[rng.integers(len(LAYOUTS))] for _ in range(2))
        block = tuple(int(b) for b in rng.integers(1, 4, size=rank))
        lanes = max(LANES.get(layout, 1), LANES.get(out_layout, 1))
        c = int(rng.choice([3, 6, 12, 27])) if lanes == 1 else 16 * int(rng.integers(1, 3))
        blocks = tuple(int(b) for b in rng.integers(1, 4, size=rank))
        space, deep = space_and_deep(rank, c, block, blocks, n=int(rng.integers(1, 3)))
        in_dims, out_dims = (space, deep) if op == "space_to_depth" else (deep, space)
        dtype = DTYPES[rng.integers(len(DTYPES))]
        shape = npy_shape(in_dims, layout)
        # A view: padded by a step, some dims reversed (never the lanes dim of a blocked layout).
        steps = tuple(int(s) for s in rng.choice([1, 1, 2, -1, -2], size=len(shape)))
        if layout in LANES:
            steps = steps[:-1] + (1,)
        base = fill(tuple(n * abs(s) for n, s in zip(shape, steps)), dtype, rng)
        x = base[tuple(slice(None, None, s) for s in steps)]
        assert x.shape == shape
        out_shape = npy_shape(out_dims, out_layout)
        out = None
        if rng.integers(2):
            big = np.zeros(tuple(n * 2 for n in out_shape[:-1]) + out_shape[-1:], np.dtype(dtype))
            out = big[tuple(slice(None, None, int(rng.choice([2, -2]))) for _ in out_shape[:-1])]
        got = call(op, x, block, order=order, layout=layout, out_layout=out_layout, out=out)
        want = reference(x, op, block, order, layout, out_layout)
        assert same(got, want), (i, op, order, layout, out_layout, block)


def test_random_hostile_calls_never_crash(rng):
    """Arbitrary shapes, blocks, layouts and orders: every call returns or raises ValueError or
    TypeError, and a call that raises writes nothing."""
    names = LAYOUTS + ["NCHW_VECT_C", "NWC", "bogus"]
    for i in range(400):
        nd = int(rng.integers(1, 8))
        shape = tuple(int(v) for v in rng.choice([0, 1, 2, 3, 4, 8, 16], size=nd))
        x = fill(shape, [np.float32, np.int8, np.complex128][i % 3], rng)
        block = int(rng.integers(-2, 5)) if i % 2 else tuple(int(b) for b in rng.integers(-1, 5, size=int(
            rng.integers(0, 4))))
        kw = dict(order=["DCR", "CRD", "XYZ"][rng.integers(3)], layout=names[rng.integers(len(names))],
                  out_layout=names[rng.integers(len(names))])
        out = fill(tuple(int(v) for v in rng.choice([1, 2, 4, 8], size=nd)), x.dtype, rng)
        out_before, x_before = out.copy(), x.copy()
        fn = sd.space_to_depth if i % 2 else sd.depth_to_space
        try:
            fn(x, block, out=out if i % 3 else None, **kw)
        except (ValueError, TypeError):
            assert same(out, out_before)
        assert same(x, x_before)


def test_module_facts():
    assert sd.__version__.count(".") == 2
    assert "kernels:" in sd.build_info()
    sd.set_num_threads(2)
    assert sd.num_threads() == 2
    # Outside 0 to 256 refused, the count unchanged (the C API's rule and message).
    for bad in (-1, 257, 1000, 2**40):
        with pytest.raises(ValueError, match=f"threads must be 0 to 256 .*: got {bad}"):
            sd.set_num_threads(bad)
        assert sd.num_threads() == 2
    for bad in (True, 2.0, None, "2"):
        with pytest.raises(TypeError, match="threads must be an int"):
            sd.set_num_threads(bad)
    sd.set_num_threads(np.int64(3))
    assert sd.num_threads() == 3
    sd.set_num_threads(2)
    assert sd.output_shape("depth_to_space", (1, 8, 3, 3), 2, layout="NCHW", out_layout="NHWC") == (1, 6, 6, 2)


def test_broadcast_inputs(rng):
    """Stride-0 views read fine; a blocked layout's lanes may be broadcast too (one channel stride)."""
    x = np.broadcast_to(fill((1, 1, 4, 1), np.float32, rng), (2, 6, 4, 8))
    check("space_to_depth", x, 2, "CRD", "NCHW")
    xb = np.broadcast_to(fill((1,), np.float32, rng), (1, 2, 4, 4, 8))
    check("space_to_depth", xb, 2, "DCR", "NCHWc8", "NHWC")
    lanes_apart = fill((1, 2, 4, 4, 16), np.float32, rng)[..., ::2]
    with pytest.raises(ValueError, match="must be adjacent"):
        sd.space_to_depth(lanes_apart, 2, layout="NCHWc8")
