#!/usr/bin/env bash
# corun-nvcc's occupancy pins: a worker that would fit fewer blocks per SM
# than its plain kernel is emitted with __maxnreg__(R), R the most registers
# that keep the plain kernel's blocks per SM at every block size (above the
# plain kernel's count where that has slack), unless ptxas, so limited,
# spills in the worker or its ahead entry: then it stays unpinned, its
# launcher and its cudaLaunchKernel register it with
# CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS (it runs as workers, at fewer blocks per
# SM) and corun-cc warns, once. A worker that needs no pin but reaches the
# last register of its occupancy step is compiled one below it. A kernel
# with its own __launch_bounds__ is never pinned (a warning says so).
# Device compiles only (nvcc for sm_90, no GPU); the register counts are
# nvcc 13's.
#
# Usage: cli_cc_pins.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/cc_common.sh"
cc_needs_nvcc
export CORUN_NVCC_KEEP=$tmp/keep
cd "$tmp" || exit 1

# binomial's tree step: the worker wants about 190 registers; limited to the
# plain kernel's 48 it spills hundreds of bytes in the step loop
cat > spill.cu <<'K'
#define STEPS 2048
#define THREADS 128
#define ELEMS (STEPS / THREADS)
__global__ void tree(const double *in, double *out) {
  __shared__ double edge[THREADS + 1];
  const int tid = threadIdx.x;
  const double s = in[3 * blockIdx.x], pu = in[3 * blockIdx.x + 1], pd = in[3 * blockIdx.x + 2];
  double v[ELEMS + 1];
#pragma unroll
  for (int i = 0; i < ELEMS; ++i) v[i] = fmax(s * exp(0.01 * (tid * ELEMS + i)) - 1.0, 0.0);
  if (tid == 0) edge[THREADS] = s;
  const int last = max(0, tid * ELEMS - 1);
#pragma unroll 16
  for (int i = STEPS; i > 0; --i) {
    edge[tid] = v[0];
    __syncthreads();
    v[ELEMS] = edge[tid + 1];
    __syncthreads();
    if (i > last) {
#pragma unroll
      for (int j = 0; j < ELEMS; ++j) v[j] = pu * v[j + 1] + pd * v[j];
    }
  }
  if (tid == 0) out[blockIdx.x] = v[0];
}
void run(const double *in, double *out, int n) { tree<<<n, THREADS>>>(in, out); }
void run_api(const double *in, double *out, int n) {
  void *args[] = {&in, &out};
  cudaLaunchKernel((const void *)tree, dim3(n), dim3(THREADS), args, 0, 0);
}
K
# an ordinary pin: the worker wants 36 registers against 27 (6 instead of 8
# blocks of 256 threads per SM); 27 are allocated as 32 (per warp, in units
# of 256), so it is pinned to 32, which keeps 8 at every block size
cat > pin.cu <<'K'
__global__ void k(const double *a, double *b, int n, double x, double y, double z) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = a[i];
  b[i] = v * x + y / (v + z) + sqrt(v * v + x);
}
void run(const double *a, double *b, int n) { k<<<n / 256, 256>>>(a, b, n, 1, 2, 3); }
K
sed 's/__global__ void k/__global__ void __launch_bounds__(256, 1) k/' pin.cu > bounds.cu
# a worker at the last register of its occupancy step: gpu/apps backprop's
# weight update (plain kernel 24 registers, worker 32 = the most that keep 8
# blocks of 256 threads per SM) is compiled one below it, its ahead entry not
cat > step.cu <<'K'
__global__ void adjust(const float *delta, int hid, const float *ly, int nb, float *w, float *oldw) {
  const int by = blockIdx.y * gridDim.x + blockIdx.x;
  const int tx = threadIdx.x, ty = threadIdx.y;
  if (by >= nb) return;
  int index = (hid + 1) * 16 * by + (hid + 1) * ty + tx + 1 + (hid + 1);
  int index_y = 16 * by + ty + 1, index_x = tx + 1;
  w[index] += ((0.3f * delta[index_x] * ly[index_y]) + (0.3f * oldw[index]));
  oldw[index] = ((0.3f * delta[index_x] * ly[index_y]) + (0.3f * oldw[index]));
  __syncthreads();
  if (ty == 0 && by == 0) {
    w[index_x] += ((0.3f * delta[index_x]) + (0.3f * oldw[index_x]));
    oldw[index_x] = ((0.3f * delta[index_x]) + (0.3f * oldw[index_x]));
  }
}
void run(const float *d, const float *ly, float *w, float *o, int nb) {
  adjust<<<dim3(128, nb / 128), dim3(16, 16)>>>(d, 16, ly, nb, w, o);
}
K

