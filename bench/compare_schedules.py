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
import os
import re
import shutil
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
    p.add_argument("--repetitions", type=int, default=9)
    p.add_argument("--min-time", type=float, default=0.1)
    p.add_argument("--out", default=str(ROOT / "bench/schedules.json"))
    args = p.parse_args()

    target = tune.cpu_target(args.source_build)
    build = Path(args.build_dir)
    tune.configure_single_target(build, args.source_build, target, "-DSPACEDEPTH_SCHEDULE_COMPARISON=ON")
    tune.build_target(build, "all")
    subprocess.run([str(build / "bin/spacedepth_bench"), f"--shapes={args.shapes}",
                    f"--benchmark_repetitions={args.repetitions}", f"--shape_seconds={args.min_time}",
                    "--benchmark_enable_random_interleaving=true",  # no schedule always runs after another
                    f"--benchmark_out={args.out}", "--benchmark_out_format=json"], check=True, stdout=subprocess.DEVNULL)
    write_table(json.loads(Path(args.out).read_text()), target, build, Path(args.out).with_suffix(".md"))


def write_table(data, target, build, out):
    ratios, memcpy, errors = {}, {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        _, cls, sched = b["name"].split("/")[:3]
        if "error_occurred" in b:
            if sched in ("manual", "tuned") or "differs" in b.get("error_message", ""):
                sys.exit(f"compare-schedules: {b['name']}: {b.get('error_message')}")
            errors.setdefault(cls, {})[sched] = b.get("error_message", "")
            continue
        ratios.setdefault(cls, {}).setdefault(sched, []).append(b["bytes_per_second"] / 1e9 / b["best_memcpy_gbps"])
        memcpy.setdefault(cls, []).append(b["best_memcpy_gbps"])
    median = lambda xs: sorted(xs)[len(xs) // 2]
    scheds = [s for s in ["manual", "tuned"] + AUTOSCHEDULERS if any(s in r for r in ratios.values())]
    ctx = data.get("context", {})
    ptx = sorted(build.glob("generators/spacedepth_cmp_anderson2021_cuda_u32.device_code"))
    lines = ["## Schedules: manual, tuned, Halide's autoschedulers", "",
             f"`make compare-schedules` (bench/compare_schedules.py), {datetime.date.today().isoformat()}, "
             f"{ctx.get('host_name', 'this machine')} ({ctx.get('num_cpus', '?')} CPUs), kernel target `{target}`. "
             "Each figure: kernel GB/s / memcpy GB/s of the same size in the same run (the better of 1 and 2 threads), "
             f"median of {median([len(v) for r in ratios.values() for v in r.values()])} repetitions. All schedules run on "
             "the library's own normalised views (runtime/plan_cpu.cpp), so they differ only in the kernel's schedule. "
             "*manual*: the hand schedules, no tuning database. *tuned*: the library as built with tuning/ "
             "(runtime switch points included). Autoschedulers: the same generator with `AUTOSCHEDULER` in "
             "`add_halide_library`, estimates of one mid-size view (generators/permute_copy_generator.cpp), "
             "parallelism 2; one kernel per width serves every view.", "",
             "| class | memcpy GB/s | " + " | ".join(scheds) + " | tuned spread | tuned / best autoscheduler |",
             "|---|---|" + "---|" * len(scheds) + "---|---|"]
    for cls, r in ratios.items():
        med = {s: median(v) for s, v in r.items()}
        autos = [med[s] for s in AUTOSCHEDULERS if s in med]
        verdict = f"{med['tuned'] / max(autos):.2f}x" if "tuned" in med and autos else "all fail"
        spread = f"{max(r['tuned']) / min(r['tuned']) - 1:.0%}" if "tuned" in r else ""
        cell = lambda s: f"{med[s]:.2f}" if s in med else ("fails" if s in errors.get(cls, {}) else "-")
        lines.append(f"| {cls} | {median(memcpy[cls]):.1f} | " + " | ".join(cell(s) for s in scheds) + f" | {spread} | {verdict} |")
    failures = sorted({(s, m) for e in errors.values() for s, m in e.items()})
    if failures:
        lines += ["", "*fails*: the kernel returned an error on that class's view, so it was not timed. Halide's "
                  "autoschedulers split dims by factors chosen for the estimates with `ShiftInwards`, which "
                  "needs every split dim at least as long as its factor; the views of these ops have dims of "
                  "2 or 3 (block digits, C = 3) wherever the runtime puts them. First message of each:"]
        seen = set()
        for s, m in failures:
            if s not in seen:
                seen.add(s)
                lines.append(f"- {s}: `{m}`")
    db_path = ROOT / "tuning" / f"{target}.json"
    if db_path.exists():
        db = json.loads(db_path.read_text())
        lines += ["", f"The tuned schedule is `tuning/{db_path.name}` ({db['date']}, {db['machine']['cpu']}, "
                  f"{db['search']['mode']} search{'' if db['search']['complete'] else ', stopped at its time budget'}, "
                  f"{db['search']['candidates_measured']} measured candidates): generator values "
                  f"`{json.dumps(db['generator'])}`, runtime switch points `{json.dumps(db['runtime'])}`; on its own "
                  f"classes the tuner measured {db['figures']['geometric_mean']['defaults']}x -> "
                  f"{db['figures']['geometric_mean']['tuned']}x memcpy (geometric mean)."]
        if not db["generator"] and not db["runtime"]:
            lines[-1] += (" The search kept every default, so *tuned* and *manual* run the same kernels and switch "
                          "points here: the gap between those two columns is this machine's noise (compare the "
                          "spread column).")
    ptxas = ""
    if ptx and shutil.which("ptxas", path="/usr/local/cuda/bin:" + os.environ.get("PATH", "")):
        r = subprocess.run([shutil.which("ptxas", path="/usr/local/cuda/bin:" + os.environ.get("PATH", "")), "-arch=sm_80",
                            "-v", "-o", "/dev/null", str(ptx[0])], capture_output=True, text=True)
        regs = sorted({int(m) for m in re.findall(r"Used (\d+) registers", r.stderr)})
        ptxas = (f"; `ptxas -arch=sm_80` assembles it ({len(re.findall('Compiling entry', r.stderr))} entry points, "
                 f"{regs[0]}-{regs[-1]} registers)" if r.returncode == 0 and regs else f"; ptxas failed: {r.stderr[:200]}")
    lines += ["", "Anderson2021 (Halide's GPU autoscheduler) is built for the CUDA target "
              f"({ptx[0].name if ptx else 'no PTX found'}{ptxas}); there is no GPU here, so it is not timed."]
    out.write_text("\n".join(lines) + "\n")
    print(f"compare-schedules: wrote {out}")


if __name__ == "__main__":
    main()
