#!/usr/bin/env bash
# ctest tidy: clang-tidy-14 with the repository's .clang-tidy (warnings are errors) over every
# project source file in the build's compile_commands.json, headers of the project's folders
# included (not the build's generated ones, nor Halide's or the libraries').
# usage: check_tidy.sh CLANG_TIDY SOURCE_DIR BUILD_DIR [FOLDER]
# FOLDER (relative to SOURCE_DIR): only the sources under it, for a second build whose other
# sources the first build's run has checked (make test-frameworks: frameworks/).
set -euo pipefail
tidy=$1
src=$(realpath "$2")
build=$(realpath "$3")
only=${4:+$src/$4/}
# The library, kernels' schedules and generator, tools, Python core and benches; not tests/,
# whose GoogleTest macros make up most of a full run's time (85 s -> under 30 s on 2 cores) and
# which -Wall -Wextra -Werror already cover.
mapfile -t files < <(python3 - "$src" "$build" "$only" <<'PY'
import json, sys
src, build, only = sys.argv[1], sys.argv[2], sys.argv[3]
files = sorted({e["file"] for e in json.load(open(f"{build}/compile_commands.json"))
                if e["file"].startswith(src + "/") and not e["file"].startswith(build + "/")
                and "/.venv" not in e["file"] and not e["file"].startswith(src + "/tests/")
                and e["file"].startswith(only or src)})
print("\n".join(files))
PY
)
[ ${#files[@]} -gt 0 ] || { echo "tidy: no project sources in $build/compile_commands.json"; exit 1; }
filter="^$src/(contract|runtime|schedules|generators|tools|python|frameworks|tests|bench|include)/"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 "$tidy" -p "$build" --quiet --header-filter="$filter" \
    >"$log" 2>/dev/null || status=$?
grep -E "(warning|error):" "$log" | sort -u || true
echo "tidy: ${#files[@]} files, $(grep -cE "(warning|error):" "$log" || true) findings"
exit $status
