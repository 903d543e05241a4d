"""Writes bench/RESULTS.md (and bench/ratio_to_memcpy.png) from the harness's JSON and, when
present, bench/peers.json. Every figure is a ratio to a same-size memcpy from the same run:
for the C++ rows, glibc memcpy in the same process (1 thread; for 2-thread rows the better of the
1- and 2-thread memcpy); for the Python peers, numpy.copyto in the peer's own process."""
import argparse
import datetime
import glob
import json
import os
import re
import statistics
import subprocess
from collections import defaultdict

SIZE_LABEL = {128 << 10: "L2 (128 KiB)", 512 << 10: "L2 (512 KiB)", 2 << 20: "L3 (2 MiB)", 64 << 20: "DRAM (64 MiB)"}
CPP_PEERS = ["eigen", "xnnpack", "naive"]
ROW_KINDS = {"halide": "Halide row", "shuffle": "shuffle"}  # not peers: the library's own rows
PY_PEERS = ["numpy", "torch", "onnxruntime", "openvino", "tensorflow"]
TARGETS = {(64 << 20, 1): 1.0, (64 << 20, 2): 0.95, (2 << 20, 1): 0.8, (128 << 10, 1): 0.6}
MODEL_PEERS = ["eigen", "xnnpack"]

REPEATS = 5  # repetitions of each DRAM miss, to separate a real shortfall from the VM's drift


def parse_plan(plan):
    """'general u32 kernel, dims (...) 2:7744:1 11:1:2 ..., serial' -> (family, unit bytes, dims)."""
    m = re.match(r"(\w+) u(\d+) kernel, dims \([^)]*\) ([\d: ]+),", plan)
    if not m:
        return None
    dims = [tuple(int(v) for v in d.split(":")) for d in m.group(3).split()]
    return m.group(1), int(m.group(2)) // 8, dims


def explain_miss(plan, size, spread):
    """One line of why a (case, size) misses, from its plan (kernel family and loop nest) and,
    beyond cache, from repeated runs of the same row."""
    m = re.match(r"shuffle microkernel \(([^)]*)\), windows of (\d+) bytes.*about ([\d.]+) instructions", plan or "")
    if m:
        return (f"shuffle microkernel ({m.group(1)}), {m.group(2)}-byte windows: about {m.group(3)} instructions "
                f"per 64 output bytes (a copy loop: a load and a store)")
    parsed = parse_plan(plan or "")
    if parsed is None:
        return "no plan recorded"
    family, unit, dims = parsed
    (e0, si0, so0), (e1, si1, so1) = dims[0], dims[1]
    # The dense output row the kernel vectorises: a small unrolled dim 0 inside dim 1 (the
    # ladder's interleaves and per-pixel transposes) or dim 0 itself.
    blocked = so0 == 1 and e0 <= 8 and so1 == e0
    row = (e0 * e1 if blocked else e0) * unit
    short_runs = blocked and si0 == 1 and si1 != e0  # runs of e0 units taken every si1 units
    strided = si0 != 1 or so0 != 1 or short_runs
    plan_text = f"{family} kernel, {unit}-byte units, {row}-byte output rows"
    if spread is not None and spread[1] >= spread[2]:
        return (f"{plan_text}; {REPEATS} reruns of the row: {spread[0]:.2f}-{spread[1]:.2f}, "
                f"so the target is inside this VM's run-to-run spread")
    if family == "transpose":
        reason = "fused NCHW<->NHWC tile transpose: shuffle-bound (LLVM emits ~150 shuffles per 128 elements)"
    elif family == "regroup":
        reason = ("NCHW_VECT_C CRD regroup (runtime/vect_c_regroup.h): per 64 output bytes a load, two VPERMT2B "
                  "and a store (a copy loop: a load and a store), from 2 input rows into 4 planes or back")
    elif family == "tile":
        reason = ("fused NCHW<->NHWC tile transpose (runtime/tile_transpose.h): per 64 output bytes a load, 4 "
                  "shuffles and a store with AVX-512 (a copy loop: a load and a store), its 16 rows a tile "
                  "read from 16 lines one plane stride apart")
    elif size < (32 << 20) and row < 256:
        reason = "short rows in cache: the per-row loop, tail and ladder cost is not amortised"
    elif short_runs:
        reason = f"runs of {e0} {unit}-byte units taken every {si1} units: dense loads plus shuffles per vector"
    elif unit <= 2 and strided:
        reason = f"{8 * unit}-bit elements moved by shuffles (input stride {si0 if not blocked else si1}): shuffle-bound"
    elif strided:
        reason = "interleave / deinterleave / per-pixel transpose: shuffle work per vector"
    else:
        reason = "run copy, below memcpy's streaming rate at this size"
    if spread is not None:
        reason += f"; {REPEATS} reruns: {spread[0]:.2f}-{spread[1]:.2f}"
    return f"{plan_text}: {reason}"


def instruction_section(path, misses):
    """What limits each in-cache miss of the AVX2 path: the instructions its call spends per 64
    output bytes (bench/instructions.json, callgrind), beside an AVX2 copy loop's."""
    if not os.path.exists(path):
        return []
    data = json.load(open(path))
    counts = {(r["case"], r["bytes"]): r for r in data["rows"]}
    rows = [(c, size, r, counts[(c, size)]) for c, size, r in misses if (c, size) in counts]
    if not rows:
        return []
    copy = data["copy_loop_per_64_bytes"]
    out = [f"What limits each in-cache miss of the AVX2 path: the instructions one call spends per 64 output "
           f"bytes ({data['counted_by']}, bench/instructions.json of {data['date']}, `make bench-instructions`), "
           f"beside an AVX2 copy loop's {copy} (two 32-byte loads and two stores, and its loop control), which "
           "moves L2 data at memcpy's rate on this VM.", "",
           "| case | size | ratio | instructions per 64 output bytes | x the copy loop | plan |",
           "|---|---|---|---|---|---|"]
    for c, size, r, row in sorted(rows, key=lambda x: (x[1], -x[3]["per_64_bytes"])):
        plan = re.sub(r", dims \([^)]*\)", ", dims", row["plan"])
        out.append(f"| {c} | {SIZE_LABEL.get(size, size)} | {r:.2f} | {row['per_64_bytes']:.1f} | "
                   f"{row['per_64_bytes'] / copy:.1f} | {plan} |")
    out.append("")
    return out


