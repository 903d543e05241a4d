"""`make bench-peers`: the Python peers on the same cases as the C++ harness, and spacedepth's Python
module on the very same arrays in the same process, each normalised by a same-process memcpy
(numpy.copyto) so the ratios compare across processes.

Peers (from PyPI, in .venv-peers so the main build stays lean): numpy (reshape + transpose +
ascontiguousarray, tests/numpy_reference.py), PyTorch pixel_shuffle / pixel_unshuffle (CRD; NCHW
contiguous and channels_last), ONNX Runtime DepthToSpace / SpaceToDepth (NCHW), OpenVINO
DepthToSpace / SpaceToDepth (NCHW), TensorFlow tf.nn.depth_to_space / space_to_depth (NHWC, DCR;
TF has no NCHW CPU kernel). Each peer runs in a process of its own per thread count (thread pools
are process-wide and set once), with spacedepth pinned to the same thread count; the peer, the
module (called as that peer's users would: pixel_shuffle on the same torch tensor, the tf_ forms
on the same array, depth_to_space on the same numpy array otherwise) and the memcpy are timed
in alternating batches, and each figure is the median over the rounds. Every output is checked
against the numpy reference before it is timed. A peer that cannot be imported is recorded as
unavailable, with the reason."""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from numpy_reference import npy_shape, reference  # noqa: E402

PEERS = ["numpy", "torch", "onnxruntime", "openvino", "tensorflow"]
NUMPY_DTYPES = {"float32": np.float32, "uint8": np.uint8, "int8": np.int8, "float16": np.float16,
                "float64": np.float64, "complex128": np.complex128}


def block_sizes(case):
    """The block's sizes at the case's spatial rank, outermost first."""
    return ((case.get("bd", 1), case["bh"], case["bw"]), (case["bh"], case["bw"]), (case["bw"],))[3 - case.get("rank", 2)]


