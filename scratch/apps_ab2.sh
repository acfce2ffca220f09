#!/usr/bin/env bash
set -u
R=/tmp/res; rm -rf $R; mkdir -p $R
OUT=$R/gc GPU_CHECK_STEPS="build" scripts/gpu-check.sh > $R/build.txt 2>&1 || { tail $R/build.txt; exit 1; }
run() { local tag=$1; shift; env "$@" GPU_APPS_TIMEOUT=60 OUT=$R/$tag GPU_BUILD=build-gpu scripts/gpu-apps.sh > $R/$tag.txt 2>&1; echo "== $tag"; sed -n '/^program/,/^wrote/p' $R/$tag.txt | awk '{print $1, $4}' | tr '\n' ' '; echo; }
F="-O3 -arch=sm_90 -std=c++17"
run stamp NVCCFLAGS="$F"
run nostamp NVCCFLAGS="$F -DCORUN_NO_RUN_STAMP"
run stamp NVCCFLAGS="$F"
run nostamp NVCCFLAGS="$F -DCORUN_NO_RUN_STAMP"
cd /tmp && tar czf $OUT/res.tgz res
