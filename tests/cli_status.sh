#!/usr/bin/env bash
# corun status and corun trace without a daemon: the status table drawn
# from JSON files (--from-file) as corund would send it, well formed, empty
# and wrongly typed, with key cells checked and no crash; no daemon at the
# socket is a clear error; trace's command line, and a failed trace that
# leaves no file.
# Usage: cli_status.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"

expect 0 "usage: corun status" -- status --help
expect 0 "for tests and offline reading" -- status --help
expect 0 "usage: corun trace" -- trace --help

# --- the table ---------------------------------------------------------------

cat > "$tmp/normal.json" <<'J'
{"daemon": {"pid": 4321, "socket": "/run/corun/corund.sock", "uptime_s": 3725.4},
 "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "backend": "cuda", "mode": "mps",
   "policy": "smguard", "sms": 132, "capsm_free": 40, "others": 2,
   "clients": [
    {"client": 1, "pid": 1001, "uid": 1000, "user": "alice", "command": "infer-server",
     "class": "ls", "priority": 3, "weight": 2, "capsm": 12, "launches": 50, "finished": 48,
     "tasks_done": 123456, "preemptions": 0, "latency_ms": {"p50": 0.5123, "p99": 1.2},
     "jobs": [{"job": 7, "kernel": "gemm", "state": "running", "capsm": 12, "tasks": 400,
               "done": 100, "preemptions": 0}]},
    {"client": 2, "pid": 22, "uid": 1001, "user": "bob", "command": "train", "class": "batch",
     "priority": 0, "weight": 1, "capsm": 80, "launches": 9, "finished": 6, "tasks_done": 42,
     "preemptions": 17, "latency_ms": null,
     "jobs": [{"job": 1, "kernel": "conv_forward_long", "state": "running", "capsm": 60,
               "tasks": 9000, "done": 10, "preemptions": 3},
              {"job": 2, "kernel": "relu", "state": "stopping", "capsm": 20, "tasks": 90,
               "done": 80, "preemptions": 0},
              {"job": 3, "kernel": "pool", "state": "paused", "capsm": 0, "tasks": 50,
               "done": 5, "preemptions": 1}]}]}]}
J
expect 0 "GPU 0  NVIDIA H100 80GB HBM3  backend cuda  mode mps  policy smguard  SMs 132  CapSMs free 40" \
  -- status --from-file "$tmp/normal.json"
"$corun" status --from-file "$tmp/normal.json" > "$tmp/table" 2>&1
check "status: corund's line" grep -q "^corund pid 4321, up 1h 02m 05s, socket /run/corun/corund.sock$" \
  "$tmp/table"
check "status: the client header" grep -qE \
  "^ +PID  USER +COMMAND +CLASS +PRIO +WEIGHT +CAPSM +JOBS +TASKS +PREEMPT +p50 ms +p99 ms$" "$tmp/table"
check "status: alice's row" grep -qE \
  "^ +1001  alice +infer-server +ls +3 +2 +12 +1 run 0 halt +123456 +0 +0\.512 +1\.200$" "$tmp/table"
check "status: bob's row, no latency yet" grep -qE \
  "^ +22  bob +train +batch +0 +1 +80 +2 run 1 halt +42 +17 +- +-$" "$tmp/table"
check "status: a job line under its client" grep -qE \
  "^      job 1  conv_forward_long  running +capsm 60  10/9000$" "$tmp/table"
check "status: a paused job" grep -qE "^      job 3  pool +paused +capsm 0 +5/50$" "$tmp/table"
check "status: other users' clients counted" grep -qF "(2 clients of other users not shown)" \
  "$tmp/table"
# columns aligned: the header and the client rows end at the same column
check "status: client rows as wide as their header" test "$(grep -vE '^ *job |^$|^GPU|^corund|^  \(' \
  "$tmp/table" | awk '{ print length($0) }' | sort -u | wc -l)" -eq 1
check "status: job lines aligned" test "$(grep -E '^ +job ' "$tmp/table" |
  awk '{ print index($0, "capsm") }' | sort -u | wc -l)" -eq 1
expect 0 '"capsm_free": 40' -- status --from-file "$tmp/normal.json" --json
expect 0 '  "gpus": [' -- status --from-file "$tmp/normal.json" --json

printf '%s\n' '{"daemon": {"pid": 1, "socket": "/s", "uptime_s": 5},' \
  '"gpus": [{"index": 0, "name": "sim", "backend": "sim", "mode": "sim", "policy": "mps",' \
  '"sms": 132, "capsm_free": 132, "others": 0, "clients": []}]}' > "$tmp/empty.json"
expect 0 "no clients" -- status --from-file "$tmp/empty.json"
check "status: no 'not shown' line without others" \
  bash -c "! '$corun' status --from-file '$tmp/empty.json' | grep -q 'not shown'"
printf '{"daemon": {"pid": 1}, "gpus": []}\n' > "$tmp/nogpu.json"
expect 0 "no GPUs" -- status --from-file "$tmp/nogpu.json"

# wrong types everywhere: "?" in their cells, control characters made '?'
cat > "$tmp/bad.json" <<'J'
{"daemon": [1, 2], "gpus": [5, {"index": "zero", "name": 7, "backend": null, "sms": 1.5,
  "others": "x", "clients": [3, {"pid": "p", "user": "ev\u001b[31mil", "command": {"a": 1},
    "latency_ms": {"p50": "x"}, "jobs": [1, {"state": 2},
      {"job": 9, "kernel": "k\u00e9", "state": "waiting", "tasks": -1, "done": 1e300}]},
   {"pid": 1, "latency_ms": [], "jobs": "no"}]},
  {"index": 2, "clients": []}, {"index": 3, "clients": {}, "others": 1}, {"index": 4}]}
