#!/usr/bin/env bash
# The x86 streaming-store twins prefetch their input SPACEDEPTH_STREAM_PREFETCH_BYTES ahead
# (generators/stream_stores.py), and the plain kernels, which run in cache, never prefetch:
#  1. every twin object of an SSE4.1, AVX2 or AVX-512 path holds PREFETCHT1 at that displacement
#     (LLVM folds the loads' own offsets into the others), and no other kind of prefetch (none at
#     all where the setting is 0);
#  2. the plain kernels the twins are made from (the general family) hold no prefetch.
# usage: check_stream_prefetch.sh BUILD/generators PREFETCH_BYTES
set -euo pipefail
dir="$1"
bytes="$2"
want=$(printf '0x%x(' "$bytes")
status=0
twins=0
# Per object: prefetches in all, PREFETCHT1 exactly `bytes` ahead, prefetches of any other kind.
counts() {
    objdump -d --no-show-raw-insn "$1" | awk -v want="$want" '
        $2 ~ /^prefetch/ { all++; if ($2 != "prefetcht1") other++; else if (index($3, want) == 1) at++ }
        END { print all + 0, at + 0, other + 0 }'
}
for obj in "$dir"/spacedepth_*_stream-x86-64-*.o; do
    [ -e "$obj" ] || continue
    twins=$((twins + 1))
    read -r all at other < <(counts "$obj")
    name=$(basename "$obj" | sed 's/-user_context.*//')
    echo "$name: $all prefetches, $at of them PREFETCHT1 exactly ${want%(} ahead"
    if [ "$bytes" -eq 0 ]; then
        [ "$all" -eq 0 ] || { echo "FAIL: $obj prefetches with SPACEDEPTH_STREAM_PREFETCH_BYTES=0"; status=1; }
    else
        [ "$at" -gt 0 ] || { echo "FAIL: no PREFETCHT1 ${want%(} ahead in $obj"; status=1; }
        [ "$other" -eq 0 ] || { echo "FAIL: $obj has $other prefetches other than PREFETCHT1"; status=1; }
    fi
done
[ "$twins" -gt 0 ] || { echo "FAIL: no x86 streaming twin in $dir"; status=1; }
for obj in "$dir"/spacedepth_general_u*-x86-64-*.o; do
    case "$obj" in *_stream-*) continue ;; esac
    read -r n _ _ < <(counts "$obj")
    [ "$n" -eq 0 ] || { echo "FAIL: the plain kernel $obj has $n prefetches"; status=1; }
done
echo "the plain general kernels: no prefetch"
exit $status
