#!/usr/bin/env bash
# make gpu-check: build, test and benchmark everything GPU-side in one call.
#
# Writes logs and one JSON file per step under $OUT (default build-gpu/out),
# then gpu-results.json (device, driver, commit, date, every step's records),
# and prints a short table last. Steps (all by default; choose some with
# GPU_CHECK_STEPS="occupancy correctness ..."):
#   build        cmake + nvcc build of libcorun, the CLI and gpu-check
#   occupancy    registers and blocks/SM of plain vs worker kernels
#   correctness  worker == plain, every block-task exactly once, >= 1000 events
#                (stop, evict, grow, resume, and epoch task limits)
#   correctahead the same for the ahead entries (CORUN_AHEAD=2: every run of
#                the CORUN_SHARED kernels matmul, reduce, transpose through it)
#   overhead     worker vs plain kernel alone on the GPU, per chunk budget
#   latency      stop and evict latency vs a flag-polling baseline; halts after
#                a running kernel's tasks slow down 4x; the halt of every
#                correctness kernel a quarter of the way through
#   multigpu     (not in the default list; a 2-GPU machine) one corund for both
#                GPUs, a client on each (scripts/gpu-multi.sh)
#   xhalt        the halt and an 8-SM narrowing written by another process
#                through CUDA IPC (as corund writes them), against this
#                process's own halt
#   resume       preempted half way and resumed vs uninterrupted: host events,
#                and on GPU clocks (launches behind a gate, halt from a resident
#                block) split into the drain and the relaunch
#   spatial      LS kernel launched into evicted CapSMs of a running kernel
#   dispatch     why that LS kernel starts late: its first block's delay on GPU
#                clocks alone, beside a plain kernel, beside corun workers, and
#                into just-evicted CapSMs
#   hostfunc     why completions are not host functions (they serialise streams)
#   stream       corun_launch_stream keeps the order of the user's stream
#   correctstream the correctness step through corun_launch_stream (the
#                direct path: jobs launched in the caller's stream, halted,
#                evicted, grown and resumed)
#   correctstreamahead the same for the ahead entries (CORUN_AHEAD=2)
#   correctgrid  the same on the whole GPU in the grid form (a block per task,
#                CORUN_GRID_TASK_US=0): halts, evictions (the kernel halted
#                and resumed as workers first) and growths
#   chain        10,000 dependent launches of 2, 5, 20 and 100 us kernels on
#                every SM (FMA work; clock spins, lane 0 of each warp and
#                every thread): native vs corun (short and one-wave kernels
#                plain) vs corun's workers always, time added per launch
#   hostcost     host time of one corun_launch_stream vs cuLaunchKernel
#   daemoncost   hostcost and chain again with corund running (coordinated,
#                the cuda backend) and the process its client, then hostcost
#                without it once more: what the daemon adds to a launch;
#                and `corun status` of that daemon, which must name its mode
#                (time-sliced, or mps where an MPS server runs); not in the
#                default list
#   lsalone      an LS kernel alone through corun vs natively
#   queued       a job preempted while later kernels of its stream wait
#   threads      4 host threads launching on 4 streams at once
#   capture      a launch into a capturing stream: refused, run plain by the
#                shim, the replayed graph right
#   sync         launches followed at once by synchronous cudaMemcpy,
#                cudaMemcpyFromSymbol, cudaMemset, cudaDeviceSynchronize
#                (legacy default stream, explicit stream, and a build with
#                --default-stream per-thread), also with the job preempted
#                and resumed by another thread meanwhile, and with a second
#                job halted, resumed and grown by a third thread meanwhile
#                (the manual policy holds the first): no call may hang
#   demo         corun demo on the GPU, every system of its table, for the
#                LS+batch scenarios with 2 ms, 200 us and 20 ms batch tasks
#                (bench/scenarios/ls-batch*.json), and ls-batch as JSON
#   processes    LS and batch as two processes under MPS: high-priority LS
#                stream, MPS client priority, and corund coordinating them
#                (corun demo --processes, 2 ms and 200 us batch tasks; not in
#                the default list)
#   apps         gpu/apps built with nvcc and with corun-nvcc: outputs equal,
#                overhead (scripts/gpu-apps.sh; without libclang on the GPU
#                machine it compiles build-gpu/apps-src, made by
#                `scripts/gpu-apps.sh --prepare` where libclang is)
#   appsahead    the same with CORUN_AHEAD=2: every kernel corun-cc gave an
#                ahead entry runs through it (outputs equal)
#   demotrace    the demo scenario's kernels one by one (corun sim --backend
#                cuda --json: submit, start, end of every kernel) under mps
#                and smguard (8 and 66 CapSMs reserved), and the LS
#                application alone
#   loopalone    a kernel alone in a loop of launches through the scheduler,
#                then the demo's LS application alone (idle gaps), completion
#                waiters sleeping at once against polling first
#                (scripts/loop-alone.sh: launches per second, median launch)
#   counters     Slate's rates of the slate-pairs kernels from CUPTI hardware
#                counters and from counted operations, each kernel in a
#                process of its own ($OUT/profiles-counters.txt,
#                profiles-counted.txt)
#   policies     FLEP's and Slate's experiments (corun experiment NAME
#                --backend cuda, NAME from GPU_CHECK_EXPERIMENTS, default
#                hpf ffs model slate srt spatial, each its own step):
#                HPF pairs, FFS shares, duration-model error, Slate
#                pairings, SRT pairs and triplets, spatial vs temporal; scenario
#                kernels run as the calibrated synthetic kernel, which performs
#                the FMAs and streams the DRAM bytes the scenario declares;
#                Slate's classes come from the rates measured on the GPU
#                (counted operations over measured time, against measured
#                peaks). Profiles go to $OUT/profiles.txt.
#                GPU_CHECK_POLICIES_BACKEND=sim dry-runs the step without a GPU.
#   sanitize     compute-sanitizer memcheck and racecheck on the worker loop,
#                then again with the ahead entries (CORUN_AHEAD=2), each case
#                also stream-ordered on the whole GPU and its grid form launched
#                by the step itself, run through and halted; a case whose
#                call has not returned after SANITIZE_STALL_S seconds (60) fails
#                the step with the job's state and every thread's backtrace
# Needs: an NVIDIA GPU, nvcc, cmake, and jansson (Debian libjansson-dev, or
# .deps from scripts/fetch-deps.sh on machines that cannot install packages).
# Results are labelled with the tree's commit (git); where the files differ
# from it, "+changes (tree T)": `git log --all --format='%h %T' | grep T`
# finds the commit whose files they are. CORUN_COMMIT sets the label instead.
set -uo pipefail
if [ $# -gt 0 ]; then
  sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"
  case $1 in -h | --help) exit 0 ;; *) echo "gpu-check: takes no arguments (set OUT, GPU_CHECK_STEPS)" >&2; exit 2 ;; esac