flags=(-O3 -arch=sm_90 -std=c++17 -c)
check "$wrap" "${flags[@]}" spill.cu -o spill.o 2> spill.log
cat spill.log
check test -f spill.o
check test "$(grep -c "__maxnreg__" keep/spill.cu)" -eq 0
check test "$(grep -c "warning: corun-cc: occupancy: kernel 'tree': .*spill" spill.log)" -eq 1
runs="not pinned and runs at [0-9]* instead of [0-9]* blocks per SM at [0-9]* threads"
check grep -q "kernel 'tree': .* $runs (registered with CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS)" spill.log
check test "$(grep -c "launch it plain\|launches it plain" spill.log)" -eq 0
check test "$(grep -c "worker limited to" spill.log)" -eq 0
# its launcher and its cudaLaunchKernel register it so
check grep -q "static ::corun::kernel_slot corun_slot(CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS);" keep/spill.cu
check grep -q '::corun::launch_kernel("tree", CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS, (const void \*)' keep/spill.cu

check "$wrap" "${flags[@]}" pin.cu -o pin.o 2> pin.log
cat pin.log
check test -f pin.o
check grep -q "__maxnreg__(32) k__corun(" keep/pin.cu
check test "$(grep -c "note: corun-cc: occupancy: kernel 'k': worker limited to 32 registers" pin.log)" -eq 1
check test "$(grep -c "warning" pin.log)" -eq 0
# a pinned kernel keeps the default registration
check grep -q "static ::corun::kernel_slot corun_slot;" keep/pin.cu

# the same kernel in a project header: pinned in the header's copy
sed -n '1,6p' pin.cu > pin_k.cuh
{ echo '#include "pin_k.cuh"'; sed -n '7p' pin.cu; } > pin_h.cu
check "$wrap" "${flags[@]}" pin_h.cu -o pin_h.o 2> pin_h.log
cat pin_h.log
check grep -q "__maxnreg__(32) k__corun(" keep/pin_k.corun-*.cuh
check grep -q "pin_k.cuh:1:.*note: corun-cc: occupancy: kernel 'k': worker limited to 32" pin_h.log
check grep -q "k__corun_launch(" keep/pin_h.cu

check "$wrap" "${flags[@]}" step.cu -o step.o 2> step.log
cat step.log
check test -f step.o
check grep -q "__maxnreg__(31) adjust__corun(" keep/step.cu
check test "$(grep -c "__maxnreg__" keep/step.cu)" -eq 1
check test "$(grep -c "warning\|note" step.log)" -eq 0
check grep -q "static ::corun::kernel_slot corun_slot;" keep/step.cu

check "$wrap" "${flags[@]}" bounds.cu -o bounds.o 2> bounds.log
cat bounds.log
check test "$(grep -c "__maxnreg__" keep/bounds.cu)" -eq 0
check grep -q "__launch_bounds__(256, 1) k__corun(" keep/bounds.cu
check grep -q "cannot be combined with its __launch_bounds__" bounds.log

# --link-allocated (corun-nvcc's for -rdc) needs a report to cap by
check test "$("$build/corun-cc" pin.cu -o /dev/null --link-allocated > /dev/null 2>&1; echo $?)" -eq 2

# the decision is cached with the file: a second build reads it, says
# again what the first said of the file (as every build does), and
# compiles the same source
rm -rf keep
check "$wrap" "${flags[@]}" spill.cu -o spill2.o 2> spill2.log
check test "$(grep -c "__maxnreg__" keep/spill.cu)" -eq 0
check test "$(grep -c "warning: corun-cc: occupancy: kernel 'tree': .*spill" spill2.log)" -eq 1
check cmp spill.log spill2.log
exit $fail
