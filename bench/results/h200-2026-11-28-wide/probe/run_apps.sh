#!/bin/bash
# Probe: gpu/apps programs (scratch/blockform/all/, from gen_all.py), each form
# in FORMS run REPS times, the time and whether the output equals plain's.
#   plain, corun, blocksnc  PROBE_FORM as named
#   oversub                 corun, CORUN_X_OVERSUB=1 (the uncommitted change in README.txt, 1)
#   w0, w1, w2              corun, CORUN_WIDE=0/1/2 (8f97e5d only)
# Calls as run: FORMS="plain corun blocksnc" REPS=3; FORMS="plain corun oversub blocksnc"
# REPS=3; APPS="lavamd convsep hotspot backprop" FORMS="plain w0 w1 w2" REPS=2.
set -u
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
source scripts/gpu-build.sh
gpu_build build-gpu probe-cmake.log || { tail -20 build-gpu/probe-cmake.log; exit 1; }
B=$PWD/build-gpu
W=${OUT:-/tmp}/all; mkdir -p $W
APPS=${APPS:-"pathfinder hotspot lavamd backprop srad matrixmul blackscholes fastwalsh binomial convsep md5search"}
FORMS=${FORMS:-"plain corun blocksnc"}
REPS=${REPS:-3}
for a in $APPS; do
  nvcc -O3 -arch=sm_90 -std=c++17 -Iinclude -Igpu/apps/$a -Iscratch/blockform -o $W/$a scratch/blockform/all/$a.cu \
    -L$B -lcorun -Xlinker -rpath -Xlinker $B > $W/$a.compile.log 2>&1 &
done
wait
for a in $APPS; do
  for f in $FORMS; do
    case $f in
      oversub) env=(PROBE_FORM=corun CORUN_X_OVERSUB=1) ;;
      w[0-2]) env=(PROBE_FORM=corun CORUN_WIDE=${f#w}) ;;
      *) env=(PROBE_FORM=$f) ;;
    esac
    line=""
    for rep in $(seq "$REPS"); do
      env "${env[@]}" timeout 60 $W/$a --out $W/$a.$f.out > $W/$a.$f.txt 2>&1
      t=$(sed -n 's/.*time_ms=\([^ ]*\).*/\1/p' $W/$a.$f.txt | tail -1)
      e=$(cmp -s $W/$a.plain.out $W/$a.$f.out && echo "=" || echo "!")
      line="$line $t$e"
    done
    printf "%-13s %-9s %s\n" $a $f "$line"
  done
done
