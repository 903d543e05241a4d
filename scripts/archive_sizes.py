#!/usr/bin/env python3
"""Kernel archive sizes per Halide target (README, "Size and build time").

Reads the static archives of an install tree (or a build's lib/) with `ar tv` and groups the
members by the target named in their file name: a multi-target kernel archive holds one object
per target plus a small dispatch wrapper. Prints a Markdown table. tests/check_install.sh and
tests/check_regenerate.sh print it for each build they check.

usage: archive_sizes.py LIB_DIR [LIB_DIR...]
"""
import argparse
import collections
import pathlib
import re
import subprocess

MEMBER = re.compile(r"^spacedepth_(?P<kernel>\w+?_u\d+)(?:-(?P<target>.+?))?(?:-user_context.*)?(?:\.a)?\.o$")


def members(archive):
    out = subprocess.run(["ar", "tv", str(archive)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.split()
        yield fields[-1], int(fields[2])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib_dirs", nargs="+", type=pathlib.Path,
                    help="an install tree's lib/, or a build's lib/ (and generators/ for a cross build)")
    args = ap.parse_args()
    sizes = collections.Counter()
    for archive in sorted(a for d in args.lib_dirs for a in d.glob("*spacedepth*.a")):
        name = archive.name.removeprefix("lib").removesuffix(".a")
        if name in ("spacedepth_schedules", "spacedepth_test_support"):
            continue
        for member, size in members(archive):
            if name == "spacedepth":
                sizes["libspacedepth.a: validation, view algebra, dispatch, APIs"] += size
                continue
            if name == "spacedepth_halide_runtime":
                sizes["the CPU kernels' Halide runtime"] += size
                continue
            if name in ("spacedepth_cuda", "spacedepth_opencl"):
                sizes[f"lib{name}.a: the {name.split('_')[1]} component's glue"] += size
                continue
            if name.startswith("spacedepth_halide_runtime_"):
                sizes[f"the {name.rsplit('_', 1)[1]} kernels' Halide runtime"] += size
                continue
            m = MEMBER.match(member)
            if not m:
                continue
            api = re.match(r"(cuda|opencl)_", m["kernel"])
            if member.endswith("_wrapper.o"):
                sizes["x86 dispatch wrappers"] += size
            elif api:
                sizes[f"{api[1]} kernels (GPU)"] += size
            else:
                sizes[m["target"] or "CPU kernels (one target)"] += size
    print("| kernels for | KiB |")
    print("|---|---:|")
    for key, size in sizes.items():
        print(f"| {key} | {size / 1024:.0f} |")
    print(f"| **all archives** | **{sum(sizes.values()) / 1024:.0f}** |")


if __name__ == "__main__":
    main()
