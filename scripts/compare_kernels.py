#!/usr/bin/env python3
"""Are two builds' generated kernels the same? For a change meant to leave every kernel alone
(a refactor of the generator, the schedules' source or the build), run it on the generators/
folders of a build before and after:

    scripts/compare_kernels.py OLD/build/generators NEW/build/generators [--rename OLD=NEW ...]

It prints the md5 of every kernel object, header and assembly file on both sides. A file with
the same md5 is byte-identical. With --rename (a kernel renamed, say permute_copy=general), a
renamed file counts as identical up to the name when its disassembly with relocations is equal
after the rename, and so is every other section's content (a name string may shrink, with the
alignment padding after it absorbing the difference); for assembly and headers, the text after
the rename, up to whitespace and the sizes of string constants. Exits 1 if anything else
differs."""
import argparse
import glob
import hashlib
import os
import re
import subprocess
import sys
import tempfile

KINDS = (".o", ".a", ".h", ".s", ".device_code")


def md5(path):
    return hashlib.md5(open(path, "rb").read()).hexdigest()


def binutils(path, tool):
    """objdump or objcopy for the object's machine: the host's, or binutils-aarch64-linux-gnu's."""
    with open(path, "rb") as f:
        header = f.read(20)
    aarch64 = header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == 183  # EM_AARCH64
    return ("aarch64-linux-gnu-" if aarch64 else "") + tool


def sections(path):
    out = subprocess.check_output([binutils(path, "objdump"), "-h", path]).decode().splitlines()
    return [p[1] for p in (line.split() for line in out) if len(p) >= 7 and p[0].isdigit()]


def section_bytes(path, sec):
    with tempfile.NamedTemporaryFile() as t:
        subprocess.run([binutils(path, "objcopy"), "-O", "binary", "--only-section=" + sec, path, t.name], check=True)
        return open(t.name, "rb").read()


def disassembly(path):
    return subprocess.check_output([binutils(path, "objdump"), "-d", "-r", "--no-show-raw-insn", path]).decode().splitlines()[3:]


def same_up_to(old, new, renames):
    def rename(text):
        for a, b in renames:
            text = text.replace(a, b)
        return text

    if not old.endswith(".o"):
        # Text (headers, assembly): equal after the rename, with comment alignment and the sizes
        # of string constants (which hold the name) ignored.
        def lines(path, f):
            out = []
            for line in open(path, errors="replace").read().splitlines():
                line = " ".join(f(line).split())
                out.append(re.sub(r"^\.size \.Lstr\.\d+, \d+$", ".size .Lstr", line))
            return out

        return lines(old, rename) == lines(new, lambda x: x)
    if [rename(x) for x in disassembly(old)] != disassembly(new):
        return False
    if [rename(s) for s in sections(old)] != sections(new):
        return False
    for sec in sections(old):
        if sec.startswith(".text"):
            continue
        data, want = section_bytes(old, sec), section_bytes(new, rename(sec))
        plain = padded = data
        for a, b in renames:
            a, b = a.encode(), b.encode()
            plain = plain.replace(a, b)
            pad = max(len(a) - len(b), 0)
            padded = re.sub(re.escape(a) + rb"([^\0]*)\0", lambda m: b + m.group(1) + b"\0" * (1 + pad), padded)
        if want not in (plain, padded):
            return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rename", action="append", default=[], help="OLD=NEW, a renamed part of kernel names")
    args = ap.parse_args()
    renames = [tuple(r.split("=", 1)) for r in args.rename]
    listing = lambda d: sorted(os.path.basename(f) for f in glob.glob(os.path.join(d, "*")) if f.endswith(KINDS))
    old_files, new_files = listing(args.old), set(listing(args.new))
    counts = {"identical": 0, "identical up to the name": 0, "different": 0, "missing": 0}
    for name in old_files:
        new_name = name
        for a, b in renames:
            new_name = new_name.replace(a, b)
        old_path, new_path = os.path.join(args.old, name), os.path.join(args.new, new_name)
        if new_name not in new_files:
            verdict = "missing"
        elif md5(old_path) == md5(new_path):
            verdict = "identical"
        elif new_name != name and same_up_to(old_path, new_path, renames):
            verdict = "identical up to the name"
        else:
            verdict = "different"
        new_files.discard(new_name)
        counts[verdict] += 1
        new_md5 = md5(new_path) if verdict != "missing" else "-"
        print(f"{md5(old_path)}  {new_md5}  {name}" + (f" -> {new_name}" if new_name != name else "") + f"  [{verdict}]")
    for name in sorted(new_files):
        print(f"-  {md5(os.path.join(args.new, name))}  {name}  [new]")
    print(", ".join(f"{n} {k}" for k, n in counts.items()) + f", {len(new_files)} new")
    return 1 if counts["different"] or counts["missing"] or new_files else 0


if __name__ == "__main__":
    sys.exit(main())
