"""End-to-end tests of build/bin/spacedepth (run / info / bench) against the independent numpy
reference of tests/numpy_reference.py (written from docs/SPEC.md)."""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_reference import npy_shape, reference  # noqa: E402

CLI = os.environ.get("SPACEDEPTH_CLI", "build/bin/spacedepth")
# A cross build (make test-arm) runs the CLI through qemu.
EMULATOR = os.environ.get("SPACEDEPTH_CLI_EMULATOR", "").split()


def random_array(shape, dtype, rng):
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


# The CLI takes the layouts' rank spellings; the numpy reference knows the canonical names.
ALIASES = {"NWC": "NHWC", "NDHWC": "NHWC", "NCW": "NCHW", "NCDHW": "NCHW", "NCDHWc8": "NCHWc8", "NCDHWc4": "NCHWc4"}


def canonical(layout):
    return ALIASES.get(layout, layout)


class CliTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.rng = np.random.default_rng(7)

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def cli(self, *args):
        return subprocess.run([*EMULATOR, CLI, *map(str, args)], capture_output=True, text=True)

    def run_op(self, x, op, block, order, layout, out_layout=None, dtype=None):
        np.save(self.path("in.npy"), x)
        args = ["run", "--op", op, "--block", block, "--order", order, "--layout", layout,
                "--in", self.path("in.npy"), "--out", self.path("out.npy")]
        if out_layout:
            args += ["--out-layout", out_layout]
        if dtype:
            args += ["--dtype", dtype]
        r = self.cli(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return np.load(self.path("out.npy"))

    def test_matrix_against_numpy(self):
        cases = [
            ("space_to_depth", "2", "DCR", "NHWC", None, np.float32, (2, 3, 4, 6)),
            ("space_to_depth", "2x3", "CRD", "NCHW", None, np.int16, (1, 5, 4, 9)),
            ("depth_to_space", "2", "CRD", "NCHW", None, np.float64, (2, 8, 3, 5)),
            ("depth_to_space", "3", "DCR", "NHWC", None, np.uint8, (1, 18, 2, 7)),
            ("depth_to_space", "2", "CRD", "NCHW", "NHWC", np.float32, (1, 12, 5, 3)),
            ("space_to_depth", "2", "DCR", "NHWC", "NCHW", np.complex128, (1, 3, 4, 4)),
            ("space_to_depth", "2", "CRD", "NCHW_VECT_C", None, np.int8, (1, 4, 6, 4)),
            ("depth_to_space", "2", "CRD", "NCHW_VECT_C", "NHWC", np.int8, (2, 16, 3, 3)),
            ("space_to_depth", "1", "DCR", "NCHW", None, np.bool_, (1, 3, 3, 3)),
            # Spatial rank 1 and 3 (the rank comes from the .npy), and the blocked layouts.
            ("space_to_depth", "4", "DCR", "NWC", None, np.float32, (2, 3, 12)),
            ("depth_to_space", "3", "CRD", "NCW", "NWC", np.int16, (1, 6, 5)),
            ("space_to_depth", "2x2x2", "DCR", "NDHWC", None, np.float32, (1, 3, 4, 6, 2)),
            ("depth_to_space", "2x1x3", "CRD", "NCDHW", "NDHWC", np.uint8, (2, 12, 2, 3, 2)),
            ("depth_to_space", "2", "DCR", "NCHWc16", "NCHW", np.float32, (1, 16, 3, 5)),
            ("space_to_depth", "2", "CRD", "NCHWc8", "NCHWc16", np.float16, (1, 8, 4, 6)),
            ("depth_to_space", "2", "DCR", "NCDHWc8", "NCDHWc4", np.float64, (1, 32, 2, 2, 3)),
        ]
        for op, block, order, layout, out_layout, dtype, dims in cases:
            with self.subTest(op=op, block=block, order=order, layout=layout, out_layout=out_layout, dtype=dtype):
                x = random_array(npy_shape(dims, canonical(layout)), dtype, self.rng)
                rank = len(dims) - 2
                sizes = tuple(int(v) for v in block.split("x")) if "x" in block else (int(block),) * rank
                want = reference(x, op, sizes, order, canonical(layout), canonical(out_layout or layout))
                got = self.run_op(x, op, block, order, layout, out_layout)
                self.assertEqual(got.dtype, x.dtype)
                self.assertEqual(got.shape, want.shape)
                self.assertTrue(np.array_equal(got.view(np.uint8), want.view(np.uint8)))

    def test_round_trip_is_bit_exact(self):
        x = random_array((2, 6, 8, 5), np.float32, self.rng)
        x.view(np.uint32)[0, 0, 0, :3] = [0x7FC00001, 0x80000000, 0x00000001]  # NaN payload, -0, denormal
        y = self.run_op(x, "space_to_depth", "2", "CRD", "NHWC")
        np.save(self.path("mid.npy"), y)
        r = self.cli("run", "--op", "depth_to_space", "--block", "2", "--order", "CRD", "--layout", "NHWC",
                     "--in", self.path("mid.npy"), "--out", self.path("back.npy"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(np.array_equal(np.load(self.path("back.npy")).view(np.uint32), x.view(np.uint32)))

    def test_dtype_override_for_types_numpy_lacks(self):
        x = random_array((1, 2, 4, 8), np.uint16, self.rng)  # bfloat16 bits
        got = self.run_op(x, "space_to_depth", "2", "DCR", "NCHW", dtype="bfloat16")
        self.assertTrue(np.array_equal(got, reference(x, "space_to_depth", 2, "DCR", "NCHW", "NCHW")))
        q = random_array((1, 1, 2, 2, 4), np.int8, self.rng)  # qint8, NCHW_VECT_C
        got = self.run_op(q, "space_to_depth", "2", "DCR", "NCHW_VECT_C", dtype="qint8")
        self.assertTrue(np.array_equal(got, reference(q, "space_to_depth", 2, "DCR", "NCHW_VECT_C", "NCHW_VECT_C")))

    def test_raw_void_and_long_double_files_move_as_their_width(self):
        # The library's dtype policy, the same as Python's: raw |V2 and 16-byte long doubles move
        # as elements of their width, bytes unchanged; the output keeps the input's dtype.
        for dtype, width in (("|V2", np.uint16), (np.longdouble, None)):
            dt = np.dtype(dtype)
            if width is None and dt.itemsize != 16:
                continue  # long double is 16 bytes on x86-64 and AArch64 Linux
            bits = random_array((1, 4, 6, 2 * dt.itemsize), np.uint8, self.rng)
            x = bits.view(dt)
            got = self.run_op(x, "space_to_depth", "2", "DCR", "NCHW")
            self.assertEqual(got.dtype, dt)
            want = reference(bits.view(np.uint16 if dt.itemsize == 2 else np.complex128), "space_to_depth", 2, "DCR",
                             "NCHW", "NCHW")
            self.assertTrue(np.array_equal(got.view(np.uint8), want.view(np.uint8)))

    def expect_failure(self, args, fragment, out="out.npy"):
        target = self.path(out)
        r = self.cli(*args)
        self.assertNotEqual(r.returncode, 0)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(fragment, lines[0])
        self.assertFalse(os.path.exists(target), "no output file after an error")
        leftovers = [f for f in os.listdir(os.path.dirname(target) or ".") if ".tmp" in f] if os.path.isdir(os.path.dirname(target)) else []
        self.assertEqual(leftovers, [])

    def test_errors_exit_nonzero_with_one_line_and_no_output(self):
        x = random_array((1, 5, 4, 1), np.float32, self.rng)
        np.save(self.path("odd.npy"), x)
        base = ["run", "--op", "space_to_depth", "--block", "2", "--layout", "NHWC", "--out", self.path("out.npy")]
        self.expect_failure(base + ["--in", self.path("odd.npy")], "H % bh == 0")
        self.expect_failure(base + ["--in", self.path("missing.npy")], "cannot open")
        np.save(self.path("good.npy"), random_array((1, 4, 4, 1), np.float32, self.rng))
        data = pathlib.Path(self.path("good.npy")).read_bytes()
        pathlib.Path(self.path("trunc.npy")).write_bytes(data[:-7])
        self.expect_failure(base + ["--in", self.path("trunc.npy")], "truncated")
        pathlib.Path(self.path("corrupt.npy")).write_bytes(b"\x00" * 64)
        self.expect_failure(base + ["--in", self.path("corrupt.npy")], "not a .npy file")
        pathlib.Path(self.path("header.npy")).write_bytes(data[:10] + b"{'descr': <f4 garbage" + data[40:])
        self.expect_failure(base + ["--in", self.path("header.npy")], "corrupt header")
        np.save(self.path("rank2.npy"), random_array((4, 4), np.float32, self.rng))
        self.expect_failure(base + ["--in", self.path("rank2.npy")], "[N,W,C], [N,H,W,C] or [N,D,H,W,C]")
        np.save(self.path("rank6.npy"), random_array((1, 2, 2, 2, 2, 1), np.float32, self.rng))
        self.expect_failure(base + ["--in", self.path("rank6.npy")], "does not fit layout NHWC")
        # A rank-3 file with a rank-2 block: block_d is missing, and the message names it.
        np.save(self.path("vol.npy"), random_array((1, 2, 4, 4, 1), np.float32, self.rng))
        self.expect_failure(base[:4] + ["2x2"] + base[5:] + ["--in", self.path("vol.npy")], "block_d=0")
        self.expect_failure(["run", "--op", "space_to_depth", "--layout", "NCHWc32", "--in", self.path("vol.npy"),
                             "--out", self.path("out.npy")], "is not one of")
        np.save(self.path("dt.npy"), np.zeros((1, 4, 4, 1), dtype="datetime64[s]"))
        self.expect_failure(base + ["--in", self.path("dt.npy")], "unsupported dtype '<M8[s]': datetimes are no tensor elements")
        np.save(self.path("obj.npy"), np.array([None] * 16, dtype=object).reshape(1, 4, 4, 1), allow_pickle=True)
        self.expect_failure(base + ["--in", self.path("obj.npy")], "unsupported dtype '|O'")
        np.save(self.path("str.npy"), np.zeros((1, 4, 4, 1), dtype="<U3"))
        self.expect_failure(base + ["--in", self.path("str.npy")], "unsupported dtype '<U3'")
        np.save(self.path("rec.npy"), np.zeros((1, 4, 4, 1), dtype=[("a", "<f4"), ("b", "u1")]))
        self.expect_failure(base + ["--in", self.path("rec.npy")], "unsupported dtype: a structured")
        self.expect_failure(base + ["--in", self.path("good.npy"), "--dtype", "bfloat16"], "has 2 bytes")
        self.expect_failure(base + ["--in", self.path("good.npy"), "--dtype", "float128"], "unknown dtype")
        np.save(self.path("fortran.npy"), np.asfortranarray(random_array((1, 2, 4, 4, 4), np.float32, self.rng)))
        self.expect_failure(["run", "--op", "space_to_depth", "--block", "2", "--layout", "NCHWc4", "--in",
                             self.path("fortran.npy"), "--out", self.path("out.npy")], "Fortran-order NCHWc4")
        np.save(self.path("f32.npy"), random_array((1, 4, 2, 2), np.float32, self.rng))
        self.expect_failure(["run", "--op", "depth_to_space", "--block", "2", "--layout", "NCHW_VECT_C",
                             "--in", self.path("f32.npy"), "--out", self.path("out.npy")], "with k=4")
        self.expect_failure(["run", "--op", "space_to_depth", "--block", "2", "--layout", "NHWC",
                             "--in", self.path("good.npy"), "--out", "/nonexistent-dir/out.npy"],
                            "cannot create output file", out="/nonexistent-dir/out.npy")
        self.expect_failure(["run", "--op", "space_to_depth", "--block", "2y", "--in", self.path("good.npy"),
                             "--out", self.path("out.npy")], "--block must be")
        self.expect_failure(["run", "--op", "shuffle", "--in", "a", "--out", self.path("out.npy")], "--op")

    def test_arguments_are_refused_in_plain_terms(self):
        np.save(self.path("good.npy"), random_array((1, 4, 4, 1), np.float32, self.rng))
        run = ["run", "--op", "space_to_depth", "--in", self.path("good.npy"), "--out", self.path("out.npy")]
        # The thread range in plain numbers (CLI11's own check printed DBL_MAX), and no silent cap.
        for threads in ("-1", "1000", "2x", "99999999999999999999"):
            self.expect_failure(run + ["--threads", threads], f"--threads: must be 0 to 256, got {threads}")
        # A block too large for 64 bits is refused, not saturated; one that fits is the library's.
        self.expect_failure(run + ["--block", "99999999999999999999"], "--block: 99999999999999999999 does not fit")
        self.expect_failure(run + ["--block", "2x18446744073709551616"], "18446744073709551616 does not fit")
        self.expect_failure(run + ["--block", "9223372036854775807"], "overflows int64")
        for bad in ("2x", "x2", "2x2x2x2", "-", "2 "):
            self.expect_failure(run + ["--block", bad], "--block must be B, BHxBW or BDxBHxBW")
        bench = ["bench", "--op", "space_to_depth", "--rounds", "1"]
        self.expect_failure(bench + ["--shape", "1,2"], "--shape takes 3 to 5 values (N,C,W or N,C,H,W or N,C,D,H,W), got 2")
        self.expect_failure(bench + ["--shape", "1,2,3,4,5,6"], "--shape")
        for limit in ("-1", "60001", "1e400", "2.5"):
            self.expect_failure(bench + ["--shape", "1,4,4,4", "--measure", "--time-limit", limit],
                                f"--time-limit: must be 0 to 60000 ms, got {limit}")
        help_text = self.cli("bench", "--help").stdout
        self.assertIn("--shape N,C,[D,][H,]W", help_text)
        self.assertIn("3 to 5 values", help_text)
        self.assertNotIn(" x 3", help_text)

    def test_out_naming_the_input_needs_force(self):
        x = random_array((1, 4, 4, 2), np.float32, self.rng)
        np.save(self.path("x.npy"), x)
        before = pathlib.Path(self.path("x.npy")).read_bytes()
        same = os.path.join(self.dir.name, ".", "x.npy")  # another spelling of the same file
        r = self.cli("run", "--op", "space_to_depth", "--in", self.path("x.npy"), "--out", same)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr.strip().splitlines(), [f"spacedepth: error: --out {same} is the input file: "
                                                         "pass --force to replace it with the result"])
        self.assertEqual(pathlib.Path(self.path("x.npy")).read_bytes(), before)
        r = self.cli("run", "--op", "space_to_depth", "--in", self.path("x.npy"), "--out", same, "--force")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(np.array_equal(np.load(self.path("x.npy")), reference(x, "space_to_depth", 2, "DCR", "NHWC", "NHWC")))

    def test_fortran_order_and_big_endian_files(self):
        # A Fortran-order file is a strided view of its payload; the output is C order.
        for layout, dims in [("NHWC", (2, 3, 4, 6)), ("NCHW", (1, 5, 4, 8)), ("NCDHW", (1, 2, 2, 4, 6))]:
            x = np.asfortranarray(random_array(npy_shape(dims, canonical(layout)), np.float32, self.rng))
            got = self.run_op(x, "space_to_depth", "2", "CRD", layout)
            want = reference(np.ascontiguousarray(x), "space_to_depth", 2, "CRD", canonical(layout),
                             canonical(layout))
            self.assertTrue(np.array_equal(got.view(np.uint8), want.view(np.uint8)))
            self.assertTrue(got.flags.c_contiguous)
        # Big-endian files: the op moves bytes, so the output keeps the input's byte order.
        for dtype in (">f4", ">i2", ">c16", ">f8"):
            x = random_array((1, 6, 4, 3), np.dtype(dtype).newbyteorder("="), self.rng).astype(dtype)
            got = self.run_op(x, "depth_to_space", "1x3", "DCR", "NCHW")
            self.assertEqual(got.dtype, np.dtype(dtype))
            self.assertTrue(np.array_equal(got, reference(x, "depth_to_space", (1, 3), "DCR", "NCHW", "NCHW")))

    def test_existing_output_survives_an_error(self):
        np.save(self.path("odd.npy"), random_array((1, 5, 4, 1), np.float32, self.rng))
        pathlib.Path(self.path("keep.npy")).write_bytes(b"old")
        r = self.cli("run", "--op", "space_to_depth", "--block", "2", "--in", self.path("odd.npy"), "--out", self.path("keep.npy"))
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(pathlib.Path(self.path("keep.npy")).read_bytes(), b"old")

    def test_bench_json(self):
        r = self.cli("bench", "--op", "depth_to_space", "--shape", "1,16,32,32", "--dtype", "float32", "--block", "2",
                     "--order", "DCR", "--layout", "NHWC", "--threads", "1", "--rounds", "3", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        for key in ("gbps", "memcpy_gbps", "ratio", "seconds", "oneshot_seconds"):
            self.assertGreater(j[key], 0)
        self.assertAlmostEqual(j["ratio"], j["gbps"] / j["memcpy_gbps"], places=6)
        # ratio and seconds are the plan path's; the one-shot call is timed beside it.
        self.assertAlmostEqual(j["gbps"], 2 * j["bytes"] / j["seconds"] / 1e9, places=3)
        r = self.cli("bench", "--op", "depth_to_space", "--shape", "1,6,32,32", "--block", "2")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("C % (bh*bw) == 0", r.stderr)
        # Rank 3: the block and shape as given, in JSON.
        r = self.cli("bench", "--op", "space_to_depth", "--shape", "1,4,8,8,8", "--block", "2x2x2", "--layout",
                     "NDHWC", "--threads", "1", "--rounds", "1", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual(j["block"], [2, 2, 2])
        self.assertEqual(j["shape"], [1, 4, 8, 8, 8])

    def test_bench_measure_and_wisdom(self):
        wisdom = self.path("wisdom.txt")
        args = ["bench", "--op", "depth_to_space", "--shape", "1,12,16,16", "--block", "2", "--threads", "1",
                "--rounds", "1", "--json", "--wisdom", wisdom]
        # A second of budget: under qemu (the emulated-CPU suites) a call is slow enough that the
        # default 5 ms may not hold two candidates.
        r = self.cli(*args, "--measure", "--time-limit", "1000")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("; measured ", json.loads(r.stdout)["variant"])
        with open(wisdom) as f:
            text = f.read()
        self.assertTrue(text.startswith("spacedepth-wisdom 1\n"), text)
        self.assertIn("\nplan depth_to_space DCR 1 2 2 2 1 float32 NHWC ", text)
        r = self.cli(*args)  # the wisdom file's choice, without measuring
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("; from wisdom", json.loads(r.stdout)["variant"])
        with open(wisdom, "w") as f:
            f.write(text.replace("\ncores ", "\ncores 9"))
        r = self.cli(*args)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("was measured with cores '9", r.stderr)

    def test_info(self):
        r = self.cli("info", "--op", "space_to_depth", "--shape", "1,16,64,64", "--layout", "NCHW", "--block", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        # The version is project(VERSION) in CMakeLists.txt, its one source.
        cmake = (pathlib.Path(__file__).resolve().parent.parent / "CMakeLists.txt").read_text()
        version = re.search(r"project\(spacedepth VERSION (\d+\.\d+\.\d+)", cmake).group(1)
        self.assertIn(f"spacedepth {version}\n", r.stdout)
        self.assertIn("kernel targets", r.stdout)
        self.assertIn("CPU features seen", r.stdout)
        self.assertIn("call: general u32 kernel", r.stdout)
        r = self.cli("info", "--op", "depth_to_space", "--shape", "1,32,8,8", "--layout", "NCHWc8", "--block", "2",
                     "--order", "CRD")
        self.assertEqual(r.returncode, 0, r.stderr)
        # A Halide kernel's plan, or the shuffle microkernel's (this 8 KiB call of 4x4 planes).
        self.assertRegex(r.stdout, r"call: (.* kernel, dims|shuffle microkernel)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
