#!/usr/bin/env bash
# The eleven programs of gpu/apps build with corun-nvcc exactly as with nvcc
# (`make -C gpu/apps NVCC=corun-nvcc`): every kernel transformed, every
# launch rewritten, occupancy pins measured, programs linked. Running them
# and comparing outputs needs a GPU: scripts/gpu-apps.sh.
#
# Usage: cli_cc_apps.sh CORUN_BINARY SOURCE_DIR
set -uo pipefail
build=$(cd "$(dirname "$1")" && pwd)
src=$(cd "$2" && pwd)
wrap=$build/corun-nvcc
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ ! -x "$wrap" ] || [ ! -x "$nvcc" ]; then
  echo "needs corun-nvcc and nvcc: skipped"
  exit 77
fi
if grep -q "^CORUN_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2> /dev/null; then
  echo "sanitizer build: left to the plain build"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CORUN_CACHE=$tmp/cache NVCC_REAL=$nvcc
apps="pathfinder hotspot lavamd backprop srad matrixmul blackscholes fastwalsh binomial convsep md5search"
make -s -C "$src/gpu/apps" -j 2 NVCC="$wrap" BUILD="$tmp/bin" apps > "$tmp/make.log" 2>&1
rc=$?
grep -E "corun-cc|error" "$tmp/make.log"
fail=0
n=0
for a in $apps; do
  if [ -x "$tmp/bin/$a" ] && "$tmp/bin/$a" --help > /dev/null 2>&1; then
    n=$((n + 1))
    echo "ok   $a"
  else
    echo "FAIL $a"
    fail=1
  fi
done
# every kernel went through corun-cc: each transformed file has workers
workers=$(cat "$CORUN_CACHE"/*.cu | grep -c "corun_worker_loop<")
echo "$n of 11 programs built with corun-nvcc; $workers worker kernels"
[ $rc -eq 0 ] || { tail -30 "$tmp/make.log"; fail=1; }
exit $fail
