#!/usr/bin/env bash
# The tuning database reaches the kernels `make` produces and the runtime (ctest tuning_database,
# README "Tuning"), shown with the tiny hand-written database tests/tuning/fixture/ (every value
# differs from its default) on the kernels it changes, not a second full build:
#   1. databases with a value or a name schedules/tunables.json does not declare, or a "machines"
#      entry that names no CPU model or sets generator values, stop the configure with an error
#      naming the file, the parameter and the allowed values;
#   2. a build for AVX2 with the fixture hands every kernel its values (the generator commands),
#      and the two u32 kernels it regenerates show each value in Halide's stmt output, link with
#      the Halide runtime alone and copy right (tests/kernel_call.cpp);
#   3. a runtime built with the fixture, linking this build's kernels (SPACEDEPTH_KERNELS_FROM),
#      reports and uses its switch points on the AVX2 path, with those of its "machines" entry for
#      this CPU's model on top (and not another model's), and the CLI's results still match the
#      numpy reference (tests/test_cli.py); a directory that is no build, or a build whose
#      kernels are not all built (the fixture's), is a configure error that says so;
#   4. the defaults schedules/tunables.json declares (the tuner starts from them) are the
#      schedules' own: a database naming them explicitly generates the same kernels as none.
# usage: check_tuning.sh CMAKE NINJA SOURCE_DIR HOST_BUILD_DIR OUT_DIR PYTHON
set -euo pipefail
cmake="$1"; ninja="$2"; src="$3"; host="$4"; out="$5"; python="$6"
target=x86-64-linux-avx2-avx-fma-f16c-sse41
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$out"
configure() {  # build dir, tuning dir, extra args
    "$cmake" -S "$src" -B "$1" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" -DCMAKE_BUILD_TYPE=Release \
        -DSPACEDEPTH_TUNING_DIR="$2" -DSPACEDEPTH_BUILD_TESTS=OFF -DSPACEDEPTH_BUILD_BENCH=OFF \
        -DSPACEDEPTH_BUILD_PYTHON=OFF -DSPACEDEPTH_CUDA=OFF -DSPACEDEPTH_OPENCL=OFF "${@:3}"
}
kernels() {  # build dir, tuning dir, extra args: the AVX2 kernels with this build's generator
    configure "$1" "$2" -Dspacedepth-halide_generators_ROOT="$host" -DSPACEDEPTH_TARGETS="$target" \
        -DSPACEDEPTH_BUILD_CLI=OFF "${@:3}"
}
# AVX2 code runs only where the CPU has it (every machine of this project so far).
avx2=yes
for flag in avx2 fma f16c; do grep -qw $flag /proc/cpuinfo || avx2=""; done

echo "== 1. invalid databases"
for bad in bad_value:"generator.run_vectors = 3 is not one of the declared values (1, 2, 4, 8)" \
           bad_name:"unknown runtime parameter 'small_max_byte' (known: avx2_deinterleave_max_extent, avx2_run_max_bytes, avx2_run_min_bytes, input_order_min_bytes, long_run_bytes, parallel_min_bytes, parallel_task_bytes, shuffle_max_bytes, small_max_bytes, stream_many_rows_min_bytes, stream_min_bytes, stream_parallel_min_bytes, stream_partial_min_bytes, stream_serial_shuffle_min_bytes, transpose_min_extent)" \
           bad_machine_cpu:"machines[0].cpu must read '<vendor> family 0x<hex> model 0x<hex>', as \`spacedepth info\` prints it after \"CPU: \" (got 'Intel Xeon model 167')" \
           bad_machine_generator:"machines[0] (GenuineIntel family 0x6 model 0xa7) sets generator values: kernels are generated per target, so only its runtime switch points may differ per CPU model"; do
    dir="${bad%%:*}"; want="${bad#*:}"
    rm -rf "$out/$dir"
    if kernels "$out/$dir" "$src/tests/tuning/$dir" > "$out/$dir.log" 2>&1; then fail "$dir configured"; fi
    tr -s ' \n' ' ' < "$out/$dir.log" | grep -qF "$want" || { cat "$out/$dir.log"; fail "$dir: no '$want'"; }
    grep -q "tests/tuning/$dir/x86-64-linux-avx2.json" "$out/$dir.log" || fail "$dir: the error does not name the file"
    echo "ok: $dir -> $want"
done

