#!/usr/bin/env bash
# Assembles the PTX of every CUDA kernel (Halide's device_code output) with ptxas for sm_80 and
# sm_90 (run by ctest where the CUDA toolkit is installed; no GPU is needed). PTX built for a
# higher capability than sm_80 (SPACEDEPTH_CUDA_TARGET with cuda_capability_86, say) is only
# assembled for the architectures it can run on.
# usage: check_ptx.sh PTXAS FILE.device_code...
set -euo pipefail
ptxas="$1"
shift
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$@"; do
    [ -s "$f" ] || { echo "FAIL: $f is missing or empty"; status=1; continue; }
    grep -q '^\.version' "$f" || { echo "FAIL: $f is not PTX"; status=1; continue; }
    ptx_target=$(grep -m1 -o '^\.target sm_[0-9]*' "$f" | grep -o '[0-9]*$')
    for arch in sm_80 sm_90; do
        if [ "${arch#sm_}" -lt "$ptx_target" ]; then
            echo "$(basename "$f"): PTX for sm_$ptx_target, not assembled for $arch"
            continue
        fi
        if "$ptxas" -arch="$arch" -o "$tmp/out.cubin" "$f" 2>"$tmp/err"; then
            echo "$(basename "$f"): ptxas -arch=$arch ok ($(stat -c %s "$tmp/out.cubin") bytes of SASS)"
        else
            echo "FAIL: $(basename "$f"): ptxas -arch=$arch"; cat "$tmp/err"; status=1
        fi
    done
done
exit $status
