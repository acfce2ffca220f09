#!/usr/bin/env bash
cd scratch/probe3; export PATH=/usr/local/cuda/bin:$PATH
declare -A V=([full]="" [nostarted]="-DXNO_STARTED" [noreport]="-DXNO_REPORT" [notimer]="-DXNO_TIMER" [noseed]="-DXNO_SEED" [leavered]="-DXLEAVE_RED -DXNO_REPORT" [nodone]="-DXNO_DONE" [all]="-DXNO_STARTED -DXNO_REPORT -DXNO_TIMER -DXNO_SEED -DXLEAVE_RED -DXNO_DONE")
for k in "${!V[@]}"; do nvcc -O3 -arch=sm_90 -std=c++17 -Iinc ${V[$k]} -o /tmp/wc-$k wcost.cu -Xptxas -v > /tmp/wc-$k.log 2>&1 & done; wait
grep -h "burn__corun\|Used\|stack" /tmp/wc-full.log | head -8
for k in full nostarted noreport notimer noseed leavered nodone all; do /tmp/wc-$k $k; done
