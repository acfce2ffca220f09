#!/usr/bin/env bash
# batch throughput under smguard with LS: old / new / nohold / slow (holders poll every 8 us)
O=$OUT
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr PATH=/usr/local/cuda/bin:$PATH
R=$PWD
B() { cmake -S $1 -B $R/build-$2 -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > $O/cm-$2.log 2>&1 && cmake --build $R/build-$2 -j16 --target corun_cli >> $O/cm-$2.log 2>&1; echo "build $2 rc=$?"; }
B . new & B scratch/old old & B scratch/nohold nohold & B scratch/slow slow & wait
for r in 1 2 3 4; do
 for sc in ls-batch-20ms ls-batch-200us; do
  for t in old new nohold slow; do
   timeout 100 $R/build-$t/corun demo --backend cuda --scenario bench/scenarios/$sc.json --systems smguard -q > $O/ab-$sc-$t-$r.log 2>&1
   echo "$sc $t $r: $(grep -E '^(smguard)' $O/ab-$sc-$t-$r.log | tr -s ' ')"
  done
 done
done
cd $O && tar czf ab5.tgz ab-*.log && rm -f ab-*.log cm-*.log
