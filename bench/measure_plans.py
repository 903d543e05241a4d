#!/usr/bin/env python3
"""`make bench-measure`: ESTIMATE plans (the planner's rules) against MEASURE plans (the fastest
of the rules' plan and its alternatives, timed at create within the default limit).

Runs the harness's plan_modes/ rows: every case of the matrix, 1 and 2 threads, 4 KiB to 64 MiB.
Each row makes both plans afresh with no wisdom and times them in 31 alternating rounds in one
process (counter paired_ratio: the median of MEASURE's time over ESTIMATE's per round), since
separate rows of one plan drift by 10-20 % on a shared 2-core VM. Writes bench/measure.json
(the rows) and bench/measure.md, the section bench/results_table.py includes in
bench/RESULTS.md.
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
GAIN = 0.10   # the bar: MEASURE at least 10 % faster
NOISE = 0.03  # and never more than 3 % slower
ROW = re.compile(r"plan_modes/([^/]+)/bytes:(\d+)/threads:(\d+)")


def run(bench, sizes, threads, min_time):
    size_re = "|".join(str(s) for s in sizes)
    thread_re = "|".join(str(t) for t in threads)
    out = subprocess.run([bench, "--benchmark_format=json", f"--benchmark_min_time={min_time}",
                          f"--benchmark_filter=^plan_modes/.*/bytes:({size_re})/threads:({thread_re})/"],
                         capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    rows = []
    for b in data["benchmarks"]:
        m = ROW.match(b["name"])
        if not m or b.get("error_occurred"):
            continue
        rows.append({"case": m.group(1), "bytes": int(m.group(2)), "threads": int(m.group(3)),
                     "paired_ratio": b["paired_ratio"], "estimate_ns": b["estimate_ns"],
                     "measured_ns": b["measured_ns"], "plan_ms": b["plan_ms"], "changed": bool(b["changed"]),
                     "ratio_to_memcpy": b["bytes_per_second"] / 1e9 / b["memcpy_gbps"] if b.get("memcpy_gbps") else None,
                     "label": b.get("label", "")})
    ctx = data["context"]
    ctx["cpu_model"] = cpu_model()
    return ctx, rows


def size_name(size):
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def choice(label):
    """The measured plan in brief: its kernel, path and threads, and its loop order."""
    plan, _, how = label.partition("; ")
    head = plan.split(", dims")[0]
    extras = [p for p in ("AVX2 path", "parallel", "serial") if f", {p}" in plan]
    order = "input order" if "input loop order" in how else "output order"
    return f"{head}, {', '.join(extras)}, {order}"


def render(ctx, rows):
    date = datetime.date.today().isoformat()
    lines = ["## ESTIMATE vs MEASURE plans (`make bench-measure`)", "",
             f"bench/measure_plans.py, {date}, {ctx.get('host_name')}: {ctx.get('cpu_model')}, {ctx.get('num_cpus')} "
             "CPUs. Each row makes both plans afresh with no wisdom (MEASURE within the default limit, "
             "`SD_PLAN_DEFAULT_TIME_LIMIT_MS`, 5 ms) and times them in 31 alternating rounds in one process; "
             "the time ratio is the median of MEASURE's time over ESTIMATE's per round. Rows where MEASURE "
             "kept the rules' plan time the same plan twice: their spread is the noise. "
             f"\"faster\" and \"slower\" count the rows where MEASURE chose another plan with a time ratio <= "
             f"{1 - GAIN:.2f} and > {1 + NOISE:.2f}. Plan time is MEASURE's "
             "`Plan::create`.", "",
             "| size | threads | rows | MEASURE chose another plan | faster | slower | median ratio, changed rows | "
             "best | worst | same plan twice: ratio range | plan ms (median / max) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    groups = defaultdict(list)
    for r in rows:
        groups[(r["bytes"], r["threads"])].append(r)
    for (size, threads) in sorted(groups):
        rs = groups[(size, threads)]
        changed = sorted(r["paired_ratio"] for r in rs if r["changed"])
        same = sorted(r["paired_ratio"] for r in rs if not r["changed"])
        plan = [r["plan_ms"] for r in rs]
        lines.append(
            f"| {size_name(size)} | {threads} | {len(rs)} | {len(changed)} | {sum(x <= 1 - GAIN for x in changed)} | "
            f"{sum(x > 1 + NOISE for x in changed)} | "
            + (f"{statistics.median(changed):.3f} | {changed[0]:.2f} | {changed[-1]:.2f}" if changed else "– | – | –")
            + (f" | {same[0]:.2f}-{same[-1]:.2f}" if same else " | –")
            + f" | {statistics.median(plan):.2f} / {max(plan):.2f} |")
    changed = [r for r in rows if r["changed"]]
    if changed:
        lines += ["", "**Rows where MEASURE chose another plan**: the time ratio, the row's GB/s over its own memcpy "
                  "with the MEASURE plan, and that plan.", "",
                  "| case | size | threads | time ratio | MEASURE over memcpy | MEASURE's plan |", "|---|---|---|---|---|---|"]
        for r in sorted(changed, key=lambda r: (r["bytes"], r["threads"], r["case"])):
            memcpy = f"{r['ratio_to_memcpy']:.2f}" if r["ratio_to_memcpy"] else "–"
            lines.append(f"| {r['case']} | {size_name(r['bytes'])} | {r['threads']} | {r['paired_ratio']:.2f} | {memcpy} | "
                         f"{choice(r['label'])} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="this build's spacedepth_bench")
    ap.add_argument("--sizes", default="4096,32768,131072,2097152,67108864", help="bytes, comma-separated")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--min-time", default="0.02")
    ap.add_argument("--json", default=os.path.join(HERE, "measure.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "measure.md"))
    ap.add_argument("--render-only", action="store_true", help="write the .md again from the .json, measuring nothing")
    args = ap.parse_args()
    if args.render_only:
        data = json.load(open(args.json))
        ctx, rows = data["context"], data["rows"]
    else:
        ctx, rows = run(args.bench, [int(s) for s in args.sizes.split(",")],
                        [int(t) for t in args.threads.split(",")], args.min_time)
        json.dump({"context": ctx, "rows": rows}, open(args.json, "w"), indent=1)
    open(args.out, "w").write(render(ctx, rows))
    print(f"wrote {args.out} and {args.json}")


if __name__ == "__main__":
    main()
