"""An independent numpy reference for SpaceToDepth / DepthToSpace at spatial rank 1, 2 and 3,
written from docs/SPEC.md with DirectML's view of the deep side: [N, (blocks..., C), spatial...]
for DCR and [N, (C, blocks...), spatial...] for CRD, and the space side
[N, C, (D, bd), (H, bh), (W, bw)]. Shared by the CLI tests and bench/peers.py.

Layouts: NHWC (channels last at any rank), NCHW (channels first), NCHW_VECT_C and NCHWc4/8/16
(blocked channels [N, C/k, spatial..., k])."""
import numpy as np

LANES = {"NCHW_VECT_C": 4, "NCHWc4": 4, "NCHWc8": 8, "NCHWc16": 16}


def to_channels_first(a, layout):
    if layout == "NHWC":
        return np.moveaxis(a, -1, 1)
    if layout in LANES:  # [N, C/k, spatial..., k] -> [N, C, spatial...]
        b = np.moveaxis(a, -1, 2)
        return b.reshape((b.shape[0], b.shape[1] * b.shape[2]) + b.shape[3:])
    return a


def from_channels_first(a, layout):
    if layout == "NHWC":
        return np.ascontiguousarray(np.moveaxis(a, 1, -1))
    if layout in LANES:
        k = LANES[layout]
        b = a.reshape((a.shape[0], a.shape[1] // k, k) + a.shape[2:])
        return np.ascontiguousarray(np.moveaxis(b, 2, -1))
    return np.ascontiguousarray(a)


def reference(x, op, block, order, layout, out_layout):
    """block: one size per spatial dim, outermost first (an int is square)."""
    x = to_channels_first(x, layout)
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    rank = len(spatial)
    block = (block,) * rank if isinstance(block, int) else tuple(block)
    volume = int(np.prod(block))
    if op == "depth_to_space":
        cs = c // volume
        if order == "DCR":  # [n, b..., cs, s...] -> [n, cs, (s0, b0), (s1, b1), ...]
            y = x.reshape((n,) + block + (cs,) + spatial)
            perm = (0, 1 + rank) + tuple(v for i in range(rank) for v in (2 + rank + i, 1 + i))
        else:  # [n, cs, b..., s...]
            y = x.reshape((n, cs) + block + spatial)
            perm = (0, 1) + tuple(v for i in range(rank) for v in (2 + rank + i, 2 + i))
        y = y.transpose(perm).reshape((n, cs) + tuple(s * b for s, b in zip(spatial, block)))
    else:
        split = tuple(v for s, b in zip(spatial, block) for v in (s // b, b))
        y = x.reshape((n, c) + split)  # [n, c, s0, b0, s1, b1, ...]
        outer = tuple(2 + 2 * i for i in range(rank))
        inner = tuple(3 + 2 * i for i in range(rank))
        perm = (0,) + inner + (1,) + outer if order == "DCR" else (0, 1) + inner + outer
        y = y.transpose(perm).reshape((n, c * volume) + tuple(s // b for s, b in zip(spatial, block)))
    return from_channels_first(y, out_layout)


def npy_shape(dims, layout):
    """The array shape of logical dims (N, C, spatial...) in a layout."""
    n, c, spatial = dims[0], dims[1], tuple(dims[2:])
    if layout == "NHWC":
        return (n,) + spatial + (c,)
    if layout in LANES:
        k = LANES[layout]
        return (n, c // k) + spatial + (k,)
    return (n, c) + spatial
