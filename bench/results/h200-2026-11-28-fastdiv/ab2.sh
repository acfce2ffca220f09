#!/usr/bin/env bash
# convsep, backprop: plain vs corun variants, same call, alternating
S=$SECONDS; R=$PWD
export PATH=/usr/local/cuda/bin:$PATH CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
B() { cmake -S $1 -B $2 -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > /dev/null 2>&1 && cmake --build $2 -j5 --target corun > /dev/null 2>&1; echo "lib $2 rc=$? $((SECONDS-S))s"; }
B . $R/b-main & B scratch/fdtree $R/b-fd & B scratch/fdT $R/b-fdT & wait
W=/tmp/w; mkdir -p $W
F="-O3 -arch=sm_90 -std=c++17"
for a in convsep backprop; do
  nvcc $F -o $W/$a.plain gpu/apps/$a/$a.cu > $W/$a.p.log 2>&1 &
  nvcc $F -Iinclude -Igpu/apps/$a -o $W/$a.main build-gpu/apps-src/$a.cu -L$R/b-main -lcorun -Xlinker -rpath -Xlinker $R/b-main > $W/$a.m.log 2>&1 &
  nvcc $F -Iscratch/fdtree/include -Igpu/apps/$a -o $W/$a.fd build-gpu/apps-src/$a.cu -L$R/b-fd -lcorun -Xlinker -rpath -Xlinker $R/b-fd > $W/$a.f.log 2>&1 &
  nvcc $F -Iscratch/fdT/include -Igpu/apps/$a -o $W/$a.fdT build-gpu/apps-src/$a.cu -L$R/b-fdT -lcorun -Xlinker -rpath -Xlinker $R/b-fdT > $W/$a.t.log 2>&1 &
done; wait; echo "compiled $((SECONDS-S))s"; ls $W | tr '\n' ' '; echo
V="plain: main: fd: fd:CORUN_AHEAD=2 main:CORUN_AHEAD=2 fdT:CORUN_CHUNK_BUDGET_US=80 fd:CORUN_CHUNK_BUDGET_US=80 fd:CORUN_PLAIN_BATCH_BELOW_US=100000"
for r in 1 2 3 4 5 6; do for a in convsep backprop; do for v in $V; do
  t=${v%%:*}; e=${v#*:}
  ms=$(env $e timeout 20 $W/$a.$t --out /tmp/o-$a-$r.bin 2>&1 | sed -n 's/.*time_ms=\([^ ]*\).*/\1/p' | tail -1)
  [ $t = plain ] || { cmp -s /tmp/o-$a-$r.bin /tmp/o-$a-ref.bin || echo "$a $v OUTPUT DIFF"; }
  [ $t = plain ] && cp /tmp/o-$a-$r.bin /tmp/o-$a-ref.bin
  echo "$a $v $r $ms"
done; done; done
echo "total $((SECONDS-S))s"
python3 - <<'P' < /dev/null
P
