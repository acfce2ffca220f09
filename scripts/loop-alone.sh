#!/usr/bin/env bash
# A kernel alone in a closed loop of launches through corun's scheduler (one
# 36 ms window of bench/scenarios/fgqos-kernels-cuda.json a process, policy manual),
# with completion waiters that sleep in the driver at once
# (CORUN_COMPLETION_SPIN_US=0) and that poll first (the default): launches per
# second, and the median and 99th-percentile launch as the host sees them.
# Then the LS application of bench/scenarios/ls-batch.json alone (a kernel of
# 132 blocks every ~5 ms on average, the GPU and the host idle between; policy
# mps), both ways: the idle gaps are where a sleeping thread wakes late.
#
# usage: scripts/loop-alone.sh [-h] CORUN [BACKEND [RUNS [KERNEL...]]]
#   CORUN    the corun binary (build-gpu/corun)
#   BACKEND  cuda (default) or sim (a dry run: the sim has no waiters)
#   RUNS     processes per kernel and setting (default 3)
#   KERNEL   apps of the scenario (default: vadd transpose)
set -u
if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  [ $# -lt 1 ] && exit 2
  exit 0
fi
corun=$1
backend=${2:-cuda}
runs=${3:-3}
shift $(($# < 3 ? $# : 3))
kernels=${*:-vadd transpose}
here=$(cd "$(dirname "$0")/.." && pwd)
export CORUN_PROFILE_PATH=off
num() { grep -o "\"$1\": [0-9.e+-]*" | head -1 | awk '{print $2}'; }
# runs_of LABEL SCENARIO APP POLICY: RUNS runs of the application alone, both ways.
runs_of() {
  local label=$1 scenario=$2 app=$3 policy=$4 spin i out env
  for spin in 0 default; do
    for i in $(seq 1 "$runs"); do
      if [ "$spin" = 0 ]; then env=(env CORUN_COMPLETION_SPIN_US=0); else env=(env); fi
      out=$("${env[@]}" "$corun" sim --backend "$backend" --quiet --json \
        --scenario "$here/bench/scenarios/$scenario" --apps "$app" --policy "$policy") || {
        echo "loop-alone: $label failed" >&2
        exit 1
      }
      printf '%-10s %-16s %10.0f %9.1f %9.1f\n' "$label" \
        "$([ "$spin" = 0 ] && echo "sleep at once" || echo "poll first")" \
        "$(num rate_per_s <<< "$out")" "$(num turnaround_p50_us <<< "$out")" \
        "$(num turnaround_p99_us <<< "$out")"
    done
  done
}
printf '%-10s %-16s %10s %9s %9s\n' kernel waiters launches/s p50_us p99_us
for k in $kernels; do
  runs_of "$k" fgqos-kernels-cuda.json "$k" manual
done
runs_of "ls (idle)" ls-batch.json ls mps
