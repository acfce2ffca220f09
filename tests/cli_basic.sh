#!/usr/bin/env bash
# The command line as a user meets it: --help on every command, bad input
# named clearly with a non-zero exit and no crash, and the demo's JSON keys.
# Usage: cli_basic.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"

expect 0 "usage: corun" -- --help
expect 0 "commands:" -- help
for c in demo sim config policies occupancy; do
  expect 0 "usage: corun $c" -- "$c" --help
  expect 0 "usage: corun $c" -- help "$c"
done
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 2 "unknown option '--frob'" -- --frob demo
expect 2 "unknown option '--bogus'" -- demo --bogus
expect 2 "unknown policy 'nope'" -- demo --systems mps,nope
expect 2 "larger than the GPU" -- demo --reserve 500 --backend sim
expect 2 "option --duration-ms: '-3' is not a decimal number in (0, 1e7]" -- demo --duration-ms -3
expect 2 "not one of auto,cuda,sim" -- demo --backend tpu
# every --backend takes what the settings table allows
expect 2 "not one of auto,cuda,sim" -- sim --backend tpu
expect 2 "not one of auto,cuda,sim" -- profile --backend tpu
expect 2 "not one of auto,cuda,sim" -- experiment hpf --backend tpu
# corun sim reads an auto setting as the simulator, GPU or not
expect_run 0 "policy mps, backend sim" -- env CORUN_BACKEND=auto "$corun" sim --scenario ls-batch \
  --policy mps --duration-ms 20 --quiet
# cuda where none is usable: an error with the reason, never the simulator instead
if ! "$corun" sim --scenario ls-batch --policy mps --backend cuda --duration-ms 20 --quiet \
     > /dev/null 2>&1; then
  expect 1 "backend cuda: " -- sim --scenario ls-batch --policy mps --backend cuda --duration-ms 20
  expect 1 "backend cuda: " -- experiment hpf --backend cuda --max-sets 1
  expect_run 0 "no usable GPU" -- "$corun" --log-level info sim --scenario ls-batch --policy mps \
    --backend auto --duration-ms 20 --quiet
fi
expect 2 "CORUN_SEED" -- --set seed=abc demo
expect 2 "unknown setting" -- --set nosuch=1 config
expect 2 "--scenario FILE and --policy NAME are required" -- sim
expect 2 "needs a value" -- demo --seed
expect 2 "/nonexistent.json" -- sim --scenario /nonexistent.json --policy smguard
printf '{"name": "x", "duration_ms": 10, "apps": [' > "$tmp/trunc.json"
expect 2 "trunc.json:1:" -- sim --scenario "$tmp/trunc.json" --policy mps
cat > "$tmp/wide.json" <<'J'
{"name": "x", "duration_ms": 10, "apps": [{"name": "a", "arrival": {"kind": "loop"},
 "kernel": {"grid": 10, "block": [64, 64], "task_us": 5}}]}
J
expect 2 "4096 threads" -- sim --scenario "$tmp/wide.json" --policy mps
cat > "$tmp/regs.json" <<'J'
{"name": "x", "duration_ms": 10, "apps": [{"name": "a", "arrival": {"kind": "loop"},
 "kernel": {"grid": 10, "block": 1024, "regs": 200, "task_us": 5}}]}
J
expect 1 "registers per block" -- sim --scenario "$tmp/regs.json" --policy mps
expect 1 "registers per thread" -- occupancy --threads 128 --regs 300
expect 2 "--threads is required" -- occupancy --regs 32
expect 0 "blocks_per_sm 8" -- occupancy --threads 256 --regs 32
expect 0 "CORUN_CHUNK_BUDGET_US" -- config
for v in CORUN_SCENARIOS CORUN_CACHE CORUN_LAUNCH_STATS CORUN_NVCC_PIN CORUN_NVCC_ON_REFUSAL \
         CORUN_NVCC_KEEP CORUN_NVCC_EXTRA_LIBS CORUN_NVCC_VERBOSE; do
  expect 0 "$v" -- config
done
# a reservation given by its variable overrides the scenario's, as --reserve does
expect_run 2 "500 CapSMs is larger" -- env CORUN_RESERVE_CAPSM=500 "$corun" demo --backend sim
expect 2 "500 CapSMs is larger" -- --set RESERVE_CAPSM=500 demo --backend sim
expect 0 "smguard" -- policies

# A scenario by name or by its path in the source tree, from any folder:
# the path as given, then CORUN_SCENARIOS, the installed ones, the source tree's.
expect_run 0 "scenario ls-batch, policy mps" -- \
  bash -c "cd / && '$corun' sim --scenario ls-batch --policy mps --duration-ms 20 --quiet"
expect_run 0 "is $src/bench/scenarios/ls-batch.json" -- \
  bash -c "cd / && '$corun' --log-level info sim --scenario bench/scenarios/ls-batch.json --policy mps \
           --duration-ms 20 --quiet"
