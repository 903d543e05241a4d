"""The kernels' x86 path as other CPUs choose it, under qemu-x86_64's CPU models (Debian's QEMU 7.2
emulates up to AVX2), with no SPACEDEPTH_MAX_ISA: the CPU probe, `spacedepth info` and Halide's
multi-target wrappers (answered by the runtime's hook) must agree on the path each CPU can run, and
that path must run and be right. The AMD models carry a Zen 4 or Zen 5 family and model number on
a CPU without AVX-512, as a VM whose hypervisor masks AVX-512 shows them: Halide 21's own tables
take AVX-512 from those model numbers (model 0x61, family 0x1a), and the kernels died of SIGILL.

usage:
  check_emulated_cpus.py paths BUILD_DIR
      every CPU model below: the probe's choice of the build's targets, `spacedepth info`'s, and a
      kernel call of every family and width through the wrappers (spacedepth_tests' Kernels and
      CpuProbe cases, IsaDispatch.RunsTheForcedPath against the compiler's __builtin_cpu_supports)
  check_emulated_cpus.py suite BUILD_DIR NAME SHARD COUNT
      the CLI end-to-end test and one of COUNT GoogleTest shards of the whole suite under the CPU
      called NAME below
"""
import os
import re
import subprocess
import sys

QEMU = "qemu-x86_64"
# name -> (qemu's CPU model, the rung of the default target list it runs)
CPUS = {
    "nehalem": ("Nehalem", "sse41"),
    # Haswell less the features TCG lacks (and would warn of on stderr, which the CLI test reads)
    "haswell": ("Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm", "avx2"),
    "zen4-masked": ("EPYC-Milan,family=25,model=17", "avx2"),  # a Zen 4 number (EPYC 9004), no AVX-512
    "zen4-desktop-masked": ("EPYC-Milan,family=25,model=97", "avx2"),  # 0x61: Halide 21 says AVX-512
    "zen5-masked": ("EPYC-Milan,family=26,model=2", "avx2"),  # family 0x1a: Halide 21 says AVX-512
}
# Without the huge tensors, and without the matrix's streaming run (the same runtime paths as its
# other runs; each twin's path runs in Registered/* and Host/KernelPaths, the rules in Streaming.*).
TESTS_WITHOUT_THE_LARGE_ONES = "-LargeTensors.*:AllCells/Matrix.MatchesReferenceStreaming/*"


def run(cmd, env=None, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if r.returncode != 0:
        signal = f" (signal {-r.returncode})" if r.returncode < 0 else ""
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}{signal}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    return r.stdout


def emulated(cpu):
    return [QEMU, "-cpu", cpu]


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPACEDEPTH_MAX_ISA", "GTEST_"))}
    env.update(extra)
    return env


def rung_of(target):
    parts = target.split("-")
    for rung in ("avx512_cannonlake", "avx512_skylake", "avx2", "sse41"):
        if rung in parts:
            return rung
    return "baseline"


def paths(build):
    bindir = os.path.join(build, "bin")
    info = run([os.path.join(bindir, "spacedepth"), "info"], env=clean_env())
    targets = re.search(r"^kernel targets \(best first, chosen at run time\): (.*)$", info, re.M).group(1)
    targets = targets.replace(" ", "")
    failures = []
    for name, (cpu, want) in CPUS.items():
        probe = run(emulated(cpu) + [os.path.join(bindir, "spacedepth_cpu_probe"), targets], env=clean_env())
        chosen = re.search(r"^target: (\S+)", probe, re.M).group(1)
        info = run(emulated(cpu) + [os.path.join(bindir, "spacedepth"), "info"], env=clean_env())
        runs = re.search(r"^target this CPU runs: (\S+)", info, re.M).group(1)
        print(f"{name} ({cpu})\n    probe: {chosen}\n    info:  {runs}")
        if rung_of(chosen) != want or chosen != runs:
            failures.append(f"{cpu}: probe {chosen}, spacedepth info {runs}; want the {want} rung for both")
            continue
        out = run(emulated(cpu) + [os.path.join(bindir, "spacedepth_tests"),
                                   "--gtest_filter=Registered/Kernels.*:CpuProbe.*:IsaDispatch.RunsTheForcedPath",
                                   "--gtest_brief=1"], env=clean_env())
        passed = re.search(r"\[  PASSED  \] (\d+) tests?", out)
        path = re.search(r"^kernel path: (\S+)", out, re.M)
        print(f"    kernels: {passed.group(1) if passed else '?'} tests passed, wrappers took the "
              f"{path.group(1) if path else '?'} path")
        if not passed or not path or path.group(1) != want:
            failures.append(f"{cpu}: the wrappers took the {path.group(1) if path else '?'} path, want {want}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print(f"ok: {len(CPUS)} emulated CPUs, probe, info and the wrappers agree")


def suite(build, name, shard, count):
    cpu = CPUS[name][0]
    bindir = os.path.join(build, "bin")
    here = os.path.dirname(os.path.abspath(__file__))
    run([sys.executable, os.path.join(here, "test_cli.py")],
        env=clean_env(SPACEDEPTH_CLI=os.path.join(bindir, "spacedepth"), SPACEDEPTH_CLI_EMULATOR=" ".join(emulated(cpu))))
    print(f"{cpu}: cli_end_to_end passed")
    out = run(emulated(cpu) + [os.path.join(bindir, "spacedepth_tests"), f"--gtest_filter={TESTS_WITHOUT_THE_LARGE_ONES}",
                               "--gtest_brief=1"],
              env=clean_env(GTEST_TOTAL_SHARDS=str(count), GTEST_SHARD_INDEX=str(shard)))
    passed = re.search(r"\[  PASSED  \] (\d+) tests?", out)
    print(f"{cpu}: GoogleTest shard {shard} of {count}: {passed.group(1) if passed else '?'} tests passed"
          + "".join(f", {line.strip()}" for line in out.splitlines() if "SKIPPED ]" in line and "tests" in line))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "paths":
        paths(sys.argv[2])
    elif len(sys.argv) == 6 and sys.argv[1] == "suite":
        suite(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