echo "== 2. the fixture database reaches the kernels"
fixture="$out/fixture"
kernels "$fixture" "$src/tests/tuning/fixture" -DSPACEDEPTH_EMIT_STMT=ON > "$out/fixture.log"
grep -q "tuning: x86-64-linux-avx2.json applies to $target" "$out/fixture.log" || fail "configure did not apply the database"
commands=$("$ninja" -C "$fixture" -t commands spacedepth)
want_u32="tuning=$target/run_vectors:1/tile_row_bytes:128/tile_rows:8"
want_u8="tuning=$target/run_vectors:1"
for k in general_u32 transpose_u32; do
    grep "\-f spacedepth_$k " <<< "$commands" | grep -qF -- "$want_u32" || fail "spacedepth_$k was not generated with $want_u32"
done
grep "\-f spacedepth_general_u8 " <<< "$commands" | grep -qE -- "$want_u8( |$)" || fail "u8 kernels did not get the 'all' values alone"
grep "\-f spacedepth_small_u32 " <<< "$commands" | grep -q "tuning=" && fail "the small kernel has no tunables"
echo "ok: generator parameters ($want_u32)"

# The two kernels whose stmt shows the values; one job, as ctest runs this beside other tests.
"$cmake" --build "$fixture" -j 1 --target spacedepth_general_u32 spacedepth_transpose_u32 spacedepth_halide_runtime \
    > "$out/fixture_build.log" 2>&1 || { tail -20 "$out/fixture_build.log"; fail "build"; }
stmt="$fixture/generators/spacedepth"
# A 32-lane run copy: four AVX2 vectors of u32 per iteration (the default run_vectors 4).
run32='output\[ramp([^]]*(int64)1, 32)\] = input\[ramp([^]]*(int64)1, 32)\]'
# tile_rows 8 x tile_row_bytes 128: the register tile is 8 x 32 u32 (default 4 x 16).
grep -q 'allocate input_im_global_wrapper$0\[uint32 \* 8 \* 32 \*' "${stmt}_transpose_u32.stmt" || fail "transpose tile is not 8 x 32"
# run_vectors 1: run copies of one 8-lane vector, none of 32 lanes.
grep -q 'output\[ramp([^]]*(int64)1, 8)\] = input\[ramp([^]]*(int64)1, 8)\]' "${stmt}_general_u32.stmt" || fail "no 8-lane run copy"
grep -q "$run32" "${stmt}_general_u32.stmt" && fail "a 32-lane run copy remains with run_vectors 1"
echo "ok: the kernels show every generator value"

for k in general_u32 transpose_u32; do
    family_views=""
    [ $k = general_u32 ] && family_views=-DGENERAL_FAMILY
    "$src/tests/build_kernel_call.sh" "$src" "$fixture" spacedepth_$k "$fixture/lib/libspacedepth_$k.a" "$fixture/call_$k" \
        $family_views
    if [ -n "$avx2" ]; then "$fixture/call_$k" > "$out/call_$k.log" || { cat "$out/call_$k.log"; fail "spacedepth_$k"; }; fi
done
[ -n "$avx2" ] && echo "ok: the tuned kernels copy right" || echo "ok: the tuned kernels link (not run: this CPU lacks AVX2)"

echo "== 3. the fixture database reaches the runtime"
# Linking another build's kernels needs a built host build: a clear configure error otherwise.
for bad in "$out/no_such_build":"needs a configured host build of this source" "$fixture":"has no $fixture/lib/libspacedepth_general_u8.a: build it first"; do
    from="${bad%%:*}"; want="${bad#*:}"
    rm -rf "$out/bad_from"
    if configure "$out/bad_from" "$src/tests/tuning/fixture" -DSPACEDEPTH_KERNELS_FROM="$from" > "$out/bad_from.log" 2>&1; then
        fail "SPACEDEPTH_KERNELS_FROM=$from configured"
    fi
    tr -s ' \n' ' ' < "$out/bad_from.log" | grep -qF "$want" || { cat "$out/bad_from.log"; fail "no '$want'"; }
    echo "ok: SPACEDEPTH_KERNELS_FROM=$(basename "$from") -> $want"
