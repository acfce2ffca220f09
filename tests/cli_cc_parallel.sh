#!/usr/bin/env bash
# Parallel first runs of corun-cc, as make -j starts them with an empty
# cache: rounds of four runs started together into a fresh folder of
# precompiled headers, so each of them builds and writes the headers. Every
# run must exit 0, print nothing and write what a run without precompiled
# headers writes. In the sanitizer build this is where a parse thread that
# ended with LLVM's alternate signal stack installed made AddressSanitizer
# fail ("unable to unmap", src/cc/thread.c says why it cannot now).
#
# Usage: cli_cc_parallel.sh CORUN_BINARY SOURCE_DIR
# shellcheck source=tests/cc_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/cc_common.sh"
in=$src/tests/cc/launch_macro.cu
rounds=5
runs=4

if ! "$cc" --no-pch "$in" -o "$tmp/plain.cu"; then
  echo "FAIL: the reference run"
  exit 1
fi
fail=0
for round in $(seq $rounds); do
  pids=()
  for i in $(seq $runs); do
    "$cc" --pch-dir "$tmp/pch$round" "$in" -o "$tmp/$round.$i.cu" 2> "$tmp/$round.$i.log" &
    pids+=($!)
  done
  for i in $(seq $runs); do
    wait "${pids[$((i - 1))]}"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL: round $round, run $i: exit $rc"
      fail=1
    fi
    if [ -s "$tmp/$round.$i.log" ]; then
      echo "FAIL: round $round, run $i printed:"
      head -20 "$tmp/$round.$i.log"
      fail=1
    fi
    if ! cmp -s "$tmp/plain.cu" "$tmp/$round.$i.cu"; then
      echo "FAIL: round $round, run $i: output differs from the run without headers"
      fail=1
    fi
  done
  if [ "$(find "$tmp/pch$round" -name '*.pch' | wc -l)" -ne 2 ]; then
    echo "FAIL: round $round left $(find "$tmp/pch$round" -name '*.pch' | wc -l) headers, not 2"
    fail=1
  fi
done
[ $fail = 0 ] && echo "ok: $rounds rounds of $runs parallel first runs"
exit $fail
