// The transpose tile of gpu-check's kernel, its plain kernel and a chunk of tiles, shared by
// the transpose experiments here (transpose_order.cu, transpose_persist.cu,
// transpose_db.cu, claim_lines.cu).
#ifndef CORUN_EXP_TRANSPOSE_TILE_CUH
#define CORUN_EXP_TRANSPOSE_TILE_CUH
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#ifndef CK /* exp_util.cuh has its own, with the place */
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s\n", cudaGetErrorString(e_)); exit(1); } } while (0)
#endif

__device__ __forceinline__ void tile_body(const float *in, float *out, int w, int h, int bx, int by, float (*tile)[33])
{
    int x = bx * 32 + threadIdx.x, y = by * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = by * 32 + threadIdx.x; y = bx * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void k_plain(const float *in, float *out, int w, int h)
{
    __shared__ float tile[32][33];
    tile_body(in, out, w, h, blockIdx.x, blockIdx.y, tile);
}

// Tiles f .. f+n-1 of a chunk (none at or past the last tile) in order, a
// barrier between two tiles; kFence: __threadfence() after each tile's stores.
template <bool kFence = false>
__device__ __forceinline__ void run_tiles(const float *in, float *out, int w, int h, int f, int n,
                                          float (*tile)[33])
{
    const int gx = w / 32, total = gx * (h / 32);
    int bx = f % gx, by = f / gx;
    for (int i = 0; i < n && f + i < total; ++i) {
        if (i > 0) __syncthreads();
        tile_body(in, out, w, h, bx, by, tile);
        if (kFence) __threadfence();
        if (++bx == gx) { bx = 0; ++by; }
    }
}

// Persistent workers, chunks of C tiles, the next chunk's atomicAdd issued
// before the chunk runs (its latency hidden); kFence: __threadfence() after
// each tile's stores. transpose_persist.cu's pfC / pfCf, transpose_db.cu's pfC.
template <bool kFence>
__global__ void k_pf(const float *in, float *out, int w, int h, int C, unsigned *ctr)
{
    __shared__ float tile[32][33];
    __shared__ int slot[2];
    const int gx = w / 32, total = gx * (h / 32);
    const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
    if (leader) slot[0] = (int)atomicAdd(ctr, (unsigned)C);
    __syncthreads();
    for (int k = 0;; ++k) {
        const int f = slot[k & 1];
        if (f >= total) break;
        unsigned nx = 0;
        if (leader) nx = atomicAdd(ctr, (unsigned)C); // in flight during the chunk
        run_tiles<kFence>(in, out, w, h, f, C, tile);
        if (leader) slot[(k + 1) & 1] = (int)nx;
        __syncthreads();
    }
}

// Median milliseconds of reps launches on the default stream, reset() before each
// (the experiments reset their task counter there).
template <typename Reset, typename Launch>
static float median_ms(int reps, Reset reset, Launch launch)
{
    static cudaEvent_t a, b;
    if (a == nullptr) { CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); }
    std::vector<float> v;
    for (int r = 0; r < reps; ++r) {
        reset();
        CK(cudaEventRecord(a)); launch(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); v.push_back(ms);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
#endif
