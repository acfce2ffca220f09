#!/usr/bin/env bash
# The command line's options (issue 31, point 7): help that lists every
# option a command takes, settings shown and refused with their bounds,
# option values refused with a clear message, a non-zero exit and nothing
# done, and a bad CORUN_* variable that does not stand in the way of help.
# Usage: cli_options.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"
export CORUN_PROFILE_PATH=$tmp/store/profiles.txt
cd "$tmp" || exit 1

# --- help -------------------------------------------------------------------

# corun --help ends with a whole sentence
"$corun" --help > "$tmp/help"
check "corun --help ends with a full stop" test "$(tail -c 2 "$tmp/help")" = "."
check "corun --help says where a command's options are" grep -q "lists a command's options" \
  "$tmp/help"

# help_lists CMD OPTION...: corun CMD --help has a line for each option the
# command takes, and the command knows every option its help lists.
help_lists() {
  local cmd=$1 opt listed
  shift
  "$corun" "$cmd" --help > "$tmp/help"
  for opt in "$@"; do
    check "corun $cmd --help lists $opt" grep -qE "^  (-[a-z], )?$opt( |$)" "$tmp/help"
    check "corun $cmd --help's usage names $opt" \
      grep -qE "^(usage: corun| {10,}).*\\[?$opt[] ]" "$tmp/help"
  done
  for listed in $(grep -oE "^  (-[a-z], )?--[a-z-]+" "$tmp/help" | grep -oE -- "--[a-z-]+"); do
    # (demo --train records profiles: into a store of its own)
    CORUN_PROFILE_PATH="$tmp/known/profiles.txt" "$corun" "$cmd" "$listed" > "$tmp/out" 2>&1
    check "corun $cmd knows $listed, which its help lists" \
      bash -c "! grep -q 'unknown option' '$tmp/out'"
  done
}
help_lists sim --scenario --policy --apps --backend --reserve --seed --duration-ms --train --no-train \
  --json --quiet
help_lists demo --scenario --apps --systems --reserve --backend --seed --duration-ms --train --no-train --processes --ls-sms --keep \
  --json --quiet
help_lists experiment --backend --dir --max-sets --duration-ms --quiet
help_lists profile --train-scenario --runs --app --backend --json
help_lists occupancy --threads --regs --smem --dyn --optin

# --- corun config -----------------------------------------------------------

expect 0 "CORUN_CHUNK_MAX" -- config
check "config: whole-number bounds in digits" grep -qE "^CORUN_CHUNK_MAX +uint +\[1, 1048576\]" \
  "$tmp/out"
check "config: no bound in e-notation" bash -c "! grep -qE '\\[[^]]*e\\+' '$tmp/out'"
# every row's columns start where the header's do (the widest name,
# CORUN_PREEMPT_OVERHEAD_US, included)
awk 'NR == 1 { for (c = 2; c <= 6; c++) at[c] = index($0, $c); next }
     { for (c in at) if (substr($0, at[c] - 2, 2) != "  ") { print "row " NR ": " $1; bad = 1 } }
     END { exit bad }' "$tmp/out" > "$tmp/misaligned"
check "config: aligned columns ($(head -1 "$tmp/misaligned"))" test ! -s "$tmp/misaligned"

# --- option values ----------------------------------------------------------

# a missing value is named as such
expect 2 "corun: option --set needs a value" -- --set
expect 2 "corun: option --log-level needs a value" -- --log-level
expect 2 "corun demo: option --seed needs a value" -- demo --seed
expect 2 "corun sim: option --backend needs a value" -- sim --backend
expect 2 "corun experiment: option --dir needs a value" -- experiment hpf --dir
expect 2 "corun profile: option --runs needs a value" -- profile --runs
expect 2 "corun occupancy: option --threads needs a value" -- occupancy --threads
expect 2 "unknown option '--bogus'" -- experiment hpf --bogus x
expect 2 "unknown option '--bogus'" -- profile --bogus x

# empty values, paths included, are errors
expect 2 "option --scenario needs a value, not an empty one" -- sim --scenario "" --policy mps
expect 2 "option --systems needs a value, not an empty one" -- demo --systems ""
# demo --processes: a GPU only, its own options checked, the scenario's ls and batch needed
expect 2 "corun demo: --processes needs a GPU (backend sim)" -- demo --processes --backend sim
expect 2 "corun demo: --ls-sms: '0' is not a number of SMs in [1, 4096]" -- \
  demo --processes --ls-sms 0
