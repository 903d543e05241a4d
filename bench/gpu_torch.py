#!/usr/bin/env python3
"""The Python module on CUDA tensors, and the peers on the same device (bench/gpu_check.sh).

1. Correctness: torch CUDA tensors through spacedepth on torch's current stream (a side stream
   whose producer kernel is still running when spacedepth is called), against torch's own
   pixel_shuffle / pixel_unshuffle (CRD) and reshape-permute (DCR), NCHW and channels_last,
   float32 / float16 / uint8, exact equality.
2. Peers: torch pixel_shuffle / pixel_unshuffle, torch reshape-permute-contiguous, CuPy and JAX
   reshape-transpose, and spacedepth on the same tensors, each beside torch's device-to-device
   copy of the same bytes (out.copy_(x)); CUDA events around back-to-back calls, the median of
   several samples; 64 MiB and 1 GiB tensors.

Writes JSON lines to --json and prints a table. --dry-run: checks the imports it can and stops.
"""
import argparse
import json
import statistics
import sys
import time


def log(rows, out, **row):
    rows.append(row)
    line = json.dumps(row)
    print(line, flush=True)
    if out:
        out.write(line + "\n")
        out.flush()


def dcr_d2s_nchw(torch, x, b):
    n, c, h, w = x.shape
    return x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2).reshape(n, c // (b * b), h * b, w * b)


def dcr_s2d_nchw(torch, x, b):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)


