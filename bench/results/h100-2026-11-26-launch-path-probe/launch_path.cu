// Probe for the direct launch path: what each piece costs per launch in a chain of
// dependent launches, and which driver calls block while a stream waits on corun.
// nvcc -O3 -arch=sm_90 launch_path.cu -lcuda -o launch_path
//   launch_path chain [N]      per-launch cost of the variants, task sizes 2 5 20 100 us
//   launch_path block MODE     a kernel holds the legacy stream; main thread does MODE
//                              (memcpy_d2h memcpy_h2d symbol memset devsync strsync);
//                              a second thread tries driver calls, each timed
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1);} } while (0)
#define DK(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char *s; cuGetErrorString(e, &s); printf("DRV %s at %s:%d\n", s, __FILE__, __LINE__); exit(1);} } while (0)
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }

__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__constant__ int c_warpspin;
__device__ __forceinline__ void spin_ns(long long ns) {
  if (c_warpspin) { if ((threadIdx.x & 31) == 0) { unsigned long long t0 = gt(); while ((long long)(gt() - t0) < ns) {} } __syncwarp(); }
  else { unsigned long long t0 = gt(); while ((long long)(gt() - t0) < ns) {} }
}

struct __align__(128) Ctl {
  unsigned long long next; char p0[120];
  unsigned long long done; /* low: tasks done; high: primary workers left */
  unsigned release; unsigned fin; char p1[112];
};
struct Arg { Ctl *c; unsigned tasks; unsigned primary; unsigned preset; unsigned seq; unsigned *mbox; unsigned gate; };

__global__ void plain(long long ns) { spin_ns(ns); }

// kVariant: 0 = exit with relaxed add only (today's exit), 1 = primary exit check (anchor),
// 2 = anchor + finisher writes host mailbox, 3 = anchor + finisher writes device fin (gate)
template <int kVariant>
__global__ void worker(Arg a, long long ns) {
  __shared__ unsigned t;
  Ctl *c = a.c;
  const bool leader = threadIdx.x == 0;
  unsigned k = 0;
  for (;; ++k) {
    if (leader) {
      unsigned id = blockIdx.x;
      if (k == 0 && id < a.preset) t = id;
      else t = (unsigned)atomicAdd(&c->next, 1ull) + a.preset;
    }
    __syncthreads();
    if (t >= a.tasks) break;
    spin_ns(ns);
    __syncthreads();
    if (leader) atomicAdd(&c->done, 1ull);
  }
  if (!leader) return;
  if (kVariant == 0 || a.primary == 0) return;
  unsigned long long old = atomicAdd(&c->done, 1ull << 32);
  if ((unsigned)(old >> 32) + 1 != a.primary) return;
  unsigned d = (unsigned)old;
  while (d < a.tasks) { // anchor: hold the stream until the tasks are done or released
    __nanosleep(2000);
    d = (unsigned)*(volatile unsigned long long *)&c->done;
    if (*(volatile unsigned *)&c->release) break;
  }
  if (kVariant == 2) *(volatile unsigned *)a.mbox = a.seq;
  if (kVariant == 3) atomicExch(&c->fin, a.seq);
}

static int nsm, occ;
typedef void (*wfn)(Arg, long long);