J
expect 0 "corund pid ?, up ?, socket ?" -- status --from-file "$tmp/bad.json"
"$corun" status --from-file "$tmp/bad.json" > "$tmp/table" 2>&1
check "status: a GPU that is not an object" grep -qxF \
  "GPU ?  ?  backend ?  mode ?  policy ?  SMs ?  CapSMs free ?" "$tmp/table"
check "status: no escape character printed" bash -c "! grep -q $'\e' '$tmp/table'"
check "status: a user name's control character as ?" grep -qF "ev?[31mil" "$tmp/table"
check "status: jobs counted by state" grep -qF "0 run 0 halt 1 wait" "$tmp/table"
check "status: a job of wrong fields" grep -qE "^      job 9  k\?\? +waiting +capsm \? +\?/-1$" \
  "$tmp/table"
check "status: clients that are not an array" grep -qxF "  clients: ?" "$tmp/table"
check "status: one client of another user" grep -qF "(1 client of another user not shown)" \
  "$tmp/table"
printf '[1, 2]\n' > "$tmp/array.json"
expect 0 "GPUs: ?" -- status --from-file "$tmp/array.json"
printf 'garbage{' > "$tmp/garbage.json"
expect 2 "garbage.json is not JSON: 1:" -- status --from-file "$tmp/garbage.json"
: > "$tmp/nothing.json"
expect 2 "nothing.json is not JSON" -- status --from-file "$tmp/nothing.json"
expect 2 "$tmp/none.json: No such file or directory" -- status --from-file "$tmp/none.json"

# --watch redraws until interrupted, then exits 0: SIGINT once two frames
# are out (a signal before the watch starts ends corun as usual; a slow
# start under the sanitizers must not look like a failure); one still
# running 30 s later is killed (and fails)
frames() { grep -o $'\e\\[H\e\\[2J' "$tmp/watch" 2> /dev/null | wc -l; }
"$corun" status --from-file "$tmp/normal.json" --watch 0.2 > "$tmp/watch" 2>&1 &
pid=$!
for _ in $(seq 300); do
  [ "$(frames)" -ge 2 ] && break
  sleep 0.1
done
kill -INT $pid
for _ in $(seq 300); do
  kill -0 $pid 2> /dev/null || break
  sleep 0.1
done
kill -KILL $pid 2> /dev/null
wait $pid
rc=$?
check "status --watch: exit 0 on SIGINT (got $rc)" test $rc -eq 0
check "status --watch: clears the screen and redraws" \
  test "$(grep -o $'\e\\[H\e\\[2J' "$tmp/watch" | wc -l)" -ge 2
check "status --watch: the table in each frame" test "$(grep -c "1001  alice" "$tmp/watch")" -ge 2

# --- command lines and no daemon -------------------------------------------

expect 2 "option --watch: '0' is not a decimal number in (0, 3600]" -- status --watch 0
expect 2 "option --watch: '3601'" -- status --watch 3601
expect 2 "unknown option '--bogus'" -- status --bogus
expect 2 "needs a value" -- status --socket
expect 2 "exclude each other" -- status --socket /x --from-file "$tmp/normal.json"
expect 1 "corun status: no corund at /nonexistent/x.sock (start one with \`corun daemon\`)" -- \
  status --socket /nonexistent/x.sock
expect 1 "no corund at /nonexistent/x.sock" -- status --json --socket /nonexistent/x.sock
expect 1 "no corund at /nonexistent/x.sock" -- status --watch 1 --socket /nonexistent/x.sock
# the DAEMON_SOCKET setting is the default socket
expect_run 1 "no corund at $tmp/none.sock" -- env CORUN_DAEMON_SOCKET="$tmp/none.sock" \
  "$corun" status
: > "$tmp/plain-file"
expect 1 "no corund at $tmp/plain-file" -- status --socket "$tmp/plain-file"

expect 2 "-o FILE is required" -- trace --seconds 1
expect 2 "--seconds S and -o FILE are required" -- trace
expect 2 "option --seconds: '0'" -- trace --seconds 0 -o "$tmp/t.json"
expect 2 "option --seconds: '3601'" -- trace --seconds 3601 -o "$tmp/t.json"
expect 2 "unexpected argument 'x'" -- trace x
mkdir "$tmp/traces"
expect 1 "no corund at /nonexistent/x.sock" -- \
  trace --seconds 1 -o "$tmp/traces/t.json" --socket /nonexistent/x.sock
check "trace: a failed trace leaves no file" test -z "$(ls -A "$tmp/traces")"
echo old > "$tmp/traces/t.json"
expect 1 "no corund" -- trace --seconds 1 -o "$tmp/traces/t.json" --socket /nonexistent/x.sock
check "trace: a failed trace leaves the old file as it was" test "$(cat "$tmp/traces/t.json")" = old
check "trace: ... and nothing beside it" test "$(ls -A "$tmp/traces")" = t.json
expect 1 "is a directory" -- trace --seconds 1 -o "$tmp/traces" --socket /nonexistent/x.sock

expect_done
