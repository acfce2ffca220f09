#!/usr/bin/env bash
# Write errors are errors: a command whose standard output is lost (on
# /dev/full, or closed) exits non-zero and says so on stderr, for every
# command that prints and for corun-cc; the same commands with stdout on
# /dev/null exit 0.
# Usage: cli_write_errors.sh CORUN_BINARY SOURCE_DIR
set -uo pipefail
corun=$1
src=$2
build=$(cd "$(dirname "$corun")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CORUN_PROFILE_PATH=$tmp/store/profiles.txt
export CORUN_PROFILE_TRAIN_RUNS=10
export CORUN_CACHE=$tmp/cache
sc=$src/bench/scenarios
fail=0

# said WANT HOW RC REASON: the run of cmd with stdout HOW exited RC, which
# must be WANT, and said REASON
said() {
  local want=$1 how=$2 rc=$3
  if [ "$rc" -ne "$want" ] || ! grep -q "error writing standard output: $4" "$tmp/err"; then
    echo "FAIL: '${cmd[*]}' with stdout $how exited $rc (want $want): $(tail -2 "$tmp/err")"
    fail=1
  fi
}

# lost WANT CMD...: CMD exits 0 with stdout on /dev/null, and WANT (the
# exit status) with stdout on /dev/full or closed, saying why
lost() {
  local want=$1 rc
  shift
  cmd=("$@")
  "$@" > /dev/null 2> "$tmp/err"
  rc=$?
  [ "$rc" -eq 0 ] || { echo "FAIL: '$*' > /dev/null exited $rc: $(head -3 "$tmp/err")"; fail=1; }
  "$@" > /dev/full 2> "$tmp/err"
  said "$want" "on /dev/full" $? "No space left on device"
  "$@" >&- 2> "$tmp/err"
  said "$want" closed $? "Bad file descriptor"
}

lost 1 "$corun" config
lost 1 "$corun" policies
lost 1 "$corun" occupancy --threads 256 --regs 32
lost 1 "$corun" sim --scenario "$sc/ls-batch.json" --policy mps --duration-ms 10 --json
lost 1 "$corun" sim --scenario "$sc/ls-batch.json" --policy mps --duration-ms 10
lost 1 "$corun" demo --duration-ms 10 --json --quiet
lost 1 "$corun" experiment model --max-sets 1 --duration-ms 10 --quiet
lost 1 "$corun" profile --json
lost 1 "$corun" profile
lost 1 "$corun" --help
lost 1 "$corun" --version
lost 1 "$corun" sim --help

# corun-cc: --help, --version and -o - (exit 3: cannot write)
if [ -x "$build/corun-cc" ]; then
  echo 'int f(void) { return 1; }' > "$tmp/plain.cu"
  lost 3 "$build/corun-cc" --help
  lost 3 "$build/corun-cc" --version
  lost 3 "$build/corun-cc" "$tmp/plain.cu" -o -
else
  echo "no corun-cc in $build: its part skipped"
fi

# Nothing lost when nothing is written: a failing command with stdout
# closed keeps its own exit status and adds no message.
"$corun" sim --scenario /nonexistent.json --policy mps >&- 2> "$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: a bad sim with stdout closed exited $rc, not 2"; fail=1; }
if grep -q "error writing" "$tmp/err"; then
  echo "FAIL: an error writing reported with nothing written"
  fail=1
fi
[ "$fail" -eq 0 ] && echo ok
exit "$fail"
