#!/usr/bin/env bash
# What a scenario run does at its edges (issue 31, point 6): a scenario that
# cannot be run as written is refused before anything runs, with the
# reason, and nothing is left behind (the sanitizer build checks for leaks).
# Usage: cli_scenario_runs.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"
export CORUN_PROFILE_PATH=$tmp/profiles.txt

# corun experiment with a folder that lacks its scenario file: an error,
# and the scenario it allocated freed (LeakSanitizer fails the exit code)
mkdir -p "$tmp/empty"
expect 1 "flep-hpf-pairs.json: No such file" -- experiment hpf --dir "$tmp/empty" --quiet

# scenario FILE DURATION_MS ARRIVAL: a loop app "a" from the start, and an
# app "b" arriving as ARRIVAL says
scenario() {
  cat > "$1" <<J
{"name": "t", "duration_ms": $2, "apps": [
 {"name": "a", "arrival": {"kind": "loop"}, "kernel": {"grid": 132, "block": 128, "task_us": 100}},
 {"name": "b", "arrival": $3, "kernel": {"grid": 132, "block": 128, "task_us": 100}}]}
J
}

# Nothing is submitted at or after duration_ms: an app that would start
# later never arrives, and the run is refused before anything runs.
scenario "$tmp/late.json" 1000 '{"kind": "loop", "start_us": 2000000}'
expect 2 "app 'b' never arrives: its first launch (at 2000000 us)" -- \
  sim --scenario "$tmp/late.json" --policy mps
check "a refused run prints no results" test "$(grep -c ANTT "$tmp/out")" -eq 0
scenario "$tmp/later.json" 1000 '{"kind": "loop", "start_us": 1e12}'
expect 2 "app 'b' never arrives" -- sim --scenario "$tmp/later.json" --policy mps
expect 2 "app 'b' never arrives" -- demo --scenario "$tmp/later.json" --backend sim
# ... and arrives when the window is long enough
expect 0 "ANTT" -- sim --scenario "$tmp/late.json" --policy mps --duration-ms 2001 --quiet

# A reservation of the whole GPU leaves smguard's batch kernels no quota:
# said, and the run refused (batch got one CapSM and 1 % of its throughput)
expect 2 "app 'batch': smguard: the LS reservation (132 CapSMs) is the whole GPU" -- \
  demo --backend sim --reserve 132 --duration-ms 50
check "... with no quota" grep -q "batch kernels have no quota" "$tmp/out"
expect 2 "no quota" -- sim --scenario ls-batch --policy smguard --reserve 132
expect 0 "ANTT" -- sim --scenario ls-batch --policy mps --reserve 132 --duration-ms 50 --quiet
expect 0 "smguard" -- demo --backend sim --reserve 131 --duration-ms 50 --quiet

# Enormous but valid workloads are refused up front, with their cost:
# 2^31 - 1 block-tasks in one launch, or the built-in scenario over 1e7 ms
cat > "$tmp/huge.json" <<'J'
{"name": "huge", "duration_ms": 10, "apps": [{"name": "a", "arrival": {"kind": "at", "at_us": [0]},
 "kernel": {"grid": 2147483647, "block": 128, "task_us": 5}}]}
J
expect 2 "would simulate about 2.1e+09 steps" -- sim --scenario "$tmp/huge.json" --policy mps
check "the refusal names the setting" grep -q "CORUN_SIM_MAX_STEPS (1000000000)" "$tmp/out"
expect 2 "CORUN_SIM_MAX_STEPS" -- demo --backend sim --duration-ms 1e7
expect 1 "profiling scenario 'huge' would simulate" -- profile --train-scenario "$tmp/huge.json"
check "a refused profiling writes no store" test ! -e "$CORUN_PROFILE_PATH"
expect 0 "CORUN_SIM_MAX_STEPS" -- config
timeout 5 "$corun" --set sim_max_steps=0 sim --scenario "$tmp/huge.json" --policy mps > /dev/null 2>&1
check "with no limit the run starts (and is stopped here)" test $? -eq 124

expect_done