def rerun_dram_misses(bench, misses, out_path):
    """Runs each beyond-cache miss REPEATS more times (same harness, same yardstick) and keeps the
    ratios, so the table can tell the VM's drift from a real shortfall."""
    results = []
    for threads in (1, 2):
        names = sorted({c for c, t in misses if t == threads})
        if not names:
            continue
        flt = f"^spacedepth/({'|'.join(names)})/bytes:{64 << 20}/threads:{threads}/real_time$"
        tmp = out_path + ".tmp"
        subprocess.run([bench, f"--benchmark_filter={flt}", f"--benchmark_repetitions={REPEATS}",
                        "--benchmark_min_time=0.1", f"--benchmark_out={tmp}", "--benchmark_out_format=json"],
                       check=True, stdout=subprocess.DEVNULL)
        for b in json.load(open(tmp))["benchmarks"]:
            if b.get("run_type") != "iteration" or "memcpy_gbps" not in b:
                continue
            results.append({"case": b["name"].split("/")[1], "threads": threads,
                            "ratio": b["bytes_per_second"] / 1e9 / row_yardstick(b, threads)})
        os.remove(tmp)
    json.dump({"date": datetime.date.today().isoformat(), "repetitions": REPEATS, "results": results},
              open(out_path, "w"), indent=1)


def row_yardstick(b, threads):
    """A row's own memcpy GB/s: 1-thread memcpy for 1-thread rows, else the better of 1 and 2."""
    return b["memcpy_gbps"] if threads == 1 else b["best_memcpy_gbps"]


def target_line(label, size, threads, target, rs):
    """'- label, N thread(s), target >= T: k of n cases meet it (median, worst).' and the misses."""
    misses = sorted([(r, c) for c, r in rs if r < target])
    ordered = sorted(r for _, r in rs)
    out = [f"- {label}, {threads} thread(s), target >= {target}: {len(rs) - len(misses)} of {len(rs)} cases "
           f"meet it (median {ordered[len(ordered) // 2]:.2f}, worst {ordered[0]:.2f})."]
    if misses:
        out.append("  Misses: " + ", ".join(f"{c} {r:.2f}" for r, c in misses) + ".")
    return out, misses


def load_cpp(path):
    data = json.load(open(path))
    memcpy = {}
    gbps = defaultdict(dict)  # (case, size) -> {(impl, threads): GB/s}
    yard = defaultdict(dict)  # (case, size) -> {(impl, threads): memcpy GB/s of the same row}
    syard = defaultdict(dict)  # (case, size) -> {(impl, threads): streaming-copy GB/s of the same row}
    # (case, size) -> the row's streaming copy with the case's rows (NHWC, 1 thread): row_stream_gbps
    ryard = {}
    threshold = defaultdict(dict)  # (case, size) -> {parallel: GB/s}
    model = defaultdict(dict)  # (case, size) -> {impl: ratio to its own memcpy}, the model/ rows
    ranks = {}  # (case, size, threads) -> ratio to its own memcpy, the rank/ rows
    model_stream = {}  # (case, size) -> the model row's ratio to its own streaming copy
    for b in data["benchmarks"]:
        if b.get("error_occurred") or "bytes_per_second" not in b:
            continue
        if re.match(r"(fixed_cost|plan|oneshot)/", b["name"]):
            continue  # the per-call and small-tensor rows: bench/plan_path.py's section
        m = re.match(r"threshold/([^/]+)/bytes:(\d+)/parallel:(\d)", b["name"])
        if m:
            threshold[(m.group(1), int(m.group(2)))][int(m.group(3))] = b["bytes_per_second"] / 1e9
            continue
        m = re.match(r"memcpy/bytes:(\d+)/threads:(\d+)", b["name"])
        if m:
            memcpy[(int(m.group(1)), int(m.group(2)))] = b["bytes_per_second"] / 1e9
            continue
        m = re.match(r"vector_copy/bytes:(\d+)", b["name"])
        if m:
            memcpy[(int(m.group(1)), "vector_copy")] = b["bytes_per_second"] / 1e9
            continue
        m = re.match(r"deinterleave_ceiling/bytes:(\d+)", b["name"])
        if m:
            if "memcpy_gbps" in b:  # against its own memcpy, like the case rows
                memcpy[(int(m.group(1)), "deinterleave")] = b["bytes_per_second"] / 1e9 / b["memcpy_gbps"]
            continue
        m = re.match(r"rank/spacedepth/([^/]+)/bytes:(\d+)/threads:(\d+)", b["name"])
        if m:
            if "memcpy_gbps" in b:
                threads = int(m.group(3))
                ranks[(m.group(1), int(m.group(2)), threads)] = (b["bytes_per_second"] / 1e9 /
                                                                 row_yardstick(b, threads))
            continue
        m = re.match(r"model/(\w+)/([^/]+)/bytes:(\d+)/threads:1", b["name"])
        if m:
            if "memcpy_gbps" in b:
                model[(m.group(2), int(m.group(3)))][m.group(1)] = b["bytes_per_second"] / 1e9 / b["memcpy_gbps"]
            if m.group(1) == "spacedepth" and "stream_gbps" in b:
                model_stream[(m.group(2), int(m.group(3)))] = b["bytes_per_second"] / 1e9 / b["stream_gbps"]
            continue
        m = re.match(r"(\w+)/([^/]+)/bytes:(\d+)/threads:(\d+)", b["name"])
        if m:
            key, impl = (m.group(2), int(m.group(3))), (m.group(1), int(m.group(4)))
            gbps[key][impl] = b["bytes_per_second"] / 1e9
            if "memcpy_gbps" in b:
                yard[key][impl] = row_yardstick(b, impl[1])
            if "stream_gbps" in b:
                syard[key][impl] = b["stream_gbps"] if impl[1] == 1 else b["best_stream_gbps"]
            if "row_stream_gbps" in b and impl == ("spacedepth", 1):
                ryard[key] = b["row_stream_gbps"]
    return data["context"], memcpy, gbps, yard, threshold, model, ranks, syard, model_stream, ryard


