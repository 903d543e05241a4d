#!/usr/bin/env bash
# The prepared GPU check, for a machine with an NVIDIA GPU and driver but no Halide and
# no network: it runs binaries built on the development machine and carried over with the source
# tree (build/bin/spacedepth and build/bin/spacedepth_tests, both self-contained: gtest is static,
# the CUDA driver is loaded with dlopen, no cudart).
#   1. the CUDA correctness tests (every layout x order x width 1/2/4 against the reference);
#   2. every layout x order x width 1/2/4, both ops, on a 256 MiB tensor, beside a device-to-device
#      copy of the same bytes timed in the same run: GB/s and the ratio, as JSON lines.
# usage: bench/gpu_check.sh [--dry-run] [--out FILE]   (from the repository root; under 5 minutes)
#   --dry-run  check that the binaries exist and are self-contained (ldd), then stop.
set -euo pipefail
cd "$(dirname "$0")/.."
dry_run=0
out=gpu_check.jsonl
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) dry_run=1 ;;
        --out) out="$2"; shift ;;
        *) echo "gpu_check: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

build="${SPACEDEPTH_BUILD_DIR:-build}"
cli="$build/bin/spacedepth"
tests="$build/bin/spacedepth_tests"
status=0
for b in "$cli" "$tests"; do
    if [ ! -x "$b" ]; then
        echo "gpu_check: $b is missing (build it with make build on the development machine)"; status=1; continue
    fi
    libs=$(ldd "$b" | awk '{print $1}')
    if ldd "$b" | grep -q 'not found'; then
        echo "gpu_check: $b has missing libraries:"; ldd "$b" | grep 'not found'; status=1
    fi
    # Only the C/C++ runtime every Linux has; anything else (Debian's gtest, benchmark, xnnpack,
    # a CUDA runtime) would be missing on the GPU machine.
    extra=$(echo "$libs" | grep -vE '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|lib(stdc\+\+|m|gcc_s|c|dl|pthread|rt)\.so\.[0-9]+)$' || true)
    if [ -n "$extra" ]; then
        echo "gpu_check: $b needs libraries the GPU machine may not have: $(echo $extra)"; status=1
    else
        echo "gpu_check: $b is self-contained ($(echo $libs | wc -w) system libraries)"
    fi
done
[ $status -eq 0 ] || exit $status

# The bench matrix: both ops, both orders, the three layouts, widths 1/2/4 (NCHW_VECT_C: int8).
cases=()
for op in depth_to_space space_to_depth; do
    for order in DCR CRD; do
        for layout in NHWC NCHW NCHW_VECT_C; do
            for dtype in uint8 float16 float32; do
                [ "$layout" = NCHW_VECT_C ] && [ "$dtype" != uint8 ] && continue
                [ "$layout" = NCHW_VECT_C ] && dtype=int8
                case "$dtype" in uint8|int8) c=256 ;; float16) c=128 ;; float32) c=64 ;; esac
                # 256 MiB input: c channels of 1024 x 1024 (D2S input is the deep side: c*4 channels, 512 x 512)
                if [ "$op" = depth_to_space ]; then shape="1,$((c * 4)),512,512"; else shape="1,$c,1024,1024"; fi
                cases+=("--op $op --order $order --layout $layout --dtype $dtype --shape $shape")
            done
        done
    done
done

if [ $dry_run -eq 1 ]; then
    echo "gpu_check: dry run: would run $tests --gtest_filter='Cuda*' and ${#cases[@]} benchmarks, e.g."
    echo "  $cli bench --device cuda ${cases[0]} --rounds 5 --json"
    exit 0
fi

echo "== CUDA correctness tests"
"$tests" --gtest_filter='Cuda*:*CudaMatrix*' --gtest_brief=1
echo "== benchmarks (ratio = GB/s of the call / GB/s of a device-to-device copy of the same bytes)"
: > "$out"
for args in "${cases[@]}"; do
    # shellcheck disable=SC2086
    "$cli" bench --device cuda $args --rounds 5 --json | tee -a "$out"
done
echo "gpu_check: wrote $out"