expect 2 "corun demo: --ls-sms needs a value" -- demo --processes --ls-sms
expect 2 "corun demo: --ls-sms and --keep go with --processes" -- demo --keep "$tmp/keep"
expect 2 "--apps and --systems do not go with --processes" -- demo --processes --apps ls
expect 2 "needs a scenario with applications named ls and batch (flep-hpf-2kernel has no ls)" \
  -- demo --processes --backend sim --scenario "$src/bench/scenarios/flep-hpf-2kernel.json"
expect 2 "option --dir needs a value, not an empty one" -- experiment hpf --dir ""
expect 2 "option --train-scenario needs a value" -- profile --train-scenario ""
expect_run 2 "CORUN_PROFILE_PATH: empty" -- env CORUN_PROFILE_PATH= "$corun" profile

# numbers in hex, with a sign or blanks, or out of bounds are refused with
# the bounds, and nothing is done
expect 2 "CORUN_CHUNK_BUDGET_US: '0x10' is not a decimal number in [0.5, 1000000]" -- \
  --set chunk_budget_us=0x10 config
expect 2 "CORUN_CHUNK_MAX: '0x10' is not a whole number in [1, 1048576]" -- \
  --set chunk_max=0x10 config
expect 2 "CORUN_CHUNK_MAX: '+16' is not a whole number" -- --set chunk_max=+16 config
expect 2 "CORUN_CHUNK_MAX: 0 is outside [1, 1048576]" -- --set chunk_max=0 config
expect_run 2 "CORUN_SEED: ' 5' is not a whole number" -- env CORUN_SEED=" 5" "$corun" config
expect_run 2 "CORUN_CHUNK_BUDGET_US: 'inf' is not a decimal number" -- \
  env CORUN_CHUNK_BUDGET_US=inf "$corun" config
expect 2 "option --duration-ms: '0x10' is not a decimal number in (0, 1e7]" -- \
  demo --duration-ms 0x10
expect 2 "option --reserve: '0x8' is not a whole number in [0, 4096]" -- demo --reserve 0x8
expect 2 "option --max-sets: '0x2' is not a whole number in [0, 1000]" -- \
  experiment hpf --max-sets 0x2
expect 2 "option --threads: '0x80' is not a whole number" -- occupancy --threads 0x80
expect 2 "corun profile: option --runs: 4 is outside [5, 100000] (setting CORUN_PROFILE_TRAIN_RUNS)" \
  -- profile --train-scenario ls-batch --runs 4
check "a refused --runs trains nothing" test ! -e "$CORUN_PROFILE_PATH"

# --- settings from the environment -----------------------------------------

# one bad variable does not stand in the way of help or the version
for args in "--help" "--version" "help" "help sim" "sim --help" "--set seed=1 demo -h"; do
  # shellcheck disable=SC2086
  expect_run 0 "corun" -- env CORUN_SEED=abc "$corun" $args
done
expect_run 2 "CORUN_SEED: 'abc' is not a whole number" -- env CORUN_SEED=abc "$corun" config

# CORUN_POLICY takes the names corun policies lists
expect_run 2 "CORUN_POLICY: 'bogus' is not one of mps,priority,smguard" -- \
  env CORUN_POLICY=bogus "$corun" config
for p in $("$corun" policies | cut -d' ' -f1); do
  expect_run 0 "CORUN_POLICY" -- env CORUN_POLICY="$p" "$corun" config
done

# 'off' in any case means no profile store (not a file named OFF here)
for off in off OFF Off; do
  expect_run 2 "no profile store (CORUN_PROFILE_PATH is '$off')" -- \
    env CORUN_PROFILE_PATH=$off "$corun" profile
  check "CORUN_PROFILE_PATH=$off makes no file" test ! -e "$tmp/$off"
done

# --- training ---------------------------------------------------------------

# the same training twice (same seed) stores its runs once: 5 at random
# sizes and the 3 of the intensity profile at the kernel's own size
"$corun" profile --train-scenario slate-pair-mm-bs --runs 5 --json > "$tmp/first" 2> /dev/null
"$corun" profile --train-scenario slate-pair-mm-bs --runs 5 --json > "$tmp/second" 2> /dev/null
check "training records runs" grep -q '"runs": 8' "$tmp/first"
check "training again with the same seed stores no duplicate runs" \
  bash -c "! grep -q '\"runs\": 16' '$tmp/second' && grep -q '\"runs\": 8' '$tmp/second'"

expect_done
