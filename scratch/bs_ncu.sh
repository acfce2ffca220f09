#!/usr/bin/env bash
set -u
R=/tmp/res; rm -rf $R; mkdir -p $R
F="-O3 -arch=sm_90 -std=c++17"
for a in ${APPS:-blackscholes}; do
for v in ${VARS:-stamp nostamp}; do
  X=""; [ $v = nostamp ] && X="-DCORUN_NO_RUN_STAMP"
  nvcc $F $X -Iinclude -Igpu/apps/$a -o /tmp/$a-$v build-gpu/apps-src/$a.cu -Lbuild-gpu -lcorun -Xlinker -rpath -Xlinker $PWD/build-gpu
  for i in 1 2 3; do echo "$a $v $(/tmp/$a-$v --out /tmp/o.bin | grep time_ms)"; done
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv /tmp/$a-$v --out /tmp/o.bin > $R/ncu-$a-$v.csv 2>&1
done
done
cd /tmp && tar czf $OUT/res.tgz res
