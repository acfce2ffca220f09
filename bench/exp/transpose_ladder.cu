// Experiment: from the bare persistent transpose (one tile per claim, the
// claim's latency hidden: ~+2 % over the plain kernel) towards a loop that
// keeps corun's promises, one piece at a time, to see which piece costs what.
// (not built by default; nvcc -O3 -arch=sm_90 -I include -I gpu/check
//  bench/exp/transpose_ladder.cu -lcuda)
//
// Every loop claims one tile at a time from a corun_ctl's `next`, the next
// claim's atomicAdd issued before the current tile runs:
//   la0   nothing else (transpose_tile.cuh's pf1, on the control block)
//   las   + the signal and limit words loaded with the claim (two 16-byte
//         volatile loads, checked after the tile as corun's claim checks them)
//   lasd  las + an atomicAdd on `done` after every tile
//   lasb  las + `done` added every 4 tiles (and at the end)
//   lasbc lasb running gpu-check's transpose body (bounds-checked, virtual
//         blockIdx/gridDim) instead of the bare tile
// and for reference the plain kernel, pf3 (chunks of 3, claim hidden),
// gpu-check's transpose__corun (corun's loop, budget 10 us) and corunu (corun's
// loop around the bare tile; build with a loop variant's flag, e.g.
// -DCORUN_AB_LA2=1, to compare loops). N x N floats,
// % against the plain kernel of the same round (corun and lasbc also against
// gpu-check's plain transpose, "vs cp"), medians of 15, each launch
// right after an untimed launch of its own form; outputs checked bitwise.
// (A loop that leaves on a signal here drops its looked-ahead tile: it
// measures cost only. A real one would decide the next claim on the signals
// loaded one tile earlier.)
#include "exp_util.cuh"
#include "kernels.cuh"
#include "transpose_tile.cuh"
#include "transpose_la.cuh"

// corun's loop around the bare tile (no bounds checks), against the plain
// kernel; "corun" runs gpu-check's bounds-checked body.
CORUN_BODY(ttile, (const float *in, float *out, int w, int h))
{
    __shared__ float tile[32][33];
    tile_body(in, out, w, h, blockIdx.x, blockIdx.y, tile);
}
CORUN_KERNELS_EX(ttile, (const float *in, float *out, int w, int h), (in, out, w, h), CORUN_SHARED,
                 __launch_bounds__(256, 8))

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 4;
    int sms, per = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, transpose__corun, 256, 0));
    const void *las[5] = {(const void *)k_la<0, 0>, (const void *)k_la<1, 0>, (const void *)k_la<1, 1>,
                          (const void *)k_la<1, 2>, (const void *)k_la<1, 2, 1>};
    const char *names[5] = {"la0", "las", "lasd", "lasb", "lasbc"};
    for (int i = 0; i < 5; ++i) {
        int got = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, las[i], 256, 0));
        printf("%s: %d blocks/SM\n", names[i], got);
    }
    corun_ctl *ctl;
    unsigned *ctr;
    CK(cudaMalloc(&ctl, sizeof(corun_ctl)));
    CK(cudaMalloc(&ctr, 4));
    for (int n : {8192, 16384}) {
        const int nw = per * sms;
        const ExpTranspose t(n, sms, nw, per);
        const size_t bytes = t.bytes;
        float *in = t.in, *out = t.out, *ref = t.ref;
        const dim3 grid = t.grid, blk = t.blk;
        const unsigned tasks = t.tasks;
        const corun_ctl h = t.h;
        corun_worker_arg wa = {ctl, 0, 0, grid.x, grid.y, 1, (uint32_t)per};
        int w = n, hh = n;
        auto none = [] {};
        auto reset = [&] { CK(cudaMemcpy(ctl, &h, sizeof(h), cudaMemcpyHostToDevice)); };
        auto zero = [&] { CK(cudaMemset(ctr, 0, 4)); };
        auto plain = [&] { k_plain<<<grid, blk>>>(in, out, n, n); };
        auto cplain = [&] { transpose<<<grid, blk>>>(in, out, n, n); };
        auto corun = [&] {
            void *args[] = {&wa, &in, &out, &w, &hh};
            CK(cudaLaunchKernel((const void *)transpose__corun, dim3(nw), blk, args, 0, 0));
        };
        auto corunu = [&] {
            void *args[] = {&wa, &in, &out, &w, &hh};
            CK(cudaLaunchKernel((const void *)ttile__corun, dim3(nw), blk, args, 0, 0));
        };
        auto pf = [&](int C) { return [&, C] { k_pf<false><<<nw, blk>>>(in, out, n, n, C, ctr); }; };
        auto la = [&](int i) {
            return [&, i] {
                void *args[] = {&in, &out, &w, &hh, &ctl};
                CK(cudaLaunchKernel(las[i], dim3(nw), blk, args, 0, 0));
            };
        };
        // Outputs against the plain kernel's.
        k_plain<<<grid, blk>>>(in, ref, n, n);
        std::vector<char> want(bytes);
        CK(cudaMemcpy(want.data(), ref, bytes, cudaMemcpyDeviceToHost));
        bool ok = true;
        auto check = [&](const char *name, auto prep, auto run) {
            char what[64];
            snprintf(what, sizeof(what), "N=%d %s", n, name);
            ok = exp_same_output(what, out, want, prep, run) && ok;
        };
        check("corun", reset, corun);
        check("corunu", reset, corunu);
        check("pf1", zero, pf(1));
        check("pf3", zero, pf(3));
        for (int i = 0; i < 5; ++i) check(names[i], reset, la(i));
        if (!ok) return 1;
        printf("N=%d (%u tiles, %d workers): outputs equal; %% against plain\n", n, tasks, nw);
        printf("  round   plain ms    corun     pf1     pf3     la0     las    lasd    lasb   lasbc | cplain vs p  corun vs cp  lasbc vs cp | corunu\n");
        for (int r = 0; r < rounds; ++r) {
            const float p = median_after_ms(15, none, plain);
            float t[8];
            t[0] = median_after_ms(15, reset, corun);
            t[1] = median_after_ms(15, zero, pf(1));
            t[2] = median_after_ms(15, zero, pf(3));
            for (int i = 0; i < 5; ++i) t[3 + i] = median_after_ms(15, reset, la(i));
            const float cp = median_after_ms(15, none, cplain);
            const float cu = median_after_ms(15, reset, corunu);
            printf("  %5d  %8.4f", r, p);
            for (float x : t) printf("  %+6.2f", 100 * (x / p - 1));
            printf(" |     %+6.2f       %+6.2f       %+6.2f | %+6.2f\n", 100 * (cp / p - 1), 100 * (t[0] / cp - 1),
                   100 * (t[7] / cp - 1), 100 * (cu / p - 1));
        }
    }
    return 0;
}
