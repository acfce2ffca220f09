#!/usr/bin/env bash
# gpu-multi.sh — one corund for two GPUs (gpu-check step `multigpu`, issue 25
# point 8): starts corund on every GPU of the host, runs a scenario client
# on each GPU, one chosen by CUDA_VISIBLE_DEVICES and one by CORUN_DEVICE,
# and checks that `corun status` shows both GPUs with a client each while
# they run and that every client finished. Needs two GPUs (exit 77 with
# fewer). Environment: OUT (results; default /tmp/gpu-multi), GPU_BUILD
# (default build-gpu).
set -uo pipefail
case ${1:-} in -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; "") ;; *)
  echo "gpu-multi: takes no arguments (set OUT, GPU_BUILD)" >&2; exit 2 ;; esac
OUT=${OUT:-/tmp/gpu-multi}
B=${GPU_BUILD:-build-gpu}
corun=$B/corun
mkdir -p "$OUT"
n=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
if [ "${n:-0}" -lt 2 ]; then
  echo "gpu-multi: $n GPU(s) here; two needed: skipped"
  exit 77
fi
sock=$(mktemp -u /tmp/corund-multi-XXXXXX).sock
"$corun" daemon -f --backend cuda --socket "$sock" --log-level info > "$OUT/corund.log" 2>&1 &
dpid=$!
trap 'kill -TERM $dpid 2> /dev/null; wait $dpid 2> /dev/null' EXIT
for i in $(seq 1 100); do
  "$corun" status --socket "$sock" > /dev/null 2>&1 && break
  sleep 0.1
done
export CORUN_DAEMON_SOCKET=$sock
run() { # NAME ENV... : a scenario client, its report to OUT/NAME.json
  local name=$1
  shift
  env "$@" timeout 120 "$corun" sim --backend cuda --scenario bench/scenarios/ls-batch.json \
    --apps batch --policy smguard --duration-ms 3000 --json --quiet > "$OUT/$name.json" \
    2> "$OUT/$name.err" &
  pids+=($!)
}
pids=()
run gpu0-visible CUDA_VISIBLE_DEVICES=0
run gpu1-visible CUDA_VISIBLE_DEVICES=1
run gpu1-device CORUN_DEVICE=1
seen=0
for i in $(seq 1 200); do
  "$corun" status --socket "$sock" --json > "$OUT/status.json" 2>&1
  c=$(tr -d ' \n' < "$OUT/status.json" | grep -o '"clients":\[{' | wc -l)
  if [ "$c" -ge 2 ]; then
    seen=1
    "$corun" status --socket "$sock" > "$OUT/status.txt" 2>&1
    break
  fi
  sleep 0.05
done
fail=0
wait "${pids[@]}" 2> /dev/null
for r in gpu0-visible gpu1-visible gpu1-device; do
  if grep -q '"completed"' "$OUT/$r.json" 2> /dev/null; then
    echo "gpu-multi: $r finished"
  else
    echo "gpu-multi: $r did not finish (see $OUT/$r.err)"
    fail=1
  fi
done
if [ $seen -eq 1 ]; then
  echo "gpu-multi: corun status showed a client on each of two GPUs:"
  cat "$OUT/status.txt"
else
  echo "gpu-multi: corun status never showed clients on two GPUs (see $OUT/status.json)"
  fail=1
fi
grep -E "listening|client [0-9]+:" "$OUT/corund.log" | head -8
exit $fail