fi
cd "$(dirname "$0")/.."

OUT=${OUT:-build-gpu/out}
BUILD=${GPU_BUILD:-build-gpu}
STEPS=${GPU_CHECK_STEPS:-"build occupancy correctness correctahead correctstream correctstreamahead correctgrid stream chain hostcost lsalone queued threads capture sync hostfunc demo demotrace loopalone overhead latency xhalt resume spatial dispatch apps appsahead counters policies sanitize"}
# GPU_CHECK_EVENTS: random events per kernel in the correctness step (1000).
# Whole-run limit in seconds: a step gets at most what is left (the device
# tool stops a command at 600 s; keep a margin for the summary).
DEADLINE=${GPU_CHECK_DEADLINE:-570}
# The label: the commit, or where the files differ from it "+changes" and
# their tree (gpu_label, scripts/gpu-build.sh)
# shellcheck source=scripts/gpu-build.sh
source scripts/gpu-build.sh
COMMIT=$(gpu_label)
export CORUN_COMMIT=$COMMIT  # gpu-apps.sh labels its results with it too
JOBS=$(nproc 2>/dev/null || echo 4)
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH

if [ -d .deps/root/usr ]; then
  export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
fi

declare -A status
summary=()
has() { [[ " $STEPS " == *" $1 "* ]]; }

# run_step NAME TIMEOUT CMD...: runs CMD with a time limit, logs to $OUT/NAME.log
run_step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  local left=$((DEADLINE - SECONDS - 10))
  if [ $left -lt 15 ]; then
    echo "== $name: SKIPPED (no time left)" | tee -a "$OUT/steps.log"
    status[$name]=125
    summary+=("$(printf '%-12s %s' "$name" "SKIPPED (no time left)")")
    return 125
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name: $*" | tee -a "$OUT/steps.log"
  timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  status[$name]=$rc
  local verdict=ok
  [ $rc -eq 124 ] && verdict="TIMEOUT after ${limit}s"
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && verdict="FAILED (exit $rc)"
  echo "   $verdict in $((SECONDS - t0)) s" | tee -a "$OUT/steps.log"
  tail -n 25 "$OUT/$name.log"
  summary+=("$(printf '%-12s %s' "$name" "$verdict")")
  return $rc
}

