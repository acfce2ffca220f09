#!/usr/bin/env bash
# The eleven programs of gpu/apps build with corun-nvcc exactly as with nvcc
# (`make -C gpu/apps NVCC=corun-nvcc`): every kernel transformed, every
# launch rewritten, occupancy pins measured, programs linked. Running them
# and comparing outputs needs a GPU: scripts/gpu-apps.sh.
#
# Usage: cli_cc_apps.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/cc_common.sh"
cc_needs_nvcc link
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
