/*
 * path.cu — gpu-check's modes of the stream-ordered launch path
 * (corun_launch_stream, what every transformed <<<>>> calls):
 *
 *   chain     10,000 dependent launches of a kernel of 2, 5, 20 and 100 us on
 *             every SM (FMA work; lane 0 of each warp on the clock; every
 *             thread on the clock, the issue's probe): the time per launch
 *             natively, through corun (short and one-wave kernels then run
 *             plain), and through corun's workers always
 *   hostcost  host time of one launch call: cuLaunchKernel vs corun
 *   lsalone   an LS kernel alone: through corun vs native (events)
 *   queued    a job preempted while later kernels of its stream wait behind
 *             it: they wait, then run, outputs equal
 *   threads   4 host threads launching on 4 streams at once
 *   capture   a launch in a stream that captures a graph: refused by
 *             corun_launch_stream, run plain by the shim, the replayed graph
 *             right
 */
#include <algorithm>
#include <chrono>
#include <atomic>
#include <cstring>
#include <vector>
#include <thread>

#include <cuda_runtime.h>

#include "check.h"
#include "corun/corun_launch.cuh"
#include "corun/corun_sim.h"

/* c = a + b (the kernels of this file are its own: kernels.cuh is check.cu's) */
CORUN_BODY(add2, (const float *a, const float *b, float *c, int n))
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
CORUN_KERNELS(add2, (const float *a, const float *b, float *c, int n), (a, b, c, n), CORUN_PLAIN)

