#!/usr/bin/env python3
"""The streaming-store twin of a generated CPU kernel, from the LLVM bitcode the generator emits.

Halide 21 has no directive for non-temporal stores (Func::stream_stores() came after it), so this
step rewrites the kernel's LLVM IR (docs/DESIGN.md "Streaming stores"):

  * every vector store into the buffer `output` (its TBAA type chain reaches "output") of 16 bytes
    or more goes through a helper that stores non-temporally where the address is aligned to the
    vector's size. Where it is not (heads, tails and misaligned rows), x86 stores it as aligned
    non-temporal pieces (halves or quarters; on an 8-byte word an 8-byte MOVNTI, 16-byte pieces
    and a MOVNTI; vectors of 32 bytes or more on a 4-byte word as 4- and 8-byte MOVNTIs around
    the 16-byte pieces: see x86_pieces()), and ARM64 with STNP on an 8-byte word; off those it
    stores plainly.
    Narrower vectors stay plain: they write part of a line, and a streaming store to part of a
    line costs a partial write-combining flush;
  * on x86, every function that stores non-temporally ends with SFENCE before each return, so
    the stores are fenced before the call returns (the kernels are serial: each task of a
    parallel call is a kernel call of its own, runtime/execute.cpp). AArch64's STNP needs no fence (its stores are ordered like
    plain ones except for address dependencies of loads, which the kernel has none of);
  * on x86 with --prefetch-bytes N, every vector load of 16 bytes or more from the buffer `input`
    is preceded by a PREFETCHT1 of the address N bytes further on. Past the cache a one-thread
    kernel waits on its loads between its stores, and the hardware prefetcher keeps too few lines
    in flight to hide that: prefetching 4 KiB ahead into L2 made the twins 1.11-1.23x faster at
    64 MiB on 1 thread (median over the 83-case matrix; 1.09x the model shapes, 1.10x 2 threads)
    on a 2-core Intel Xeon VM (AVX-512), 2026-12-07; 1 and 2 KiB ahead gained 1.14x and 1.18x,
    8 KiB 1.13x, PREFETCHT0 1.12x. A prefetch never faults, so the ones past the input's end are
    harmless; the plain kernels, which run in cache, have none;
  * every global symbol of the kernel is renamed from <kernel> to <kernel>_stream, so both
    kernels link into one library.

The helpers are inlined by opt (always-inline) and the module is compiled by llc: an LLVM that
reads the generator's bitcode (Halide 21 is LLVM 21; Debian 12 ships llvm-22, which reads it).

usage: stream_stores.py --kernel NAME --llvm-bin DIR --out-dir DIR [--prefetch-bytes N]
                        [--wrapper OBJ --objcopy PATH --alias FROM=TO ...] BC...
Each input NAME-<target>.bc becomes NAME_stream-<target>.o in --out-dir; --wrapper renames the
multi-target wrapper's symbols into NAME_stream_wrapper.o, whose entries for paths without a twin
keep the plain kernel's path (the baseline) or call another path's twin (--alias).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

VALUE = r'(%"[^"]*"|%[-\w.$]+)'  # an SSA name, quoted where Halide's names hold '$'
STORE = re.compile(r"^(\s*)store <(\d+) x (i\d+|float|double|half|bfloat)> " + VALUE + r", ptr " + VALUE +
                   r", align \d+, !tbaa !(\d+)(.*)$")
META = re.compile(r"^!(\d+) = !\{(.*)\}$")
TYPE_NODE = re.compile(r'^!"([^"]*)"(?:, !(\d+))?')
TAG_NODE = re.compile(r"^!(\d+), !(\d+), i64 0$")
OUTPUT_BUFFER = re.compile(r"^output(\$\d+)?$")  # Halide may uniquify the buffer's name: output$1
INPUT_BUFFER = re.compile(r"^input(\$\d+)?$")
LOAD = re.compile(r"^(\s*)" + VALUE + r" = load <(\d+) x (i\d+|float|double|half|bfloat)>, ptr " + VALUE +
                  r", align \d+, !tbaa !(\d+)")
DEFINE = re.compile(r"^define ")
BITS = {"half": 16, "bfloat": 16, "float": 32, "double": 64}


def element_bits(t):
    return BITS[t] if t in BITS else int(t[1:])


def buffer_tags(lines, buffer):
    """The TBAA tags whose type chain reaches the node of `buffer` (Halide's per-buffer root)."""
    meta = {}
    for line in lines:
        m = META.match(line)
        if m:
            meta[m.group(1)] = m.group(2)

    def reaches(node, depth=0):
        m = TYPE_NODE.match(meta.get(node, ""))
        if not m or depth > 64:
            return False
        return buffer.match(m.group(1)) is not None or (m.group(2) is not None and reaches(m.group(2), depth + 1))

    tags = set()
    for node, body in meta.items():
        m = TAG_NODE.match(body)
        if m and reaches(m.group(1)):
            tags.add(node)
    return tags, max((int(k) for k in meta), default=0)


def x86_pieces(vbytes, nt_node):
    # A vector that starts off its own boundary (heads, tails, rows that start inside lines: a C3
    # row of f32) is stored as non-temporal pieces as wide as its address allows: halves or
    # quarters (MOVNTDQ) where it starts on 32 or 16 bytes; on an 8-byte word one 8-byte MOVNTI,
    # 16-byte pieces and a MOVNTI; on a 4-byte word 4- and 8-byte MOVNTIs up to 16 bytes, 16-byte
    # pieces, and MOVNTIs again at the end, for AVX2 and AVX-512 vectors (rows of 2,364 bytes: u8
    # NCHW C3, f32 NCHW C3 b4).
    # So every line it touches skips the read-for-ownership.
    # Copying 64 MiB with 64-byte vectors (2-core AMD EPYC, AVX-512, GB/s read + written):
    # aligned 40-42; 32 bytes past a line, halves 40-43; 16 past, quarters 37-40; 8 past, MOVNTI +
    # 16-byte pieces 33-39; all 8-byte MOVNTIs (LLVM's lowering of an underaligned non-temporal
    # store) 28-31; plain stores 27-32; 4 past a line, 4-byte MOVNTIs 20-21.
    words = vbytes // 4

    def piece(label, start, size):
        v, q = f"%{label}.{start}", f"%{label}.{start}.p"
        lanes = ", ".join(f"i32 {start // 4 + k}" for k in range(size // 4))
        out = [f"  {q} = getelementptr inbounds i8, ptr %p, i64 {start}",
               f"  {v}.s = shufflevector <{words} x i32> %w, <{words} x i32> poison, <{size // 4} x i32> <{lanes}>"]
        if size <= 8:
            scalar = f"i{size * 8}"
            out += [f"  {v} = bitcast <{size // 4} x i32> {v}.s to {scalar}",
                    f"  store {scalar} {v}, ptr {q}, align {size}, !nontemporal !{nt_node}"]
        else:
            out.append(f"  store <{size // 4} x i32> {v}.s, ptr {q}, align {size}, !nontemporal !{nt_node}")
        return out

    def word_pieces(residue):
        # From an address `residue` past a 16-byte boundary: the widest of 16, 8 and 4 bytes that
        # the address is aligned to and that the vector has left.
        starts, at = [], 0
        while at < vbytes:
            size = next(n for n in (16, 8, 4) if (residue + at) % n == 0 and at + n <= vbytes)
            starts.append((at, size))
            at += size
        return starts

    branches = []
    size = min(vbytes // 2, 64)
    while size >= 16:  # halves, quarters, ...: aligned pieces of `size` bytes
        label = f"by{size}"
        branches.append((size - 1, 0, label, [line for start in range(0, vbytes, size) for line in piece(label, start, size)]))
        size //= 2
    # 8 bytes past 16: an 8-byte head, 16-byte pieces, an 8-byte tail. On a 4-byte word,
    # off 8 bytes (4 or 12 past 16), vectors of 32 bytes or more: a 16-byte vector would go out as
    # three MOVNTIs, and the SSE4.1 twin ran no faster than with those vectors plain (D2S and
    # S2D NCHW u8 C3 at 64 MiB, 0.59-0.70 -> 0.46-0.71 of the streaming copy; AVX2 0.62-0.65 ->
    # 0.83-0.85 for the D2S).
    for residue in (8, 4, 12) if vbytes >= 32 else (8,):
        label = f"words{residue}"
        branches.append((15, residue, label,
                         [line for start, n in word_pieces(residue) for line in piece(label, start, n)]))
    return branches


def helper(name, vtype, vbytes, nt_node, x86):
    """The store of one vector into the output: non-temporal where the address is aligned to the
    vector; else the first of `branches` (address mask, the residue it must leave, label, body)
    that the address matches; plain where none does. ARM64's one branch: STNP of the vector on an 8-byte word."""
    branches = (x86_pieces(vbytes, nt_node) if x86 else
                [(7, 0, "words", [f"  store {vtype} %v, ptr %p, align 8, !nontemporal !{nt_node}"])])
    tests, blocks = [], []
    for i, (mask, residue, label, body) in enumerate(branches):
        otherwise = f"test{i + 1}" if i + 1 < len(branches) else "plain"
        tests.append(f"test{i}:\n"
                     f"  %r{i} = and i64 %a, {mask}\n"
                     f"  %on{i} = icmp eq i64 %r{i}, {residue}\n"
                     f"  br i1 %on{i}, label %{label}, label %{otherwise}")
        blocks.append("\n".join([f"{label}:"] + body + ["  ret void"]))
    return (f"define internal void @{name}({vtype} %v, ptr %p) alwaysinline {{\n"
            f"  %a = ptrtoint ptr %p to i64\n"
            f"  %w = bitcast {vtype} %v to <{vbytes // 4} x i32>\n"
            f"  %m = and i64 %a, {vbytes - 1}\n"
            f"  %aligned = icmp eq i64 %m, 0\n"
            f"  br i1 %aligned, label %stream, label %test0\n"
            f"stream:\n"
            f"  store {vtype} %v, ptr %p, align {vbytes}, !nontemporal !{nt_node}\n"
            f"  ret void\n" + "\n".join(tests) + "\n" + "\n".join(blocks) + "\n"
            f"plain:\n"
            f"  store {vtype} %v, ptr %p, align 1\n"
            f"  ret void\n"
            f"}}\n")


def rewrite(text, kernel, x86, prefetch_bytes=0):
    lines = text.split("\n")
    tags, last_node = buffer_tags(lines, OUTPUT_BUFFER)
    input_tags = buffer_tags(lines, INPUT_BUFFER)[0] if x86 and prefetch_bytes > 0 else set()
    prefetches = 0
    nt_node = last_node + 1
    helpers = {}
    out = []
    func_streams = False  # the current function stores non-temporally: fence its returns
    streamed = 0
    for line in lines:
        if DEFINE.match(line):
            func_streams = False
        m = LOAD.match(line) if input_tags else None  # no prefetch asked: no load needs reading
        if m and m.group(6) in input_tags and int(m.group(3)) * element_bits(m.group(4)) >= 128:
            ahead = f"%spacedepth.prefetch.{prefetches}"
            prefetches += 1
            out.append(f"{m.group(1)}{ahead} = getelementptr i8, ptr {m.group(5)}, i64 {prefetch_bytes}")
            out.append(f"{m.group(1)}call void @llvm.prefetch.p0(ptr {ahead}, i32 0, i32 2, i32 1)")  # read, L2
        m = STORE.match(line)
        if m and m.group(6) in tags:
            lanes, elem = int(m.group(2)), m.group(3)
            vbytes = lanes * element_bits(elem) // 8
            if vbytes >= 16 and vbytes & (vbytes - 1) == 0:
                vtype = f"<{lanes} x {elem}>"
                name = f"spacedepth.stream.v{lanes}{elem}"
                helpers[name] = helper(name, vtype, vbytes, nt_node, x86)
                line = f"{m.group(1)}call void @{name}({vtype} {m.group(4)}, ptr {m.group(5)})"
                func_streams = True
                streamed += 1
        if x86 and func_streams and re.match(r"^\s*ret ", line):
            out.append("  call void @llvm.x86.sse.sfence()")
        out.append(line)
    text = "\n".join(out)
    # Rename the kernel's globals (functions, argv and metadata tables); strings are left alone.
    text = re.sub(r'@("?)' + re.escape(kernel) + r'(?=[-_"\s(,])', r"@\g<1>" + kernel + "_stream", text)
    text += "\n" + "".join(helpers.values())
    if x86:
        text += "declare void @llvm.x86.sse.sfence()\n"
    if prefetches:
        text += "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)\n"
    text += f"!{nt_node} = !{{i32 1}}\n"
    return text, streamed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--llvm-bin", required=True, help="folder with llvm-dis, opt and llc (or their -NN names)")
    ap.add_argument("--llvm-suffix", default="", help="e.g. -22 for Debian's llc-22")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--prefetch-bytes", type=int, default=0,
                    help="x86: prefetch each vector load from `input` this many bytes ahead (0: none)")
    ap.add_argument("--wrapper", help="the multi-target wrapper object to rename")
    ap.add_argument("--objcopy", default="objcopy")
    ap.add_argument("--alias", action="append", default=[],
                    help="FROM=TO (the plain kernel's path symbols): the wrapper's entry FROM calls the twin of TO, "
                         "under an alias named after FROM (objcopy renames each symbol to one name only)")
    ap.add_argument("bitcode", nargs="+")
    args = ap.parse_args()
    tool = lambda t: os.path.join(args.llvm_bin, t + args.llvm_suffix)
    stream = lambda plain: args.kernel + "_stream" + plain[len(args.kernel):]
    aliases = [a.split("=", 1) for a in args.alias]
    renamed = []
    for bc in args.bitcode:
        base = os.path.basename(bc)
        if not base.startswith(args.kernel) or not base.endswith(".bc"):
            sys.exit(f"stream_stores: {bc} is not a bitcode file of {args.kernel}")
        suffix = base[len(args.kernel):-3]  # -<target>, or empty for a single-target kernel
        text = subprocess.run([tool("llvm-dis"), bc, "-o", "-"], check=True, capture_output=True, text=True).stdout
        x86 = 'target triple = "x86_64' in text
        text, streamed = rewrite(text, args.kernel, x86, args.prefetch_bytes)
        for alias, built in aliases:
            if built == args.kernel + suffix:  # KernelFn's signature (runtime/kernel_registry.h)
                text += f'@"{stream(alias)}" = alias i32 (ptr, ptr, i1, ptr), ptr @"{stream(built)}"\n'
                renamed.append(f"{alias} {stream(alias)}")
        if streamed == 0:
            sys.exit(f"stream_stores: {bc}: no vector store into `output` found; the generator's IR changed")
        obj = os.path.join(args.out_dir, f"{args.kernel}_stream{suffix}.o")
        with tempfile.TemporaryDirectory() as tmp:
            ll = os.path.join(tmp, "k.ll")
            with open(ll, "w") as f:
                f.write(text)
            inlined = os.path.join(tmp, "k.bc")
            subprocess.run([tool("opt"), "-passes=always-inline", ll, "-o", inlined], check=True)
            subprocess.run([tool("llc"), "-O3", "-filetype=obj", "-relocation-model=pic", inlined, "-o", obj],
                           check=True)
        if suffix:
            renamed.append(f"{args.kernel}{suffix} {args.kernel}_stream{suffix}")
    if args.wrapper:
        syms = [f"{args.kernel}{s} {args.kernel}_stream{s}" for s in ("", "_argv", "_metadata")] + renamed
        with tempfile.NamedTemporaryFile("w", suffix=".syms", delete=False) as f:
            f.write("\n".join(syms) + "\n")
        try:
            subprocess.run([args.objcopy, f"--redefine-syms={f.name}", args.wrapper,
                            os.path.join(args.out_dir, f"{args.kernel}_stream_wrapper.o")], check=True)
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    main()
