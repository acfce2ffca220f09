#!/bin/bash
# Probe run on the device: libcorun, then lavamd and binomial with four forms.
set -u
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
source scripts/gpu-build.sh
gpu_build build-gpu probe-cmake.log || { tail -20 build-gpu/probe-cmake.log; exit 1; }
B=$PWD/build-gpu
W=${OUT:-/tmp}/bf; mkdir -p $W
for a in lavamd binomial; do
  nvcc -O3 -arch=sm_90 -std=c++17 -Iinclude -Igpu/apps/$a -Iscratch/blockform -o $W/$a scratch/blockform/$a.cu \
    -L$B -lcorun -Xlinker -rpath -Xlinker $B -Xptxas -v > $W/$a.compile.log 2>&1 || { cat $W/$a.compile.log; exit 1; }
done
ARGS=${ARGS:-}
for a in lavamd binomial; do
  for rep in 1 2; do
    for f in plain corun blocksnc blocksst blocksasm blocksor; do
      PROBE_FORM=$f $W/$a $ARGS --out $W/$a.$f.out > $W/$a.$f.$rep.txt 2>&1
      t=$(sed -n 's/.*time_ms=\([^ ]*\).*/\1/p' $W/$a.$f.$rep.txt | tail -1)
      echo "$a $f rep$rep time_ms=$t"
    done
    for f in blocksst blocksasm blocksor; do
      cmp -s $W/$a.plain.out $W/$a.$f.out && echo "  $f out equal" || echo "  $f out DIFFERS"
    done
  done
done
grep -h "registers\|Compiling entry" $W/*.compile.log | grep -B1 registers | head -40
syms=$(cuobjdump -symbols $W/lavamd 2>/dev/null | grep -oE "_Z[0-9]+kernel_gpu_cuda[A-Za-z0-9_]*" | sort -u)
for s in $syms; do
  cuobjdump -sass -fun "$s" $W/lavamd > $W/$s.sass 2>&1
  echo "$s: $(grep -cE '^\s+/\*[0-9a-f]+\*/' $W/$s.sass) instr; $(grep -oE '(LDS|STS)[.0-9A-Z]*' $W/$s.sass | sort | uniq -c | tr '\n' ' ')"
done
cuobjdump -elf $W/lavamd 2>/dev/null | grep -iE "shared" | grep -iE "pbnc|pbst|pbasm|pbor|pbatom|_shared|t4|t8|corun16" | head -40