/* Three device vectors of n floats, a and b filled. */
struct Vecs {
    float *a = nullptr, *b = nullptr, *c = nullptr;
    int n;
    dim3 grid;
    std::vector<float> ha, hb;
    explicit Vecs(int count) : n(count), grid((count + 255) / 256), ha(count), hb(count)
    {
        uint32_t x = 12345;
        for (int i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            ha[i] = (float)(x >> 8) / 16777216.0f - 0.5f;
            x = x * 1664525u + 1013904223u;
            hb[i] = (float)(x >> 20);
        }
        CK(cudaMalloc(&a, (size_t)n * 4));
        CK(cudaMalloc(&b, (size_t)n * 4));
        CK(cudaMalloc(&c, (size_t)n * 4));
        CK(cudaMemcpy(a, ha.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(b, hb.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    }
    ~Vecs()
    {
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
    }
};

/* Spins ns on the GPU's clock. */
static __device__ __forceinline__ void spin_ns(unsigned long long ns)
{
    const unsigned long long t0 = corun_globaltimer();
    while (corun_globaltimer() - t0 < ns) {
    }
}

/* One block-task of ns on every block: lane 0 of each warp watches the
 * clock (every thread polling %globaltimer slows the others' reads). */
CORUN_BODY(tick, (unsigned long long ns, unsigned *out))
{
    if ((threadIdx.x & 31) == 0) {
        spin_ns(ns);
    }
    __syncwarp();
    if (threadIdx.x == 0) {
        out[blockIdx.x] += 1;
    }
}
CORUN_KERNELS(tick, (unsigned long long ns, unsigned *out), (ns, out), CORUN_PLAIN)

/* The issue's probe kernel (../shared/probes/launch_chain.cu): every thread
 * spins ns on the clock; then one count per block-task, as tick. */
CORUN_BODY(tickall, (unsigned long long ns, unsigned *out))
{
    spin_ns(ns);
    __syncthreads();
    if (threadIdx.x == 0) {
        out[blockIdx.x] += 1;
    }
}
CORUN_KERNELS(tickall, (unsigned long long ns, unsigned *out), (ns, out), CORUN_PLAIN)

/* While alive, prints what the contexts are doing every 10 s: a mode that
 * hangs leaves in its log where it stood. */
struct Watch {
    std::vector<corun_ctx *> ctxs;
    std::atomic<bool> stop{false};
    std::thread th;
    explicit Watch(std::vector<corun_ctx *> c) : ctxs(std::move(c))
    {
        th = std::thread([this] {
            for (int t = 1; !stop.load(); t++) {
                for (int i = 0; i < 100 && !stop.load(); i++) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                }
                if (stop.load()) {
                    break;
                }
                for (corun_ctx *c : ctxs) {
                    char line[512];
                    corun_ctx_describe(c, line, sizeof(line));
                    printf("[still running after %d s] %s\n", 10 * t, line);
                }
            }
        });
    }
    ~Watch()
    {
        stop = true;
        th.join();
    }
};

/* Work that takes a known time without the clock: a dependent FMA chain of
 * `iters` per thread (polling %globaltimer from every warp of the GPU slows
 * the reads themselves, which a spin then turns into longer tasks). */
CORUN_BODY(burn, (unsigned iters, float *out))
{
    float x = (float)threadIdx.x * 1e-3f, y = 1.0000001f;
    for (unsigned i = 0; i < iters; i++) {
        x = fmaf(x, y, 1e-7f);
    }
    if (x == 12345.0f) {
        out[blockIdx.x] = x;
    }
}
CORUN_KERNELS(burn, (unsigned iters, float *out), (iters, out), CORUN_PLAIN)

/* A context with the CORUN_* settings, both plain lines (plain_below_us,
 * plain_batch_below_us) overridden when >= 0; at 0 every launch runs as
 * workers, one-wave ones too (plain_one_wave=0). */
static corun_ctx *make_ctx(const char *policy, double plain_below_us)
{
    corun_ctx_opts o = {"cuda", policy};
    corun_ctx *ctx;
    char v[48], vb[64], vw[32];
    const char *over[] = {v, vb, vw, nullptr};

    snprintf(v, sizeof(v), "plain_below_us=%g", plain_below_us);
    snprintf(vb, sizeof(vb), "plain_batch_below_us=%g", plain_below_us);
    snprintf(vw, sizeof(vw), "plain_one_wave=%d", plain_below_us > 0 ? 1 : 0);
    CR(corun_test_ctx_create(&o, plain_below_us >= 0 ? over : nullptr, &ctx));
    return ctx;
}

static corun_kernel *get_kernel(corun_ctx *ctx, const char *name, const void *plain,
                                const void *worker)
{
    cudaFunction_t fp, fw;
    corun_kernel_desc d;
    corun_kernel *k;

    CK(cudaGetFuncBySymbol(&fp, plain));
    CK(cudaGetFuncBySymbol(&fw, worker));
    memset(&d, 0, sizeof(d));
    d.name = name;
    d.plain = (void *)fp;
    d.worker = (void *)fw;
    CR(corun_kernel_get(ctx, &d, &k));
    return k;
}

/* ---- chain ------------------------------------------------------------------ */

/* us per launch of n dependent launches on s: variant 0 native, else through
 * ctx (fire and forget, as a transformed program launches). */
static double chain_once(int variant, corun_ctx *ctx, corun_kernel *k, const void *plain, int n,
                         void **args, unsigned grid, cudaStream_t s)
{
    double t0 = now_us();

    for (int i = 0; i < n; i++) {
        if (variant == 0) {
            CK(cudaLaunchKernel(plain, dim3(grid), dim3(256), args, 0, s));
        } else {
            CR(corun_launch_stream(ctx, k, {grid, 1, 1}, {256, 1, 1}, 0, args, nullptr,
                                   (void *)s, nullptr));
        }
    }
    CK(cudaStreamSynchronize(s));
    return (now_us() - t0) / n;
}

/* us of one native launch of burn with iters, on grid blocks (best of 5). */
static double burn_us(unsigned iters, float *out, unsigned grid, cudaStream_t s)
{
    cudaEvent_t e0, e1;
    float best = 1e30f;
    void *args[] = {&iters, &out};

    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = 0; r < 6; r++) {
        float ms;
        CK(cudaEventRecord(e0, s));
        CK(cudaLaunchKernel((const void *)burn, dim3(grid), dim3(256), args, 0, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0 && ms < best) {
            best = ms;
        }
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return best * 1e3;
}

/* One table of the chain for kernel (plain, k in dflt / kw in workers):
 * args_for(us) gives the launch's arguments for a task of us. */
template <typename Args>
static int chain_table(const char *kernel, const void *plain, corun_ctx *dflt, corun_kernel *kd,
                       corun_ctx *workers, corun_kernel *kw, unsigned grid, int launches,
                       int rounds, cudaStream_t s, Args args_for)
{
    const double sizes[] = {2, 5, 20, 100};

    printf("%s: %d dependent launches per run, %u blocks of 256 (one wave), medians of %d runs\n",
           kernel, launches, grid, rounds);
    printf("%-8s %10s %10s %10s %10s %10s %8s %8s\n", "task_us", "native", "corun", "+us",
           "workers", "+us", "plain", "w-plain");
    for (double us : sizes) {
        std::vector<double> t[3];
        void **args = args_for(us);
        uint64_t plain0 = corun_ctx_plain_launches(dflt);
        uint64_t wplain0 = corun_ctx_plain_launches(workers);
        for (int r = 0; r <= rounds; r++) {
            for (int v = 0; v < 3; v++) {
                double x = chain_once(v, v == 1 ? dflt : workers, v == 1 ? kd : kw, plain,
                                      launches, args, grid, s);
                fprintf(stderr, "chain %s %g us round %d variant %d: %.2f us per launch\n", kernel,
                        us, r, v, x);
                if (r > 0) { /* the first round warms up (and teaches corun the task time) */
                    t[v].push_back(x);
                }
            }
        }
        uint64_t plain = corun_ctx_plain_launches(dflt) - plain0;
        uint64_t wplain = corun_ctx_plain_launches(workers) - wplain0;
        double n0 = median(t[0]), n1 = median(t[1]), n2 = median(t[2]);
        printf("%-8.0f %10.2f %10.2f %+10.2f %10.2f %+10.2f %8llu %8llu\n", us, n0, n1, n1 - n0,
               n2, n2 - n0, (unsigned long long)plain, (unsigned long long)wplain);
        jrec("{\"mode\":\"chain\",\"kernel\":\"%s\",\"task_us\":%.0f,\"launches\":%d,"
             "\"runs\":%d,\"native_us\":%.3f,\"corun_us\":%.3f,\"corun_added_us\":%.3f,"
             "\"workers_us\":%.3f,\"workers_added_us\":%.3f,\"corun_plain_launches\":%llu,"
             "\"workers_plain_launches\":%llu}",
             kernel, us, launches, rounds, n0, n1, n1 - n0, n2, n2 - n0,
             (unsigned long long)plain, (unsigned long long)wplain);
    }
    return 0;
}

int mode_chain(int launches, int rounds)
{
    const unsigned grid = (unsigned)(sm_count() * per_sm_of((const void *)tick, 256, 0));
    corun_ctx *dflt = make_ctx("smguard", -1), *workers = make_ctx("smguard", 0);
    corun_kernel *kd = get_kernel(dflt, "burn", (const void *)burn, (const void *)burn__corun);
    corun_kernel *kw = get_kernel(workers, "burn", (const void *)burn, (const void *)burn__corun);
    corun_kernel *td = get_kernel(dflt, "tick", (const void *)tick, (const void *)tick__corun);
    corun_kernel *tw = get_kernel(workers, "tick", (const void *)tick, (const void *)tick__corun);
    corun_kernel *ad = get_kernel(dflt, "tickall", (const void *)tickall,
                                  (const void *)tickall__corun);
    corun_kernel *aw = get_kernel(workers, "tickall", (const void *)tickall,
                                  (const void *)tickall__corun);
    unsigned *out;
    float *fout;
    cudaStream_t s;
    int failures = 0;

    CK(cudaMalloc(&out, grid * sizeof(unsigned)));
    CK(cudaMalloc(&fout, grid * sizeof(float)));
    CK(cudaMemset(out, 0, grid * sizeof(unsigned)));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Watch watch({dflt, workers});
    /* burn's iterations per us: two native timings, their slope */
    const double t1 = burn_us(20000, fout, grid, s), t2 = burn_us(220000, fout, grid, s);
    const double per_us = 200000.0 / (t2 - t1), base_us = t1 - 20000.0 / per_us;
    printf("burn: %.1f iterations per us, %.2f us with none\n", per_us, base_us);
    static unsigned iters;
    static float *fo;
    fo = fout;
    static void *bargs[] = {&iters, &fo};
    failures += chain_table("burn", (const void *)burn, dflt, kd, workers, kw, grid, launches,
                            rounds, s, [&](double us) {
                                iters = (unsigned)(us * per_us);
                                return bargs;
                            });
    static unsigned long long ns;
    static unsigned *o;
    o = out;
    static void *targs[] = {&ns, &o};
    failures += chain_table("spin", (const void *)tick, dflt, td, workers, tw, grid, launches,
                            rounds, s, [&](double us) {
                                ns = (unsigned long long)(us * 1e3);
                                return targs;
                            });
    failures += chain_table("spinall", (const void *)tickall, dflt, ad, workers, aw, grid,
                            launches, rounds, s, [&](double us) {
                                ns = (unsigned long long)(us * 1e3);
                                return targs;
                            });
    /* every spin launch ran every block once */
    std::vector<unsigned> h(grid);
    CK(cudaMemcpy(h.data(), out, grid * sizeof(unsigned), cudaMemcpyDeviceToHost));
    const unsigned want = (unsigned)(2 * 4 * (rounds + 1) * 3 * launches);
    for (unsigned i = 0; i < grid; i++) {
        failures += h[i] != want;
    }
    printf("chain: %s (every block-task of every spin launch ran once: %u each)\n",
           failures ? "FAIL" : "ok", want);
    CK(cudaFree(out));
    CK(cudaFree(fout));
    corun_ctx_destroy(dflt);
    corun_ctx_destroy(workers);
    return failures;
}

/* ---- hostcost ----------------------------------------------------------------- */

int mode_hostcost(int rounds)
{
    const unsigned grid = (unsigned)sm_count();
    corun_ctx *dflt = make_ctx("smguard", -1), *workers = make_ctx("smguard", 0);
    corun_kernel *kd = get_kernel(dflt, "tick", (const void *)tick, (const void *)tick__corun);
    corun_kernel *kw = get_kernel(workers, "tick", (const void *)tick, (const void *)tick__corun);
    const char *names[] = {"cuLaunchKernel", "corun_launch_stream (workers)",
                           "corun_launch_stream (plain)"};
    /* each 1 ms: the GPU never catches up within a batch; batches of 50 keep
     * the stream's queue short, so that no call waits for room in it (200
     * queued worker launches, each with its stream operations, made calls
     * block and the median move by microseconds between runs) */
    unsigned long long ns = 1000000;
    cudaFunction_t fn;
    unsigned *out;
    cudaStream_t s;
    std::vector<double> per[3];

    CK(cudaGetFuncBySymbol(&fn, (const void *)tick));
    CK(cudaMalloc(&out, grid * sizeof(unsigned)));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *args[] = {&ns, &out};
    /* teach the default context that tick is short, so it runs it plain */
    unsigned long long short_ns = 1000;
    void *sargs[] = {&short_ns, &out};
    for (int i = 0; i < 4; i++) {
        CR(corun_launch_stream(dflt, kd, {grid, 1, 1}, {256, 1, 1}, 0, sargs, nullptr, (void *)s,
                               nullptr));
        CK(cudaStreamSynchronize(s));
        sleep_us(2000);
    }
    for (int r = 0; r < rounds; r++) {
        for (int v = 0; v < 3; v++) {
            for (int i = 0; i < 200; i++) {
                if (i > 0 && i % 50 == 0) {
                    CK(cudaStreamSynchronize(s));
                }
                double t0 = now_us();
                if (v == 0) {
                    CU(cuLaunchKernel((CUfunction)fn, grid, 1, 1, 256, 1, 1, 0, (CUstream)s, args,
                                      nullptr));
                } else {
                    CR(corun_launch_stream(v == 1 ? workers : dflt, v == 1 ? kw : kd,
                                           {grid, 1, 1}, {256, 1, 1}, 0, v == 1 ? args : sargs,
                                           nullptr, (void *)s, nullptr));
                }
                per[v].push_back(now_us() - t0);
            }
            CK(cudaStreamSynchronize(s));
        }
    }
    printf("host time of one launch call, %d calls each (us): median, p90\n", rounds * 200);
    for (int v = 0; v < 3; v++) {
        printf("%-32s %8.2f %8.2f\n", names[v], median(per[v]), pct(per[v], 90));
    }
    double ratio = median(per[1]) / median(per[0]);
    printf("corun workers / cuLaunchKernel: %.2fx (target <= 2x)\n", ratio);
    jrec("{\"mode\":\"hostcost\",\"calls\":%d,\"cuLaunchKernel_us\":%.3f,\"corun_workers_us\":%.3f,"
         "\"corun_plain_us\":%.3f,\"ratio\":%.3f}",
         rounds * 200, median(per[0]), median(per[1]), median(per[2]), ratio);
    CK(cudaFree(out));
    corun_ctx_destroy(dflt);
    corun_ctx_destroy(workers);
    return 0;
}

/* ---- lsalone ------------------------------------------------------------------ */

int mode_lsalone(int trials)
{
    const unsigned grid = (unsigned)sm_count();
    corun_ctx *ctx = make_ctx("smguard", -1);
    corun_kernel *k = get_kernel(ctx, "tick", (const void *)tick, (const void *)tick__corun);
    unsigned long long ns = 100000; /* 132 blocks x 100 us: the LS anchor of docs */
    corun_launch_attr a;
    cudaEvent_t e0, e1;
    unsigned *out;
    cudaStream_t s;
    std::vector<double> t[2];

    memset(&a, 0, sizeof(a));
    a.cls = CORUN_CLASS_LS;
    CK(cudaMalloc(&out, grid * sizeof(unsigned)));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    void *args[] = {&ns, &out};
    for (int i = 0; i <= trials; i++) {
        for (int v = 0; v < 2; v++) {
            float ms;
            CK(cudaEventRecord(e0, s));
            if (v == 0) {
                CK(cudaLaunchKernel((const void *)tick, dim3(grid), dim3(256), args, 0, s));
            } else {
                CR(corun_launch_stream(ctx, k, {grid, 1, 1}, {256, 1, 1}, 0, args, &a, (void *)s,
                                       nullptr));
            }
            CK(cudaEventRecord(e1, s));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (i > 0) {
                t[v].push_back(ms * 1e3);
            }
            sleep_us(300); /* the scheduler takes in the launch; no queue builds up */
        }
    }
    double r = median(t[1]) / median(t[0]);
    printf("LS kernel alone (%u blocks x 100 us), %d trials: native %.1f us, corun %.1f us "
           "(p90 %.1f / %.1f): %.3fx (target <= 1.05x)\n",
           grid, trials, median(t[0]), median(t[1]), pct(t[0], 90), pct(t[1], 90), r);
    jrec("{\"mode\":\"lsalone\",\"trials\":%d,\"native_us\":%.2f,\"corun_us\":%.2f,"
         "\"native_p90_us\":%.2f,\"corun_p90_us\":%.2f,\"ratio\":%.4f}",
         trials, median(t[0]), median(t[1]), pct(t[0], 90), pct(t[1], 90), r);
    CK(cudaFree(out));
    corun_ctx_destroy(ctx);
    return 0;
}

/* ---- queued ------------------------------------------------------------------- */

/* d[i] = c[i] * 2: reads what add2 wrote. */
CORUN_BODY(twice, (const float *c, float *d, int n))
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        d[i] = c[i] * 2.0f;
    }
}
CORUN_KERNELS(twice, (const float *c, float *d, int n), (c, d, n), CORUN_PLAIN)

int mode_queued(int reps)
{
    corun_ctx *ctx = make_ctx("manual", 0);
    corun_kernel *kv = get_kernel(ctx, "add2", (const void *)add2, (const void *)add2__corun);
    corun_kernel *kt = get_kernel(ctx, "twice", (const void *)twice, (const void *)twice__corun);
    Vecs c(1 << 26);
    cudaStream_t s, side;
    int failures = 0;

    size_t n = (size_t)c.n;
    float *d, *copy;
    CK(cudaMalloc(&d, n * 4));
    CK(cudaMalloc(&copy, n * 4));
    std::vector<float> &ha = c.ha, &hb = c.hb, hd(n);
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    printf("%-4s %8s %8s %10s %12s %s\n", "rep", "capsm", "halts", "done@halt", "behind_ran",
           "result");
    Watch watch({ctx});
    for (int r = 0; r < reps; r++) {
        corun_launch_attr a;
        corun_job *j;
        corun_progress p;
        int halts = 1 + r % 3, behind_ran = 0;
        memset(&a, 0, sizeof(a));
        a.capsm = 1 + r % 3; /* few CapSMs: it runs for milliseconds */
        CK(cudaMemset(c.c, 0xff, n * 4));
        CK(cudaMemset(d, 0xff, n * 4));
        CK(cudaMemset(copy, 0xff, n * 4));
        CK(cudaDeviceSynchronize());
        void *va[] = {&c.a, &c.b, &c.c, &c.n};
        void *ta[] = {&c.c, &d, &c.n};
        unsigned tg = (unsigned)((n + 255) / 256);
        CR(corun_launch_stream(ctx, kv, {c.grid.x, 1, 1}, {256, 1, 1}, 0, va, &a, (void *)s,
                               &j));
        CR(corun_launch_stream(ctx, kt, {tg, 1, 1}, {256, 1, 1}, 0, ta, nullptr, (void *)s,
                               nullptr));
        CK(cudaMemcpyAsync(copy, d, n * 4, cudaMemcpyDeviceToDevice, s));
        uint64_t at = 0;
        for (int h = 0; h < halts; h++) {
            sleep_us(300 + 200 * (r % 4));
            if (corun_job_preempt(j) != CORUN_OK) {
                break; /* finished already */
            }
            /* while it is paused, what is behind it in the stream waits */
            sleep_us(2000);
            CR(corun_job_progress(j, &p));
            at = p.done;
            float probe = 0;
            CK(cudaMemcpyAsync(&probe, copy, 4, cudaMemcpyDeviceToHost, side));
            CK(cudaStreamSynchronize(side));
            unsigned bits;
            memcpy(&bits, &probe, 4);
            if (p.done < p.tasks && bits != 0xffffffffu) {
                behind_ran++;
            }
            if (corun_job_resume(j, 0) != CORUN_OK) {
                break;
            }
        }
        CR(corun_job_wait(j, 60000));
        corun_job_release(j);
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(hd.data(), copy, n * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            bad += hd[i] != (ha[i] + hb[i]) * 2.0f;
        }
        bool ok = bad == 0 && behind_ran == 0;
        failures += !ok;
        printf("%-4d %8u %8d %10llu %12d %s (%zu wrong)\n", r, a.capsm, halts,
               (unsigned long long)at, behind_ran, ok ? "ok" : "FAIL", bad);
    }
    jrec("{\"mode\":\"queued\",\"reps\":%d,\"failures\":%d}", reps, failures);
    CK(cudaFree(d));
    CK(cudaFree(copy));
    corun_ctx_destroy(ctx);
    return failures;
}

/* ---- threads ------------------------------------------------------------------ */

int mode_threads(int launches)
{
    corun_ctx *ctx = corun_default_ctx();
    std::atomic<int> failures{0};
    std::vector<std::thread> th;

    if (ctx == nullptr) {
        fprintf(stderr, "threads: %s\n", corun_last_error());
        return 1;
    }
    corun_kernel *k = get_kernel(ctx, "add2", (const void *)add2, (const void *)add2__corun);
    for (int t = 0; t < 4; t++) {
        th.emplace_back([&, t] {
            Vecs c(1 << 22);
            cudaStream_t s;
            size_t n = (size_t)c.n;
            CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            std::vector<float> &ha = c.ha, &hb = c.hb, hc(n);
            /* c = a + b, then a = c, again and again: the result needs every
             * launch in order */
            for (int i = 0; i < launches; i++) {
                void *args[] = {&c.a, &c.b, &c.c, &c.n};
                CR(corun_launch_stream(ctx, k, {c.grid.x, 1, 1}, {256, 1, 1}, 0, args, nullptr,
                                       (void *)s, nullptr));
                CK(cudaMemcpyAsync(c.a, c.c, n * 4, cudaMemcpyDeviceToDevice, s));
            }
            CK(cudaStreamSynchronize(s));
            CK(cudaMemcpy(hc.data(), c.c, n * 4, cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                float x = ha[i];
                for (int l = 0; l < launches; l++) {
                    x = x + hb[i];
                }
                bad += hc[i] != x;
            }
            printf("thread %d: %d launches on its stream, %zu of %zu wrong\n", t, launches, bad,
                   n);
            failures += bad != 0;
            CK(cudaStreamDestroy(s));
        });
    }
    for (std::thread &x : th) {
        x.join();
    }
    jrec("{\"mode\":\"threads\",\"threads\":4,\"launches\":%d,\"failures\":%d}", launches,
         failures.load());
    return failures.load();
}

/* ---- capture ------------------------------------------------------------------ */

int mode_capture(void)
{
    corun_ctx *ctx = corun_default_ctx();
    corun_kernel *k;
    static corun::kernel_slot slot;
    Vecs c(1 << 22);
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    int failures = 0;

    if (ctx == nullptr) {
        fprintf(stderr, "capture: %s\n", corun_last_error());
        return 1;
    }
    k = get_kernel(ctx, "add2", (const void *)add2, (const void *)add2__corun);
    size_t n = (size_t)c.n;
    std::vector<float> &ha = c.ha, &hb = c.hb, hc(n);
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *args[] = {&c.a, &c.b, &c.c, &c.n};
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    int rc = corun_launch_stream(ctx, k, {c.grid.x, 1, 1}, {256, 1, 1}, 0, args, nullptr,
                                 (void *)s, nullptr);
    printf("corun_launch_stream while capturing: %s: %s\n", corun_status_name(rc),
           corun_last_error());
    failures += rc != CORUN_ENOTSUP;
    /* the shim runs it plain, captured into the graph */
    CK(corun::launch_ptrs(slot, corun::config(c.grid, dim3(256), 0, s), "add2",
                          (const void *)add2, (const void *)add2__corun, nullptr, nullptr, args));
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 3; r++) {
        CK(cudaMemset(c.c, 0xff, n * 4));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(hc.data(), c.c, n * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            bad += hc[i] != ha[i] + hb[i];
        }
        printf("graph replay %d: %zu of %zu wrong\n", r, bad, n);
        failures += bad != 0;
    }
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    jrec("{\"mode\":\"capture\",\"refused\":%d,\"failures\":%d}", rc == CORUN_ENOTSUP, failures);
    return failures;
}
