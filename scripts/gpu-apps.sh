#!/usr/bin/env bash
# The eleven gpu/apps programs, built with nvcc and with corun-nvcc, run on
# the GPU, their outputs compared (gpu/apps/cmpout --rtol 0: bitwise, as
# gpu/apps/README.md expects for every program) and their times set side by
# side. Prints a table and writes $OUT/apps.json; build and run logs stay in
# $GPU_BUILD/apps-work (apps.log there).
#
#   scripts/gpu-apps.sh                  build both ways here, run, compare
#   scripts/gpu-apps.sh --prepare [DIR]  on a machine with libclang: only
#                                        transform the programs into DIR
#                                        (default build-gpu/apps-src) and
#                                        build them, no GPU needed
#
# A GPU machine without libclang (no network to install it) compiles the
# files --prepare left in build-gpu/apps-src (carry that folder along) with
# nvcc against this tree's include/ and the libcorun of $GPU_BUILD.
#
# Settings (environment): OUT (default build-gpu/out), GPU_BUILD (default
# build-gpu), GPU_APPS (program list), GPU_APPS_ARGS (extra arguments for
# every program, e.g. --small), GPU_APPS_TIMEOUT (seconds per run, 300),
# GPU_APPS_SRC (transformed sources, default build-gpu/apps-src).
# The corun build of each program runs with CORUN_LAUNCH_STATS set, so the
# table also shows how many launches really went through corun (workers or
# plain), and otherwise with corun's defaults, as a new user runs it.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

OUT=${OUT:-build-gpu/out}
BUILD=${GPU_BUILD:-build-gpu}
APPS=${GPU_APPS:-"pathfinder hotspot lavamd backprop srad matrixmul blackscholes fastwalsh binomial convsep md5search"}
ARGS=${GPU_APPS_ARGS:-}
LIMIT=${GPU_APPS_TIMEOUT:-300}
SRC=${GPU_APPS_SRC:-build-gpu/apps-src}
NVCCFLAGS=${NVCCFLAGS:-"-O3 -arch=sm_90 -std=c++17"}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log=/dev/null
say() { echo "$*" | tee -a "$log"; }

# libcorun and (where libclang is) corun-cc/corun-nvcc, up to date
# shellcheck source=scripts/gpu-build.sh
source scripts/gpu-build.sh
say "== building libcorun in $BUILD"
gpu_build "$BUILD" apps-cmake.log || exit 1
BUILD=$(cd "$BUILD" && pwd)
work=$BUILD/apps-work
mkdir -p "$work"
log=$work/apps.log
: > "$log"

if [ "${1:-}" = --prepare ]; then
  dest=${2:-$SRC}
  [ -x "$BUILD/corun-nvcc" ] || { say "no $BUILD/corun-nvcc (needs libclang-19)"; exit 1; }
  rm -rf "$dest" "$work/prepare" # a stale prepare build would write no sources
  mkdir -p "$dest"
  dest=$(cd "$dest" && pwd)
  say "== transforming into $dest"
  CORUN_NVCC_KEEP=$dest CORUN_CACHE=$work/cc-cache \
    make -C gpu/apps NVCC="$BUILD/corun-nvcc" BUILD="$work/prepare" $APPS >> "$log" 2>&1 || {
    say "corun-nvcc build failed (see $log)"
    exit 1
  }
  ls "$dest" | tee -a "$log"
  exit 0
fi

# --- build both ways ----------------------------------------------------------
say "== plain build (nvcc)"
make -j "$(nproc)" -C gpu/apps BUILD="$work/plain" NVCCFLAGS="$NVCCFLAGS" $APPS cmpout >> "$log" 2>&1 || {
  say "plain build failed (see $log)"
  exit 1
}
lib=(-L"$BUILD" -lcorun -Xlinker -rpath -Xlinker "$BUILD")
# shellcheck disable=SC2206
[ -n "${CORUN_NVCC_EXTRA_LIBS:-}" ] && lib+=($CORUN_NVCC_EXTRA_LIBS)
if [ -x "$BUILD/corun-nvcc" ]; then
  say "== corun build (corun-nvcc)"
  CORUN_CACHE=$work/cc-cache make -j "$(nproc)" -C gpu/apps NVCC="$BUILD/corun-nvcc" BUILD="$work/corun" \
    NVCCFLAGS="$NVCCFLAGS" $APPS >> "$log" 2>&1 || {
    say "corun-nvcc build failed (see $log)"
    exit 1
  }
