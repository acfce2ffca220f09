// Experiment: where the worker transpose's extra time goes, task by task.
// (not built by default; nvcc -O3 -arch=sm_90 -I include -I gpu/check
//  bench/exp/transpose_timeline.cu -lcuda; run as transpose_timeline [ROUNDS [BUDGET_US]]; build it again with a loop variant's
//  flag, e.g. -DCORUN_AB_LA=1, to compare loops)
//
// gpu-check's transpose body, 8192^2, run as the plain kernel and as corun's
// worker kernel (budget 10 us, the occupancy API's workers), with block thread 0
// recording the global timer at each task's start and end and the worker that
// ran it. From these: the span (first start to last end), how long the first
// tasks wait (ramp), task durations at the start, in the middle and at the end,
// the gap a worker leaves between two tasks (the loop's own time), and the
// tail (last end after 99 % of tasks have ended). Untraced kernels are timed
// with events in the same run; outputs are checked bitwise.
#include "exp_util.cuh"
#include "kernels.cuh"

__device__ unsigned long long *g_ts; // per task: start, end
__device__ unsigned *g_wk;           // per task: the block (worker) that ran it

__device__ __forceinline__ void traced(const float *in, float *out, int w, int h, uint3 b, dim3 g)
{
    const bool t0 = (threadIdx.x | threadIdx.y) == 0;
    unsigned long long s = 0;
    if (t0) s = corun_globaltimer();
    transpose__corun_body(in, out, w, h, b, g);
    if (t0) {
        const unsigned idx = b.x + b.y * g.x;
        g_ts[2 * idx] = s;
        g_ts[2 * idx + 1] = corun_globaltimer();
        g_wk[idx] = blockIdx.x;
    }
}

__global__ void plain_tr(const float *in, float *out, int w, int h) { traced(in, out, w, h, blockIdx, gridDim); }

__global__ void __launch_bounds__(256, 8) worker_tr(const corun_worker_arg wa, const float *in, float *out, int w, int h)
{
    corun_worker_loop<CORUN_SHARED>(wa, [&](const uint3 b, const dim3 g) { traced(in, out, w, h, b, g); });
}

