// Experiment: where does the worker transpose lose its ~5 %? (not built by
// default; nvcc -O3 -arch=sm_90 bench/exp/transpose_order.cu)
//   plain      the plain kernel, blocks in ID order
//   chunkC     plain kernel, block b runs the tile a persistent worker with
//              chunks of C tiles would run at that moment (order only)
//   staticC    persistent workers (8/SM), static chunks of C, barrier between
//              tiles, no claims (loop cost without the counter)
//   claimC     as staticC but chunks claimed with atomicAdd (one leader, barrier)
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "transpose_tile.cuh"

// block b (linear) -> task of a worker schedule: W workers, chunk C.
__global__ void k_chunk(const float *in, float *out, int w, int h, int W, int C)
{
    __shared__ float tile[32][33];
    const int gx = w / 32;
    const int b = blockIdx.y * gridDim.x + blockIdx.x;
    const int step = b / W, wk = b % W;
    const int round = step / C, i = step % C;
    int t = round * W * C + wk * C + i;
    const int total = gridDim.x * gridDim.y;
    if (t >= total) t = b; // tail: not a bijection in general; only for timing
    tile_body(in, out, w, h, t % gx, t / gx, tile);
}

__global__ void k_static(const float *in, float *out, int w, int h, int C)
{
    __shared__ float tile[32][33];
    const int gx = w / 32, total = gx * (h / 32), W = gridDim.x;
    for (int base = blockIdx.x * C; base < total; base += W * C) {
        for (int i = 0; i < C && base + i < total; ++i) {
            __syncthreads();
            const int t = base + i;
            tile_body(in, out, w, h, t % gx, t / gx, tile);
        }
    }
}

__global__ void k_claim(const float *in, float *out, int w, int h, int C, unsigned *ctr)
{
    __shared__ float tile[32][33];
    __shared__ int first;
    const int gx = w / 32, total = gx * (h / 32);
    const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
    for (;;) {
        if (leader) first = (int)atomicAdd(ctr, (unsigned)C);
        __syncthreads();
        const int f = first;
        if (f >= total) break;
        for (int i = 0; i < C && f + i < total; ++i) {
            if (i > 0) __syncthreads();
            const int t = f + i;
            tile_body(in, out, w, h, t % gx, t / gx, tile);
        }
        __syncthreads();
    }
}

int main()
{
    const int w = 8192, h = 8192, reps = 21;
    float *in, *out; unsigned *ctr;
    CK(cudaMalloc(&in, (size_t)w * h * 4)); CK(cudaMalloc(&out, (size_t)w * h * 4));
    CK(cudaMalloc(&ctr, 4));
    CK(cudaMemset(in, 1, (size_t)w * h * 4));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int per = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k_static, 256, 0));
    int per2 = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per2, k_claim, 256, 0));
    const int W = sms * per;
    const dim3 grid(w / 32, h / 32), blk(32, 8);
    auto time = [&](auto launch) {
        return median_ms(reps, [&] { CK(cudaMemset(ctr, 0, 4)); }, launch);
    };
    printf("workers %d (%d/SM; claim kernel %d/SM)\n", W, per, per2);
    for (int round = 0; round < 2; ++round) {
        const float p = time([&] { k_plain<<<grid, blk>>>(in, out, w, h); });
        printf("plain      %.4f ms\n", p);
        for (int C : {1, 3, 8, 16}) {
            const float c = time([&] { k_chunk<<<grid, blk>>>(in, out, w, h, W, C); });
            const float s = time([&] { k_static<<<W, blk>>>(in, out, w, h, C); });
            const float q = time([&] { k_claim<<<W, blk>>>(in, out, w, h, C, ctr); });
            printf("C=%-2d chunk-order %+5.1f %%  static %+5.1f %%  claim %+5.1f %%\n", C,
                   100 * (c / p - 1), 100 * (s / p - 1), 100 * (q / p - 1));
        }
    }
    return 0;
}
