"""SpaceToDepth and DepthToSpace on numpy arrays, PyTorch tensors and any DLPack producer, with no
copy: the arrays' memory goes to spacedepth's kernels as it is, strides (negative ones included)
and all.

    import numpy as np, spacedepth
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)          # NHWC
    y = spacedepth.space_to_depth(x, 2)                              # (1, 2, 2, 4), DCR
    spacedepth.depth_to_space(y, 2, out=x)                           # written into x

Arrays are in memory order for their layout: NHWC is [N, (D,) (H,) W, C], NCHW is
[N, C, (D,) (H,) W], the blocked layouts NCHWc4/8/16 and NCHW_VECT_C are [N, C/k, (D,) (H,) W, k].
The spatial rank (1, 2 or 3) is the array's. Orders: DCR (TensorFlow, ONNX's default) and CRD
(PyTorch's pixel_shuffle, ONNX mode "CRD"); docs/SPEC.md defines both.

Peer-compatible forms: pixel_shuffle / pixel_unshuffle (as torch.nn.functional) and
tf_depth_to_space / tf_space_to_depth (as tf.nn). PyTorch operators for torch.compile:
`import spacedepth.torch` registers torch.ops.spacedepth.depth_to_space and space_to_depth.

Errors are exceptions carrying the runtime's one-line message: ValueError for a rule the call
breaks (shapes, layouts, overlapping memory, ...), TypeError for an element type, MemoryError for
an allocation, RuntimeError for a kernel or CUDA driver failure. Nothing is written when a call
raises.
"""

from __future__ import annotations

import functools
import operator
import os
import sys
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core

__all__ = [
    "space_to_depth", "depth_to_space", "pixel_shuffle", "pixel_unshuffle", "tf_depth_to_space",
    "tf_space_to_depth", "Plan", "output_shape", "set_num_threads", "num_threads", "build_info", "__version__",
    "export_wisdom", "import_wisdom", "forget_wisdom",
]

__version__: str = _core.version()

Block = Union[int, Sequence[int]]


def _torch():
    """PyTorch if the caller has imported it (spacedepth never imports it itself)."""
    return sys.modules.get("torch")


def _framework_library(file: str, variable: str, needed_by: str = "") -> str:
    """A framework library's path (README "Frameworks"): the environment variable's value if set
    (empty: none), else the file beside this package. Where there is no such file: "", or
    ImportError when the module `needed_by` cannot work without it."""
    path = os.environ.get(variable)
    if path is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), file)
    if path and os.path.exists(path):
        return path
    if needed_by:
        raise ImportError(f"{needed_by} needs {file} beside the package (make test-frameworks builds it) or named by "
                          f"{variable}")
    return ""


