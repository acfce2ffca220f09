// Experiment: is the worker transpose's ~5 % a fixed cost per launch, or a
// loss of DRAM throughput while it runs? And does a persistent transpose lose
// it because it keeps every worker slot busy all the time (the plain kernel's
// blocks leave gaps while the hardware starts the next one)?
// (not built by default; nvcc -O3 -arch=sm_90 -I include -I gpu/check
//  bench/exp/transpose_scale.cu -lcuda)
//
// For N x N floats, N = 4096, 8192, 16384 (53, 197, 772 us plain), % against
// the plain kernel of the same round, medians of 15:
//   corun/P    gpu-check's transpose__corun, corun's loop at budget 10 us,
//              P workers per SM (8 = what the occupancy API gives; 7, 6 fewer)
//   pfC/P      transpose_tile.cuh's bare persistent loop with the claim's
//              latency hidden, chunks of C, P workers per SM
//   plainK     the plain kernel held to K blocks per SM by dynamic shared
//              memory it does not use, with the shared-memory carveout at its
//              maximum (K = 8 is the control for the carveout itself)
//   and, for corun's loop at 8 per SM, its fixed cost: without the guided
//   tail, started from a seeded task time, both; an empty launch (no task
//   left: every worker claims nothing and leaves) against an empty kernel.
// `transpose_scale corun` prints only corun/8 and the empty launches, four
// rounds: build it once per variant of the loop and run the builds interleaved
// (how the relaxed exit was measured, bench/results/h100-2026-11-22-fixed-cost.txt).
#include "exp_util.cuh"
#include "kernels.cuh"
#include "transpose_tile.cuh"

template <int kTag>
__global__ void k_plain_dyn(const float *in, float *out, int w, int h)
{
    __shared__ float tile[32][33];
    tile_body(in, out, w, h, blockIdx.x, blockIdx.y, tile);
}

__global__ void k_nop() {}

