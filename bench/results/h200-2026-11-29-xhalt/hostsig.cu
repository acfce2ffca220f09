// Probe: a halt signal through host memory (a CPU store into pinned, mapped
// memory, read by the workers over PCIe) against a device word written by
// cuStreamWriteValue32 on a high-priority stream (corun's path today).
// Grid: every SM x 8 blocks of 256 threads; thread 0 of each block runs
// "tasks" of TASK_NS spinning on %globaltimer, reading the flag between
// tasks; the block leaves when it is set. Host: t0 before the signal, t1
// when cudaStreamSynchronize on the kernel's stream returns (spin sync).
// Also: the latency of one flag read from the GPU (host vs device memory).
// Build: nvcc -O3 -arch=sm_90 hostsig.cu -lcuda -o hostsig
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
#define DK(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { printf("DRV %d at %d\n", (int)e, __LINE__); exit(1);} } while (0)
static double now_us() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }

__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned ld_sys(const unsigned *p) { unsigned v; asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned ld_vol(const unsigned *p) { return *(const volatile unsigned *)p; }
__device__ __forceinline__ unsigned ld_atom(const unsigned *p) { unsigned v; asm volatile("atom.relaxed.sys.global.or.b32 %0, [%1], 0;" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned ld_acq(const unsigned *p) { unsigned v; asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned ld_cv(const unsigned *p) { unsigned v; asm volatile("ld.global.cv.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }

template <int kSys>
__global__ void spin(const unsigned *flag, unsigned long long task_ns, unsigned *started) {
  __shared__ unsigned stop;
  if (threadIdx.x == 0) { stop = 0; atomicAdd(started, 1u); }
  __syncthreads();
  while (!stop) {
    unsigned long long t0 = gt();
    while (gt() - t0 < task_ns) { }
    __syncthreads();
    if (threadIdx.x == 0) stop = kSys == 1 ? ld_sys(flag) : kSys == 2 ? ld_atom(flag) : kSys == 3 ? ld_acq(flag) : kSys == 4 ? ld_cv(flag) : ld_vol(flag);
    __syncthreads();
  }
}

template <int kSys>
__global__ void readlat(const unsigned *flag, int n, unsigned long long *out) {
  unsigned long long c0 = clock64(); unsigned s = 0;
  for (int i = 0; i < n; i++) s += kSys ? ld_sys(flag + (s & 0)) : ld_vol(flag + (s & 0));
  unsigned long long c1 = clock64();
  out[0] = (c1 - c0) / n; out[1] = s;
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static double pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[std::min(v.size() - 1, (size_t)(p / 100 * v.size()))]; }

int main(int argc, char **argv) {
  int trials = argc > 1 ? atoi(argv[1]) : 100;
  setvbuf(stdout, NULL, _IONBF, 0);
  CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceMapHost));
  CK(cudaFree(0));
  int nsm; CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t ks, hs; CK(cudaStreamCreateWithPriority(&ks, cudaStreamNonBlocking, lo));
  CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
  unsigned *dflag, *started; CK(cudaMalloc(&dflag, 64)); CK(cudaHostAlloc(&started, 64, cudaHostAllocMapped));
  unsigned *hflag; CK(cudaHostAlloc(&hflag, 64, cudaHostAllocMapped));
  unsigned *hflag_d; CK(cudaHostGetDevicePointer((void **)&hflag_d, hflag, 0));
  unsigned long long *out; CK(cudaMallocManaged(&out, 16));
  const int blocks = nsm * 8;
  // read latency, in SM clocks
  for (int k = 0; k < 2; k++) {
    readlat<1><<<1, 1>>>(k ? hflag_d : dflag, 1000, out); CK(cudaDeviceSynchronize());
    printf("read latency, %s memory, ld.relaxed.sys: %llu clocks\n", k ? "host" : "device", out[0]);
    readlat<0><<<1, 1>>>(k ? hflag_d : dflag, 1000, out); CK(cudaDeviceSynchronize());
    printf("read latency, %s memory, ld.volatile: %llu clocks\n", k ? "host" : "device", out[0]);
  }
  unsigned long long task_ns[] = {0, 2000};
  for (unsigned long long tn : task_ns) {
    std::vector<double> v[5];
    for (int i = 0; i < trials; i++) {
      for (int m = 0; m < 5; m++) {
        CK(cudaMemset(dflag, 0, 4)); *(volatile unsigned *)hflag = 0; *started = 0;
        CK(cudaDeviceSynchronize());
        if (m == 0) spin<0><<<blocks, 256, 0, ks>>>(dflag, tn, started);
        else if (m == 1) spin<1><<<blocks, 256, 0, ks>>>(hflag_d, tn, started);
        else if (m == 2) spin<2><<<blocks, 256, 0, ks>>>(hflag_d, tn, started);
        else if (m == 3) spin<3><<<blocks, 256, 0, ks>>>(hflag_d, tn, started);
        else spin<4><<<blocks, 256, 0, ks>>>(hflag_d, tn, started);
        unsigned *started_d; CK(cudaHostGetDevicePointer((void **)&started_d, started, 0)); (void)started_d;
        { double w = now_us(); while (*(volatile unsigned *)started < (unsigned)blocks) { if (now_us() - w > 1e6) { printf("mode %d: only %u of %d blocks started\n", m, *(volatile unsigned *)started, blocks); break; } } }
        usleep(2000);
        /* as a scheduler does before it decides (and gpu-check's halts):
         * a progress read on the signal stream, which also wakes the path */
        unsigned junk; CK(cudaMemcpyAsync(&junk, started, 4, cudaMemcpyDeviceToHost, hs));
        CK(cudaStreamSynchronize(hs));
        double t0 = now_us();
        if (m == 0) DK(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)dflag, 1, 0));
        else { *(volatile unsigned *)hflag = 1; __sync_synchronize(); }
        double dt;
        for (;;) {
          cudaError_t q = cudaStreamQuery(ks);
          dt = now_us() - t0;
          if (q == cudaSuccess) break;
          if (q != cudaErrorNotReady) CK(q);
          if (dt > 50000) { /* not seen in 50 ms: end it through the device word */
            printf("mode %d tasks %llu: not seen after 50 ms\n", m, tn);
            DK(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)dflag, 1, 0));
            *(volatile unsigned *)hflag = 1;
            CK(cudaStreamSynchronize(ks)); dt = -1; break;
          }
        }
        if (dt < 0) continue;
        v[m].push_back(dt);
      }
    }
    const char *nm[] = {"stream write to device word", "CPU store, ld.relaxed.sys", "CPU store, atom.sys.or 0", "CPU store, ld.acquire.sys", "CPU store, ld.global.cv"};
    for (int m = 0; m < 5; m++) if (!v[m].empty()) printf("tasks %llu ns: %-28s median %.1f us p90 %.1f max %.1f (%zu)\n", tn, nm[m], med(v[m]), pct(v[m], 90), pct(v[m], 100), v[m].size());
  }
  return 0;
}
