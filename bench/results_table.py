"""Turns the harness's JSON (--benchmark_out) into the markdown table of bench/RESULTS.md: GB/s of
every case beside the same-size memcpy from the same run, and their ratio."""
import json
import re
import sys
from collections import defaultdict


def main(path):
    data = json.load(open(path))
    memcpy = {}
    rows = defaultdict(dict)  # (case, bytes) -> {column: GB/s}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            continue
        gbps = b["bytes_per_second"] / 1e9
        m = re.match(r"memcpy/bytes:(\d+)", b["name"])
        if m:
            memcpy[int(m.group(1))] = gbps
            continue
        m = re.match(r"(spacedepth|naive)/([^/]+)/bytes:(\d+)/threads:(\d+)", b["name"])
        if m:
            kind, case, size, threads = m.group(1), m.group(2), int(m.group(3)), m.group(4)
            rows[(case, size)][kind if kind == "naive" else f"{threads}T"] = gbps
    ctx = data["context"]
    print(f"Host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz, "
          f"date {ctx.get('date')}.\n")
    print("| case | tensor | memcpy GB/s | spacedepth 1T GB/s (ratio) | spacedepth 2T GB/s (ratio) | naive GB/s (ratio) |")
    print("|---|---|---|---|---|---|")
    for (case, size), cols in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        ref = memcpy.get(size)

        def cell(key):
            v = cols.get(key)
            return "–" if v is None or not ref else f"{v:.1f} ({v / ref:.2f})"

        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        print(f"| {case} | {label} | {ref:.1f} | {cell('1T')} | {cell('2T')} | {cell('naive')} |")


if __name__ == "__main__":
    main(sys.argv[1])
