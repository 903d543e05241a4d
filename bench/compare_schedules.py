#!/usr/bin/env python3
"""`make compare-schedules`: the hand schedules, the tuned ones (tuning/<target>.json) and
Halide's autoschedulers (Adams2019, Mullapudi2016, Li2018) side by side on the shape classes of
bench/shape_classes.json, each beside a same-size memcpy in the same run. Builds build-compare/
(this CPU's kernel target, -DSPACEDEPTH_SCHEDULE_COMPARISON=ON, the main build's generator),
runs spacedepth_bench --shapes, writes bench/schedules.json and the bench/schedules.md table that
bench/RESULTS.md includes. Anderson2021 (GPU) is built for CUDA; without a GPU it is not timed.
"""
import argparse
import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import tune  # noqa: E402  (the tuner's build helpers)

AUTOSCHEDULERS = ["adams2019", "mullapudi2016", "li2018"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", default=str(ROOT / "bench/shape_classes.json"))
    p.add_argument("--build-dir", default=str(ROOT / "build-compare"))
    p.add_argument("--source-build", default=str(ROOT / "build"))
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.1)
    p.add_argument("--out", default=str(ROOT / "bench/schedules.json"))
    args = p.parse_args()

    target = tune.cpu_target(args.source_build)
    build = Path(args.build_dir)
    tune.configure_single_target(build, args.source_build, target, "-DSPACEDEPTH_SCHEDULE_COMPARISON=ON")
    tune.build_target(build, "all")
    subprocess.run([str(build / "bin/spacedepth_bench"), f"--shapes={args.shapes}",
                    f"--benchmark_repetitions={args.repetitions}", f"--benchmark_min_time={args.min_time}",
                    f"--benchmark_out={args.out}", "--benchmark_out_format=json"], check=True, stdout=subprocess.DEVNULL)
    write_table(json.loads(Path(args.out).read_text()), target, build, Path(args.out).with_suffix(".md"))


def write_table(data, target, build, out):
    ratios, memcpy = {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        _, cls, sched = b["name"].split("/")[:3]
        if "error_occurred" in b:
            sys.exit(f"compare-schedules: {b['name']}: {b.get('error_message')}")
        ratios.setdefault(cls, {}).setdefault(sched, []).append(b["bytes_per_second"] / 1e9 / b["best_memcpy_gbps"])
        memcpy.setdefault(cls, []).append(b["best_memcpy_gbps"])
    median = lambda xs: sorted(xs)[len(xs) // 2]
    scheds = [s for s in ["manual", "tuned"] + AUTOSCHEDULERS if any(s in r for r in ratios.values())]
    ctx = data.get("context", {})
    ptx = sorted(build.glob("generators/spacedepth_cmp_anderson2021_cuda_u32*.ptx")) or sorted(build.glob("**/*anderson2021*.ptx"))
    lines = ["## Schedules: manual, tuned, Halide's autoschedulers", "",
             f"`make compare-schedules` (bench/compare_schedules.py), {datetime.date.today().isoformat()}, "
             f"{ctx.get('host_name', 'this machine')} ({ctx.get('num_cpus', '?')} CPUs), kernel target `{target}`. "
             "Each figure: kernel GB/s / memcpy GB/s of the same size in the same run (the better of 1 and 2 threads), "
             f"median of {median([len(v) for r in ratios.values() for v in r.values()])} repetitions. All schedules run on "
             "the library's own normalised views (runtime/view.cpp), so they differ only in the kernel's schedule. "
             "*manual*: the hand schedules, no tuning database. *tuned*: the library as built with tuning/ "
             "(runtime switch points included). Autoschedulers: the same generator with `AUTOSCHEDULER` in "
             "`add_halide_library`, estimates of one mid-size view (generators/permute_copy_generator.cpp), "
             "parallelism 2; one kernel per width serves every view.", "",
             "| class | memcpy GB/s | " + " | ".join(scheds) + " | tuned vs best other |",
             "|---|---|" + "---|" * len(scheds) + "---|"]
    for cls, r in ratios.items():
        med = {s: median(v) for s, v in r.items()}
        others = [med[s] for s in scheds if s != "tuned" and s in med]
        verdict = ""
        if "tuned" in med and others:
            verdict = f"{med['tuned'] / max(others):.2f}x"
        lines.append(f"| {cls} | {median(memcpy[cls]):.1f} | " + " | ".join(f"{med[s]:.2f}" if s in med else "-" for s in scheds)
                     + f" | {verdict} |")
    lines += ["", "Anderson2021 (Halide's GPU autoscheduler) is built for the CUDA target "
              f"({'PTX: ' + ptx[0].name if ptx else 'no PTX found'}); there is no GPU here, so it is not timed."]
    out.write_text("\n".join(lines) + "\n")
    print(f"compare-schedules: wrote {out}")


if __name__ == "__main__":
    main()
