#!/usr/bin/env bash
# Experiment: where does the worker transpose lose its ~4.5 %? Profiles the
# plain and worker transpose of corun-gpucheck with Nsight Compute (hardware
# counters; --clock-control none as the device notes ask) and dumps both
# kernels' SASS. Run on the GPU machine after a build (GPU_CHECK_STEPS=build
# make gpu-check); writes $OUT/ncu-*.txt and $OUT/sass-*.txt.
#   KERNEL=transpose (default) or any gpu-check kernel name
set -uo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/ncu}
K=${KERNEL:-transpose}
GC=${GC:-build-gpu/gpu/check/corun-gpucheck}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
for f in $K ${K}__corun; do
  cuobjdump -sass -fun "$f" "$GC" > "$OUT/sass-$f.txt" 2>&1
done
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_read.sum,\
lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,\
lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,\
smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,\
smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_membar_per_warp_active.pct,\
smsp__warp_issue_stalled_drain_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,\
smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_no_instruction_per_warp_active.pct,\
smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__cycles_active.avg,sm__cycles_elapsed.max,\
dram__cycles_elapsed.avg.per_second,sm__cycles_elapsed.avg.per_second,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__ctas_launched.sum
ncu --clock-control none -k "regex:^${K}" --launch-count 9 --metrics "$metrics" \
  "$GC" overhead --kernel "$K" --reps 1 > "$OUT/ncu-metrics.txt" 2>&1
ncu --clock-control none -k "regex:^${K}" --launch-skip 2 --launch-count 3 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section SchedulerStats --section Occupancy --section LaunchStats \
  "$GC" overhead --kernel "$K" --reps 1 > "$OUT/ncu-sections.txt" 2>&1
grep -q "==ERROR==" "$OUT/ncu-metrics.txt" &&
  ncu --clock-control none -k "regex:^${K}" --launch-count 9 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum \
    "$GC" overhead --kernel "$K" --reps 1 > "$OUT/ncu-metrics-min.txt" 2>&1
echo "ncu-transpose: wrote $OUT"
