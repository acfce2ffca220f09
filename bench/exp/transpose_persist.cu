// Experiment: is a persistent transpose slower than the plain one even when
// the claim costs nothing? (not built by default;
// nvcc -O3 -arch=sm_90 bench/exp/transpose_persist.cu)
//   plain     the plain kernel (65,536 blocks of 32x8)
//   claimC    persistent workers (8/SM), chunks of C claimed with atomicAdd by
//             one leader after the chunk, one barrier per chunk (as
//             transpose_order.cu)
//   pfC       as claimC, but the next chunk's atomicAdd is issued before the
//             current chunk runs and its result kept in a register: the
//             claim's latency is hidden entirely (what no register budget
//             allows corun's loop; here the kernel has registers to spare)
//   pfCf      pfC with __threadfence() after each tile's stores (the plain
//             block's exit waits for its stores to drain; does that help?)
//   stC       claimC whose first chunk is static (worker w: tiles wC..wC+C-1,
//             the counter starts at W*C): no aligned claim at the start
//   pfCg      pfC with corun's guided tail: a claim takes at most
//             remaining / (2W) tiles (at least one)
//   pfCb      pfC in a banded order: chunk v takes the tiles g*W*C + i*W + j
//             (g = v / W, j = v % W, i < C), so the tiles running at one
//             moment are W neighbours as in the plain kernel; the step of W
//             tiles is added incrementally, without a division per tile
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "transpose_tile.cuh"

template <bool kStaticFirst>
__global__ void k_claim(const float *in, float *out, int w, int h, int C, unsigned *ctr)
{
    __shared__ float tile[32][33];
    __shared__ int first;
    const int gx = w / 32, total = gx * (h / 32);
    const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
    if (leader) first = kStaticFirst ? (int)blockIdx.x * C : (int)atomicAdd(ctr, (unsigned)C);
    __syncthreads();
    for (;;) {
        const int f = first;
        if (f >= total) break;
        run_tiles(in, out, w, h, f, C, tile);
        __syncthreads();
        if (leader) first = (int)atomicAdd(ctr, (unsigned)C);
        __syncthreads();
    }
}

__global__ void k_pfg(const float *in, float *out, int w, int h, int C, unsigned *ctr)
{
    __shared__ float tile[32][33];
    __shared__ int slot[2], cnt[2];
    const int gx = w / 32, total = gx * (h / 32), W2 = 2 * gridDim.x;
    const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
    int hint = 0;
    auto size = [&](int hnt) { int c = (total - hnt) / W2; c = c < C ? c : C; return c < 1 ? 1 : c; };
    if (leader) { const int c = size(0); slot[0] = (int)atomicAdd(ctr, (unsigned)c); cnt[0] = c; hint = slot[0] + c; }
    __syncthreads();
    for (int k = 0;; ++k) {
        const int f = slot[k & 1], n = cnt[k & 1];
        if (f >= total) break;
        unsigned nx = 0; int c = 0;
        if (leader) { c = size(hint); nx = atomicAdd(ctr, (unsigned)c); }
        run_tiles(in, out, w, h, f, n, tile);
        if (leader) { slot[(k + 1) & 1] = (int)nx; cnt[(k + 1) & 1] = c; hint = (int)nx + c; }
        __syncthreads();
    }
}

__global__ void k_pfb(const float *in, float *out, int w, int h, int C, unsigned *ctr)
{
    __shared__ float tile[32][33];
    __shared__ int slot[2];
    const int gx = w / 32, total = gx * (h / 32), W = gridDim.x;
    const int sx = W % gx, sy = W / gx; // the step of W tiles
    const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
    if (leader) slot[0] = (int)atomicAdd(ctr, 1u);
    __syncthreads();
    for (int k = 0;; ++k) {
        const int v = slot[k & 1];
        const int t0 = (v / W) * W * C + v % W;
        if (t0 >= total) break;
        unsigned nx = 0;
        if (leader) nx = atomicAdd(ctr, 1u);
        int bx = t0 % gx, by = t0 / gx;
        for (int i = 0, t = t0; i < C && t < total; ++i, t += W) {
            if (i > 0) __syncthreads();
            tile_body(in, out, w, h, bx, by, tile);
            bx += sx; by += sy;
            if (bx >= gx) { bx -= gx; ++by; }
        }
        if (leader) slot[(k + 1) & 1] = (int)nx;
        __syncthreads();
    }
}

int main()
{
    const int w = 8192, h = 8192, reps = 15;
    float *in, *out; unsigned *ctr;
    CK(cudaMalloc(&in, (size_t)w * h * 4)); CK(cudaMalloc(&out, (size_t)w * h * 4));
    CK(cudaMalloc(&ctr, 4));
    CK(cudaMemset(in, 1, (size_t)w * h * 4));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int per = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k_pf<false>, 256, 0));
    const int W = sms * per;
    const dim3 grid(w / 32, h / 32), blk(32, 8);
    auto time = [&](auto launch, unsigned ctr0) {
        return median_ms(reps, [&] { CK(cudaMemcpy(ctr, &ctr0, 4, cudaMemcpyHostToDevice)); }, launch);
    };
    printf("workers %d (%d/SM)\n", W, per);
    for (int round = 0; round < 3; ++round) {
        const float p = time([&] { k_plain<<<grid, blk>>>(in, out, w, h); }, 0);
        printf("round %d plain %.4f ms |", round, p);
        for (int C : {1, 3, 6}) {
            const float c = time([&] { k_claim<false><<<W, blk>>>(in, out, w, h, C, ctr); }, 0);
            const float s = time([&] { k_claim<true><<<W, blk>>>(in, out, w, h, C, ctr); }, W * C);
            const float q = time([&] { k_pf<false><<<W, blk>>>(in, out, w, h, C, ctr); }, 0);
            const float f = time([&] { k_pf<true><<<W, blk>>>(in, out, w, h, C, ctr); }, 0);
            const float g = time([&] { k_pfg<<<W, blk>>>(in, out, w, h, C, ctr); }, 0);
            const float bb = time([&] { k_pfb<<<W, blk>>>(in, out, w, h, C, ctr); }, 0);
            printf(" C=%d claim %+5.1f st %+5.1f pf %+5.1f pff %+5.1f pfg %+5.1f pfb %+5.1f |", C,
                   100 * (c / p - 1), 100 * (s / p - 1), 100 * (q / p - 1), 100 * (f / p - 1),
                   100 * (g / p - 1), 100 * (bb / p - 1));
        }
        const float p2 = time([&] { k_plain<<<grid, blk>>>(in, out, w, h); }, 0);
        printf(" plain again %+5.1f\n", 100 * (p2 / p - 1));
    }
    return 0;
}
