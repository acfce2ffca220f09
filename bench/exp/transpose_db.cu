// Experiment: does a double-buffered tile take the persistent transpose's
// inter-task barrier (and with it the loss) away? (not built by default;
// nvcc -O3 -arch=sm_90 bench/exp/transpose_db.cu)
//   plain   the plain kernel (65,536 blocks of 32x8)
//   pfC     persistent workers (8/SM), chunks of C, the next claim issued
//           before the chunk (latency hidden), a barrier between the tasks
//           of a chunk and one per chunk (transpose_persist.cu's pf)
//   dbC     pfC with two tiles used alternately: no barrier between the
//           tasks of a chunk (the body's own barrier keeps warps within one
//           task of each other, so a warp never writes the tile another warp
//           still reads); one barrier per chunk stays, to publish the claim
//   dbnC    dbC whose claim is published before the chunk's last task, so
//           the body's barrier publishes it: no barrier of the loop at all
//           (C >= 2; relies on every task passing the body's barrier)
#include <algorithm>
#include <vector>
#include "transpose_tile.cuh"

template <bool kNoLoopBarrier>
__global__ void k_db(const float *in, float *out, int w, int h, int C, unsigned *ctr)
{
    __shared__ float tile[2][32][33];
    __shared__ int slot[2];
    const int gx = w / 32, total = gx * (h / 32);
    const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
    if (leader) slot[0] = (int)atomicAdd(ctr, (unsigned)C);
    __syncthreads();
    int par = 0;
    for (int k = 0;; ++k) {
        const int f = slot[k & 1];
        if (f >= total) break;
        unsigned nx = 0;
        if (leader) nx = atomicAdd(ctr, (unsigned)C);
        int bx = f % gx, by = f / gx;
        const int n = total - f < C ? total - f : C;
        for (int i = 0; i < n; ++i) {
            if (kNoLoopBarrier && leader && i == n - 1) slot[(k + 1) & 1] = (int)nx;
            tile_body(in, out, w, h, bx, by, tile[par]);
            par ^= 1;
            if (++bx == gx) { bx = 0; ++by; }
        }
        if (!kNoLoopBarrier) {
            if (leader) slot[(k + 1) & 1] = (int)nx;
            __syncthreads();
        }
    }
}

int main()
{
    const int w = 8192, h = 8192, reps = 15;
    float *in, *out; unsigned *ctr;
    CK(cudaMalloc(&in, (size_t)w * h * 4)); CK(cudaMalloc(&out, (size_t)w * h * 4));
    CK(cudaMalloc(&ctr, 4));
    std::vector<float> hin((size_t)w * h), hout((size_t)w * h);
    for (size_t i = 0; i < hin.size(); ++i) hin[i] = (float)(i % 9973);
    CK(cudaMemcpy(in, hin.data(), hin.size() * 4, cudaMemcpyHostToDevice));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int per = 0, perdb = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k_pf<false>, 256, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perdb, k_db<true>, 256, 0));
    const int W = sms * per;
    const dim3 grid(w / 32, h / 32), blk(32, 8);
    auto time = [&](auto launch) {
        return median_ms(reps, [&] { CK(cudaMemset(ctr, 0, 4)); }, launch);
    };
    auto check = [&](const char *what) {
        CK(cudaMemcpy(hout.data(), out, hout.size() * 4, cudaMemcpyDeviceToHost));
        for (int y = 0; y < h; y += 7) for (int x = 0; x < w; x += 5)
            if (hout[(size_t)x * h + y] != hin[(size_t)y * w + x]) { printf("%s WRONG at %d,%d\n", what, x, y); exit(1); }
        CK(cudaMemset(out, 0, (size_t)w * h * 4));
    };
    printf("workers %d (%d/SM; double-buffered %d/SM)\n", W, per, perdb);
    for (int C : {1, 3}) {
        CK(cudaMemset(ctr, 0, 4)); k_pf<false><<<W, blk>>>(in, out, w, h, C, ctr); CK(cudaDeviceSynchronize()); check("pf");
        CK(cudaMemset(ctr, 0, 4)); k_db<false><<<W, blk>>>(in, out, w, h, C, ctr); CK(cudaDeviceSynchronize()); check("db");
        if (C >= 2) { CK(cudaMemset(ctr, 0, 4)); k_db<true><<<W, blk>>>(in, out, w, h, C, ctr); CK(cudaDeviceSynchronize()); check("dbn"); }
    }
    for (int round = 0; round < 3; ++round) {
        const float p = time([&] { k_plain<<<grid, blk>>>(in, out, w, h); });
        printf("round %d plain %.4f ms |", round, p);
        for (int C : {1, 3, 6}) {
            const float q = time([&] { k_pf<false><<<W, blk>>>(in, out, w, h, C, ctr); });
            const float d = time([&] { k_db<false><<<W, blk>>>(in, out, w, h, C, ctr); });
            const float n = C >= 2 ? time([&] { k_db<true><<<W, blk>>>(in, out, w, h, C, ctr); }) : p;
            printf(" C=%d pf %+5.1f db %+5.1f dbn %+5.1f |", C, 100 * (q / p - 1), 100 * (d / p - 1),
                   100 * (n / p - 1));
        }
        const float p2 = time([&] { k_plain<<<grid, blk>>>(in, out, w, h); });
        printf(" plain again %+5.1f\n", 100 * (p2 / p - 1));
    }
    return 0;
}
