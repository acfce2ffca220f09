// Where an LS request's time goes on an idle GPU: host launch call, GPU start lag,
// GPU run, host notice. Modes: sync (blocking-sync event), spin (query loop),
// waiter (corun-like: waiter thread spins, eventfd, main thread ppoll).
#include <cuda_runtime.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include <algorithm>
#include <vector>

static __device__ __forceinline__ unsigned long long gt() {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }

__global__ void spin(unsigned us, unsigned long long *out) {
  unsigned long long s = gt();
  if (threadIdx.x == 0) out[2 * blockIdx.x] = s;
  while (gt() < s + us * 1000ull) {}
  __syncthreads();
  if (threadIdx.x == 0) out[2 * blockIdx.x + 1] = gt();
}
__global__ void keep(volatile int *stop) { while (!*stop) { __nanosleep(1000); } }
__global__ void stamp(unsigned long long *o) { *o = gt(); }

static long long now_rt() { struct timespec t; clock_gettime(CLOCK_REALTIME, &t); return t.tv_sec * 1000000000ll + t.tv_nsec; }

static cudaEvent_t ev;
static int efd;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int pending, stopping; static volatile int hotw; static volatile unsigned long long ndone;
static void *waiter(void *) {
  pthread_mutex_lock(&mu);
  for (;;) {
    if (hotw) { pthread_mutex_unlock(&mu); while (!pending && !stopping) {} pthread_mutex_lock(&mu); }
    while (!pending && !stopping) pthread_cond_wait(&cv, &mu);
    if (stopping) break;
    pending = 0;
    pthread_mutex_unlock(&mu);
    while (cudaEventQuery(ev) == cudaErrorNotReady) {}
    __atomic_add_fetch(&ndone, 1, __ATOMIC_RELEASE);
    unsigned long long one = 1; if (write(efd, &one, 8) < 0) {}
    pthread_mutex_lock(&mu);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

static double pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[(size_t)std::min((double)v.size() - 1, floor(p * v.size()))]; }

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "spin";
  int mainspin = strchr(mode, 'M') != NULL; hotw = strchr(mode, 'H') != NULL; int busyarr = strchr(mode, 'B') != NULL;
  int keepalive = argc > 2 ? atoi(argv[2]) : 0;
  int n = argc > 3 ? atoi(argv[3]) : 200;
  double gap_us = argc > 4 ? atof(argv[4]) : 5000;
  unsigned task = 50; int grid = 132;
  cudaSetDeviceFlags(strncmp(mode, "sync", 4) == 0 ? cudaDeviceScheduleBlockingSync : cudaDeviceScheduleAuto);
  cudaFree(0);
  unsigned long long *d, *h; cudaMalloc(&d, 2 * grid * 8); cudaMallocHost(&h, 2 * grid * 8);
  unsigned long long *ds, *hs; cudaMalloc(&ds, 8); cudaMallocHost(&hs, 8);
  int *stop; cudaHostAlloc(&stop, 4, cudaHostAllocMapped); *stop = 0; int *dstop; cudaHostGetDevicePointer(&dstop, stop, 0);
  cudaStream_t s, sk; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&sk, cudaStreamNonBlocking);
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming | (strncmp(mode, "sync", 4) == 0 ? cudaEventBlockingSync : 0));
  efd = eventfd(0, EFD_NONBLOCK);
  pthread_t th; pthread_create(&th, NULL, waiter, NULL);
  // globaltimer vs CLOCK_REALTIME offset, best of 20
  long long off = 0, best = 1ll << 60;
  for (int i = 0; i < 20; i++) { long long a = now_rt(); stamp<<<1,1,0,s>>>(ds); cudaMemcpy(hs, ds, 8, cudaMemcpyDeviceToHost); long long b = now_rt();
    if (b - a < best) { best = b - a; off = (long long)*hs - (a + b) / 2; } }
  for (int i = 0; i < 5; i++) { spin<<<grid,256,0,s>>>(task, d); cudaStreamSynchronize(s); }
  if (keepalive) keep<<<1,32,0,sk>>>(dstop);
  std::vector<double> ta, lc, lag, run, note;
  unsigned seed = 12345;
  for (int r = 0; r < n; r++) {
    seed = seed * 1103515245u + 12345u; double u = ((seed >> 8) & 0xffffff) / 16777216.0 + 1e-9;
    long long gap = (long long)(-log(u) * gap_us * 1000);
    long long until = now_rt() + gap; struct timespec t = {(time_t)(until / 1000000000ll), (long)(until % 1000000000ll)};
    if (busyarr) { while (now_rt() < until) {} } else clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &t, NULL);
    long long h0 = now_rt();
    spin<<<grid,256,0,s>>>(task, d);
    cudaEventRecord(ev, s);
    long long h1 = now_rt();
    if (!strncmp(mode, "sync", 4)) cudaEventSynchronize(ev);
    else if (!strncmp(mode, "spin", 4)) { while (cudaEventQuery(ev) == cudaErrorNotReady) {} }
    else { pthread_mutex_lock(&mu); pending = 1; pthread_cond_signal(&cv); pthread_mutex_unlock(&mu);
      unsigned long long c;
      if (mainspin) { while (__atomic_load_n(&ndone, __ATOMIC_ACQUIRE) == (unsigned long long)r) {} if (read(efd, &c, 8) < 0) {} }
      else { struct pollfd p = {efd, POLLIN, 0}; while (poll(&p, 1, 1000) <= 0) {} if (read(efd, &c, 8) < 0) {} } }
    long long h2 = now_rt();
    cudaMemcpy(h, d, 2 * grid * 8, cudaMemcpyDeviceToHost);
    unsigned long long gs = ~0ull, ge = 0; for (int b = 0; b < grid; b++) { gs = std::min(gs, h[2*b]); ge = std::max(ge, h[2*b+1]); }
    ta.push_back((h2 - h0) / 1e3); lc.push_back((h1 - h0) / 1e3); lag.push_back(((long long)gs - off - h0) / 1e3);
    run.push_back((ge - gs) / 1e3); note.push_back((h2 - ((long long)ge - off)) / 1e3);
  }
  *stop = 1; cudaDeviceSynchronize();
  printf("%-6s keep=%d gap=%5.0fus n=%d (calib rtt %.1f us) | p50/p99/max us: turnaround %.0f/%.0f/%.0f  launchcall %.1f/%.1f/%.1f  startlag %.0f/%.0f/%.0f  gpurun %.0f/%.0f/%.0f  notice %.0f/%.0f/%.0f\n",
    mode, keepalive, gap_us, n, best / 1e3, pct(ta,.5), pct(ta,.99), pct(ta,1), pct(lc,.5), pct(lc,.99), pct(lc,1), pct(lag,.5), pct(lag,.99), pct(lag,1),
    pct(run,.5), pct(run,.99), pct(run,1), pct(note,.5), pct(note,.99), pct(note,1));
  pthread_mutex_lock(&mu); stopping = 1; pthread_cond_signal(&cv); pthread_mutex_unlock(&mu); pthread_join(th, NULL);
  return 0;
}
