#!/usr/bin/env bash
# smguard A/B, hold (working tree) vs base (HEAD without the hold), three scenarios, rounds alternating
O=$OUT; S=$SECONDS
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr PATH=/usr/local/cuda/bin:$PATH
R=$PWD
B() { cmake -S $1 -B $R/build-$2 -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > $O/cm-$2.log 2>&1 && cmake --build $R/build-$2 -j8 --target corun_cli >> $O/cm-$2.log 2>&1; echo "build $2 rc=$? $((SECONDS-S))s"; }
B . hold & B scratch/base base & wait
for r in 1 2; do for sc in ls-batch ls-batch-200us ls-batch-20ms; do for t in hold base; do
  timeout 60 $R/build-$t/corun demo --backend cuda --scenario bench/scenarios/$sc.json --systems smguard -q > $O/d.log 2>&1
  echo "$sc $t $r: $(grep -E '^smguard' $O/d.log | tr -s ' ')"
done; done; done
echo "total $((SECONDS-S))s"
