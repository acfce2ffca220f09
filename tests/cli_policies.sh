#!/usr/bin/env bash
# The command line of the FLEP and Slate policies: corun sim with a policy
# that needs profiles records them first and reports per-kernel JSON;
# corun profile lists and checks the store (and reports a corrupt one, which
# the next run that records profiles sets aside);
# bad input gives exit code 2.
# Usage: cli_policies.sh CORUN_BINARY SOURCE_DIR
set -euo pipefail
corun=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CORUN_PROFILE_PATH=$tmp/store/profiles.txt
export CORUN_PROFILE_TRAIN_RUNS=10
sc=$src/bench/scenarios

fail() {
  echo "FAIL: $*"
  exit 1
}

# expect CODE CMD...: the command exits with CODE
expect() {
  local want=$1 rc=0
  shift
  "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, expected $want: $(cat "$tmp/err")"
}

expect 0 "$corun" policies
for p in flep-hpf flep-ffs slate; do
  grep -q "^$p " "$tmp/out" || fail "corun policies does not list $p"
done
expect 0 "$corun" profile --help
expect 0 "$corun" experiment --help
expect 2 "$corun" experiment nosuch
expect 2 "$corun" profile --runs 0
expect 2 "$corun" sim --scenario "$sc/flep-hpf-pairs.json" --apps nosuch --policy flep-hpf

# A FLEP policy on a fresh store: the kernels are profiled first.
expect 0 "$corun" sim --scenario "$sc/flep-hpf-2kernel.json" --policy flep-hpf --json
grep -q "profiling 'nn'" "$tmp/err" || fail "no profiling of nn before the run"
for key in '"kernels"' '"turnaround_us"' '"waiting_us"' '"gpu_share"' '"ntt"' '"antt"' \
           '"stp"' '"fairness"' '"throughput"' '"window_us"'; do
  grep -q "$key" "$tmp/out" || fail "sim --json lacks $key"
done
# Now the store has them: no profiling the second time.
expect 0 "$corun" sim --scenario "$sc/flep-hpf-2kernel.json" --policy flep-hpf --quiet
grep -q "profiling" "$tmp/err" && fail "profiled again"
expect 0 "$corun" profile
grep -qE "^sim +nn +10 " "$tmp/out" || fail "corun profile does not list nn's 10 runs: $(cat "$tmp/out")"
expect 0 "$corun" profile --json
grep -q '"mean_mape"' "$tmp/out" || fail "profile --json lacks mean_mape"

# Slate: a pair from the pairings file, with its intensity profiles.
expect 0 "$corun" sim --scenario "$sc/slate-pairs.json" --apps tr,rg --policy slate \
  --duration-ms 20 --quiet
expect 0 "$corun" profile
grep -qE "slate_tr .* H_M" "$tmp/out" || fail "TR is not H_M: $(cat "$tmp/out")"
grep -qE "slate_rg .* L_C" "$tmp/out" || fail "RG is not L_C"

# A corrupt store: listing reports it and leaves it; a run that records
# profiles sets it aside, says so, and starts a new one.
echo "garbage" > "$CORUN_PROFILE_PATH"
expect 1 "$corun" profile
grep -q "corrupt" "$tmp/err" || fail "no word of the corrupt store"
ls "$tmp/store" | grep -q "profiles.txt.corrupt-" && fail "listing set the corrupt store aside"
expect 0 "$corun" sim --scenario "$sc/flep-hpf-2kernel.json" --policy flep-hpf
grep -q "corrupt" "$tmp/err" || fail "no word of the corrupt store"
ls "$tmp/store" | grep -q "profiles.txt.corrupt-" || fail "corrupt store not set aside"
expect 0 "$corun" profile
grep -qE "^sim +nn +10 " "$tmp/out" || fail "the new store lacks nn's runs: $(cat "$tmp/out")"
echo "ok"