def _is_torch(x: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


# Every argument is checked here, before the compiled core sees it, so that a wrong type or an int
# too large for C reads as a message about the argument the caller passed, not as nanobind's
# "incompatible function arguments" about a function the caller never called.
_INT64 = range(-2**63, 2**63)
_INT = range(-2**31, 2**31)


def _integer(value: Any, what: str) -> int:
    """value as an int: ints and integer scalars (numpy's), never bool."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{what} must be an int: got {value!r} ({type(value).__name__})")


def _block(block: Block) -> Tuple[int, ...]:
    if type(block) is int and block in _INT64:
        return (block,)
    if isinstance(block, (tuple, list)):
        sizes = tuple(_integer(b, "each block size") for b in block)
    elif isinstance(block, (bool, np.bool_)) or not hasattr(block, "__index__"):
        raise TypeError(f"block must be an int or a tuple of ints: got {block!r} ({type(block).__name__})")
    else:
        sizes = (_integer(block, "block"),)
    if not sizes:
        raise ValueError("block must have at least one size")
    for b in sizes:
        if b not in _INT64:
            raise ValueError(f"block size {b} does not fit a 64-bit integer")
    return sizes


def _threads(threads: Optional[int]) -> int:
    if threads is None:
        return 0
    t = _integer(threads, "threads")
    if t not in _INT:
        raise ValueError(f"threads must be >= 0 (0: the library setting, N: up to N) and fit a C int: got {t}")
    return t


def _name(value: Any, what: str, example: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str such as {example!r}: got {value!r} ({type(value).__name__})")
    return value


def _names(order: Any, layout: Any, out_layout: Any) -> Tuple[str, str, str]:
    """order, layout and out_layout (default: layout) checked to be strings."""
    layout = _name(layout, "layout", "NHWC")
    return (_name(order, "order", "DCR"), layout,
            layout if out_layout is None else _name(out_layout, "out_layout", "NCHW"))


# The dtypes numpy exports through DLPack as they are (native byte order, numbers and bools).
_DLPACK_DTYPES = frozenset(np.dtype(c).newbyteorder("=") for c in "?bBhHiIlLqQefdFD")


def _numpy_view(a: np.ndarray) -> np.ndarray:
    dt = a.dtype
    if dt in _DLPACK_DTYPES:
        return a
    # numpy dtypes DLPack cannot carry (ml_dtypes' bfloat16 and float8, byte-swapped types, plain
    # void) move as the dtype the library's policy names for them (sd_dtype_from_typestr, which
    # the CLI applies to .npy files too): the op moves bytes unchanged. Structured dtypes read as
    # raw void there, so they are refused first, as the CLI refuses them.
    if dt.fields is not None or dt.subdtype is not None:
        raise TypeError(f"unsupported dtype {dt}: a structured (record) dtype; spacedepth moves numbers, bools and "
                        "raw elements")
    return a.view(np.dtype(_core.dtype_from_typestr(dt.str)))


def _check_same_dtype(x: Any, out: Any) -> None:
    if x.dtype != out.dtype:
        raise TypeError(f"out dtype {out.dtype} differs from x dtype {x.dtype} (the op moves elements; they "
                        "must be the same type)")


def _array(x: Any) -> Any:
    """x as the core takes it: numpy arrays with a DLPack-friendly dtype, detached torch tensors."""
    if type(x) is np.ndarray or isinstance(x, np.ndarray):
        return _numpy_view(x)
    if _is_torch(x):
        return x.detach()
    if hasattr(x, "__dlpack__"):
        return x
    raise TypeError(f"expected a numpy array or a DLPack producer (torch.Tensor, ...): got {type(x).__name__}")


def _empty(x: Any, shape: Tuple[int, ...]) -> Any:
    """A new output of x's kind, dtype and device."""
    if isinstance(x, np.ndarray):
        return np.empty(shape, dtype=x.dtype)
    if _is_torch(x):
        return _torch().empty(shape, dtype=x.dtype, device=x.device)
    device_type = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    if device_type not in (1, 3):
        raise TypeError(f"pass out=: spacedepth allocates outputs for numpy arrays, PyTorch tensors and CPU DLPack "
                        f"producers, not for {type(x).__name__} on DLPack device type {device_type}")
    host = np.from_dlpack(x) if hasattr(x, "__dlpack_device__") else np.asarray(x)
    return np.empty(shape, dtype=host.dtype)


def _as_kind(x: Any, y: np.ndarray) -> Any:
    """y (a new numpy output) as an array of x's kind, without a copy where x's library imports DLPack."""
    if isinstance(x, np.ndarray) or _is_torch(x) or not hasattr(x, "__array_namespace__"):
        return y
    return x.__array_namespace__().from_dlpack(y)


def _stream(x: Any) -> int:
    """The CUDA stream PyTorch queues x's work on (0, the default stream, for others)."""
    if _is_torch(x) and x.is_cuda:
        return _torch().cuda.current_stream(x.device).cuda_stream
    return 0


@functools.lru_cache(maxsize=256)
def _output_shape(op: str, shape: Tuple[int, ...], sizes: Tuple[int, ...], order: str, layout: str,
                  out_layout: str) -> Tuple[int, ...]:
    """The output array shape (cached: repeated shapes are the common case; errors are not cached)."""
    return tuple(_core.output_shape(op, shape, sizes, order, layout, out_layout))


_TORCH_DTYPE_NAMES: dict = {}  # torch dtype -> spacedepth dtype name, filled on first use


def _torch_dtype_name(t: Any) -> str:
    name = _TORCH_DTYPE_NAMES.get(t.dtype)
    if name is None:
        torch = _torch()
        named = {torch.bool: "bool", torch.int8: "int8", torch.uint8: "uint8", torch.int16: "int16",
                 torch.float16: "float16", torch.bfloat16: "bfloat16", torch.int32: "int32", torch.float32: "float32",
                 torch.int64: "int64", torch.float64: "float64", torch.complex64: "complex64",
                 torch.complex128: "complex128"}
        # Others (float8, uint16, ...) move as unsigned integers of their width.
        name = named.get(t.dtype) or {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}.get(t.element_size())
        if name is None or t.is_quantized:
            raise TypeError(f"unsupported dtype {t.dtype}")
        _TORCH_DTYPE_NAMES[t.dtype] = name
    return name


def _torch_raw(t: Any, which: str) -> tuple:
    """A torch tensor as the core's raw description: its DLPack export costs about 4 us a tensor,
    its pointer, shape and strides a fraction of that. The caller keeps t alive."""
    if t.is_conj() or t.is_neg():  # lazy conjugate / negative views: the bits in memory are not the values
        raise ValueError(f"{which} is a lazy conjugate or negative view: call resolve_conj() / resolve_neg() first")
    if t.is_cuda:
        device = (2, t.get_device())
    elif t.is_cpu and t.layout is _torch().strided:
        device = (1, 0)
    else:
        raise ValueError(f"{which}: only dense (strided) tensors on the CPU or a CUDA device: got a {t.layout} "
                         f"tensor on {t.device}")
    return (t.data_ptr(), t.shape, t.stride(), _torch_dtype_name(t)) + device


def _refuse_grad(out: Any) -> None:
    """An out= tensor that requires grad is refused: the write would bypass autograd."""
    if _is_torch(out) and out.requires_grad:
        raise ValueError("out= does not take a tensor that requires grad (the write bypasses autograd)")


def _writing(run, out: Any, *args) -> None:
    """run(*args), with a read-only numpy out told apart from nanobind's "incompatible arguments"."""
    try:
        run(*args)
    except TypeError:
        if isinstance(out, np.ndarray) and not out.flags.writeable:
            raise ValueError("out is read-only") from None
        raise


def _run_torch(op, x, out, sizes, order, layout, out_layout, threads) -> None:
    _refuse_grad(out)
    _check_same_dtype(x, out)
    _core.run_raw(op, _torch_raw(x, "x"), _torch_raw(out, "out"), sizes, order, layout, out_layout, threads,
                  _stream(x))


def _run(op, xa, out, sizes, order, layout, out_layout, threads, stream) -> None:
    """The core call on xa (x as _array() gives it) into out."""
    _writing(_core.run, out, op, xa, _array(out), sizes, order, layout, out_layout, threads, stream)


def _call(op: str, x: Any, block: Block, order: str, layout: str, out_layout: Optional[str], out: Any,
          threads: Optional[int]) -> Any:
    sizes, threads = _block(block), _threads(threads)
    order, layout, out_layout = _names(order, layout, out_layout)
    if out is not None and hasattr(out, "shape") and hasattr(x, "shape"):
        # The output's shape in the caller's terms: array shapes in their layouts (the core
        # would name logical N, C, (D,) (H,) W dims).
        want = _output_shape(op, tuple(x.shape), sizes, order, layout, out_layout)
        if tuple(out.shape) != want:
            raise ValueError(f"{op}: out has shape {tuple(out.shape)}, but x of shape {tuple(x.shape)} in {layout} "
                             f"with block {sizes if len(sizes) > 1 else sizes[0]} gives {want} in {out_layout}")
    if type(x) is np.ndarray and x.dtype in _DLPACK_DTYPES and (out is None or type(out) is np.ndarray):
        # numpy with a dtype DLPack carries, the common case, kept short: the core checks the rest.
        if out is None:
            out = np.empty(_output_shape(op, x.shape, sizes, order, layout, out_layout), dtype=x.dtype)
        else:
            _check_same_dtype(x, out)
        _run(op, x, out, sizes, order, layout, out_layout, threads, 0)
        return out
    if _is_torch(x) and (out is None or _is_torch(out)):
        if out is None:
            out = _torch().empty(_output_shape(op, tuple(x.shape), sizes, order, layout, out_layout), dtype=x.dtype,
                                 device=x.device)
        _run_torch(op, x, out, sizes, order, layout, out_layout, threads)
        return out
    xa = _array(x)  # TypeError for what is no array
    if out is None:
        result = _empty(x, _output_shape(op, tuple(x.shape), sizes, order, layout, out_layout))
        _run(op, xa, result, sizes, order, layout, out_layout, threads, _stream(x))
        return _as_kind(x, result)
    _refuse_grad(out)  # _array() detaches
    if hasattr(out, "dtype") and hasattr(x, "dtype") and type(out) is type(x):
        _check_same_dtype(x, out)  # before any view: '>f4' and '<f4' both move as uint32
    _run(op, xa, out, sizes, order, layout, out_layout, threads, _stream(x))
    return out


def space_to_depth(x: Any, block: Block, *, order: str = "DCR", layout: str = "NHWC", out_layout: Optional[str] = None,
                   out: Any = None, threads: Optional[int] = None) -> Any:
    """SpaceToDepth: blocks of the spatial dims move into the channels.

    x: a numpy array, a torch.Tensor (CPU, or CUDA in builds with CUDA kernels) or any DLPack
       producer, in memory order for `layout` (NHWC: [N, (D,) (H,) W, C]; NCHW: [N, C, (D,) (H,) W];
       NCHWc4/8/16, NCHW_VECT_C: [N, C/k, (D,) (H,) W, k]); any strides, negative ones included.
    block: one size (square at every rank) or one per spatial dim, outermost first.
    order: "DCR" (TensorFlow, ONNX default) or "CRD" (PyTorch pixel_unshuffle, ONNX "CRD").
    out_layout: the output's layout (default: layout); another one fuses the conversion.
    out: an array to write into (right shape and dtype, any strides); returned as it is.
    threads: None or 0 for the library setting, 1 for the calling thread only, N for up to N.

    Returns the output: `out`, or a new array of x's kind, dtype and device.
    """
    return _call("space_to_depth", x, block, order, layout, out_layout, out, threads)


def depth_to_space(x: Any, block: Block, *, order: str = "DCR", layout: str = "NHWC", out_layout: Optional[str] = None,
                   out: Any = None, threads: Optional[int] = None) -> Any:
    """DepthToSpace: the channels spread into blocks of the spatial dims; the inverse of
    space_to_depth with the same block and order. Arguments as space_to_depth's ("CRD" is
    PyTorch's pixel_shuffle)."""
    return _call("depth_to_space", x, block, order, layout, out_layout, out, threads)


def output_shape(op: str, shape: Sequence[int], block: Block, *, order: str = "DCR", layout: str = "NHWC",
                 out_layout: Optional[str] = None) -> Tuple[int, ...]:
    """The output array shape of op ("space_to_depth" or "depth_to_space") for an input array
    shape; ValueError when the shape does not divide."""
    op = _name(op, "op", "space_to_depth")
    order, layout, out_layout = _names(order, layout, out_layout)
    shape = tuple(_integer(d, "each dim of shape") for d in shape)
    for d in shape:
        if d not in _INT64:
            raise ValueError(f"shape dim {d} does not fit a 64-bit integer")
    return tuple(_core.output_shape(op, shape, _block(block), order, layout, out_layout))


# ---- The peers' call forms, with their semantics -------------------------------------------------

def _channels_last_torch(x: Any) -> bool:
    torch = _torch()
    return (x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last))


