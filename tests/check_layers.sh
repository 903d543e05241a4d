#!/usr/bin/env bash
# ctest layers: each layered target (cmake/Layers.cmake) sees exactly its layer's source folders
# through the include directories the build gives it. For every target and every folder, the
# preprocessor is asked whether a header of that folder resolves, from an empty directory with
# the target's -I list; it must resolve exactly when the folder is in the target's layer. The
# generated kernel tables (contract/kernels.inc) must resolve wherever the contract does.
# usage: check_layers.sh TABLE CXX   (TABLE: build/layers/targets.txt, written at configure)
set -euo pipefail
table=$(realpath "$1")
cxx=$2
declare -A header=([contract]=contract/kernel_contract.h [schedules]=schedules/permute_copy_schedule.h
                   [generators]=generators/permute_copy_generator.cpp [runtime]=runtime/plan.h
                   [tools]=tools/cuda_driver.h [python]=python/src/module.cpp [tests]=tests/harness.h
                   [bench]=bench/cases.h)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
resolves() {  # header, then -I flags
    local h=$1
    shift
    printf '#if __has_include("%s")\nspacedepth_seen\n#endif\n' "$h" >probe.cpp
    "$cxx" -E -P "$@" probe.cpp | grep -q spacedepth_seen
}
failures=0
checks=0
targets=0
while IFS='|' read -r target folders dirs; do
    [ -n "$target" ] || continue
    targets=$((targets + 1))
    flags=()
    IFS='|' read -ra list <<<"$dirs"
    for d in "${list[@]}"; do [ -n "$d" ] && flags+=(-I "$d"); done
    for folder in "${!header[@]}"; do
        want=no
        [[ ",$folders," == *",$folder,"* ]] && want=yes
        got=no
        resolves "${header[$folder]}" "${flags[@]}" && got=yes
        checks=$((checks + 1))
        if [ $want != $got ]; then
            if [ $got = yes ]; then verb="can include"; else verb="cannot include"; fi
            echo "FAIL: $target (layer: $folders) $verb ${header[$folder]}"
            failures=$((failures + 1))
        fi
    done
    if [[ ",$folders," == *",contract,"* ]] && ! resolves contract/kernels.inc "${flags[@]}"; then
        echo "FAIL: $target cannot include the generated contract/kernels.inc"
        failures=$((failures + 1))
    fi
done <"$table"
[ $targets -gt 0 ] || { echo "FAIL: no layered targets in $table"; exit 1; }
echo "layers: $targets targets, $checks include checks, $failures failures"
[ $failures -eq 0 ]
