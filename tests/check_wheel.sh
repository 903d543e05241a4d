#!/usr/bin/env bash
# The binary wheel as a user gets it (ctest python_wheel): scripts/make_wheel.py packs this
# build's module, a fresh venv installs it (pip, no compiler: only numpy comes along, from pip's
# cache or PyPI), and tests/python runs against the installed package, from outside the tree.
# usage: check_wheel.sh PYTHON BUILD_DIR SOURCE_DIR
set -euo pipefail
python="$1"; build="$2"; src="$3"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
wheel=$("$python" "$src/scripts/make_wheel.py" --build "$build" --out "$work/dist")
echo "wheel: $(basename "$wheel"), $(stat -c %s "$wheel") bytes"
case "$(basename "$wheel")" in
    *manylinux*_x86_64.whl) ;;
    *) echo "FAIL: $(basename "$wheel") has no manylinux x86-64 tag"; exit 1 ;;
esac
base=$("$python" -c "import sys; print(sys._base_executable)")
"$base" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check pytest  # the tests' own tool, not timed
start=$(date +%s%N)
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "pip install of the wheel into a fresh venv: $((ms / 1000)).$(printf %03d $((ms % 1000))) s"
cd "$work"
"$work/venv/bin/python" -c "import spacedepth, sys; assert '$build' not in spacedepth.__file__; print('installed:', spacedepth.__file__)"
"$work/venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$src/tests/python" 2>&1 | tail -3
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$src/tests/python" >/dev/null
echo "python_wheel: OK"