def _batched(x: Any, fn_name: str, op: str, factor: int) -> Any:
    """torch's pixel_shuffle / pixel_unshuffle on any number of leading batch dims, CRD, NCHW."""
    factor = operator.index(factor)
    if factor < 1:
        raise ValueError(f"{fn_name}: the factor must be >= 1: got {factor}")
    if x.ndim < 3:
        raise ValueError(f"{fn_name} expects an input with at least 3 dims (*, C, H, W): got shape {tuple(x.shape)}")
    lead = None if x.ndim == 4 else tuple(x.shape[:-3])  # other batch dims fold into N, and back
    x4 = x if lead is None else x.reshape((int(np.prod(lead)) if lead else 1,) + tuple(x.shape[-3:]))
    shape = _output_shape(op, tuple(x4.shape), (factor,), "CRD", "NCHW", "NCHW")
    if _is_torch(x):
        torch = _torch()
        if _channels_last_torch(x4):  # as PyTorch: a channels_last input gives a channels_last output
            out = torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=torch.channels_last)
        else:
            out = torch.empty(shape, dtype=x.dtype, device=x.device)
        _run_torch(op, x4, out, (factor,), "CRD", "NCHW", "NCHW", 0)
    else:
        out = _empty(x, shape)
        _run(op, _array(x4), out, (factor,), "CRD", "NCHW", "NCHW", 0, 0)
    return out if lead is None else out.reshape(lead + shape[1:])


