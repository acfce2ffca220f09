# expect_common.sh — the start of the command line's shell tests, sourced
# with the test's own arguments (CORUN_BINARY SOURCE_DIR). Sets corun, src,
# tmp (a folder removed at exit) and the counters the helpers below keep;
# a test ends with `expect_done`, which prints them and fails if any failed.
set -uo pipefail
corun=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
pass=0

# check WHAT CMD...: counts a pass if CMD succeeds, else a failure named WHAT.
check() {
  local what=$1
  shift
  if "$@"; then
    pass=$((pass + 1))
  else
    echo "FAIL: $what"
    fails=$((fails + 1))
  fi
}

# expect_run CODE WORDS -- CMD ARGS... : runs CMD ARGS, checks the exit code,
# that stderr+stdout contains WORDS and holds no sanitizer report. The
# output is left in $tmp/out.
expect_run() {
  local code=$1 words=$2
  shift 3
  local rc
  "$@" > "$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -qF -- "$words" "$tmp/out"; then
    echo "FAIL: $* -> exit $rc (want $code), output lacks '$words':"
    head -5 "$tmp/out"
    fails=$((fails + 1))
  else
    pass=$((pass + 1))
  fi
  if [ "$rc" -ge 128 ]; then
    echo "FAIL: $* crashed (exit $rc)"
    fails=$((fails + 1))
  fi
  # a sanitizer's report leaves a failing exit code as it is: read it
  if grep -q "ERROR: [A-Za-z]*Sanitizer\|runtime error:" "$tmp/out"; then
    echo "FAIL: $*: a sanitizer's report:"
    grep -m3 -A3 "ERROR: [A-Za-z]*Sanitizer\|runtime error:" "$tmp/out"
    fails=$((fails + 1))
  fi
}

# expect CODE WORDS -- ARGS... : the same for corun ARGS.
expect() {
  expect_run "$1" "$2" -- "$corun" "${@:4}"
}

expect_done() {
  echo "$pass passed, $fails failed"
  [ "$fails" -eq 0 ]
}
