// Experiment: do gpu-check's spin tasks last what they are told? The resume
// benchmark's spin (1,056 workers x 400 tasks of 50 us, ~20 ms by design)
// takes ~30.5 ms, and halts of long-task spins take about a task more than
// expected. (not built by default;
// nvcc -O3 -arch=sm_90 -I include -I gpu/check bench/exp/spin_rate.cu -lcuda)
// For task times 2, 20, 50 us: plain spin (a grid of 400 waves) and the
// worker spin (1,056 workers), elapsed per task wave, and on the GPU clock
// the mean task length each warp sees (lane 0 of every warp adds its own).
#include "exp_util.cuh"
#include "kernels.cuh"

// spin's body, timed: lane 0 of every warp adds its task's length (GPU clock).
// CORUN_KERNELS makes it both a plain kernel (spin_t) and a worker (spin_t__corun).
CORUN_BODY(spin_t, (unsigned long long task_ns, unsigned long long *sum, unsigned *sink))
{
    const unsigned long long t0 = corun_globaltimer();
    unsigned x = threadIdx.x;
    while (corun_globaltimer() - t0 < task_ns) {
        x = mix32(x);
    }
    if (x == 0x12345678u) {
        sink[0] = x;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(sum, corun_globaltimer() - t0);
    }
}
CORUN_KERNELS(spin_t, (unsigned long long task_ns, unsigned long long *sum, unsigned *sink),
              (task_ns, sum, sink), CORUN_PLAIN)

// spin whose loop sleeps 100 ns per turn: a warp gives its issue slot away
// as a warp waiting on memory would.
CORUN_BODY(spin_s, (unsigned long long task_ns, unsigned *sink))
{
    const unsigned long long t0 = corun_globaltimer();
    unsigned x = threadIdx.x;
    while (corun_globaltimer() - t0 < task_ns) {
        x = mix32(x);
        __nanosleep(100);
    }
    if (x == 0x12345678u) {
        sink[0] = x;
    }
}
CORUN_KERNELS(spin_s, (unsigned long long task_ns, unsigned *sink), (task_ns, sink), CORUN_PLAIN)

static corun_ctl *g_ctl;
static cudaEvent_t g_a, g_b;

// Milliseconds that launch() takes on the default stream.
template <typename F>
static float time_ms(F launch)
{
    float ms;
    CK(cudaEventRecord(g_a));
    launch();
    CK(cudaEventRecord(g_b));
    CK(cudaEventSynchronize(g_b));
    CK(cudaEventElapsedTime(&ms, g_a, g_b));
    return ms;
}

// One run of worker kernel fn (args after the worker argument) with nw workers
// over tasks, on a fresh control block; returns ms. *end receives the block.
static float run_worker(const void *fn, int nw, int per, uint64_t tasks, void **kargs, int nk,
                        corun_ctl *end = nullptr)
{
    int nsm;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    const corun_ctl h = exp_ctl(nsm, tasks, nw, per);
    CK(cudaMemcpy(g_ctl, &h, sizeof(h), cudaMemcpyHostToDevice));
    corun_worker_arg wa = {g_ctl, 0, 0, h.grid_x, 1, 1, h.workers_per_capsm};
    void *args[8] = {&wa};
    for (int i = 0; i < nk; i++) args[1 + i] = kargs[i];
    const float ms = time_ms([&] { CK(cudaLaunchKernel(fn, dim3(nw), dim3(256), args, 0, 0)); });
    if (end != nullptr) {
        CK(cudaMemcpy(end, g_ctl, sizeof(*end), cudaMemcpyDeviceToHost));
    }
    return ms;
}

static void variants(int nsm, int per, unsigned *sink)
{
    for (unsigned long long us : {2ull, 20ull}) {
        unsigned long long ns = us * 1000;
        void *kargs[] = {(void *)&ns, &sink};
        const unsigned waves = 200;
        for (int p : {1, 2, 4, 8}) {
            const int nw = p * nsm;
            const float w = run_worker((const void *)spin__corun, nw, per, (uint64_t)nw * waves, kargs, 2);
            const float ws = run_worker((const void *)spin_s__corun, nw, per, (uint64_t)nw * waves, kargs, 2);
            const float pl = time_ms([&] { spin<<<nw * waves, 256>>>(ns, sink); });
            const float pls = time_ms([&] { spin_s<<<nw * waves, 256>>>(ns, sink); });
            printf("%3llu us, %d workers/SM (plain: the same blocks, all resident at %d/SM): us per wave "
                   "plain %.2f worker %.2f | sleeping spin: plain %.2f worker %.2f\n",
                   us, p, 8, 1e3 * pl / (waves * p / 8.0), 1e3 * w / waves,
                   1e3 * pls / (waves * p / 8.0), 1e3 * ws / waves);
        }
    }
}

int main()
{
    int nsm, per = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, spin__corun, 256, 0));
    const int nw = per * nsm;
    unsigned *sink;
    unsigned long long *sum;
    CK(cudaMalloc(&sink, 4));
    CK(cudaMalloc(&sum, 8));
    CK(cudaMalloc(&g_ctl, sizeof(corun_ctl)));
    CK(cudaEventCreate(&g_a));
    CK(cudaEventCreate(&g_b));
    printf("workers %d (%d/SM)\n", nw, per);
    for (unsigned long long us : {2ull, 20ull, 50ull}) {
        unsigned long long ns = us * 1000;
        const unsigned waves = 400;
        const uint64_t tasks = (uint64_t)nw * waves;
        const float ms_plain = time_ms([&] { spin<<<(unsigned)tasks, 256>>>(ns, sink); });
        CK(cudaMemset(sum, 0, 8));
        const float ms_timed = time_ms([&] { spin_t<<<(unsigned)tasks, 256>>>(ns, sum, sink); });
        unsigned long long s = 0;
        CK(cudaMemcpy(&s, sum, 8, cudaMemcpyDeviceToHost));
        void *kargs[] = {(void *)&ns, &sink};
        corun_ctl h;
        const float ms_worker = run_worker((const void *)spin__corun, nw, per, tasks, kargs, 2, &h);
        CK(cudaMemset(sum, 0, 8));
        void *kargs_t[] = {(void *)&ns, &sum, &sink};
        const float ms_wt = run_worker((const void *)spin_t__corun, nw, per, tasks, kargs_t, 3);
        unsigned long long sw = 0;
        CK(cudaMemcpy(&sw, sum, 8, cudaMemcpyDeviceToHost));
        printf("    timed worker %.2f ms, mean task %.2f us on the GPU clock\n", ms_wt, sw / 1e3 / tasks / 8);
        printf("%3llu us tasks, %u waves: plain %.2f ms (%.2f us/wave), timed %.2f ms, mean task "
               "%.2f us on the GPU clock; worker %.2f ms (%.2f us/wave), done %llu started %u\n",
               us, waves, ms_plain, 1e3 * ms_plain / waves, ms_timed, s / 1e3 / tasks / 8, ms_worker,
               1e3 * ms_worker / waves, (unsigned long long)h.done, h.started);
    }
    variants(nsm, per, sink);
    return 0;
}
