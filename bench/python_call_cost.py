"""The cost of a call through the Python module (`make bench-peers`, after bench/peers.py): the
same D2S (NCHW, CRD, block 2, 4 channels: PyTorch's pixel_shuffle) from 256 bytes to 64 MiB, through
the module on numpy arrays (with `out=` and allocating) and on PyTorch tensors (`pixel_shuffle`),
beside a same-size copy in the same framework (numpy.copyto, Tensor.copy_) and PyTorch's own
pixel_shuffle, in alternating batches, medians of 7 rounds. A new output is fresh memory from the
OS beyond glibc's mmap threshold (32 MiB at most), so at 64 MiB the allocating calls also pay its
page faults and zeroing, which `out=` and the copies do not. Writes "call_cost" into
bench/peers.json, which bench/results_table.py renders."""
import argparse
import json
import os
import time

import numpy as np

import spacedepth as sd

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [256, 16 << 10, 64 << 10, 1 << 20, 64 << 20]


def batch(fn, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def medians(fns, min_time=0.02, rounds=7):
    for f in fns.values():
        f()
    reps = {k: max(1, int(min_time / max(batch(f, 3), 1e-8))) for k, f in fns.items()}
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            times[k].append(batch(f, reps[k]))
    return {k: float(np.median(v)) * 1e9 for k, v in times.items()}  # ns per call


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(HERE, "peers.json"))
    args = ap.parse_args()
    sd.set_num_threads(1)
    rows = []
    for size in SIZES:
        side = int(round((size // 16) ** 0.5))  # f32, 4 channels (one out), side x side pixels
        x = np.random.default_rng(0).standard_normal((1, 4, side, side)).astype(np.float32)
        out = np.empty(sd.output_shape("depth_to_space", x.shape, 2, layout="NCHW"), np.float32)
        flat_src, flat_dst = x.reshape(-1), np.empty(x.size, np.float32)
        fns = {
            "module, numpy, out=": lambda: sd.depth_to_space(x, 2, order="CRD", layout="NCHW", out=out),
            "module, numpy": lambda: sd.depth_to_space(x, 2, order="CRD", layout="NCHW"),
            "numpy.copyto": lambda: np.copyto(flat_dst, flat_src),
        }
        try:
            import torch
            torch.set_num_threads(1)
            t, t_dst = torch.from_numpy(x.copy()), torch.empty(x.shape)
            fns.update({
                "module, torch (pixel_shuffle)": lambda: sd.pixel_shuffle(t, 2),
                "torch pixel_shuffle": lambda: torch.nn.functional.pixel_shuffle(t, 2),
                "torch Tensor.copy_": lambda: t_dst.copy_(t),
            })
        except ImportError:
            pass
        rows.append({"bytes": int(x.nbytes), "ns": medians(fns)})
        print(json.dumps(rows[-1]), flush=True)
    data = json.load(open(args.out)) if os.path.exists(args.out) else {"results": []}
    data["call_cost"] = {"date": time.strftime("%Y-%m-%d"), "spacedepth": sd.__version__, "rows": rows}
    json.dump(data, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