device="unknown"
driver="unknown"
if command -v nvidia-smi >/dev/null 2>&1; then
  device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
fi
date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "gpu-check: $device, driver $driver, commit $COMMIT, $date_utc" | tee "$OUT/steps.log"

if has build; then
  run_step build 600 bash -c "cmake -S . -B '$BUILD' -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON \
      -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF && cmake --build '$BUILD' -j $JOBS" || {
    echo "build failed; nothing else can run"
    exit 1
  }
fi
GC=$BUILD/gpu/check/corun-gpucheck
GCH=$BUILD/gpu/check/corun-gpucheck-hits

has occupancy && run_step occupancy 120 "$GC" occupancy --json "$OUT/occupancy.json"
has correctness && run_step correctness 420 "$GCH" correctness --events "${GPU_CHECK_EVENTS:-1000}" \
    --json "$OUT/correctness.json"
has correctahead && run_step correctahead 300 env CORUN_AHEAD=2 "$GCH" correctness \
    --kernel matmul,reduce,transpose --events "${GPU_CHECK_EVENTS:-1000}" \
    --json "$OUT/correctahead.json"
if has demo; then
  run_step demo 400 bash -c "for sc in ls-batch ls-batch-200us ls-batch-20ms ls-chain; do \
      '$BUILD/corun' demo --backend cuda --quiet --scenario bench/scenarios/\$sc.json || exit 1; done && \
      '$BUILD/corun' demo --backend cuda --quiet --json > '$OUT/demo.json'"
fi
if has loopalone; then
  run_step loopalone 120 scripts/loop-alone.sh "$BUILD/corun" cuda 3 vadd transpose
fi
if has demotrace; then
  run_step demotrace 120 bash -c "for p in mps smguard; do \
      '$BUILD/corun' sim --scenario bench/scenarios/ls-batch.json --policy \$p --backend cuda \
        --json --quiet > '$OUT/demotrace-'\$p.json || exit 1; done; \
      '$BUILD/corun' sim --scenario bench/scenarios/ls-batch.json --policy smguard --reserve 66 \
        --backend cuda --json --quiet > '$OUT/demotrace-smguard66.json' && \
      '$BUILD/corun' sim --scenario bench/scenarios/ls-batch.json --apps ls --policy smguard \
        --backend cuda --json --quiet > '$OUT/demotrace-ls.json'"
fi
has overhead && run_step overhead 300 "$GC" overhead --reps 15 --json "$OUT/overhead.json"
has latency && run_step latency 200 "$GC" latency --trials 30 --json "$OUT/latency.json"
has xhalt && run_step xhalt 200 "$GC" xhalt --json "$OUT/xhalt.json"
has resume && run_step resume 200 "$GC" resume --json "$OUT/resume.json"
has spatial && run_step spatial 120 "$GC" spatial --trials 20 --json "$OUT/spatial.json"
has dispatch && run_step dispatch 60 "$GC" dispatch --trials 20 --json "$OUT/dispatch.json"
has hostfunc && run_step hostfunc 60 "$GC" hostfunc --trials 10 --json "$OUT/hostfunc.json"
has stream && run_step stream 60 "$GC" stream --json "$OUT/stream.json"
has correctstream && run_step correctstream 420 "$GCH" correctness --stream \
    --events "${GPU_CHECK_EVENTS:-1000}" --json "$OUT/correctstream.json"
has correctstreamahead && run_step correctstreamahead 300 env CORUN_AHEAD=2 "$GCH" correctness \
    --stream --kernel matmul,reduce,transpose --events "${GPU_CHECK_EVENTS:-1000}" \
    --json "$OUT/correctstreamahead.json"
has correctgrid && run_step correctgrid 300 env CORUN_GRID_TASK_US=0 "$GCH" correctness --grid \
    --events "${GPU_CHECK_EVENTS:-1000}" --json "$OUT/correctgrid.json"