def pixel_shuffle(x: Any, upscale_factor: int) -> Any:
    """torch.nn.functional.pixel_shuffle, exactly: (*, C*r*r, H, W) -> (*, C, H*r, W*r), CRD order.
    Leading dims are any batch dims (none included); a channels_last tensor gives a channels_last
    result. Takes numpy arrays too."""
    return _batched(x, "pixel_shuffle", "depth_to_space", upscale_factor)


def pixel_unshuffle(x: Any, downscale_factor: int) -> Any:
    """torch.nn.functional.pixel_unshuffle, exactly: (*, C, H*r, W*r) -> (*, C*r*r, H, W), CRD
    order. Takes numpy arrays too."""
    return _batched(x, "pixel_unshuffle", "space_to_depth", downscale_factor)


_TF_FORMATS = {"NHWC": "NHWC", "NCHW": "NCHW", "NCHW_VECT_C": "NCHW_VECT_C"}


def _tf(fn_name: str, op: str, x: Any, block_size: int, data_format: str) -> Any:
    block_size = operator.index(block_size)
    if block_size < 2:  # TensorFlow's own rule
        raise ValueError(f"{fn_name}: block_size must be > 1: got {block_size}")
    if data_format not in _TF_FORMATS:
        raise ValueError(f"{fn_name}: data_format must be NHWC, NCHW or NCHW_VECT_C: got {data_format!r}")
    want = 5 if data_format == "NCHW_VECT_C" else 4
    if len(x.shape) != want:
        raise ValueError(f"{fn_name}: a {data_format} input has {want} dims: got shape {tuple(x.shape)}")
    return _call(op, x, block_size, "DCR", _TF_FORMATS[data_format], None, None, None)