def case_dims(case, size):
    """Logical (N, C, spatial...) of the input and output, as bench/cases.cpp builds them."""
    elem = np.dtype(NUMPY_DTYPES[case["dtype"]]).itemsize
    c, block = case["channels"], block_sizes(case)
    side = int(max(1, size // (elem * c)) ** (1.0 / len(block)) + 1e-9)
    spatial = tuple(max(b, side // b * b) for b in block)
    space = (1, c) + spatial
    deep = (1, c * int(np.prod(block))) + tuple(s // b for s, b in zip(spatial, block))
    return (space, deep) if case["op"] == "space_to_depth" else (deep, space)


def applies(peer, case):
    same = case["layout"] == case["out_layout"]
    square = len(set(block_sizes(case))) == 1
    if peer == "numpy":  # the reference's reshape and transpose: every case
        return True
    if not same or not square or case["layout"] not in ("NHWC", "NCHW"):
        return False
    if case.get("rank", 2) != 2:  # only OpenVINO has the ops at spatial rank 1 and 3
        return peer == "openvino" and case["layout"] == "NCHW"
    if peer == "torch":
        return case["order"] == "CRD"
    if peer == "onnxruntime":
        return case["layout"] == "NCHW" and (case["op"] == "depth_to_space" or case["order"] == "DCR")
    if peer == "openvino":
        return case["layout"] == "NCHW"
    if peer == "tensorflow":
        return case["layout"] == "NHWC" and case["order"] == "DCR"
    return False


def make_runner(peer, case, x, threads):
    """A zero-argument callable returning the peer's output as a numpy array in the case's layout."""
    op, b, order = case["op"], case["bw"], case["order"]
    if peer == "numpy":
        return lambda: reference(x, op, block_sizes(case), order, case["layout"], case["out_layout"])
    if peer == "torch":
        import torch
        torch.set_num_threads(threads)
        t = torch.from_numpy(x)
        if case["layout"] == "NHWC":
            t = t.permute(0, 3, 1, 2)  # a channels_last view
        fn = torch.nn.functional.pixel_shuffle if op == "depth_to_space" else torch.nn.functional.pixel_unshuffle

        def run():
            y = fn(t, b)
            return (y.permute(0, 2, 3, 1) if case["layout"] == "NHWC" else y).numpy()
        return run
    if peer == "onnxruntime":
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
        elem = helper.np_dtype_to_tensor_dtype(x.dtype)
        attrs = {"blocksize": b}
        if op == "depth_to_space":
            attrs["mode"] = order
        node = helper.make_node("DepthToSpace" if op == "depth_to_space" else "SpaceToDepth", ["x"], ["y"], **attrs)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, x.shape)],
                                  [helper.make_tensor_value_info("y", elem, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return lambda: sess.run(None, {"x": x})[0]
    if peer == "openvino":
        import openvino as ov
        import openvino.opset13 as ops
        param = ops.parameter(list(x.shape), ov.Type(x.dtype), name="x")
        mode = "blocks_first" if order == "DCR" else "depth_first"
        node = ops.depth_to_space(param, mode, b) if op == "depth_to_space" else ops.space_to_depth(param, mode, b)
        compiled = ov.Core().compile_model(ov.Model([node], [param]), "CPU",
                                           {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1})
        request = compiled.create_infer_request()
        return lambda: request.infer({0: x})[0]
    if peer == "tensorflow":
        import tensorflow as tf
        tx = tf.constant(x)
        fn = tf.nn.depth_to_space if op == "depth_to_space" else tf.nn.space_to_depth
        return lambda: fn(tx, b, data_format="NHWC").numpy()
    raise ValueError(peer)


def make_spacedepth_runner(peer, case, x):
    """spacedepth's module on the same array, called as the peer's users would call it."""
    import spacedepth as sd
    op, b = case["op"], case["bw"]
    if peer == "torch":
        import torch
        t = torch.from_numpy(x)
        if case["layout"] == "NHWC":
            t = t.permute(0, 3, 1, 2)
        fn = sd.pixel_shuffle if op == "depth_to_space" else sd.pixel_unshuffle

        def run():
            y = fn(t, b)
            return (y.permute(0, 2, 3, 1) if case["layout"] == "NHWC" else y).numpy()
        return run
    if peer == "tensorflow":
        fn = sd.tf_depth_to_space if op == "depth_to_space" else sd.tf_space_to_depth
        return lambda: fn(x, b)
    fn = sd.depth_to_space if op == "depth_to_space" else sd.space_to_depth
    block, kw = block_sizes(case), dict(order=case["order"], layout=case["layout"], out_layout=case["out_layout"])
    return lambda: fn(x, block, **kw)


def batch_time(fn, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def time_interleaved(fns, src, dst, min_time, rounds=5):
    """Median over rounds of each callable and a same-size numpy copy, timed in alternating batches
    (the copy last); returns the medians, the copy's last."""
    copy = lambda: np.copyto(dst, src)  # noqa: E731
    fns = list(fns) + [copy]
    for f in fns:
        f()
    reps = [max(1, int(min_time / max(batch_time(f, 1), 1e-7))) for f in fns]
    times = [[] for _ in fns]
    for _ in range(rounds):
        for f, r, t in zip(fns, reps, times):
            t.append(batch_time(f, r))
    return [float(np.median(t)) for t in times]


def worker(peer, threads, cases, sizes, min_time):
    if peer == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    try:
        import spacedepth as sd
        sd.set_num_threads(threads)  # pinned equal to the peer's
    except ImportError:
        sd = None
    rng = np.random.default_rng(1)
    for case in cases:
        if not applies(peer, case):
            continue
        for size in sizes:
            in_dims, _ = case_dims(case, size)
            x = rng.integers(0, 255, size=npy_shape(in_dims, case["layout"])).astype(NUMPY_DTYPES[case["dtype"]])
            row = {"peer": peer, "case": case["name"], "bytes": int(x.nbytes), "size": size, "threads": threads}
            try:
                run = make_runner(peer, case, x, threads)
                want = reference(x, case["op"], block_sizes(case), case["order"], case["layout"], case["out_layout"])
                runners = [run]
                if sd is not None:
                    runners.append(make_spacedepth_runner(peer, case, x))
                for r in runners:
                    got = r()
                    if got.shape != want.shape or not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
                        raise RuntimeError(("spacedepth's" if r is not run else "the") + " output differs from the "
                                           "reference")
                src = np.ones(x.nbytes, np.uint8)
                dst = np.empty_like(src)
                times = time_interleaved(runners, src, dst, min_time)
                t, tm = times[0], times[-1]
                row.update(gbps=2 * x.nbytes / t / 1e9, memcpy_gbps=2 * x.nbytes / tm / 1e9, ratio=tm / t)
                if sd is not None:  # the module on the same array, in the same process
                    row.update(sd_gbps=2 * x.nbytes / times[1] / 1e9, sd_ratio=tm / times[1], speedup=t / times[1])
            except Exception as e:  # a peer without this dtype or op: record why
                row["error"] = f"{type(e).__name__}: {e}"[:200]
            print(json.dumps(row), flush=True)


def peer_version(peer):
    try:
        mod = __import__(peer)
        if peer == "numpy":
            return {"available": True, "version": mod.__version__}
        return {"available": True, "version": getattr(mod, "__version__", "?")}
    except Exception as e:
        return {"available": False, "reason": f"{type(e).__name__}: {e}"[:200]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="build/bin/spacedepth_bench", help="the C++ harness (for the case list)")
    ap.add_argument("--out", default=os.path.join(HERE, "peers.json"))
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per timed batch")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--filter", default="", help="only cases whose name matches this regular expression")
    ap.add_argument("--sizes", default="", help="comma-separated tensor sizes in bytes (default: the harness's)")
    ap.add_argument("--rank-cases", action="store_true",
                    help="also the rank-1, rank-3 and blocked-layout cases (only OpenVINO has any of them)")
    ap.add_argument("--merge", action="store_true",
                    help="keep --out's other rows and peers; replace only the rows measured now")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--cases", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        spec = json.load(open(args.cases))
        worker(args.worker, args.threads, spec["cases"], spec["sizes"], args.min_time)
        return
    spec = json.loads(subprocess.run([args.bench, "--cases_json"], check=True, capture_output=True, text=True).stdout)
    spec["cases"] = [c for c in spec["cases"] + (spec.get("rank_cases", []) if args.rank_cases else [])
                     if re.search(args.filter, c["name"])]
    if args.sizes:
        spec["sizes"] = [int(v) for v in args.sizes.split(",")]
    cases_file = args.out + ".cases.json"
    json.dump(spec, open(cases_file, "w"))
    out = {"date": datetime.date.today().isoformat(), "machine": platform.processor() or platform.machine(),
           "python": platform.python_version(), "peers": {}, "spacedepth": peer_version("spacedepth"),
           "results": []}
    out["spacedepth"]["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                                 text=True, cwd=HERE).stdout.strip()
    if not out["spacedepth"]["available"]:
        print(f"spacedepth module: unavailable ({out['spacedepth']['reason']}); peers only", file=sys.stderr)
    for peer in args.peers.split(","):
        out["peers"][peer] = peer_version(peer)
        if not out["peers"][peer]["available"]:
            print(f"{peer}: unavailable ({out['peers'][peer]['reason']})", file=sys.stderr)
            continue
        for threads in (1, 2):
            print(f"{peer}, {threads} thread(s) ...", file=sys.stderr, flush=True)
            env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="PASSIVE")
            p = subprocess.run([sys.executable, __file__, "--worker", peer, "--threads", str(threads), "--cases", cases_file,
                                "--min-time", str(args.min_time)], capture_output=True, text=True, env=env)
            rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
            if p.returncode != 0 and not rows:
                out["peers"][peer] = {"available": False, "reason": p.stderr.strip().splitlines()[-1][:200] if p.stderr else "crashed"}
            out["results"].extend(rows)
    os.remove(cases_file)
    if args.merge and os.path.exists(args.out):
        old = json.load(open(args.out))
        key = lambda r: (r["peer"], r["case"], r["size"], r["threads"])  # noqa: E731
        measured = {key(r) for r in out["results"]}
        out["results"] = [r for r in old["results"] if key(r) not in measured] + out["results"]
        # The earlier run's date and peers describe its rows; this run's go under "merged".
        out = {**old, "results": out["results"],
               "merged": old.get("merged", []) + [{"date": out["date"], "peers": out["peers"], "rows": len(measured),
                                                   "filter": args.filter}]}
    json.dump(out, open(args.out, "w"), indent=1)
    print(f"wrote {args.out}: {sum('ratio' in r for r in out['results'])} timed rows", file=sys.stderr)


if __name__ == "__main__":
    main()
