#!/usr/bin/env bash
# The frameworks venv for `make test-frameworks` (README "Frameworks"): .venv-frameworks with the
# framework versions the libraries in frameworks/ were tested with, from PyPI, and what the
# Python module's build and tests need. `make test` never runs this: a user who never touches a
# framework downloads none of them. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv-frameworks
# torch's PyPI wheel is its CUDA build (about 5 GB installed with its nvidia-* packages); its CPU
# operators and the stable ABI the library builds against need nothing else.
PACKAGES=(torch==2.15.0 jax==0.10.2 jaxlib==0.10.2 tensorflow-cpu==2.21.0 numpy==2.4.6 ml_dtypes==0.7.0
          pytest "nanobind>=2.4")

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup-frameworks: creating $VENV"
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" - "${PACKAGES[@]}" <<'PY' 2>/dev/null; then
import importlib.metadata as m, sys
for spec in sys.argv[1:]:
    name, _, version = spec.partition("==")
    name = name.split(">")[0]
    if version and m.version(name) != version:
        sys.exit(1)
    m.version(name)
PY
    echo "setup-frameworks: installing ${PACKAGES[*]} into $VENV"
    start=$(date +%s)
    # --no-compile: no .pyc for the 6 GB of packages now (28 of its 78 s of CPU on the 2-core
    # Xeon VM, beside make test's builds); Python writes them for the modules a test imports.
    "$VENV/bin/pip" install -q --no-compile --disable-pip-version-check "${PACKAGES[@]}"
    echo "setup-frameworks: installed in $(( $(date +%s) - start )) s"
fi