has chain && run_step chain 300 "$GC" chain --json "$OUT/chain.json"
has hostcost && run_step hostcost 60 "$GC" hostcost --json "$OUT/hostcost.json"
if has daemoncost; then
  run_step daemoncost 400 bash -c "sock=\$(mktemp -u /tmp/corund-check-XXXXXX.sock); \
      '$BUILD/corun' daemon --backend cuda --socket \$sock --log-level info \
        --log-file '$OUT/daemoncost-corund.log' || exit 1; \
      trap 'kill -TERM \$(cat \$sock.lock) 2> /dev/null; sleep 1' EXIT; \
      CORUN_DAEMON=\$sock '$GC' hostcost --json '$OUT/hostcost-daemon.json' && \
      CORUN_DAEMON=\$sock '$GC' chain --json '$OUT/chain-daemon.json' && \
      CORUN_DAEMON=\$sock '$GC' hostcost --json '$OUT/hostcost-daemon2.json' && \
      CORUN_DAEMON=off '$GC' hostcost --json '$OUT/hostcost-nodaemon.json' && \
      test \$(grep -c 'client [0-9]*: pid' '$OUT/daemoncost-corund.log') -ge 3 && \
      '$BUILD/corun' status --socket \$sock > '$OUT/daemoncost-status.txt' && \
      cat '$OUT/daemoncost-status.txt' && \
      grep -Eq 'mode (time-sliced|mps) ' '$OUT/daemoncost-status.txt'"
fi
has lsalone && run_step lsalone 60 "$GC" lsalone --json "$OUT/lsalone.json"
has queued && run_step queued 120 "$GC" queued --json "$OUT/queued.json"
has threads && run_step threads 120 "$GC" threads --json "$OUT/threads.json"
has capture && run_step capture 60 "$GC" capture --json "$OUT/capture.json"
has sync && run_step sync 300 bash -c "'$BUILD/gpu/check/corun-gpucheck-sync' --json '$OUT/sync.json' \
    && '$BUILD/gpu/check/corun-gpucheck-sync-pt' --json '$OUT/sync-pt.json'"
if has sanitize; then
  if command -v compute-sanitizer >/dev/null 2>&1; then
    # --report-api-errors no: the backend finds a kernel's parameter count
    # by asking cuFuncGetParamInfo for one past the last, which answers
    # CUDA_ERROR_INVALID_VALUE by design; device-side errors still count.
    for tool in memcheck racecheck; do
      run_step $tool 240 bash -c "for a in 1 2; do echo \"== CORUN_AHEAD=\$a\"; \
          CORUN_AHEAD=\$a CORUN_GRID_TASK_US=0 compute-sanitizer --tool $tool --report-api-errors no \
          --error-exitcode 3 '$GC' sanitize || exit \$?; done"
    done
  else
    summary+=("sanitize     SKIPPED (no compute-sanitizer)")
  fi
fi
has multigpu && run_step multigpu 200 env OUT="$OUT/multigpu" GPU_BUILD="$BUILD" scripts/gpu-multi.sh
has processes && run_step processes 300 bash -c "for sc in ls-batch ls-batch-200us; do \
      '$BUILD/corun' demo --processes --scenario bench/scenarios/\$sc.json --quiet \
        --keep '$OUT/processes/'\$sc || exit 1; done"
has apps && run_step apps 300 env OUT="$OUT" GPU_BUILD="$BUILD" \
    GPU_APPS_TIMEOUT="${GPU_APPS_TIMEOUT:-60}" scripts/gpu-apps.sh
if has appsahead; then
  mkdir -p "$OUT/appsahead"
  run_step appsahead 300 env CORUN_AHEAD=2 OUT="$OUT/appsahead" GPU_BUILD="$BUILD" \
      GPU_APPS_TIMEOUT="${GPU_APPS_TIMEOUT:-60}" scripts/gpu-apps.sh
fi
if has counters; then
  # Slate's kernel rates from CUPTI's hardware counters, beside the counted
  # ones the policies step uses, one process per kernel as `--app` runs them.
  # (One process per kernel keeps each kernel's measurement apart; docs/decisions/0013.)
  rm -f "$OUT/profiles-counters.txt" "$OUT/profiles-counters.txt.lock"
  out_abs=$(cd "$OUT" && pwd)
  run_step counters 200 bash -c "for app in bs gs mm rg tr; do \
      CORUN_PROFILE_COUNTERS=1 CORUN_PROFILE_PATH='$out_abs/profiles-counters.txt' timeout 60 \
        '$BUILD/corun' profile --train-scenario bench/scenarios/slate-pairs.json --runs 5 \
        --app \$app --backend cuda 2>&1 | grep -E 'rates of|failed' || exit 1; \
      CORUN_PROFILE_COUNTERS=0 CORUN_PROFILE_PATH='$out_abs/profiles-counted.txt' timeout 60 \
        '$BUILD/corun' profile --train-scenario bench/scenarios/slate-pairs.json --runs 5 \
        --app \$app --backend cuda 2>&1 | grep -E 'rates of|failed' || exit 1; done; \
    echo '-- counters'; CORUN_PROFILE_PATH='$out_abs/profiles-counters.txt' '$BUILD/corun' profile; \
    echo '-- counted'; CORUN_PROFILE_PATH='$out_abs/profiles-counted.txt' '$BUILD/corun' profile"
