"""An independent numpy reference for SpaceToDepth / DepthToSpace, written from docs/SPEC.md with
DirectML's view of the deep side: [N, (bh, bw, C), H, W] for DCR and [N, (C, bh, bw), H, W] for
CRD, and the space side [N, C, (H, bh), (W, bw)]. Shared by the CLI tests and bench/peers.py."""
import numpy as np


def to_nchw(a, layout):
    if layout == "NHWC":
        return a.transpose(0, 3, 1, 2)
    if layout == "NCHW_VECT_C":
        n, c4, h, w, _ = a.shape
        return a.transpose(0, 1, 4, 2, 3).reshape(n, c4 * 4, h, w)
    return a


def from_nchw(a, layout):
    if layout == "NHWC":
        return np.ascontiguousarray(a.transpose(0, 2, 3, 1))
    if layout == "NCHW_VECT_C":
        n, c, h, w = a.shape
        return np.ascontiguousarray(a.reshape(n, c // 4, 4, h, w).transpose(0, 1, 3, 4, 2))
    return np.ascontiguousarray(a)


def reference(x, op, bh, bw, order, layout, out_layout):
    x = to_nchw(x, layout)
    n, c, h, w = x.shape
    if op == "depth_to_space":
        cs = c // (bh * bw)
        if order == "DCR":
            y = x.reshape(n, bh, bw, cs, h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            y = x.reshape(n, cs, bh, bw, h, w).transpose(0, 1, 4, 2, 5, 3)
        y = y.reshape(n, cs, h * bh, w * bw)
    else:
        y = x.reshape(n, c, h // bh, bh, w // bw, bw)
        y = y.transpose(0, 3, 5, 1, 2, 4) if order == "DCR" else y.transpose(0, 1, 3, 5, 2, 4)
        y = y.reshape(n, c * bh * bw, h // bh, w // bw)
    return from_nchw(y, out_layout)


def npy_shape(dims, layout):
    n, c, h, w = dims
    return {"NHWC": (n, h, w, c), "NCHW": (n, c, h, w), "NCHW_VECT_C": (n, c // 4, h, w, 4)}[layout]
