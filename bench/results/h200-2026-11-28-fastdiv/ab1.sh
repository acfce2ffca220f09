#!/usr/bin/env bash
# needs scratch/fdtree: mkdir -p scratch/fdtree && git archive exp/fastdiv | tar -x -C scratch/fdtree && rm -rf scratch/fdtree/{docs,gpu/apps,bench/results}
# convsep, backprop: plain vs corun (HEAD headers+lib) vs corun (fastdiv headers+lib), same call, alternating
S=$SECONDS; R=$PWD
export PATH=/usr/local/cuda/bin:$PATH CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
B() { cmake -S $1 -B $2 -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > /dev/null 2>&1 && cmake --build $2 -j8 --target corun > /dev/null 2>&1; echo "lib $2 rc=$? $((SECONDS-S))s"; }
B . $R/b-main & B scratch/fdtree $R/b-fd & wait
W=/tmp/w; mkdir -p $W
F="-O3 -arch=sm_90 -std=c++17"
for a in convsep backprop; do
  nvcc $F -o $W/$a.plain gpu/apps/$a/$a.cu > $W/$a.p.log 2>&1 &
  nvcc $F -Iinclude -Igpu/apps/$a -o $W/$a.main build-gpu/apps-src/$a.cu -L$R/b-main -lcorun -Xlinker -rpath -Xlinker $R/b-main > $W/$a.m.log 2>&1 &
  nvcc $F -Iscratch/fdtree/include -Igpu/apps/$a -o $W/$a.fd build-gpu/apps-src/$a.cu -L$R/b-fd -lcorun -Xlinker -rpath -Xlinker $R/b-fd > $W/$a.f.log 2>&1 &
done; wait; echo "compiled $((SECONDS-S))s"; ls $W | tr '\n' ' '; echo
for r in 1 2 3 4 5 6 7 8; do for a in convsep backprop; do for t in plain main fd; do
  ms=$(timeout 20 $W/$a.$t --out /tmp/o-$a-$t.bin 2>&1 | sed -n 's/.*time_ms=\([^ ]*\).*/\1/p' | tail -1)
  echo "$a $t $r $ms"
done; done; done
for a in convsep backprop; do cmp -s /tmp/o-$a-plain.bin /tmp/o-$a-fd.bin && echo "$a fd output equal" || echo "$a fd output DIFF"; done
echo "total $((SECONDS-S))s"
