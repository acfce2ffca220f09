#!/usr/bin/env bash
# corun-nvcc --help: corun-nvcc's own part first (what it is, its settings),
# then where nvcc's options are; no nvcc needed (issue 31, point 7).
# Usage: cli_cc_nvcc_help.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"
wrap=$(dirname "$corun")/corun-nvcc
if [ ! -x "$wrap" ]; then
  echo "no corun-nvcc beside $corun: skipped"
  exit 77
fi
for h in --help -h; do
  expect_run 0 "corun-nvcc — a drop-in for nvcc" -- env NVCC_REAL=/nonexistent/nvcc "$wrap" $h
  check "$h: its settings" grep -q "CORUN_NVCC_ON_REFUSAL" "$tmp/out"
  check "$h: then nvcc's, last" bash -c "tail -1 '$tmp/out' | grep -q \"'/nonexistent/nvcc --help' lists them\""
done
expect_done