static double chain(int mode, int n, long long ns, Ctl *slots, int nslots, unsigned *mbox, cudaStream_t s, bool preset, double *host_us) {
  unsigned nb = nsm * occ;
  static unsigned seq = 0;
  // zero the pool first (the recycler's work, off the critical path)
  CK(cudaMemsetAsync(slots, 0, sizeof(Ctl) * nslots, s));
  CK(cudaStreamSynchronize(s));
  double t0 = now_us(), th = 0;
  for (int i = 0; i < n; i++) {
    double h0 = now_us();
    Arg a = {&slots[i % nslots], nb, nb, preset ? nb : 0u, ++seq, mbox, 0};
    switch (mode) {
    case 0: plain<<<nb, 256, 0, s>>>(ns); break;
    case 1: worker<0><<<nb, 256, 0, s>>>(a, ns); break;
    case 2: worker<1><<<nb, 256, 0, s>>>(a, ns); break;
    case 3: worker<2><<<nb, 256, 0, s>>>(a, ns); break;
    case 4: worker<3><<<nb, 256, 0, s>>>(a, ns);
            DK(cuStreamWaitValue32((CUstream)s, (CUdeviceptr)&slots[i % nslots].fin, seq, CU_STREAM_WAIT_VALUE_GEQ)); break;
    }
    th += now_us() - h0;
  }
  CK(cudaStreamSynchronize(s));
  CK(cudaGetLastError());
  *host_us = th / n;
  return (now_us() - t0) / n;
}

static int cmd_chain(int N) {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int nslots = N;
  Ctl *slots; CK(cudaMalloc(&slots, sizeof(Ctl) * nslots));
  unsigned *mbox; CK(cudaHostAlloc(&mbox, 4096, cudaHostAllocMapped));
  unsigned *dmbox; CK(cudaHostGetDevicePointer(&dmbox, mbox, 0));
  const char *names[] = {"native", "worker", "anchor", "anchor+mbox", "anchor+gate"};
  printf("%d dependent launches per cell, grid %d SMs x %d blocks of 256; medians of 5 rounds (us per launch)\n", N, nsm, occ);
  printf("%-8s %-7s", "task_us", "preset");
  for (int m = 0; m < 5; m++) printf(" %12s", names[m]);
  printf("   | host us per call:");
  for (int m = 0; m < 5; m++) printf(" %7s", names[m]);
  printf("\n");
  double ts[] = {2, 5, 20, 100};
  for (double tu : ts) {
    for (int pre = 0; pre < 2; pre++) {
      long long ns = (long long)(tu * 1e3);
      int n = tu >= 100 ? N / 4 : N;
      std::vector<double> r[5], h[5];
      for (int round = 0; round < 6; round++) {
        for (int m = 0; m < 5; m++) {
          double hu; double v = chain(m, n, ns, slots, nslots, dmbox, s, pre, &hu);
          if (round > 0) { r[m].push_back(v); h[m].push_back(hu); }
        }
      }
      printf("%-8.0f %-7d", tu, pre);
      double base = 0;
      for (int m = 0; m < 5; m++) {
        std::sort(r[m].begin(), r[m].end());
        double med = r[m][r[m].size() / 2];
        if (m == 0) { base = med; printf(" %12.2f", med); }
        else printf(" %+12.2f", med - base);
      }
      printf("   |                 ");
      for (int m = 0; m < 5; m++) { std::sort(h[m].begin(), h[m].end()); printf(" %7.2f", h[m][h[m].size() / 2]); }
      printf("\n");
    }
  }
  return 0;
}

/* ---- which driver calls block while the legacy stream waits on a kernel ---- */
__global__ void hold(volatile unsigned *flag) { if (threadIdx.x == 0) while (*flag == 0) __nanosleep(1000); }
__device__ unsigned sym[1024];

static unsigned *dflag, *dword;
static CUcontext cctx;
static volatile int stepno = 0;
static const char *steps[] = {"start", "cuStreamWriteValue32(hi-prio nonblocking)", "cuLaunchKernel(nonblocking)",
  "cuEventRecord+cuEventQuery(nonblocking)", "cuStreamQuery(nonblocking)", "cuMemsetD32Async(nonblocking)",
  "cuMemcpyHtoDAsync pinned(nonblocking)", "cuMemcpyDtoHAsync pinned(nonblocking)",
  "poll host-mapped word written by the tiny kernel", "cuStreamSynchronize(nonblocking)",
  "cuEventCreate", "cuStreamCreateWithPriority", "cuMemAlloc", "cuMemAllocHost",
  "release: cuStreamWriteValue32(flag)", "done"};
