#!/usr/bin/env bash
# A/B/C: ac33110 (old), this tree (new), this tree without the hold (nohold); smguard, same call
O=$OUT
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr PATH=/usr/local/cuda/bin:$PATH
R=$PWD
B() { cmake -S $1 -B $R/build-$2 -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > $O/cm-$2.log 2>&1 && cmake --build $R/build-$2 -j16 --target corun_cli >> $O/cm-$2.log 2>&1; echo "build $2 rc=$?"; }
B . new & B scratch/old old & B scratch/nohold nohold & wait
for r in 1 2 3; do
 for sc in ls-batch ls-batch-200us ls-batch-20ms; do
  for t in old new nohold; do
   timeout 100 $R/build-$t/corun demo --backend cuda --scenario bench/scenarios/$sc.json --systems smguard -q > $O/ab-$sc-$t-$r.log 2>&1
   echo "$sc $t $r: $(grep -E '^(smguard)' $O/ab-$sc-$t-$r.log | tr -s ' ')"
  done
 done
done
for t in old new nohold; do
  timeout 60 $R/build-$t/corun sim --scenario bench/scenarios/ls-batch.json --policy smguard --backend cuda --json --quiet > $O/tr-$t.json
done
cd $O && tar czf ab3.tgz ab-*.log cm-*.log tr-*.json && rm -f ab-*.log cm-*.log tr-*.json