def tf_depth_to_space(x: Any, block_size: int, data_format: str = "NHWC") -> Any:
    """tf.nn.depth_to_space, exactly: DCR order, block_size >= 2, data_format NHWC, NCHW or
    NCHW_VECT_C ([N, C/4, H, W, 4] int8/uint8). Returns an array of x's kind."""
    return _tf("tf_depth_to_space", "depth_to_space", x, block_size, data_format)


def tf_space_to_depth(x: Any, block_size: int, data_format: str = "NHWC") -> Any:
    """tf.nn.space_to_depth, exactly: DCR order, block_size >= 2, data_format NHWC, NCHW or
    NCHW_VECT_C."""
    return _tf("tf_space_to_depth", "space_to_depth", x, block_size, data_format)


# ---- Plans -------------------------------------------------------------------------------------------

class Plan:
    """One call planned once for arrays like `like` (dtype, shape and strides; its data is not
    read), then run on any such arrays in host memory: validation, the view and the kernel choice
    are paid at construction.

        plan = spacedepth.Plan("depth_to_space", x, 2, layout="NCHW", order="CRD")
        for batch in batches:
            y = plan(batch)                 # or plan(batch, out=y) to reuse the output

    Running it on an array of another shape, dtype or strides raises ValueError or TypeError.

    measure=True times the rules' plan and its alternatives (kernel family, the AVX2 path beside
    AVX-512, loop order) on scratch arrays of this shape within time_limit_ms
    (0: the library's default, 5 ms) and keeps the fastest, as FFTW_MEASURE does; the choice is
    remembered as wisdom (export_wisdom) for later plans and calls of the shape.
    describe() says which kernel runs and how the plan was made.
    """

    def __init__(self, op: str, like: Any, block: Block, *, order: str = "DCR", layout: str = "NHWC",
                 out_layout: Optional[str] = None, out_strides: Optional[Sequence[int]] = None,
                 threads: Optional[int] = None, measure: bool = False, time_limit_ms: float = 0.0):
        order, layout, out_layout = _names(order, layout, out_layout)
        self.op, self.block, self.order, self.layout = _name(op, "op", "space_to_depth"), _block(block), order, layout
        self.out_layout = out_layout
        self._like = like
        strides = tuple(_integer(v, "each of out_strides") for v in (out_strides or ()))
        if any(v not in _INT64 for v in strides):
            raise ValueError(f"out_strides {strides} do not fit 64-bit integers")
        self._plan = _core.Plan(self.op, _array(like), self.block, order, layout, self.out_layout, strides,
                                _threads(threads), bool(measure), float(time_limit_ms))
        self.out_shape: Tuple[int, ...] = tuple(self._plan.out_shape)
        self._dense_out = out_strides is None

    def __call__(self, x: Any, out: Any = None) -> Any:
        if out is None:
            if not self._dense_out:
                raise ValueError("this plan was made for out_strides: pass out= with those strides")
            result = _empty(x, self.out_shape)
            self._plan.run(_array(x), _array(result))
            return _as_kind(x, result)
        _refuse_grad(out)  # _array() detaches
        _writing(self._plan.run, out, _array(x), _array(out))
        return out

    def describe(self) -> str:
        return self._plan.describe()

    def __repr__(self) -> str:
        return (f"spacedepth.Plan({self.op!r}, shape {tuple(self._like.shape)} -> {self.out_shape}, block "
                f"{self.block}, {self.order}, {self.layout} -> {self.out_layout})")


