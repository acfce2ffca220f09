#!/bin/bash
# Probe: apps as corun launches with CORUN_WIDE 0 / 1 / 2, plain beside.
set -u
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
source scripts/gpu-build.sh
gpu_build build-gpu probe-cmake.log || { tail -20 build-gpu/probe-cmake.log; exit 1; }
B=$PWD/build-gpu
W=${OUT:-/tmp}/w; mkdir -p $W
APPS=${APPS:-"lavamd convsep hotspot backprop"}
for a in $APPS; do
  nvcc -O3 -arch=sm_90 -std=c++17 -Iinclude -Igpu/apps/$a -Iscratch/blockform -o $W/$a scratch/blockform/all/$a.cu \
    -L$B -lcorun -Xlinker -rpath -Xlinker $B > $W/$a.compile.log 2>&1 &
done
wait
for a in $APPS; do
  for f in plain w0 w1 w2; do
    line=""
    for rep in 1 2; do
      case $f in
        plain) PROBE_FORM=plain timeout 30 $W/$a --out $W/$a.$f.out > $W/$a.$f.txt 2>&1 ;;
        w*) PROBE_FORM=corun CORUN_WIDE=${f#w} CORUN_LAUNCH_STATS=$W/$a.$f.stats timeout 30 $W/$a --out $W/$a.$f.out > $W/$a.$f.txt 2>&1 ;;
      esac
      t=$(sed -n 's/.*time_ms=\([^ ]*\).*/\1/p' $W/$a.$f.txt | tail -1)
      e=$(cmp -s $W/$a.plain.out $W/$a.$f.out && echo "=" || echo "!")
      line="$line $t$e"
    done
    printf "%-10s %-6s %s\n" $a $f "$line"
  done
done
