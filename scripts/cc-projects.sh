#!/usr/bin/env bash
# The three multi-file projects of tests/cc-projects (kernels in a project
# header, a static library of kernels, -rdc=true separate compilation),
# built with nvcc and with corun-nvcc, run on the GPU, and their checksums
# compared: each program prints "checksum: N" of its results.
#
#   scripts/cc-projects.sh                  build both ways here, run, compare
#   scripts/cc-projects.sh --prepare [DIR]  on a machine with libclang: only
#                                           transform the projects into DIR
#                                           (default build-gpu/cc-projects-src),
#                                           no GPU needed
#
# A GPU machine without libclang (no corun-nvcc in $GPU_BUILD) builds the
# corun version from what --prepare left (carry that folder along): the
# transformed files with their header copies and the projects' other files,
# made with the projects' own Makefiles by nvcc given corun's include/ and
# the libcorun of $GPU_BUILD.
#
# Settings (environment): GPU_BUILD (default build-gpu), CC_PROJECTS_SRC
# (transformed sources, default build-gpu/cc-projects-src), NVCCFLAGS
# (default -O2 -arch=sm_90 -std=c++17), CC_PROJECTS_TIMEOUT (seconds per
# run, 120). The corun builds run with CORUN_LAUNCH_STATS set, so each line
# also says how many launches went through corun. Logs stay in
# $GPU_BUILD/cc-projects-work. Exit 1 when a build, a run or a comparison
# fails.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

BUILD=${GPU_BUILD:-build-gpu}
SRC=${CC_PROJECTS_SRC:-build-gpu/cc-projects-src}
NVCCFLAGS=${NVCCFLAGS:-"-O2 -arch=sm_90 -std=c++17"}
LIMIT=${CC_PROJECTS_TIMEOUT:-120}
PROJECTS="headers staticlib rdc"
export PATH=/usr/local/cuda/bin:$PATH

# libcorun and (where libclang is) corun-cc/corun-nvcc, as scripts/gpu-apps.sh
# builds them
# shellcheck source=scripts/gpu-build.sh
source scripts/gpu-build.sh
gpu_build "$BUILD" cc-projects-cmake.log || exit 1
BUILD=$(cd "$BUILD" && pwd)
work=$BUILD/cc-projects-work
rm -rf "$work/plain" "$work/corun" "$work/prepare"
mkdir -p "$work"
export CORUN_CACHE=$work/cc-cache

if [ "${1:-}" = --prepare ]; then
  dest=${2:-$SRC}
  [ -x "$BUILD/corun-nvcc" ] || { echo "no $BUILD/corun-nvcc (needs libclang-19)"; exit 1; }
  rm -rf "$dest"
  mkdir -p "$dest"
  dest=$(cd "$dest" && pwd)
  for p in $PROJECTS; do
    CORUN_NVCC_KEEP=$dest/$p make -s -C "tests/cc-projects/$p" NVCC="$BUILD/corun-nvcc" \
      NVCCFLAGS="$NVCCFLAGS" BUILD="$work/prepare/$p" > "$work/$p.prepare.log" 2>&1 || {
      cat "$work/$p.prepare.log"
      echo "corun-nvcc build of $p failed"
      exit 1
    }
    # the Makefile and the headers, beside the transformed files
    find "tests/cc-projects/$p" -maxdepth 1 -type f ! -name '*.cu' -exec cp {} "$dest/$p/" \;
    echo "$p: $(ls "$dest/$p" | tr '\n' ' ')"
  done
  exit 0
fi

fail=0
# nvcc with corun's headers and libcorun, for the files --prepare left
cat > "$work/nvcc-corun" << EOF
#!/bin/sh
exec nvcc -I"$root/include" "\$@" -L"$BUILD" -lcorun -Xlinker -rpath -Xlinker "$BUILD"
EOF
chmod +x "$work/nvcc-corun"

for p in $PROJECTS; do
  make -s -C "tests/cc-projects/$p" NVCC=nvcc NVCCFLAGS="$NVCCFLAGS" BUILD="$work/plain/$p" \
    > "$work/$p.plain.log" 2>&1 || { echo "$p: nvcc build failed (see $work/$p.plain.log)"; fail=1; continue; }
  if [ -x "$BUILD/corun-nvcc" ]; then
    make -s -C "tests/cc-projects/$p" NVCC="$BUILD/corun-nvcc" NVCCFLAGS="$NVCCFLAGS" \
      BUILD="$work/corun/$p" > "$work/$p.corun.log" 2>&1
  elif [ -f "$SRC/$p/Makefile" ]; then
    make -s -C "$SRC/$p" NVCC="$work/nvcc-corun" NVCCFLAGS="$NVCCFLAGS" BUILD="$work/corun/$p" \
      > "$work/$p.corun.log" 2>&1
  else
    echo "$p: no corun-nvcc and no $SRC/$p: run scripts/cc-projects.sh --prepare where libclang is"
    exit 1
  fi || { echo "$p: corun build failed (see $work/$p.corun.log)"; fail=1; continue; }

  timeout "$LIMIT" "$work/plain/$p/$p" > "$work/$p.plain.out" 2>&1
  prc=$?
  rm -f "$work/$p.stats"
  CORUN_LAUNCH_STATS=$work/$p.stats timeout "$LIMIT" "$work/corun/$p/$p" > "$work/$p.corun.out" 2>&1
  crc=$?
  pc=$(sed -n 's/^checksum: //p' "$work/$p.plain.out")
  cc=$(sed -n 's/^checksum: //p' "$work/$p.corun.out")
  via=$(sed -n 's/.*"through_corun": \([0-9]*\), "plain": \([0-9]*\).*/\1 through corun, \2 plain/p' \
    "$work/$p.stats" 2> /dev/null | tail -1)
  equal=no
  if [ $prc -eq 0 ] && [ $crc -eq 0 ] && [ -n "$pc" ] && [ "$pc" = "$cc" ]; then
    equal=yes
  else
    fail=1
  fi
  printf '%-10s plain %s (exit %d), corun %s (exit %d), equal: %s; launches: %s\n' \
    "$p" "${pc:-?}" "$prc" "${cc:-?}" "$crc" "$equal" "${via:-?}"
done
exit $fail
