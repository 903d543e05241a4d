#!/usr/bin/env python3
"""`make bench-instructions`: the instructions one call spends per 64 output bytes, for every case
of the matrix at 128 KiB and 2 MiB on 1 thread, beside a copy loop's.

Each call is the CLI's `spacedepth run` on a .npy file under callgrind, counting only inside
`run_planned` (the plan's memory checks and its kernel: no file I/O, no planning). Valgrind
offers the program an AVX2 CPU (no AVX-512), so these are the AVX2 path's plans, the ones
RESULTS.md's AVX2 section times; this VM has no hardware counters to count the AVX-512 path
(`perf stat -e instructions` is "not supported"). A copy loop on AVX2 spends 4 per 64 bytes (two
32-byte loads and two stores) and its loop control. Writes bench/instructions.json, which
bench/results_table.py puts beside each miss of the AVX2 path.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = (128 << 10, 2 << 20)
DTYPES = {"uint8": np.uint8, "int8": np.int8, "float16": np.float16, "float32": np.float32, "float64": np.float64,
          "complex128": np.complex128}
COPY_LOOP = 4  # an AVX2 copy loop per 64 bytes: two loads and two stores


def array_shape(dims, layout):
    """A tensor's logical dims (N, C, H, W) as the array of its layout's memory order (tools/array_layout.h)."""
    n, c, h, w = dims
    if layout == "NHWC":
        return (n, h, w, c)
    if layout == "NCHW_VECT_C":
        return (n, c // 4, h, w, 4)
    return (n, c, h, w)


def count(cli, case, size, workdir):
    dims = case["input_dims"][str(size)]  # the harness's own (bench/cases.cpp Case::dims)
    dtype = DTYPES[case["dtype"]]
    rng = np.random.default_rng(size)
    data = rng.integers(0, 255, size=int(np.prod(array_shape(dims, case["layout"]))) * np.dtype(dtype).itemsize,
                        dtype=np.uint8).view(dtype).reshape(array_shape(dims, case["layout"]))
    stem = os.path.join(workdir, f"{case['name']}_{size}")
    np.save(stem + ".in.npy", data)
    block = str(case["bh"]) if case["bh"] == case["bw"] else f"{case['bh']}x{case['bw']}"
    run = [cli, "run", "--op", case["op"], "--order", case["order"], "--block", block, "--layout", case["layout"],
           "--out-layout", case["out_layout"], "--threads", "1", "--in", stem + ".in.npy", "--out", stem + ".out.npy"]
    subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=spacedepth::detail::run_planned*",
                    f"--callgrind-out-file={stem}.cg"] + run, check=True, capture_output=True)
    total = int(re.search(r"^summary: (\d+)", open(stem + ".cg").read(), re.M).group(1))
    info = subprocess.run([cli, "info", "--op", case["op"], "--order", case["order"], "--block", block, "--layout",
                           case["layout"], "--out-layout", case["out_layout"], "--dtype", case["dtype"], "--threads",
                           "1", "--shape", ",".join(map(str, dims))], capture_output=True, text=True, check=True,
                          env={**os.environ, "SPACEDEPTH_MAX_ISA": "avx2"}).stdout
    plan = re.search(r"^call: (.*)$", info, re.M)
    out_bytes = data.nbytes
    for f in (".in.npy", ".out.npy", ".cg"):
        os.remove(stem + f)
    return {"case": case["name"], "bytes": size, "exact_bytes": out_bytes, "instructions": total,
            "per_64_bytes": total / (out_bytes / 64), "plan": plan.group(1) if plan else ""}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="this build's spacedepth_bench (the CLI beside it is run)")
    ap.add_argument("--json", default=os.path.join(HERE, "instructions.json"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    bench = os.path.abspath(args.bench)
    cli = os.path.join(os.path.dirname(bench), "spacedepth")
    cases = json.loads(subprocess.run([bench, "--cases_json"], capture_output=True, text=True, check=True).stdout)
    with tempfile.TemporaryDirectory() as workdir, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = [pool.submit(count, cli, c, s, workdir) for c in cases["cases"] for s in SIZES]
        rows = [j.result() for j in jobs]
    json.dump({"date": datetime.date.today().isoformat(), "copy_loop_per_64_bytes": COPY_LOOP,
               "counted_by": "callgrind, inside run_planned, one call on 1 thread (the AVX2 path)", "rows": rows},
              open(args.json, "w"), indent=1)
    print(f"wrote {args.json}: {len(rows)} calls")


if __name__ == "__main__":
    main()