fi
if has policies; then
  # One step per experiment (GPU_CHECK_EXPERIMENTS), so what finished is
  # kept when the time runs out; they share one fresh profile store:
  # durations measured on another day or GPU would train the duration
  # models on the wrong numbers.
  rm -f "$OUT/profiles.txt" "$OUT/profiles.txt.lock" "$OUT"/policies-*.json
  out_abs=$(cd "$OUT" && pwd)
  for x in ${GPU_CHECK_EXPERIMENTS:-hpf ffs model slate srt spatial}; do
    run_step "policies-$x" 240 bash -c "CORUN_PROFILE_PATH='$out_abs/profiles.txt' \
        '$BUILD/corun' experiment $x --backend ${GPU_CHECK_POLICIES_BACKEND:-cuda} \
        ${GPU_CHECK_POLICIES_ARGS:-} > '$OUT/policies-$x.json' && \
        test -s '$OUT/policies-$x.json'"
    # A failed step must not leave a partial file that looks like results.
    [ "${status[policies-$x]}" -eq 0 ] || rm -f "$OUT/policies-$x.json"
  done
  {
    echo '{'
    first=1
    for f in "$OUT"/policies-*.json; do
      [ -s "$f" ] || continue
      x=${f##*/policies-}
      [ $first -eq 0 ] && echo ','
      first=0
      printf '"%s": ' "${x%.json}"
      cat "$f"
    done
    echo '}'
  } > "$OUT/policies.json"
fi

# One file with everything, for bench/results/.
{
  printf '{\n  "device": "%s",\n  "driver": "%s",\n  "commit": "%s",\n  "date": "%s",\n' \
    "$device" "$driver" "$COMMIT" "$date_utc"
  printf '  "steps": {'
  first=1
  for s in "${!status[@]}"; do
    [ $first -eq 0 ] && printf ','
    first=0
    printf '"%s": %d' "$s" "${status[$s]}"
  done
  printf '},\n'
  for f in occupancy correctness correctahead correctstream correctstreamahead correctgrid overhead latency xhalt resume spatial dispatch hostfunc stream chain hostcost daemoncost lsalone queued threads capture sync sync-pt demo apps policies; do
    if [ -s "$OUT/$f.json" ]; then
      printf '  "%s": ' "$f"
      cat "$OUT/$f.json"
      printf ',\n'
    fi
  done
  printf '  "end": true\n}\n'
} > "$OUT/gpu-results.json"

echo
echo "==== gpu-check summary: $device, driver $driver, commit $COMMIT"
for line in "${summary[@]}"; do
  echo "  $line"
done
for f in occupancy correctness correctahead correctstream correctstreamahead correctgrid overhead latency xhalt resume spatial dispatch hostfunc stream chain hostcost daemoncost lsalone queued threads capture sync demo apps appsahead counters policies memcheck racecheck; do
  [ -s "$OUT/$f.log" ] || [ -s "$OUT/$f.json" ] || continue
  echo "---- $f"
  case $f in
    overhead) grep -E "^(kernel|[a-z0-9]+ )" "$OUT/$f.log" | head -12 ;;
    demo) grep -E "^(scenario|system|alone|mps|priority|smguard|flep-hpf|green)" "$OUT/$f.log" | head -32 ;;
    latency) grep -E "^(baseline|halt)" "$OUT/$f.log" | head -24 ;;
    counters) grep -E "^(cuda|backend|-- )" "$OUT/$f.log" | head -14 ;;
    resume) grep -vE "^(==|   )" "$OUT/$f.log" | tail -24 ;;
    spatial) grep -E "^(LS|  LS|evict|  GPU clock)" "$OUT/$f.log" | head -60 ;;
    memcheck|racecheck) grep -E "^== CORUN_AHEAD|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$OUT/$f.log" | head -8 ;;
    policies)
      if [ -s "$OUT/policies.json" ]; then
        grep -E '"(experiment|mean_speedup|min_speedup|mean_antt_gain|mean_triplet_antt_gain|mean_throughput_loss|mean_reduction|mean_share_high|mean_share_low|mean_overhead|max_overhead|mean_mape|mean_gain|mean_corun_gain)"' \
          "$OUT/policies.json"
      fi ;;
    *) grep -vE "^(==|   )" "$OUT/$f.log" | tail -12 ;;
  esac
done
fail=0
for s in "${!status[@]}"; do
  [ "${status[$s]}" -ne 0 ] && fail=1
done
exit $fail
