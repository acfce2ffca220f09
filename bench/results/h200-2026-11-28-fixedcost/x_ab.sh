#!/usr/bin/env bash
# needs scratch/baset (git archive HEAD) and scratch/xt (the working tree), docs/apps/results removed
# carry: [".deps","scratch/x_ab.sh","scratch/xt","scratch/baset","build-gpu/apps-src"]
# base against x (batched slot zeroing CORUN_XZERO=N, chunk size's early exit, ewma without division for one task)
S=$SECONDS; R=$PWD
export PATH=/usr/local/cuda/bin:$PATH CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
B() { cmake -S $1 -B $2 -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > $2.log 2>&1 && cmake --build $2 -j8 --target corun corun-gpucheck >> $2.log 2>&1; echo "build $2 rc=$? $((SECONDS-S))s"; }
B scratch/baset $R/b-base & B scratch/xt $R/b-x & 
W=/tmp/w; mkdir -p $W $OUT/x
F="-O3 -arch=sm_90 -std=c++17"
APPS="convsep backprop lavamd binomial hotspot srad"
for a in $APPS; do nvcc $F -o $W/$a.plain gpu/apps/$a/$a.cu > $W/$a.p.log 2>&1 & done
wait
for a in $APPS; do
  for t in base x; do
    T=$([ $t = base ] && echo scratch/baset || echo scratch/xt)
    nvcc $F -I$T/include -Igpu/apps/$a -o $W/$a.$t build-gpu/apps-src/$a.cu -L$R/b-$t -lcorun -Xlinker -rpath -Xlinker $R/b-$t > $W/$a.$t.log 2>&1 &
  done
done; wait; echo "compiled $((SECONDS-S))s"; tail -3 b-base.log b-x.log
run() { # app variant
  case $2 in plain) timeout 30 $W/$1.plain --out /tmp/o-$1-$2.bin;; base) timeout 30 $W/$1.base --out /tmp/o-$1-$2.bin;;
    x1) CORUN_XZERO=1 timeout 30 $W/$1.x --out /tmp/o-$1-$2.bin;; x256) CORUN_XZERO=256 timeout 30 $W/$1.x --out /tmp/o-$1-$2.bin;; esac 2>&1 | sed -n 's/.*time_ms=\([^ ]*\).*/\1/p' | tail -1; }
for r in 1 2 3 4 5; do for a in $APPS; do for t in plain base x1 x256; do
  echo "$a $t $r $(run $a $t)"
done; done; done > $OUT/x/apps-ab.txt
echo "apps $((SECONDS-S))s"
for a in $APPS; do for t in base x1 x256; do cmp -s /tmp/o-$a-plain.bin /tmp/o-$a-$t.bin && echo "$a $t equal" || echo "$a $t DIFF"; done; done | tee $OUT/x/apps-cmp.txt | grep DIFF
python3 - $OUT/x/apps-ab.txt <<'PY' | tee $OUT/x/apps-summary.txt
import sys,statistics as st,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split()
    if len(f)==4: d[(f[0],f[1])].append(float(f[3]))
apps=sorted({a for a,_ in d})
for a in apps:
    p=st.median(d[(a,'plain')])
    print(a, 'plain %.4f'%p, ' '.join('%s %+.1f%%'%(t,100*(st.median(d[(a,t)])/p-1)) for t in ('base','x1','x256') if d[(a,t)]))
PY
for v in base x256; do
  echo "== chain $v $((SECONDS-S))s"
  if [ $v = base ]; then timeout 150 b-base/gpu/check/corun-gpucheck chain 2>/dev/null; else CORUN_XZERO=256 timeout 150 b-x/gpu/check/corun-gpucheck chain 2>/dev/null; fi | grep -v "^\[" | tail -14
done | tee $OUT/x/chain-ab.txt
echo "total $((SECONDS-S))s"
