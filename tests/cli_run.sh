#!/usr/bin/env bash
# corun run: the scheduling attributes reach the program's environment,
# checked against the settings table first; the program replaces corun, so
# its exit status and signals are its own; a program not found is 127, as
# in a shell.
# Usage: cli_run.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"
unset CORUN_LAUNCH_CLASS CORUN_LAUNCH_CAPSM CORUN_LAUNCH_PRIORITY CORUN_LAUNCH_WEIGHT CORUN_DAEMON

expect 0 "usage: corun run" -- run --help
expect 0 "usage: corun run" -- help run

# the five attributes, and the daemon, as given
"$corun" run --class ls --priority 3 --weight 2 --qos 0.7 --reserve 12 --daemon off -- env \
  > "$tmp/env" 2>&1
check "run: exit 0" test $? -eq 0
for kv in CORUN_LAUNCH_CLASS=ls CORUN_LAUNCH_CAPSM=12 CORUN_LAUNCH_PRIORITY=3 \
          CORUN_LAUNCH_WEIGHT=2 CORUN_LAUNCH_QOS=0.7 CORUN_DAEMON=off; do
  check "run: $kv in the program's environment" grep -qx "$kv" "$tmp/env"
done
# --reserve means class ls, --quota class batch
expect 0 "CORUN_LAUNCH_CLASS=ls" -- run --reserve 4 -- env
expect 0 "CORUN_LAUNCH_CLASS=batch" -- run --quota 100 -- env
expect 0 "CORUN_LAUNCH_CAPSM=100" -- run --quota 100 -- env
# an attribute not given keeps its setting's value
expect_run 0 "CORUN_LAUNCH_PRIORITY=9" -- env CORUN_LAUNCH_PRIORITY=9 "$corun" run -- env
expect 0 "CORUN_LAUNCH_WEIGHT=5" -- --set launch_weight=5 run -- env

# bad command lines: exit 2, the option named, nothing run
expect 2 "--quota is for class batch" -- run --class ls --quota 4 -- true
expect 2 "--reserve is for class ls" -- run --class batch --reserve 4 -- true
expect 2 "--reserve and --quota exclude each other" -- run --reserve 4 --quota 4 -- true
expect 2 "option --priority: 5000 is outside [0, 1000] (setting CORUN_LAUNCH_PRIORITY)" -- \
  run --priority 5000 -- true
expect 2 "setting CORUN_LAUNCH_WEIGHT" -- run --weight x -- true
expect 2 "option --qos: 1.5 is outside [0, 1] (setting CORUN_LAUNCH_QOS)" -- run --qos 1.5 -- true
expect 2 "setting CORUN_LAUNCH_CAPSM" -- run --reserve 5000 -- true
expect 2 "setting CORUN_LAUNCH_CLASS" -- run --class rt -- true
expect 2 "setting CORUN_DAEMON" -- run --daemon relative.sock -- true
expect 2 "unknown option '--bogus'" -- run --bogus -- true
expect 2 "needs a value" -- run --priority
expect 2 "no program" -- run --class ls
expect 2 "no program after --" -- run --
expect 2 "the program follows --" -- run env
"$corun" run --priority 5000 -- touch "$tmp/ran" > /dev/null 2>&1
check "run: a bad value runs nothing" test ! -e "$tmp/ran"

# the program's own exit status, signals and arguments (--help included)
expect 127 "corun run: nosuch-program-x: No such file or directory" -- run -- nosuch-program-x
expect 126 "Permission denied" -- run -- "$tmp"
"$corun" run -- sh -c 'exit 7'
check "run: the program's exit status is passed through" test $? -eq 7
( "$corun" run -- sh -c 'kill -TERM $$'; exit $? ) 2> /dev/null  # bash's "Terminated" unsaid
check "run: a program killed by a signal is seen killed (exit 143)" test $? -eq 143
expect 0 "a --help b" -- run -- sh -c 'echo "$@"' sh a --help b
# execvp: the program is corun's process, not a child of it
pids=$(sh -c 'echo $$; exec "$1" run -- sh -c "echo \$\$"' sh "$corun" | sort -u | wc -l)
check "run: the program replaces corun (one process id)" test "$pids" -eq 1

expect_done
