/*
 * sync.cu — corun-gpucheck-sync: stream-ordered corun launches followed at
 * once by ordinary synchronous CUDA calls, as real programs make them, each
 * in a loop; every result checked, and a watchdog that fails the run if any
 * call hangs. Built twice: as written (the legacy default stream) and with
 * nvcc --default-stream per-thread (corun-gpucheck-sync-pt).
 *
 *   corun-gpucheck-sync [--loops N] [--json FILE]
 *
 * Calls: cudaMemcpy device-to-host and host-to-device, cudaMemcpyFromSymbol,
 * cudaMemset, cudaDeviceSynchronize, cudaStreamSynchronize, each after a
 * launch on the default stream and on an explicit stream; then the same
 * while the launched job is preempted, with another thread resuming it
 * while the synchronous call waits for it (the stream is held by corun
 * then: the resume must not need a driver call that waits for that copy);
 * then again with, besides, a second job on a stream of its own grown and
 * halted by a third thread while the call waits: both launch grids
 * (corun__sched_grow, corun__sched_stop), and both calls must return at
 * once (under 1 ms, while the held job keeps the call waiting 2 ms) -- a
 * launch may wait for that copy, so corun makes them on a thread of its own
 * (src/backends/cuda/launcher.c).
 */
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <cuda_runtime.h>

#include "check.h"
#include "corun/corun_device.cuh"

/* x[i] = x[i] + 1 for i < n, each block a 256-element slice; spins spin_ns
 * per block so a launch lasts long enough to be caught by the next call. */
CORUN_BODY(inc, (float *x, int n, int spin_ns))
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if ((threadIdx.x & 31) == 0) {
        const unsigned long long t0 = corun_globaltimer();
        while (corun_globaltimer() - t0 < (unsigned long long)spin_ns) {
        }
    }
    __syncwarp();
    if (i < n) {
        x[i] += 1.0f;
    }
}
CORUN_KERNELS(inc, (float *x, int n, int spin_ns), (x, n, spin_ns), CORUN_PLAIN)

__device__ float symbol_copy[1024];

static const char *g_what = "";
/* Where the thread acting on the second job is: the call a hang sits in. */
static std::atomic<int> g_other_step{0};
static const char *const other_steps[] = {"", " [other thread: in corun_job_preempt]",
                                          " [other thread: in corun_job_resume]",
                                          " [other thread: in corun_job_resize]",
                                          " [other thread: done]"};

static void on_alarm(int)
{
    static const char msg[] = "corun-gpucheck-sync: DEADLOCK (a call did not return in 30 s): ";
    (void)!write(2, msg, sizeof(msg) - 1);
    (void)!write(2, g_what, strlen(g_what));
    const char *step = other_steps[g_other_step.load() % 5];
    (void)!write(2, step, strlen(step));
    (void)!write(2, "\n", 1);
    _exit(3);
}

/* One synchronous call right after a launch; returns the value it read
 * back (element 0 of x), or -1 when the call reads nothing. */
static float call_after(int op, float *x, int n, float *host, cudaStream_t s)
{
    switch (op) {
    case 0: /* cudaMemcpy device to host: waits for the launch */
        CK(cudaMemcpy(host, x, (size_t)n * 4, cudaMemcpyDeviceToHost));
        return host[0];
    case 1: /* host to device, then read back */
        CK(cudaMemcpy(x + n, host, 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(host, x, 4, cudaMemcpyDeviceToHost));
        return host[0];
    case 2: /* copy x into a symbol, read the symbol back */
        CK(cudaMemcpyToSymbolAsync(symbol_copy, x, 4, 0, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemcpyFromSymbol(host, symbol_copy, 4));
        return host[0];
    case 3:
        CK(cudaMemset(x + n, 0, 4));
        CK(cudaMemcpy(host, x, 4, cudaMemcpyDeviceToHost));
        return host[0];
    case 4:
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(host, x, 4, cudaMemcpyDeviceToHost));
        return host[0];
    default:
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(host, x, 4, cudaMemcpyDeviceToHost));
        return host[0];
    }
}

