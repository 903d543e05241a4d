#!/usr/bin/env bash
# The C and C++ sources follow .clang-format: clang-format-14 would change nothing.
# usage: check_format.sh SOURCE_DIR [CLANG_FORMAT]; `clang-format -i` on the files it names fixes them.
set -euo pipefail
src="$1"
clang_format="${2:-clang-format-14}"
cd "$src"
mapfile -t files < <(find contract generators schedules runtime include tools tests bench python frameworks -type f \
                          \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) -not -path 'tests/fuzz/corpus/*' | sort)
[ ${#files[@]} -gt 0 ] || { echo "FAIL: no sources found under $src"; exit 1; }
bad=()
for f in "${files[@]}"; do
    "$clang_format" --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
    echo "FAIL: ${#bad[@]} of ${#files[@]} files are not formatted (.clang-format): ${bad[*]}"
    echo "fix: $clang_format -i ${bad[*]}"
    exit 1
fi
echo "ok: ${#files[@]} files formatted"
