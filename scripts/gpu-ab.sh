#!/usr/bin/env bash
# scripts/gpu-ab.sh: same-run A/B of a compile-time variant of the worker loop
# on a GPU. Builds corun-gpucheck twice -- a as the tree is, b with AB_FLAG
# added to the CUDA flags (e.g. AB_FLAG=-DSOME_MACRO=1, a macro the variant
# is written under) -- then runs the chosen modes interleaved a1 b1 a2 b2, so
# both sides see the same machine state. Prints the tables; JSON under $OUT.
#
#   AB_FLAG="-D..."   required: what b is built with
#   AB_MODES="..."    what to run each round (default: overhead)
#                     overhead         corun-gpucheck overhead --reps 15
#                     resume:KERNEL    corun-gpucheck resume --kernel KERNEL
#                     cm:N             overhead with --chunk-max N (4 kernels)
#                     latency          corun-gpucheck latency (halt and evict)
#   AB_ARGS="..."     more options for every corun-gpucheck run (e.g.
#                     "--budgets 5,8,10,20": the budgets overhead and latency use)
#   AB_ROUNDS=N       rounds (default 2)
#   OUT=DIR           JSON output (default /tmp/gpu-ab)
# What its A/Bs measured, with their raw files: docs/decisions/ (0016 lists the
# designs dropped).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] || [ -z "${AB_FLAG:-}" ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  if [ -z "${1:-}" ]; then
    echo "gpu-ab: set AB_FLAG to the flag variant b is built with" >&2
    exit 2
  fi
  exit 0
fi
export PATH=/usr/local/cuda/bin:$PATH
[ -d .deps/root/usr ] && export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
OUT=${OUT:-/tmp/gpu-ab}
mkdir -p "$OUT"
for v in a b; do
  flags=""
  [ $v = b ] && flags="$AB_FLAG"
  ( cmake -S . -B build-ab-$v -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF \
      -DCORUN_WERROR=OFF "-DCMAKE_CUDA_FLAGS=$flags" > /dev/null &&
    cmake --build build-ab-$v -j 8 --target corun-gpucheck > /dev/null 2> "$OUT/build-$v.err" ||
    { echo "gpu-ab: build $v failed (see $OUT/build-$v.err)" >&2; exit 1; } ) &
done
wait || exit 1
for v in a b; do
  [ -x build-ab-$v/gpu/check/corun-gpucheck ] || { echo "gpu-ab: no build $v" >&2; exit 1; }
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in $(seq 1 "${AB_ROUNDS:-2}"); do
  for v in a b; do
    echo "== $v$r"
    gc="build-ab-$v/gpu/check/corun-gpucheck"
    args=(${AB_ARGS:-})
    for m in ${AB_MODES:-overhead}; do
      case $m in
        overhead) $gc overhead "${args[@]}" --reps 15 --json "$OUT/ov-$v$r.json" | tail -12 ;;
        cm:*) $gc overhead "${args[@]}" --reps 15 --chunk-max "${m#cm:}" |
                grep -E "^(transpose|vadd|blackscholes|stencil3d) " | sed "s/^/cm${m#cm:} /" ;;
        resume:*) $gc resume "${args[@]}" --kernel "${m#resume:}" --json "$OUT/re-${m#resume:}-$v$r.json" |
                    tail -4 ;;
        latency) $gc latency "${args[@]}" --json "$OUT/lat-$v$r.json" | grep -E "^(halt|evict|what)" ;;
        *) echo "gpu-ab: unknown mode '$m'" >&2; exit 2 ;;
      esac
    done
  done
done
