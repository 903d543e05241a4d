#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH="$PWD/build/python${PYTHONPATH:+:$PYTHONPATH}" exec .venv/bin/python scripts/demo.py build/bin/spacedepth
