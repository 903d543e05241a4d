#!/usr/bin/env python3
"""`make bench-measure`: ESTIMATE plans (the planner's rules) against MEASURE plans (the fastest
of the rules' plan and its alternatives, timed at create within the default limit).

Runs the harness's estimate/ and measured/ rows (every case of the matrix, 1 and 2 threads,
4 KiB to 64 MiB; each plan made afresh with no wisdom) as repetitions in random interleaved
order, so that drift hits both alike, and compares the median time per call of each pair.
Writes bench/measure.json (the rows) and bench/measure.md, the section bench/results_table.py
includes in bench/RESULTS.md.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
from collections import defaultdict

from plan_path import cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))
GAIN = 0.10   # the bar: measured at least 10 % faster
NOISE = 0.03  # and never more than 3 % slower
ROW = re.compile(r"(estimate|measured)/([^/]+)/bytes:(\d+)/threads:(\d+)")


def run(bench, sizes, threads, repetitions, min_time):
    size_re = "|".join(str(s) for s in sizes)
    thread_re = "|".join(str(t) for t in threads)
    args = [bench, "--benchmark_format=json", f"--benchmark_filter=^(estimate|measured)/.*/bytes:({size_re})/threads:({thread_re})$",
            f"--benchmark_min_time={min_time}", f"--benchmark_repetitions={repetitions}",
            "--benchmark_enable_random_interleaving=true", "--benchmark_report_aggregates_only=false"]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    rows = defaultdict(lambda: {"ns": [], "ratio": [], "plan_ms": [], "label": ""})
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        m = ROW.match(b["name"])
        if not m:
            continue
        key = (m.group(2), int(m.group(3)), int(m.group(4)), m.group(1))
        r = rows[key]
        r["ns"].append(b["real_time"])
        if b.get("memcpy_gbps"):
            r["ratio"].append(b["bytes_per_second"] / 1e9 / b["memcpy_gbps"])
        r["plan_ms"].append(b.get("plan_ms", 0))
        r["label"] = b.get("label", "")
    ctx = data["context"]
    ctx["cpu_model"] = cpu_model()
    return ctx, rows


def pairs(rows):
    """(case, bytes, threads) -> dict of both modes' medians."""
    out = {}
    for (case, size, threads, mode), r in rows.items():
        if mode != "estimate" or (case, size, threads, "measured") not in rows:
            continue
        m = rows[(case, size, threads, "measured")]
        med = statistics.median
        out[(case, size, threads)] = {
            "estimate_ns": med(r["ns"]), "measured_ns": med(m["ns"]),
            "estimate_ratio": med(r["ratio"]) if r["ratio"] else None,
            "measured_ratio": med(m["ratio"]) if m["ratio"] else None,
            "estimate_plan_ms": med(r["plan_ms"]), "measured_plan_ms": med(m["plan_ms"]),
            "measured_plan_ms_max": max(m["plan_ms"]), "label": m["label"]}
    return out


def size_name(size):
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def choice(label):
    """The measured plan in brief: its kernel and how it was made."""
    head = label.split(", dims")[0]
    extras = [p for p in ("AVX2 path", "parallel", "serial") if f", {p}" in label.split(";")[0]]
    how = label.split("; ", 1)[1] if "; " in label else ""
    if how.startswith("measured"):
        order = "input" if "input loop order" in how else "output"
        how = f"{order} order"
    elif how.startswith("not measured"):
        how = "not measured"
    return f"{head}, {', '.join(extras)}, {how}"


def render(ctx, table, repetitions):
    date = datetime.date.today().isoformat()
    lines = ["## ESTIMATE vs MEASURE plans (`make bench-measure`)", "",
             f"bench/measure_plans.py, {date}, {ctx.get('host_name')}: {ctx.get('cpu_model')}, {ctx.get('num_cpus')} "
             f"CPUs; {repetitions} repetitions of every row in random interleaved order, medians. Each plan is made "
             "afresh with no wisdom; MEASURE uses the default limit (`SD_PLAN_DEFAULT_TIME_LIMIT_MS`, 5 ms). "
             f"\"faster\" counts rows whose MEASURE call is >= {GAIN:.0%} faster, \"slower\" rows > {NOISE:.0%} "
             "slower (the noise bar); plan time is `Plan::create`'s.", "",
             "| size | threads | rows | faster >= 10 % | slower > 3 % | median time ratio (MEASURE / ESTIMATE) | best | worst | plan ms (median / max) |",
             "|---|---|---|---|---|---|---|---|---|"]
    groups = defaultdict(list)
    for (case, size, threads), p in table.items():
        groups[(size, threads)].append(p)
    for (size, threads) in sorted(groups):
        ps = groups[(size, threads)]
        t = sorted(p["measured_ns"] / p["estimate_ns"] for p in ps)
        faster = sum(x <= 1 - GAIN for x in t)
        slower = sum(x > 1 + NOISE for x in t)
        plan = [p["measured_plan_ms"] for p in ps]
        lines.append(f"| {size_name(size)} | {threads} | {len(ps)} | {faster} | {slower} | {statistics.median(t):.3f} | "
                     f"{t[0]:.2f} | {t[-1]:.2f} | {statistics.median(plan):.2f} / {max(p['measured_plan_ms_max'] for p in ps):.2f} |")
    for size in sorted({s for _, s, _ in table}):
        if size != 128 << 10:
            continue
        lines += ["", f"**{size_name(size)}, every case**: GB/s over the row's own memcpy, and what MEASURE chose.", "",
                  "| case | threads | ESTIMATE | MEASURE | time ratio | MEASURE's plan |", "|---|---|---|---|---|---|"]
        for (case, s, threads), p in sorted(table.items()):
            if s != size:
                continue
            er, mr = p["estimate_ratio"], p["measured_ratio"]
            lines.append(f"| {case} | {threads} | {er:.2f} | {mr:.2f} | {p['measured_ns'] / p['estimate_ns']:.2f} | "
                         f"{choice(p['label'])} |" if er and mr else f"| {case} | {threads} | – | – | – | |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="this build's spacedepth_bench")
    ap.add_argument("--sizes", default="4096,131072,2097152,67108864", help="bytes, comma-separated")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", default="0.05")
    ap.add_argument("--json", default=os.path.join(HERE, "measure.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "measure.md"))
    ap.add_argument("--render-only", action="store_true", help="write the .md again from the .json, measuring nothing")
    args = ap.parse_args()
    if args.render_only:
        data = json.load(open(args.json))
        ctx, repetitions = data["context"], data["repetitions"]
        table = {(r["case"], r["bytes"], r["threads"]): r for r in data["rows"]}
    else:
        sizes = [int(s) for s in args.sizes.split(",")]
        threads = [int(t) for t in args.threads.split(",")]
        ctx, rows = run(args.bench, sizes, threads, args.repetitions, args.min_time)
        table, repetitions = pairs(rows), args.repetitions
        json.dump({"context": ctx, "repetitions": repetitions,
                   "rows": [{"case": c, "bytes": s, "threads": t, **p} for (c, s, t), p in sorted(table.items())]},
                  open(args.json, "w"), indent=1)
    open(args.out, "w").write(render(ctx, table, repetitions))
    print(f"wrote {args.out} and {args.json}")


if __name__ == "__main__":
    main()
