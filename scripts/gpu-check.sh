#!/usr/bin/env bash
# make gpu-check: build, test and benchmark everything GPU-side in one call.
#
# Writes logs and one JSON file per step under $OUT (default build-gpu/out),
# then gpu-results.json (device, driver, commit, date, every step's records),
# and prints a short table last. Steps (all by default; choose some with
# GPU_CHECK_STEPS="occupancy correctness ..."):
#   build        cmake + nvcc build of libcorun, the CLI and gpu-check
#   occupancy    registers and blocks/SM of plain vs worker kernels
#   correctness  worker == plain, every block-task exactly once, >= 1000 events
#   overhead     worker vs plain kernel alone on the GPU, per chunk budget
#   latency      stop and evict latency vs a flag-polling baseline
#   resume       preempted half way and resumed vs uninterrupted
#   spatial      LS kernel launched into evicted CapSMs of a running kernel
#   sanitize     compute-sanitizer memcheck and racecheck on the worker loop
#   demo         corun demo on the GPU (LS+batch scenario, real kernels)
#   apps         gpu/apps built with nvcc and with corun-nvcc: outputs equal,
#                overhead (scripts/gpu-apps.sh; without libclang on the GPU
#                machine it compiles build-gpu/apps-src, made by
#                `scripts/gpu-apps.sh --prepare` where libclang is)
# Needs: an NVIDIA GPU, nvcc, cmake, and jansson (Debian libjansson-dev, or
# .deps from scripts/fetch-deps.sh on machines that cannot install packages).
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-build-gpu/out}
BUILD=${GPU_BUILD:-build-gpu}
STEPS=${GPU_CHECK_STEPS:-"build occupancy correctness overhead latency resume spatial sanitize demo apps"}
COMMIT=${CORUN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
JOBS=$(nproc 2>/dev/null || echo 4)
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH

if [ -d .deps/root/usr ]; then
  export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
fi

declare -A status
summary=()
has() { [[ " $STEPS " == *" $1 "* ]]; }

# run_step NAME TIMEOUT CMD...: runs CMD with a time limit, logs to $OUT/NAME.log
run_step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "== $name: $*" | tee -a "$OUT/steps.log"
  timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  status[$name]=$rc
  local verdict=ok
  [ $rc -eq 124 ] && verdict="TIMEOUT after ${limit}s"
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && verdict="FAILED (exit $rc)"
  echo "   $verdict in $((SECONDS - t0)) s" | tee -a "$OUT/steps.log"
  tail -n 25 "$OUT/$name.log"
  summary+=("$(printf '%-12s %s' "$name" "$verdict")")
  return $rc
}

device="unknown"
driver="unknown"
if command -v nvidia-smi >/dev/null 2>&1; then
  device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
fi
date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "gpu-check: $device, driver $driver, commit $COMMIT, $date_utc" | tee "$OUT/steps.log"

if has build; then
  run_step build 600 bash -c "cmake -S . -B '$BUILD' -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON \
      -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF && cmake --build '$BUILD' -j $JOBS" || {
    echo "build failed; nothing else can run"
    exit 1
  }
fi
GC=$BUILD/gpu/check/corun-gpucheck
GCH=$BUILD/gpu/check/corun-gpucheck-hits

has occupancy && run_step occupancy 120 "$GC" occupancy --json "$OUT/occupancy.json"
has correctness && run_step correctness 420 "$GCH" correctness --events 1000 --json "$OUT/correctness.json"
has overhead && run_step overhead 300 "$GC" overhead --reps 15 --json "$OUT/overhead.json"
has latency && run_step latency 200 "$GC" latency --trials 30 --json "$OUT/latency.json"
has resume && run_step resume 200 "$GC" resume --json "$OUT/resume.json"
has spatial && run_step spatial 120 "$GC" spatial --trials 20 --json "$OUT/spatial.json"
if has sanitize; then
  if command -v compute-sanitizer >/dev/null 2>&1; then
    run_step memcheck 300 compute-sanitizer --tool memcheck --error-exitcode 3 "$GC" sanitize
    run_step racecheck 400 compute-sanitizer --tool racecheck --error-exitcode 3 "$GC" sanitize
  else
    summary+=("sanitize     SKIPPED (no compute-sanitizer)")
  fi
fi
if has demo; then
  run_step demo 200 bash -c "'$BUILD/corun' demo --backend cuda --quiet && \
      '$BUILD/corun' demo --backend cuda --quiet --json > '$OUT/demo.json'"
fi

if has apps; then
  run_step apps 900 env OUT="$OUT" GPU_BUILD="$BUILD" scripts/gpu-apps.sh
fi

# One file with everything, for bench/results/.
{
  printf '{\n  "device": "%s",\n  "driver": "%s",\n  "commit": "%s",\n  "date": "%s",\n' \
    "$device" "$driver" "$COMMIT" "$date_utc"
  printf '  "steps": {'
  first=1
  for s in "${!status[@]}"; do
    [ $first -eq 0 ] && printf ','
    first=0
    printf '"%s": %d' "$s" "${status[$s]}"
  done
  printf '},\n'
  for f in occupancy correctness overhead latency resume spatial demo apps; do
    if [ -s "$OUT/$f.json" ]; then
      printf '  "%s": ' "$f"
      cat "$OUT/$f.json"
      printf ',\n'
    fi
  done
  printf '  "end": true\n}\n'
} > "$OUT/gpu-results.json"

echo
echo "==== gpu-check summary: $device, driver $driver, commit $COMMIT"
for line in "${summary[@]}"; do
  echo "  $line"
done
for f in occupancy correctness overhead latency resume spatial demo apps; do
  [ -s "$OUT/$f.log" ] || continue
  echo "---- $f"
  case $f in
    overhead) grep -E "^(kernel|[a-z0-9]+ )" "$OUT/$f.log" | head -12 ;;
    demo) grep -E "^(system|mps|priority|smguard)" "$OUT/$f.log" | head -6 ;;
    apps) sed -n '/^gpu\/apps on/,$p' "$OUT/$f.log" | head -14 ;;
    *) grep -vE "^(==|   )" "$OUT/$f.log" | tail -12 ;;
  esac
done
fail=0
for s in "${!status[@]}"; do
  [ "${status[$s]}" -ne 0 ] && fail=1
done
exit $fail
