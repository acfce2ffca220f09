// Where does a host-memory halt signal lose its millisecond? A grid polls a
// flag; the first block to see it writes an ack into mapped host memory
// (seen by the host spinning on it), then every block leaves. Host: t0 at
// the signal, t_ack when the ack is seen, t_end when the stream is done.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <string.h>
#include <immintrin.h>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
#define DK(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { printf("DRV %d at %d\n", (int)e, __LINE__); exit(1);} } while (0)
static double now_us() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned ld_sys(const unsigned *p) { unsigned v; asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned ld_vol(const unsigned *p) { return *(const volatile unsigned *)p; }

// relay: 0 = every block polls `flag`; 1 = block 0 polls `flag` and copies it
// into `dword` (device memory) that the other blocks poll.
__global__ void spin(const unsigned *flag, unsigned *dword, int relay, unsigned long long task_ns,
                     unsigned *started, volatile unsigned *ack) {
  __shared__ unsigned stop;
  if (threadIdx.x == 0) { stop = 0; atomicAdd(started, 1u); }
  __syncthreads();
  const bool poller = !relay || blockIdx.x == 0;
  while (!stop) {
    unsigned long long t0 = gt();
    if (!(relay && blockIdx.x == 0)) while (gt() - t0 < task_ns) { }
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned v = poller ? ld_sys(flag) : ld_vol(dword);
      if (v) {
        if (relay && blockIdx.x == 0) *(volatile unsigned *)dword = 1;
        if (atomicExch(dword + 16, 1u) == 0) { *ack = 1; __threadfence_system(); }
        stop = 1;
      }
    }
    __syncthreads();
  }
}


// mode 0: all poll dword (stream write). 1: relay block (last) polls host
// word every ~0.5 us, copies to dword, leaves once every other block has
// left. 2: block polls host line [smid]. 3: block polls host line [block].
__global__ void spin3(const unsigned *hflag, unsigned *dword, int mode, unsigned long long task_ns,
                      unsigned *started, volatile unsigned *ack) {
  __shared__ unsigned stop;
  if (threadIdx.x == 0) { stop = 0; atomicAdd(started, 1u); }
  __syncthreads();
  if (mode == 1 && blockIdx.x == gridDim.x - 1) {
    if (threadIdx.x == 0) {
      for (;;) {
        if (ld_sys(hflag)) { *(volatile unsigned *)dword = 1; break; }
        __nanosleep(500);
      }
      if (atomicExch(dword + 16, 1u) == 0) { *ack = 1; }
      while (ld_vol(dword + 32) < gridDim.x - 1) { __nanosleep(200); }
    }
    __syncthreads();
    return;
  }
  unsigned smid; asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  const unsigned *fl = mode == 0 || mode == 1 ? dword : mode == 2 ? hflag + 16 * smid : hflag + 16 * blockIdx.x;
  while (!stop) {
    unsigned long long t0 = gt();
    while (gt() - t0 < task_ns) { }
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned v = mode >= 2 ? ld_sys(fl) : ld_vol(fl);
      if (v) {
        if (mode != 1 && atomicExch(dword + 16, 1u) == 0) { *ack = 1; __threadfence_system(); }
        stop = 1;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0 && mode == 1) atomicAdd(dword + 32, 1u);
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static double pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[std::min(v.size() - 1, (size_t)(p / 100 * v.size()))]; }

int main(int argc, char **argv) {
  int trials = argc > 1 ? atoi(argv[1]) : 40;
  setvbuf(stdout, NULL, _IONBF, 0);
  CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceMapHost));
  CK(cudaFree(0));
  int nsm; CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t ks, hs; CK(cudaStreamCreateWithPriority(&ks, cudaStreamNonBlocking, lo));
  CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
  unsigned *dflag; CK(cudaMalloc(&dflag, 256));
  unsigned *started, *hflag, *ack, *wcflag;
  CK(cudaHostAlloc(&started, 64, cudaHostAllocMapped));
  CK(cudaHostAlloc(&hflag, 4096, cudaHostAllocMapped));
  CK(cudaHostAlloc(&ack, 4096, cudaHostAllocMapped));
  CK(cudaHostAlloc(&wcflag, 4096, cudaHostAllocMapped | cudaHostAllocWriteCombined));
  unsigned *hflag_d, *ack_d, *started_d, *wcflag_d;
  CK(cudaHostGetDevicePointer((void **)&hflag_d, hflag, 0));
  CK(cudaHostGetDevicePointer((void **)&ack_d, ack, 0));
  CK(cudaHostGetDevicePointer((void **)&started_d, started, 0));
  CK(cudaHostGetDevicePointer((void **)&wcflag_d, wcflag, 0));

  unsigned *hbig; CK(cudaHostAlloc(&hbig, 1 << 20, cudaHostAllocMapped));
  unsigned *hbig_d; CK(cudaHostGetDevicePointer((void **)&hbig_d, hbig, 0));
  const char *nm[] = {"stream write, device word", "host store, relay block", "host store, a line per SM", "host store, a line per block"};
  const int NM = 4;
  unsigned long long tasks[] = {2000, 10000};
  for (unsigned long long tn : tasks) {
    std::vector<double> va[NM], ve[NM]; int miss[NM] = {0};
    for (int i = 0; i < trials; i++) for (int m = 0; m < NM; m++) {
      const int blocks = nsm * 8;
      const int lines = m == 2 ? nsm : m == 3 ? blocks : 1;
      CK(cudaMemset(dflag, 0, 256)); memset(hbig, 0, 1 << 20); _mm_mfence();
      *(volatile unsigned *)ack = 0; *(volatile unsigned *)started = 0;
      CK(cudaDeviceSynchronize());
      spin3<<<blocks, 256, 0, ks>>>(hbig_d, dflag, m, tn, started_d, ack_d);
      { double w = now_us(); while (*(volatile unsigned *)started < (unsigned)blocks) { if (now_us() - w > 1e6) { printf("not started\n"); exit(1);} } }
      usleep(2000);
      unsigned junk; CK(cudaMemcpyAsync(&junk, dflag, 4, cudaMemcpyDeviceToHost, hs)); CK(cudaStreamSynchronize(hs));
      double t0 = now_us();
      if (m == 0) DK(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)dflag, 1, 0));
      else { for (int l = 0; l < lines; l++) ((volatile unsigned *)hbig)[16 * l] = 1; _mm_mfence(); }
      double ta = -1, te = -1;
      for (;;) {
        double dt = now_us() - t0;
        if (ta < 0 && *(volatile unsigned *)ack) ta = dt;
        if (ta >= 0) { cudaError_t q = cudaStreamQuery(ks); if (q == cudaSuccess) { te = now_us() - t0; break; } if (q != cudaErrorNotReady) CK(q); }
        if (dt > 20000) { miss[m]++; DK(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)dflag, 1, 0)); CK(cudaStreamSynchronize(ks)); break; }
      }
      if (te >= 0) { va[m].push_back(ta); ve[m].push_back(te); }
    }
    for (int m = 0; m < NM; m++) {
      if (va[m].empty()) { printf("checks every %llu ns: %-30s never done in 20 ms (%d)\n", tn, nm[m], miss[m]); continue; }
      printf("checks every %llu ns: %-30s first seen median %.1f p90 %.1f | end median %.1f p90 %.1f p99 %.1f max %.1f (%zu, %d missed)\n", tn, nm[m],
             med(va[m]), pct(va[m], 90), med(ve[m]), pct(ve[m], 90), pct(ve[m], 99), pct(ve[m], 100), va[m].size(), miss[m]);
    }
  }
  return 0;
}
