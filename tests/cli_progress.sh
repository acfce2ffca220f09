#!/usr/bin/env bash
# Progress of the commands that run long (src/cli/progress.h): demo, sim,
# experiment and profile training say what they run on stderr, never on
# stdout; -q/--quiet silences it and leaves stdout byte for byte the same;
# each of them lists --quiet in its --help. On a terminal (script(1) makes
# one) the step under way is one line rewritten in place with a percentage,
# redrawn at most every 0.1 s.
# Usage: cli_progress.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"
export CORUN_PROFILE_PATH=$tmp/store/profiles.txt
export CORUN_PROFILE_TRAIN_RUNS=10
sc=$src/bench/scenarios

# run NAME ARGS...: corun ARGS on a fresh profile store (so every run does
# the same work); stdout in $tmp/NAME.out, stderr in $tmp/NAME.err.
run() {
  local name=$1
  shift
  rm -rf "$tmp/store"
  "$corun" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
  check "corun $* exits 0 ($(head -c 300 "$tmp/$name.err"))" test $? -eq 0
}

# progress CMD WORDS ARGS...: `corun ARGS` shows progress naming WORDS on
# stderr and none on stdout; with --quiet and with -q, stderr is empty and
# stdout the same.
progress() {
  local cmd=$1 words=$2
  shift 2
  run loud "$@"
  check "$cmd: stderr starts with 'corun $cmd'" grep -q "^corun $cmd" "$tmp/loud.err"
  check "$cmd: stderr says '$words'" grep -qF -- "$words" "$tmp/loud.err"
  check "$cmd: stderr says 'done in'" grep -q "^  done in [0-9.]* s$" "$tmp/loud.err"
  check "$cmd: stdout has output" test -s "$tmp/loud.out"
  check "$cmd: no progress on stdout" \
    bash -c "! grep -qE 'running|done in|^corun $cmd' '$tmp/loud.out'"
  for q in --quiet -q; do
    run quiet "$@" "$q"
    check "$cmd $q: stderr is empty: $(head -c 300 "$tmp/quiet.err")" test ! -s "$tmp/quiet.err"
    check "$cmd $q: stdout is the same" cmp -s "$tmp/loud.out" "$tmp/quiet.out"
  done
  "$corun" "$cmd" --help > "$tmp/help" 2>&1
  check "corun $cmd --help lists -q, --quiet" grep -qE '^  -q, --quiet +[a-z]' "$tmp/help"
}

progress demo "running smguard" demo --backend sim --duration-ms 200
progress demo "running each application alone" demo --backend sim --duration-ms 200 --json
progress sim "running smguard" sim --scenario "$sc/ls-batch.json" --policy smguard \
  --duration-ms 200
# a policy that needs profiles records them first: that is progress too
progress sim "profiling 'nn'" sim --scenario "$sc/flep-hpf-2kernel.json" --policy flep-hpf --json
progress experiment "hpf nn_large + cfd_small" experiment hpf --max-sets 1
progress profile "running 'nn': 10 runs" profile --train-scenario "$sc/flep-hpf-2kernel.json" \
  --app nn_large --runs 10
progress profile "running 'nn': 10 runs" profile --train-scenario "$sc/flep-hpf-2kernel.json" \
  --app nn_large --runs 10 --json

# Errors are not progress: --quiet keeps them.
"$corun" sim --scenario "$sc/ls-batch.json" --policy smguard --quiet --apps nosuch \
  > "$tmp/out" 2> "$tmp/err"
check "sim --quiet still prints its error" grep -q "no application 'nosuch'" "$tmp/err"

# On a terminal: the step is rewritten in place ("\r", erase to the end of
# the line), with a percentage, at most every 0.1 s; --quiet prints nothing
# there either. script(1) gives the command a terminal; stdout goes to a file.
if command -v script > /dev/null 2>&1 &&
  script -qec true /dev/null > /dev/null 2>&1; then
  on_tty() {
    rm -rf "$tmp/store"
    script -qec "$(printf '%q ' "$corun" "$@") > $(printf '%q' "$tmp/tty.out")" \
      "$tmp/tty.log" > /dev/null 2>&1
  }
  on_tty demo --backend sim --duration-ms 4000
  check "tty: demo exits 0" test $? -eq 0
  check "tty: a step rewritten in place" grep -qaF $'\r\033[K  [' "$tmp/tty.log"
  check "tty: a percentage" grep -qaE 'running smguard|[0-9]+% running' "$tmp/tty.log"
  check "tty: the table on stdout only" grep -q "^smguard " "$tmp/tty.out"
  check "tty: no table on the terminal" bash -c "! grep -qa '^smguard ' '$tmp/tty.log'"
  secs=$(tr '\r' '\n' < "$tmp/tty.log" | sed -n 's/.*done in \([0-9.]*\) s.*/\1/p')
  draws=$(tr '\r' '\n' < "$tmp/tty.log" | grep -ac '% running')
  # 4 steps, each drawn once without a percentage; percentages 0.1 s apart
  check "tty: $draws percentages in $secs s, at most 10 a second" \
    awk -v d="$draws" -v s="${secs:-0}" 'BEGIN { exit !(d >= 1 && d <= 10 * s + 2) }'
  on_tty demo --backend sim --duration-ms 4000 --quiet
  check "tty: --quiet demo exits 0" test $? -eq 0
  # (script's own first and last lines name the command)
  check "tty: --quiet prints nothing on the terminal" \
    bash -c "! grep -av '^Script ' '$tmp/tty.log' | grep -qaE 'running|done in|corun demo'"
else
  echo "no script(1) or no pseudo-terminal: the terminal part is not run"
fi

expect_done