int main(int argc, char **argv)
{
    // `transpose_scale corun`: only corun/8 and the empty launches, four rounds
    // (for A/Bs of the loop built with different flags).
    const bool only_corun = argc > 1 && !strcmp(argv[1], "corun");
    const int reps = 15;
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, transpose__corun, 256, 0));
    int per_pf = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_pf, k_pf<false>, 256, 0));
    printf("SMs %d, corun workers/SM %d, bare workers/SM %d\n", sms, per, per_pf);

    // Dynamic shared memory that holds the plain kernel to K blocks per SM.
    const int dyn[3] = {1024, 26000, 30000};
    const void *kds[3] = {(const void *)k_plain_dyn<8>, (const void *)k_plain_dyn<7>,
                          (const void *)k_plain_dyn<6>};
    for (int i = 0; i < 3; ++i) {
        CK(cudaFuncSetAttribute(kds[i], cudaFuncAttributePreferredSharedMemoryCarveout, 100));
        int got = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, kds[i], 256, dyn[i]));
        printf("plain held by %d B of dynamic shared memory: %d blocks/SM\n", dyn[i], got);
    }

    corun_ctl *ctl;
    unsigned *ctr;
    CK(cudaMalloc(&ctl, sizeof(corun_ctl)));
    CK(cudaMalloc(&ctr, 4));
    for (int n : {4096, 8192, 16384}) {
        float *in, *out;
        CK(cudaMalloc(&in, (size_t)n * n * 4));
        CK(cudaMalloc(&out, (size_t)n * n * 4));
        CK(cudaMemset(in, 1, (size_t)n * n * 4));
        const dim3 grid(n / 32, n / 32), blk(32, 8);
        const unsigned tasks = grid.x * grid.y;
        auto none = [] {};
        auto zero_ctr = [&] { CK(cudaMemset(ctr, 0, 4)); };
        // corun's loop with P workers per SM; seed_ns > 0: started as a
        // relaunch is, from that task time (gen 1, task_ns_seed), instead of
        // measuring one task first; tail = false: nworkers = 1 in the control
        // block, which turns the guided tail off (it is nworkers' only use);
        // limit: task_limit (0: an empty launch, every worker claims nothing).
        auto corun_ex = [&](int p, uint32_t seed_ns, bool tail, uint64_t limit) {
            corun_ctl h = exp_ctl(sms, tasks, p * sms, p);
            h.task_limit = limit;
            h.nworkers = tail ? (uint32_t)(p * sms) : 1u;
            h.task_ns_seed = seed_ns;
            h.grid_x = grid.x;
            h.grid_y = grid.y;
            corun_worker_arg wa = {ctl, 0, seed_ns ? 1u : 0u, grid.x, grid.y, 1, (uint32_t)p};
            int w = n, hh = n;
            void *args[] = {&wa, &in, &out, &w, &hh};
            return median_ms(
                reps, [&] { CK(cudaMemcpy(ctl, &h, sizeof(h), cudaMemcpyHostToDevice)); },
                [&] { CK(cudaLaunchKernel((const void *)transpose__corun, dim3(p * sms), blk, args, 0, 0)); });
        };
        auto corun = [&](int p) { return corun_ex(p, 0, true, tasks); };
        printf("N=%d (%u tiles)\n", n, tasks);
        for (int round = 0; round < (only_corun ? 4 : 2); ++round) {
            const float p = median_ms(reps, none, [&] { transpose<<<grid, blk>>>(in, out, n, n); });
            if (only_corun) {
                const float c8 = corun(8), e = corun_ex(8, 0, true, 0);
                const float z = median_ms(reps, none, [&] { k_nop<<<8 * sms, blk>>>(); });
                printf("  round %d plain %.4f ms corun/8 %+5.1f %% | empty launch: corun/8 %.2f us, nop kernel %.2f us\n",
                       round, p, 100 * (c8 / p - 1), e * 1e3, z * 1e3);
                continue;
            }
            const float pb = median_ms(reps, none, [&] { k_plain<<<grid, blk>>>(in, out, n, n); });
            printf("  round %d plain %.4f ms (bare plain %+.1f)\n", round, p, 100 * (pb / p - 1));
            printf("    corun/P:");
            for (int q : {8, 7, 6}) {
                printf("  %d %+5.1f", q, 100 * (corun(q) / p - 1));
            }
            printf("\n");
            // The task time a worker sees: plain time over tasks per worker.
            const uint32_t seed = (uint32_t)(p * 1e6 / ((double)tasks / (8 * sms)));
            const float d8 = corun(8);
            printf("    corun/8 %+5.1f  no tail %+5.1f  seeded (%u ns) %+5.1f  both %+5.1f\n",
                   100 * (d8 / p - 1), 100 * (corun_ex(8, 0, false, tasks) / p - 1), seed,
                   100 * (corun_ex(8, seed, true, tasks) / p - 1),
                   100 * (corun_ex(8, seed, false, tasks) / p - 1));
            const float e = corun_ex(8, 0, true, 0);
            const float z = median_ms(reps, none, [&] { k_nop<<<8 * sms, blk>>>(); });
            printf("    empty launch: corun/8 %.1f us, nop kernel %.1f us\n", e * 1e3, z * 1e3);
            for (int C : {1, 3}) {
                printf("    pf%d/P:  ", C);
                for (int q : {8, 7, 6}) {
                    const float t = median_ms(reps, zero_ctr, [&] {
                        k_pf<false><<<q * sms, blk>>>(in, out, n, n, C, ctr);
                    });
                    printf("  %d %+5.1f", q, 100 * (t / pb - 1));
                }
                printf("   (against the bare plain)\n");
            }
            printf("    plainK: ");
            const int ks[3] = {8, 7, 6};
            for (int i = 0; i < 3; ++i) {
                const float t = median_ms(reps, none, [&] {
                    void *args[] = {&in, &out, (void *)&n, (void *)&n};
                    CK(cudaLaunchKernel(kds[i], grid, blk, args, dyn[i], 0));
                });
                printf("  %d %+5.1f", ks[i], 100 * (t / pb - 1));
            }
            printf("   (against the bare plain)\n");
        }
        CK(cudaFree(in));
        CK(cudaFree(out));
    }
    return 0;
}
