"""Two builds of the harness (or one build under two environments), interleaved on the same
cases (the matrix's and the model shapes, model/<case>): each round runs A then B, each row
against its own memcpy (timed right after it); the table gives the median
ratio to memcpy of each side and B/A. How the schedule changes in bench/ANALYSIS.md were measured.

  python bench/compare_builds.py --a /tmp/old/spacedepth_bench --b build/bin/spacedepth_bench \
      --size 131072 --cases 'D2S_NHWC_.*'
  python bench/compare_builds.py --a build/bin/spacedepth_bench --a-env SPACEDEPTH_MAX_ISA=avx512_skylake \
      --b build/bin/spacedepth_bench --size 2097152
  python bench/compare_builds.py --a build/bin/spacedepth_bench --b build/bin/spacedepth_bench \
      --b-arg=--switch_points=long_run_bytes=1000000 --cases 'D2S_NHWC_DCR_.*'
"""
import argparse
import json
import os
import statistics
import subprocess


def run(binary, env, extra, size, cases, min_time):
    cmd = [binary, f"--benchmark_filter=^(memcpy|(model/)?spacedepth/({cases}))/bytes:{size}/threads:1/",
           f"--benchmark_min_time={min_time}", "--benchmark_format=json", *extra]
    out = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)["benchmarks"]
    memcpy = next(b["bytes_per_second"] for b in rows if b["name"].startswith("memcpy/"))
    # Matrix rows by case name, model shapes as model/<case>; each against its own memcpy (timed
    # right after the row, as bench/results_table.py takes it), else the run's memcpy row. With
    # the run's one memcpy row, that row's own noise moved every ratio of a run together: the same
    # build as A and B, 2 rounds, read 24 and 32 of 109 cases at >= 0.6 at 128 KiB.
    return {b["name"].split("/bytes:")[0].replace("spacedepth/", ""):
            b["bytes_per_second"] / (b["memcpy_gbps"] * 1e9 if "memcpy_gbps" in b else memcpy)
            for b in rows if "spacedepth/" in b["name"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="harness binary A (the before)")
    ap.add_argument("--b", required=True, help="harness binary B (the after)")
    ap.add_argument("--a-env", action="append", default=[], help="NAME=VALUE for A's runs")
    ap.add_argument("--b-env", action="append", default=[], help="NAME=VALUE for B's runs")
    ap.add_argument("--a-arg", action="append", default=[], help="a harness flag for A's runs")
    ap.add_argument("--b-arg", action="append", default=[], help="a harness flag for B's runs")
    ap.add_argument("--size", type=int, default=131072, help="tensor bytes (one of the matrix sizes)")
    ap.add_argument("--cases", default=".*", help="regular expression over case names")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.1, help="seconds per row")
    ap.add_argument("--target", type=float, help="also count the cases at or above this ratio")
    args = ap.parse_args()
    env = {w: dict(kv.split("=", 1) for kv in getattr(args, f"{w}_env")) for w in ("a", "b")}
    ratios = {"a": {}, "b": {}}
    for _ in range(args.rounds):
        for w in ("a", "b"):
            for case, r in run(getattr(args, w), env[w], getattr(args, f"{w}_arg"), args.size, args.cases, args.min_time).items():
                ratios[w].setdefault(case, []).append(r)
    med = {w: {c: statistics.median(v) for c, v in ratios[w].items()} for w in ("a", "b")}
    cases = sorted(set(med["a"]) & set(med["b"]))
    print(f"| case | A | B | B/A |\n|---|---|---|---|")
    for c in cases:
        print(f"| {c} | {med['a'][c]:.2f} | {med['b'][c]:.2f} | {med['b'][c] / med['a'][c]:.2f} |")
    for w in ("a", "b"):
        vals = [med[w][c] for c in cases]
        line = f"{w.upper()}: median {statistics.median(vals):.2f} over {len(vals)} cases"
        if args.target is not None:
            line += f", {sum(v >= args.target for v in vals)} at >= {args.target}"
        print(line)


if __name__ == "__main__":
    main()
