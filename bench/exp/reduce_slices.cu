// Experiment: why does the worker reduce take 0.45 ms in one run and 0.55 ms in
// another (overhead -15 % .. +5 % against a plain kernel of ~0.5 ms)? Its
// body ends with a 64-bit atomicAdd on one `sum` per block-task: 262,144 adds
// on one address in half a millisecond, near what one L2 slice does. The
// worker adds its own traffic on the control block (a claim on `next`, an add
// on `done` per chunk). Does the time depend on where the control block lies
// relative to `sum`? The control block is placed at 48 offsets (24 steps of
// 128 bytes, then 24 of 64 KiB) in one buffer; `sum` stays put. Median of 15
// launches each, corun's loop at budget 10, 8 workers per SM.
// (not built by default; nvcc -O3 -arch=sm_90 -I include -I gpu/check
//  bench/exp/reduce_slices.cu -lcuda)
#include "exp_util.cuh"
#include "kernels.cuh"
#include "transpose_tile.cuh"

int main()
{
    const int reps = 15, n = 1 << 28;
    int sms, per = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, reduce__corun, 256, 0));
    unsigned *in;
    unsigned long long *sum;
    char *pool;
    CK(cudaMalloc(&in, (size_t)n * 4));
    CK(cudaMemset(in, 1, (size_t)n * 4));
    CK(cudaMalloc(&sum, 8));
    const size_t pool_bytes = 24 * 65536 + 65536;
    CK(cudaMalloc(&pool, pool_bytes));
    const unsigned tasks = (n + 1023) / 1024;
    const int nw = per * sms;
    int nrep = reps;
    auto plain = [&] {
        return median_ms(nrep, [&] { CK(cudaMemset(sum, 0, 8)); },
                         [&] { reduce<<<tasks, 256>>>(in, sum, n); });
    };
    auto worker = [&](corun_ctl *ctl) {
        const corun_ctl h = exp_ctl(sms, tasks, nw, per);
        corun_worker_arg wa = {ctl, 0, 0, tasks, 1, 1, (uint32_t)per};
        int nn = n;
        void *args[] = {&wa, &in, &sum, &nn};
        return median_ms(
            nrep,
            [&] {
                CK(cudaMemcpy(ctl, &h, sizeof(h), cudaMemcpyHostToDevice));
                CK(cudaMemset(sum, 0, 8));
            },
            [&] { CK(cudaLaunchKernel((const void *)reduce__corun, dim3(nw), dim3(256), args, 0, 0)); });
    };
    printf("reduce, n = 2^28, %u tasks, %d workers (%d/SM)\n", tasks, nw, per);
    // What ran just before: each launch timed right after an untimed launch of
    // the plain kernel or of the worker (gpu-check's overhead mode alternates
    // plain and worker when it measures one budget, and runs the worker after
    // a worker when it measures several).
    {
        corun_ctl *ctl = (corun_ctl *)pool;
        auto prev_plain = [&] { reduce<<<tasks, 256>>>(in, sum, n); };
        auto prev_worker = [&] { worker(ctl); };
        nrep = 1;
        for (int round = 0; round < 3; ++round) {
            std::vector<double> pp, pw, wp, ww;
            for (int r = 0; r < 15; ++r) {
                prev_plain(); pp.push_back(plain());
                prev_worker(); pw.push_back(plain());
                prev_plain(); wp.push_back(worker(ctl));
                prev_worker(); ww.push_back(worker(ctl));
            }
            std::sort(pp.begin(), pp.end()); std::sort(pw.begin(), pw.end());
            std::sort(wp.begin(), wp.end()); std::sort(ww.begin(), ww.end());
            printf("after: plain->plain %.4f  worker->plain %.4f  plain->worker %.4f  worker->worker %.4f ms\n",
                   pp[7], pw[7], wp[7], ww[7]);
        }
        nrep = reps;
    }
    for (int round = 0; round < 2; ++round) {
        const float p = plain();
        printf("round %d plain %.4f ms\n  offset     worker ms   ovh %%\n", round, p);
        std::vector<double> w;
        for (int i = 0; i < 48; ++i) {
            const size_t off = i < 24 ? (size_t)i * 128 : (size_t)(i - 23) * 65536;
            const float t = worker((corun_ctl *)(pool + off));
            w.push_back(t);
            printf("  %8zu  %9.4f  %+6.1f\n", off, t, 100 * (t / p - 1));
        }
        std::sort(w.begin(), w.end());
        printf("  worker over the offsets: min %.4f median %.4f max %.4f ms; plain again %.4f\n",
               w.front(), w[w.size() / 2], w.back(), plain());
    }
    return 0;
}