def reshape_transpose(op, order, shape, b):
    """The peers' formulation on NCHW: reshape to 6-D, transpose, reshape back (docs/SPEC.md)."""
    n, c, h, w = shape
    if op == "depth_to_space":
        cc = c // (b * b)
        split = (n, b, b, cc, h, w) if order == "DCR" else (n, cc, b, b, h, w)
        axes = (0, 3, 4, 1, 5, 2) if order == "DCR" else (0, 1, 4, 2, 5, 3)
        return split, axes, (n, cc, h * b, w * b)
    split = (n, c, h // b, b, w // b, b)
    axes = (0, 3, 5, 1, 2, 4) if order == "DCR" else (0, 1, 3, 5, 2, 4)
    return split, axes, (n, c * b * b, h // b, w // b)


def correctness(torch, sd, rows, out):
    failures = 0
    side = torch.cuda.Stream()
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    for dtype in (torch.float32, torch.float16, torch.uint8):
        for (n, c, h, w, b) in ((2, 12, 33, 17, 2), (1, 27, 40, 24, 3), (3, 48, 64, 64, 4), (1, 64, 256, 256, 2)):
            for op in ("depth_to_space", "space_to_depth"):
                for order in ("CRD", "DCR"):
                    for memory in ("NCHW", "channels_last"):
                        shape = (n, c * b * b, h, w) if op == "depth_to_space" else (n, c, h * b, w * b)
                        with torch.cuda.stream(side):
                            # A producer on the side stream, still queued when spacedepth is called.
                            r = torch.randint(0, 255, shape, device="cuda", generator=gen, dtype=torch.int32)
                            x = (r.to(dtype) * 1.0).to(dtype) if dtype.is_floating_point else r.to(dtype)
                            if memory == "channels_last":
                                x = x.contiguous(memory_format=torch.channels_last)
                            if op == "depth_to_space":
                                want = torch.nn.functional.pixel_shuffle(x, b) if order == "CRD" else dcr_d2s_nchw(torch, x, b)
                            else:
                                want = torch.nn.functional.pixel_unshuffle(x, b) if order == "CRD" else dcr_s2d_nchw(torch, x, b)
                            layout = "NHWC" if memory == "channels_last" else "NCHW"
                            xs = x.permute(0, 2, 3, 1) if layout == "NHWC" else x  # memory order for the layout
                            fn = sd.depth_to_space if op == "depth_to_space" else sd.space_to_depth
                            got = fn(xs, b, order=order, layout=layout)
                            got = got.permute(0, 3, 1, 2) if layout == "NHWC" else got
                        side.synchronize()
                        ok = bool(torch.equal(got, want))
                        failures += not ok
                        log(rows, out, kind="torch_correctness", op=op, order=order, memory=memory,
                            dtype=str(dtype).replace("torch.", ""), shape=list(shape), block=b, ok=ok,
                            on_side_stream=True)
    # Bad input from torch: one clear error, nothing launched.
    x = torch.zeros((1, 7, 4, 4), device="cuda")
    try:
        sd.depth_to_space(x, 2, order="CRD", layout="NCHW")
        log(rows, out, kind="torch_bad_input", ok=False, message="no error for 7 channels and block 2")
        failures += 1
    except ValueError as e:
        log(rows, out, kind="torch_bad_input", ok=True, message=str(e))
    return failures


def time_events(torch, fn, samples, calls):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(samples):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        ms.append(start.elapsed_time(stop) / calls)
    return statistics.median(ms)


def peers(torch, sd, rows, out, sizes_mib, samples):
    try:
        import cupy
    except Exception as e:  # noqa: BLE001 - any import failure means no CuPy here
        cupy = None
        log(rows, out, kind="peer_missing", peer="cupy", why=str(e))
    try:
        import jax
        import jax.numpy as jnp
        jax_gpu = [d for d in jax.devices() if d.platform == "gpu"]
        if not jax_gpu:
            raise RuntimeError("JAX sees no GPU")
    except Exception as e:  # noqa: BLE001
        jax = None
        log(rows, out, kind="peer_missing", peer="jax", why=str(e))
    for mib in sizes_mib:
        for dtype in (torch.float32, torch.float16, torch.uint8):
            elem = torch.empty((), dtype=dtype).element_size()
            b = 2
            c_small = 64
            pixels = (mib << 20) // (elem * c_small)
            h = int(pixels ** 0.5) // b * b
            w = pixels // h // b * b
            for op in ("depth_to_space", "space_to_depth"):
                for order in ("CRD", "DCR"):
                    shape = (1, c_small * b * b, h // b, w // b) if op == "depth_to_space" else (1, c_small, h, w)
                    x = torch.randint(0, 120, shape, device="cuda", dtype=torch.int32).to(dtype)
                    nbytes = x.numel() * elem
                    calls = max(2, min(64, (256 << 20) // nbytes))
                    fn = sd.depth_to_space if op == "depth_to_space" else sd.space_to_depth
                    y = fn(x, b, order=order, layout="NCHW")
                    copy_dst = torch.empty_like(x)
                    t_copy = time_events(torch, lambda: copy_dst.copy_(x), samples, calls)
                    impls = {
                        "spacedepth": lambda: fn(x, b, order=order, layout="NCHW", out=y),
                        "spacedepth_alloc": lambda: fn(x, b, order=order, layout="NCHW"),
                    }
                    if order == "CRD":
                        tf = torch.nn.functional.pixel_shuffle if op == "depth_to_space" else torch.nn.functional.pixel_unshuffle
                        impls["torch_pixel_shuffle" if op == "depth_to_space" else "torch_pixel_unshuffle"] = lambda: tf(x, b)
                        want = tf(x, b)
                    else:
                        perm = dcr_d2s_nchw if op == "depth_to_space" else dcr_s2d_nchw
                        impls["torch_reshape_permute"] = lambda: perm(torch, x, b).contiguous()
                        want = perm(torch, x, b)
                    ok = bool(torch.equal(y, want))
                    if cupy is not None:
                        cx = cupy.from_dlpack(x)
                        split, axes, final = reshape_transpose(op, order, shape, b)
                        impls["cupy_reshape_transpose"] = lambda: cupy.ascontiguousarray(
                            cx.reshape(split).transpose(axes)).reshape(final)
                        cy = impls["cupy_reshape_transpose"]()
                        ok = ok and bool(torch.equal(torch.from_dlpack(cy), want))
                    if jax is not None and nbytes <= (1 << 30):
                        jx = jax.dlpack.from_dlpack(x)
                        split, axes, final = reshape_transpose(op, order, shape, b)
                        jf = jax.jit(lambda a: jnp.transpose(a.reshape(split), axes).reshape(final))
                        jy = jf(jx).block_until_ready()
                        ok = ok and bool(torch.equal(torch.from_dlpack(jy), want))

                        def jax_call():
                            jf(jx)  # queued on JAX's own stream; timed with a host clock below
                        impls["jax_reshape_transpose"] = jax_call
                    for name, f in impls.items():
                        if name.startswith("jax"):
                            f()
                            jf(jx).block_until_ready()
                            ts = []
                            for _ in range(samples):
                                t0 = time.perf_counter()
                                for _ in range(calls - 1):
                                    f()
                                jf(jx).block_until_ready()
                                ts.append((time.perf_counter() - t0) * 1e3 / calls)
                            t = statistics.median(ts)
                        else:
                            t = time_events(torch, f, samples, calls)
                        log(rows, out, kind="peer", impl=name, op=op, order=order, layout="NCHW",
                            dtype=str(dtype).replace("torch.", ""), shape=list(shape), bytes=nbytes, ms=t,
                            gbps=2 * nbytes / (t * 1e6), copy_ms=t_copy, ratio_to_copy=t_copy / t, outputs_agree=ok)
                    del x, y, copy_dst, want
                    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="append JSON lines here")
    ap.add_argument("--sizes", default="64,1024", help="peer tensor sizes in MiB")
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    import spacedepth as sd
    try:
        import torch
    except ImportError:
        torch = None
    if a.dry_run:
        print(f"gpu_torch: dry run: spacedepth {sd.__version__ if hasattr(sd, '__version__') else ''} from "
              f"{sd.__file__}; torch {'present' if torch else 'absent'}")
        return 0
    if torch is None or not torch.cuda.is_available():
        print("gpu_torch: no torch with CUDA here")
        return 2
    out = open(a.json, "a") if a.json else None
    rows = []
    failures = correctness(torch, sd, rows, out)
    peers(torch, sd, rows, out, [int(s) for s in a.sizes.split(",")], a.samples)
    print(f"\n{'impl':28} {'op':15} {'order':5} {'dtype':8} {'MiB':>6} {'GB/s':>8} {'x copy':>7}")
    for r in rows:
        if r["kind"] == "peer":
            print(f"{r['impl']:28} {r['op']:15} {r['order']:5} {r['dtype']:8} {r['bytes'] >> 20:6d} "
                  f"{r['gbps']:8.0f} {r['ratio_to_copy']:7.3f}")
    bad = [r for r in rows if r["kind"] == "peer" and not r["outputs_agree"]]
    print(f"gpu_torch: {failures} correctness failures, {len(bad)} peer rows whose outputs differ")
    return 1 if failures or bad else 0


if __name__ == "__main__":
    sys.exit(main())