static void report(const char *name, const std::vector<unsigned long long> &ts, const std::vector<unsigned> &wk, unsigned n)
{
    unsigned long long t0 = ~0ull, t1 = 0;
    for (unsigned i = 0; i < n; ++i) { t0 = std::min(t0, ts[2 * i]); t1 = std::max(t1, ts[2 * i + 1]); }
    std::vector<std::pair<double, double>> se(n); // start, end, us from t0
    for (unsigned i = 0; i < n; ++i) se[i] = {(ts[2 * i] - t0) / 1e3, (ts[2 * i + 1] - t0) / 1e3};
    std::vector<std::pair<double, double>> bys = se;
    std::sort(bys.begin(), bys.end());
    std::vector<double> ends(n);
    for (unsigned i = 0; i < n; ++i) ends[i] = se[i].second;
    std::sort(ends.begin(), ends.end());
    auto dur = [&](size_t a, size_t b) { std::vector<double> d; for (size_t i = a; i < b; ++i) d.push_back(bys[i].second - bys[i].first); return pct(d, 50); };
    // Gaps: per worker, tasks in start order, next start - previous end.
    std::vector<std::vector<std::pair<double, double>>> per(1 << 16);
    unsigned maxw = 0;
    for (unsigned i = 0; i < n; ++i) { per[wk[i]].push_back(se[i]); maxw = std::max(maxw, wk[i]); }
    std::vector<double> g_first, g_mid, g_last, firsts;
    for (unsigned w = 0; w <= maxw; ++w) {
        auto &v = per[w];
        if (v.empty()) continue;
        std::sort(v.begin(), v.end());
        firsts.push_back(v[0].first);
        for (size_t k = 1; k < v.size(); ++k) {
            const double g = v[k].first - v[k - 1].second;
            (k < 3 ? g_first : (k + 2 >= v.size() ? g_last : g_mid)).push_back(g);
        }
    }
    printf("%-8s span %7.1f us | first starts: median %5.2f max %5.2f us | task us: first 5%% %4.2f, middle %4.2f, last 5%% %4.2f |"
           " 99%% ended %6.1f, tail %4.1f us",
           name, (t1 - t0) / 1e3, pct(firsts, 50), pct(firsts, 100), dur(0, n / 20), dur(n / 10, n * 9 / 10), dur(n - n / 20, n),
           ends[(size_t)(0.99 * (n - 1))], ends[n - 1] - ends[(size_t)(0.99 * (n - 1))]);
    if (!g_mid.empty())
        printf(" | gap us: tasks 1-2 %4.2f, middle %4.2f (p90 %4.2f), last 2 %4.2f", pct(g_first, 50), pct(g_mid, 50), pct(g_mid, 90), pct(g_last, 50));
    printf("\n");
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 3;
    const unsigned budget_us = argc > 2 ? (unsigned)atoi(argv[2]) : 10;
    const int n = 8192;
    int sms, per = 0, per_tr = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, transpose__corun, 256, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_tr, worker_tr, 256, 0));
    const int nw = per * sms;
    ExpTranspose t(n, sms, nw, per);
    const size_t bytes = t.bytes;
    float *in = t.in, *out = t.out, *ref = t.ref;
    const dim3 grid = t.grid, blk = t.blk;
    const unsigned tasks = t.tasks;
    printf("transpose %d^2: %u tasks, %d workers (%d/SM; traced worker %d/SM), budget %u us\n", n, tasks, nw, per,
           per_tr, budget_us);
    unsigned long long *ts;
    unsigned *wk;
    corun_ctl *ctl;
    CK(cudaMalloc(&ts, tasks * 16ull));
    CK(cudaMalloc(&wk, tasks * 4ull));
    CK(cudaMalloc(&ctl, sizeof(corun_ctl)));
    CK(cudaMemcpyToSymbol(g_ts, &ts, sizeof(ts)));
    CK(cudaMemcpyToSymbol(g_wk, &wk, sizeof(wk)));
    corun_ctl h = t.h;
    h.budget_ns = budget_us * 1000;
    corun_worker_arg wa = {ctl, 0, 0, grid.x, grid.y, 1, (uint32_t)per};
    int w = n, hh = n;
    auto reset = [&] { CK(cudaMemcpy(ctl, &h, sizeof(h), cudaMemcpyHostToDevice)); };
    auto none = [] {};
    void *args[] = {&wa, &in, &out, &w, &hh};
    auto plain = [&] { transpose<<<grid, blk>>>(in, out, n, n); };
    auto corun = [&] { CK(cudaLaunchKernel((const void *)transpose__corun, dim3(nw), blk, args, 0, 0)); };
    auto plain_t = [&] { plain_tr<<<grid, blk>>>(in, out, n, n); };
    auto corun_t = [&] { CK(cudaLaunchKernel((const void *)worker_tr, dim3(nw), blk, args, 0, 0)); };
    transpose<<<grid, blk>>>(in, ref, n, n);
    std::vector<char> want(bytes);
    CK(cudaMemcpy(want.data(), ref, bytes, cudaMemcpyDeviceToHost));
    if (!exp_same_output("corun", out, want, reset, corun) || !exp_same_output("plain_tr", out, want, none, plain_t) ||
        !exp_same_output("corun_tr", out, want, reset, corun_t))
        return 1;
    std::vector<unsigned long long> hts(2 * tasks);
    std::vector<unsigned> hwk(tasks);
    for (int r = 0; r < rounds; ++r) {
        const float p = median_after_ms(15, none, plain), c = median_after_ms(15, reset, corun);
        const float pt = median_after_ms(15, none, plain_t), ct = median_after_ms(15, reset, corun_t);
        printf("round %d: plain %.4f ms, corun %+.2f %%; traced: plain %.4f ms, corun %+.2f %%\n", r, p, 100 * (c / p - 1), pt,
               100 * (ct / pt - 1));
        for (int k = 0; k < 2; ++k) {
            if (k == 0) { plain_t(); CK(cudaDeviceSynchronize()); plain_t(); }
            else { reset(); corun_t(); CK(cudaDeviceSynchronize()); reset(); corun_t(); }
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hts.data(), ts, tasks * 16ull, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hwk.data(), wk, tasks * 4ull, cudaMemcpyDeviceToHost));
            report(k == 0 ? "plain" : "corun", hts, hwk, tasks);
        }
    }
    return 0;
}
