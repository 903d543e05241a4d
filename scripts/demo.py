"""`make demo`: the six seed examples of docs/SPEC.md section 6 through the spacedepth CLI, printed, and
again through the Python module (the build's python/), then a short benchmark table beside memcpy.
usage: demo.py [CLI] [--no-bench]  (default build-demo/bin/spacedepth; scripts/demo.sh sets PYTHONPATH)
SPACEDEPTH_CLI_EMULATOR runs the CLI through an emulator, such as "qemu-x86_64 -cpu Haswell"
(ctest emulated_demo_build, which runs this whole script under the same emulator)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

CLI = "build-demo/bin/spacedepth"
EMULATOR = os.environ.get("SPACEDEPTH_CLI_EMULATOR", "").split()

SEEDS = [  # NHWC [N, H, W, C], DCR, block 2 (TensorFlow's SpaceToDepth / DepthToSpace docs)
    np.array([[[[1], [2]], [[3], [4]]]], dtype=np.float32),
    np.array([[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]], dtype=np.float32),
    np.array([[[[1], [2], [5], [6]], [[3], [4], [7], [8]], [[9], [10], [13], [14]], [[11], [12], [15], [16]]]],
             dtype=np.float32),
]


def run(op, x, tmp):
    src, dst = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
    np.save(src, x)
    subprocess.run([*EMULATOR, CLI, "run", "--op", op, "--block", "2", "--order", "DCR", "--layout", "NHWC",
                    "--in", src, "--out", dst], check=True)
    return np.load(dst)


def fmt(a):
    return np.array2string(a.astype(int), separator=",").replace("\n", "").replace(" ", "")


def main():
    global CLI
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cli", nargs="?", default=CLI, help="the spacedepth CLI (default %(default)s)")
    parser.add_argument("--no-bench", action="store_true", help="the seed examples only, no benchmark table")
    args = parser.parse_args()
    CLI = args.cli
    print("Seed examples (docs/SPEC.md section 6), NHWC, DCR, block 2, through `spacedepth run`:\n")
    with tempfile.TemporaryDirectory() as tmp:
        for x in SEEDS:
            y = run("space_to_depth", x, tmp)
            print(f"space_to_depth {list(x.shape)} {fmt(x)}\n            -> {list(y.shape)} {fmt(y)}")
        for x in SEEDS:
            deep = run("space_to_depth", x, tmp)
            y = run("depth_to_space", deep, tmp)
            print(f"depth_to_space {list(deep.shape)} {fmt(deep)}\n            -> {list(y.shape)} {fmt(y)}")
            assert np.array_equal(y, x)
    try:
        import spacedepth
    except ImportError as e:
        print(f"\nThe Python module is not built here ({e}): skipped.")
    else:
        for x in SEEDS:
            deep = spacedepth.space_to_depth(x, 2)  # NHWC, DCR by default, no copy of x
            assert np.array_equal(spacedepth.depth_to_space(deep, 2), x)
        print(f"\nThe same six through the Python module (`import spacedepth`, {spacedepth.__version__}): "
              "identical.\n    spacedepth.space_to_depth(x, 2) -> " + fmt(spacedepth.space_to_depth(SEEDS[2], 2)))

    info = subprocess.run([*EMULATOR, CLI, "info"], check=True, capture_output=True, text=True).stdout
    targets = next(line.split(": ", 1)[1] for line in info.splitlines() if line.startswith("kernel targets"))
    print(f"\nKernel targets in this build: {targets}" +
          ("\n(this machine's own: `make all` builds every x86 target, as a package would)" if "," not in targets else ""))

    if args.no_bench:
        return
    # 64 MiB tensors (beyond this machine's 32 MiB L3) on one thread, each beside a 1-thread memcpy
    # of the same bytes timed alternately with it: DRAM bandwidth is the stable yardstick. (16 MiB
    # tensors straddle the L3 and the 2-thread copy: their memcpy figures ranged 43-121 GB/s.)
    print("\n`spacedepth bench`, 1 thread, 64 MiB tensors (beyond L3): GB/s (bytes read + written) through a\n"
          "plan, beside a 1-thread memcpy of the same bytes timed alternately with it (median of 7 rounds)\n")
    cases = [
        ("depth_to_space", "DCR", "NHWC", "float32", "1,64,512,512"),
        ("space_to_depth", "DCR", "NHWC", "float32", "1,16,1024,1024"),
        ("depth_to_space", "CRD", "NCHW", "float32", "1,64,512,512"),
        ("space_to_depth", "CRD", "NCHW", "float32", "1,16,1024,1024"),
        ("depth_to_space", "CRD", "NHWC", "float32", "1,64,512,512"),
        ("depth_to_space", "DCR", "NCHW_VECT_C", "int8", "1,64,1024,1024"),
    ]
    print(f"{'case':54} {'MiB':>5} {'GB/s':>7} {'memcpy':>7} {'ratio':>6}")
    for op, order, layout, dtype, shape in cases:
        r = subprocess.run([*EMULATOR, CLI, "bench", "--op", op, "--order", order, "--layout", layout, "--dtype", dtype,
                            "--block", "2", "--shape", shape, "--threads", "1", "--rounds", "7", "--json"],
                           check=True, capture_output=True, text=True)
        j = json.loads(r.stdout)
        name = f"{op} {order} {layout} {dtype} {shape}"
        print(f"{name:54} {j['bytes'] / 2**20:5.0f} {j['gbps']:7.2f} {j['memcpy_gbps']:7.2f} {j['ratio']:6.2f}")


if __name__ == "__main__":
    main()
