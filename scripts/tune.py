#!/usr/bin/env python3
"""spacedepth tune: a benchmark-driven search of the schedule parameters and runtime switch
points (schedules/tunables.json) for this machine's kernel target, on the shape classes of
bench/shape_classes.json. Writes the tuning database tuning/<target>.json, which the build
reads (cmake/Tuning.cmake). `make tune` runs it and then rebuilds; README "Tuning".

How it measures. A separate build (build-tune/) for the one target, reusing the main build's
generator, is rebuilt for every generator candidate (only the kernels whose values change are
generated again). Each candidate runs spacedepth_bench --shapes on the classes, --repetitions
times, each row beside a memcpy of the same size timed in the same run; a class's figure is the
median of kernel GB/s / memcpy GB/s. A round is repeated (up to --max-rounds) until every class's
figures lie within --stable-spread of each other. A candidate's score is the geometric mean over
the classes it can change (those whose plan or kernel it changes: none, and it is skipped); it
replaces the best one only if the score rises by more than --min-gain, no class falls more than
--tolerance below its best figure, and both hold again when the candidate and the best one are
measured once more, back to back; so noise alone keeps the defaults.

Search. Coordinate descent from the defaults: each parameter in turn over its candidate values,
the others at their best so far; cheapest first (runtime switch points need no rebuild, then the
transpose tiles, then the general kernel). Generator values are tuned per kernel width, for the
widths the classes' calls really use (the runtime may run a float32 run as 8-byte elements).
--search small: the classes marked "small", the declared values next to each default, one pass,
within --budget seconds (240 by default, build included). --search full: every class, every
declared value, two passes, no time limit.

Stop and resume. Every measured candidate is appended to build-tune/journal.jsonl at once. A
later run takes measured candidates from it instead of measuring them again, so it replays the
same decisions in seconds and goes on where the last one stopped (Ctrl-C, or the budget).
--fresh starts over.
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


def cpu_model_key(source_build):
    """This CPU's model as a database's "machines" entries name it (the CLI's "CPU:" line), or None."""
    out = run([str(Path(source_build) / "bin/spacedepth"), "info"], capture_output=True).stdout
    m = re.search(r"^CPU: (\S+ family 0x[0-9a-f]+ model 0x[0-9a-f]+)", out, re.M)
    return m.group(1) if m else None


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
        self.shapes_file = self.build / "shapes.json"
        self.completed = False
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
    def measure(self, switch_points):
        """Per class: the median ratio to memcpy, and the width of the kernel its calls use."""
        samples = {c["name"]: [] for c in self.classes}
        kernel_width = {}
        for _ in range(self.args.max_rounds):
            out = self.build / "bench.json"
            run(self.bench_command(switch_points, f"--benchmark_repetitions={self.args.repetitions}",
                                   f"--shape_seconds={self.args.min_time}", f"--benchmark_out={out}",
                                   "--benchmark_out_format=json"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.bench_runs += 1
            for b in json.loads(out.read_text())["benchmarks"]:
                if b.get("run_type") != "iteration" or "error_occurred" in b:
                    continue
                name = b["name"].split("/")[1]
                samples[name].append(b["bytes_per_second"] / 1e9 / b["best_memcpy_gbps"])
                m = re.search(r"(general|transpose|small) u(\d+) kernel", b.get("label", ""))
                kernel_width[name] = f"u{m.group(2)}" if m and m.group(1) != "small" else None
            # Stable: every class's repetitions within --stable-spread of each other.
            if all(s and max(s) / min(s) - 1 <= self.args.stable_spread for s in samples.values()):
                break
        missing = [n for n, s in samples.items() if not s]
        if missing:
            sys.exit(f"tune: no figures for {missing}; see {self.build / 'bench.json'}")
        return {n: sorted(s)[len(s) // 2] for n, s in samples.items()}, kernel_width

    def bench_command(self, switch_points, *args):
        """spacedepth_bench on the shape classes with these runtime switch points."""
        cmd = [str(self.build / "bin/spacedepth_bench"), f"--shapes={self.shapes_file}", *args]
        if switch_points:
            cmd.append("--switch_points=" + ",".join(f"{k}={v}" for k, v in sorted(switch_points.items())))
        return cmd

    def plans(self, switch_points):
        """Each class's plan (family, width, loop nest, serial or parallel) under these switch points."""
        return json.loads(run(self.bench_command(switch_points, "--print_plans"), capture_output=True).stdout)

    @staticmethod
    def score(figures):
        return math.exp(sum(math.log(v) for v in figures.values()) / len(figures))

    def evaluate(self, generator, runtime, attempt=0):
        """generator: {width: {name: value}}, runtime: {name: value} -> (figures, kernel widths).
        attempt > 0: a further, independent measurement of the same candidate."""
        generator = {w: g for w, g in generator.items() if g}
        key = json.dumps({"generator": generator, "runtime": runtime, "classes": sorted(c["name"] for c in self.classes),
                          "target": self.target, "attempt": attempt}, sort_keys=True)
        if key not in self.journal:
            self.write_candidate_db(generator, {})
            build_target(self.build, "spacedepth_bench")
            figures, widths = self.measure(runtime)
            self.journal[key] = {"figures": figures, "widths": widths}
            with open(self.journal_path, "a") as f:
                f.write(json.dumps({"key": key, **self.journal[key]}) + "\n")
        entry = self.journal[key]
        return entry["figures"], entry["widths"]

    def load_journal(self):
        if self.journal_path.exists():
            for line in self.journal_path.read_text().splitlines():
                try:
                    entry = json.loads(line)
                    self.journal[entry["key"]] = {"figures": entry["figures"], "widths": entry["widths"]}
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
        d = self.default(name, kind, width)
        if self.args.search == "full":
            return [v for v in values if v != d]
        i = values.index(d) if d in values else 0  # small: the neighbours of the default
        return [values[j] for j in (i - 1, i + 1) if 0 <= j < len(values)]

    def better(self, figures, best_figures, names):
        gain = self.score({n: figures[n] for n in names}) / self.score({n: best_figures[n] for n in names})
        no_loss = all(figures[n] >= best_figures[n] * (1 - self.args.tolerance) for n in names)
        return gain > 1 + self.args.min_gain and no_loss

    def search(self, deadline):
        self.shapes_file.write_text(json.dumps({"classes": self.classes}))
        default_figures, widths = self.evaluate({}, {})
        # The generator parameters of each kernel width the classes' calls use (the runtime may
        # widen a float32 run to 8-byte elements), on those classes; the small kernel has none.
        tuned_widths = sorted({w for w in widths.values() if w})
        passes = 2 if self.args.search == "full" else 1
        steps = []
        for _ in range(passes):
            # Cheapest first: switch points need no rebuild, transpose tiles rebuild a small kernel.
            steps += [("runtime", None, n, v) for n in self.tunables["runtime"] for v in self.candidates(n, "runtime", None)]
            for w in tuned_widths:
                names = sorted(self.tunables["generator"], key=lambda n: not n.startswith("tile"))
                steps += [("generator", w, n, v) for n in names for v in self.candidates(n, "generator", w)]
        best_gen, best_run, best = {w: {} for w in tuned_widths}, {}, default_figures
        best_plans = self.plans({})
        bar = tqdm(total=len(steps), desc=f"tune {self.args.search}", unit="cand", file=sys.stderr, mininterval=0.5,
                   dynamic_ncols=True)
        bar.set_postfix_str(f"defaults {self.score(best):.3f}x memcpy")
        done = skipped = 0
        for kind, width, name, value in steps:
            if time.time() > deadline:
                log(f"tune: time budget reached after {done} of {len(steps)} candidates; run again to go on")
                break
            # The classes this candidate can change: a switch point, those whose plan it changes;
            # a generator value, those whose calls run that family's kernel at that width. None:
            # nothing to build or measure.
            if kind == "runtime":
                trial_gen, trial_run = best_gen, dict(best_run, **{name: value})
                trial_plans = self.plans(trial_run)
                names = [n for n in best if trial_plans[n] != best_plans[n]]
            else:
                trial_gen, trial_run = dict(best_gen, **{width: dict(best_gen[width], **{name: value})}), best_run
                family = "transpose" if name.startswith("tile") else "general"
                names = [n for n, plan in best_plans.items() if re.search(rf"\b{family} {width} kernel", plan)]
            if names:
                figures, _ = self.evaluate(trial_gen, trial_run)
                accept = self.better(figures, best, names)
                if accept:
                    # A win must hold up: both measured once more, back to back, and the second
                    # pair must show it too (noise on this VM reaches 10 %, and a single outlier
                    # would carry a mean of the two).
                    again, _ = self.evaluate(trial_gen, trial_run, attempt=1)
                    base, _ = self.evaluate(best_gen, best_run, attempt=1)
                    accept = self.better(again, base, names)
                    figures = {n: (figures[n] + again[n]) / 2 for n in figures}
                if accept:
                    best_gen, best_run = trial_gen, trial_run
                    best = dict(best, **{n: figures[n] for n in names})
                    best_plans = self.plans(best_run)
            else:
                skipped += 1
            done += 1
            bar.update(1)
            bar.set_postfix_str(f"{name}={value}{' (' + width + ')' if width else ''}: {len(names)} classes  "
                                f"best {self.score(best):.3f}x memcpy (defaults {self.score(default_figures):.3f}x)")
        bar.close()
        log(f"tune: {done} candidates, {skipped} of them changing no class's kernel (not measured)")
        self.completed = done == len(steps)
        return best_gen, best_run, default_figures, best, widths

    def cpu_model(self):
        return cpu_model_key(self.args.source_build)

    def write_database(self, best_gen, best_run, default_figures, best, widths, seconds):
        out = Path(self.args.out or ROOT / "tuning" / f"{self.target}.json")
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
            "figures": {
                "unit": "kernel GB/s / memcpy GB/s of the same size in the same run (median of the repetitions)",
                "geometric_mean": {"defaults": round(self.score(default_figures), 3), "tuned": round(self.score(best), 3)},
                "classes": {n: {"kernel": widths.get(n) or "small", "defaults": round(default_figures[n], 3),
                                "tuned": round(best[n], 3)} for n in best},
            },
            "machine": {"cpu": cpu, "cores": os.cpu_count(), "os": platform.platform()},
            "date": datetime.date.today().isoformat(),
            "search": {"mode": self.args.search, "complete": self.completed,
                       "shapes": os.path.relpath(self.args.shapes, ROOT), "candidates_measured": len(self.journal),
                       "benchmark_runs_this_session": self.bench_runs, "seconds_this_session": round(seconds)},
        }
        # Other CPU models' switch points (`make confirm-tuning` --this-cpu) stay; this model's
        # entry goes, since the values just tuned here are the target's now.
        if out.exists():
            here = self.cpu_model()
            others = [m for m in json.loads(out.read_text()).get("machines", []) if m.get("cpu") != here]
            if others:
                db["machines"] = others
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(db, indent=2) + "\n")
        return out, db


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--search", choices=["small", "full"], default="small")
    p.add_argument("--shapes", default=str(ROOT / "bench/shape_classes.json"), help="shape classes (JSON)")
    p.add_argument("--target", help="Halide target to tune (default: the one this CPU runs)")
    p.add_argument("--out", help="database to write (default: tuning/<target>.json)")
    p.add_argument("--source-build", default=str(ROOT / "build"), help="the main build (its generator and CLI)")
    p.add_argument("--build-dir", default=str(ROOT / "build-tune"), help="the tuning build and journal")
    p.add_argument("--fresh", action="store_true", help="forget earlier measurements and start over")
    p.add_argument("--budget", type=float, help="seconds for this run (default: 240 for small, none for full)")
    p.add_argument("--repetitions", type=int, default=3, help="benchmark repetitions per round")
    p.add_argument("--min-time", type=float, default=0.02, help="seconds per repetition (about)")
    p.add_argument("--max-rounds", type=int, default=2, help="rounds of repetitions until every class is stable")
    p.add_argument("--stable-spread", type=float, default=0.08, help="max/min - 1 of a class's figures counted as stable")
    p.add_argument("--tolerance", type=float, default=0.05, help="loss allowed on any one class")
    p.add_argument("--min-gain", type=float, default=0.02, help="gain of the geometric mean a candidate needs")
    args = p.parse_args()
    tuner = Tuner(args)
    start = time.time()
    tuner.configure()
    if not args.fresh:
        tuner.load_journal()
    budget = args.budget if args.budget is not None else (240 if args.search == "small" else 1e9)
    try:
        result = tuner.search(start + budget)
    except KeyboardInterrupt:
        log(f"\ntune: stopped; {len(tuner.journal)} candidates kept in {tuner.journal_path}; run again to resume")
        sys.exit(130)
    out, db = tuner.write_database(*result, time.time() - start)
    g = db["figures"]["geometric_mean"]
    print(f"tune: wrote {out}: {g['defaults']:.3f}x -> {g['tuned']:.3f}x memcpy (geometric mean over "
          f"{len(db['figures']['classes'])} classes), generator {db['generator'] or 'defaults'}, "
          f"runtime {db['runtime'] or 'defaults'}, {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
