#!/usr/bin/env bash
# LS and batch as two processes on one GPU (issue 25, point 7), under MPS,
# each system in the same call: the LS process with a high-priority stream
# (its `priority` policy) beside a plain batch process; the two with
# CUDA_MPS_CLIENT_PRIORITY 0 and 1; and both coordinated by corund (smguard
# in each process, the daemon keeping the LS process on SMs of its own and
# the batch one on the rest while LS work goes on). The references are each
# application alone in its own process. For scenarios/ls-batch.json (2 ms
# batch tasks) and ls-batch-200us.json.
#
# Each process is `corun sim --backend cuda --apps APP --json`, both started
# together and run as long (their solo phases overlap and are not used; their
# main runs overlap). The table: LS turnaround p50 / p99 over the LS-alone
# run's solo mean (its plain kernel alone); batch throughput as `corun sim`
# reports it (work_rate: block-tasks per second in the run over its plain
# solo phase's). Needs a GPU, root or a running MPS server (started here
# when none answers, stopped after), and python3 for the table.
#
# Settings (environment): OUT (default build-gpu/out/processes), GPU_BUILD
# (default build-gpu, built by scripts/gpu-check.sh's build step),
# PROCESSES_SCENARIOS (default "ls-batch ls-batch-200us"), PROCESSES_MS
# (each run's length, default 2000), PROCESSES_LS_SMS (corund --ls-sms,
# default 17: one wave of the LS kernel).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build-gpu/out/processes}
B=$(cd "${GPU_BUILD:-build-gpu}" && pwd)
SCS=${PROCESSES_SCENARIOS:-"ls-batch ls-batch-200us"}
MS=${PROCESSES_MS:-2000}
LS_SMS=${PROCESSES_LS_SMS:-17}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
[ -x "$B/corun" ] || { echo "no $B/corun: build first (GPU_CHECK_STEPS=build make gpu-check)"; exit 1; }
export CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
export CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-/tmp/nvidia-mps-log}
export CORUN_PROFILE_PATH=off
started_mps=0
if ! "$B/corun" mps status > /dev/null; then
  mkdir -p "$CUDA_MPS_LOG_DIRECTORY"
  if "$B/corun" mps start; then
    started_mps=1
  else
    echo "MPS did not start: the processes will take turns on the GPU"
  fi
fi
sock=$OUT/corund.sock
run() { # NAME APP POLICY ENV...
  local name=$1 app=$2 pol=$3
  shift 3
  env "$@" "$B/corun" sim --backend cuda --scenario "scenarios/$sc.json" --no-train --json \
    --quiet --apps "$app" --policy "$pol" --duration-ms "$MS" > "$D/$app-$name.json" 2> "$D/$app-$name.err"
}
pair() { # NAME LS_POLICY BATCH_POLICY LS_ENV BATCH_ENV
  run "$1" batch "$3" $5 &
  local bp=$!
  run "$1" ls "$2" $4
  wait $bp
  echo "  $sc: $1 done"
}
for sc in $SCS; do
  D=$OUT/$sc
  mkdir -p "$D"
  run alone ls smguard CORUN_DAEMON=off
  run alone batch smguard CORUN_DAEMON=off
  pair prio priority mps CORUN_DAEMON=off CORUN_DAEMON=off
  pair clientprio mps mps "CORUN_DAEMON=off CUDA_MPS_CLIENT_PRIORITY=0" \
    "CORUN_DAEMON=off CUDA_MPS_CLIENT_PRIORITY=1"
  rm -f "$sock"
  "$B/corun" daemon --backend cuda --socket "$sock" --ls-sms "$LS_SMS" --log-level debug \
    --log-file "$D/corund.log" || { echo "corund did not start"; continue; }
  pair corund smguard smguard "CORUN_DAEMON=$sock CORUN_LAUNCH_CLASS=ls" \
    "CORUN_DAEMON=$sock CORUN_LAUNCH_CLASS=batch"
  kill -TERM "$(cat "$sock.lock")" 2> /dev/null
  sleep 1
done
[ "$started_mps" = 1 ] && "$B/corun" mps stop
command -v python3 > /dev/null || { echo "no python3: the runs' JSON is in $OUT"; exit 0; }
python3 - "$OUT" $SCS <<'PY' | tee "$OUT/processes.txt"
import json, sys
out, scs = sys.argv[1], sys.argv[2:]
def app(path, name):
    return [a for a in json.load(open(path))['apps'] if a['name'] == name][0]
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round((len(v) - 1) * p)))]
print("LS p50 / p99 x solo, batch throughput x solo; each pair two processes started together")
for sc in scs:
    d = f"{out}/{sc}"
    la, ba = app(f"{d}/ls-alone.json", "ls"), app(f"{d}/batch-alone.json", "batch")
    solo = la['solo_mean_us']
    print(f"{sc}: LS solo {solo:.1f} us (its plain kernel alone); alone under smguard: "
          f"LS {la['turnaround_p50_us'] / solo:.2f} / {la['turnaround_p99_us'] / solo:.2f}, "
          f"batch {ba['work_rate']:.3f}")
    for name, what in [("prio", "MPS, LS high-priority stream"),
                       ("clientprio", "MPS, CUDA_MPS_CLIENT_PRIORITY 0 / 1"),
                       ("corund", "MPS, corund (smguard, SM windows)")]:
        try:
            l, b = app(f"{d}/ls-{name}.json", "ls"), app(f"{d}/batch-{name}.json", "batch")
        except Exception as e:
            print(f"  {what:38s} missing ({e})")
            continue
        t = [k['turnaround_us'] for k in l['kernels']]
        print(f"  {what:38s} LS {pct(t, .5) / solo:5.2f} / {pct(t, .99) / solo:5.2f}  "
              f"batch {b['work_rate']:.3f}  (LS kernels {len(t)})")
PY
