#!/usr/bin/env bash
# test-repeat.sh — `make test` N times in a fresh clone of HEAD: does it
# ever flake? Prints a header (date, commit, machine), one line per run and
# a summary; the build is made by the first run and reused by the others.
set -uo pipefail

usage() {
  cat << 'EOF'
usage: scripts/test-repeat.sh [--keep] N

Clones the commit checked out here (HEAD; uncommitted changes are not
included) into a temporary folder and runs `make test` there N times in a
row: the first run builds, later runs reuse the build. Prints one line per
run (pass or FAIL, seconds, the failed tests) and a summary:

  make test, 10 runs in a clean clone
  date: 2026-11-26T15:02:11+00:00
  commit: 1a2b3c4d... (subject)
  machine: nproc 2, x86_64, Intel(R) Xeon(R) ...
  run 1: pass (351 s)
  ...
  summary: 10 of 10 passed

Each run's output goes to run-I.log in a log folder named at the end; the
clone is removed afterwards unless --keep is given or a run failed.
Exit status: 0 when every run passed, 1 otherwise, 2 bad command line.
EOF
}

keep=0
n=
for a in "$@"; do
  case $a in
    -h | --help) usage; exit 0 ;;
    --keep) keep=1 ;;
    *) n=$a ;;
  esac
done
if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
  usage >&2
  exit 2
fi

repo=$(git rev-parse --show-toplevel) || exit 2
commit=$(git -C "$repo" rev-parse HEAD) || exit 2
subject=$(git -C "$repo" log -1 --format=%s "$commit")
work=$(mktemp -d "${TMPDIR:-/tmp}/corun-test-repeat.XXXXXX")
logs=$work/logs
mkdir -p "$logs"
if ! git clone -q --no-checkout "$repo" "$work/corun" ||
  ! git -C "$work/corun" checkout -q --detach "$commit"; then
  echo "test-repeat: cannot clone $repo at $commit" >&2
  exit 1
fi

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -1)
echo "make test, $n runs in a clean clone"
echo "date: $(date -Iseconds)"
echo "commit: $commit ($subject)"
echo "machine: nproc $(nproc), $(uname -m), ${cpu:-unknown cpu}"

passed=0
for i in $(seq "$n"); do
  start=$(date +%s)
  make -C "$work/corun" test > "$logs/run-$i.log" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "run $i: pass ($secs s)"
  else
    # ctest's list of failures, one name each
    failed=$(sed -n '/The following tests FAILED/,/^Errors while running/p' "$logs/run-$i.log" |
      sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\).*/\1/p' | sort -u | tr '\n' ' ')
    echo "run $i: FAIL ($secs s, exit $rc${failed:+: $failed})"
  fi
done
echo "summary: $passed of $n passed"
if [ $passed -eq "$n" ] && [ $keep = 0 ]; then
  rm -rf "$work/corun"
fi
echo "logs: $logs"
[ $passed -eq "$n" ]
