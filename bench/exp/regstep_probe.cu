// regstep_probe.cu -- gpu/apps backprop's weight update: its plain grid against minimal
// persistent loops and corun's own (include/corun/corun_device.cuh), event-timed.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -Iinclude [-maxrregcount=N] bench/exp/regstep_probe.cu
// (bench/results/h200-2026-11-28-regstep/README.txt)
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "corun/corun_device.cuh"
#define ETA 0.3f
#define MOMENTUM 0.3f
#define HEIGHT 16
__device__ __forceinline__ void body(const float *delta, int hid, const float *ly, int num_blocks,
                                     float *w, float *oldw, uint3 bi, dim3 gd) {
  const int by = bi.y * gd.x + bi.x;
  const int tx = threadIdx.x, ty = threadIdx.y;
  if (by >= num_blocks) return;
  int index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1);
  int index_y = HEIGHT * by + ty + 1;
  int index_x = tx + 1;
  w[index] += ((ETA * delta[index_x] * ly[index_y]) + (MOMENTUM * oldw[index]));
  oldw[index] = ((ETA * delta[index_x] * ly[index_y]) + (MOMENTUM * oldw[index]));
  __syncthreads();
  if (ty == 0 && by == 0) {
    w[index_x] += ((ETA * delta[index_x]) + (MOMENTUM * oldw[index_x]));
    oldw[index_x] = ((ETA * delta[index_x]) + (MOMENTUM * oldw[index_x]));
  }
}
__global__ void k_plain(const float *d, int hid, const float *ly, int nb, float *w, float *o) {
  body(d, hid, ly, nb, w, o, blockIdx, gridDim);
}
// static stride, tasks t = bid, bid + N, ...
__global__ void k_stride(const float *d, int hid, const float *ly, int nb, float *w, float *o, int gx, int tasks) {
  dim3 g(gx, tasks / gx);
  for (int t = blockIdx.x; t < tasks; t += gridDim.x) {
    body(d, hid, ly, nb, w, o, make_uint3(t % gx, t / gx, 0), g);
    __syncthreads();
  }
}
// static stride, no loop barrier
__global__ void k_stride_nb(const float *d, int hid, const float *ly, int nb, float *w, float *o, int gx, int tasks) {
  dim3 g(gx, tasks / gx);
  for (int t = blockIdx.x; t < tasks; t += gridDim.x) {
    body(d, hid, ly, nb, w, o, make_uint3(t % gx, t / gx, 0), g);
  }
}
// contiguous range per worker
__global__ void k_range(const float *d, int hid, const float *ly, int nb, float *w, float *o, int gx, int tasks) {
  dim3 g(gx, tasks / gx);
  int per = (tasks + gridDim.x - 1) / gridDim.x;
  int lo = blockIdx.x * per, hi = min(tasks, lo + per);
  for (int t = lo; t < hi; t++) {
    body(d, hid, ly, nb, w, o, make_uint3(t % gx, t / gx, 0), g);
  }
}
// atomic claim of c tasks, synchronous
__global__ void k_claim(const float *d, int hid, const float *ly, int nb, float *w, float *o, int gx, int tasks, unsigned *next, int c) {
  dim3 g(gx, tasks / gx);
  __shared__ int f;
  for (;;) {
    if (threadIdx.x == 0 && threadIdx.y == 0) f = atomicAdd(next, c);
    __syncthreads();
    int f0 = f;
    if (f0 >= tasks) break;
    for (int t = f0; t < min(tasks, f0 + c); t++) body(d, hid, ly, nb, w, o, make_uint3(t % gx, t / gx, 0), g);
    __syncthreads();
  }
}
// semi-persistent: grid of tasks/k blocks, block b runs tasks b*k .. b*k+k-1
__global__ void k_semi(const float *d, int hid, const float *ly, int nb, float *w, float *o, int gx, int tasks, int k) {
  dim3 g(gx, tasks / gx);
  for (int i = 0; i < k; i++) {
    int t = blockIdx.x * k + i;
    if (t < tasks) body(d, hid, ly, nb, w, o, make_uint3(t % gx, t / gx, 0), g);
  }
}

__global__ void k_corun(const corun_worker_arg wa, const float *d, int hid, const float *ly, int nb, float *w, float *o) {
  corun_worker_loop<CORUN_SHARED>(wa, [&](const uint3 b, const dim3 g) { body(d, hid, ly, nb, w, o, b, g); });
}
__global__ void k_corun_np(const corun_worker_arg wa, const float *d, int hid, const float *ly, int nb, float *w, float *o) {
  corun_worker_loop<CORUN_PLAIN>(wa, [&](const uint3 b, const dim3 g) { body(d, hid, ly, nb, w, o, b, g); });
}
__global__ void k_corun_ahead(const corun_worker_arg wa, const float *d, int hid, const float *ly, int nb, float *w, float *o) {
  corun_worker_loop_ahead(wa, [&](const uint3 b, const dim3 g) { body(d, hid, ly, nb, w, o, b, g); });
}

