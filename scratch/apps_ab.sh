#!/usr/bin/env bash
# device: gpu-apps under several settings, same machine, same build
set -u
export CORUN_COMMIT=${CORUN_COMMIT:-unknown}
R=/tmp/res; rm -rf $R; mkdir -p $R
run() { local tag=$1; shift; env "$@" GPU_APPS_TIMEOUT=60 OUT=$R/$tag GPU_BUILD=build-gpu scripts/gpu-apps.sh > $R/$tag.txt 2>&1; echo "== $tag $*"; sed -n '/^program/,/^wrote/p' $R/$tag.txt | awk '{print $1, $4}' | tr '\n' ' '; echo; }
run base X=1
run ahead0 CORUN_AHEAD=0
run budget20 CORUN_CHUNK_BUDGET_US=20
run plain60 CORUN_PLAIN_BELOW_US=60
run base2 X=1
# binomial without the register pin
W=build-gpu/apps-work
sed 's/__maxnreg__(48) //' build-gpu/apps-src/binomial.cu > /tmp/binomial_np.cu
nvcc -O3 -arch=sm_90 -std=c++17 -Iinclude -Igpu/apps/binomial -o /tmp/binomial_np /tmp/binomial_np.cu -Lbuild-gpu -lcorun -Xlinker -rpath -Xlinker $PWD/build-gpu -Xptxas -v > $R/binomial_np.compile 2>&1
for i in 1 2; do
  for b in $W/plain/binomial $W/corun/binomial /tmp/binomial_np; do echo "$b $($b --out /tmp/o.bin | grep time_ms)"; done
done | tee $R/binomial_np.txt
cd /tmp && tar czf $OUT/res.tgz res