DRAM = 64 << 20
STREAM_TARGETS = {"median_1t": 1.25, "over_1_1": 60, "model_median": 1.2, "median_2t": 1.3, "of_limit": 0.85}


def streaming_targets(cases, ratio, stream_ratio, gbps, syard, model, model_stream, ryard):
    """The 64 MiB targets of the streaming stores: against memcpy and against the streaming-copy
    limit of each row (its own yardstick), and which rows stay under the limit because their
    in-cache rate (the same case at 128 KiB) is already below it. NHWC rows also show the
    streaming copy with the case's rows (bh runs read or written together), which the one-stream
    limit does not pay."""
    med = lambda v: sorted(v)[len(v) // 2]
    r1 = [r for r in (ratio(c, DRAM, "spacedepth", 1) for c in cases) if r is not None]
    r2 = [r for r in (ratio(c, DRAM, "spacedepth", 2) for c in cases) if r is not None]
    if not r1 or not any(stream_ratio(c, DRAM, "spacedepth", 1) for c in cases):
        return []
    t = STREAM_TARGETS
    out = ["### Beyond the cache: streaming stores", "",
           "Past `stream_min_bytes` (README \"Streaming stores\") the plans run the kernels' streaming-store twins. "
           "Each 64 MiB row also times a streaming-store copy of its bytes (AVX2 loads, non-temporal stores, "
           "SFENCE; 1 thread, and for 2-thread rows the better of 1 and 2), the limit beyond the cache.", "",
           f"- 1 thread: median {med(r1):.2f}x memcpy (target >= {t['median_1t']}), "
           f"{sum(r >= 1.1 for r in r1)} of {len(r1)} cases >= 1.1x (target >= {t['over_1_1']})."]
    mr = [row["spacedepth"] for (c, size), row in model.items() if size == DRAM and "spacedepth" in row]
    if mr:
        out.append(f"- Model shapes, 1 thread: median {med(mr):.2f}x memcpy (target >= {t['model_median']}), "
                   f"{sum(r >= 1.1 for r in mr)} of {len(mr)} >= 1.1x.")
    if r2:
        out.append(f"- 2 threads: median {med(r2):.2f}x the better of 1- and 2-thread memcpy (target >= {t['median_2t']}).")
    for threads in (1, 2):
        rows = [(c, stream_ratio(c, DRAM, "spacedepth", threads)) for c in cases]
        rows = [(c, r) for c, r in rows if r is not None]
        if not rows:
            continue
        under = [(c, r) for c, r in rows if r < t["of_limit"]]
        out.append(f"- Of the streaming limit, {threads} thread(s): {len(rows) - len(under)} of {len(rows)} cases "
                   f">= {t['of_limit']} (median {med([r for _, r in rows]):.2f}).")
        for c, r in sorted(under, key=lambda x: x[1]):
            in_cache = gbps[(c, 128 << 10)].get(("spacedepth", 1))
            limit = syard[(c, DRAM)].get(("spacedepth", threads))
            why = (f"its in-cache rate, {in_cache:.1f} GB/s at 128 KiB, is below the limit ({limit:.1f} GB/s)"
                   if in_cache is not None and limit and in_cache < limit else
                   f"in cache it runs {in_cache:.1f} GB/s, above the limit ({limit:.1f} GB/s): a miss"
                   if in_cache is not None and limit else "no 128 KiB row")
            rows_gbps = ryard.get((c, DRAM)) if threads == 1 else None
            if rows_gbps and limit:
                case_gbps = gbps[(c, DRAM)][("spacedepth", 1)]
                why += (f"; a streaming copy with its rows reaches {rows_gbps / limit:.2f} of the limit, "
                        f"the case {case_gbps / rows_gbps:.2f} of that")
            out.append(f"  - {c}: {r:.2f} of the limit; {why}.")
    if model_stream:
        ms = [r for (c, size), r in model_stream.items() if size == DRAM]
        if ms:
            out.append(f"- Model shapes, of the streaming limit: median {med(ms):.2f}, "
                       f"{sum(r >= t['of_limit'] for r in ms)} of {len(ms)} >= {t['of_limit']}.")
    return out + [""]


def size_text(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1 << 10 else f"{b} B"


def describe_cpu(ctx):
    """The harness's CPU: the model and ISA recorded in its context (`make bench` passes them with
    --benchmark_context), else this machine's; the caches from Google Benchmark's context."""
    model, isa = ctx.get("cpu_model"), ctx.get("kernel_target")
    if not model:
        try:
            info = open("/proc/cpuinfo").read()
            model = re.search(r"model name\s*:\s*(.*)", info).group(1).strip() + " (read when the table was made)"
            isa = isa or ("AVX-512" if " avx512f" in info else "AVX2" if " avx2" in info else "SSE")
        except (OSError, AttributeError):
            model = "unknown CPU"
    caches = [f"L{c['level']} {size_text(c['size'])}" + (f" shared by {c['num_sharing']}" if c.get("num_sharing", 1) > 1 else "")
              for c in ctx.get("caches", []) if c.get("type") in ("Unified", "Data") and c.get("level", 0) >= 2]
    return ", ".join(x for x in [model, f"kernels: {isa}" if isa else "", "; ".join(caches)] if x)


FRAMEWORK_PEERS = {"torch": "pixel_shuffle / pixel_unshuffle", "jax": "jit(reshape + transpose)",
                   "tensorflow": "tf.nn.depth_to_space / space_to_depth"}


def frameworks_section(path):
    """The framework libraries beside each framework's own op (bench/frameworks.json, make bench-frameworks)."""
    if not os.path.exists(path):
        return ["## Frameworks", "", "Not run yet (`make bench-frameworks`).", ""]
    data = json.load(open(path))
    lines = ["## Frameworks", "",
             f"`make bench-frameworks` (bench/frameworks_bench.py) on {data['date']}, commit `{data['commit']}`, "
             f"{data['machine']}, 1 thread, each framework in a process of its own: the library's op (README "
             "\"Frameworks\") against the framework's own on the same tensors, both checked against the numpy "
             "reference first; each figure a median of alternating batches with a same-size numpy copy. Each call "
             "returns a new tensor, as the frameworks' users get it: at 64 MiB that is fresh memory from the OS, whose "
             "first writes fault 4 KiB at a time on this VM (transparent huge pages \"madvise\"): about 31 ms of a "
             "64 MiB copy, 9-11 ms in huge pages. The library advises huge pages for the outputs of 4 MiB and more "
             "that it writes (docs/DESIGN.md), as numpy does for its arrays and the frameworks' CPU allocators do "
             "not, so the DRAM columns compare that as much as the kernels; the kernels alone are the C++ "
             "harness's tables above.", "",
             "Per call, 64 float32 elements (D2S block 2; microseconds, best of 7 rounds):", "",
             "| framework | version | the library | the framework's op | its cheapest op | library / own op |",
             "|---|---|---|---|---|---|"]
    for name, f in data["frameworks"].items():
        cost = f.get("call_cost_us", {})
        if cost:
            cheapest = next((f"{v:.2f} ({k})" for k, v in cost.items() if k not in ("library", "own op")), "–")
            lines.append(f"| {name} | {f['version']} | {cost['library']:.2f} | {cost['own op']:.2f} | {cheapest} | "
                         f"{cost['library'] / cost['own op']:.2f}x |")
    lines.append("")
    for name, f in data["frameworks"].items():
        rows = [r for r in f["rows"] if "speedup" in r]
        if f.get("failed"):
            lines += [f"{name}: the worker failed: {f['failed']}", ""]
        if not rows:
            continue
        sizes = sorted({r["size"] for r in rows})
        lines += [f"{name} {f['version']} against {FRAMEWORK_PEERS[name]}: the library's speed over the framework's "
                  "op's (> 1: the library is faster), GB/s of the library and of numpy's copy in brackets.", ""]
        for size in sizes:
            at = [r["speedup"] for r in rows if r["size"] == size]
            slower = sorted((r["speedup"], r["case"]) for r in rows if r["size"] == size and r["speedup"] < 1)
            lines.append(f"- {SIZE_LABEL.get(size, size)}: faster in {sum(v >= 1 for v in at)} of {len(at)} cases "
                         f"(median {statistics.median(at):.2f}x)" +
                         (": slower in " + ", ".join(f"{c} ({v:.2f}x)" for v, c in slower) if slower else "") + ".")
        errors = [r for r in f["rows"] if "error" in r]
        if errors:
            lines.append(f"- Not timed ({len(errors)} rows): " + "; ".join(sorted({r['error'] for r in errors}))[:300])
        lines += ["", "| case | " + " | ".join(SIZE_LABEL.get(s, str(s)) for s in sizes) + " |",
                  "|---|" + "---|" * len(sizes)]
        by_case = defaultdict(dict)
        for r in rows:
            by_case[r["case"]][r["size"]] = r
        for case in sorted(by_case):
            cells = [f"{by_case[case][s]['speedup']:.2f}x ({by_case[case][s]['gbps']:.1f} / "
                     f"{by_case[case][s]['memcpy_gbps']:.1f})" if s in by_case[case] else "–" for s in sizes]
            lines.append(f"| {case} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def in_process_section(peers, plot_path):
    """The Python module beside each Python peer, in the peer's process, on the same arrays
    (bench/peers.py): the summary per (peer, size, threads), the slowest comparisons, the plot."""
    rows = [r for r in (peers or {}).get("results", []) if "speedup" in r]
    lines = ["## In process: the Python module beside the Python peers", ""]
    if not rows:
        return lines + ["Not run yet, or run without the module: `make bench-peers` builds it and times it beside "
                        "each peer.", ""]
    sdv = peers.get("spacedepth", {}).get("version", "?")
    if peers.get("spacedepth", {}).get("commit"):
        sdv += f" (commit `{peers['spacedepth']['commit']}`)"
    lines += [f"`make bench-peers` ({peers['date']}), spacedepth {sdv} through its Python module (`import spacedepth`), "
              "in each peer's own process, on the very same arrays, pinned to the same thread count, called as that "
              "peer's users would call it: `spacedepth.pixel_shuffle` / `pixel_unshuffle` on the same torch tensor "
              "(channels_last views included), `tf_depth_to_space` / `tf_space_to_depth` on the TensorFlow case's "
              "array, `depth_to_space` / `space_to_depth` on the numpy array otherwise. Every output is checked "
              "against the numpy reference first; both allocate their output on every call, as the peers do. "
              "The peer, the module and numpy.copyto run in alternating batches; each figure is the median of 5 "
              "rounds. Speedup = the peer's time / the module's time (> 1: the module is faster).", ""]
    groups = defaultdict(list)
    for r in rows:
        groups[(r["peer"], r["size"], r["threads"])].append(r)
    lines += ["| peer | size | threads | cases | module faster in | median speedup | slowest case (speedup) | "
              "median ratio to memcpy: peer / module |", "|---|---|---|---|---|---|---|---|"]
    order = {p: i for i, p in enumerate(PY_PEERS)}
    wins = total = 0
    for (peer, size, threads), rs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1],
                                                                             kv[0][2])):
        sp = sorted(r["speedup"] for r in rs)
        worst = min(rs, key=lambda r: r["speedup"])
        faster = sum(v > 1 for v in sp)
        wins, total = wins + faster, total + len(sp)
        med = lambda key: sorted(r[key] for r in rs)[len(rs) // 2]  # noqa: E731
        lines.append(f"| {peer} | {size_text(size)} | {threads} | {len(rs)} | {faster} | {sp[len(sp) // 2]:.2f} | "
                     f"{worst['case']} ({worst['speedup']:.2f}) | {med('ratio'):.2f} / {med('sd_ratio'):.2f} |")
    lines += ["", f"- The module is faster than the peer in {wins} of {total} (case, size, threads, peer) comparisons."]
    # A peer "faster" than memcpy moved no data: numpy returns a view when the op is a pure reshape.
    views = sorted({r["case"] for r in rows if r["ratio"] > 1.5})
    slow = [r for r in sorted(rows, key=lambda r: r["speedup"]) if r["speedup"] <= 1 and r["case"] not in views]
    if views:
        lines.append(f"- {', '.join(views)}: the op is a pure reshape of the input's memory (rank-1 channels-last "
                     "DCR), and numpy returns a view: it moves no data (its ratio to memcpy passes 1), while "
                     "the module writes a new array. Those rows compare a copy with no copy.")
    if slow:
        lines.append("- Where the module is slower otherwise: " + "; ".join(
            f"{r['peer']} {r['case']} {size_text(r['size'])} {r['threads']}T ({r['speedup']:.2f})" for r in slow) +
            ". At 64 MiB every new numpy or PyTorch output is fresh memory from the OS, whose page faults and "
            "zeroing cost more than the copy (the cost-of-a-call table below: with `out=` the same call runs at "
            "numpy.copyto's speed, allocating it takes twice as long); ONNX Runtime and OpenVINO reuse their "
            "own arenas. At 128 KiB with PyTorch tensors the module's fixed cost per call (about 11 us, the "
            "table) is most of the call.")
    lines += ["", f"![speedup of the module over each peer]({os.path.basename(plot_path)})", "",
              "(1 thread; the rows where numpy returns a view are left out of the plot.)", ""]
    cost = (peers or {}).get("call_cost")
    if cost:
        names = list(cost["rows"][0]["ns"])
        lines += [f"The cost of a call ({cost['date']}, bench/python_call_cost.py): D2S NCHW CRD block 2 of 4 "
                  "float32 channels (PyTorch's pixel_shuffle), 1 thread, ns per call, medians of 7 alternating "
                  "rounds.", "", "| bytes | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
        for r in cost["rows"]:
            lines.append(f"| {size_text(r['bytes'])} | " + " | ".join(f"{r['ns'][k]:.0f}" for k in names) + " |")
        lines.append("")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return lines
    sizes = sorted({r["size"] for r in rows})
    cases = sorted({r["case"] for r in rows})
    fig, axes = plt.subplots(len(sizes), 1, figsize=(18, 4 * len(sizes)), sharex=True, squeeze=False)
    for ax, size in zip(axes[:, 0], sizes):
        for peer, marker, color in zip(PY_PEERS, "os^vD", ["tab:gray", "tab:red", "tab:green", "tab:purple",
                                                            "tab:brown"]):
            pts = [(cases.index(r["case"]), r["speedup"]) for r in rows
                   if r["peer"] == peer and r["size"] == size and r["threads"] == 1 and r["case"] not in views]
            if pts:
                ax.scatter(*zip(*pts), label=peer, marker=marker, color=color, s=18)
        ax.axhline(1.0, color="black", lw=0.5)
        ax.set_yscale("log")
        ax.set_ylabel("speedup over the peer (1 thread)")
        ax.set_title(f"{SIZE_LABEL.get(size, size_text(size))}: spacedepth's Python module / peer, same process")
        ax.legend(loc="upper left", ncol=5, fontsize=8)
    axes[-1, 0].set_xticks(range(len(cases)))
    axes[-1, 0].set_xticklabels(cases, rotation=90, fontsize=6)
    fig.tight_layout()
    fig.savefig(plot_path, dpi=80)
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cpp_json")
    ap.add_argument("--peers", default=os.path.join(os.path.dirname(__file__), "peers.json"))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "RESULTS.md"))
    ap.add_argument("--plot", default=os.path.join(os.path.dirname(__file__), "ratio_to_memcpy.png"))
    ap.add_argument("--frameworks", default=os.path.join(os.path.dirname(__file__), "frameworks.json"))
    ap.add_argument("--peers-plot", default=os.path.join(os.path.dirname(__file__), "peers_in_process.png"))
    ap.add_argument("--analysis", default=os.path.join(os.path.dirname(__file__), "ANALYSIS.md"))
    ap.add_argument("--bench", help="the harness binary: print each case's plan and rerun the beyond-cache misses")
    ap.add_argument("--repeats", default=os.path.join(os.path.dirname(__file__), "repeats.json"))
    ap.add_argument("--plans", default=os.path.join(os.path.dirname(__file__), "plans.json"))
    ap.add_argument("--instructions", default=os.path.join(os.path.dirname(__file__), "instructions.json"),
                    help="instructions per 64 output bytes of each case on the AVX2 path (make bench-instructions)")
    ap.add_argument("--avx2", default=os.path.join(os.path.dirname(__file__), "results_avx2.json"),
                    help="the harness's spacedepth rows run again with SPACEDEPTH_MAX_ISA=avx2 (make bench)")
    args = ap.parse_args()

    ctx, memcpy, gbps, yard, threshold, model, ranks, syard, model_stream, ryard = load_cpp(args.cpp_json)
    avx2_ctx, model_avx2, avx2 = {}, {}, {}  # avx2: (case, size, threads) -> ratio
    if os.path.exists(args.avx2):
        avx2_ctx, _, agbps, ayard, _, model_avx2, _, _, _, _ = load_cpp(args.avx2)
        avx2 = {(c, size, t): v / ayard[(c, size)][(impl, t)] for (c, size), row in agbps.items()
                for (impl, t), v in row.items() if impl == "spacedepth" and (impl, t) in ayard[(c, size)]}
    peers = json.load(open(args.peers)) if os.path.exists(args.peers) else None
    py = defaultdict(dict)  # (case, size) -> {(peer, threads): ratio}
    if peers:
        for r in peers["results"]:
            if "ratio" in r:
                py[(r["case"], r["size"])][(r["peer"], r["threads"])] = r["ratio"]

    def ratio(case, size, impl, threads):
        v = gbps[(case, size)].get((impl, threads))
        if v is None:
            return None
        ref = yard[(case, size)].get((impl, threads))  # the row's own memcpy
        if ref is None:
            ref = memcpy[(size, 1)] if threads == 1 else max(memcpy[(size, 1)], memcpy.get((size, 2), 0))
        return v / ref

    def stream_ratio(case, size, impl, threads):
        """GB/s over the row's own streaming-store copy (1 thread, or the better of 1 and 2)."""
        v, ref = gbps[(case, size)].get((impl, threads)), syard[(case, size)].get((impl, threads))
        return None if v is None or not ref else v / ref

    # The commit the harness ran at (make bench records it): the page is regenerated at later
    # commits (bench-peers, arm-mca, an edit of ANALYSIS.md), whose kernels it did not measure.
    commit = ctx.get("commit") or subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                                 text=True).stdout.strip()
    cases = sorted({c for c, _ in gbps}, key=lambda c: c)
    sizes = sorted({s for _, s in gbps})
    lines = ["# Benchmark results", ""]
    lines += [f"Generated by `make bench` / `make bench-peers` (bench/results_table.py) on "
              f"{datetime.date.today().isoformat()}, commit `{commit}`. Machine: {ctx.get('host_name')}, "
              f"{ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz ({describe_cpu(ctx)}), Debian 12, GCC 12, "
              f"Halide 21.0.0. Harness run: {ctx.get('date')}.", ""]
    lines += ["Each cell is GB/s (bytes read + written) divided by a same-size memcpy timed twice right after "
              "that row (the row's own yardstick: DRAM bandwidth on this VM drifts 10-15 % over a run): "
              "1-thread columns against 1-thread memcpy, 2-thread columns against the better of 1- and 2-thread memcpy. "
              "C++ peers (Eigen shuffle, XNNPACK, the naive loop of tests/reference.cpp) run in the harness; the Python "
              "peers (bench/peers.py) against numpy.copyto in their own process. \"–\" = the peer does not have this case "
              "(or, for the naive loop, not timed beyond cache). Buffers are page-aligned (see tools/aligned_buffer.h: "
              "glibc memcpy on this CPU runs 20x slower when (dst - src) % 4096 == 16).", ""]
    if peers:
        avail = ", ".join(f"{k} {v.get('version', '')}" if v["available"] else f"{k}: unavailable ({v['reason']})"
                          for k, v in peers["peers"].items())
        lines += [f"Python peers ({peers['date']}): {avail}.", ""]
    else:
        lines += ["Python peers: not run yet (`make bench-peers`).", ""]

    # Targets.
    lines += ["## Targets", ""]
    all_misses = []  # (case, size, threads, ratio, target)
    lines += ["- The cost of a call and small tensors (4-32 KiB): \"Per-call cost and small tensors\" below.", ""]
    for (size, threads), target in TARGETS.items():
        rs = [(c, ratio(c, size, "spacedepth", threads)) for c in cases]
        rs = [(c, r) for c, r in rs if r is not None]
        if not rs:
            continue
        out, misses = target_line(SIZE_LABEL.get(size, size), size, threads, target, rs)
        lines += out
        all_misses += [(c, size, threads, r, target) for r, c in misses]
    lines.append("")
    if avx2:
        lines += [f"The AVX2 path (`SPACEDEPTH_MAX_ISA=avx2`, kernels: {avx2_ctx.get('kernel_target', '?')}; "
                  "the same harness run again right after, 1 thread):", ""]
        avx2_misses = []
        for (size, threads), target in TARGETS.items():
            rs = [(c, avx2[(c, size, threads)]) for c in cases if (c, size, threads) in avx2]
            if rs:
                out, misses = target_line(SIZE_LABEL.get(size, size) + " (AVX2 path)", size, threads, target, rs)
                lines += out
                avx2_misses += [(c, size, r) for r, c in misses]
        lines.append("")
        lines += instruction_section(args.instructions, avx2_misses)
    lines += streaming_targets(cases, ratio, stream_ratio, gbps, syard, model, model_stream, ryard)
    # Against peers.
    wins = losses = 0
    lost = []
    for c in cases:
        for size in sizes:
            for threads in (1, 2):
                ours = ratio(c, size, "spacedepth", threads)
                if ours is None:
                    continue
                for p in CPP_PEERS:
                    r = ratio(c, size, p, threads)
                    if r is not None:
                        wins, losses = (wins + 1, losses) if ours >= r else (wins, losses + 1)
                        if ours < r:
                            lost.append(f"{p} {c} {size >> 10} KiB {threads}T ({r:.2f} vs {ours:.2f})")
                for p in PY_PEERS:
                    r = py[(c, size)].get((p, threads))
                    if r is not None:
                        wins, losses = (wins + 1, losses) if ours >= r else (wins, losses + 1)
                        if ours < r:
                            lost.append(f"{p} {c} {size >> 10} KiB {threads}T ({r:.2f} vs {ours:.2f})")
    lines.append(f"- Against the peers: faster in {wins} of {wins + losses} (case, size, threads, peer) comparisons." +
                 (" Slower in: " + "; ".join(lost) + "." if lost else ""))
    lines.append("")

    if model:
        mcases = sorted({c for c, _ in model})
        msizes = sorted({s for _, s in model})
        lines += ["## Model shapes", "",
                  "Shapes from real models outside the matrix (bench/cases.cpp `model_cases`: channel counts 3, 6, 12, "
                  "24, 27 and 48, blocks 2-4 and two rectangular ones, 1-, 2- and 4-byte elements), 1 thread, each "
                  "row against its own memcpy; XNNPACK where Debian's build has the op (4-byte NHWC DCR "
                  "DepthToSpace). \"AVX2\" is the same call on the AVX2 path.", ""]
        for (size, threads), target in TARGETS.items():
            if threads != 1 or size not in msizes:
                continue
            for label, table in (("best path", model), ("AVX2 path", model_avx2)):
                rs = [(c, table[(c, size)]["spacedepth"]) for c in mcases if "spacedepth" in table.get((c, size), {})]
                if rs:
                    lines += target_line(f"{SIZE_LABEL.get(size, size)}, {label}", size, 1, target, rs)[0]
        mwins, mlost = 0, []
        for (c, size), row in sorted(model.items()):
            for p in MODEL_PEERS:
                if p in row and "spacedepth" in row:
                    if row["spacedepth"] >= row[p]:
                        mwins += 1
                    else:
                        mlost.append(f"{p} {c} {size >> 10} KiB ({row[p]:.2f} vs {row['spacedepth']:.2f})")
        lines += [f"- Against the peers: faster in {mwins} of {mwins + len(mlost)} comparisons." +
                  (" Slower in: " + "; ".join(mlost) + "." if mlost else ""), ""]
        head = ["case"] + [f"{size_text(s)} {h}" for s in msizes
                           for h in ("ours", "AVX2", "eigen", "xnnpack")]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for c in mcases:
            cells = [c]
            for size in msizes:
                row, row2 = model.get((c, size), {}), model_avx2.get((c, size), {})
                for v, bold in ((row.get("spacedepth"), True), (row2.get("spacedepth"), False),
                                (row.get("eigen"), False), (row.get("xnnpack"), False)):
                    cells.append("–" if v is None else (f"**{v:.2f}**" if bold else f"{v:.2f}"))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")

    if ranks:
        rcases = sorted({c for c, _, _ in ranks})
        rsizes = sorted({s for _, s, _ in ranks})
        lines += ["## Spatial rank 1 and 3, and blocked layouts", "",
                  "bench/cases.cpp `rank_cases`: the volumetric pixel shuffle and unshuffle (NCDHW CRD), channels-last "
                  "volumes (NDHWC DCR, one with a temporal block of 1), 1-D shuffles (NCW, NWC), and the blocked "
                  "channel layouts NCHWc8 / NCHWc16 in place and converted to and from NCHW (one at rank 3). "
                  "Each row against its own memcpy, with the rank-2 matrix's targets. Of the peers only OpenVINO "
                  "has the ops at rank 1 and 3 (`make bench-peers`, NCHW with square blocks: its column, each "
                  "against numpy's copy in the same process); PyTorch's pixel_shuffle is rank 2 only, and "
                  "XNNPACK's and Eigen's rows are rank-2 NHWC.", ""]
        for (size, threads), target in TARGETS.items():
            rs = [(c, ranks[(c, size, threads)]) for c in rcases if (c, size, threads) in ranks]
            if rs:
                lines += target_line(SIZE_LABEL.get(size, size), size, threads, target, rs)[0]
        lines.append("")
        has_ov = any(("openvino", t) in py.get((c, s), {}) for c in rcases for s in rsizes for t in (1, 2))
        cols = [(t, impl) for t in (1, 2) for impl in (("ours", "openvino") if has_ov else ("ours",))]
        head = ["case"] + [f"{size_text(s)} {t}T" + ("" if impl == "ours" else " OpenVINO") for s in rsizes
                           for t, impl in cols]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        ov_wins, ov_lost = 0, []
        for c in rcases:
            cells = [c]
            for s in rsizes:
                for t, impl in cols:
                    v = ranks.get((c, s, t)) if impl == "ours" else py.get((c, s), {}).get(("openvino", t))
                    cells.append("–" if v is None else (f"**{v:.2f}**" if impl == "ours" else f"{v:.2f}"))
                    if impl == "openvino" and v is not None and (c, s, t) in ranks:
                        if ranks[(c, s, t)] >= v:
                            ov_wins += 1
                        else:
                            ov_lost.append(f"{c} {size_text(s)} {t}T ({v:.2f} vs {ranks[(c, s, t)]:.2f})")
            lines.append("| " + " | ".join(cells) + " |")
        if has_ov:
            lines.append("")
            lines.append(f"- Against OpenVINO: faster in {ov_wins} of {ov_wins + len(ov_lost)} comparisons." +
                         (" Slower in: " + "; ".join(ov_lost) + "." if ov_lost else ""))
        lines.append("")

    lines += in_process_section(peers, args.peers_plot)
    lines += frameworks_section(args.frameworks)

    if threshold:
        tcases = sorted({c for c, _ in threshold})
        tsizes = sorted({s for _, s in threshold})
        lines += ["## Parallel threshold", "",
                  "The same call on 2 threads with the pool forced on, divided by the call with it forced off "
                  "(> 1: threads pay). runtime/switch_points.h sends tensors of 256 KiB and more to the pool.", "",
                  "| case | " + " | ".join(f"{s >> 10} KiB" for s in tsizes) + " |", "|" + "---|" * (len(tsizes) + 1)]
        for c in tcases:
            row = [c]
            for s in tsizes:
                v = threshold[(c, s)]
                row.append(f"{v[1] / v[0]:.2f}" if 0 in v and 1 in v else "–")
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")

    if args.bench:
        plans = json.loads(subprocess.run([args.bench, "--cases_json"], capture_output=True, text=True,
                                          check=True).stdout)
        json.dump({c["name"]: c["plans"] for c in plans["cases"]}, open(args.plans, "w"), indent=1)
        rerun_dram_misses(args.bench, [(c, t) for c, size, t, _, _ in all_misses if size == 64 << 20], args.repeats)
    plans = json.load(open(args.plans)) if os.path.exists(args.plans) else {}
    spreads = defaultdict(list)  # (case, threads) -> ratios of the repeated DRAM rows
    if os.path.exists(args.repeats):
        for r in json.load(open(args.repeats))["results"]:
            spreads[(r["case"], r["threads"])].append(r["ratio"])
    if all_misses:
        lines += ["## Every miss, and why", "",
                  "One row per (case, size, threads) below its target. The plan is the single-thread call "
                  "`spacedepth info` describes (kernel family, unit width, the two innermost loops); beyond "
                  f"cache each miss was run {REPEATS} more times (bench/repeats.json) and the range is given. "
                  "The reasons are measured in \"Where we stand, and why\" below.", "",
                  "| case | size | threads | ratio | target | why |", "|---|---|---|---|---|---|"]
        for c, size, threads, r, target in sorted(all_misses, key=lambda m: (m[1], m[2], m[3])):
            rep = spreads.get((c, threads)) if size == 64 << 20 else None
            spread = (min(rep), max(rep), target) if rep else None
            why = explain_miss(plans.get(c, {}).get(str(size)), size, spread)
            lines.append(f"| {c} | {SIZE_LABEL.get(size, size)} | {threads} | {r:.2f} | {target} | {why} |")
        lines.append("")

    if os.path.exists(args.analysis):
        lines += [open(args.analysis).read().strip(), ""]
    # Sections other commands write: `make bench-plan`, `make bench-measure`, `make confirm-tuning`, `make arm-mca`,
    # `make compare-schedules`.
    bench_dir = os.path.dirname(args.out)
    switch_points = sorted(os.path.basename(p) for p in glob.glob(os.path.join(bench_dir, "switch_points.*.md")))
    for section in ("plan_path.md", "measure.md", *switch_points, "arm_mca.md", "schedules.md"):
        path = os.path.join(bench_dir, section)
        if os.path.exists(path):
            lines += [open(path).read().strip(), ""]

    cols = [("spacedepth", 1), ("spacedepth", 2)] + [(p, t) for p in CPP_PEERS for t in (1, 2) if p != "naive" or t == 1]
    pycols = [(p, t) for p in PY_PEERS for t in (1, 2)]
    for size in sizes:
        lines += [f"## {SIZE_LABEL.get(size, size)}", "",
                  f"memcpy: {memcpy[(size, 1)]:.1f} GB/s on 1 thread, {memcpy.get((size, 2), 0):.1f} GB/s on 2."
                  + (f" A copy loop of AVX2 loads and stores (`vector_copy`, the most a vector kernel can move): "
                     f"{memcpy[(size, 'vector_copy')]:.1f} GB/s, {memcpy[(size, 'vector_copy')] / memcpy[(size, 1)]:.2f}x memcpy."
                     if (size, "vector_copy") in memcpy else "")
                  + (f" A hand-written AVX-512 deinterleave by 2 on the view of D2S_NHWC_DCR_f32_C1_b2 "
                     f"(`deinterleave_ceiling`): {memcpy[(size, 'deinterleave')]:.2f}x its memcpy."
                     if (size, "deinterleave") in memcpy else ""), ""]
        streamed = size == DRAM and any(stream_ratio(c, size, "spacedepth", 1) for c in cases)
        # The two kinds of row the planner picks between (bench_spacedepth.cpp BM_row_kind): the
        # Halide ladder's and the shuffle microkernel's, each on the same call, 1 thread.
        kinds = [k for k in ROW_KINDS if any(ratio(c, size, k, 1) is not None for c in cases)]
        head = ["case"] + [f"{'ours' if p == 'spacedepth' else p} {t}T" for p, t in cols[:2]] + \
               [f"{ROW_KINDS[k]} 1T" for k in kinds] + \
               [f"{'ours' if p == 'spacedepth' else p} {t}T" for p, t in cols[2:]] + \
               (["ours 1T / streaming", "ours 2T / streaming"] if streamed else []) + \
               (["ours AVX2 1T"] if avx2 else []) + [f"{p} {t}T" for p, t in pycols]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for c in cases:
            cells = [c]
            for p, t in cols[:2] + [(k, 1) for k in kinds] + cols[2:]:
                r = ratio(c, size, p, t)
                cells.append("–" if r is None else (f"**{r:.2f}**" if p == "spacedepth" else f"{r:.2f}"))
            if streamed:
                for t in (1, 2):
                    r = stream_ratio(c, size, "spacedepth", t)
                    cells.append("–" if r is None else f"**{r:.2f}**")
            if avx2:
                r = avx2.get((c, size, 1))
                cells.append("–" if r is None else f"{r:.2f}")
            for p, t in pycols:
                r = py[(c, size)].get((p, t))
                cells.append("–" if r is None else f"{r:.2f}")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["![ratio to memcpy per case](ratio_to_memcpy.png)", ""]
    open(args.out, "w").write("\n".join(lines))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, axes = plt.subplots(len(sizes), 1, figsize=(18, 5 * len(sizes)), sharex=True)
    impls = [("spacedepth", "ours", "o", "black")] + [(p, p, m, col) for p, m, col in
             zip(CPP_PEERS + PY_PEERS, "sv^xDP*", ["tab:blue", "tab:orange", "tab:gray", "tab:red", "tab:green", "tab:purple", "tab:brown"])]
    for ax, size in zip(axes if len(sizes) > 1 else [axes], sizes):
        for impl, label, marker, color in impls:
            xs, ys = [], []
            for i, c in enumerate(cases):
                r = ratio(c, size, impl, 1) if impl in ("spacedepth",) + tuple(CPP_PEERS) else py[(c, size)].get((impl, 1))
                if r is not None:
                    xs.append(i)
                    ys.append(r)
            if xs:
                ax.scatter(xs, ys, label=label, marker=marker, color=color, s=40 if impl == "spacedepth" else 18)
        if size == DRAM:
            pts = [(i, stream_ratio(c, size, "spacedepth", 1)) for i, c in enumerate(cases)]
            pts = [(i, r) for i, r in pts if r]
            if pts:
                ax.scatter([i for i, _ in pts], [r for _, r in pts], label="ours / streaming copy", marker="o",
                           facecolors="none", edgecolors="black", s=40)
        ax.axhline(1.0, color="black", lw=0.5)
        ax.set_yscale("log")
        ax.set_ylabel("ratio to memcpy (1 thread)" + (" or to the streaming copy" if size == DRAM else ""))
        ax.set_title(SIZE_LABEL.get(size, str(size)))
        ax.legend(loc="lower left", ncol=8, fontsize=8)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(cases, rotation=90, fontsize=7)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=80)


if __name__ == "__main__":
    main()
