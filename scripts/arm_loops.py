#!/usr/bin/env python3
"""The ARM64 kernels' inner loops, as they really run: proof that NEON is used, and llvm-mca.

For each main pattern, the ARM build of the CLI runs one call under qemu-aarch64 with
`-d in_asm,exec,nochain`: qemu logs every translated block (disassembled, with its symbol) and
every execution of one. The kernel's hottest block that branches back to itself (or to an
earlier block of the kernel) is the pattern's inner loop. Then:

  --check   each loop must move data with NEON vector loads and stores (ld1-ld4, st1-st4,
            ldr/str/ldp/stp of q or d registers) and no scalar element loads or stores, and the
            interleave / deinterleave patterns must use st2-st4 / ld2-ld4 or zip/uzp/trn/tbl;
  --mca     llvm-mca-19 (-mcpu neoverse-n1 and cortex-a76) gives cycles per iteration; bytes
            stored per iteration / cycles = bytes per cycle, beside a plain NEON copy loop
            (ldp/stp of q registers, 64 bytes per iteration), which stands for the limit. Each
            pattern must reach 1 / 1.3 of the copy loop's bytes per cycle.

usage: arm_loops.py --cli build-arm/bin/spacedepth [--check] [--mca] [--markdown FILE] [--keep DIR]
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

QEMU = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
MCA = "llvm-mca-19"
CPUS = ["neoverse-n1", "cortex-a76"]
MODELS = {}  # cpu -> the scheduling model llvm-mca used (from its resource names)
LIMIT = 1.3  # a pattern's loop may be at most this much slower than the copy loop, per byte
# (pattern, cpu) pairs known to miss LIMIT, with the measured reason. --check reports them but does
# not fail on their speed (they must still be NEON loops); any other pair below LIMIT fails.
# LLVM 19 has no Cortex-A76 scheduling model: -mcpu=cortex-a76 is scheduled with the Cortex-A57
# model (its resources are A57Unit*; the script prints the model it found), which charges ld3/st3
# of 8 x 16-bit lanes 3 and 6 cycles of throughput.
KNOWN_SLOW = {
    ("short runs (NHWC D2S DCR u8 C3)", "cortex-a76"):
        "2 ld3 + 6 uzp + 2 st3 per 96 bytes, the minimal NEON sequence (1.00x of copy on Neoverse N1); "
        "LLVM 19's Cortex-A57 model, used for cortex-a76, charges 6 cycles per st3 .8h",
    ("short runs (NHWC S2D DCR u8 C3)", "cortex-a76"):
        "the mirror image, 2 ld3 + 6 zip + 2 st3 per 96 bytes (1.00x on Neoverse N1), same A57-model cost",
}
# The streaming twins: LLVM 22 lowers each 16-byte non-temporal store to STNP of the two d halves,
# after a lane move (mov d, v.d[1]), and keeps the twin's alignment test (tst) beside it.
_STNP_COST = ("each 16-byte streaming store is STNP of two d halves plus a lane move and an alignment "
              "test, 3-4 instructions where the plain kernel has one STR/STP")
KNOWN_SLOW.update({
    ("run copy, streaming twin (NHWC DCR f32 C16)", "cortex-a76"): _STNP_COST,
    ("deinterleave 2, streaming twin (NCHW S2D u8)", "neoverse-n1"): _STNP_COST,
    ("deinterleave 2, streaming twin (NCHW S2D u8)", "cortex-a76"): _STNP_COST,
})

# The microkernels' permutes are their work: a 4 x 4 transpose is 8 (TRN1/TRN2 of 4s, ZIP1/ZIP2
# of 2d) per 64 bytes, a shuffle vector one TBL of up to 4 registers per 16 bytes.
_TILE_COST = ("16 loads, 32 permutes (TRN1/TRN2 then ZIP1/ZIP2 per 4 x 4 block) and 16 q stores per 256 "
              "bytes; the permutes and the stores' data share the two vector pipes, 32 cycles a 256-byte "
              "iteration on the N1 model where the copy loop needs 24")
_TBL_COST = ("one 3-register TBL per 16 output bytes (two cycles on each vector pipe of the N1 model, more on "
             "the A57 model) beside 3 q loads and a q store: 16 bytes an iteration where the copy loop moves 64")
KNOWN_SLOW.update({(name, cpu): cost for name, cost in (("tile transpose (NCHW -> NHWC D2S DCR f32 C16)", _TILE_COST),
                                                         ("shuffle microkernel, TBL (NHWC D2S CRD u8 C3)", _TBL_COST))
                   for cpu in CPUS})

# (name, op, layout, order, dtype, block, input N,C,H,W, what its loop must contain)
# Shapes are small (64 KiB-256 KiB) so qemu's log stays short, but long enough rows that the
# vectorised main loop, not a tail, is the hottest block.
PATTERNS = [
    ("run copy (NHWC DCR f32 C16)", "depth_to_space", "NHWC", "DCR", "float32", "2", (1, 64, 32, 32), None),
    ("short runs (NHWC D2S DCR u8 C3)", "depth_to_space", "NHWC", "DCR", "uint8", "2", (1, 12, 64, 64), None),
    ("short runs (NHWC S2D DCR u8 C3)", "space_to_depth", "NHWC", "DCR", "uint8", "2", (1, 3, 128, 128), None),
    ("interleave 2 (NCHW D2S u8)", "depth_to_space", "NCHW", "DCR", "uint8", "2", (1, 16, 64, 64), "interleave"),
    ("interleave 2 (NCHW D2S f16)", "depth_to_space", "NCHW", "DCR", "float16", "2", (1, 16, 64, 64), "interleave"),
    ("interleave 2 (NCHW D2S f32)", "depth_to_space", "NCHW", "DCR", "float32", "2", (1, 16, 64, 64), "interleave"),
    ("interleave 3 (NCHW D2S f32)", "depth_to_space", "NCHW", "DCR", "float32", "3", (1, 18, 48, 48), "interleave"),
    ("interleave 4 (NCHW D2S f32)", "depth_to_space", "NCHW", "DCR", "float32", "4", (1, 32, 32, 32), "interleave"),
    ("deinterleave 2 (NCHW S2D u8)", "space_to_depth", "NCHW", "DCR", "uint8", "2", (1, 4, 128, 128), "deinterleave"),
    ("deinterleave 2 (NCHW S2D f16)", "space_to_depth", "NCHW", "DCR", "float16", "2", (1, 4, 128, 128), "deinterleave"),
    ("deinterleave 2 (NCHW S2D f32)", "space_to_depth", "NCHW", "DCR", "float32", "2", (1, 4, 128, 128), "deinterleave"),
    ("per-pixel transpose (NHWC D2S CRD u8 C16)", "depth_to_space", "NHWC", "CRD", "uint8", "2", (1, 64, 32, 32), "shuffle"),
    ("per-pixel transpose (NHWC D2S CRD f16 C16)", "depth_to_space", "NHWC", "CRD", "float16", "2", (1, 64, 32, 32), "shuffle"),
    ("per-pixel transpose (NHWC D2S CRD f32 C16)", "depth_to_space", "NHWC", "CRD", "float32", "2", (1, 64, 32, 32), "shuffle"),
    ("per-pixel transpose (NHWC S2D CRD u8 C16)", "space_to_depth", "NHWC", "CRD", "uint8", "2", (1, 16, 64, 64), "shuffle"),
    ("per-pixel transpose (NHWC S2D CRD f32 C16)", "space_to_depth", "NHWC", "CRD", "float32", "2", (1, 16, 64, 64), "shuffle"),
    ("NCHW_VECT_C D2S DCR (i8 C16)", "depth_to_space", "NCHW_VECT_C", "DCR", "int8", "2", (1, 64, 32, 32), None),
    ("NCHW_VECT_C S2D DCR (i8 C16)", "space_to_depth", "NCHW_VECT_C", "DCR", "int8", "2", (1, 16, 64, 64), None),
]
# The streaming-store twins' loops (generators/stream_stores.py: STNP for the output's vector
# stores). Their shapes are under the switch point, so a wisdom line made by MEASURE for the
# shape, its stores field set to `stream`, makes the call run the twin.
STREAM_PATTERNS = [
    ("run copy, streaming twin (NHWC DCR f32 C16)", "depth_to_space", "NHWC", "DCR", "float32", "2", (1, 64, 32, 32), "stnp"),
    # No STNP: LLVM's interleaved-access pass makes the shuffle and store one st2, and the
    # non-temporal hint does not survive; this twin's loop is the plain kernel's.
    ("interleave 2, streaming twin (NCHW D2S f32)", "depth_to_space", "NCHW", "DCR", "float32", "2", (1, 16, 64, 64), None),
    ("deinterleave 2, streaming twin (NCHW S2D u8)", "space_to_depth", "NCHW", "DCR", "uint8", "2", (1, 4, 128, 128), "stnp"),
]

# The hand-written microkernels' loops (runtime/tile_transpose.cpp, runtime/block_shuffle.cpp),
# found in their own functions (KERNEL_SYMBOLS) rather than Halide's. A layout "A>B" converts A to
# B. The ARM rules never take the shuffle (its NEON path is unmeasured), so a wisdom line names it.
MICROKERNEL_PATTERNS = [
    ("tile transpose (NCHW -> NHWC D2S DCR f32 C16)", "depth_to_space", "NCHW>NHWC", "DCR", "float32", "2",
     (1, 64, 32, 32), "shuffle"),
    ("shuffle microkernel, TBL (NHWC D2S CRD u8 C3)", "depth_to_space", "NHWC", "CRD", "uint8", "2",
     (1, 12, 64, 64), "shuffle"),
]
# name -> (what the loop's symbol starts with, the family a wisdom line names or None)
KERNEL_SYMBOLS = {
    MICROKERNEL_PATTERNS[0][0]: ("_ZN10spacedepth6detail12_GLOBAL__N_19neon_loop4tile", None),
    MICROKERNEL_PATTERNS[1][0]: ("_ZN10spacedepth6detail16with_chunk_countIZNS0_9neon_loop", "shuffle"),
}

# The limit: what a copy compiles to on AArch64 (glibc's memcpy loop is ldp/stp of q pairs).
COPY_LOOP = """.Lloop:
    ldp q0, q1, [x1]
    ldp q2, q3, [x1, #32]
    add x1, x1, #64
    stp q0, q1, [x0]
    stp q2, q3, [x0, #32]
    add x0, x0, #64
    subs x2, x2, #1
    b.ne .Lloop
"""

INSN = re.compile(r"^0x([0-9a-f]+):\s+[0-9a-f]{8}\s+(\S+)\s*(.*)$")
TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
BRANCH = re.compile(r"^(b\.\w+|b|cbn?z|tbn?z)$")

VECTOR_MEM = re.compile(r"^(ld[1-4]r?|st[1-4])$|^(ldr|str|ldur|stur|ldp|stp|ldnp|stnp)$")
SCALAR_MEM = re.compile(r"^(ldrb|strb|ldrh|strh|ldurb|sturb|ldurh|sturh|ldrsb|ldrsh|ldrsw)$")
SHUFFLE = re.compile(r"^(zip[12]|uzp[12]|trn[12]|tbl|tbx|ext|rev\d+|ins|dup|xtn2?|uzp)$")


def bench_command(cli, pattern):
    name, op, layout, order, dtype, block, shape, _ = pattern
    layout, _, out_layout = layout.partition(">")
    return [cli, "bench", "--op", op, "--layout", layout, "--order", order, "--dtype", dtype, "--block", block,
            "--threads", "1", "--rounds", "1", "--shape", *map(str, shape)] + \
        (["--out-layout", out_layout] if out_layout else [])


def run(cmd, name):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{name}: {' '.join(cmd)} failed: {r.stderr.strip()}")


def run_logged(cli, pattern, log, wisdom=None):
    """One call of the pattern under qemu's log; with `wisdom`, the plan that wisdom file names."""
    extra = ["--wisdom", wisdom] if wisdom else []
    run(QEMU + ["-d", "in_asm,exec,nochain", "-D", log] + bench_command(cli, pattern) + extra, pattern[0])


def plan_wisdom(cli, pattern, path, stream=False, family=None):
    """A wisdom file whose one plan for the pattern's call is MEASURE's, its stores set to stream
    and its family replaced where asked (a plan line ends: family threads path order stores).

    MEASURE records a plan only when it has timed its candidates within its time limit; under
    qemu on a loaded machine (ctest -j) the default 5 ms did not always suffice, so it gets 500."""
    run(QEMU + bench_command(cli, pattern) + ["--measure", "--time-limit", "500", "--wisdom", path], pattern[0])
    with open(path) as f:
        lines = f.read().splitlines()
    plans = [i for i, line in enumerate(lines) if line.startswith("plan ")]
    if len(plans) != 1 or not lines[plans[0]].endswith(" plain"):
        raise RuntimeError(f"{pattern[0]}: MEASURE wrote no single plain plan to {path} "
                           f"({len(plans)} plan lines: it records none when it could not time the candidates)")
    tokens = lines[plans[0]].split()
    if stream:
        tokens[-1] = "stream"
    if family:
        tokens[-5] = family
    lines[plans[0]] = " ".join(tokens)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def parse_log(log):
    """Blocks {start pc: (symbol, [(pc, mnemonic, operands)])} and executions per start pc."""
    blocks, counts = {}, collections.Counter()
    symbol, insns = None, None
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("IN:"):
                symbol, insns = line[3:].strip(), []
                continue
            m = INSN.match(line)
            if m and insns is not None:
                insns.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
                continue
            if insns:
                blocks.setdefault(insns[0][0], (symbol, insns))
                insns = None
            t = TRACE.match(line)
            if t:
                counts[int(t.group(1), 16)] += 1
    return blocks, counts


def branch_target(insn):
    _, mnem, ops = insn
    if BRANCH.match(mnem):
        m = re.search(r"#0x([0-9a-f]+)\s*$", ops)
        if m:
            return int(m.group(1), 16)
    return None


def hot_loop(blocks, counts, symbol_prefix="spacedepth_"):
    """The kernel's most executed block that closes a loop, with the loop's other blocks."""
    kernel = {pc: b for pc, b in blocks.items() if b[0].startswith(symbol_prefix) and "halide" not in b[0]}
    for pc in sorted(kernel, key=lambda p: -counts[p]):
        symbol, insns = kernel[pc]
        target = branch_target(insns[-1])
        if target is None or target > pc or pc - target > 4096:
            continue
        body = [i for start in sorted(kernel) if target <= start <= pc for i in kernel[start][1]]
        return symbol, counts[pc], body
    return None


def stored_bytes(mnem, ops):
    """Bytes one store instruction writes (0 for anything else)."""
    if not mnem.startswith("st") or mnem.startswith("stlr"):
        return 0
    lst = re.match(r"\{([^}]*)\}(\[\d+\])?", ops)
    if lst:  # st1-st4 with a register list
        regs = [r.strip() for r in lst.group(1).split(",")]
        if lst.group(2):  # one lane per register
            return len(regs) * {"b": 1, "h": 2, "s": 4, "d": 8}[regs[0].split(".")[1]]
        lanes = {"16b": 16, "8b": 8, "8h": 16, "4h": 8, "4s": 16, "2s": 8, "2d": 16, "1d": 8}
        return len(regs) * lanes[regs[0].split(".")[1]]
    size = {"strb": 1, "sturb": 1, "strh": 2, "sturh": 2}.get(mnem)
    if size is None:
        reg = ops.split(",")[0].strip()
        size = {"q": 16, "d": 8, "s": 4, "h": 2, "b": 1, "w": 4, "x": 8}.get(reg[0], 0)
    return size * (2 if mnem in ("stp", "stnp") else 1)


def classify(body):
    mnems = [m for _, m, _ in body]
    vec_mem = [m for _, m, o in body if VECTOR_MEM.match(m) and (m[:2] in ("ld", "st") and
               (re.match(r"^[qd]\d", o) or o.startswith("{")))]
    scalar_mem = [m for _, m, o in body if SCALAR_MEM.match(m) or
                  (m in ("ldr", "str", "ldur", "stur", "ldp", "stp") and re.match(r"^[wx]\d|^[bhs]\d", o) and
                   "[sp" not in o)]
    return {
        "vector_mem": len(vec_mem),
        "scalar_mem": len(scalar_mem),
        "interleave": sum(1 for m in mnems if m in ("st2", "st3", "st4") or m.startswith("zip")),
        "deinterleave": sum(1 for m in mnems if m in ("ld2", "ld3", "ld4") or m.startswith("uzp")),
        "shuffle": sum(1 for m in mnems if SHUFFLE.match(m) or m in ("st2", "st3", "st4", "ld2", "ld3", "ld4")),
        "stored": sum(stored_bytes(m, o) for _, m, o in body),
        "stnp": sum(1 for m in mnems if m == "stnp"),
    }


def as_mca_source(body):
    """qemu's (capstone) disassembly, with branch targets made labels, as llvm-mc input."""
    lines = [".Lloop:"]
    for insn in body:
        _, mnem, ops = insn
        if branch_target(insn) is not None:
            ops = re.sub(r"#0x[0-9a-f]+\s*$", ".Lloop", ops)
        lines.append(f"    {mnem} {ops}")
    return "\n".join(lines) + "\n"


def mca_cycles(source, cpu, workdir):
    path = os.path.join(workdir, "loop.s")
    with open(path, "w") as f:
        f.write(source)
    r = subprocess.run([MCA, "-mtriple=aarch64-linux-gnu", f"-mcpu={cpu}", "-iterations=200", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"llvm-mca failed on\n{source}\n{r.stderr}")
    unit = re.search(r"\[\d+(?:\.\d+)?\]\s+- (\w+?)Unit", r.stdout)
    if unit:
        MODELS[cpu] = {"A57": "Cortex-A57 model", "N1": "Neoverse N1 model"}.get(unit.group(1), unit.group(1) + " model")
    iters = int(re.search(r"Iterations:\s+(\d+)", r.stdout).group(1))
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", r.stdout).group(1))
    return cycles / iters


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="the ARM64 build of the spacedepth CLI")
    ap.add_argument("--check", action="store_true", help="fail unless every loop is NEON")
    ap.add_argument("--mca", action="store_true", help="llvm-mca bytes per cycle against the copy loop")
    ap.add_argument("--markdown", help="write the llvm-mca table here")
    ap.add_argument("--keep", help="keep each loop's assembly in this folder")
    args = ap.parse_args()

    failures = []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        copy_stats = classify([(0, m, o) for m, o in
                               (l.strip().split(None, 1) for l in COPY_LOOP.splitlines()[1:])])
        copy_bpc = {cpu: copy_stats["stored"] / mca_cycles(COPY_LOOP, cpu, tmp) for cpu in CPUS} if args.mca else {}
        for pattern in PATTERNS + STREAM_PATTERNS + MICROKERNEL_PATTERNS:
            name, expect = pattern[0], pattern[7]
            symbol_prefix, family = KERNEL_SYMBOLS.get(name, ("spacedepth_", None))
            log = os.path.join(tmp, "qemu.log")
            wisdom = None
            if pattern in STREAM_PATTERNS or family:
                wisdom = os.path.join(tmp, "wisdom.txt")
                plan_wisdom(args.cli, pattern, wisdom, stream=pattern in STREAM_PATTERNS, family=family)
            run_logged(args.cli, pattern, log, wisdom)
            found = hot_loop(*parse_log(log), symbol_prefix)
            os.remove(log)
            if wisdom:
                os.remove(wisdom)
            if found is None:
                failures.append(f"{name}: no loop found in the kernel")
                continue
            symbol, execs, body = found
            if pattern in STREAM_PATTERNS and "_stream" not in symbol:
                failures.append(f"{name}: the hottest loop is in {symbol}, not a streaming twin")
                continue
            c = classify(body)
            source = as_mca_source(body)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
                with open(os.path.join(args.keep, slug + ".s"), "w") as f:
                    f.write(f"// {name}: {symbol}, executed {execs} times\n" + source)
            problems = []
            if c["vector_mem"] == 0:
                problems.append("no NEON vector loads or stores")
            if c["scalar_mem"] > 0:
                problems.append(f"{c['scalar_mem']} scalar element loads/stores")
            if expect and c[expect] == 0:
                problems.append(f"no {expect} instruction")
            line = (f"{name}: {symbol}, {len(body)} instructions, executed {execs}x; {c['vector_mem']} NEON "
                    f"loads/stores, {c['scalar_mem']} scalar, {c['shuffle']} permutes, {c['stored']} bytes stored")
            row = {"name": name, "insns": len(body), "stored": c["stored"]}
            if args.mca:
                for cpu in CPUS:
                    cyc = mca_cycles(source, cpu, tmp)
                    bpc = c["stored"] / cyc if cyc else 0
                    row[cpu] = (cyc, bpc, bpc / copy_bpc[cpu])
                    line += f"; {cpu}: {cyc:.2f} cycles/iter, {bpc:.1f} B/cycle ({bpc / copy_bpc[cpu]:.2f} of copy)"
                    if bpc * LIMIT < copy_bpc[cpu] and (name, cpu) not in KNOWN_SLOW:
                        problems.append(f"{cpu}: {bpc:.1f} B/cycle, below copy/{LIMIT} = {copy_bpc[cpu] / LIMIT:.1f}")
            for cpu in CPUS if args.mca else []:
                if (name, cpu) in KNOWN_SLOW and row[cpu][2] * LIMIT < 1:
                    line += f" (known {cpu} miss: {KNOWN_SLOW[(name, cpu)]})"
            rows.append(row)
            print(("FAIL " if problems else "ok   ") + line + ("" if not problems else " -- " + "; ".join(problems)))
            if problems:
                failures.append(f"{name}: {'; '.join(problems)}")

    if args.markdown and args.mca:
        out = ["## ARM64 inner loops (llvm-mca)", "",
               "Generated by `make arm-mca` (scripts/arm_loops.py). Each pattern's inner loop is the kernel's "
               "hottest loop in a real call of the ARM64 build under qemu-aarch64 (`-d in_asm,exec`); llvm-mca-19 "
               "gives its cycles per iteration, and the bytes its stores write per iteration over those cycles is "
               "its bytes per cycle. The copy loop (ldp/stp of q-register pairs, 64 bytes per iteration) stands "
               "for the limit. Target: every loop within 1.3x of the copy loop (ratio >= 0.77).", "",
               "| pattern | instructions | bytes/iter | " +
               " | ".join(f"{cpu} ({MODELS.get(cpu, '?')}) cycles/iter | B/cycle | vs copy" for cpu in CPUS) + " |",
               "|---|---|---|" + "---|---|---|" * len(CPUS)]
        out.append("| plain NEON copy loop | 8 | 64 | " + " | ".join(
            f"{64 / copy_bpc[cpu]:.2f} | {copy_bpc[cpu]:.1f} | 1.00" for cpu in CPUS) + " |")
        for r in rows:
            out.append(f"| {r['name']} | {r['insns']} | {r['stored']} | " + " | ".join(
                f"{r[cpu][0]:.2f} | {r[cpu][1]:.1f} | " + (f"**{r[cpu][2]:.2f}**" if r[cpu][2] * LIMIT < 1 else f"{r[cpu][2]:.2f}")
                for cpu in CPUS) + " |")
        out += [""] + [f"Miss, {cpu}: {name}: {why}." for (name, cpu), why in KNOWN_SLOW.items()
                       if any(r["name"] == name and r[cpu][2] * LIMIT < 1 for r in rows)]
        out += ["", "Scheduling models LLVM 19 used: " + ", ".join(f"`-mcpu={cpu}`: {MODELS.get(cpu, '?')}" for cpu in CPUS) +
                ". LLVM 19 has no Cortex-A76 model; its cortex-a76 figures are the Cortex-A57 model's, so the "
                "Neoverse N1 column is the one modern core model here."]
        out += ["", "What it can tell: whether each loop's instruction mix (NEON loads/stores, permutes, loop "
                "overhead) can keep up with a copy on these cores' pipelines, from LLVM's scheduling models. What "
                "it cannot: memory. llvm-mca assumes every load hits L1, so it says nothing about bandwidth, "
                "prefetch, cache-set conflicts or the strided planes a real call reads; only ARM hardware can time "
                "those. The cycle counts are LLVM 19's models, not measurements.", ""]
        with open(args.markdown, "w") as f:
            f.write("\n".join(out))
        print(f"wrote {args.markdown}")

    if failures:
        print("\n".join(["FAILED:"] + failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
