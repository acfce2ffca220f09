#!/usr/bin/env bash
# make bench: CPU benchmarks. Writes bench/results/cpu-admit.json with the
# machine, date and commit, and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
out=bench/results/cpu-admit.json
cpu=$(grep -m1 "model name" /proc/cpuinfo | sed 's/.*: //' || echo unknown)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
result=$("$BUILD/bench_admit")
{
  printf '{\n  "benchmark": "scheduler admission cost (smguard policy, null backend)",\n'
  printf '  "cpu": "%s",\n  "cores": %s,\n  "date": "%s",\n  "commit": "%s",\n  "target_ns": 2000,\n' \
    "$cpu" "$(nproc)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$commit"
  printf '  "result": %s\n}\n' "$result"
} > "$out"
cat "$out"
