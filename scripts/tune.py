#!/usr/bin/env python3
"""spacedepth tune: a benchmark-driven search of the schedule parameters and runtime switch
points (schedules/tunables.json) for this machine's kernel target, on the shape classes of
bench/shape_classes.json. Writes the tuning database tuning/<target>.json, which the build
reads (cmake/Tuning.cmake). `make tune` runs it and then rebuilds; README "Tuning".

How it measures. A separate build (build-tune/) for the one target, reusing the main build's
generator, is rebuilt for every generator candidate; only the kernels of the element width
being tuned change, so a candidate costs one or two generator runs. Each candidate runs
spacedepth_bench --shapes on the classes, several repetitions, each row beside a memcpy of the
same size in the same run; the figure is the median of kernel GB/s / memcpy GB/s, and
measurement repeats until every class's spread (max/min - 1 of the repetitions' ratios) is
under --tolerance or --max-rounds is reached. The score of a candidate is the geometric mean
of its classes' ratios; a candidate replaces the best one only if it raises the score by more
than --min-gain and leaves no class more than --tolerance below the best one's figure.

Search. Coordinate descent from the defaults: each parameter in turn over its candidate values
with the others at their best so far. --search small: the classes marked "small", one pass,
the declared values next to the default (about 5 minutes on 2 cores). --search full: every
class, every declared value, two passes.

Stop and resume. Every measured candidate is appended to build-tune/journal.jsonl as soon as
it is measured; a later run (same search, shapes and target) takes measured candidates from
it instead of measuring them again. --fresh starts over.
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
WIDTH_OF_DTYPE = {"uint8": "u8", "int8": "u8", "float16": "u16", "bfloat16": "u16", "uint16": "u16", "int16": "u16",
                  "float32": "u32", "int32": "u32", "uint32": "u32", "float64": "u64", "int64": "u64", "uint64": "u64"}


def log(msg):
    tqdm.write(msg, file=sys.stderr)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


CMAKE = shutil.which("cmake") or str(ROOT / ".venv/bin/cmake")


def cpu_target(source_build):
    """The kernel target this CPU runs, as the main build's CLI reports it."""
    out = run([str(Path(source_build) / "bin/spacedepth"), "info"], capture_output=True).stdout
    m = re.search(r"^target this CPU runs: (\S+)", out, re.M)
    if not m or m.group(1) == "none":
        sys.exit("could not tell this CPU's kernel target from `spacedepth info`")
    return m.group(1)


def configure_single_target(build, source_build, target, *options):
    """A build of the kernels for one target that reuses the main build's generator."""
    if (Path(build) / "build.ninja").exists():
        return
    log(f"configuring {build} for {target}")
    run([CMAKE, "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
         f"-DSPACEDEPTH_TARGETS={target}", f"-Dspacedepth-halide_generators_ROOT={Path(source_build).resolve()}",
         "-DSPACEDEPTH_BUILD_TESTS=OFF", "-DSPACEDEPTH_BUILD_CLI=OFF", "-DSPACEDEPTH_OPENCL=OFF", *options],
        stdout=subprocess.DEVNULL)


def build_target(build, target):
    log_file = Path(build) / "build.log"
    with open(log_file, "w") as f:
        r = subprocess.run([CMAKE, "--build", str(build), "--target", target], stdout=f, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f"the build in {build} failed; see {log_file}")


