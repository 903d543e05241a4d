#!/usr/bin/env bash
# Runs the libFuzzer target for SECONDS from the corpus in the repository. New inputs go to a
# scratch directory (the repository is not written); with --merge they are merged back into the
# corpus afterwards, minimised (make fuzz). Prints executions, corpus size and coverage.
# usage: run_fuzz.sh FUZZER CORPUS_DIR SCRATCH_DIR SECONDS [--merge]
set -euo pipefail
fuzzer="$1"; corpus="$2"; scratch="$3"; seconds="$4"; merge="${5:-}"
rm -rf "$scratch"; mkdir -p "$scratch/new" "$scratch/artifacts"
log="$scratch/fuzz.log"
status=0
"$fuzzer" "$scratch/new" "$corpus" -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=25 \
    -artifact_prefix="$scratch/artifacts/" -print_final_stats=1 >"$log" 2>&1 || status=$?
grep -E "^#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|INFO: seed corpus" "$log" | tail -8
if [ $status -ne 0 ]; then
    echo "FUZZ: the fuzzer stopped with status $status; the log ends:"; tail -40 "$log"
    ls "$scratch/artifacts"
    exit $status
fi
echo "corpus in the repository: $(ls "$corpus" | wc -l) inputs; new this run: $(ls "$scratch/new" | wc -l)"
if [ "$merge" = "--merge" ]; then
    "$fuzzer" -merge=1 "$corpus" "$scratch/new" >"$scratch/merge.log" 2>&1
    echo "merged: corpus now $(ls "$corpus" | wc -l) inputs"
fi
