// Experiment: does the order in which a worker's chunk walks the grid cost
// the memory-bound transpose its extra few percent? Built once per order of
// the loop, run interleaved: with bench/exp/column-band.patch applied (on
// 9a889f6), -DCORUN_AB_BAND=H makes a chunk's consecutive tasks go down a
// column of H tile rows, then to the next column; without it they go along a
// row, as the hardware's block order does. Without the patch the flag does
// nothing. Result: bench/results/h100-2026-11-22-column-band.txt (dropped).
// (not built by default; nvcc -O3 -arch=sm_90 -I include -I gpu/check
//  [-DCORUN_AB_BAND=H] bench/exp/transpose_band.cu -lcuda)
//
// Prints, for N x N floats (N = 8192, 16384), four rounds of: the plain
// kernel's median of 15 and corun's loop (budget 10 us, 8 workers per SM)
// against it; first checks the worker's output against the plain kernel's,
// bitwise, for N = 8192 and for N = 8352 (261 tile rows: a partial band).
#include "exp_util.cuh"
#include "kernels.cuh"

// Median of reps timed launches, each right after an untimed launch of the
// same form and a synchronisation; prep (the control block's reset) is not timed.
int main()
{
#if defined(CORUN_AB_BAND)
    printf("band %d\n", CORUN_AB_BAND);
#else
    printf("band off\n");
#endif
    int sms, per = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, transpose__corun, 256, 0));
    corun_ctl *ctl;
    CK(cudaMalloc(&ctl, sizeof(corun_ctl)));
    for (int n : {8352, 8192, 16384}) {
        const ExpTranspose t(n, sms, per * sms, per);
        const size_t bytes = t.bytes;
        float *in = t.in, *out = t.out, *ref = t.ref;
        const dim3 grid = t.grid, blk = t.blk;
        const unsigned tasks = t.tasks;
        const corun_ctl h = t.h;
        corun_worker_arg wa = {ctl, 0, 0, grid.x, grid.y, 1, (uint32_t)per};
        int w = n, hh = n;
        void *args[] = {&wa, &in, &out, &w, &hh};
        auto plain = [&] { transpose<<<grid, blk>>>(in, out, n, n); };
        auto none = [] {};
        auto reset = [&] { CK(cudaMemcpy(ctl, &h, sizeof(h), cudaMemcpyHostToDevice)); };
        auto corun = [&] {
            CK(cudaLaunchKernel((const void *)transpose__corun, dim3(per * sms), blk, args, 0, 0));
        };
        transpose<<<grid, blk>>>(in, ref, n, n);
        CK(cudaMemset(out, 0xff, bytes));
        reset();
        corun();
        CK(cudaDeviceSynchronize());
        std::vector<float> a((size_t)n * n), b((size_t)n * n);
        CK(cudaMemcpy(a.data(), ref, bytes, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), out, bytes, cudaMemcpyDeviceToHost));
        const bool same = !memcmp(a.data(), b.data(), bytes);
        printf("N=%d (%u tiles, %d workers): output %s\n", n, tasks, per * sms, same ? "equal" : "DIFFERS");
        if (!same) {
            return 1;
        }
        if (n == 8352) {
            continue;
        }
        for (int round = 0; round < 4; ++round) {
            const float p = median_after_ms(15, none, plain);
            const float c = median_after_ms(15, reset, corun);
            printf("  round %d plain %.4f ms corun/8 %+5.2f %%\n", round, p, 100 * (c / p - 1));
        }
    }
    return 0;
}
