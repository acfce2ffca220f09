// What the bench/exp experiments share: error checks, the host clock, a
// percentile, the control block of a plain 1D worker launch, a median of
// launches each timed after one of its own form, an input fill, the buffers
// and control block of an N x N transpose, and an output check.
// (header only; the experiments are built with -I include -lcuda)
#ifndef CORUN_EXP_UTIL_CUH
#define CORUN_EXP_UTIL_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <time.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "corun/corun_ctl.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("%s:%d CUresult %d\n", __FILE__, __LINE__, (int)r_); exit(1); } } while (0)

static inline double now_us()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

// The p-th percentile (0..100) of v, nearest rank.
static inline double pct(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    return v[(size_t)(p / 100.0 * (v.size() - 1) + 0.5)];
}

// The control block of a fresh launch of nw workers (per per SM) over a 1D
// grid of `tasks` block-tasks, budget 10 us, as corun-gpucheck's direct
// launches set it.
static inline corun_ctl exp_ctl(int nsm, uint64_t tasks, int nw, int per)
{
    corun_ctl h;
    memset(&h, 0, sizeof(h));
    h.sm_hi = (uint32_t)nsm - 1;
    h.task_limit = h.tasks = tasks;
    h.budget_ns = 10000;
    h.chunk_max = 1024;
    h.nworkers = (uint32_t)nw;
    h.workers_per_capsm = (uint32_t)per;
    h.grid_x = (uint32_t)tasks;
    h.grid_y = h.grid_z = 1;
    return h;
}

// Median milliseconds of reps timed launches, each right after an untimed
// launch of the same form and a synchronisation (so it is timed after a
// launch of its own form, as corun-gpucheck overhead times); prep (e.g. a
// control block's reset) runs before each launch and is not timed.
template <typename P, typename F>
static float median_after_ms(int reps, P prep, F launch)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> v;
    for (int r = 0; r < reps; ++r) {
        prep();
        launch();
        CK(cudaDeviceSynchronize());
        prep();
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        v.push_back(ms);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return (float)pct(v, 50);
}

// Fills p[0, n) with distinct-enough floats (i mod 2^24).
__global__ void exp_fill(float *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        p[i] = (float)(i & 0xffffff);
    }
}

// An N x N float transpose as gpu-check's kernel runs it: input (filled by
// exp_fill), output and reference buffers, freed with the object; the grid of
// 32 x 32 tiles of 32 x 8 threads; and the control block of a fresh worker
// launch of nw workers (per per SM) over it, budget 10 us.
struct ExpTranspose {
    size_t bytes;
    float *in, *out, *ref;
    dim3 grid, blk;
    unsigned tasks;
    corun_ctl h;
    ExpTranspose(int n, int sms, int nw, int per)
        : bytes((size_t)n * n * 4), grid(n / 32, n / 32), blk(32, 8), tasks((n / 32) * (n / 32))
    {
        CK(cudaMalloc(&in, bytes));
        CK(cudaMalloc(&out, bytes));
        CK(cudaMalloc(&ref, bytes));
        exp_fill<<<1024, 256>>>(in, (size_t)n * n);
        h = exp_ctl(sms, tasks, nw, per);
        h.grid_x = grid.x;
        h.grid_y = grid.y;
    }
    ~ExpTranspose()
    {
        cudaFree(in);
        cudaFree(out);
        cudaFree(ref);
    }
    ExpTranspose(const ExpTranspose &) = delete;
    ExpTranspose &operator=(const ExpTranspose &) = delete;
};

// Fills `out` with 0xff bytes, runs prep() and run(), and compares the first
// want.size() bytes of `out` with `want` (host memory): false, with a line
// naming `what`, if they differ.
template <typename P, typename F>
static bool exp_same_output(const char *what, void *out, const std::vector<char> &want, P prep, F run)
{
    std::vector<char> got(want.size());
    CK(cudaMemset(out, 0xff, want.size()));
    prep();
    run();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), out, want.size(), cudaMemcpyDeviceToHost));
    if (memcmp(want.data(), got.data(), want.size()) != 0) {
        printf("%s: output DIFFERS\n", what);
        return false;
    }
    return true;
}

#endif
