#!/usr/bin/env bash
# smguard, absolute LS turnaround: HEAD (base) against the working tree, alternating
S=$SECONDS; R=$PWD
export PATH=/usr/local/cuda/bin:$PATH CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
B() { cmake -S $1 -B $2 -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > $2.log 2>&1 && cmake --build $2 -j8 --target corun_cli >> $2.log 2>&1; echo "build $2 rc=$? $((SECONDS-S))s"; }
B scratch/baset $R/b-base & B . $R/b-new & wait
mkdir -p $OUT/hn2
for r in 1 2 3; do for sc in ls-batch-200us ls-batch ls-batch-20ms; do for t in base new; do
  timeout 90 $R/b-$t/corun sim --backend cuda --scenario bench/scenarios/$sc.json --policy smguard --json --quiet > $OUT/hn2/$sc-$t-$r.json 2>$OUT/hn2/$sc-$t-$r.err
  python3 -c "
import json,sys
d=json.load(open('$OUT/hn2/$sc-$t-$r.json'))
a={x['name']:x for x in d['apps']}
ls=a['ls']; b=a['batch']
print('$sc $t $r', 'LS p50 %.1f p99 %.1f us solo_mean %.1f | batch work_rate %.3f' % (ls['turnaround_p50_us'], ls['turnaround_p99_us'], ls['solo_mean_us'], b['work_rate']))
"
done; done; done | tee $OUT/hn2/summary.txt
echo "total $((SECONDS-S))s"
cd $OUT && tar czf hn2.tgz hn2 && rm -rf hn2
