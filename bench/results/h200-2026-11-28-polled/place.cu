// Where the hardware puts N blocks of 256 threads (32 regs, up to 8 per SM) on an idle GPU,
// and how long an FMA-chain block takes there: one block per SM against packed.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
__device__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void __launch_bounds__(256, 8) k(int iters, unsigned *sm, unsigned long long *t, float *sink, unsigned *claim, unsigned ntasks) {
  __shared__ unsigned task;
  if (threadIdx.x == 0) task = claim ? atomicAdd(claim, 1) : blockIdx.x;
  __syncthreads();
  if (task >= ntasks) return;
  unsigned long long s = gt();
  float a = threadIdx.x, b = 1.0001f, c = 0.9999f, d = 0.5f;
  for (int i = 0; i < iters; i++) { a = a * b + c; d = d * c + b; b = b * c + a * 1e-9f; }
  if (a + d == 12345.f) sink[0] = a;
  __syncthreads();
  if (threadIdx.x == 0) { sm[task] = smid(); t[2 * task] = s; t[2 * task + 1] = gt(); }
}
int main(int argc, char **argv) {
  int iters = atoi(argv[1]);
  unsigned *sm, *claim; unsigned long long *t; float *sink;
  cudaMallocManaged(&sm, 4096 * 4); cudaMallocManaged(&t, 8192 * 8); cudaMalloc(&sink, 4); cudaMalloc(&claim, 4);
  struct { const char *what; int grid; bool claimed; } cases[] = {
    {"plain 132 blocks", 132, false}, {"claim 136 blocks", 136, true}, {"claim 264 blocks", 264, true},
    {"claim 1056 blocks", 1056, true}, {"plain 132 again", 132, false}};
  for (auto &c : cases) {
    for (int rep = 0; rep < 3; rep++) {
      cudaMemset(claim, 0, 4); cudaDeviceSynchronize();
      cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
      cudaEventRecord(e0);
      k<<<c.grid, 256>>>(iters, sm, t, sink, c.claimed ? claim : nullptr, 132);
      cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1);
      std::vector<int> per(1024, 0); int maxper = 0, used = 0;
      unsigned long long lo = ~0ull, hi = 0;
      for (int i = 0; i < 132; i++) { per[sm[i]]++; lo = std::min(lo, t[2*i]); hi = std::max(hi, t[2*i+1]); }
      for (int s = 0; s < 1024; s++) { if (per[s]) used++; maxper = std::max(maxper, per[s]); }
      double tmax = 0; for (int i = 0; i < 132; i++) tmax = std::max(tmax, (t[2*i+1]-t[2*i])/1e3);
      printf("%-18s rep %d: event %.1f us, tasks span %.1f us, longest task %.1f us, tasks on %d SMs, at most %d on one\n",
             c.what, rep, ms * 1e3, (hi - lo) / 1e3, tmax, used, maxper);
    }
  }
  return 0;
}