int main(int argc, char **argv)
{
    const char *ops[] = {"cudaMemcpy D2H", "cudaMemcpy H2D", "cudaMemcpyFromSymbol",
                         "cudaMemset", "cudaDeviceSynchronize", "cudaStreamSynchronize"};
    int loops = 100, failures = 0;
    const char *json_path = nullptr;
    char what[160];

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--loops") && i + 1 < argc) {
            loops = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json_path = argv[++i];
        } else {
            fprintf(stderr, "usage: corun-gpucheck-sync [--loops N] [--json FILE]\n");
            return !strcmp(argv[i], "--help") ? 0 : 2;
        }
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);
    signal(SIGALRM, on_alarm);
    /* every launch through the workers, none plain; a preempted job stays
     * held until this program resumes it (another policy would resume it
     * itself, and the call below would not wait for a held job) */
    setenv("CORUN_PLAIN_BELOW_US", "0", 1);
    setenv("CORUN_PLAIN_BATCH_BELOW_US", "0", 1);
    setenv("CORUN_PLAIN_ONE_WAVE", "0", 1);
    setenv("CORUN_POLICY", "manual", 1);
    corun_ctx *ctx = corun_default_ctx();
    if (ctx == nullptr || !corun_ctx_runs_cuda(ctx)) {
        fprintf(stderr, "corun-gpucheck-sync: no GPU context: %s\n", corun_last_error());
        return 1;
    }
    cudaFunction_t fp, fw;
    CK(cudaGetFuncBySymbol(&fp, (const void *)inc));
    CK(cudaGetFuncBySymbol(&fw, (const void *)inc__corun));
    corun_kernel_desc d;
    memset(&d, 0, sizeof(d));
    d.name = "inc";
    d.plain = (void *)fp;
    d.worker = (void *)fw;
    corun_kernel *k;
    CR(corun_kernel_get(ctx, &d, &k));
    const int n = 1 << 18;
    float *x;
    CK(cudaMalloc(&x, (size_t)(n + 1) * 4));
    std::vector<float> host((size_t)n + 1);
    cudaStream_t mine;
    CK(cudaStreamCreate(&mine)); /* a blocking stream: synchronises with the legacy one */
    /* the second job: a stream the program's calls do not wait for, and
     * enough tasks (2 us each) to keep it running through the call */
    const int n2 = 1 << 22;
    float *y;
    CK(cudaMalloc(&y, (size_t)n2 * 4));
    CK(cudaMemset(y, 0, (size_t)n2 * 4));
    cudaStream_t other;
    CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    int loops2 = 0;
    std::atomic<int> in_call{0}, caught{0}, slow{0};
    std::atomic<int> miss_call{0}, miss_halt{0}, miss_grow{0}; /* why not caught */
    FILE *json = json_path ? fopen(json_path, "w") : nullptr;
    if (json) {
        fprintf(json, "[");
    }
    int first = 1;
#ifdef CORUN_SYNC_PER_THREAD
    const int nstreams = 1; /* stream 0 is this thread's own: an explicit one adds nothing */
#else
    const int nstreams = 2;