#define NSTEPS 15

static void *watchdog(void *) {
  int last = -1; double since = now_us();
  for (;;) {
    usleep(10000);
    int s = stepno;
    if (s != last) { last = s; since = now_us(); }
    if (s >= NSTEPS) return nullptr;
    if (now_us() - since > 3e6) { printf("  BLOCKED in step %d: %s (3 s)\n", s, steps[s]); fflush(stdout); _exit(3); }
  }
}

static CUstream hs; static CUevent ev; static unsigned *pin, *dpin; static CUfunction ftiny;
__global__ void tiny_map(unsigned *p, unsigned *h) { if (threadIdx.x == 0) { atomicAdd(p, 1); *(volatile unsigned *)h = 42; } }

static void *actor(void *) {
  DK(cuCtxSetCurrent(cctx));
  usleep(20000); // let the main thread enter its call
  double t;
  #define STEP(i, call) do { stepno = i; t = now_us(); call; printf("  %-50s %8.1f us\n", steps[i], now_us() - t); } while (0)
  STEP(1, DK(cuStreamWriteValue32(hs, (CUdeviceptr)dword, 7, 0)));
  void *args[] = {&dword, &dpin};
  if (!getenv("SKIP_LAUNCH")) STEP(2, DK(cuLaunchKernel(ftiny, 1, 1, 1, 32, 1, 1, 0, hs, args, nullptr)));
  STEP(3, DK(cuEventRecord(ev, hs)); (void)cuEventQuery(ev));
  STEP(4, (void)cuStreamQuery(hs));
  STEP(5, DK(cuMemsetD32Async((CUdeviceptr)dword + 4, 0, 1, hs)));
  STEP(6, DK(cuMemcpyHtoDAsync((CUdeviceptr)dword + 8, pin + 8, 4, hs)));
  STEP(7, DK(cuMemcpyDtoHAsync(pin + 16, (CUdeviceptr)dword, 4, hs)));
  if (!getenv("SKIP_LAUNCH")) STEP(8, while (*(volatile unsigned *)pin != 42) usleep(10));
  if (!getenv("SKIP_SYNC")) STEP(9, DK(cuStreamSynchronize(hs)));
  CUevent e2; CUstream s2; CUdeviceptr d2; void *h2;
  if (!getenv("SKIP_SYNC")) {
  STEP(10, DK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING)));
  STEP(11, DK(cuStreamCreateWithPriority(&s2, CU_STREAM_NON_BLOCKING, 0)));
  STEP(12, DK(cuMemAlloc(&d2, 4096)));
  STEP(13, DK(cuMemAllocHost(&h2, 4096)));
  }
  STEP(14, DK(cuStreamWriteValue32(hs, (CUdeviceptr)dflag, 1, 0)));
  stepno = NSTEPS;
  return nullptr;
}

