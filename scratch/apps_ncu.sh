#!/usr/bin/env bash
# device: gpu-apps table, then per-kernel GPU time (ncu) of both builds
set -u
export CORUN_COMMIT=${CORUN_COMMIT:-unknown}
R=/tmp/res; rm -rf $R; mkdir -p $R
GPU_APPS_TIMEOUT=60 OUT=$R GPU_BUILD=build-gpu scripts/gpu-apps.sh > $R/apps.txt 2>&1
W=build-gpu/apps-work
cp $W/apps.log $R/ 2>/dev/null
for a in ${NCU_APPS:-hotspot backprop binomial srad lavamd fastwalsh}; do
  for v in plain corun; do
    timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      $W/$v/$a --out /tmp/ncu.out > $R/ncu-$a-$v.csv 2>&1
  done
done
cd /tmp && tar czf $OUT/res.tgz res
