#!/usr/bin/env python3
"""`make bench-plan`: the per-call cost and small tensors, through a plan and one-shot.

Runs the harness's fixed_cost rows (a 64-byte D2S NHWC DCR f32 call, 1 thread: through a plan,
one-shot repeating one call, one-shot planned on every call, XNNPACK's xnn_run_operator, and a
64-byte memcpy) as interleaved repetitions, then the
plan/ rows (every case of the matrix at 256 B to 32 KiB, 1 thread, each against its own memcpy)
and the oneshot/ rows (the same at 4, 16 and 32 KiB). With --before BENCH (a harness built from an earlier commit) its one-shot
fixed cost is measured in the same run, alternating with this build's. Writes
bench/plan_path.json (the raw rows) and bench/plan_path.md, the section bench/results_table.py
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

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL_TARGETS = {4 << 10: 0.3, 16 << 10: 0.5}  # through a plan, every case (32 KiB: reported)
FLOOR_SIZES, FLOOR = (1 << 10, 16 << 10), 0.1  # every call of 1-16 KiB at >= 0.1 of memcpy
TINY_SIZES = (256, 1 << 10)  # calls of 256 B-1 KiB at most twice the 64-byte call through a plan
FIXED_LABELS = {
    "plan": "spacedepth, through a plan (`sd_plan_run`)",
    "oneshot": "spacedepth, one-shot (`sd_run`), the same call again (its plan in the per-thread cache)",
    "oneshot_uncached": "spacedepth, one-shot, planned on every call (5 calls in turn, the cache keeps 4)",
    "avx2/plan": "spacedepth, through a plan, AVX2 path",
    "avx2/oneshot": "spacedepth, one-shot, the same call again, AVX2 path",
    "avx2/oneshot_uncached": "spacedepth, one-shot, planned on every call, AVX2 path",
    "xnnpack": "XNNPACK, `xnn_run_operator` after create / reshape / setup",
    "memcpy": "memcpy of 64 bytes",
}


def run_bench(bench, *args, env=None):
    out = subprocess.run([bench, "--benchmark_format=json", *args], capture_output=True, text=True, check=True,
                         env={**os.environ, **(env or {})})
    return json.loads(out.stdout)


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def fixed_costs(bench, before, rounds):
    """Median ns per call of each fixed_cost variant over `rounds` alternating runs: this build on
    its best path and capped to AVX2 (SPACEDEPTH_MAX_ISA), and the `before` build."""
    samples = defaultdict(list)
    ctx = None
    runs = [(bench, "", None), (bench, "avx2/", {"SPACEDEPTH_MAX_ISA": "avx2"})]
    runs += [(before, "before/", None)] if before else []
    for _ in range(rounds):
        for binary, tag, env in runs:
            data = run_bench(binary, "--benchmark_filter=^fixed_cost", "--benchmark_min_time=0.2", env=env)
            ctx = ctx or data["context"]
            for b in data["benchmarks"]:
                m = re.match(r"fixed_cost/(?:(\w+)/)?bytes:64", b["name"])
                variant = m.group(1) or "oneshot" if m else None
                if m and not b.get("error_occurred") and not (tag == "avx2/" and variant in ("xnnpack", "memcpy")):
                    samples[tag + variant].append(b["real_time"])
    ctx["cpu_model"] = cpu_model()
    return ctx, {k: statistics.median(v) for k, v in samples.items()}, {k: (min(v), max(v)) for k, v in samples.items()}


def size_name(size):
    return f"{size >> 10} KiB" if size >= 1024 else f"{size} B"


def small_ratios(bench):
    data = run_bench(bench, "--benchmark_filter=^(plan|oneshot|naive)/[^/]+/bytes:[0-9]{3,5}/", "--benchmark_min_time=0.05")
    ratios, ns = {}, {}  # (path, case, bytes) -> ratio to the row's memcpy, ns per call
    for b in data["benchmarks"]:
        m = re.match(r"(plan|oneshot|naive)/([^/]+)/bytes:(\d+)/threads:1", b["name"])
        if m and not b.get("error_occurred") and b.get("memcpy_gbps"):
            key = (m.group(1), m.group(2), int(m.group(3)))
            ratios[key] = b["bytes_per_second"] / 1e9 / b["memcpy_gbps"]
            ns[key] = b["real_time"]
    return data["context"], ratios, ns


def render(ctx, fixed, spread, ratios, ns, before_label):
    date = datetime.date.today().isoformat()
    lines = ["## Per-call cost and small tensors (`make bench-plan`)", "",
             f"bench/plan_path.py, {date}, {ctx.get('host_name')}: {ctx.get('cpu_model', 'CPU not recorded')}, "
             f"{ctx.get('num_cpus')} CPUs; 1 thread; the best kernel path this CPU runs (`spacedepth info`), and for "
             "the 64-byte call also the AVX2 path (`SPACEDEPTH_MAX_ISA=avx2`). Every figure is from this one run.", "",
             "**A 64-byte call** (D2S NHWC DCR f32, [1, 16, 1, 1] -> [1, 4, 2, 2]): median ns per call over "
             "alternating runs, with the range. Targets: <= 100 ns through a plan, <= 250 ns one-shot, both below "
             "XNNPACK's run.", "", "| call | ns per call | range |", "|---|---|---|"]
    order = ["plan", "oneshot", "oneshot_uncached", "avx2/plan", "avx2/oneshot", "avx2/oneshot_uncached",
             "before/oneshot", "xnnpack", "memcpy"]
    for key in order:
        if key in fixed:
            label = FIXED_LABELS.get(key, f"spacedepth one-shot, {before_label}")
            lo, hi = spread[key]
            lines.append(f"| {label} | {fixed[key]:.0f} | {lo:.0f}-{hi:.0f} |")
    lines.append("")
    sizes = sorted({s for _, _, s in ratios})
    cases = sorted({c for _, c, _ in ratios})
    lines += ["**Small tensors**: GB/s over the row's own memcpy, every case of the matrix, 1 thread; one-shot "
              "planned on every call (the cost every call paid before plans).", ""]
    for size in sizes:
        for path in ("plan", "oneshot"):
            keys = [(path, c, size) for c in cases if (path, c, size) in ratios]
            rs = sorted(ratios[k] for k in keys)
            if not rs:
                continue
            meet = ""
            for target in [SMALL_TARGETS.get(size)] + [FLOOR] * (path == "plan" and FLOOR_SIZES[0] <= size <= FLOOR_SIZES[1]):
                meet += f"; {sum(r >= target for r in rs)} of {len(rs)} at >= {target}" if target else ""
            scalar = [k for k in keys if ("naive",) + k[1:] in ns]
            if path == "plan" and scalar:
                slower = sum(ns[k] > ns[("naive",) + k[1:]] for k in scalar)
                meet += f"; {slower} of {len(scalar)} slower than the scalar loop (tests/reference.cpp)"
            if path == "plan" and size in TINY_SIZES and "plan" in fixed and ns:
                limit = 2 * fixed["plan"]
                meet += (f"; {sum(ns[k] <= limit for k in keys)} of {len(rs)} calls within {limit:.0f} ns (twice the "
                         f"64-byte call), the slowest {max(ns[k] for k in keys):.0f} ns")
            lines.append(f"- {size_name(size)}, {path}: median {rs[len(rs) // 2]:.2f}, worst {rs[0]:.2f}{meet}.")
    columns = [("plan", s) for s in sizes] + [("oneshot", s) for s in sizes if any(k[0] == "oneshot" and k[2] == s
                                                                                  for k in ratios)]
    lines += ["", "| case | " + " | ".join(f"{size_name(s)} {'plan' if p == 'plan' else 'one-shot'}"
                                          for p, s in columns) + " |", "|---|" + "---|" * len(columns)]
    for c in cases:
        cells = [f"{ratios[(p, c, s)]:.2f}" if (p, c, s) in ratios else "–" for p, s in columns]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="this build's spacedepth_bench")
    ap.add_argument("--before", help="a spacedepth_bench built from an earlier commit, for its one-shot fixed cost")
    ap.add_argument("--before-label", default="an earlier commit")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", default=os.path.join(HERE, "plan_path.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "plan_path.md"))
    ap.add_argument("--render-only", action="store_true", help="write the .md again from the .json, measuring nothing")
    args = ap.parse_args()
    if args.render_only:
        data = json.load(open(args.json))
        ctx, fixed, args.before_label = data["context"], data["fixed_cost_ns"], data.get("before_label", "")
        spread = {k: tuple(v) for k, v in data["fixed_cost_range_ns"].items()}
        ratios = {(r["path"], r["case"], r["bytes"]): r["ratio"] for r in data["small"]}
        ns = {(r["path"], r["case"], r["bytes"]): r["ns"] for r in data["small"] if "ns" in r}
    else:
        ctx, fixed, spread = fixed_costs(args.bench, args.before, args.rounds)
        _, ratios, ns = small_ratios(args.bench)
        json.dump({"context": ctx, "fixed_cost_ns": fixed, "fixed_cost_range_ns": spread, "before_label": args.before_label,
                   "small": [{"path": p, "case": c, "bytes": s, "ratio": r, "ns": ns[(p, c, s)]}
                             for (p, c, s), r in sorted(ratios.items())]},
                  open(args.json, "w"), indent=1)
    open(args.out, "w").write(render(ctx, fixed, spread, ratios, ns, args.before_label))
    print(f"wrote {args.out} and {args.json}")


if __name__ == "__main__":
    main()
