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
#include <sys/mman.h>
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



__device__ __forceinline__ uint4 ld_sys4(const void *p) { uint4 v; asm volatile("ld.relaxed.sys.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint4 ld_gpu4(const void *p) { uint4 v; asm volatile("ld.relaxed.gpu.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint4 ld_cg4(const void *p) { uint4 v; asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned long long ld_gpu64(const void *p) { unsigned long long v; asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned long long ld_cg64(const void *p) { unsigned long long v; asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint4 ld_vol4(const void *p) { uint4 v; asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory"); return v; }
// ctl: [0..3] signal line (dword), [32] next (atomics), [64] done (atomics), [96] exited
// mode 0: stream write; 1: probe relay (32-bit poll + nanosleep); 2: corun-like relay
// (v4 sys load + v4 ctl load + next + done loads, no sleep); workers claim (atomicAdd
// next) and count (atomicAdd done) every check, read the line with ld_vol4.
__global__ void spin5(const unsigned *hflag, unsigned *ctl, int mode, unsigned long long task_ns,
                      unsigned *started, volatile unsigned *ack) {
  __shared__ unsigned stop;
  if (threadIdx.x == 0) { stop = 0; atomicAdd(started, 1u); }
  __syncthreads();
  if (mode != 0 && blockIdx.x == gridDim.x - 1) {
    if (threadIdx.x == 0) {
      if (mode == 1) { // A: u32 sys + nanosleep
        for (;;) { if (ld_sys(hflag)) { *(volatile unsigned *)ctl = 1; break; } __nanosleep(500); }
      } else if (mode == 2) { // F: A + relaxed.gpu leave loads each iteration
        for (;;) {
          const unsigned m = ld_sys(hflag);
          const uint4 s = ld_gpu4(ctl);
          const unsigned long long nx = ld_gpu64(ctl + 32);
          const uint4 d = ld_gpu4(ctl + 64);
          if (s.x != 0 || nx == ~0ull || d.x == ~0u) break;
          if (m) { *(volatile unsigned *)ctl = 1; break; }
          __nanosleep(500);
        }
      } else if (mode == 3) { // G: A + cg leave loads each iteration
        for (;;) {
          const unsigned m = ld_sys(hflag);
          const uint4 s = ld_cg4(ctl);
          const unsigned long long nx = ld_cg64(ctl + 32);
          const uint4 d = ld_cg4(ctl + 64);
          if (s.x != 0 || nx == ~0ull || d.x == ~0u) break;
          if (m) { *(volatile unsigned *)ctl = 1; break; }
          __nanosleep(500);
        }
      } else if (mode == 4) { // H: host load issued after the device loads complete
        for (;;) {
          const uint4 s = ld_vol4(ctl);
          const unsigned long long nx = *(volatile unsigned long long *)(ctl + 32);
          const unsigned d = *(volatile unsigned *)(ctl + 64);
          if (s.x != 0 || nx == ~0ull || d == ~0u) break;
          __nanosleep(100);
          if (ld_sys(hflag)) { *(volatile unsigned *)ctl = 1; break; }
          __nanosleep(400);
        }
      } else { // I: F without the sleep
        for (;;) {
          const unsigned m = ld_sys(hflag);
          const uint4 s = ld_gpu4(ctl);
          const unsigned long long nx = ld_gpu64(ctl + 32);
          const uint4 d = ld_gpu4(ctl + 64);
          if (s.x != 0 || nx == ~0ull || d.x == ~0u) break;
          if (m) { *(volatile unsigned *)ctl = 1; break; }
        }
      }
      if (atomicExch(ctl + 16, 1u) == 0) { *ack = 1; }
    }
    return;
  }
  while (!stop) {
    unsigned long long t0 = gt();
    while (gt() - t0 < task_ns) { }
    __syncthreads();
    if (threadIdx.x == 0) {
      uint4 v = ld_vol4(ctl);
      if (v.x) {
        if (mode == 0 && atomicExch(ctl + 16, 1u) == 0) { *ack = 1; __threadfence_system(); }
        stop = 1;
      } else { atomicAdd((unsigned long long *)(ctl + 32), 1ull); atomicAdd(ctl + 64, 1u); }
    }
    __syncthreads();
  }
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
  int mfd = memfd_create("m", MFD_ALLOW_SEALING);
  if (ftruncate(mfd, 1 << 20)) exit(1);
  unsigned *reg = (unsigned *)mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
  CK(cudaHostRegister(reg, 1 << 20, cudaHostRegisterMapped | cudaHostRegisterPortable));
  unsigned *reg_d; CK(cudaHostGetDevicePointer((void **)&reg_d, reg, 0));
  unsigned *ctl; CK(cudaMalloc(&ctl, 4096));
  const char *nm[] = {"stream write", "A u32 sys + sleep", "F A + relaxed.gpu loads", "G A + .cg loads", "H vol loads, then sys", "I F, no sleep"};
  const int NM = 6;
  unsigned long long tasks[] = {2000, 10000};
  for (unsigned long long tn : tasks) {
    std::vector<double> va[NM], ve[NM]; int miss[NM] = {0};
    for (int i = 0; i < trials; i++) for (int m = 0; m < NM; m++) {
      const int blocks = nsm * 8;
      unsigned *hw = hbig;
      unsigned *hw_d = hbig_d;
      const int kmode = m;
      CK(cudaMemset(ctl, 0, 4096)); memset(hbig, 0, 4096); memset(reg, 0, 4096); _mm_mfence();
      *(volatile unsigned *)ack = 0; *(volatile unsigned *)started = 0;
      CK(cudaDeviceSynchronize());
      spin5<<<blocks, 256, 0, ks>>>(hw_d, ctl, kmode, tn, started_d, ack_d);
      { double w = now_us(); while (*(volatile unsigned *)started < (unsigned)blocks) { if (now_us() - w > 1e6) { printf("not started\n"); exit(1);} } }
      usleep(2000);
      unsigned junk; CK(cudaMemcpyAsync(&junk, ctl, 4, cudaMemcpyDeviceToHost, hs)); CK(cudaStreamSynchronize(hs));
      double t0 = now_us();
      if (m == 0) DK(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)ctl, 1, 0));
      else { __atomic_store_n(hw, 1u, __ATOMIC_RELEASE); }
      double ta = -1, te = -1;
      for (;;) {
        double dt = now_us() - t0;
        if (ta < 0 && *(volatile unsigned *)ack) ta = dt;
        if (ta >= 0) { cudaError_t q = cudaStreamQuery(ks); if (q == cudaSuccess) { te = now_us() - t0; break; } if (q != cudaErrorNotReady) CK(q); }
        if (dt > 20000) { miss[m]++; DK(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)ctl, 1, 0)); CK(cudaStreamSynchronize(ks)); break; }
      }
      if (te >= 0) { va[m].push_back(ta); ve[m].push_back(te); }
    }
    for (int m = 0; m < NM; m++) {
      if (va[m].empty()) { printf("checks every %llu ns: %-36s never done in 20 ms (%d)\n", tn, nm[m], miss[m]); continue; }
      printf("checks every %llu ns: %-36s first seen median %.1f p90 %.1f | end median %.1f p90 %.1f p99 %.1f (%zu, %d missed)\n", tn, nm[m],
             med(va[m]), pct(va[m], 90), med(ve[m]), pct(ve[m], 90), pct(ve[m], 99), va[m].size(), miss[m]);
    }
  }
  return 0;
}