sed 's/"name": *"ls-batch"/"name": "mine"/' "$src/bench/scenarios/ls-batch.json" > "$tmp/ls-batch.json"
expect_run 0 "scenario mine, policy mps" -- \
  env CORUN_SCENARIOS="$tmp" "$corun" sim --scenario ls-batch --policy mps --duration-ms 20 --quiet
expect 2 "no scenario 'nope': not a file here, nor in" -- sim --scenario nope --policy mps
expect_run 2 "nor in $tmp," -- env CORUN_SCENARIOS="$tmp" "$corun" sim --scenario nope --policy mps

# The demo's JSON has the documented keys, one object per system.
json=$(CORUN_BACKEND=sim "$corun" demo --json --quiet --duration-ms 200 2>/dev/null)
for key in system ls_p50_norm ls_p99_norm batch_norm antt stp ls_alone_p99_norm \
  ls_floor_p50_norm ls_floor_p99_norm; do
  n=$(grep -c "\"$key\"" <<< "$json")
  if [ "$n" -ne 5 ]; then
    echo "FAIL: demo --json has $n '$key' keys, want 5"
    fails=$((fails + 1))
  else
    pass=$((pass + 1))
  fi
done

# Without an LS application its LS figures are null, not a missing row.
json=$(CORUN_BACKEND=sim "$corun" demo --json --quiet --duration-ms 100 --apps batch \
  --systems mps,smguard 2>/dev/null)
if [ "$(grep -c '"ls_p99_norm": null' <<< "$json")" -eq 2 ] &&
  [ "$(grep -c '"ls_alone_p99_norm": null' <<< "$json")" -eq 2 ] &&
  [ "$(grep -c '"ls_floor_p50_norm": null' <<< "$json")" -eq 2 ]; then
  pass=$((pass + 1))
else
  echo "FAIL: demo --json --apps batch: want two rows with null LS figures, got: $json"
  fails=$((fails + 1))
fi

# The row floor (the LS application alone under smguard) is there with smguard, not without.
out=$(CORUN_BACKEND=sim "$corun" demo --quiet --duration-ms 100 --systems mps,smguard 2>&1)
out_mps=$(CORUN_BACKEND=sim "$corun" demo --quiet --duration-ms 100 --systems mps 2>&1)
if grep -Eq '^floor +[0-9.]+ +[0-9.]+ +- ' <<< "$out" && ! grep -q '^floor ' <<< "$out_mps"; then
  pass=$((pass + 1))
else
  echo "FAIL: demo: want a floor row with smguard and none without, got: $out / $out_mps"
  fails=$((fails + 1))
fi

# Its table begins with the LS application alone: p50 1 by definition, its
# own p99 over its p50: above 1 where launches vary (the simulator's launch
# noise, SIM_LAUNCH_JITTER_US), 1 without it.
table=$(CORUN_BACKEND=sim "$corun" demo --quiet --duration-ms 200 2>/dev/null)
quiet=$(CORUN_BACKEND=sim CORUN_SIM_LAUNCH_JITTER_US=0 "$corun" demo --quiet --duration-ms 200 2>/dev/null)
if grep -Eq '^alone +1\.00 +(1\.[1-9][0-9]|[2-9]\.[0-9][0-9]) +1\.000 +- +- +- +-$' <<< "$table" &&
   grep -Eq '^alone +1\.00 +1\.00 +1\.000 +- +- +- +-$' <<< "$quiet"; then
  pass=$((pass + 1))
else
  echo "FAIL: demo's row 'alone' on sim: want its own p99 over 1.1 with the launch noise, 1.00 without:"
  echo "$table"
  echo "$quiet"
  fails=$((fails + 1))
fi

# The GPU A/B driver explains itself without a GPU, and refuses to run
# without the flag that defines its variant.
expect_run 0 "same-run A/B" -- "$src/scripts/gpu-ab.sh" --help
expect_run 2 "set AB_FLAG" -- env -u AB_FLAG "$src/scripts/gpu-ab.sh"
# So does make gpu-check's script, and it takes no arguments.
expect_run 0 "everything GPU-side in one call" -- "$src/scripts/gpu-check.sh" --help
expect_run 2 "takes no arguments" -- "$src/scripts/gpu-check.sh" --bogus
# Its loop-alone step explains itself, wants the binary, and dry-runs on the
# simulator: one row per kernel, setting and process.
expect_run 0 "closed loop of launches" -- "$src/scripts/loop-alone.sh" --help
expect_run 2 "usage: scripts/loop-alone.sh" -- "$src/scripts/loop-alone.sh"
expect_run 0 "poll first" -- "$src/scripts/loop-alone.sh" "$corun" sim 1 vadd

expect_done