else
  say "== corun build from $SRC (no corun-nvcc here: files transformed by --prepare)"
  mkdir -p "$work/corun"
  pids=()
  for a in $APPS; do
    [ -f "$SRC/$a.cu" ] || { say "missing $SRC/$a.cu: run scripts/gpu-apps.sh --prepare where libclang is"; exit 1; }
    # shellcheck disable=SC2086
    nvcc $NVCCFLAGS -I"$root/include" -I"$root/gpu/apps/$a" -o "$work/corun/$a" "$SRC/$a.cu" \
      "${lib[@]}" > "$work/$a.compile.log" 2>&1 &
    pids+=("$!:$a")
  done
  for p in "${pids[@]}"; do
    a=${p#*:}
    wait "${p%%:*}" || { cat "$work/$a.compile.log" >> "$log"; say "compile of $SRC/$a.cu failed (see $log)"; exit 1; }
  done
fi

# --- run and compare ------------------------------------------------------------
# run_limited OUTFILE CMD...: runs CMD with output to OUTFILE for at most
# $LIMIT s; a run still going then gets its threads' backtraces taken by
# cuda-gdb (where there is one) into OUTFILE.bt before it is killed.
run_limited() {
  local out=$1 pid ticks=0
  shift
  "$@" > "$out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2> /dev/null; do
    if [ $ticks -ge $((LIMIT * 10)) ]; then
      if command -v cuda-gdb > /dev/null 2>&1; then
        timeout 60 cuda-gdb -batch -p "$pid" -ex "thread apply all bt" > "$out.bt" 2>&1
      fi
      kill -9 "$pid" 2> /dev/null
      wait "$pid" 2> /dev/null
      return 124
    fi
    sleep 0.1
    ticks=$((ticks + 1))
  done
  wait "$pid"
}

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" "$2" | tail -1; }
rows=()
json_rows=()
fail=0
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
say "== running (at most $LIMIT s per run)"
for a in $APPS; do
  po=$work/$a.plain.out
  co=$work/$a.corun.out
  stats=$work/$a.stats
  rm -f "$po" "$co" "$stats"
  # shellcheck disable=SC2086
  run_limited "$work/$a.plain.txt" "$work/plain/$a" $ARGS --out "$po"
  prc=$?
  # shellcheck disable=SC2086
  run_limited "$work/$a.corun.txt" env \
    CORUN_LAUNCH_STATS="$stats" "$work/corun/$a" $ARGS --out "$co"
  crc=$?
  pms=$(field time_ms "$work/$a.plain.txt")
  cms=$(field time_ms "$work/$a.corun.txt")
  pvalid=$(sed -n 's/^VALID \(.*\)/\1/p' "$work/$a.plain.txt" | tail -1)
  cvalid=$(sed -n 's/^VALID \(.*\)/\1/p' "$work/$a.corun.txt" | tail -1)
  equal=no
  if [ $prc -eq 0 ] && [ $crc -eq 0 ] && "$work/plain/cmpout" "$po" "$co" --rtol 0 \
       > "$work/$a.cmp.txt" 2>&1; then
    equal=yes
  fi
  via=$(sed -n 's/.*"through_corun": \([0-9]*\), "plain": \([0-9]*\), "corun_ran_plain": \([0-9]*\), "corun_ran_grid": \([0-9]*\).*/\1\/\2 (\3 of them plain, \4 grid)/p' "$stats" 2> /dev/null | tail -1)
  why=$(sed -n 's/.*"first_plain_reason": "\(.*\)"}.*/\1/p' "$stats" 2> /dev/null | tail -1)
  over=n/a
  if [ -n "$pms" ] && [ -n "$cms" ]; then
    over=$(awk -v p="$pms" -v c="$cms" 'BEGIN { if (p > 0) printf "%+.1f", (c - p) / p * 100; else print "n/a" }')
  fi
  [ "$equal" = yes ] || fail=1
  say "$(printf '  %-13s plain %s ms (exit %d), corun %s ms (exit %d), outputs equal: %s [%d s]' \
    "$a" "${pms:-?}" "$prc" "${cms:-?}" "$crc" "$equal" "$SECONDS")"
  rows+=("$(printf '%-13s %10s %10s %10s  %-6s %-7s %s' "$a" "${pms:-?}" "${cms:-?}" "$over" "$equal" "${via:-?}" "${why:0:60}")")
  json_rows+=("$(printf '{"program": "%s", "plain_ms": %s, "corun_ms": %s, "overhead_pct": %s, "outputs_equal": %s, "plain_exit": %d, "corun_exit": %d, "plain_valid": "%s", "corun_valid": "%s", "launches_corun_plain": "%s", "first_plain_reason": "%s"}' \
    "$a" "${pms:-null}" "${cms:-null}" "$([ "$over" = n/a ] && echo null || echo "${over#+}")" \
    "$([ "$equal" = yes ] && echo true || echo false)" "$prc" "$crc" "$pvalid" "$cvalid" "${via:-}" "${why//\"/\'}")")
  { echo "--- $a"; tail -3 "$work/$a.plain.txt"; tail -3 "$work/$a.corun.txt"; cat "$work/$a.cmp.txt" 2> /dev/null; } >> "$log"
done

{
  echo
  echo "gpu/apps on ${device:-unknown GPU}: plain nvcc build vs corun-nvcc build (median ms per run)"
  printf '%-13s %10s %10s %10s  %-6s %-7s %s\n' program "plain ms" "corun ms" "overhead%" equal "corun/shim-plain" "why plain"
  printf '%s\n' "${rows[@]}"
} | tee -a "$log"
{
  printf '{\n  "device": "%s",\n  "commit": "%s",\n  "date": "%s",\n  "args": "%s",\n  "programs": [\n' \
    "${device:-unknown}" "$(gpu_label)" \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$ARGS"
  n=${#json_rows[@]}
  for i in "${!json_rows[@]}"; do
    printf '    %s%s\n' "${json_rows[$i]}" "$([ "$i" -lt $((n - 1)) ] && echo ,)"
  done
  printf '  ]\n}\n'
} > "$OUT/apps.json"
mkdir -p "$OUT/apps"
cp "$work"/*.txt "$work"/*.bt "$work"/*.stats "$OUT/apps/" 2> /dev/null
say "wrote $OUT/apps.json (program outputs and any hang backtraces in $OUT/apps/)"
exit $fail
