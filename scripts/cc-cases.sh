#!/usr/bin/env bash
# The corun-cc cases of tests/cc that are whole programs and that corun-cc
# accepts (issue 30's cases found on public programs: kernels in a project
# header, grid-stride loops over atomics and volatile memory, host max()),
# built with nvcc and from corun-cc's output, run on the GPU: exit status and
# standard output compared, and CORUN_LAUNCH_STATS says how many launches went
# through corun.
#
#   scripts/cc-cases.sh --prepare [DIR]  where libclang is: transform into DIR
#                                        (default build-gpu/cc-cases-src)
#   scripts/cc-cases.sh                  on a GPU machine: build both ways from
#                                        DIR (carry it along) and run
#
# Settings (environment): GPU_BUILD (default build-gpu; --prepare: a build
# with corun-cc, default build), CC_CASES_SRC (default build-gpu/cc-cases-src),
# NVCCFLAGS (default -O2 -arch=sm_90 -std=c++17). Exit 1 when a build, a run
# or a comparison fails.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
CASES="header_kernel_launch header_kernel_own gridstride_plain gridstride_atomic
gridstride_volatile gridstride_volatile_body host_max"
SRC=${CC_CASES_SRC:-build-gpu/cc-cases-src}
NVCCFLAGS=${NVCCFLAGS:-"-O2 -arch=sm_90 -std=c++17"}
export PATH=/usr/local/cuda/bin:$PATH

if [ "${1:-}" = --prepare ]; then
  dest=${2:-$SRC}
  cc=${GPU_BUILD:-build}/corun-cc
  [ -x "$cc" ] || { echo "no $cc (needs libclang-19)"; exit 1; }
  rm -rf "$dest"
  mkdir -p "$dest"
  for c in $CASES; do
    mkdir -p "$dest/$c/h"
    cp tests/cc/$c.cu "$dest/$c/plain.cu"
    cp tests/cc/*.cuh "$dest/$c/" 2> /dev/null
    (cd "$dest/$c" && "$root/$cc" plain.cu -o corun.cu --header-dir h) || {
      echo "$c: corun-cc refused it"
      exit 1
    }
  done
  ls "$dest"
  exit 0
fi

B=$(cd "${GPU_BUILD:-build-gpu}" && pwd)
[ -d "$SRC" ] || { echo "no $SRC: run scripts/cc-cases.sh --prepare where libclang is"; exit 1; }
fail=0
for c in $CASES; do
  d=$SRC/$c
  nvcc $NVCCFLAGS -I "$d" -o "$d/plain" "$d/plain.cu" > "$d/build.log" 2>&1 &&
    nvcc $NVCCFLAGS -I "$d/h" -I "$d" -I "$root/include" -o "$d/corun" "$d/corun.cu" \
      -L"$B" -lcorun -Xlinker -rpath -Xlinker "$B" >> "$d/build.log" 2>&1 || {
    echo "$c: build failed"; tail -5 "$d/build.log"; fail=1; continue
  }
  "$d/plain" > "$d/plain.out" 2>&1
  prc=$?
  rm -f "$d/stats"
  CORUN_LAUNCH_STATS=$d/stats "$d/corun" > "$d/corun.out" 2>&1
  crc=$?
  same=no
  [ "$prc" = "$crc" ] && cmp -s "$d/plain.out" "$d/corun.out" && same=yes
  [ "$same" = yes ] || fail=1
  printf '%-26s exit %s / %s, output equal: %s; %s\n' "$c" "$prc" "$crc" "$same" \
    "$(cat "$d/stats" 2> /dev/null || echo 'no launch stats')"
done
exit $fail