class Tuner:
    def __init__(self, args):
        self.args = args
        self.tunables = json.loads((ROOT / "schedules/tunables.json").read_text())
        self.classes = json.loads(Path(args.shapes).read_text())["classes"]
        if args.search == "small":
            self.classes = [c for c in self.classes if c.get("small")]
        if not self.classes:
            sys.exit(f"tune: no shape classes to tune on in {args.shapes}")
        self.build = Path(args.build_dir).resolve()
        self.target = args.target or cpu_target(args.source_build)
        self.arch = "arm" if self.target.startswith("arm") else "x86"
        self.journal_path = self.build / "journal.jsonl"
        self.journal = {}
        self.bench_runs = 0

    # ---- the tuning build
    def configure(self):
        if self.args.fresh and self.build.exists():
            shutil.rmtree(self.build)
        (self.build / "db").mkdir(parents=True, exist_ok=True)
        self.write_candidate_db({}, {})
        configure_single_target(self.build, self.args.source_build, self.target,
                                f"-DSPACEDEPTH_TUNING_DIR={self.build / 'db'}", "-DSPACEDEPTH_CUDA=OFF")

    def write_candidate_db(self, generator, runtime):
        db = {"schema": "spacedepth-tuning/1", "target": self.target, "generator": generator, "runtime": runtime}
        path = self.build / "db/candidate.json"
        text = json.dumps(db, indent=1, sort_keys=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)

    # ---- measuring
    def measure(self, classes, switch_points):
        """Median ratio to memcpy per class, repeated until stable."""
        shapes = self.build / "shapes.json"
        shapes.write_text(json.dumps({"classes": classes}))
        samples = {c["name"]: [] for c in classes}
        for _ in range(self.args.max_rounds):
            out = self.build / "bench.json"
            cmd = [str(self.build / "bin/spacedepth_bench"), f"--shapes={shapes}",
                   f"--benchmark_repetitions={self.args.repetitions}", f"--benchmark_min_time={self.args.min_time}",
                   f"--benchmark_out={out}", "--benchmark_out_format=json", "--benchmark_report_aggregates_only=false"]
            if switch_points:
                cmd.append("--switch_points=" + ",".join(f"{k}={v}" for k, v in sorted(switch_points.items())))
            run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.bench_runs += 1
            for b in json.loads(out.read_text())["benchmarks"]:
                if b.get("run_type") != "iteration" or "error_occurred" in b:
                    continue
                name = b["name"].split("/")[1]
                samples[name].append(b["bytes_per_second"] / 1e9 / b["best_memcpy_gbps"])
            spread = max(max(s) / min(s) - 1 for s in samples.values())
            if spread <= self.args.tolerance:
                break
        return {name: sorted(s)[len(s) // 2] for name, s in samples.items()}

    @staticmethod
    def score(figures):
        return math.exp(sum(math.log(v) for v in figures.values()) / len(figures))

    def evaluate(self, width, generator, runtime, classes):
        key = json.dumps({"width": width, "generator": generator, "runtime": runtime,
                          "classes": sorted(c["name"] for c in classes)}, sort_keys=True)
        if key in self.journal:
            return self.journal[key]
        self.write_candidate_db({width: generator} if generator else {}, {})
        build_target(self.build, "spacedepth_bench")
        figures = self.measure(classes, runtime)
        self.journal[key] = figures
        with open(self.journal_path, "a") as f:
            f.write(json.dumps({"key": key, "figures": figures}) + "\n")
        return figures

    def load_journal(self):
        if self.journal_path.exists():
            for line in self.journal_path.read_text().splitlines():
                try:
                    entry = json.loads(line)
                    self.journal[entry["key"]] = entry["figures"]
                except (ValueError, KeyError):
                    pass  # a line cut short by an interrupted run
            if self.journal:
                log(f"tune: resuming, {len(self.journal)} measured candidates in {self.journal_path}")

    # ---- the search
    def default(self, name, kind, width):
        d = self.tunables[kind][name]["default"]
        if isinstance(d, dict):
            d = d.get(self.arch, d.get(width))
        return d

    def candidates(self, name, kind, width):
        values = self.tunables[kind][name]["values"]
        if self.args.search == "full":
            return values
        d = self.default(name, kind, width)  # small: the neighbours of the default
        i = values.index(d) if d in values else 0
        return [values[j] for j in (i - 1, i, i + 1) if 0 <= j < len(values)]

    def better(self, figures, best_figures, best_score):
        s = self.score(figures)
        no_loss = all(figures[n] >= best_figures[n] * (1 - self.args.tolerance) for n in figures)
        return s > best_score * (1 + self.args.min_gain) and no_loss

    def search(self):
        widths = sorted({WIDTH_OF_DTYPE[c["dtype"]] for c in self.classes})
        passes = 2 if self.args.search == "full" else 1
        gen_names = list(self.tunables["generator"])
        run_names = list(self.tunables["runtime"])
        steps = []
        for width in widths:
            for _ in range(passes):
                steps += [(width, "generator", n, v) for n in gen_names for v in self.candidates(n, "generator", width)]
        steps += [(None, "runtime", n, v) for _ in range(passes) for n in run_names
                  for v in self.candidates(n, "runtime", None)]
        best_gen = {w: {} for w in widths}
        best_run = {}
        results = {}
        bar = tqdm(total=len(steps) + len(widths), desc=f"tune {self.args.search}", unit="cand", file=sys.stderr,
                   dynamic_ncols=True, mininterval=0.5)
        for width in widths:
            classes = [c for c in self.classes if WIDTH_OF_DTYPE[c["dtype"]] == width]
            default_figures = self.evaluate(width, {}, {}, classes)
            results[width] = {"default": default_figures, "best": default_figures}
            bar.update(1)
            bar.set_postfix_str(f"{width} default {self.score(default_figures):.3f}x memcpy")
        for width, kind, name, value in steps:
            classes = self.classes if width is None else [c for c in self.classes if WIDTH_OF_DTYPE[c["dtype"]] == width]
            if kind == "generator":
                trial_gen, trial_run = dict(best_gen[width], **{name: value}), best_run
                best_figures = results[width]["best"]
            else:
                trial_gen, trial_run = None, dict(best_run, **{name: value})
                best_figures = None
            if kind == "generator":
                figures = self.evaluate(width, trial_gen, trial_run, classes)
                if self.better(figures, best_figures, self.score(best_figures)):
                    best_gen[width] = trial_gen
                    results[width]["best"] = figures
            else:  # runtime switch points: all widths' classes at once, every width at its best kernels
                figures, base = {}, {}
                for w in widths:
                    cls = [c for c in self.classes if WIDTH_OF_DTYPE[c["dtype"]] == w]
                    figures.update(self.evaluate(w, best_gen[w], trial_run, cls))
                    base.update(self.evaluate(w, best_gen[w], best_run, cls))
                if self.better(figures, base, self.score(base)):
                    best_run = trial_run
                    for w in widths:
                        results[w]["best"] = {n: figures[n] for n in results[w]["best"]}
            bar.update(1)
            overall = self.score({n: v for w in widths for n, v in results[w]["best"].items()})
            bar.set_postfix_str(f"{kind} {name}={value}  best {overall:.3f}x memcpy")
        bar.close()
        return best_gen, best_run, results

    def write_database(self, best_gen, best_run, results, seconds):
        out = Path(self.args.out or ROOT / "tuning" / f"{self.target}.json")
        figures = {}
        for w, r in results.items():
            for name in r["default"]:
                figures[name] = {"defaults": round(r["default"][name], 3), "tuned": round(r["best"][name], 3)}
        cpu = "unknown"
        try:
            cpu = re.search(r"^model name\s*:\s*(.*)$", Path("/proc/cpuinfo").read_text(), re.M).group(1)
        except (OSError, AttributeError):
            pass
        db = {
            "schema": "spacedepth-tuning/1",
            "target": self.target,
            "generator": {w: g for w, g in best_gen.items() if g},
            "runtime": best_run,
            "figures": {"unit": "kernel GB/s / memcpy GB/s of the same size in the same run (median)",
                        "classes": figures},
            "machine": {"cpu": cpu, "cores": os.cpu_count(), "os": platform.platform()},
            "date": datetime.date.today().isoformat(),
            "search": {"mode": self.args.search, "shapes": os.path.relpath(self.args.shapes, ROOT),
                       "candidates_measured": len(self.journal), "benchmark_runs": self.bench_runs,
                       "seconds": round(seconds)},
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(db, indent=2) + "\n")
        return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--search", choices=["small", "full"], default="small")
    p.add_argument("--shapes", default=str(ROOT / "bench/shape_classes.json"), help="shape classes (JSON)")
    p.add_argument("--target", help="Halide target to tune (default: the one this CPU runs)")
    p.add_argument("--out", help="database to write (default: tuning/<target>.json)")
    p.add_argument("--source-build", default=str(ROOT / "build"), help="the main build (its generator and CLI)")
    p.add_argument("--build-dir", default=str(ROOT / "build-tune"), help="the tuning build and journal")
    p.add_argument("--fresh", action="store_true", help="forget earlier measurements and start over")
    p.add_argument("--repetitions", type=int, default=3, help="benchmark repetitions per round")
    p.add_argument("--min-time", type=float, default=0.05, help="seconds per repetition")
    p.add_argument("--max-rounds", type=int, default=3, help="rounds of repetitions until a class is stable")
    p.add_argument("--tolerance", type=float, default=0.04, help="spread counted as stable; allowed loss per class")
    p.add_argument("--min-gain", type=float, default=0.01, help="score gain a candidate needs to be kept")
    args = p.parse_args()
    tuner = Tuner(args)
    start = time.time()
    tuner.configure()
    if not args.fresh:
        tuner.load_journal()
    try:
        best_gen, best_run, results = tuner.search()
    except KeyboardInterrupt:
        log(f"\ntune: stopped; {len(tuner.journal)} candidates kept in {tuner.journal_path}; run again to resume")
        sys.exit(130)
    out = tuner.write_database(best_gen, best_run, results, time.time() - start)
    all_default = [v["defaults"] for v in json.loads(out.read_text())["figures"]["classes"].values()]
    all_tuned = [v["tuned"] for v in json.loads(out.read_text())["figures"]["classes"].values()]
    geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    print(f"tune: wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: geometric mean "
          f"{geo(all_default):.3f}x -> {geo(all_tuned):.3f}x memcpy over {len(all_tuned)} classes, "
          f"{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