# ---- Wisdom ------------------------------------------------------------------------------------------

def export_wisdom(path: Union[str, "os.PathLike[str]"]) -> None:
    """Writes the choices measured plans made (per call shape) to a text file, replaced whole."""
    _core.export_wisdom(os.fspath(path))


def import_wisdom(path: Union[str, "os.PathLike[str]"]) -> None:
    """Adds a wisdom file's choices; later plans and calls of those shapes take them. A malformed
    file, or one measured on another CPU, core count, kernel target or library version, raises
    ValueError naming the line or the difference, and nothing of it is imported."""
    _core.import_wisdom(os.fspath(path))


def forget_wisdom() -> None:
    """Drops every measured choice: plans follow the planner's rules again."""
    _core.forget_wisdom()


def set_num_threads(threads: int) -> None:
    """The process-wide thread count for kernels that run in parallel (0: one per core), at most
    256, the most the thread pool holds; ValueError outside 0 to 256 (the count is unchanged)."""
    t = _integer(threads, "threads")
    if t not in _INT:  # the library's own message, for a count too large for C too
        raise ValueError(f"threads must be 0 to 256 (0: one per core; the pool holds at most 256): got {t}")
    _core.set_num_threads(t)


def num_threads() -> int:
    return _core.num_threads()


def build_info() -> str:
    """Version, kernels, their targets and the one this CPU runs, switch points, threads."""
    return _core.build_info()
