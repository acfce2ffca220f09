#!/bin/bash
# Probe: every gpu/apps program, its kernels plain, as corun launches, and in
# the hardware-scheduled form with a halt check (blocksnc), same binary.
set -u
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
source scripts/gpu-build.sh
gpu_build build-gpu probe-cmake.log || { tail -20 build-gpu/probe-cmake.log; exit 1; }
B=$PWD/build-gpu
W=${OUT:-/tmp}/all; mkdir -p $W
APPS=${APPS:-"pathfinder hotspot lavamd backprop srad matrixmul blackscholes fastwalsh binomial convsep md5search"}
for a in $APPS; do
  nvcc -O3 -arch=sm_90 -std=c++17 -Iinclude -Igpu/apps/$a -Iscratch/blockform -o $W/$a scratch/blockform/all/$a.cu \
    -L$B -lcorun -Xlinker -rpath -Xlinker $B > $W/$a.compile.log 2>&1 &
done
wait
printf "%-13s %-9s %s\n" app form "time_ms x3 (equal to plain)"
for a in $APPS; do
  for f in plain corun blocksnc; do
    line=""
    for rep in 1 2 3; do
      PROBE_FORM=$f timeout 60 $W/$a --out $W/$a.$f.out > $W/$a.$f.txt 2>&1
      t=$(sed -n 's/.*time_ms=\([^ ]*\).*/\1/p' $W/$a.$f.txt | tail -1)
      e=$(cmp -s $W/$a.plain.out $W/$a.$f.out && echo "=" || echo "!")
      line="$line $t$e"
    done
    printf "%-13s %-9s %s\n" $a $f "$line"
  done
done
