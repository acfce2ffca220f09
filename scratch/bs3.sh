#!/usr/bin/env bash
set -u
F="-O3 -arch=sm_90 -std=c++17"
for a in ${APPS:-blackscholes}; do
declare -A X=([both]="" [none]="-DCORUN_NO_RUN_STAMP")
for v in both none; do
  nvcc $F ${X[$v]} -Iinclude -Igpu/apps/$a -o /tmp/$a-$v build-gpu/apps-src/$a.cu -Lbuild-gpu -lcorun -Xlinker -rpath -Xlinker $PWD/build-gpu &
done; wait
for i in 1 2 3; do for v in both none; do echo "$a $v $(/tmp/$a-$v --out /tmp/o.bin | grep -o 'time_ms=[0-9.]*')"; done; done
done