done
# The fixture with a "machines" entry for this CPU's model beside its entry for no CPU: the runtime
# takes this model's switch points on top of the target's, and not the other model's.
cpu=$("$host/bin/spacedepth" info | sed -n 's/^CPU: \(.* model 0x[0-9a-f]*\),.*/\1/p')
[ -n "$cpu" ] || fail "no CPU model in the host build's spacedepth info"
mkdir -p "$out/fixture_this_cpu"
"$python" - "$src/tests/tuning/fixture/x86-64-linux-avx2.json" "$out/fixture_this_cpu/x86-64-linux-avx2.json" "$cpu" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
db["machines"].append({"cpu": sys.argv[3], "runtime": {"stream_min_bytes": 67108864, "transpose_min_extent": 8}})
json.dump(db, open(sys.argv[2], "w"), indent=1)
PY
runtime="$out/runtime"
configure "$runtime" "$out/fixture_this_cpu" -DSPACEDEPTH_KERNELS_FROM="$host" > "$out/runtime.log"
grep -q "tuning: x86-64-linux-avx2.json applies to $target" "$out/runtime.log" || fail "configure did not apply the database"
grep -q "tuning: x86-64-linux-avx2.json has switch points for $cpu" "$out/runtime.log" || fail "configure did not read this CPU's entry"
"$cmake" --build "$runtime" -j 1 --target spacedepth_cli > "$out/runtime_build.log" 2>&1 \
    || { tail -20 "$out/runtime_build.log"; fail "build"; }
if [ -z "$avx2" ]; then
    echo "ok: built (not run: this CPU lacks AVX2, the path the database is for)"
else
    export SPACEDEPTH_MAX_ISA=avx2  # the path the fixture is for, on CPUs that have better ones
    info=$("$runtime/bin/spacedepth" info --op space_to_depth --block 2 --layout NHWC --shape 1,16,16,8)
    grep -qF "tuning database: x86-64-linux-avx2.json (with its switch points for this CPU model, $cpu)" <<< "$info" \
        || { echo "$info"; fail "the runtime does not report the database and this CPU's entry"; }
    # The target's values, this model's two on top (stream_min_bytes, transpose_min_extent back
    # to 8), the other model's (stream_parallel_min_bytes, small_max_bytes) not.
    grep -q "switch points: avx2_deinterleave_max_extent=40 avx2_run_max_bytes=127 avx2_run_min_bytes=33 input_order_min_bytes=0 long_run_bytes=128 parallel_min_bytes=65536 parallel_task_bytes=16384 shuffle_max_bytes=2048 small_max_bytes=16384 stream_many_rows_min_bytes=25165824 stream_min_bytes=67108864 stream_parallel_min_bytes=33554432 stream_partial_min_bytes=25165824 stream_serial_shuffle_min_bytes=4611686018427387904 transpose_min_extent=8" <<< "$info" \
        || { echo "$info"; fail "the runtime does not use the database's switch points"; }
    # The linked kernels are the host build's: the runtime must not claim the fixture's values.
    grep -q "tuned schedule" <<< "$info" && { echo "$info"; fail "the runtime claims schedule values its kernels lack"; }
    # 8 KiB: under the tuned small_max_bytes (16 KiB), over the default (4 KiB).
    grep -q "call: small u[0-9]* kernel" <<< "$info" || { echo "$info"; fail "an 8 KiB call does not go to the small kernel"; }
    echo "ok: runtime switch points"
    SPACEDEPTH_CLI="$runtime/bin/spacedepth" "$python" "$src/tests/test_cli.py" > "$out/cli.log" 2>&1 || { tail -20 "$out/cli.log"; fail "CLI results"; }
    echo "ok: tests/test_cli.py passes with the database's switch points"
    unset SPACEDEPTH_MAX_ISA
fi

echo "== 4. declared defaults are the schedules' defaults"
defaults=$("$python" - "$src/schedules/tunables.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["generator"]
pick = lambda d: d.get("x86", d.get("u32")) if isinstance(d, dict) else d
print("/".join(f"{k}:{pick(v['default'])}" for k, v in g.items()))
PY
)
gen="$host/bin/spacedepth_generators"
for family in general transpose; do
    for tuning in "" "tuning=$target/$defaults"; do
        dir="$out/defaults/$family${tuning:+_explicit}"; mkdir -p "$dir"
        "$gen" -g permute_copy -o "$dir" -e stmt -f k target="$target-user_context-large_buffers" \
            input.type=uint32 family=$family $tuning
    done
    cmp -s "$out/defaults/$family/k.stmt" "$out/defaults/${family}_explicit/k.stmt" \
        || fail "$family u32: tunables.json's defaults ($defaults) differ from the schedule's"
done
# ... and the values the fixture changes are there by default: the checks above can fail.
grep -q "$run32" "$out/defaults/general/k.stmt" || fail "the default general kernel has no 32-lane run copy"
grep -q 'allocate input_im_global_wrapper$0\[uint32 \* 4 \* 16 \*' "$out/defaults/transpose/k.stmt" || fail "the default tile is not 4 x 16"
echo "ok: $defaults generates the default kernels"
