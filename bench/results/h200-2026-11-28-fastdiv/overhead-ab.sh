#!/usr/bin/env bash
# transpose & co overhead: cc1082f tree vs bb71472 (division constants), alternating; LS alone distribution
S=$SECONDS; R=$PWD
export PATH=/usr/local/cuda/bin:$PATH CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
B() { cmake -S $1 -B $2 -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > $2.log 2>&1 && cmake --build $2 -j8 --target corun-gpucheck corun_cli >> $2.log 2>&1; echo "build $2 rc=$? $((SECONDS-S))s"; }
B scratch/oldt $R/b-old & B . $R/b-new & wait
mkdir -p $OUT/q3
for r in 1 2 3; do for t in old new; do
  echo "== $t round $r"; $R/b-$t/gpu/check/corun-gpucheck overhead --kernel transpose,stencil3d,blackscholes,vadd,matmul --budgets 5,10 --reps 15 2>&1 | grep -v "^\[" | tail -7
done; done > $OUT/q3/overhead-ab.txt 2>&1
cat $OUT/q3/overhead-ab.txt
for r in 1 2 3; do
  timeout 60 b-new/corun sim --scenario scratch/ls-only.json --policy mps --backend cuda --json --quiet > $OUT/q3/lsonly-$r.json 2>&1; echo "lsonly $r rc=$?"
done
for r in 1 2; do timeout 60 b-new/corun sim --scenario bench/scenarios/ls-batch.json --policy green --backend cuda --json --quiet > $OUT/q3/green-$r.json 2>&1; echo "green $r rc=$?"; done
echo "total $((SECONDS-S))s"
cd $OUT && tar czf q3.tgz q3 && rm -rf q3
