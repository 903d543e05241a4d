"""`make bench-frameworks`: the framework libraries (README "Frameworks") beside each framework's own
op, per call and in bandwidth, on the C++ harness's case matrix (bench/peers.py's shapes and
timing: alternating batches with a same-size numpy copy, medians of the rounds), 1 thread, each
framework in a process of its own. Writes bench/frameworks.json; bench/results_table.py renders it.

  torch       torch.ops.spacedepth.* (the C++ operators) against torch's pixel_shuffle /
              pixel_unshuffle: the CRD rank-2 cases with a square block (NCHW contiguous, NHWC as
              a channels_last tensor), 2 MiB and 64 MiB
  jax         spacedepth.jax under jit against jit(reshape + transpose), the numpy reference's
              steps in jax.numpy: every rank-2 case, 2 MiB and 64 MiB
  tensorflow  spacedepth.tensorflow against tf.nn.depth_to_space / space_to_depth: the NHWC DCR
              cases with a square block, 128 KiB, 2 MiB and 64 MiB
Timed: the call that returns the framework's new tensor (a new output, as the framework's users
get it; at 64 MiB its fresh pages from the OS are most of the time on this VM). Per call: a
64-element float32 tensor (4 channels, 4x4, block 2) against the framework's own op
and its cheapest op (clone, jit(x + 0), tf.identity)."""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import numpy_reference  # noqa: E402
from numpy_reference import npy_shape, reference  # noqa: E402
from peers import NUMPY_DTYPES, applies, batch_time, block_sizes, case_dims, time_interleaved  # noqa: E402

FRAMEWORKS = {"torch": [2 << 20, 64 << 20], "jax": [2 << 20, 64 << 20],
              "tensorflow": [128 << 10, 2 << 20, 64 << 20]}


def covers(framework, case):
    if framework == "jax":
        return case.get("rank", 2) == 2
    return applies("torch" if framework == "torch" else "tensorflow", case)


def jax_reference():
    """numpy_reference.reference with jax.numpy for numpy: XLA's reshape + transpose form."""
    import jax.numpy as jnp
    shim = types.SimpleNamespace(moveaxis=jnp.moveaxis, ascontiguousarray=jnp.asarray, prod=np.prod)
    scope = dict(vars(numpy_reference), np=shim)
    for name in ("reference", "to_channels_first", "from_channels_first"):
        scope[name] = types.FunctionType(getattr(numpy_reference, name).__code__, scope)
    return scope["reference"]


def runners(framework, case, x):
    """(the library's call, the framework's own): each returns the framework's tensor (JAX's ready),
    in the case's layout, and np.asarray reads it for the check, outside the timing."""
    op, block, order, layout, out_layout = (case["op"], block_sizes(case), case["order"], case["layout"],
                                            case["out_layout"])
    if framework == "torch":
        import torch
        t = torch.from_numpy(x)
        own = torch.nn.functional.pixel_shuffle if op == "depth_to_space" else torch.nn.functional.pixel_unshuffle
        lib = getattr(torch.ops.spacedepth, op)
        if layout == "NHWC":
            view = t.permute(0, 3, 1, 2)  # channels_last
            return lambda: lib(t, list(block), order, layout, ""), lambda: own(view, block[0]).permute(0, 2, 3, 1)
        return lambda: lib(t, list(block), order, layout, ""), lambda: own(t, block[0])
    if framework == "jax":
        import jax
        import spacedepth.jax as sdj
        fn = sdj.depth_to_space if op == "depth_to_space" else sdj.space_to_depth
        ours = jax.jit(lambda a: fn(a, block, order=order, layout=layout, out_layout=out_layout))
        ref = jax_reference()
        theirs = jax.jit(lambda a: ref(a, op, block, order, layout, out_layout))
        a = jax.device_put(x)
        return lambda: ours(a).block_until_ready(), lambda: theirs(a).block_until_ready()
    import tensorflow as tf
    import spacedepth.tensorflow as sdtf
    tx = tf.constant(x)
    lib = sdtf.depth_to_space if op == "depth_to_space" else sdtf.space_to_depth
    own = tf.nn.depth_to_space if op == "depth_to_space" else tf.nn.space_to_depth
    return lambda: lib(tx, block[0]), lambda: own(tx, block[0], data_format="NHWC")


