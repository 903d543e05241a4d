#!/usr/bin/env bash
# make demo: the seed examples and the benchmark table (scripts/demo.py) from a build directory's
# CLI and Python module (default build-demo/, the Makefile's demo build).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-demo}"
PYTHONPATH="$PWD/$build/python${PYTHONPATH:+:$PYTHONPATH}" exec .venv/bin/python scripts/demo.py "$build/bin/spacedepth"