__device__ __noinline__ void body_ni(const float *delta, int hid, const float *ly, int num_blocks,
                                     float *w, float *oldw, uint3 bi, dim3 gd) {
  body(delta, hid, ly, num_blocks, w, oldw, bi, gd);
}
__global__ void k_corun_ni(const corun_worker_arg wa, const float *d, int hid, const float *ly, int nb, float *w, float *o) {
  corun_worker_loop<CORUN_SHARED>(wa, [&](const uint3 b, const dim3 g) { body_ni(d, hid, ly, nb, w, o, b, g); });
}
// minimal claim c, with corun's signal loads first
__global__ void k_claim_sig(const float *d, int hid, const float *ly, int nb, float *w, float *o, int gx, int tasks, corun_ctl *ctl, int c, int cnt) {
  dim3 g(gx, tasks / gx);
  __shared__ int f;
  for (;;) {
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      const uint4 sig = corun_ld_volatile128(&ctl->halt_gen);
      const uint4 lim = corun_ld_volatile128(&ctl->task_cut);
      f = (sig.x | lim.x) == 0 ? (int)atomicAdd((unsigned long long *)&ctl->next, (unsigned long long)c) : tasks;
    }
    __syncthreads();
    int f0 = f;
    if (f0 >= tasks) break;
    for (int t = f0; t < min(tasks, f0 + c); t++) body(d, hid, ly, nb, w, o, make_uint3(t % gx, t / gx, 0), g);
    __syncthreads();
    if (cnt && threadIdx.x == 0 && threadIdx.y == 0) atomicAdd((unsigned long long *)&ctl->done, (unsigned long long)c);
  }
}

