#!/usr/bin/env python3
"""`make confirm-tuning`: a tuning database's runtime switch points (or any given ones) against
the defaults of schedules/tunables.json, on every case of the matrix and the model shapes,
interleaved in one process.

The harness's switch_points/ rows (spacedepth_bench --switch_points=<defaults>
--compare_switch_points=<candidate>): every case at 256 B to 64 MiB, 1 and 2 threads, planned
under both. Where the plans differ, the candidate's output is checked against the default's, then
both plans run in 31 alternating rounds (paired_ratio: the median of the candidate's time over
the default's per round), and so does the default plan against a second copy of itself
(control_ratio, the row's own noise). Rows whose plans are the same are identical by
construction and are only counted. Writes bench/switch_points.<target>.json and bench/switch_points.<target>.md,
the section bench/results_table.py includes in bench/RESULTS.md.

  python bench/confirm_switch_points.py --bench build/bin/spacedepth_bench            # this CPU's database
  python bench/confirm_switch_points.py --bench build/bin/spacedepth_bench --set small_max_bytes=2048 \
      --write-database

A candidate is confirmed when, at every size where it changes plans, the changed rows' median
time ratio is at most 0.97 and at least twice as many of them are faster (<= 0.90) as slower
(> 1.03), and no row failed. With --write-database a confirmed --set candidate is merged into the
runtime section of tuning/<target>.json for this CPU's kernel target (created if missing), with
the counts under "confirmed"; the next build applies it (cmake/Tuning.cmake).
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict

from measure_plans import GAIN, NOISE, size_name
from plan_path import cpu_model

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import tune  # noqa: E402  (the tuner's cpu_target)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROW = re.compile(r"switch_points/([^/]+)/bytes:(\d+)/threads:(\d+)")


def defaults():
    tunables = json.load(open(os.path.join(ROOT, "schedules/tunables.json")))
    return {name: t["default"] for name, t in tunables["runtime"].items()}


def cpu_target(bench):
    """The kernel target this CPU runs, from the CLI beside the harness (SPACEDEPTH_MAX_ISA caps it)."""
    return tune.cpu_target(os.path.dirname(os.path.dirname(os.path.abspath(bench))))


def database_path(target):
    return os.path.join(ROOT, "tuning", target + ".json")


def bytes_name(size):
    return size_name(size) if size >= 1024 else f"{size} B"


def spec(points):
    return ",".join(f"{k}={v}" for k, v in sorted(points.items()))


def run(bench, base, candidate, sizes, threads, min_time):
    size_re = "|".join(str(s) for s in sizes)
    thread_re = "|".join(str(t) for t in threads)
    out = subprocess.run([bench, f"--switch_points={spec(base)}", f"--compare_switch_points={spec(candidate)}",
                          "--benchmark_format=json", f"--benchmark_min_time={min_time}",
                          f"--benchmark_filter=^switch_points/.*/bytes:({size_re})/threads:({thread_re})/"],
                         capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    rows = []
    for b in data["benchmarks"]:
        m = ROW.match(b["name"])
        if not m:
            continue
        row = {"case": m.group(1), "bytes": int(m.group(2)), "threads": int(m.group(3)),
               "changed": bool(b.get("changed")), "label": b.get("label", "")}
        if b.get("error_occurred"):
            row["error"] = b.get("error_message", "")
        elif row["changed"]:
            # GB/s counts bytes read + written; each side's time over the row's own memcpy.
            memcpy = b["memcpy_gbps"]
            row.update({k: b[k] for k in ("paired_ratio", "control_ratio", "a_ns", "b_ns")})
            row["a_of_memcpy"] = 2 * b["MiB"] * (1 << 20) / b["a_ns"] / memcpy
            row["b_of_memcpy"] = 2 * b["MiB"] * (1 << 20) / b["b_ns"] / memcpy
        rows.append(row)
    ctx = data["context"]
    ctx["cpu_model"] = cpu_model()
    return ctx, rows


def size_groups(rows):
    groups = defaultdict(list)
    for r in rows:
        groups[(r["bytes"], r["threads"])].append(r)
    return groups


def verdict(rows):
    """Per size and threads where plans changed: (bytes, threads, changed, faster, slower, median),
    and whether the candidate is confirmed (see the module's doc)."""
    counts = []
    for (size, threads), rs in sorted(size_groups(rows).items()):
        ratios = [r["paired_ratio"] for r in rs if r["changed"] and "error" not in r]
        if ratios:
            counts.append((size, threads, len(ratios), sum(x <= 1 - GAIN for x in ratios),
                           sum(x > 1 + NOISE for x in ratios), statistics.median(ratios)))
    ok = (bool(counts) and not any("error" in r for r in rows) and
          all(median <= 1 - NOISE and faster >= 2 * slower for _, _, _, faster, slower, median in counts))
    return counts, ok


def cpu_model_key(bench):
    """This CPU's model as the runtime keys a database's "machines" entries (cpu_probe::model_key()),
    or None off x86, where no entry applies."""
    return tune.cpu_model_key(os.path.dirname(os.path.dirname(os.path.abspath(bench))))


def machine_entry(db, cpu, create=False):
    """The database's "machines" entry for the CPU model `cpu`: switch points measured on that model,
    which the runtime sets on top of the target's (runtime/switch_points.cpp)."""
    for entry in db.get("machines", []):
        if entry.get("cpu") == cpu:
            return entry
    if not create:
        return None
    entry = {"cpu": cpu, "runtime": {}}
    db.setdefault("machines", []).append(entry)
    return entry


def write_database(path, target, candidate, base, counts, ctx, key="confirmed", cpu=None):
    db = json.load(open(path)) if os.path.exists(path) else {
        "schema": "spacedepth-tuning/1", "target": target, "generator": {}, "runtime": {},
        "machine": {"cpu": ctx.get("cpu_model"), "cores": ctx.get("num_cpus")}}
    # A CPU model's entry, or the whole target's values.
    section = machine_entry(db, cpu, create=True) if cpu else db
    section.setdefault("runtime", {}).update({k: v for k, v in candidate.items() if base.get(k) != v})
    section[key] = {
        "by": "bench/confirm_switch_points.py: every case of the matrix and the model shapes at the sizes and threads below, "
              "the candidate's plan against the base's in 31 alternating rounds in one process",
        "base": {k: v for k, v in base.items() if candidate.get(k) != v},
        "date": datetime.date.today().isoformat(),
        "machine": {"cpu": ctx.get("cpu_model"), "cores": ctx.get("num_cpus")},
        "values": {k: v for k, v in candidate.items() if base.get(k) != v},
        "changed_rows": [{"bytes": b, "threads": t, "changed": n, "faster": f, "slower": sl,
                          "median_time_ratio": round(m, 3)} for b, t, n, f, sl, m in counts],
    }
    with open(path, "w") as f:
        f.write(json.dumps(db, indent=2) + "\n")


def render(ctx, rows, base, candidate, source, target, title=None):
    date = datetime.date.today().isoformat()
    moved = {k: v for k, v in candidate.items() if base.get(k) != v}
    base_moved = [k for k, v in base.items() if defaults().get(k) != v]
    against = "the defaults" if not base_moved else "the base, the defaults with " + ", ".join(
        f"`{k}` {base[k]}" + (" (never)" if base[k] >= 1 << 62 else "") for k in base_moved)
    lines = [f"## {title}" if title else
             f"## Switch points against the {'defaults' if not base_moved else 'base'} on the matrix: {target} "
             f"(`make confirm-tuning`){': ' + ', '.join(base_moved) if base_moved else ''}", "",
             f"bench/confirm_switch_points.py, {date}, {ctx.get('host_name')}: {ctx.get('cpu_model')}, "
             f"{ctx.get('num_cpus')} CPUs, kernels of `{target}`. Candidate: {source}, "
             + ", ".join(f"`{k}` {base[k]} -> {v}" for k, v in sorted(moved.items()))
             + " (other switch points at the defaults). Every case of the matrix and the model shapes (bench/cases.cpp) at "
             + ", ".join(bytes_name(b) for b in sorted({r["bytes"] for r in rows}))
             + f" is planned under {against} and under the candidate; where the plans differ, the candidate's "
             "output is checked against the other's and both plans run in 31 alternating rounds in one process, "
             "each call timed after three of its own (time "
             "ratio: the median of the candidate's time over the default's per round), and the default plan "
             "against a second copy of itself (the control: that row's noise). "
             f"\"faster\" and \"slower\" count changed rows with a time ratio <= {1 - GAIN:.2f} and > {1 + NOISE:.2f}; "
             "\"of memcpy\" is the median over the changed rows of each plan's GB/s over the row's own memcpy.", "",
             "| size | threads | rows | plan changed | faster | slower | median ratio | best | worst | "
             "control range | of memcpy: default -> candidate |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    groups = size_groups(rows)
    for (size, threads) in sorted(groups):
        rs = groups[(size, threads)]
        ch = [r for r in rs if r["changed"] and "error" not in r]
        ratios = sorted(r["paired_ratio"] for r in ch)
        control = sorted(r["control_ratio"] for r in ch)
        line = f"| {bytes_name(size)} | {threads} | {len(rs)} | {len(ch)} | "
        if ch:
            line += (f"{sum(x <= 1 - GAIN for x in ratios)} | {sum(x > 1 + NOISE for x in ratios)} | "
                     f"{statistics.median(ratios):.3f} | {ratios[0]:.2f} | {ratios[-1]:.2f} | "
                     f"{control[0]:.2f}-{control[-1]:.2f} | "
                     f"{statistics.median(r['a_of_memcpy'] for r in ch):.2f} -> "
                     f"{statistics.median(r['b_of_memcpy'] for r in ch):.2f} |")
        else:
            line += "– | – | – | – | – | – | – |"
        lines.append(line)
    _, ok = verdict(rows)
    lines += ["", f"**{'Confirmed' if ok else 'Not confirmed'}**: at every size where plans changed, "
              f"a median time ratio <= {1 - NOISE:.2f} and at least twice as many faster rows as slower: "
              + ("yes." if ok else "no.")]
    errors = [r for r in rows if "error" in r]
    if errors:
        lines += ["", "**Rows that failed**: " + "; ".join(f"{r['case']} {r['bytes']} B: {r['error']}" for r in errors)]
    slower = [r for r in rows if r.get("paired_ratio", 0) > 1 + NOISE]
    if slower:
        lines += ["", "**Changed rows slower than the bar**, with the row's control:", "",
                  "| case | size | threads | time ratio | control | candidate's plan |", "|---|---|---|---|---|---|"]
        for r in sorted(slower, key=lambda r: (r["bytes"], r["threads"], r["case"])):
            lines.append(f"| {r['case']} | {bytes_name(r['bytes'])} | {r['threads']} | {r['paired_ratio']:.2f} | "
                         f"{r['control_ratio']:.2f} | {r['label'].split(', dims')[0]} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="this build's spacedepth_bench")
    ap.add_argument("--database", help="tuning database whose runtime switch points are the candidate "
                                       "(default: the one for the kernel target this CPU runs)")
    ap.add_argument("--set", help="the candidate as name=value,... instead of a database")
    ap.add_argument("--base", help="name=value,... on top of the defaults for the plans the candidate is set against "
                                   "(stream_min_bytes=4611686018427387904: never streaming); the report and the "
                                   "database's record are then named after the switch points it moves")
    ap.add_argument("--sizes", default="256,1024,2048,4096,8192,32768,131072,524288,1048576,2097152,67108864",
                    help="bytes, comma-separated")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--min-time", default="0.02")
    ap.add_argument("--json", help="default: bench/switch_points.<target>.json")
    ap.add_argument("--out", help="default: bench/switch_points.<target>.md")
    ap.add_argument("--write-database", action="store_true",
                    help="merge a confirmed --set candidate into tuning/<target>.json for this CPU's target")
    ap.add_argument("--this-cpu", action="store_true",
                    help="the values are this CPU model's: --write-database puts them in the database's \"machines\" "
                         "entry for it (the runtime uses them on that model only), and the report is named after it")
    ap.add_argument("--render-only", action="store_true", help="write the .md again from the .json, measuring nothing")
    ap.add_argument("--title", help="the report's heading (default: what it sets against what)")
    args = ap.parse_args()
    if args.render_only:
        if not args.json:
            sys.exit("--render-only needs --json")
        data = json.load(open(args.json))
    else:
        target = cpu_target(args.bench)
        here = cpu_model_key(args.bench)
        if args.this_cpu and not here:
            sys.exit("--this-cpu: could not tell this CPU's model from `spacedepth info` (its CPU line)")
        cpu = here if args.this_cpu else None
        base = defaults()
        if args.base:
            base.update({k: int(v) for k, v in (item.split("=", 1) for item in args.base.split(","))})
        candidate = dict(base)
        if args.set:
            source = f"`--set {args.set}`"
            candidate.update({k: int(v) for k, v in (item.split("=", 1) for item in args.set.split(","))})
        else:
            path = args.database or database_path(target)
            if not os.path.exists(path):
                sys.exit(f"no tuning database {path}: run `make tune`, or give --database or --set")
            db = json.load(open(path))
            source = f"`{os.path.relpath(path, ROOT)}`"
            candidate.update(db.get("runtime", {}))
            # The runtime's values on this CPU: its model's entry on top of the target's.
            entry = machine_entry(db, here)
            if entry:
                candidate.update(entry.get("runtime", {}))
                source += f" (with its entry for {entry['cpu']})"
        if cpu:
            source += f" for this CPU model only, {cpu}"
        if candidate == base:
            sys.exit(f"{source} sets no switch point away from the defaults: nothing to confirm")
        ctx, rows = run(args.bench, base, candidate, [int(s) for s in args.sizes.split(",")],
                        [int(t) for t in args.threads.split(",")], args.min_time)
        data = {"context": ctx, "rows": rows, "base": base, "candidate": candidate, "source": source, "target": target,
                "moved": sorted(k for k in candidate if base.get(k) != candidate[k]) if args.base else [],
                "cpu": cpu}
    moved = "".join("." + k for k in data.get("moved", []))
    if data.get("cpu"):  # "GenuineIntel family 0x6 model 0xa7" -> ".GenuineIntel-6-a7"
        moved = "." + re.sub(r"(\S+) family 0x(\S+) model 0x(\S+)", r"\1-\2-\3", data["cpu"]) + moved
    counts, ok = verdict(data["rows"])
    if args.write_database and not args.render_only:
        if not args.set:
            sys.exit("--write-database takes its values from --set")
        path = database_path(data["target"])
        if ok:
            write_database(path, data["target"], data["candidate"], data["base"], counts, data["context"],
                           "confirmed" + "".join("_" + k for k in data.get("moved", [])), data.get("cpu"))
            print(f"confirmed: wrote the switch points into {os.path.relpath(path, ROOT)}")
        else:
            print(f"not confirmed: {os.path.relpath(path, ROOT)} left as it was")
    if args.title:
        data["title"] = args.title
    text = render(data["context"], data["rows"], data["base"], data["candidate"], data["source"], data["target"],
                  data.get("title"))
    args.json = args.json or os.path.join(HERE, f"switch_points.{data['target']}{moved}.json")
    args.out = args.out or os.path.join(HERE, f"switch_points.{data['target']}{moved}.md")
    if not args.render_only:
        json.dump(data, open(args.json, "w"), indent=1)
    open(args.out, "w").write(text)
    print("\n".join(line for line in text.splitlines() if line.startswith("| ")))
    print(f"wrote {args.out} and {args.json}")


if __name__ == "__main__":
    main()