def call_cost(framework, rounds=7):
    """Microseconds per call on 64 float32 elements: the library, the framework's op, its cheapest op."""
    def best(f, reps=2000):
        f()
        return min(batch_time(f, reps) for _ in range(rounds)) * 1e6
    if framework == "torch":
        import torch
        x = torch.arange(64.0).reshape(1, 4, 4, 4)
        lib = torch.ops.spacedepth.depth_to_space
        return {"library": best(lambda: lib(x, [2], "CRD", "NCHW", "")),
                "own op": best(lambda: torch.nn.functional.pixel_shuffle(x, 2)), "clone": best(lambda: x.clone())}
    if framework == "jax":
        import jax
        import jax.numpy as jnp
        import spacedepth.jax as sdj
        x = jnp.arange(64.0, dtype=jnp.float32).reshape(1, 4, 4, 4)
        ours = jax.jit(lambda a: sdj.depth_to_space(a, 2, order="CRD", layout="NCHW"))
        theirs = jax.jit(lambda a: a.reshape(1, 1, 2, 2, 4, 4).transpose(0, 1, 4, 2, 5, 3).reshape(1, 1, 8, 8))
        plus = jax.jit(lambda a: a + 0)
        return {"library": best(lambda: ours(x).block_until_ready()),
                "own op": best(lambda: theirs(x).block_until_ready()), "jit(x + 0)": best(lambda: plus(x).block_until_ready())}
    import tensorflow as tf
    import spacedepth.tensorflow as sdtf
    x = tf.reshape(tf.range(64.0), (1, 4, 4, 4))
    return {"library": best(lambda: sdtf.depth_to_space(x, 2), 500),
            "own op": best(lambda: tf.nn.depth_to_space(x, 2), 500), "tf.identity": best(lambda: tf.identity(x), 500)}


def worker(framework, cases, min_time):
    if framework == "torch":
        import torch
        torch.set_num_threads(1)
        import spacedepth.torch as sdt
        assert sdt.NATIVE, "libspacedepth_torch.so is not built: make test-frameworks"
    elif framework == "jax":
        # XLA's own ops on one thread too (its Eigen pool otherwise takes every core).
        os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        import jax
        jax.config.update("jax_enable_x64", True)  # float64 and complex128 cases
    else:
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    import spacedepth as sd
    sd.set_num_threads(1)
    print(json.dumps({"call_cost_us": call_cost(framework)}), flush=True)
    rng = np.random.default_rng(1)
    for case in cases:
        if not covers(framework, case):
            continue
        for size in FRAMEWORKS[framework]:
            in_dims, _ = case_dims(case, size)
            x = rng.integers(0, 255, size=npy_shape(in_dims, case["layout"])).astype(NUMPY_DTYPES[case["dtype"]])
            row = {"case": case["name"], "bytes": int(x.nbytes), "size": size}
            try:
                fns = runners(framework, case, x)
                want = reference(x, case["op"], block_sizes(case), case["order"], case["layout"], case["out_layout"])
                for f in fns:
                    got = np.asarray(f())
                    if got.shape != want.shape or not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
                        raise RuntimeError("an output differs from the reference")
                src = np.ones(x.nbytes, np.uint8)
                ours, theirs, copy = time_interleaved(fns, src, np.empty_like(src), min_time)
                row.update(gbps=2 * x.nbytes / ours / 1e9, own_gbps=2 * x.nbytes / theirs / 1e9,
                           memcpy_gbps=2 * x.nbytes / copy / 1e9, speedup=theirs / ours)
            except Exception as e:  # noqa: BLE001 - a dtype the framework lacks: recorded
                row["error"] = f"{type(e).__name__}: {e}"[:200]
            print(json.dumps(row), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="build/bin/spacedepth_bench", help="the C++ harness (for the case list)")
    ap.add_argument("--out", default=os.path.join(HERE, "frameworks.json"))
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per timed batch")
    ap.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--cases", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, json.load(open(args.cases))["cases"], args.min_time)
        return
    spec = json.loads(subprocess.run([args.bench, "--cases_json"], check=True, capture_output=True, text=True).stdout)
    cases_file = args.out + ".cases.json"
    json.dump(spec, open(cases_file, "w"))
    out = {"date": datetime.date.today().isoformat(), "machine": platform.processor() or platform.machine(),
           "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    cwd=HERE).stdout.strip(), "frameworks": {}}
    for framework in args.frameworks.split(","):
        print(f"{framework} ...", file=sys.stderr, flush=True)
        env = dict(os.environ, OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3")
        p = subprocess.run([sys.executable, __file__, "--worker", framework, "--cases", cases_file, "--min-time",
                            str(args.min_time)], capture_output=True, text=True, env=env)
        lines = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        version = subprocess.run([sys.executable, "-c", f"import {framework}; print({framework}.__version__)"],
                                 capture_output=True, text=True, env=env).stdout.strip()
        entry = {"version": version, "rows": [r for r in lines if "case" in r]}
        entry.update(next((r for r in lines if "call_cost_us" in r), {}))
        if p.returncode != 0:
            entry["failed"] = (p.stderr.strip().splitlines() or ["crashed"])[-1][:300]
        out["frameworks"][framework] = entry
    os.remove(cases_file)
    json.dump(out, open(args.out, "w"), indent=1)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
