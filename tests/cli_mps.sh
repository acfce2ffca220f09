#!/usr/bin/env bash
# corun mps start|stop|status against a stand-in nvidia-cuda-mps-control on
# PATH (the real one needs the driver): start makes the server answer, status
# says so with its servers, stop quits it; without the tool, a clear error;
# bad verbs and options are usage errors; start returns at once though the
# control daemon it started keeps running.
# Usage: cli_mps.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"

export CUDA_MPS_PIPE_DIRECTORY=$tmp/pipes
mkdir -p "$tmp/bin"
cat > "$tmp/bin/nvidia-cuda-mps-control" <<'S'
#!/bin/sh
# stand-in: -d makes the control pipe; on stdin, get_server_list and quit
echo "$*" >> "$CUDA_MPS_PIPE_DIRECTORY.calls"
# -d leaves a daemon behind, as the real one does: it keeps whatever stdout it got
if [ "$1" = -d ]; then mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"; : > "$CUDA_MPS_PIPE_DIRECTORY/control"; sleep 20 & exit 0; fi
read -r cmd
case "$cmd" in
  get_server_list) echo 4242 ;;
  quit) rm -f "$CUDA_MPS_PIPE_DIRECTORY/control" ;;
esac
S
chmod +x "$tmp/bin/nvidia-cuda-mps-control"

expect 0 "usage: corun mps" -- mps --help
expect 2 "start, stop or status" -- mps
expect 2 "is not start, stop or status" -- mps restart
expect 2 "unknown option" -- mps start --json
PATH=/usr/bin:/bin expect 1 "not on PATH" -- mps start
expect 3 "MPS: not running" -- mps status
expect 0 "MPS: not running" -- mps stop
t0=$SECONDS
PATH=$tmp/bin:$PATH expect 0 "MPS: started (pipes in $tmp/pipes)" -- mps start
check "start returns while the control daemon it left runs on" test $((SECONDS - t0)) -lt 10
check "start ran the control daemon with -d" grep -qx -- "-d" "$tmp/pipes.calls"
PATH=$tmp/bin:$PATH expect 0 "MPS: already running" -- mps start
PATH=$tmp/bin:$PATH expect 0 "servers: 4242" -- mps status
PATH=$tmp/bin:$PATH expect 0 '"running": true' -- mps status --json
PATH=$tmp/bin:$PATH expect 0 "MPS: told to quit" -- mps stop
PATH=$tmp/bin:$PATH expect 3 '"running": false' -- mps status --json
expect_done
