#!/usr/bin/env bash
# smguard: HEAD (base) against the working tree (holders stay through a narrowing), alternating
S=$SECONDS; R=$PWD
export PATH=/usr/local/cuda/bin:$PATH CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
B() { cmake -S $1 -B $2 -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > $2.log 2>&1 && cmake --build $2 -j8 --target corun_cli >> $2.log 2>&1; echo "build $2 rc=$? $((SECONDS-S))s"; }
B scratch/baset $R/b-base & B . $R/b-new & wait
mkdir -p $OUT/hn
for r in 1 2; do for sc in ls-batch-20ms ls-batch ls-batch-200us ls-chain; do for t in base new; do
  timeout 90 $R/b-$t/corun demo --backend cuda --scenario bench/scenarios/$sc.json --systems smguard -q > $OUT/hn/$sc-$t-$r.txt 2>&1
  echo "$sc $t $r rc=$? $(grep -E '^(alone|smguard)' $OUT/hn/$sc-$t-$r.txt | awk '{printf "%s %s %s %s | ", $1, $2, $3, $4}') $((SECONDS-S))s"
done; done; done | tee $OUT/hn/summary.txt
cd $OUT && tar czf hn.tgz hn && rm -rf hn