// M: 0 = 32-bit atomic on ctl->next, no signal loads; 1 = 64-bit atomic on ctl->next, no loads;
// 2 = volatile 16B loads + 32-bit atomic; 3 = __ldcg 16B loads + 64-bit atomic; 4 = one volatile 16B load + 64-bit
template <int M>
__global__ void k_abl(const float *d, int hid, const float *ly, int nb, float *w, float *o, int gx, int tasks, corun_ctl *ctl, int c, unsigned long long *st) {
  dim3 g(gx, tasks / gx);
  __shared__ int f;
  if (threadIdx.x == 0 && threadIdx.y == 0) st[blockIdx.x] = corun_globaltimer();
  for (;;) {
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      unsigned x = 0;
      if (M == 2 || M == 4) { const uint4 sig = corun_ld_volatile128(&ctl->halt_gen); x |= sig.x; }
      if (M == 2) { const uint4 lim = corun_ld_volatile128(&ctl->task_cut); x |= lim.x; }
      if (M == 3) { const uint4 sig = __ldcg((const uint4 *)&ctl->halt_gen); const uint4 lim = __ldcg((const uint4 *)&ctl->task_cut); x |= sig.x | lim.x; }
      int r;
      if (M == 0 || M == 2) r = (int)atomicAdd((unsigned *)&ctl->next, (unsigned)c);
      else r = (int)atomicAdd((unsigned long long *)&ctl->next, (unsigned long long)c);
      f = x == 0 ? r : tasks;
    }
    __syncthreads();
    int f0 = f;
    if (f0 >= tasks) break;
    for (int t = f0; t < min(tasks, f0 + c); t++) body(d, hid, ly, nb, w, o, make_uint3(t % gx, t / gx, 0), g);
    __syncthreads();
  }
}
int main() {
  const int in = 4194304, hid = 16, nb = in / 16, gx = 128;
  const int tasks = nb;
  size_t nw = (size_t)(in + 1) * (hid + 1);
  float *d, *ly, *w, *o; unsigned *next;
  cudaMalloc(&d, 64 * 4); cudaMalloc(&ly, (in + 1) * 4); cudaMalloc(&w, nw * 4); cudaMalloc(&o, nw * 4);
  cudaMalloc(&next, 4);
  cudaMemset(d, 0, 64 * 4); cudaMemset(ly, 0, (in + 1) * 4); cudaMemset(w, 0, nw * 4); cudaMemset(o, 0, nw * 4);
  int nsm; cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0);
  int per; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k_stride, 256, 0);
  const int N = per * nsm;
  printf("SMs %d, workers/SM %d, N %d\n", nsm, per, N);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  dim3 th(16, 16);
  auto timeit = [&](const char *name, auto launch) {
    std::vector<float> v;
    for (int r = 0; r < 15; r++) {
      cudaMemset(next, 0, 4);
      cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); v.push_back(ms * 1000);
    }
    std::sort(v.begin(), v.end());
    printf("%-22s median %7.1f us  min %7.1f\n", name, v[v.size() / 2], v[0]);
  };
  timeit("plain", [&] { k_plain<<<dim3(gx, nb / gx), th>>>(d, hid, ly, nb, w, o); });
  timeit("stride", [&] { k_stride<<<N, th>>>(d, hid, ly, nb, w, o, gx, tasks); });
  timeit("stride, no loop bar", [&] { k_stride_nb<<<N, th>>>(d, hid, ly, nb, w, o, gx, tasks); });
  timeit("range", [&] { k_range<<<N, th>>>(d, hid, ly, nb, w, o, gx, tasks); });
  for (int c : {1, 4, 16}) {
    char nm[32]; snprintf(nm, 32, "claim c=%d", c);
    timeit(nm, [&] { k_claim<<<N, th>>>(d, hid, ly, nb, w, o, gx, tasks, next, c); });
  }
  for (int k : {2, 4, 8, 32}) {
    char nm[32]; snprintf(nm, 32, "semi k=%d", k);
    timeit(nm, [&] { k_semi<<<(tasks + k - 1) / k, th>>>(d, hid, ly, nb, w, o, gx, tasks, k); });
  }

  corun_ctl *ctl; cudaMalloc(&ctl, sizeof(corun_ctl));
  for (int bud : {10, 40}) {
    corun_worker_arg wa = {};
    wa.ctl = ctl; wa.grid_x = gx; wa.grid_y = nb / gx; wa.grid_z = 1; wa.tasks = tasks;
    wa.workers_per_capsm = per; wa.nworkers = N; wa.budget_ns = bud * 1000; wa.chunk_max = 1u << 20;
    wa.sm_lo = 0; wa.sm_hi = 1023;
    char nm[48];
    snprintf(nm, 48, "corun chunk b%d", bud);
    timeit(nm, [&] { cudaMemsetAsync(ctl, 0, sizeof(corun_ctl)); k_corun<<<N, th>>>(wa, d, hid, ly, nb, w, o); });
    snprintf(nm, 48, "corun noinline b%d", bud);
    timeit(nm, [&] { cudaMemsetAsync(ctl, 0, sizeof(corun_ctl)); k_corun_ni<<<N, th>>>(wa, d, hid, ly, nb, w, o); });
    snprintf(nm, 48, "corun chunk plain b%d", bud);
    timeit(nm, [&] { cudaMemsetAsync(ctl, 0, sizeof(corun_ctl)); k_corun_np<<<N, th>>>(wa, d, hid, ly, nb, w, o); });
    snprintf(nm, 48, "corun ahead b%d", bud);
    timeit(nm, [&] { cudaMemsetAsync(ctl, 0, sizeof(corun_ctl)); k_corun_ahead<<<N, th>>>(wa, d, hid, ly, nb, w, o); });
  }
  for (int c : {4, 16}) for (int cnt : {0, 1}) {
    char nm[48]; snprintf(nm, 48, "claim+sig c=%d count=%d", c, cnt);
    timeit(nm, [&] { cudaMemsetAsync(ctl, 0, sizeof(corun_ctl)); k_claim_sig<<<N, th>>>(d, hid, ly, nb, w, o, gx, tasks, ctl, c, cnt); });
  }

  {
    unsigned long long *st; cudaMalloc(&st, 8 * N); std::vector<unsigned long long> hs(N);
    auto A = [&](const char *nm, auto kern) { timeit(nm, [&] { cudaMemsetAsync(ctl, 0, sizeof(corun_ctl)); kern<<<N, th>>>(d, hid, ly, nb, w, o, gx, tasks, ctl, 4, st); });
      cudaMemcpy(hs.data(), st, 8 * N, cudaMemcpyDeviceToHost); unsigned long long m = *std::min_element(hs.begin(), hs.end()); int late = 0; for (auto x : hs) late += x > m + 5000; printf("   late starters %d of %d\n", late, N); };
    A("abl0 atom32 ctl", k_abl<0>);
    A("abl1 atom64 ctl", k_abl<1>);
    A("abl2 vol2 atom32", k_abl<2>);
    A("abl3 ldcg2 atom64", k_abl<3>);
    A("abl4 vol1 atom64", k_abl<4>);
  }
  int pc; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&pc, k_corun, 256, 0); printf("k_corun per SM %d\n", pc);
  timeit("plain again", [&] { k_plain<<<dim3(gx, nb / gx), th>>>(d, hid, ly, nb, w, o); });
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
