"""The tuner's decisions (scripts/tune.py), with a model of the machine in place of the build and
the benchmark: which candidates it measures, which it keeps, how it treats noise, and that a
stopped search resumes to the same result. (ctest tune_search; the real build and benchmark it
drives are exercised by ctest tuning_database and bench_smoke.)"""
import argparse
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import tune  # noqa: E402

CLASSES = [
    {"name": "small_general", "dtype": "float32", "bytes": 16384, "small": True},
    {"name": "big_general", "dtype": "float32", "bytes": 1 << 26, "small": True},
    {"name": "big_transpose", "dtype": "float32", "bytes": 1 << 22, "small": True},
]


class ModelTuner(tune.Tuner):
    """Figures from a model: base ratios times the gains `effects` gives each (class, name, value);
    `first_time_bonus` adds a gain to a candidate's first measurement only (noise)."""

    def __init__(self, args, effects, first_time_bonus=None):
        super().__init__(args)
        self.effects = effects
        self.first_time_bonus = first_time_bonus or {}
        self.measured = []  # (generator, runtime) of every measurement

    def plans(self, switch_points):
        small = switch_points.get("small_max_bytes", 4096)
        parallel = switch_points.get("parallel_min_bytes", 262144)
        out = {}
        for c in self.classes:
            family = "small" if c["bytes"] < small else "transpose" if "transpose" in c["name"] else "general"
            out[c["name"]] = f"{family} u32 kernel, dims 16:1:1, {'parallel' if c['bytes'] >= parallel else 'serial'}"
        return out

    def measure(self, switch_points):
        generator = json.loads((self.build / "db/candidate.json").read_text())["generator"].get("u32", {})
        settings = {**generator, **switch_points}
        key = json.dumps(settings, sort_keys=True)
        first = all(json.dumps({**g, **r}, sort_keys=True) != key for g, r in self.measured)
        self.measured.append((generator, switch_points))
        plans = self.plans(switch_points)
        figures = {}
        for c in self.classes:
            f = 0.5
            for (cls, name, value), gain in self.effects.items():
                if cls == c["name"] and settings.get(name) == value:
                    f *= gain
            if first and (c["name"], key) in self.first_time_bonus:
                f *= self.first_time_bonus[(c["name"], key)]
            figures[c["name"]] = f
        return figures, {n: None if p.startswith("small") else "u32" for n, p in plans.items()}


def make_args(tmp, **overrides):
    shapes = Path(tmp) / "shapes.json"
    shapes.write_text(json.dumps({"classes": CLASSES}))
    args = dict(search="small", shapes=str(shapes), build_dir=str(Path(tmp) / "build"), target="x86-64-linux-avx2",
                source_build="", budget=None, repetitions=3, min_time=0.02, max_rounds=2, stable_spread=0.08,
                tolerance=0.05, min_gain=0.02, out=str(Path(tmp) / "db.json"), fresh=False)
    args.update(overrides)
    return argparse.Namespace(**args)


class TuneSearchTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        tune.build_target = lambda build, target: None  # the model needs no build
        (Path(self.tmp.name) / "build/db").mkdir(parents=True)

    def tearDown(self):
        self.tmp.cleanup()

    def run_search(self, tuner, deadline=float("inf")):
        tuner.shapes_file.parent.mkdir(parents=True, exist_ok=True)
        best_gen, best_run, default, best, widths = tuner.search(deadline)
        return best_gen, best_run, default, best

    def test_defaults_kept_when_nothing_helps(self):
        tuner = ModelTuner(make_args(self.tmp.name), {})
        best_gen, best_run, default, best = self.run_search(tuner)
        self.assertEqual(best_gen, {"u32": {}})
        self.assertEqual(best_run, {})
        self.assertEqual(best, default)

    def test_real_gain_is_kept(self):
        tuner = ModelTuner(make_args(self.tmp.name), {("big_transpose", "tile_rows", 8): 1.3,
                                                       ("big_general", "parallel_min_bytes", 131072): 1.0})
        best_gen, best_run, default, best = self.run_search(tuner)
        self.assertEqual(best_gen, {"u32": {"tile_rows": 8}})
        self.assertAlmostEqual(best["big_transpose"], 0.65)

    def test_a_gain_that_costs_another_class_too_much_is_refused(self):
        tuner = ModelTuner(make_args(self.tmp.name), {("big_general", "run_vectors", 8): 1.5,
                                                       ("small_general", "run_vectors", 8): 0.9})
        best_gen, _, _, _ = self.run_search(tuner)
        self.assertEqual(best_gen, {"u32": {}})

    def test_a_gain_seen_once_is_noise(self):
        key = json.dumps({"run_vectors": 8}, sort_keys=True)
        tuner = ModelTuner(make_args(self.tmp.name), {}, first_time_bonus={("big_general", key): 1.2})
        best_gen, _, _, _ = self.run_search(tuner)
        self.assertEqual(best_gen, {"u32": {}})
        self.assertEqual(sum(1 for g, r in tuner.measured if g == {"run_vectors": 8}), 2)  # measured again

    def test_candidates_that_change_no_plan_or_kernel_are_not_measured(self):
        tuner = ModelTuner(make_args(self.tmp.name), {})
        self.run_search(tuner)
        # transpose_min_extent and long_run_bytes change no plan in the model; tile_* matter only
        # to transposes, which the model has.
        measured = [{**g, **r} for g, r in tuner.measured]
        self.assertFalse(any("transpose_min_extent" in m or "long_run_bytes" in m for m in measured))
        self.assertTrue(any("tile_rows" in m for m in measured))

    def test_stopped_search_resumes_to_the_same_result(self):
        effects = {("big_transpose", "tile_row_bytes", 128): 1.2}
        whole = ModelTuner(make_args(self.tmp.name, build_dir=str(Path(self.tmp.name) / "a")), effects)
        (Path(self.tmp.name) / "a/db").mkdir(parents=True)
        expected = self.run_search(whole)

        (Path(self.tmp.name) / "b/db").mkdir(parents=True)
        first = ModelTuner(make_args(self.tmp.name, build_dir=str(Path(self.tmp.name) / "b")), effects)
        calls = 0
        original = first.measure

        def stop_after_four(switch_points):
            nonlocal calls
            calls += 1
            if calls > 4:
                raise KeyboardInterrupt
            return original(switch_points)

        first.measure = stop_after_four
        with self.assertRaises(KeyboardInterrupt):
            self.run_search(first)
        second = ModelTuner(make_args(self.tmp.name, build_dir=str(Path(self.tmp.name) / "b")), effects)
        second.load_journal()
        self.assertEqual(len(second.journal), 4)
        self.assertEqual(self.run_search(second), expected)
        self.assertEqual(len(second.measured), len(whole.measured) - 4)  # nothing measured twice

    def test_database_records_values_figures_machine_and_date(self):
        tuner = ModelTuner(make_args(self.tmp.name), {("big_transpose", "tile_rows", 8): 1.3})
        result = tuner.search(float("inf"))
        out, db = tuner.write_database(*result, 1.0)
        self.assertEqual(json.loads(Path(out).read_text()), db)
        self.assertEqual(db["schema"], "spacedepth-tuning/1")
        self.assertEqual(db["generator"], {"u32": {"tile_rows": 8}})
        self.assertIn("cpu", db["machine"])
        self.assertRegex(db["date"], r"^\d{4}-\d\d-\d\d$")
        self.assertEqual(db["figures"]["classes"]["big_transpose"]["tuned"], 0.65)

    def test_database_keeps_other_cpu_models_switch_points(self):
        # `make confirm-tuning --this-cpu` entries of other CPU models survive a tune here; this
        # model's goes, since the values just tuned are the target's.
        here, other = "GenuineIntel family 0x6 model 0xa7", "AuthenticAMD family 0x19 model 0x11"
        tuner = ModelTuner(make_args(self.tmp.name), {})
        tuner.cpu_model = lambda: here
        Path(tuner.args.out).write_text(json.dumps({"machines": [
            {"cpu": here, "runtime": {"stream_min_bytes": 25165824}},
            {"cpu": other, "runtime": {"stream_min_bytes": 4194304}}]}))
        out, db = tuner.write_database(*tuner.search(float("inf")), 1.0)
        self.assertEqual(db["machines"], [{"cpu": other, "runtime": {"stream_min_bytes": 4194304}}])
        self.assertEqual(json.loads(Path(out).read_text()), db)


if __name__ == "__main__":
    unittest.main()
