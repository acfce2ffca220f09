#!/usr/bin/env bash
# the tail hold back, with the launcher fix: memcheck sanitize loop, then smguard at 20 ms twice
O=$OUT; DL=${DL:-150}; S=$SECONDS
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > $O/cm.log 2>&1 && cmake --build build-gpu -j16 --target corun-gpucheck corun_cli >> $O/cm.log 2>&1; echo "build rc=$? $((SECONDS-S))s"
BIN=$PWD/build-gpu/gpu/check/corun-gpucheck
i=0
while [ $((SECONDS-S)) -lt $DL ]; do i=$((i+1))
  SANITIZE_STALL_S=8 CORUN_AHEAD=2 timeout 40 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $BIN sanitize > $O/mc.log 2>&1
  rc=$?; echo "run $i rc=$rc" >> $O/mc.txt; [ $rc != 0 ] && cp $O/mc.log $O/mc-fail-$i.log
done
echo "memcheck: $(grep -c "rc=0" $O/mc.txt) ok of $i runs"; rm -f $O/mc.log
for r in 1 2; do t0=$SECONDS
  timeout 100 build-gpu/corun demo --backend cuda --scenario bench/scenarios/ls-batch-20ms.json --systems smguard -q > $O/d$r.log 2>&1
  echo "20ms run $r rc=$? $((SECONDS-t0))s: $(grep -E '^smguard' $O/d$r.log | tr -s ' ')"
done
