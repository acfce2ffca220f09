#!/usr/bin/env bash
set -u
ls build-gpu/libcorun.so >/dev/null 2>&1 || { OUT=/tmp/gcb GPU_CHECK_STEPS="build" scripts/gpu-check.sh > /tmp/b.txt 2>&1 || tail /tmp/b.txt; }
F="-O3 -arch=sm_90 -std=c++17"
W=build-gpu/apps-work
mkdir -p /tmp/pl
for a in ${APPS}; do
  make -s -C gpu/apps BUILD=/tmp/pl NVCCFLAGS="$F" $a > /dev/null 2>&1
  for v in 0 2 4; do
    X=""; [ $v != 0 ] && X="-DCORUN_EXP_C0=$v"
    nvcc $F $X -Iinclude -Igpu/apps/$a -o /tmp/$a-$v build-gpu/apps-src/$a.cu -Lbuild-gpu -lcorun -Xlinker -rpath -Xlinker $PWD/build-gpu &
  done; wait
  for i in 1 2 3; do
    line="$a plain $(/tmp/pl/$a --out /tmp/o0.bin | grep -o 'time_ms=[0-9.]*')"
    for v in 0 2 4; do line="$line | c0=$v $(/tmp/$a-$v --out /tmp/o.bin | grep -o 'time_ms=[0-9.]*') $(cmp -s /tmp/o0.bin /tmp/o.bin && echo eq || echo DIFF)"; done
    echo "$line"
  done
done