static int cmd_block(const char *mode) {
  CK(cudaFree(0));
  DK(cuCtxGetCurrent(&cctx));
  CK(cudaMalloc(&dflag, 4)); CK(cudaMalloc(&dword, 64));
  CK(cudaMemset(dflag, 0, 4)); CK(cudaMemset(dword, 0, 64));
  CK(cudaDeviceSynchronize());
  int lo, hi; DK(cuCtxGetStreamPriorityRange(&lo, &hi));
  DK(cuStreamCreateWithPriority(&hs, CU_STREAM_NON_BLOCKING, hi));
  DK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
  CK(cudaHostAlloc(&pin, 4096, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&dpin, pin, 0));
  cudaFunction_t cf; CK(cudaGetFuncBySymbol(&cf, (const void *)tiny_map)); ftiny = (CUfunction)cf;
  tiny_map<<<1, 32, 0, (cudaStream_t)hs>>>(dword, dpin + 32); // warm
  CK(cudaDeviceSynchronize());
  std::vector<char> host(1 << 20), host2(1 << 20);
  char *dbuf; CK(cudaMalloc(&dbuf, 1 << 20));
  printf("block %s:\n", mode);
  hold<<<1, 32>>>(dflag); // legacy default stream, held until the actor writes the flag
  CK(cudaGetLastError());
  pthread_t a, w;
  pthread_create(&w, nullptr, watchdog, nullptr);
  pthread_create(&a, nullptr, actor, nullptr);
  double t = now_us();
  if (!strcmp(mode, "memcpy_d2h")) CK(cudaMemcpy(host.data(), dbuf, 1 << 20, cudaMemcpyDeviceToHost));
  else if (!strcmp(mode, "memcpy_h2d")) CK(cudaMemcpy(dbuf, host.data(), 1 << 20, cudaMemcpyHostToDevice));
  else if (!strcmp(mode, "symbol")) CK(cudaMemcpyFromSymbol(host2.data(), sym, sizeof(unsigned) * 1024));
  else if (!strcmp(mode, "memset")) CK(cudaMemset(dbuf, 0, 1 << 20));
  else if (!strcmp(mode, "devsync")) CK(cudaDeviceSynchronize());
  else if (!strcmp(mode, "strsync")) CK(cudaStreamSynchronize(0));
  else { printf("unknown mode\n"); return 2; }
  printf("  main thread's %s returned after %.1f us\n", mode, now_us() - t);
  pthread_join(a, nullptr);
  printf("  ok\n");
  return 0;
}


/* ---- per-block timeline of one launch of each variant ---- */
__global__ void plain_tl(long long ns, unsigned long long *ts) {
  unsigned long long t0 = gt(); spin_ns(ns); __syncthreads();
  if (threadIdx.x == 0) { ts[blockIdx.x * 4] = t0; ts[blockIdx.x * 4 + 1] = 0; ts[blockIdx.x * 4 + 2] = gt(); ts[blockIdx.x * 4 + 3] = gt(); }
}
__global__ void worker_tl(Arg a, long long ns, unsigned long long *ts) {
  __shared__ unsigned t;
  Ctl *c = a.c;
  const bool leader = threadIdx.x == 0;
  unsigned long long t0 = gt(), t1 = 0, t2 = 0;
  for (unsigned k = 0;; ++k) {
    if (leader) { if (k == 0 && blockIdx.x < a.preset) t = blockIdx.x; else t = (unsigned)atomicAdd(&c->next, 1ull) + a.preset; }
    __syncthreads();
    if (k == 0) t1 = gt();
    if (t >= a.tasks) break;
    spin_ns(ns);
    __syncthreads();
    if (leader) atomicAdd(&c->done, 1ull);
    t2 = gt();
  }
  if (leader) { ts[blockIdx.x * 4] = t0; ts[blockIdx.x * 4 + 1] = t1; ts[blockIdx.x * 4 + 2] = t2; ts[blockIdx.x * 4 + 3] = gt(); }
}
static int cmd_timeline(void) {
  unsigned nb = nsm * occ;
  unsigned long long *ts; CK(cudaMallocManaged(&ts, nb * 4 * 8));
  Ctl *slots; CK(cudaMalloc(&slots, sizeof(Ctl) * 64));
  double tus[] = {2, 100};
  for (double tu : tus) for (int v = 0; v < 3; v++) {
    for (int rep = 0; rep < 10; rep++) {
      CK(cudaMemset(slots, 0, sizeof(Ctl) * 64));
      Arg a = {&slots[rep], nb, nb, v == 2 ? nb : 0u, 0, nullptr, 0};
      if (v == 0) plain_tl<<<nb, 256>>>((long long)(tu * 1e3), ts); else worker_tl<<<nb, 256>>>(a, (long long)(tu * 1e3), ts);
      CK(cudaDeviceSynchronize());
    }
    unsigned long long s0 = ~0ull, s1 = 0, e1 = 0, w1 = 0, b1 = 0; double spin = 0, tail = 0;
    for (unsigned b = 0; b < nb; b++) {
      unsigned long long *r = ts + b * 4;
      s0 = std::min(s0, r[0]); s1 = std::max(s1, r[0]); e1 = std::max(e1, r[3]); w1 = std::max(w1, r[2]);
      b1 = std::max(b1, r[1] ? r[1] - r[0] : 0ull);
      spin += (double)(r[2] - (r[1] ? r[1] : r[0])); tail += (double)(r[3] - r[2]);
    }
    printf("task %5.0f us %-14s start spread %7.2f us, first claim max %6.2f us, mean work %8.2f us, mean exit path %6.2f us, span %8.2f us\n",
           tu, v == 0 ? "plain" : v == 1 ? "worker" : "worker+preset", (s1 - s0) / 1e3, b1 / 1e3, spin / nb / 1e3, tail / nb / 1e3, (e1 - s0) / 1e3);
  }
  return 0;
}

