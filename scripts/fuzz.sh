#!/usr/bin/env bash
# scripts/fuzz.sh [BUILD [SECONDS]]: the libFuzzer targets of fuzz/ (scenario loader, profile
# store parser, settings parser, daemon wire protocol), built with clang, ASan and UBSan in
# BUILD (default build-fuzz) and run SECONDS each (default 60) from their seeds; a crash, leak,
# sanitizer report, broken contract or hang fails it. `make test` runs it last. Where clang or its
# libFuzzer is missing it says so and exits 0: nothing else needs them.
#
#   FUZZ_RUNS=N       run each target for N inputs instead, from its seeds alone (the
#                     benchmark: FUZZ_RUNS=1000000 scripts/fuzz.sh, docs/performance.md)
#   FUZZ_TARGETS=...  which targets, of "scenario profile settings proto" (default: all)
#   FUZZ_CC=CC        the compiler (default: clang)
#   FUZZ_JOBS=N       build jobs (default: nproc)
#
# Inputs that reach new code are kept in BUILD/corpus/NAME for the next run (never in the
# repository's seeds); an input that fails is written to BUILD/artifacts/ and its log shown.
# To replay one: BUILD/fuzz/fuzz_NAME FILE. Seeds: fuzz/corpus/NAME/ (and bench/scenarios/).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-fuzz}
SECONDS_EACH=${2:-60}
RUNS=${FUZZ_RUNS:-}
TARGETS=${FUZZ_TARGETS:-scenario profile settings proto}
CC_FUZZ=${FUZZ_CC:-clang}
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}

skip() {
  echo "fuzz: skipped: $*" >&2
  exit 0
}

command -v "$CC_FUZZ" >/dev/null 2>&1 || skip "no $CC_FUZZ (apt-get install clang)"
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
probe="$BUILD/probe"
mkdir -p "$probe"
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
  'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
  'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
  > "$probe/probe.c"
"$CC_FUZZ" -fsanitize=fuzzer,address,undefined "$probe/probe.c" -o "$probe/probe" \
  > "$probe/probe.log" 2>&1 || skip "$CC_FUZZ cannot link -fsanitize=fuzzer,address,undefined ($probe/probe.log)"

# -O1: fast enough to fuzz, close enough to the source for the reports; asserts stay on.
cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER="$CC_FUZZ" -DCORUN_FUZZ=ON -DCORUN_CUDA=OFF \
  -DCORUN_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" >&2
cmake --build "$BUILD" --target fuzz -j "$JOBS" >&2

seeds() {
  case $1 in
    scenario) echo fuzz/corpus/scenario bench/scenarios ;;
    *) echo "fuzz/corpus/$1" ;;
  esac
}

mkdir -p "$BUILD/artifacts" "$BUILD/logs"
if [ -n "$RUNS" ]; then
  limit=(-runs="$RUNS")
  echo "# FUZZ_RUNS=$RUNS scripts/fuzz.sh: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%dT%H:%M:%SZ), $("$CC_FUZZ" --version | head -1)"
else
  limit=(-max_total_time="$SECONDS_EACH")
fi
failed=0
for t in $TARGETS; do
  work="$BUILD/corpus/$t"
  if [ -n "$RUNS" ]; then
    work="$BUILD/corpus-runs/$t" # the benchmark starts from the seeds alone
    rm -rf "$work"
  fi
  mkdir -p "$work"
  log="$BUILD/logs/$t.log"
  # shellcheck disable=SC2046  # seeds() gives folder names without blanks
  if "$BUILD/fuzz/fuzz_$t" "${limit[@]}" -timeout=60 -print_final_stats=1 \
       -artifact_prefix="$BUILD/artifacts/$t-" "$work" $(seeds "$t") > "$log" 2>&1; then
    status="0 crashes"
  else
    status="FAILED (log: $log)"
    failed=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  printf 'fuzz_%-9s %s inputs in %s s, %s inputs/s, %s, %s\n' "$t" "${runs:-?}" "${secs:-?}" \
    "${rate:-?}" "${cov:-cov: ?}" "$status"
  if [ "$status" != "0 crashes" ]; then
    tail -n 60 "$log" >&2
  fi
done
exit $failed