#endif
    for (int held = 0; held < 3; held++) {
        for (int sv = 0; sv < nstreams; sv++) {
            cudaStream_t s = sv == 0 ? (cudaStream_t)0 : mine;
            for (int op = 0; op < 6; op++) {
                int bad = 0;
                CK(cudaMemset(x, 0, (size_t)(n + 1) * 4));
                CK(cudaDeviceSynchronize());
                snprintf(what, sizeof(what), "%s after a launch on %s%s", ops[op],
                         sv != 0 ? "an explicit stream"
#ifdef CORUN_SYNC_PER_THREAD
                                 : "the per-thread default stream",
#else
                                 : "the legacy default stream",
#endif
                         held == 2   ? ", the job preempted, another grown and halted"
                         : held == 1 ? ", the job preempted"
                                     : "");
                g_what = what;
                alarm(30); /* 100 loops take well under a second */
                caught = 0;
                slow = 0;
                miss_call = miss_halt = miss_grow = 0;
                for (int l = 0; l < loops; l++) {
                    /* held by the second case: long enough (1.3 ms on 2
                     * CapSMs) that the halt surely finds it running */
                    const int spin = held == 2 ? 20000 : 2000, spin2 = 5000;
                    void *args[] = {&x, (void *)&n, (void *)&spin};
                    corun_launch_attr a;
                    memset(&a, 0, sizeof(a));
                    a.capsm = 2; /* a few ms: the call below waits for it */
                    corun_job *j = nullptr, *j2 = nullptr;
                    std::thread resumer, other_thread;
                    if (held == 2) {
                        void *args2[] = {&y, (void *)&n2, (void *)&spin2};
                        CR(corun_launch_stream(ctx, k, {(unsigned)(n2 / 256), 1, 1}, {256, 1, 1},
                                               0, args2, &a, (void *)other, &j2));
                        loops2++;
                    }
                    CR(corun_launch_stream(ctx, k, {(unsigned)(n / 256), 1, 1}, {256, 1, 1}, 0,
                                           args, &a, (void *)s, held ? &j : nullptr));
                    if (held) {
                        /* stopped now; resumed from another thread while
                         * the call below waits for it */
                        (void)corun_job_preempt(j);
                        if (held == 2) {
                            /* the halt is made by corun's launcher thread
                             * (after the resume grid): let it take effect
                             * before the call, so the call waits for a held
                             * job */
                            corun_progress p;
                            for (int t = 0; t < 1000; t++) {
                                if (corun_job_progress(j, &p) == CORUN_OK && p.live == 0 && p.done > 0) {
                                    break;
                                }
                                usleep(50);
                            }
                        }
                        resumer = std::thread([j] {
                            usleep(2000);
                            (void)corun_job_resume(j, 0);
                        });
                    }
                    if (held == 2) {
                        /* while the call below waits for the first job: the
                         * second grows (a grid launch) and is halted (its
                         * resume grid first); both calls must return at
                         * once, i.e. no corun call may wait for that copy.
                         * It is resumed once the first job has been. */
                        g_other_step = 0;
                        other_thread = std::thread([&, j2] {
                            usleep(300);
                            const int before = in_call.load();
                            const auto t0 = std::chrono::steady_clock::now();
                            g_other_step = 3;
                            const int grown = corun_job_resize(j2, 6) == CORUN_OK &&
                                              corun_job_capsm(j2) == 6;
                            const int after_grow = in_call.load();
                            g_other_step = 1;
                            const int halted = corun_job_preempt(j2) == CORUN_OK &&
                                               corun_job_capsm(j2) == 0;
                            const int after_halt = in_call.load();
                            /* the first job is held for 2 ms: calls that waited
                             * for the copy would take until it is resumed */
                            slow += std::chrono::steady_clock::now() - t0 >=
                                    std::chrono::microseconds(1000);
                            caught += before && grown && after_grow && halted && after_halt;
                            miss_call += !(before && after_grow && after_halt);
                            miss_halt += !halted;
                            miss_grow += !grown;
                            usleep(2500); /* the first job is resumed meanwhile */
                            g_other_step = 2;
                            (void)corun_job_resume(j2, 0);
                            g_other_step = 4;
                        });
                    }
                    in_call = 1;
                    float got = call_after(op, x, n, host.data(), s);
                    in_call = 0;
                    if (held) {
                        resumer.join();
                        CR(corun_job_wait(j, 60000));
                        corun_job_release(j);
                    }
                    if (held == 2) {
                        other_thread.join();
                        CR(corun_job_wait(j2, 60000));
                        corun_job_release(j2);
                    }
                    bad += got != (float)(l + 1);
                }
                alarm(0);
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(host.data(), x, (size_t)n * 4, cudaMemcpyDeviceToHost));
                for (int i = 0; i < n; i++) {
                    bad += host[i] != (float)loops;
                }
                if (held == 2) {
                    std::vector<float> h2((size_t)n2);
                    CK(cudaMemcpy(h2.data(), y, (size_t)n2 * 4, cudaMemcpyDeviceToHost));
                    for (int i = 0; i < n2; i++) {
                        bad += h2[i] != (float)loops2;
                    }
                }
                const bool waited = held == 2 && slow.load() > 0;
                printf("%-70s %4d loops: %s", what, loops, bad || waited ? "FAIL" : "ok");
                if (held == 2) {
                    /* the halt and the growth launched while the call waited */
                    printf(" (grown and halted while the call waited: %d", caught.load());
                    if (caught.load() < loops) {
                        printf("; not inside %d, halt failed %d, growth failed %d",
                               miss_call.load(), miss_halt.load(), miss_grow.load());
                    }
                    printf("; the two calls took >= 1 ms: %d)", slow.load());
                }
                printf("\n");
                failures += bad != 0 || waited;
                if (json) {
                    fprintf(json, "%s\n  {\"mode\":\"sync\",\"call\":\"%s\",\"stream\":\"%s\","
                                  "\"preempted\":%d,\"loops\":%d,\"bad\":%d,\"caught\":%d,"
                                  "\"slow\":%d}",
                            first ? "" : ",", ops[op], sv == 0 ? "default" : "explicit", held,
                            loops, bad, caught.load(), slow.load());
                    first = 0;
                }
            }
        }
    }
    if (json) {
        fprintf(json, "\n]\n");
        fclose(json);
    }
    printf("sync: %s\n", failures ? "FAIL" : "every call returned with the right result");
    return failures ? 1 : 0;
}