/* ---- a grid waiting behind a stream wait value, released by a memop, vs a fresh launch ---- */
__global__ void stamp(volatile unsigned *h, unsigned v) { if (threadIdx.x == 0 && blockIdx.x == 0) *h = v; }
static int cmd_gate(void) {
  cudaStream_t a, b; int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  CK(cudaStreamCreateWithPriority(&a, cudaStreamNonBlocking, lo));
  CK(cudaStreamCreateWithPriority(&b, cudaStreamNonBlocking, hi));
  unsigned *h, *dh, *gate; CK(cudaHostAlloc(&h, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&dh, h, 0));
  CK(cudaMalloc(&gate, 4)); CK(cudaMemset(gate, 0, 4)); CK(cudaDeviceSynchronize());
  std::vector<double> rel, lau;
  unsigned nb = nsm * occ;
  for (unsigned i = 1; i <= 200; i++) {
    DK(cuStreamWaitValue32((CUstream)a, (CUdeviceptr)gate, i, CU_STREAM_WAIT_VALUE_GEQ));
    stamp<<<nb, 256, 0, a>>>(dh, i);
    usleep(200);
    double t0 = now_us();
    DK(cuStreamWriteValue32((CUstream)b, (CUdeviceptr)gate, i, 0));
    while (*(volatile unsigned *)h != i) {}
    rel.push_back(now_us() - t0);
    CK(cudaStreamSynchronize(a));
    usleep(200);
    t0 = now_us();
    stamp<<<nb, 256, 0, a>>>(dh + 1, i);
    while (*(volatile unsigned *)(h + 1) != i) {}
    lau.push_back(now_us() - t0);
    CK(cudaStreamSynchronize(a));
  }
  std::sort(rel.begin(), rel.end()); std::sort(lau.begin(), lau.end());
  printf("first block running, host-observed, 200 trials: gated grid released by a memop p50 %.1f us p90 %.1f; fresh launch p50 %.1f us p90 %.1f\n",
         rel[100], rel[180], lau[100], lau[180]);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  nsm = p.multiProcessorCount;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, worker<1>, 256, 0));
  { int w = getenv("SPIN") && !strcmp(getenv("SPIN"), "warp"); CK(cudaMemcpyToSymbol(c_warpspin, &w, sizeof(w))); }
  if (argc > 1 && !strcmp(argv[1], "gate")) return cmd_gate();
  if (argc > 1 && !strcmp(argv[1], "chain")) return cmd_chain(argc > 2 ? atoi(argv[2]) : 2000);
  if (argc > 1 && !strcmp(argv[1], "timeline")) return cmd_timeline();
  if (argc > 2 && !strcmp(argv[1], "block")) return cmd_block(argv[2]);
  printf("usage: launch_path chain [N] | block MODE\n");
  return 2;
}
