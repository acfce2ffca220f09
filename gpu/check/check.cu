/*
 * check.cu — gpu-check: correctness and benchmarks of corun's worker loop
 * and CUDA backend on a real GPU. Built twice: corun-gpucheck (as shipped)
 * and corun-gpucheck-hits (with CORUN_TASK_HITS, counting every block-task
 * each worker runs). scripts/gpu-check.sh runs the modes and collects JSON.
 *
 *   occupancy    registers and blocks/SM of plain vs worker form
 *   correctness  (hits build) worker == plain output, every task exactly once,
 *                under >= 1000 random stop / evict / grow / resume events and
 *                (scheduler path) epoch task limits
 *   overhead     worker vs plain kernel time alone on the GPU, per budget;
 *                each launch timed right after an untimed one of its own form
 *   latency      signal -> all workers gone, vs a flag-polling baseline; halts
 *                after a running kernel's tasks slow down 4x; the halt of
 *                every kernel above, a quarter of the way through
 *   resume       preempted half way and resumed vs uninterrupted (host events,
 *                then on GPU clocks: drain and relaunch separately)
 *   spatial      evict k CapSMs, launch an LS kernel into them
 *   xhalt        the halt and the narrowing written by another process
 *                (CUDA IPC), as corund writes them, against this process's
 *   sanitize     small sizes, for compute-sanitizer
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <cstdarg>
#include <random>
#include <string>
#include <thread>

#include <cuda.h>
#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases.cuh"
#include "check.h"
#include "corun/corun.h"
#include "corun/corun_sim.h"
extern "C" {
#include "core/ctl.h"
#include "wire/mirror.h"
#include "core/entry.h"
#include "core/settings.h"
}

FILE *json;
int json_first;
static double g_budget_us = 10; /* chunk latency budget of direct launches (--budget); libcorun's default */
static uint32_t g_chunk_max = 1024; /* upper bound on tasks per claim (--chunk-max) */
static bool g_void = true; /* halts of ahead runs void the claims (--no-void: A/B only) */
/* correctness through corun_launch_stream (--stream); read only by the hits build */
[[maybe_unused]] static bool g_stream = false;
/* correctness --grid: every launch on the whole GPU, so that all but a kernel's
 * first run in the grid form (run with CORUN_GRID_TASK_US=0) */
[[maybe_unused]] static bool g_grid = false;
/* Budgets (us) the overhead and latency modes measure (--budgets). */
static std::vector<double> g_budgets_overhead = {5, 10, 20, 50};
static std::vector<double> g_budgets_latency = {10, 20};

double now_us()
{
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

void sleep_us(double us)
{
    std::this_thread::sleep_for(std::chrono::nanoseconds((long long)(us * 1e3)));
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

double pct(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    if (v.empty()) {
        return 0;
    }
    size_t i = (size_t)std::min((double)v.size() - 1, p / 100.0 * (double)(v.size() - 1) + 0.5);
    return v[i];
}

__attribute__((format(printf, 1, 2))) void jrec(const char *fmt, ...)
{
    va_list ap;
    if (!json) {
        return;
    }
    fprintf(json, "%s\n  ", json_first ? "" : ",");
    json_first = 0;
    va_start(ap, fmt);
    vfprintf(json, fmt, ap);
    va_end(ap);
    fflush(json);
}

int sm_count()
{
    int v;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
    return v;
}

int per_sm_of(const void *fn, unsigned threads, size_t smem)
{
    int v = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, fn, (int)threads, smem));
    return v;
}

/* The settings as libcorun reads them (CORUN_AHEAD: 0 never the ahead
 * entry, 1 (default) as the entry memo says, 2 always). */
static const corun__settings &settings(void)
{
    static corun__settings set;
    static bool loaded = false;
    if (!loaded) {
        char why[256];
        corun__settings_default(&set);
        if (corun__settings_load_env(&set, why, sizeof(why)) != CORUN_OK) {
            fprintf(stderr, "gpu-check: %s\n", why);
            exit(2);
        }
        loaded = true;
    }
    return set;
}

/* next = done - preset, in a stream: the rewind of a voided ahead run. */
__global__ void rewind_kernel(corun_ctl *ctl, uint32_t preset)
{
    ctl->next = (uint32_t)ctl->done - preset;
}

/* A worker launch driven directly through its control block (no scheduler),
 * to measure the mechanism itself. It makes the launches libcorun's
 * scheduler would (src/core/ctl.h): the ahead entry where the kernel has one
 * and the entry memo (src/core/entry.h) says so, with the preset start of a
 * fresh launch. */
struct Direct {
    corun_ctl *ctl = nullptr;
    corun__ctl_host ch;
    int per_sm = 0;
    uint32_t budget_ns = 0;
    uint32_t nworkers = 0; /* init's: the tail-shrink hint of every launch */
    bool use_ahead = false;
    bool launched = false; /* a launch since init: learn() reads what it measured */
    bool switched = false; /* init's decision differs from the last launch's entry */
    uint64_t task_hits = 0;
    /* the relay (corun_ctl.h): where set, the block's mirror in mapped host
     * memory and its device address; launches then plan a relay block as
     * libcorun's direct launches do (corun__relay_plan), and halts store the
     * mirror before the stream write. With no primary grid to say the kernel
     * is over, a relay leaves only at a halt: every such launch ends in one */
    volatile corun_mirror *mirror = nullptr;
    uint64_t mirror_dev = 0;
    /* per budget (ns): what the launches measured, as libcorun keeps it per
     * kernel (corun__entry_memo) */
    std::map<uint32_t, corun__entry_memo> memo;

    Direct() { CK(cudaMalloc(&ctl, sizeof(corun_ctl))); }
    ~Direct() { cudaFree(ctl); }
    /* Waits for the launches since init and keeps the task time they measured. */
    void learn()
    {
        if (!launched) {
            return;
        }
        launched = false;
        CK(cudaDeviceSynchronize());
        corun__entry_learn(&memo[budget_ns], read().task_ns_seed, use_ahead, budget_ns);
    }
    /* A fresh control block (zeros) for nworkers workers; decide = false keeps
     * the entry of the launch before (a timed launch after an untimed one of
     * its own form). */
    void init(const Case &c, double budget_us, int nw, bool decide = true)
    {
        learn();
        CK(cudaMemset(ctl, 0, sizeof(corun_ctl)));
        if (mirror != nullptr) {
            memset((void *)mirror, 0, CORUN_MIRROR_STRIDE);
        }
        budget_ns = (uint32_t)(budget_us * 1e3);
        nworkers = (uint32_t)nw;
        if (decide) {
            corun__entry_memo &m = memo[budget_ns];
            use_ahead = c.ahead != nullptr &&
                        corun__entry_decide(&m, (unsigned)settings().ahead, true, c.tasks(),
                                            budget_ns);
            switched = use_ahead != (m.ran_ahead != 0);
        }
        corun__kspec spec;
        memset(&spec, 0, sizeof(spec));
        spec.grid = {c.grid.x, c.grid.y, c.grid.z};
        spec.ahead = use_ahead;
        corun_gpu_desc g;
        corun_gpu_desc_h100(&g);
        g.sm_count = (uint32_t)sm_count();
        corun__ctl_init(&ch, &spec, (uint32_t)per_sm, &g, budget_ns, g_chunk_max, false);
    }
    void launch(const Case &c, cudaStream_t s, int nw, uint32_t base, uint32_t gen)
    {
        corun__launch_req req;
        bool relay = false;
        memset(&req, 0, sizeof(req));
        if (mirror_dev != 0) {
            nw = (int)corun__relay_plan((uint32_t)nw, (uint32_t)per_sm, 0, ch.sm_count - 1,
                                        ch.sm_count, ch.tasks, &relay);
        }
        req.nworkers = (uint32_t)nw;
        req.base = base;
        req.gen = gen;
        corun_worker_arg wa;
        corun__ctl_launch(&ch, &req, 0, ch.sm_count - 1, &wa);
        wa.ctl = ctl;
        wa.nworkers = nworkers;
        wa.task_hits = task_hits;
        wa.relay = mirror_dev;
        wa.relay_block = relay;
        /* a launch number as libcorun's count from 1: the mirror's `over`,
         * zeroed with it each time, is then below it (corun_relay_over) */
        wa.seq = 1;
        nw += relay;
        std::vector<void *> args;
        args.push_back(&wa);
        for (void *p : c.argv) {
            args.push_back(p);
        }
        CK(cudaLaunchKernel(use_ahead ? c.ahead : c.worker, dim3(nw), c.block, args.data(),
                            c.smem, s));
        CK(cudaGetLastError());
        launched = true;
    }
    /* The words of a halt, as libcorun's cuda backend writes them
     * (src/core/ctl.h): an ahead run's claims voided first, then halt_gen;
     * with --no-void, not the void. */
    halt_words halt_words_of()
    {
        corun__ctl_write w[CORUN_CTL_MAX_WRITES];
        size_t n = 0;
        halt_words hw = {};
        CR(corun__ctl_signal(&ch, CORUN_SIG_HALT_GEN, 1, w, &n));
        for (size_t i = 0; i < n; i++) {
            if (w[i].size != 4 || (!g_void && w[i].off == offsetof(corun_ctl, next))) {
                continue;
            }
            hw.off[hw.n] = w[i].off;
            hw.value[hw.n++] = (unsigned)w[i].value;
        }
        return hw;
    }
    /* A halt from the host, in stream hs. */
    void halt(cudaStream_t hs)
    {
        const halt_words hw = halt_words_of();
        for (unsigned i = 0; i < hw.n && mirror != nullptr; i++) {
            const corun__ctl_write w = {hw.off[i], 4, hw.value[i]};
            corun__ctl_mirror(mirror, &w, 1);
        }
        for (unsigned i = 0; i < hw.n; i++) {
            CU(cuStreamWriteValue32((CUstream)hs, field(hw.off[i]), hw.value[i], 0));
        }
    }
    /* Before a relaunch after a halt, in the launch's stream: next = done -
     * preset, as libcorun's rewind. Only a voided ahead run needs it (the
     * chunk loop leaves next there), so chunk-loop timings have no kernel of
     * it in them. */
    void rewind(cudaStream_t s) const
    {
        if (use_ahead) {
            rewind_kernel<<<1, 1, 0, s>>>(ctl, ch.preset);
            CK(cudaGetLastError());
        }
    }
    corun_ctl read()
    {
        corun_ctl h;
        CK(cudaMemcpy(&h, ctl, sizeof(h), cudaMemcpyDeviceToHost));
        return h;
    }
    CUdeviceptr field(size_t off) const { return (CUdeviceptr)ctl + off; }
};

/* ---- occupancy -------------------------------------------------------------- */

static int mode_occupancy(std::vector<Case *> &cases)
{
    int bad = 0;
    printf("%-13s %-24s %6s %6s %6s %8s %8s %8s %6s\n", "kernel", "shape", "regs_p", "regs_w",
           "regs_a", "occ_p", "occ_w", "occ_a", "same");
    for (Case *c : cases) {
        cudaFuncAttributes ap, aw, aa;
        CK(cudaFuncGetAttributes(&ap, c->plain));
        CK(cudaFuncGetAttributes(&aw, c->worker));
        int op = per_sm_of(c->plain, c->threads(), c->smem);
        int ow = per_sm_of(c->worker, c->threads(), c->smem);
        /* the ahead entry (CORUN_SHARED kernels): "-" where there is none */
        int oa = ow;
        char ra[16] = "-", oas[16] = "-";
        aa.numRegs = 0;
        aa.sharedSizeBytes = 0;
        if (c->ahead != nullptr) {
            CK(cudaFuncGetAttributes(&aa, c->ahead));
            oa = per_sm_of(c->ahead, c->threads(), c->smem);
            snprintf(ra, sizeof(ra), "%d", aa.numRegs);
            snprintf(oas, sizeof(oas), "%d", oa);
        }
        const bool same = op == ow && op == oa;
        printf("%-13s %-24s %6d %6d %6s %8d %8d %8s %6s\n", c->name, c->shape, ap.numRegs,
               aw.numRegs, ra, op, ow, oas, same ? "yes" : "NO");
        bad += !same;
        jrec("{\"mode\":\"occupancy\",\"kernel\":\"%s\",\"regs_plain\":%d,\"regs_worker\":%d,"
             "\"smem_plain\":%zu,\"smem_worker\":%zu,\"blocks_per_sm_plain\":%d,"
             "\"blocks_per_sm_worker\":%d,\"ahead\":%s,\"regs_ahead\":%d,"
             "\"smem_ahead\":%zu,\"blocks_per_sm_ahead\":%d}",
             c->name, ap.numRegs, aw.numRegs, ap.sharedSizeBytes, aw.sharedSizeBytes, op, ow,
             c->ahead != nullptr ? "true" : "false", aa.numRegs, aa.sharedSizeBytes, oa);
    }
    return bad;
}

/* ---- correctness ------------------------------------------------------------ */

/* A job action's result: false if the job had already finished. */
static bool job_ok(int rc)
{
    if (rc == CORUN_ESTATE) {
        return false;
    }
    CR(rc);
    return true;
}

static std::vector<uint8_t> run_plain(Case *c, cudaStream_t s)
{
    c->poison(s);
    CK(cudaLaunchKernel(c->plain, c->grid, c->block, c->argv.data(), c->smem, s));
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    return c->fetch();
}

static corun_kernel *register_case(corun_ctx *ctx, Case *c)
{
    corun_kernel_desc d;
    corun_kernel *k;
    cudaFunction_t fp, fw;

    memset(&d, 0, sizeof(d));
    CK(cudaGetFuncBySymbol(&fp, c->plain));
    CK(cudaGetFuncBySymbol(&fw, c->worker));
    d.name = c->name;
    d.plain = (void *)fp;
    d.worker = (void *)fw;
    if (c->ahead != nullptr) {
        cudaFunction_t fa;
        CK(cudaGetFuncBySymbol(&fa, c->ahead));
        d.ahead = (void *)fa;
    }
    if (c->grid_form != nullptr) {
        cudaFunction_t fg;
        CK(cudaGetFuncBySymbol(&fg, c->grid_form));
        d.grid = (void *)fg;
    }
    CR(corun_kernel_register(ctx, &d, &k));
    return k;
}

/* Counts tasks whose hit count is not exactly 1. */
static __attribute__((unused)) size_t bad_hits(const unsigned *dhits, uint64_t n, unsigned *worst)
{
    std::vector<unsigned> h(n);
    size_t bad = 0;
    CK(cudaMemcpy(h.data(), dhits, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    *worst = 1;
    for (uint64_t i = 0; i < n; i++) {
        if (h[i] != 1) {
            bad++;
            if (h[i] != 1 && (*worst == 1 || h[i] > *worst || h[i] == 0)) {
                *worst = h[i];
            }
        }
    }
    return bad;
}

static int mode_correctness(std::vector<Case *> &cases, unsigned min_events, uint64_t seed,
                            bool quick)
{
#ifndef CORUN_TASK_HITS
    (void)cases;
    (void)min_events;
    (void)seed;
    (void)quick;
    (void)bad_hits;
    fprintf(stderr, "correctness needs the CORUN_TASK_HITS build (corun-gpucheck-hits)\n");
    return 1;
#else
    corun_ctx_opts o = {"cuda", "manual"};
    corun_ctx *ctx;
    cudaStream_t s;
    std::mt19937_64 rng(seed);
    int nsm = sm_count(), failures = 0;

    CR(corun_ctx_create(&o, &ctx));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("%-13s %7s %6s %6s %6s %6s %6s %6s %6s %8s %9s %10s %s\n", "kernel", "events", "stops",
           "evicts", "grows", "epochs", "runs", "ahead", "grid", "bad_out", "bad_hits", "max_rel",
           "result");
    for (Case *c : cases) {
        corun_kernel *k = register_case(ctx, c);
        std::vector<uint8_t> ref = run_plain(c, s);
        unsigned *hits = nullptr;
        uint64_t n = c->tasks();
        unsigned events = 0, stops = 0, evicts = 0, grows = 0, epochs = 0, runs = 0, worst = 1,
                 ahead = 0;
        size_t bad_out = 0, bad_hit = 0;
        double max_rel = 0;
        const uint64_t grid0 = corun_ctx_grid_launches(ctx);

        CK(cudaMalloc(&hits, n * sizeof(unsigned)));
        CR(corun_test_count_tasks(k, (uint64_t)(uintptr_t)hits));
        while (events < min_events || runs < 2) {
            corun_launch_attr a;
            corun_job *j;
            /* Start small, so the kernel runs long enough to be hit often
             * (the grid form: the whole GPU, the policy's default). */
            uint32_t cap = g_grid ? 0 : 1 + (uint32_t)(rng() % 24);
            double rel;

            memset(&a, 0, sizeof(a));
            a.capsm = cap;
            c->poison(s);
            CK(cudaMemsetAsync(hits, 0, n * sizeof(unsigned), s));
            CK(cudaStreamSynchronize(s));
            if (g_stream) {
                CR(corun_launch_stream(ctx, k, {c->grid.x, c->grid.y, c->grid.z},
                                       {c->block.x, c->block.y, c->block.z}, (uint32_t)c->smem,
                                       c->argv.data(), &a, (void *)s, &j));
            } else {
                CR(corun_launch(ctx, k, {c->grid.x, c->grid.y, c->grid.z},
                                {c->block.x, c->block.y, c->block.z}, (uint32_t)c->smem,
                                c->argv.data(), &a, &j));
            }
            runs++;
            /* The first run is left alone: worker == plain, uninterrupted. */
            while (runs > 1 && corun_job_wait(j, 0) == CORUN_ETIMEDOUT) {
                unsigned r = (unsigned)(rng() % 100);
                sleep_us((double)(rng() % (quick ? 50 : 150)));
                if (r >= 90 && !g_stream) {
                    /* an epoch's quota (fgqos): stop, a new task limit a
                     * random way past what is done, resume; the job pauses
                     * at it until a later epoch raises it */
                    corun_progress p;
                    if (!job_ok(corun_job_preempt(j)) || !job_ok(corun_job_progress(j, &p))) {
                        break;
                    }
                    uint64_t lim = std::min<uint64_t>(n, p.done + 1 + rng() % (n / 8 + 1));
                    if (!job_ok(corun_job_limit(j, lim)) ||
                        !job_ok(corun_job_resume(j, 1 + (uint32_t)(rng() % nsm)))) {
                        break;
                    }
                    epochs++;
                    events++;
                } else if (r < 30) {
                    if (!job_ok(corun_job_preempt(j))) {
                        break; /* finished meanwhile */
                    }
                    stops++;
                    events++;
                    sleep_us((double)(rng() % 100));
                    if (!job_ok(corun_job_resume(j, 1 + (uint32_t)(rng() % nsm)))) {
                        break;
                    }
                    events++;
                } else if (r < 65) {
                    uint32_t held = corun_job_capsm(j);
                    uint32_t to = 1 + (uint32_t)(rng() % nsm);
                    if (held > 0 && to != held) {
                        if (!job_ok(corun_job_resize(j, to))) {
                            break;
                        }
                        (to < held ? evicts : grows)++;
                        events++;
                    }
                } else {
                    /* evict down to very few CapSMs: stresses the tail */
                    uint32_t held = corun_job_capsm(j);
                    if (held > 2) {
                        if (!job_ok(corun_job_resize(j, 1 + (uint32_t)(rng() % 2)))) {
                            break;
                        }
                        evicts++;
                        events++;
                    }
                }
            }
            if (epochs > 0 && !g_stream && corun_job_wait(j, 0) == CORUN_ETIMEDOUT) {
                /* the last epoch's limit off, so the job can finish */
                if (job_ok(corun_job_preempt(j)) && job_ok(corun_job_limit(j, n))) {
                    (void)job_ok(corun_job_resume(j, 0));
                }
            }
            CR(corun_job_wait(j, -1));
            corun_progress pr;
            CR(corun_job_progress(j, &pr));
            ahead += pr.ahead; /* runs through the ahead entry */
            corun_job_release(j);
            std::vector<uint8_t> got = c->fetch();
            bad_out += c->compare(got, ref, 1e-6, &rel);
            max_rel = std::max(max_rel, rel);
            unsigned w;
            size_t bh = bad_hits(hits, n, &w);
            if (bh) {
                worst = w;
            }
            bad_hit += bh;
            if (quick && runs >= 3) {
                break;
            }
        }
        const unsigned grid = (unsigned)(corun_ctx_grid_launches(ctx) - grid0);
        /* --grid: the runs after the first (which measures) in the grid form
         * where their grid takes more than a wave; none at all fails */
        const bool grid_ok = !g_grid || grid > 0;
        bool ok = bad_out == 0 && bad_hit == 0 && grid_ok;
        failures += !ok;
        printf("%-13s %7u %6u %6u %6u %6u %6u %6u %6u %8zu %9zu %10.2e %s\n", c->name, events,
               stops, evicts, grows, epochs, runs, ahead, grid, bad_out, bad_hit, max_rel,
               ok ? "ok" : grid_ok ? "FAIL" : "FAIL (not in the grid form)");
        jrec("{\"mode\":\"correctness\",\"path\":\"%s\",\"kernel\":\"%s\",\"tasks\":%llu,\"events\":%u,"
             "\"stops\":%u,\"evicts\":%u,\"grows\":%u,\"epochs\":%u,\"runs\":%u,\"ahead_runs\":%u,"
             "\"grid_runs\":%u,\"bad_outputs\":%zu,\"bad_task_hits\":%zu,\"worst_hit_count\":%u,"
             "\"max_rel_err\":%.3e,\"ok\":%s}",
             g_grid ? "grid" : g_stream ? "stream" : "scheduler", c->name, (unsigned long long)n,
             events, stops, evicts, grows, epochs, runs, ahead, grid, bad_out,
             bad_hit, worst, max_rel, ok ? "true" : "false");
        CK(cudaFree(hits));
    }
    CK(cudaStreamDestroy(s));
    corun_ctx_destroy(ctx);
    return failures;
#endif
}

/* ---- overhead ----------------------------------------------------------------- */

/* Each timed launch follows an untimed launch of the same form, so both forms
 * are measured as they run when launched again and again: what ran just
 * before changes a kernel's time (docs/decisions/0015). */
static float time_plain(Case *c, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1)
{
    float ms;
    CK(cudaLaunchKernel(c->plain, c->grid, c->block, c->argv.data(), c->smem, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaEventRecord(e0, s));
    CK(cudaLaunchKernel(c->plain, c->grid, c->block, c->argv.data(), c->smem, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

static float time_worker(Case *c, Direct &d, double budget_us, cudaStream_t s, cudaEvent_t e0,
                         cudaEvent_t e1)
{
    float ms;
    int nw = d.per_sm * sm_count();
    d.init(*c, budget_us, nw);
    if (d.switched) {
        const corun__entry_memo &m = d.memo[(uint32_t)(budget_us * 1e3)];
        fprintf(stderr, "%s b%.0f: the %s entry from here (last launch's task %u ns)\n",
                c->name, budget_us, d.use_ahead ? "ahead" : "chunk", m.task_ns);
    }
    d.launch(*c, s, nw, 0, 0);
    CK(cudaStreamSynchronize(s)); /* before init rewrites the control block */
    d.init(*c, budget_us, nw, false);
    CK(cudaEventRecord(e0, s));
    d.launch(*c, s, nw, 0, 0);
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

static int mode_overhead(std::vector<Case *> &cases, int reps)
{
    const std::vector<double> &budgets = g_budgets_overhead;
    const size_t nb = budgets.size();
    cudaStream_t s;
    cudaEvent_t e0, e1;

    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("%-13s %10s", "kernel", "plain_ms");
    for (double b : budgets) {
        printf("  w%-3.0fus_ms ovh%%", b);
    }
    printf("\n");
    for (Case *c : cases) {
        Direct d;
        d.per_sm = per_sm_of(c->worker, c->threads(), c->smem);
        std::vector<double> tp;
        std::vector<std::vector<double>> tw(nb);
        std::vector<int> ahead_reps(nb);
        for (int w = 0; w < 2; w++) { /* warm-up; the entry settles per budget */
            time_plain(c, s, e0, e1);
            for (size_t b = 0; b < nb; b++) {
                time_worker(c, d, budgets[b], s, e0, e1);
            }
        }
        for (int r = 0; r < reps; r++) {
            tp.push_back(time_plain(c, s, e0, e1));
            for (size_t b = 0; b < nb; b++) {
                tw[b].push_back(time_worker(c, d, budgets[b], s, e0, e1));
                ahead_reps[b] += d.use_ahead;
            }
        }
        double mp = median(tp);
        printf("%-13s %10.4f", c->name, mp);
        for (size_t b = 0; b < nb; b++) {
            double mw = median(tw[b]);
            printf("  %9.4f %+5.1f", mw, 100.0 * (mw / mp - 1));
            jrec("{\"mode\":\"overhead\",\"kernel\":\"%s\",\"budget_us\":%.0f,\"chunk_max\":%u,"
                 "\"reps\":%d,"
                 "\"plain_ms_median\":%.5f,\"worker_ms_median\":%.5f,\"overhead_pct\":%.3f,"
                 "\"plain_ms_min\":%.5f,\"worker_ms_min\":%.5f,\"ahead_reps\":%d}",
                 c->name, budgets[b], g_chunk_max, reps, mp, mw, 100.0 * (mw / mp - 1), pct(tp, 0),
                 pct(tw[b], 0), ahead_reps[b]);
        }
        printf("\n");
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaStreamDestroy(s));
    return 0;
}

/* ---- latency ------------------------------------------------------------------ */

/* A spin kernel as a case: tasks of task_ns each, long enough to be stopped. */
struct SpinCase : Case {
    unsigned long long task_ns;
    unsigned *sink;
    SpinCase(unsigned long long ns, uint64_t ntasks)
    {
        name = "spin";
        plain = (const void *)spin;
        worker = (const void *)spin__corun;
        task_ns = ns;
        sink = (unsigned *)alloc(4);
        block = dim3(256);
        grid = dim3((unsigned)ntasks);
        argv = {&task_ns, &sink};
    }
    void setup(int) override {}
};

/* spin whose task time the host changes while it runs (*task_ns, device memory). */
struct SpinVarCase : Case {
    unsigned *task_ns;
    unsigned *sink;
    SpinVarCase(uint64_t ntasks)
    {
        name = "spinvar";
        plain = (const void *)spinvar;
        worker = (const void *)spinvar__corun;
        task_ns = (unsigned *)alloc(4);
        sink = (unsigned *)alloc(4);
        block = dim3(256);
        grid = dim3((unsigned)ntasks);
        argv = {&task_ns, &sink};
    }
    void setup(int) override {}
};

static void spin_wait_us(double us)
{
    const double until = now_us() + us;
    while (now_us() < until) {
    }
}

/* One timed halt: the host reads the kernel's progress on the control
 * stream, as a scheduler does before it decides, then signals and waits for
 * the kernel's end; returns us from the signal call to the end seen by the
 * host. *done0 gets the progress read. What the host did just before counts
 * (a thread signalling straight out of a sleep is slower; docs/decisions/
 * 0009), so every halt row but the one marked "host asleep" is timed this
 * way. */
static double timed_halt(Direct &d, cudaStream_t ks, cudaStream_t hs, unsigned long long *done0,
                         bool read_first = true)
{
    *done0 = 0;
    if (read_first) {
        CK(cudaMemcpyAsync(done0, &d.ctl->done, 8, cudaMemcpyDeviceToHost, hs));
        CK(cudaStreamSynchronize(hs));
    }
    const double t0 = now_us();
    d.halt(hs);
    CK(cudaStreamSynchronize(ks));
    return now_us() - t0;
}

/* After a halted kernel's end: has every worker that started left? Says
 * which halt (of which kernel, if given) left some behind. */
static bool all_left(const corun_ctl &h, const char *kernel, const char *after)
{
    if (h.exited == h.started) {
        return true;
    }
    if (kernel != nullptr) {
        fprintf(stderr, "latency: %s: workers still live after %s\n", kernel, after);
    } else {
        fprintf(stderr, "latency: workers still live after %s\n", after);
    }
    return false;
}

/* Tasks slowed 4x (2 -> 8 us) while the kernel runs, then a halt `after` us
 * later, at budget 10: how soon the drain is back within the budget. The
 * chunks run when the tasks slow down were sized for 2 us tasks. The first
 * row halts tasks that stay at 2 us: spinvar yields its issue slot, so its
 * worker tasks are stretched far less than spin's (kernels.cuh). */
static int latency_after_slowdown(int trials, cudaStream_t ks, cudaStream_t hs)
{
    const int nsm = sm_count();
    const int per_sm = per_sm_of((const void *)spinvar__corun, 256, 0);
    const int nw = per_sm * nsm;
    const unsigned fast = 2000, slow = 8000;
    SpinVarCase c((uint64_t)nw * 20000);
    Direct d;
    d.per_sm = per_sm;
    for (double after : {-1.0, 20.0, 60.0, 100.0, 200.0}) {
        std::vector<double> halt;
        for (int i = 0; i < trials; i++) {
            CK(cudaMemcpy(c.task_ns, &fast, 4, cudaMemcpyHostToDevice));
            d.init(c, 10, nw);
            d.launch(c, ks, nw, 0, 0);
            sleep_us(2000);
            if (after >= 0) {
                CU(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)c.task_ns, slow, 0));
                CK(cudaStreamSynchronize(hs));
                spin_wait_us(after);
            }
            /* After a slowdown the host has just used the control stream and
             * spun; only the row without one reads the progress first. */
            unsigned long long done0;
            halt.push_back(timed_halt(d, ks, hs, &done0, after < 0));
            if (!all_left(d.read(), nullptr, "halt (slowdown)")) {
                return 1;
            }
        }
        char what[64];
        if (after < 0) {
            snprintf(what, sizeof(what), "halt, 2 us yielding tasks");
        } else {
            snprintf(what, sizeof(what), "halt %3.0f us after 2->8 us", after);
        }
        printf("%-28s %9.1f %9.1f %9.1f %7d\n", what, median(halt), pct(halt, 90),
               pct(halt, 100), trials);
        jrec("{\"mode\":\"latency\",\"what\":\"%s\",\"kernel\":\"spinvar\","
             "\"task_us\":\"%s\",\"after_us\":%.0f,\"budget_us\":10,\"median_us\":%.2f,"
             "\"p90_us\":%.2f,\"max_us\":%.2f,\"trials\":%d}",
             after < 0 ? "halt_yielding" : "halt_after_slowdown", after < 0 ? "2" : "2->8",
             after < 0 ? 0.0 : after, median(halt), pct(halt, 90), pct(halt, 100), trials);
    }
    return 0;
}

/* The halt of every kernel of the correctness set, at the benchmark size:
 * signalled a quarter of the way through its uninterrupted time (half way,
 * longtask's 1,056 workers would all be in their last task), b10. A trial
 * whose kernel had not started or had already finished when the signal
 * landed is run again (at most trials more times in all). Worker 0's
 * measured task time (task_ns_seed, stored when the halt makes it leave) says
 * how short the tasks are. */
static int latency_per_kernel(int trials, cudaStream_t ks, cudaStream_t hs)
{
    std::vector<Case *> cases = make_cases(2);
    cudaEvent_t e0, e1;
    int rc = 0;

    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (Case *c : cases) {
        Direct d;
        d.per_sm = per_sm_of(c->worker, c->threads(), c->smem);
        const int nw = d.per_sm * sm_count();
        std::vector<double> whole, halt, after, task_us;
        for (int i = 0; i < 3; i++) {
            whole.push_back(1e3 * time_worker(c, d, 10, ks, e0, e1));
        }
        const double quarter = 0.25 * median(whole);
        int missed = 0;
        while ((int)halt.size() < trials && missed <= trials) {
            d.init(*c, 10, nw);
            d.launch(*c, ks, nw, 0, 0);
            sleep_us(quarter);
            unsigned long long done0;
            const double t = timed_halt(d, ks, hs, &done0);
            corun_ctl h = d.read();
            if (!all_left(h, c->name, "halt")) {
                rc = 1;
                break;
            }
            if (done0 == 0 || h.done >= c->tasks()) {
                missed++; /* the signal did not land while the kernel ran */
                continue;
            }
            halt.push_back(t);
            after.push_back((double)(h.done - done0) / nw);
            if (h.task_ns_seed != 0) {
                task_us.push_back(h.task_ns_seed / 1e3);
            }
        }
        if (rc != 0) {
            break;
        }
        if (halt.empty()) {
            fprintf(stderr, "latency: %s: no halt landed while the kernel ran (%d tries)\n",
                    c->name, missed);
            rc = 1;
            break;
        }
        char what[64];
        snprintf(what, sizeof(what), "halt %s, b10", c->name);
        printf("%-28s %9.1f %9.1f %9.1f %7zu  task %.2f us (worker 0), tasks/worker after "
               "signal %.2f, missed %d\n",
               what, median(halt), pct(halt, 90), pct(halt, 100), halt.size(), median(task_us),
               median(after), missed);
        jrec("{\"mode\":\"latency\",\"what\":\"halt_kernel\",\"kernel\":\"%s\",\"budget_us\":10,"
             "\"median_us\":%.2f,\"p90_us\":%.2f,\"max_us\":%.2f,\"trials\":%zu,"
             "\"task_us_worker0\":%.3f,\"tasks_per_worker_after_signal\":%.3f,"
             "\"missed\":%d,\"whole_us\":%.1f}",
             c->name, median(halt), pct(halt, 90), pct(halt, 100), halt.size(), median(task_us),
             median(after), missed, 4 * quarter);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    for (Case *c : cases) {
        delete c;
    }
    return rc;
}

static int mode_latency(int trials)
{
    const unsigned long long task_us[] = {2, 20, 1000};
    cudaStream_t ks, hs, ws;
    int lo, hi, nsm = sm_count();
    unsigned *flag;

    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&ks, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
    CK(cudaStreamCreateWithPriority(&ws, cudaStreamNonBlocking, hi));
    CK(cudaMalloc(&flag, 4));
    printf("%-28s %9s %9s %9s %7s\n", "what", "median_us", "p90_us", "max_us", "trials");

    /* Baseline: 8 blocks per SM poll a flag continuously (the signal alone, no worker loop). */
    {
        std::vector<double> t;
        for (int i = 0; i < trials; i++) {
            CK(cudaMemset(flag, 0, 4));
            flagspin<<<8 * nsm, 256, 0, ks>>>(flag);
            CK(cudaGetLastError());
            sleep_us(1000);
            unsigned seen; /* the same read before the signal as timed_halt's */
            CK(cudaMemcpyAsync(&seen, flag, 4, cudaMemcpyDeviceToHost, hs));
            CK(cudaStreamSynchronize(hs));
            double t0 = now_us();
            CU(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)flag, 1, 0));
            CK(cudaStreamSynchronize(ks));
            t.push_back(now_us() - t0);
        }
        printf("%-28s %9.1f %9.1f %9.1f %7d\n", "baseline flag-poll grid", median(t), pct(t, 90),
               pct(t, 100), trials);
        jrec("{\"mode\":\"latency\",\"what\":\"baseline_flag_poll\",\"median_us\":%.2f,"
             "\"p90_us\":%.2f,\"max_us\":%.2f,\"trials\":%d}",
             median(t), pct(t, 90), pct(t, 100), trials);
    }
    for (double budget : g_budgets_latency)
    for (unsigned long long tu : task_us) {
        /* ~30 ms of work on the whole GPU, stopped after 2 ms. */
        int per_sm;
        uint64_t ntasks;
        {
            per_sm = per_sm_of((const void *)spin__corun, 256, 0);
            ntasks = (uint64_t)per_sm * nsm * std::max<uint64_t>(2, 30000 / tu);
        }
        SpinCase c(tu * 1000ull, ntasks);
        Direct d;
        d.per_sm = per_sm;
        std::vector<double> halt, evict, after, asleep;
        int nw = per_sm * nsm;
        /* the 2 us row at the first budget is also timed with the host
         * signalling straight out of its sleep, interleaved */
        const bool cold = tu == task_us[0] && budget == g_budgets_latency[0];
        for (int i = 0; i < trials; i++) {
            /* temporal: halt everything */
            d.init(c, budget, nw);
            d.launch(c, ks, nw, 0, 0);
            sleep_us(2000 + 1.5 * tu);
            unsigned long long done0;
            halt.push_back(timed_halt(d, ks, hs, &done0));
            corun_ctl h = d.read();
            /* block-tasks finished between the signal and the end, per worker */
            after.push_back((double)(h.done - done0) / nw);
            if (!all_left(h, nullptr, "halt")) {
                return 1;
            }
            if (cold) {
                d.init(c, budget, nw);
                d.launch(c, ks, nw, 0, 0);
                sleep_us(2000 + 1.5 * tu);
                asleep.push_back(timed_halt(d, ks, hs, &done0, false));
                if (!all_left(d.read(), nullptr, "halt")) {
                    return 1;
                }
            }
            /* spatial: evict 8 CapSMs, wait until their workers are gone */
            d.init(c, budget, nw);
            d.launch(c, ks, nw, 0, 0);
            sleep_us(2000 + 1.5 * tu);
            CK(cudaMemcpyAsync(&done0, &d.ctl->done, 8, cudaMemcpyDeviceToHost, hs));
            CK(cudaStreamSynchronize(hs));
            double t0 = now_us();
            CU(cuStreamWriteValue32((CUstream)hs, d.field(offsetof(corun_ctl, evict_below)), 8, 0));
            CU(cuStreamWaitValue32((CUstream)ws, d.field(offsetof(corun_ctl, exited)),
                                   (cuuint32_t)(8 * per_sm), CU_STREAM_WAIT_VALUE_GEQ));
            CK(cudaStreamSynchronize(ws));
            evict.push_back(now_us() - t0);
            d.halt(hs);
            CK(cudaStreamSynchronize(ks));
            if (!all_left(d.read(), nullptr, "evict+halt")) {
                return 1;
            }
        }
        char what[64];
        snprintf(what, sizeof(what), "halt, %llu us tasks, b%.0f", tu, budget);
        printf("%-28s %9.1f %9.1f %9.1f %7d  tasks/worker after signal %.2f\n", what,
               median(halt), pct(halt, 90), pct(halt, 100), trials, median(after));
        jrec("{\"mode\":\"latency\",\"what\":\"halt\",\"task_us\":%llu,\"budget_us\":%.0f,"
             "\"median_us\":%.2f,\"p90_us\":%.2f,\"max_us\":%.2f,\"trials\":%d,"
             "\"tasks_per_worker_after_signal\":%.3f}",
             tu, budget, median(halt), pct(halt, 90), pct(halt, 100), trials, median(after));
        if (cold) {
            snprintf(what, sizeof(what), "halt, %llu us, b%.0f, host asleep", tu, budget);
            printf("%-28s %9.1f %9.1f %9.1f %7d\n", what, median(asleep), pct(asleep, 90),
                   pct(asleep, 100), trials);
            jrec("{\"mode\":\"latency\",\"what\":\"halt_host_asleep\",\"task_us\":%llu,"
                 "\"budget_us\":%.0f,\"median_us\":%.2f,\"p90_us\":%.2f,\"max_us\":%.2f,"
                 "\"trials\":%d}",
                 tu, budget, median(asleep), pct(asleep, 90), pct(asleep, 100), trials);
        }
        snprintf(what, sizeof(what), "evict 8, %llu us tasks, b%.0f", tu, budget);
        printf("%-28s %9.1f %9.1f %9.1f %7d\n", what, median(evict), pct(evict, 90),
               pct(evict, 100), trials);
        jrec("{\"mode\":\"latency\",\"what\":\"evict8\",\"task_us\":%llu,\"budget_us\":%.0f,"
             "\"median_us\":%.2f,\"p90_us\":%.2f,\"max_us\":%.2f,\"trials\":%d}",
             tu, budget, median(evict), pct(evict, 90), pct(evict, 100), trials);
    }
    CK(cudaFree(flag));
    if (latency_after_slowdown(trials, ks, hs) != 0) {
        return 1;
    }
    return latency_per_kernel(trials, ks, hs);
}

/* ---- xhalt: the signal from another process ---------------------------------- */

/*
 * corund narrows a client's kernels by writing their control blocks from
 * its own process: the block opened by CUDA IPC, the words written with
 * cuStreamWriteValue32 on the daemon's highest-priority stream (the cuda
 * backend's peer_range), each stored first into the block's mirror, the
 * file of mirrors the client passed it (MIRROR, src/wire/mirror.h), where
 * the kernel's relay block picks it up (corun_ctl.h). Here a peer process
 * (this program, mode xhalt-peer, started through /proc/self/exe before it
 * touches CUDA, with the mirror's memfd) does exactly that to a running
 * worker kernel of 2 us tasks: a halt (halt_gen), and a narrowing that
 * takes SMs 0-7 away (sm_lo = 8), timed from the peer's call
 * (CLOCK_MONOTONIC, the same clock in both processes) to the kernel's end,
 * or to the workers of those SMs gone (exited, waited for on a stream), as
 * seen here. Each with the kernel launched as libcorun launches a direct
 * kernel (a relay block) and without (stream writes alone). Each side reads
 * the kernel's progress on its signal stream just before it signals
 * (timed_halt). The same halt from this process, interleaved, is the
 * baseline.
 */
static int xhalt_peer(int rfd, int wfd, int mfd)
{
    cudaIpcMemHandle_t h;
    corun_ctl *ctl;
    cudaStream_t hs;
    int lo, hi;
    char cmd;
    uint8_t *mirrors = nullptr;
    char why[256];

    if (corun__mirror_open(mfd, &mirrors, why, sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "xhalt-peer: %s\n", why);
        return 2;
    }
    if (read(rfd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
        return 2;
    }
    CK(cudaIpcOpenMemHandle((void **)&ctl, h, cudaIpcMemLazyEnablePeerAccess));
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
    while (read(rfd, &cmd, 1) == 1 && cmd != 'q') {
        const CUdeviceptr base = (CUdeviceptr)(uintptr_t)ctl;
        unsigned long long done0;
        /* the kernel's progress first, as timed_halt reads it (and a
         * scheduler does before it decides) */
        CK(cudaMemcpyAsync(&done0, &ctl->done, 8, cudaMemcpyDeviceToHost, hs));
        CK(cudaStreamSynchronize(hs));
        const double t0 = now_us();
        if (cmd == 'h') {
            const corun__ctl_write w = {offsetof(corun_ctl, halt_gen), 4, 1};
            corun__ctl_mirror((volatile corun_mirror *)mirrors, &w, 1);
            CU(cuStreamWriteValue32((CUstream)hs, base + offsetof(corun_ctl, halt_gen), 1, 0));
        } else { /* as corund's narrow: the mirror, then the block (peer_range) */
            corun__mirror_range(mirrors, 0, 8, (uint32_t)sm_count() - 1);
            CU(cuStreamWriteValue32((CUstream)hs, base + offsetof(corun_ctl, sm_hi_inv),
                                    ~((uint32_t)sm_count() - 1), 0));
            CU(cuStreamWriteValue32((CUstream)hs, base + offsetof(corun_ctl, sm_lo), 8, 0));
        }
        CK(cudaStreamSynchronize(hs));
        if (write(wfd, &t0, sizeof(t0)) != (ssize_t)sizeof(t0)) {
            return 2;
        }
    }
    CK(cudaIpcCloseMemHandle(ctl));
    corun__mirror_close(mirrors);
    return 0;
}

/* The mirrors' file as a client's cuda backend makes it (slots.c): a
 * memfd sealed at its size, mapped and registered with the driver. Block 0's
 * mirror is Direct's. */
static int mirror_file(Direct &d, uint8_t **map)
{
    const int fd = memfd_create("gpucheck-mirror", MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)CORUN_MIRROR_BYTES) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        perror("xhalt: the mirrors' file");
        return -1;
    }
    void *p = mmap(nullptr, CORUN_MIRROR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror("xhalt: mmap");
        return -1;
    }
    void *dev = nullptr;
    CK(cudaHostRegister(p, CORUN_MIRROR_BYTES, cudaHostRegisterMapped | cudaHostRegisterPortable));
    CK(cudaHostGetDevicePointer(&dev, p, 0));
    *map = (uint8_t *)p;
    d.mirror = (volatile corun_mirror *)p;
    d.mirror_dev = (uint64_t)(uintptr_t)dev;
    return fd;
}

static int mode_xhalt(int trials)
{
    const int nsm = sm_count();
    const int per_sm = per_sm_of((const void *)spin__corun, 256, 0);
    const int nw = per_sm * nsm;
    SpinCase c(2000ull, (uint64_t)nw * 15000);
    Direct d;
    cudaStream_t ks, hs, ws;
    cudaIpcMemHandle_t h;
    int lo, hi, to_peer[2], from_peer[2];
    char rs[16], ws_[16], ms[16];
    pid_t pid;
    uint8_t *map = nullptr;
    /* rows: [relay][cross halt, cross narrow, same-process halt] */
    std::vector<double> v[2][3];

    d.per_sm = per_sm;
    const int mfd = mirror_file(d, &map);
    if (mfd < 0) {
        return 1;
    }
    const uint64_t mirror_dev = d.mirror_dev;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&ks, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
    CK(cudaStreamCreateWithPriority(&ws, cudaStreamNonBlocking, hi));
    CK(cudaIpcGetMemHandle(&h, d.ctl));
    if (pipe(to_peer) != 0 || pipe(from_peer) != 0) {
        perror("xhalt: pipe");
        return 1;
    }
    snprintf(rs, sizeof(rs), "%d", to_peer[0]);
    snprintf(ws_, sizeof(ws_), "%d", from_peer[1]);
    snprintf(ms, sizeof(ms), "%d", mfd);
    pid = fork();
    if (pid == 0) {
        close(to_peer[1]);
        close(from_peer[0]);
        execl("/proc/self/exe", "corun-gpucheck", "xhalt-peer", rs, ws_, ms, (char *)nullptr);
        _exit(127);
    }
    close(to_peer[0]);
    close(from_peer[1]);
    if (pid < 0 || write(to_peer[1], &h, sizeof(h)) != (ssize_t)sizeof(h)) {
        perror("xhalt: peer");
        return 1;
    }
    for (int i = 0; i < trials; i++) {
        for (int r = 0; r < 2; r++) {
            d.mirror_dev = r ? mirror_dev : 0;
            for (int k = 0; k < 3; k++) {
                double t0 = 0;
                unsigned long long done0;
                d.init(c, g_budget_us, nw);
                d.launch(c, ks, nw, 0, 0);
                sleep_us(2000);
                if (k == 2) { /* this process's own halt, the baseline */
                    v[r][2].push_back(timed_halt(d, ks, hs, &done0));
                } else {
                    const char cmd = k == 0 ? 'h' : 'n';
                    if (write(to_peer[1], &cmd, 1) != 1) {
                        perror("xhalt: peer");
                        return 1;
                    }
                    if (k == 0) {
                        CK(cudaStreamSynchronize(ks));
                    } else {
                        CU(cuStreamWaitValue32((CUstream)ws, d.field(offsetof(corun_ctl, exited)),
                                               (cuuint32_t)(8 * per_sm), CU_STREAM_WAIT_VALUE_GEQ));
                        CK(cudaStreamSynchronize(ws));
                    }
                    const double t1 = now_us();
                    if (read(from_peer[0], &t0, sizeof(t0)) != (ssize_t)sizeof(t0)) {
                        fprintf(stderr, "xhalt: the peer process stopped answering\n");
                        return 1;
                    }
                    v[r][k].push_back(t1 - t0);
                    if (k == 1) {
                        d.halt(hs);
                        CK(cudaStreamSynchronize(ks));
                    }
                }
                if (!all_left(d.read(), nullptr, k == 0 ? "cross-process halt" : "halt")) {
                    return 1;
                }
            }
        }
    }
    const char q = 'q';
    (void)!write(to_peer[1], &q, 1);
    int st = 0;
    waitpid(pid, &st, 0);
    d.mirror = nullptr;
    CK(cudaHostUnregister(map));
    munmap(map, CORUN_MIRROR_BYTES);
    close(mfd);
    printf("%-44s %9s %9s %9s %9s %7s\n", "what (2 us tasks)", "median_us", "p99_us", "p90_us",
           "max_us", "trials");
    const char *names[] = {"cross-process halt", "cross-process narrow (SMs 0-7)",
                           "same-process halt"};
    const char *keys[] = {"xhalt", "xnarrow8", "halt_same"};
    for (int r = 1; r >= 0; r--) {
        for (int k = 0; k < 3; k++) {
            const std::vector<double> &x = v[r][k];
            char name[64];
            snprintf(name, sizeof(name), "%s, %s", names[k], r ? "relay" : "no relay");
            printf("%-44s %9.1f %9.1f %9.1f %9.1f %7zu\n", name, median(x), pct(x, 99),
                   pct(x, 90), pct(x, 100), x.size());
            jrec("{\"mode\":\"xhalt\",\"what\":\"%s%s\",\"task_us\":2,\"median_us\":%.2f,"
                 "\"p99_us\":%.2f,\"p90_us\":%.2f,\"max_us\":%.2f,\"trials\":%zu}",
                 keys[k], r ? "" : "_norelay", median(x), pct(x, 99), pct(x, 90), pct(x, 100),
                 x.size());
        }
    }
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* ---- resume ------------------------------------------------------------------- */

/* Medians of one kernel's resume on GPU clocks, in us. */
struct ResumeClock {
    const char *name;
    double whole, split; /* uninterrupted; halted half way + resumed */
    double stamped;      /* split with a clock stamp between the two launches */
    double drain;        /* halt written -> every worker gone */
    double end_gap;      /* last worker gone -> the next operation of the stream */
    double extra1;       /* first launch minus its share of the uninterrupted run */
    double extra2;       /* the resumed launch minus its share */
    double empty;        /* a relaunch that finds no task left */
    double nop;          /* as many blocks of a kernel that does nothing */
    double share;        /* tasks done by the first launch / tasks */
};

/*
 * The resume on the GPU's clock, without the host: every launch is queued
 * behind a gate (cuStreamWaitValue32) with clock_stamp kernels between them,
 * and the halt is written by a block resident beside the workers once half
 * the tasks are done. Splits the cost of a preemption into the drain of the
 * first launch and the relaunch, each against the same share of the
 * uninterrupted run (tasks of equal cost assumed). nw workers per launch.
 * The split itself is timed in a run of its own with nothing between the two
 * launches, so both sides carry the same instruments: the stamp between them
 * (which the breakdown needs) is a kernel of its own with a launch gap on
 * each side, and is reported as the difference "stamped - split".
 */
static ResumeClock resume_gpu_clock(Case *c, Direct &d, int nw, int trials,
                                    const std::vector<uint8_t> &ref, cudaStream_t ks,
                                    cudaStream_t hs, int *failures)
{
    unsigned long long *clk, *sig;
    unsigned *gate;
    cudaStream_t ss;
    int lo, hi;
    std::vector<double> whole, split, stamped, drain, end_gap, extra1, extra2, empty, nop, share;
    const unsigned long long tasks = c->tasks();
    size_t bad = 0;

    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&ss, cudaStreamNonBlocking, hi));
    CK(cudaMalloc(&clk, 9 * 8));
    CK(cudaMalloc(&sig, 8 * 8));
    CK(cudaMalloc(&gate, 4));
    auto gated = [&]() {
        CK(cudaMemsetAsync(gate, 0, 4, ks));
        CK(cudaStreamSynchronize(ks));
        CU(cuStreamWaitValue32((CUstream)ks, (CUdeviceptr)gate, 1, CU_STREAM_WAIT_VALUE_GEQ));
    };
    auto open_gate = [&]() {
        sleep_us(300); /* everything is queued before the gate opens */
        CU(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)gate, 1, 0));
        CK(cudaStreamSynchronize(ks));
    };
    /* Fresh output and control block, everything after queued behind the gate. */
    auto fresh = [&]() {
        c->poison(ks);
        d.init(*c, g_budget_us, nw);
        gated();
    };
    /* Halted half way by a resident block (its signal words at sig + off). */
    auto halve = [&](unsigned off) {
        halfway_signaller<<<1, 32, 0, ss>>>(d.ctl, tasks / 2, d.halt_words_of(), (unsigned)nw,
                                            sig + off);
        sleep_us(100); /* resident before the workers take every slot */
    };
    /* After a run that was halted: every task done once, outputs as the
     * plain kernel's. Returns the tasks the first launch did. */
    auto check_split = [&](unsigned off, const char *what) {
        unsigned long long g[4];
        CK(cudaStreamSynchronize(ss));
        CK(cudaMemcpy(g, sig + off, sizeof(g), cudaMemcpyDeviceToHost));
        corun_ctl end = d.read();
        if (end.done != tasks) {
            fprintf(stderr, "resume (GPU clock, %s) %s: done %llu of %llu, %llu by the first launch\n",
                    what, c->name, (unsigned long long)end.done, tasks, g[3]);
            (*failures)++;
        } else if (g[3] >= tasks) {
            fprintf(stderr,
                    "resume (GPU clock, %s) %s: every task was done before the halt landed\n",
                    what, c->name);
        }
        if (strcmp(c->name, "spin") != 0) {
            double rel;
            bad += c->compare(c->fetch(), ref, 1e-6, &rel);
        }
    };
    for (int i = 0; i < trials + 1; i++) {
        unsigned long long t[9], g[4];
        fresh();
        clock_stamp<<<1, 1, 0, ks>>>(clk);
        d.launch(*c, ks, nw, 0, 0);
        clock_stamp<<<1, 1, 0, ks>>>(clk + 1);
        open_gate();

        /* halved, nothing between the launches: the split */
        fresh();
        halve(4);
        clock_stamp<<<1, 1, 0, ks>>>(clk + 7);
        d.launch(*c, ks, nw, 0, 0);
        d.rewind(ks);
        d.launch(*c, ks, nw, 0, 1);
        clock_stamp<<<1, 1, 0, ks>>>(clk + 8);
        open_gate();
        check_split(4, "split");

        /* halved again with a stamp between: the parts */
        fresh();
        halve(0);
        clock_stamp<<<1, 1, 0, ks>>>(clk + 2);
        d.launch(*c, ks, nw, 0, 0);
        clock_stamp<<<1, 1, 0, ks>>>(clk + 3);
        d.rewind(ks);
        d.launch(*c, ks, nw, 0, 1);
        clock_stamp<<<1, 1, 0, ks>>>(clk + 4);
        d.launch(*c, ks, nw, 0, 1); /* nothing left: the fixed cost of a launch */
        clock_stamp<<<1, 1, 0, ks>>>(clk + 5);
        nop_blocks<<<nw, c->block, 0, ks>>>();
        clock_stamp<<<1, 1, 0, ks>>>(clk + 6);
        open_gate();
        check_split(0, "parts");
        CK(cudaMemcpy(t, clk, sizeof(t), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(g, sig, sizeof(g), cudaMemcpyDeviceToHost));
        if (i == 0) {
            continue; /* warm-up */
        }
        auto us = [](unsigned long long a, unsigned long long b) {
            return 1e-3 * (double)(long long)(b - a);
        };
        double w = us(t[0], t[1]), f = (double)g[3] / (double)tasks;
        whole.push_back(w);
        split.push_back(us(t[7], t[8]));
        stamped.push_back(us(t[2], t[4]));
        drain.push_back(us(g[0], g[2]));
        end_gap.push_back(us(g[2], t[3]));
        extra1.push_back(us(t[2], t[3]) - f * w);
        extra2.push_back(us(t[3], t[4]) - (1 - f) * w);
        empty.push_back(us(t[4], t[5]));
        nop.push_back(us(t[5], t[6]));
        share.push_back(f);
    }
    if (bad) {
        fprintf(stderr, "resume (GPU clock) %s: outputs differ\n", c->name);
        (*failures)++;
    }
    CK(cudaStreamDestroy(ss));
    CK(cudaFree(clk));
    CK(cudaFree(sig));
    CK(cudaFree(gate));
    return ResumeClock{c->name,         median(whole),  median(split),  median(stamped),
                       median(drain),
                       median(end_gap), median(extra1), median(extra2), median(empty),
                       median(nop),     median(share)};
}

static int mode_resume(std::vector<Case *> &cases, int trials)
{
    cudaStream_t ks, hs;
    cudaEvent_t e0, e1, e2, e3;
    int lo, hi, nsm = sm_count();
    int failures = 0;

    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&ks, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
    CK(cudaEventCreate(&e3));
    int spin_per_sm = per_sm_of((const void *)spin__corun, 256, 0);
    SpinCase spin50(50000, (uint64_t)spin_per_sm * nsm * 400); /* ~20 ms */
    std::vector<Case *> list = {&spin50};
    for (Case *c : cases) {
        if (!strcmp(c->name, "matmul") || !strcmp(c->name, "blackscholes") ||
            !strcmp(c->name, "stencil3d")) {
            list.push_back(c);
        }
    }
    /* The two sub-millisecond ones again on 4x the input: the cost of a
     * preemption is fixed (the drain of the chunks in flight and a relaunch),
     * so its share falls as the kernel grows. */
    StencilCase big_stencil;
    BlackScholesCase big_bs;
    if (!cases.empty() && strcmp(cases[0]->name, "vadd") == 0 && cases[0]->grid.x >= (1u << 19)) {
        big_stencil.setup(3);
        big_bs.setup(3);
        big_stencil.name = "stencil3d_4x";
        big_bs.name = "blackscholes_4x";
        list.push_back(&big_stencil);
        list.push_back(&big_bs);
    }
    printf("%-15s %12s %12s %7s %9s %s\n", "kernel", "whole_ms", "halved_ms", "ratio", "extra_us",
           "outputs");
    std::vector<ResumeClock> rows;
    for (Case *c : list) {
        Direct d;
        d.per_sm = per_sm_of(c->worker, c->threads(), c->smem);
        int nw = d.per_sm * nsm;
        std::vector<double> whole, split;
        std::vector<uint8_t> ref;
        size_t bad = 0;
        for (int i = 0; i < trials + 1; i++) {
            float a, b;
            /* uninterrupted */
            c->poison(ks);
            d.init(*c, g_budget_us, nw);
            CK(cudaEventRecord(e0, ks));
            d.launch(*c, ks, nw, 0, 0);
            CK(cudaEventRecord(e1, ks));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&a, e0, e1));
            if (i == 0) {
                ref = c->fetch();
            }
            /* preempted half way, then resumed from the counter */
            c->poison(ks);
            d.init(*c, g_budget_us, nw);
            CK(cudaStreamSynchronize(ks));
            CK(cudaEventRecord(e0, ks));
            d.launch(*c, ks, nw, 0, 0);
            CK(cudaEventRecord(e1, ks));
            for (;;) {
                corun_ctl h;
                CK(cudaMemcpyAsync(&h.done, &d.ctl->done, 8, cudaMemcpyDeviceToHost, hs));
                CK(cudaStreamSynchronize(hs));
                if (h.done * 2 >= c->tasks()) {
                    break;
                }
                sleep_us(20);
            }
            d.halt(hs);
            CK(cudaEventSynchronize(e1));
            corun_ctl mid = d.read();
            CK(cudaEventRecord(e2, ks));
            d.rewind(ks);
            d.launch(*c, ks, nw, 0, 1);
            CK(cudaEventRecord(e3, ks));
            CK(cudaEventSynchronize(e3));
            CK(cudaEventElapsedTime(&b, e0, e1));
            float b2;
            CK(cudaEventElapsedTime(&b2, e2, e3));
            corun_ctl end = d.read();
            if (end.done != c->tasks()) {
                fprintf(stderr, "resume %s: done %llu of %llu (mid %llu)\n", c->name,
                        (unsigned long long)end.done, (unsigned long long)c->tasks(),
                        (unsigned long long)mid.done);
                failures++;
            }
            if (mid.done >= c->tasks()) {
                fprintf(stderr, "resume %s: every task was claimed before the halt landed\n",
                        c->name);
            }
            if (strcmp(c->name, "spin") != 0) {
                double rel;
                bad += c->compare(c->fetch(), ref, 1e-6, &rel);
            }
            if (i > 0) { /* the first pair is a warm-up */
                whole.push_back(a);
                split.push_back((double)b + b2);
            }
        }
        double mw = median(whole), ms = median(split);
        printf("%-15s %12.3f %12.3f %7.3f %9.1f %s\n", c->name, mw, ms, ms / mw,
               1e3 * (ms - mw), bad ? "DIFFER" : "same");
        failures += bad != 0;
        jrec("{\"mode\":\"resume\",\"kernel\":\"%s\",\"trials\":%d,\"whole_ms_median\":%.4f,"
             "\"halved_ms_median\":%.4f,\"ratio\":%.4f,\"extra_us\":%.1f,\"outputs_equal\":%s}",
             c->name, trials, mw, ms, ms / mw, 1e3 * (ms - mw), bad ? "false" : "true");
        rows.push_back(resume_gpu_clock(c, d, nw - 1, trials, ref, ks, hs, &failures));
    }
    printf("\nthe same on GPU clocks: launches queued behind a gate, the halt from a resident\n"
           "block at done >= half, one worker fewer (its slot). halved: nothing between the\n"
           "two launches; stamp: what a clock stamp between them adds (that run gives the\n"
           "parts, each against the same share of the uninterrupted run)\n");
    printf("%-15s %9s %9s %7s %8s %8s %8s %8s %8s %8s %8s %8s\n", "kernel", "whole_us",
           "halved_us", "ratio", "extra", "stamp", "drain", "end_gap", "extra_1", "extra_2",
           "empty", "nop");
    for (const ResumeClock &r : rows) {
        printf("%-15s %9.1f %9.1f %7.3f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f\n",
               r.name, r.whole, r.split, r.split / r.whole, r.split - r.whole,
               r.stamped - r.split, r.drain, r.end_gap, r.extra1, r.extra2, r.empty, r.nop);
        jrec("{\"mode\":\"resume_gpu_clock\",\"kernel\":\"%s\",\"trials\":%d,"
             "\"whole_us_median\":%.2f,\"halved_us_median\":%.2f,\"ratio\":%.4f,"
             "\"extra_us\":%.2f,\"halved_with_stamp_us_median\":%.2f,\"halt_to_gone_us\":%.2f,\"gone_to_next_op_us\":%.2f,"
             "\"first_part_extra_us\":%.2f,\"second_part_extra_us\":%.2f,"
             "\"empty_relaunch_us\":%.2f,\"nop_launch_us\":%.2f,\"done_share_at_halt\":%.4f}",
             r.name, trials, r.whole, r.split, r.split / r.whole, r.split - r.whole, r.stamped,
             r.drain, r.end_gap, r.extra1, r.extra2, r.empty, r.nop, r.share);
    }
    return failures;
}

/* ---- spatial -------------------------------------------------------------------- */

/*
 * Evict k CapSMs of a running batch kernel and launch an LS kernel sized to
 * the freed slots at the same moment. Per trial, host-observed from the
 * signal: when the evicted workers are gone (a stream waits for the exit
 * counter) and when the LS kernel ends. The claim is that the LS starts
 * within the eviction latency of the same batch kernel and that the batch
 * keeps running meanwhile. The start is measured on one GPU clock (the LS
 * blocks' %globaltimer against a signal sent by a resident block); the
 * host-side "end minus alone" overstates it, because whatever follows a
 * kernel that ends beside running blocks waits ~40-60 us longer than on an
 * idle GPU (gpu-check dispatch). Baseline: the LS kernel behind the same
 * batch kernel without eviction.
 */
/* When the first block of ls_probe started, in us after event `from`, on GPU
 * clocks: from -> `to` (an event after the kernel) minus the kernel's span,
 * first block start to last block end (each block runs task_ns after its
 * start; st: its first and last block start, from %globaltimer). */
static double ls_first_start_us(cudaEvent_t from, cudaEvent_t to, const unsigned long long st[2],
                                unsigned long long task_ns)
{
    float ms;
    CK(cudaEventElapsedTime(&ms, from, to));
    return 1e3 * ms - 1e-3 * (double)(st[1] + task_ns - st[0]);
}

/* What every trial of the spatial step uses. */
struct Spatial {
    cudaStream_t ks, ls, hs, ws, ss; /* batch, LS, signals, waits, signaller */
    unsigned long long *stamps;      /* LS first and last block start */
    unsigned long long *sig_t;       /* signaller: signal sent, evicted workers gone */
    unsigned *trigger;               /* host -> signaller */
    cudaEvent_t ev_sig, ev_ls;
    int k = 8;                                  /* CapSMs evicted */
    unsigned long long ls_task_ns = 100000;     /* LS: one wave of 100 us blocks */
    int per_sm, ls_blocks, nw;
};

/* The samples of one batch task time and LS launch order, in us. */
struct SpatialSamples {
    std::vector<double> solo, evict, ls_end, delay, margin, without, progress, spread,
        free_slots, gpu_start, gpu_last_start, gpu_gone, last_vs_gone, solo_start;
};

static void spatial_setup(Spatial &sp)
{
    int lo, hi, nsm = sm_count();

    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&sp.ks, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&sp.ls, cudaStreamNonBlocking, hi));
    CK(cudaStreamCreateWithPriority(&sp.hs, cudaStreamNonBlocking, hi));
    CK(cudaStreamCreateWithPriority(&sp.ws, cudaStreamNonBlocking, hi));
    CK(cudaMalloc(&sp.stamps, 16));
    CK(cudaMalloc(&sp.sig_t, 16));
    CK(cudaMalloc(&sp.trigger, 4));
    CK(cudaStreamCreateWithPriority(&sp.ss, cudaStreamNonBlocking, hi));
    /* GPU-side timing of the LS start, on one clock: the signal is written by
     * a resident block (signaller) that stamps %globaltimer when it writes
     * it and when the evicted workers are gone; the LS blocks stamp their
     * start. (Events cannot do this: an operation after a kernel that ends
     * beside running blocks waits ~40-60 us more -- gpu-check dispatch.) */
    CK(cudaEventCreate(&sp.ev_sig));
    CK(cudaEventCreate(&sp.ev_ls));
    sp.per_sm = per_sm_of((const void *)spin__corun, 256, 0);
    sp.ls_blocks = sp.k * per_sm_of((const void *)ls_probe, 256, 0);
    sp.nw = sp.per_sm * nsm;
}

static void spatial_teardown(Spatial &sp)
{
    CK(cudaEventDestroy(sp.ev_sig));
    CK(cudaEventDestroy(sp.ev_ls));
    CK(cudaFree(sp.stamps));
    CK(cudaFree(sp.sig_t));
    CK(cudaFree(sp.trigger));
}

/* Readies the LS blocks' start stamps: the first from +inf (atomicMin), the
 * last from 0. */
static void spatial_stamps_reset(const Spatial &sp)
{
    CK(cudaMemsetAsync(sp.stamps + 1, 0, 8, sp.ls));
    CK(cudaMemsetAsync(sp.stamps, 0xff, 8, sp.ls));
    CK(cudaStreamSynchronize(sp.ls));
}

static void spatial_ls_launch(const Spatial &sp)
{
    ls_probe<<<sp.ls_blocks, 256, 0, sp.ls>>>(sp.stamps, sp.ls_task_ns);
}

/* A fresh batch run of launched workers from base (of sp.nw), given 3 ms
 * to get going. */
static void spatial_batch_start(const Spatial &sp, SpinCase &batch, Direct &d, int launched,
                                uint32_t base)
{
    d.init(batch, g_budget_us, sp.nw);
    d.launch(batch, sp.ks, launched, base, 0);
    sleep_us(3000);
}

/* The LS kernel alone: its time, host-observed; its first block's start
 * after launch, on GPU clocks, into v.solo_start. */
static double spatial_ls_alone(const Spatial &sp, SpatialSamples &v)
{
    spatial_stamps_reset(sp);
    double t0 = now_us();
    CK(cudaEventRecord(sp.ev_sig, sp.ls));
    spatial_ls_launch(sp);
    CK(cudaEventRecord(sp.ev_ls, sp.ls));
    CK(cudaStreamSynchronize(sp.ls));
    double t_solo = now_us() - t0;
    unsigned long long st[2]; /* LS first and last block start */
    CK(cudaMemcpy(st, sp.stamps, 16, cudaMemcpyDeviceToHost));
    v.solo_start.push_back(ls_first_start_us(sp.ev_sig, sp.ev_ls, st, sp.ls_task_ns));
    return t_solo;
}

/* The LS kernel into k evicted CapSMs of a running batch kernel, host-
 * observed from the signal. */
struct SpatialEvict {
    double evict;    /* signal -> evicted workers gone */
    double ls;       /* signal -> LS kernel done */
    double progress; /* batch tasks done meanwhile */
    unsigned long long st[2];
};

static SpatialEvict spatial_evict_host(const Spatial &sp, SpinCase &batch, Direct &d,
                                       bool ls_first)
{
    SpatialEvict e;

    spatial_batch_start(sp, batch, d, sp.nw, 0);
    corun_ctl before = d.read();
    spatial_stamps_reset(sp);
    double t0 = now_us();
    if (ls_first) { /* the LS launch already waits when the slots free */
        spatial_ls_launch(sp);
    }
    CU(cuStreamWriteValue32((CUstream)sp.hs, d.field(offsetof(corun_ctl, evict_below)),
                            (cuuint32_t)sp.k, 0));
    CK(cudaEventRecord(sp.ev_sig, sp.hs));
    if (!ls_first) {
        spatial_ls_launch(sp);
    }
    CK(cudaEventRecord(sp.ev_ls, sp.ls));
    CU(cuStreamWaitValue32((CUstream)sp.ws, d.field(offsetof(corun_ctl, exited)),
                           (cuuint32_t)(sp.k * sp.per_sm), CU_STREAM_WAIT_VALUE_GEQ));
    CK(cudaStreamSynchronize(sp.ws));
    e.evict = now_us() - t0;
    CK(cudaStreamSynchronize(sp.ls));
    e.ls = now_us() - t0;
    corun_ctl after = d.read();
    CK(cudaMemcpy(e.st, sp.stamps, 16, cudaMemcpyDeviceToHost));
    d.halt(sp.hs);
    CK(cudaStreamSynchronize(sp.ks));
    e.progress = (double)(after.done - before.done);
    return e;
}

/* The same on one GPU clock: the signal from a resident block (the batch
 * one worker short, the slot the signaller holds). */
static void spatial_evict_gpu(const Spatial &sp, SpinCase &batch, Direct &d, bool ls_first,
                              SpatialSamples &v)
{
    CK(cudaMemsetAsync(sp.trigger, 0, 4, sp.ss));
    CK(cudaStreamSynchronize(sp.ss));
    d.init(batch, g_budget_us, sp.nw - 1);
    signaller<<<1, 32, 0, sp.ss>>>(sp.trigger, (unsigned *)d.field(offsetof(corun_ctl, evict_below)),
                                   (unsigned)sp.k, (const unsigned *)d.field(offsetof(corun_ctl, exited)),
                                   (unsigned)(sp.k * sp.per_sm), sp.sig_t);
    d.launch(batch, sp.ks, sp.nw - 1, 0, 0);
    sleep_us(3000);
    spatial_stamps_reset(sp);
    if (ls_first) {
        spatial_ls_launch(sp);
    }
    CU(cuStreamWriteValue32((CUstream)sp.hs, (CUdeviceptr)sp.trigger, 1, 0));
    if (!ls_first) {
        spatial_ls_launch(sp);
    }
    CK(cudaStreamSynchronize(sp.ls));
    CK(cudaStreamSynchronize(sp.ss));
    unsigned long long st[2], tg[2];
    CK(cudaMemcpy(st, sp.stamps, 16, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(tg, sp.sig_t, 16, cudaMemcpyDeviceToHost));
    d.halt(sp.hs);
    CK(cudaStreamSynchronize(sp.ks));
    v.gpu_start.push_back(1e-3 * (double)(long long)(st[0] - tg[0]));
    v.gpu_last_start.push_back(1e-3 * (double)(long long)(st[1] - tg[0]));
    v.gpu_gone.push_back(1e-3 * (double)(long long)(tg[1] - tg[0]));
    v.last_vs_gone.push_back(1e-3 * (double)(long long)(st[1] - tg[1]));
}

/* Reference: the same slots left free from the start (the batch runs k
 * CapSMs short): what co-residency alone costs the LS. */
static double spatial_free_slots(const Spatial &sp, SpinCase &batch, Direct &d)
{
    spatial_batch_start(sp, batch, d, sp.nw - sp.k * sp.per_sm, (uint32_t)(sp.k * sp.per_sm));
    double t0 = now_us();
    spatial_ls_launch(sp);
    CK(cudaStreamSynchronize(sp.ls));
    double t = now_us() - t0;
    d.halt(sp.hs);
    CK(cudaStreamSynchronize(sp.ks));
    return t;
}

/* Baseline: the same LS kernel with no eviction waits for slots. */
static double spatial_no_evict(const Spatial &sp, SpinCase &batch, Direct &d)
{
    spatial_batch_start(sp, batch, d, sp.nw, 0);
    double t0 = now_us();
    spatial_ls_launch(sp);
    sleep_us(5000); /* let the LS wait a while behind the batch kernel */
    d.halt(sp.hs);
    CK(cudaStreamSynchronize(sp.ls));
    double t = now_us() - t0;
    CK(cudaStreamSynchronize(sp.ks));
    return t;
}

/* One trial; a warm-up one keeps only the LS alone's GPU-clock start. */
static void spatial_trial(const Spatial &sp, SpinCase &batch, Direct &d, bool ls_first,
                          bool warm_up, SpatialSamples &v)
{
    double t_solo = spatial_ls_alone(sp, v);
    SpatialEvict e = spatial_evict_host(sp, batch, d, ls_first);
    if (warm_up) {
        return;
    }
    v.solo.push_back(t_solo);
    v.evict.push_back(e.evict);
    v.ls_end.push_back(e.ls);
    v.delay.push_back(e.ls - t_solo);
    v.margin.push_back(e.evict - (e.ls - t_solo));
    v.progress.push_back(e.progress);
    v.spread.push_back(1e-3 * (double)(e.st[1] - e.st[0]));
    spatial_evict_gpu(sp, batch, d, ls_first, v);
    v.free_slots.push_back(spatial_free_slots(sp, batch, d));
    v.without.push_back(spatial_no_evict(sp, batch, d));
}

static void spatial_row(const char *label, unsigned long long batch_us, bool ls_first,
                        const std::vector<double> &v)
{
    char what[80];
    snprintf(what, sizeof(what), "%s, %llu us tasks%s", label, batch_us,
             ls_first ? ", LS first" : "");
    printf("%-52s %10.1f %10.1f %10zu\n", what, median(v), pct(v, 90), v.size());
}

/* Prints the rows and the JSON record of one batch task time and LS launch
 * order; 1 when the batch made no progress while the LS ran. */
static int spatial_report(const Spatial &sp, unsigned long long batch_us, bool ls_first,
                          const SpatialSamples &v)
{
    spatial_row("LS alone", batch_us, ls_first, v.solo);
    spatial_row("  LS alone: first block start after launch (GPU clocks)", batch_us, ls_first,
                v.solo_start);
    spatial_row("evict 8 CapSMs (signal->gone)", batch_us, ls_first, v.evict);
    spatial_row("LS into the evicted CapSMs", batch_us, ls_first, v.ls_end);
    spatial_row("  LS start delay (minus LS alone)", batch_us, ls_first, v.delay);
    spatial_row("  eviction latency - start delay", batch_us, ls_first, v.margin);
    spatial_row("  LS blocks: last start - first start", batch_us, ls_first, v.spread);
    spatial_row("  GPU clock: evicted workers gone after the signal", batch_us, ls_first,
                v.gpu_gone);
    spatial_row("  GPU clock: LS first block start after the signal", batch_us, ls_first,
                v.gpu_start);
    spatial_row("  GPU clock: LS last block start after the signal", batch_us, ls_first,
                v.gpu_last_start);
    spatial_row("  GPU clock: LS last block start - evicted gone", batch_us, ls_first,
                v.last_vs_gone);
    spatial_row("LS into slots the batch never used", batch_us, ls_first, v.free_slots);
    spatial_row("LS behind batch, no eviction (>=)", batch_us, ls_first, v.without);
    bool within = median(v.delay) <= median(v.evict);
    /* on one clock, same trials: the first LS block no later than the
     * last evicted worker's exit, the last within 2 us of it */
    bool within_gpu = median(v.gpu_start) <= median(v.gpu_gone) && median(v.last_vs_gone) <= 2.0;
    printf("LS starts within the eviction latency: %s by end - alone, %s by GPU clock "
           "(signal -> first LS block %.1f us, -> evicted gone %.1f us, last LS block "
           "%+.1f us after that); batch tasks done while LS ran: %.0f\n",
           within ? "yes" : "NO", within_gpu ? "yes" : "NO", median(v.gpu_start),
           median(v.gpu_gone), median(v.last_vs_gone), median(v.progress));
    jrec("{\"mode\":\"spatial\",\"evicted_capsm\":%d,\"batch_task_us\":%llu,"
         "\"ls_launched\":\"%s\",\"ls_start_spread_us\":%.2f,\"trials\":%zu,"
         "\"ls_alone_us\":%.2f,\"evict_latency_us\":%.2f,\"evict_latency_p90_us\":%.2f,"
         "\"ls_with_evict_us\":%.2f,\"ls_start_delay_us\":%.2f,"
         "\"ls_start_delay_p90_us\":%.2f,\"margin_us_median\":%.2f,"
         "\"ls_start_within_evict_latency\":%s,\"ls_first_start_after_signal_gpu_us\":%.2f,"
         "\"ls_first_start_after_signal_gpu_p90_us\":%.2f,"
         "\"ls_last_start_after_signal_gpu_us\":%.2f,\"evicted_gone_after_signal_gpu_us\":%.2f,"
         "\"ls_last_start_minus_gone_gpu_us\":%.2f,"
         "\"ls_gpu_start_within_evict_latency\":%s,\"ls_no_evict_us_at_least\":%.2f,"
         "\"ls_into_never_used_slots_us\":%.2f,\"batch_tasks_during_ls\":%.0f}",
         sp.k, batch_us, ls_first ? "before the signal" : "after the signal", median(v.spread),
         v.solo.size(), median(v.solo), median(v.evict), pct(v.evict, 90),
         median(v.ls_end), median(v.delay), pct(v.delay, 90), median(v.margin),
         within ? "true" : "false", median(v.gpu_start), pct(v.gpu_start, 90),
         median(v.gpu_last_start), median(v.gpu_gone), median(v.last_vs_gone),
         within_gpu ? "true" : "false", median(v.without), median(v.free_slots),
         median(v.progress));
    return median(v.progress) > 0 ? 0 : 1;
}

static int mode_spatial(int trials)
{
    Spatial sp;
    int failures = 0;

    spatial_setup(sp);
    printf("%-52s %10s %10s %10s\n", "what", "median_us", "p90_us", "trials");
    for (int ls_first = 0; ls_first < 2; ls_first++)
    for (unsigned long long batch_us : {20ull, 200ull}) {
        /* ~20 ms of batch work */
        SpinCase batch(batch_us * 1000ull, (uint64_t)sp.nw * (20000 / batch_us));
        Direct d;
        d.per_sm = sp.per_sm;
        SpatialSamples v;
        for (int i = 0; i < trials; i++) {
            spatial_trial(sp, batch, d, ls_first != 0, i == 0, v);
        }
        failures += spatial_report(sp, batch_us, ls_first != 0, v);
    }
    spatial_teardown(sp);
    return failures;
}

/* ---- dispatch -------------------------------------------------------------------- */

/*
 * Why the LS kernel of the spatial step starts late: the delay between the
 * previous operation of the LS stream and the LS kernel's first block, and
 * between its last block's end and the next operation, both on GPU clocks
 * (clock_stamp kernels before and after it on its stream), with
 *   - nothing else on the GPU,
 *   - a plain kernel (ls_probe itself, 3 ms blocks) holding all but k CapSMs'
 *     worth of slots,
 *   - a corun worker kernel (spin, 20 us tasks) holding the same, slots
 *     never used by it,
 *   - the same worker kernel on every slot, k CapSMs evicted, the LS stream
 *     waiting on the GPU until their workers are gone (cuStreamWaitValue32
 *     on the exit counter), so the gap is dispatch into just-freed slots.
 * If the plain filler delays the LS as much as the worker kernel does, the
 * delay is the GPU's, not corun's.
 */
static int mode_dispatch(int trials)
{
    cudaStream_t ks, fs, ls, hs;
    int lo, hi, nsm = sm_count();
    unsigned long long *stamps, *fstamps, *clk;
    unsigned *ended;
    cudaStream_t ws;
    const int k = 8;
    const unsigned long long ls_task_ns = 100000;

    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&ks, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&fs, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&ls, cudaStreamNonBlocking, hi));
    CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
    CK(cudaMalloc(&stamps, 32));
    CK(cudaMalloc(&fstamps, 16));
    CK(cudaMalloc(&clk, 24));
    CK(cudaMalloc(&ended, 4));
    CK(cudaStreamCreateWithPriority(&ws, cudaStreamNonBlocking, hi));
    int per_sm = per_sm_of((const void *)spin__corun, 256, 0);
    int ls_per_sm = per_sm_of((const void *)ls_probe, 256, 0);
    int ls_blocks = k * ls_per_sm;
    int nw = per_sm * nsm;
    SpinCase batch(20000ull, (uint64_t)nw * 1000);
    const char *what[4] = {"alone", "beside a plain kernel", "beside corun workers",
                           "into k CapSMs evicted from workers"};
    printf("%-36s %12s %12s %12s %12s %12s %6s\n", "LS kernel", "start_gap_us", "end_gap_us",
           "count_gap_us", "last_end_us", "overrun_us", "trials");
    for (int cfg = 0; cfg < 4; cfg++) {
        std::vector<double> start_gap, end_gap, count_gap, real_end_gap, overrun;
        Direct d;
        d.per_sm = per_sm;
        for (int i = 0; i < trials + 1; i++) {
            if (cfg == 1) {
                ls_probe<<<(nsm - k) * ls_per_sm, 256, 0, fs>>>(fstamps, 3000000ull);
            } else if (cfg >= 2) {
                d.init(batch, g_budget_us, nw);
                d.launch(batch, ks, cfg == 2 ? nw - k * per_sm : nw, 0, 0);
            }
            sleep_us(1000);
            if (cfg == 3) {
                CU(cuStreamWriteValue32((CUstream)hs, d.field(offsetof(corun_ctl, evict_below)),
                                        (cuuint32_t)k, 0));
                CU(cuStreamWaitValue32((CUstream)ls, d.field(offsetof(corun_ctl, exited)),
                                       (cuuint32_t)(k * per_sm), CU_STREAM_WAIT_VALUE_GEQ));
            }
            CK(cudaMemsetAsync(stamps + 1, 0, 8, ls));
            CK(cudaMemsetAsync(stamps, 0xff, 8, ls));
            CK(cudaMemsetAsync(ended, 0, 4, ls));
            CK(cudaMemsetAsync(stamps + 2, 0, 16, ls));
            CK(cudaStreamSynchronize(ls));
            /* the other way to learn the LS is done: wait for its blocks */
            CU(cuStreamWaitValue32((CUstream)ws, (CUdeviceptr)ended, (cuuint32_t)ls_blocks,
                                   CU_STREAM_WAIT_VALUE_GEQ));
            clock_stamp<<<1, 1, 0, ws>>>(clk + 2);
            clock_stamp<<<1, 1, 0, ls>>>(clk);
            ls_probe_count<<<ls_blocks, 256, 0, ls>>>(stamps, ls_task_ns, ended);
            clock_stamp<<<1, 1, 0, ls>>>(clk + 1);
            CK(cudaStreamSynchronize(ls));
            CK(cudaStreamSynchronize(ws));
            unsigned long long st[4], c[3];
            CK(cudaMemcpy(st, stamps, 32, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(c, clk, 24, cudaMemcpyDeviceToHost));
            if (cfg >= 2) {
                d.halt(hs);
            }
            CK(cudaDeviceSynchronize());
            if (i == 0) {
                continue; /* warm-up */
            }
            start_gap.push_back(1e-3 * (double)(long long)(st[0] - c[0]));
            end_gap.push_back(1e-3 * (double)(long long)(c[1] - (st[1] + ls_task_ns)));
            count_gap.push_back(1e-3 * (double)(long long)(c[2] - (st[1] + ls_task_ns)));
            real_end_gap.push_back(1e-3 * (double)(long long)(c[1] - st[2]));
            overrun.push_back(1e-3 * (double)st[3]);
        }
        printf("%-36s %12.1f %12.1f %12.1f %12.1f %12.1f %6zu\n", what[cfg], median(start_gap),
               median(end_gap), median(count_gap), median(real_end_gap), median(overrun),
               start_gap.size());
        jrec("{\"mode\":\"dispatch\",\"ls\":\"%s\",\"k_capsm\":%d,\"trials\":%zu,"
             "\"start_gap_us_median\":%.2f,\"start_gap_us_p90\":%.2f,"
             "\"end_gap_us_median\":%.2f,\"end_gap_us_p90\":%.2f,"
             "\"count_gap_us_median\":%.2f,\"count_gap_us_p90\":%.2f,"
             "\"after_last_block_end_us_median\":%.2f,\"block_overrun_us_median\":%.2f}",
             what[cfg], k, start_gap.size(), median(start_gap), pct(start_gap, 90),
             median(end_gap), pct(end_gap, 90), median(count_gap), pct(count_gap, 90),
             median(real_end_gap), median(overrun));
    }
    CK(cudaFree(stamps));
    CK(cudaFree(fstamps));
    CK(cudaFree(clk));
    CK(cudaFree(ended));
    return 0;
}

/* ---- hostfunc ------------------------------------------------------------------- */

static void CUDART_CB noop_host(void *) {}

/* Why the cuda backend does not use host functions: LS latency behind a
 * batch kernel of short blocks on a low-priority stream, LS on a
 * high-priority stream, with nothing, a host function, or an event after
 * the batch kernel. */
static int mode_hostfunc(int trials)
{
    cudaStream_t bs, ls;
    cudaEvent_t ev;
    int lo, hi, nsm = sm_count();
    unsigned *sink;
    const char *names[] = {"nothing", "host function", "event record"};

    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&bs, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&ls, cudaStreamNonBlocking, hi));
    CK(cudaEventCreateWithFlags(&ev, cudaEventBlockingSync | cudaEventDisableTiming));
    CK(cudaMalloc(&sink, 4));
    int per_sm = per_sm_of((const void *)spin, 256, 0);
    const unsigned long long batch_ns = 50000, ls_ns = 100000;
    unsigned batch_blocks = (unsigned)(per_sm * nsm * 200); /* ~10 ms of 50 us blocks */
    printf("%-34s %10s %10s\n", "after the batch kernel", "LS_med_us", "LS_max_us");
    for (int v = 0; v < 3; v++) {
        std::vector<double> t;
        for (int i = 0; i < trials; i++) {
            spin<<<batch_blocks, 256, 0, bs>>>(batch_ns, sink);
            if (v == 1) {
                CK(cudaLaunchHostFunc(bs, noop_host, nullptr));
            } else if (v == 2) {
                CK(cudaEventRecord(ev, bs));
            }
            sleep_us(1000);
            double t0 = now_us();
            spin<<<nsm, 256, 0, ls>>>(ls_ns, sink);
            CK(cudaStreamSynchronize(ls));
            t.push_back(now_us() - t0);
            CK(cudaStreamSynchronize(bs));
        }
        printf("%-34s %10.1f %10.1f\n", names[v], median(t), pct(t, 100));
        jrec("{\"mode\":\"hostfunc\",\"after_batch\":\"%s\",\"trials\":%d,"
             "\"ls_median_us\":%.2f,\"ls_max_us\":%.2f,\"batch_block_us\":50,\"ls_block_us\":100}",
             names[v], trials, median(t), pct(t, 100));
    }
    CK(cudaFree(sink));
    return 0;
}

/* ---- stream -------------------------------------------------------------------- */

/* corun_launch_stream keeps stream order: on one stream, a slow kernel, a
 * copy that changes vadd's input, the corun job (few CapSMs, so it runs
 * long), then a copy of its output. The copy can only hold new_a + b if the
 * job waited for the work before it and the copy waited for the job. */
static int mode_stream(int reps)
{
    corun_ctx *ctx = corun_default_ctx();
    corun_kernel *k;
    corun_kernel_desc desc;
    cudaFunction_t fp, fw;
    cudaStream_t s;
    VaddCase c;
    unsigned *sink;
    int bad_runs = 0;

    if (ctx == NULL) {
        fprintf(stderr, "stream: %s\n", corun_last_error());
        return 1;
    }
    c.setup(1);
    size_t n = (size_t)c.n;
    float *new_a = c.floats(n, 99, -3, 3), *copy = (float *)c.alloc(n * sizeof(float));
    std::vector<float> ha(n), hb(n), hc(n);
    CK(cudaMemcpy(ha.data(), new_a, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), c.b, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMalloc(&sink, 4));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaGetFuncBySymbol(&fp, (const void *)vadd));
    CK(cudaGetFuncBySymbol(&fw, (const void *)vadd__corun));
    memset(&desc, 0, sizeof(desc));
    desc.name = "vadd";
    desc.plain = (void *)fp;
    desc.worker = (void *)fw;
    CR(corun_kernel_get(ctx, &desc, &k));
    float *old_a = c.floats(n, 7, -1, 1); /* a starts with other values */
    for (int r = 0; r < reps; r++) {
        corun_launch_attr a;
        memset(&a, 0, sizeof(a));
        a.capsm = 1 + r % 4;
        CK(cudaMemcpy(c.a, old_a, n * 4, cudaMemcpyDeviceToDevice));
        CK(cudaMemset(copy, 0xff, n * 4));
        CK(cudaMemset(c.c, 0xff, n * 4));
        spin<<<1, 32, 0, s>>>(3000000ull, sink);          /* 3 ms of nothing */
        CK(cudaMemcpyAsync(c.a, new_a, n * 4, cudaMemcpyDeviceToDevice, s));
        void *args[] = {&c.a, &c.b, &c.c, &c.n};
        CR(corun_launch_stream(ctx, k, {c.grid.x, 1, 1}, {256, 1, 1}, 0, args, &a, (void *)s,
                               nullptr));
        CK(cudaMemcpyAsync(copy, c.c, n * 4, cudaMemcpyDeviceToDevice, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(hc.data(), copy, n * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            bad += hc[i] != ha[i] + hb[i];
        }
        bad_runs += bad != 0;
        printf("run %d (capsm %u): %zu of %zu wrong\n", r, a.capsm, bad, n);
    }
    jrec("{\"mode\":\"stream\",\"runs\":%d,\"bad_runs\":%d}", reps, bad_runs);
    CK(cudaFree(sink));
    return bad_runs;
}

/* ---- sanitize ------------------------------------------------------------------- */

/*
 * The sanitize step's watchdog. A case that stays in one call (launch,
 * preempt, resume, resize, wait, the stream's synchronize) for
 * SANITIZE_STALL_S seconds (default 60; each case takes about a second under
 * compute-sanitizer) is reported with what corun says of its job and its
 * context, and the process exits with status 4: a stuck case fails the step
 * with its state instead of hanging it.
 */
struct SanitizeWatch {
    std::mutex mu;
    std::string where; /* "<case> <path>: <call>" */
    double since = 0;
    corun_ctx *ctx = nullptr;
    corun_job *job = nullptr;
    bool stop = false;

    void at(const std::string &w, corun_job *j)
    {
        std::lock_guard<std::mutex> l(mu);
        where = w;
        job = j;
        since = now_us();
    }
};

/* Every other thread's backtrace on stderr, one thread at a time: where the
 * process waits (the frames' offsets resolve with addr2line). */
static void on_backtrace_signal(int)
{
    void *frames[48];
    const int n = backtrace(frames, 48);
    char head[64];
    const int len = snprintf(head, sizeof(head), "sanitize: thread %ld:\n", (long)gettid());
    (void)!write(2, head, (size_t)len);
    backtrace_symbols_fd(frames, n, 2);
}

static void sanitize_backtraces()
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;

    if (d == nullptr) {
        return;
    }
    signal(SIGUSR2, on_backtrace_signal);
    while ((e = readdir(d)) != nullptr) {
        const long tid = atol(e->d_name);
        if (tid > 0 && tid != (long)gettid()) {
            syscall(SYS_tgkill, (long)getpid(), tid, SIGUSR2);
            sleep_us(200000);
        }
    }
    closedir(d);
}

/* What corun says of a stuck job, from a thread of its own: the calls take
 * the context's lock, which the stuck call may hold. */
static void sanitize_stuck(SanitizeWatch &w, double limit_s)
{
    std::string where;
    corun_job *j;
    {
        std::lock_guard<std::mutex> l(w.mu);
        where = w.where;
        j = w.job;
    }
    fprintf(stderr, "sanitize: %s: no return after %.0f s (SANITIZE_STALL_S)\n", where.c_str(),
            limit_s);
    std::atomic<bool> told{false};
    std::thread([&w, j, &told] {
        char desc[512];
        corun_progress p;
        if (j != nullptr && corun_job_progress(j, &p) == CORUN_OK) {
            fprintf(stderr, "sanitize: the job: %llu tasks, %llu claimed, %llu done, %u workers "
                    "live, capsm %u\n", (unsigned long long)p.tasks,
                    (unsigned long long)p.claimed, (unsigned long long)p.done, p.live,
                    corun_job_capsm(j));
        } else if (j != nullptr) {
            fprintf(stderr, "sanitize: the job's progress: %s\n", corun_last_error());
        }
        corun_ctx_describe(w.ctx, desc, sizeof(desc));
        fprintf(stderr, "sanitize: the context: %s\n", desc);
        told = true;
    }).detach();
    for (int i = 0; i < 50 && !told; i++) {
        sleep_us(100000);
    }
    if (!told) {
        fprintf(stderr, "sanitize: corun did not answer within 5 s (its lock is held, or the "
                "driver does not return)\n");
    }
    sanitize_backtraces();
    fflush(stdout);
    fflush(stderr);
    _exit(4);
}

/* The grid form of case c (NAME__corun_grid) launched as libcorun's direct
 * path launches it (direct.c), on a control block and a report of its own,
 * for the sanitizers: under them libcorun has not chosen that form. halted:
 * halt_gen and release set before the launch, so its blocks past the
 * preset leave unclaimed and its last one, the anchor, lets go at once
 * (RELEASED); else it runs every task (FINISHED). Returns the report's
 * state, CORUN_REPORT_NONE where the state or its count of tasks is wrong. */
static uint32_t sanitize_grid(Case *c, cudaStream_t s, bool halted)
{
    const uint32_t nsm = (uint32_t)sm_count(), tasks = (uint32_t)c->tasks();
    const uint32_t per_sm = (uint32_t)per_sm_of(c->worker, c->threads(), c->smem);
    corun_ctl *ctl = nullptr;
    corun_report *rep = nullptr, *rep_dev = nullptr;
    corun__ctl_host ch;
    corun__kspec spec;
    corun__launch_req req;
    corun_worker_arg wa;
    corun_gpu_desc g;

    CK(cudaMalloc(&ctl, sizeof(corun_ctl)));
    CK(cudaMemset(ctl, 0, sizeof(corun_ctl)));
    CK(cudaHostAlloc(&rep, sizeof(corun_report), cudaHostAllocMapped));
    memset(rep, 0, sizeof(*rep));
    CK(cudaHostGetDevicePointer((void **)&rep_dev, rep, 0));
    if (halted) {
        const uint32_t one = 1;
        CK(cudaMemcpy(&ctl->halt_gen, &one, 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(&ctl->release, &one, 4, cudaMemcpyHostToDevice));
    }
    memset(&spec, 0, sizeof(spec));
    spec.grid = {c->grid.x, c->grid.y, c->grid.z};
    corun_gpu_desc_h100(&g);
    g.sm_count = nsm;
    corun__ctl_init(&ch, &spec, per_sm, &g, 10000, g_chunk_max, true);
    memset(&req, 0, sizeof(req));
    req.nworkers = std::min(per_sm * nsm, tasks);
    corun__ctl_launch(&ch, &req, 0, nsm - 1, &wa);
    wa.ctl = ctl;
    wa.report = rep_dev;
    wa.primary = tasks;
    wa.grid = 1;
    wa.seq = 1;
    std::vector<void *> args(c->argv.size() + 1);
    args[0] = &wa;
    for (size_t i = 0; i < c->argv.size(); i++) {
        args[i + 1] = c->argv[i];
    }
    CK(cudaLaunchKernel(c->grid_form, dim3(tasks), c->block, args.data(), c->smem, s));
    CK(cudaStreamSynchronize(s));
    const uint32_t state = CORUN_REPORT_STATE(rep->tag);
    /* halted with every task preset (one wave), it runs them all */
    const bool ok = halted && wa.preset < tasks
                        ? state == CORUN_REPORT_RELEASED && rep->done == wa.preset
                        : state == CORUN_REPORT_FINISHED && rep->done == tasks;
    CK(cudaFreeHost(rep));
    CK(cudaFree(ctl));
    return ok ? state : CORUN_REPORT_NONE;
}

static int mode_sanitize(std::vector<Case *> &cases)
{
    corun_ctx_opts o = {"cuda", "manual"};
    corun_ctx *ctx;
    cudaStream_t s;
    int failures = 0;
    const char *env = getenv("SANITIZE_STALL_S");
    const double limit_s = env != nullptr && atof(env) > 0 ? atof(env) : 60;
    SanitizeWatch w;

    CR(corun_ctx_create(&o, &ctx));
    w.ctx = ctx;
    std::thread dog([&w, limit_s] {
        for (;;) {
            sleep_us(200000);
            std::unique_lock<std::mutex> l(w.mu);
            if (w.stop) {
                return;
            }
            const bool stuck = !w.where.empty() && now_us() - w.since > limit_s * 1e6;
            l.unlock();
            if (stuck) {
                sanitize_stuck(w, limit_s);
            }
        }
    });
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (Case *c : cases) {
        corun_kernel *k = register_case(ctx, c);
        std::vector<uint8_t> ref = run_plain(c, s);
        /* through the scheduler, then stream-ordered (the direct path), then
         * stream-ordered on the whole GPU: in the grid form where
         * CORUN_GRID_TASK_US lets it, the stream-ordered launch before it
         * having measured the kernel */
        static const char *const path_name[3] = {"scheduler", "stream", "grid"};
        for (int path = 0; path < 3; path++) {
            const std::string at = std::string(c->name) + " " + path_name[path] + ": ";
            corun_launch_attr a;
            corun_job *j = nullptr;
            double rel;
            memset(&a, 0, sizeof(a));
            a.capsm = path == 2 ? 0 : 4;
            c->poison(s);
            CK(cudaStreamSynchronize(s));
            const corun_dim3 g = {c->grid.x, c->grid.y, c->grid.z};
            const corun_dim3 b = {c->block.x, c->block.y, c->block.z};
            w.at(at + "launch", nullptr);
            if (path == 0) {
                CR(corun_launch(ctx, k, g, b, (uint32_t)c->smem, c->argv.data(), &a, &j));
            } else {
                CR(corun_launch_stream(ctx, k, g, b, (uint32_t)c->smem, c->argv.data(), &a,
                                       (void *)s, &j));
            }
            w.at(at + "preempt", j);
            if (job_ok(corun_job_preempt(j))) {
                w.at(at + "resume on 2", j);
                if (job_ok(corun_job_resume(j, 2))) {
                    w.at(at + "resize to 6", j);
                    (void)job_ok(corun_job_resize(j, 6));
                }
            }
            w.at(at + "wait", j);
            CR(corun_job_wait(j, -1));
            w.at(at + "release", nullptr);
            corun_job_release(j);
            w.at(at + "stream synchronize", nullptr);
            CK(cudaStreamSynchronize(s));
            w.at("", nullptr);
            size_t bad = c->compare(c->fetch(), ref, 1e-6, &rel);
            printf("%-13s %-9s %s\n", c->name, path_name[path], bad ? "FAIL" : "ok");
            failures += bad != 0;
        }
        if (c->grid_form != nullptr) {
            double rel;
            w.at(std::string(c->name) + " grid form, launched here", nullptr);
            c->poison(s);
            const bool ran = sanitize_grid(c, s, false) == CORUN_REPORT_FINISHED;
            const size_t bad = c->compare(c->fetch(), ref, 1e-6, &rel);
            const bool held = sanitize_grid(c, s, true) != CORUN_REPORT_NONE;
            w.at("", nullptr);
            printf("%-13s %-9s %s\n", c->name, "gridform",
                   ran && bad == 0 && held ? "ok" : "FAIL");
            failures += !(ran && bad == 0 && held);
        }
    }
    printf("sanitize: all cases ran, %llu launches of them in the grid form; closing the context\n",
           (unsigned long long)corun_ctx_grid_launches(ctx));
    w.at("closing the context", nullptr);
    corun_ctx_destroy(ctx);
    {
        std::lock_guard<std::mutex> l(w.mu);
        w.stop = true;
        w.where.clear();
    }
    dog.join();
    printf("sanitize: context closed\n");
    return failures;
}

static void usage()
{
    printf("usage: corun-gpucheck MODE [--json FILE] [--events N] [--reps N] [--trials N]\n"
           "                      [--seed N] [--quick]\n"
           "      --budget US: chunk latency budget of direct launches (default 10)\n"
           "      --chunk-max N: at most N tasks per claim (default 1024)\n"
           "      --kernel NAME[,NAME...]: only these of the eight kernels (overhead, resume, ...)\n"
           "      --budgets US,US,...: the budgets overhead and latency measure\n"
           "                       (default 5,10,20,50 for overhead, 10,20 for latency)\n"
           "      --no-void: halts of ahead runs write halt_gen only, as before the void\n"
           "                 (corun_ctl.h; for same-run A/Bs of the halt latency)\n"
           "      --stream: correctness through corun_launch_stream (the direct path)\n"
           "      --grid: the same on the whole GPU, in the grid form (with CORUN_GRID_TASK_US=0)\n"
           "modes: occupancy correctness overhead latency resume spatial dispatch hostfunc stream\n"
           "       sanitize chain hostcost lsalone queued threads capture xhalt\n"
           "correctness needs the CORUN_TASK_HITS build (corun-gpucheck-hits).\n"
           "CORUN_AHEAD=0|1|2 picks the entry of kernels with an ahead entry as libcorun\n"
           "does: never, where their last run's task time says (default), always.\n"
           "SANITIZE_STALL_S (default 60): sanitize fails (exit 4) when one call of a case\n"
           "has not returned after that many seconds, printing the job's state and every\n"
           "thread's backtrace.\n");
}

/* A crash (e.g. under compute-sanitizer) leaves a backtrace in the log
 * instead of an empty file. */
static void on_fatal(int sig)
{
    void *frames[64];
    int n = backtrace(frames, 64);
    static const char msg[] = "corun-gpucheck: fatal signal; backtrace:\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    backtrace_symbols_fd(frames, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The command line's settings (besides the g_ ones). */
struct Options {
    const char *json_path = nullptr;
    unsigned events = 1000;
    int reps = 15, trials = 30;
    uint64_t seed = 1;
    bool quick = false;
    const char *only = nullptr; /* --kernel NAME[,NAME...] */
};

/* --budgets US,US,...: both modes' budgets; false (with a message) when
 * one is not a number of microseconds 1..100000. */
static bool parse_budgets(const char *arg)
{
    std::vector<double> v;
    std::string list = arg;
    size_t at = 0;
    while (at <= list.size()) {
        size_t end = list.find(',', at);
        std::string item = list.substr(at, end == std::string::npos ? end : end - at);
        char *stop = nullptr;
        double b = strtod(item.c_str(), &stop);
        if (item.empty() || *stop != '\0' || !(b >= 1 && b <= 100000)) {
            fprintf(stderr, "corun-gpucheck: --budgets wants microseconds 1..100000, "
                            "comma-separated (got '%s')\n", list.c_str());
            return false;
        }
        v.push_back(b);
        if (end == std::string::npos) {
            break;
        }
        at = end + 1;
    }
    g_budgets_overhead = g_budgets_latency = v;
    return true;
}

/* The options after the mode into o and the g_ settings; false when one is
 * wrong (after a message or the usage). */
static bool parse_options(int argc, char **argv, Options &o)
{
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--json" && i + 1 < argc) {
            o.json_path = argv[++i];
        } else if (a == "--events" && i + 1 < argc) {
            o.events = (unsigned)atoi(argv[++i]);
        } else if (a == "--reps" && i + 1 < argc) {
            o.reps = atoi(argv[++i]);
        } else if (a == "--no-void") {
            g_void = false;
        } else if (a == "--stream") {
            g_stream = true;
        } else if (a == "--grid") {
            g_stream = g_grid = true;
        } else if (a == "--trials" && i + 1 < argc) {
            o.trials = atoi(argv[++i]);
        } else if (a == "--seed" && i + 1 < argc) {
            o.seed = strtoull(argv[++i], nullptr, 10);
        } else if (a == "--budget" && i + 1 < argc) {
            g_budget_us = atof(argv[++i]);
        } else if (a == "--chunk-max" && i + 1 < argc) {
            long v = atol(argv[++i]);
            if (v < 1 || v > 1 << 20) {
                fprintf(stderr, "corun-gpucheck: --chunk-max must be 1..1048576\n");
                return false;
            }
            g_chunk_max = (uint32_t)v;
        } else if (a == "--budgets" && i + 1 < argc) {
            if (!parse_budgets(argv[++i])) {
                return false;
            }
        } else if (a == "--kernel" && i + 1 < argc) {
            o.only = argv[++i];
        } else if (a == "--quick") {
            o.quick = true;
        } else {
            usage();
            return false;
        }
    }
    return true;
}

/* Keeps the cases named in only (NAME[,NAME...]) and deletes the others;
 * false (with a message) when a name is no case's. */
static bool keep_cases(std::vector<Case *> &cases, const char *only)
{
    std::vector<std::string> names;
    for (const char *p = only; *p != '\0';) {
        const char *e = strchr(p, ',');
        names.emplace_back(p, e != nullptr ? (size_t)(e - p) : strlen(p));
        p = e != nullptr ? e + 1 : p + strlen(p);
    }
    std::vector<Case *> keep;
    for (Case *c : cases) {
        bool want = false;
        for (const std::string &n : names) {
            want = want || n == c->name;
        }
        if (want) {
            keep.push_back(c);
        } else {
            delete c;
        }
    }
    for (const std::string &n : names) {
        bool found = false;
        for (Case *c : keep) {
            found = found || n == c->name;
        }
        if (!found) {
            fprintf(stderr, "corun-gpucheck: no kernel named '%s'\n", n.c_str());
            return false;
        }
    }
    cases = keep;
    return true;
}

/* Whether the mode runs the eight kernels of make_cases. */
static bool mode_wants_cases(const char *mode)
{
    static const char *const no_cases[] = {"latency", "spatial", "dispatch", "hostfunc",
                                           "stream",  "chain",   "hostcost", "lsalone",
                                           "queued",  "threads", "capture"};
    bool want_cases = true;
    for (const char *m : no_cases) {
        want_cases = want_cases && strcmp(mode, m) != 0;
    }
    return want_cases;
}

/* Runs the mode: its failures, or 2 for an unknown one. */
static int run_mode(const char *mode, std::vector<Case *> &cases, const Options &o)
{
    bool quick = o.quick;
    int trials = o.trials;

    if (!strcmp(mode, "occupancy")) {
        return mode_occupancy(cases);
    } else if (!strcmp(mode, "correctness")) {
        return mode_correctness(cases, quick ? 10 : o.events, o.seed, quick);
    } else if (!strcmp(mode, "overhead")) {
        return mode_overhead(cases, o.reps);
    } else if (!strcmp(mode, "latency")) {
        return mode_latency(trials);
    } else if (!strcmp(mode, "xhalt")) {
        return mode_xhalt(quick ? 5 : std::max(trials, 200));
    } else if (!strcmp(mode, "resume")) {
        return mode_resume(cases, quick ? 2 : 10);
    } else if (!strcmp(mode, "spatial")) {
        return mode_spatial(quick ? 3 : trials);
    } else if (!strcmp(mode, "dispatch")) {
        return mode_dispatch(quick ? 3 : trials);
    } else if (!strcmp(mode, "stream")) {
        return mode_stream(quick ? 2 : 8);
    } else if (!strcmp(mode, "hostfunc")) {
        return mode_hostfunc(quick ? 3 : trials);
    } else if (!strcmp(mode, "chain")) {
        return mode_chain(quick ? 200 : 10000, quick ? 1 : 5);
    } else if (!strcmp(mode, "hostcost")) {
        return mode_hostcost(quick ? 1 : 5);
    } else if (!strcmp(mode, "lsalone")) {
        return mode_lsalone(quick ? 5 : 100);
    } else if (!strcmp(mode, "queued")) {
        return mode_queued(quick ? 3 : 24);
    } else if (!strcmp(mode, "threads")) {
        return mode_threads(quick ? 20 : 250);
    } else if (!strcmp(mode, "capture")) {
        return mode_capture();
    } else if (!strcmp(mode, "sanitize")) {
        return mode_sanitize(cases);
    }
    usage();
    return 2;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, nullptr, _IOLBF, 0);
    signal(SIGSEGV, on_fatal);
    signal(SIGBUS, on_fatal);
    signal(SIGABRT, on_fatal);
    Options o;

    if (!strcmp(mode, "xhalt-peer")) { /* started by xhalt: its pipes and the mirrors' file */
        return argc == 5 ? xhalt_peer(atoi(argv[2]), atoi(argv[3]), atoi(argv[4])) : 2;
    }
    if (!parse_options(argc, argv, o)) {
        return 2;
    }
    if (!strcmp(mode, "-h") || !strcmp(mode, "--help") || mode[0] == '\0') {
        usage();
        return mode[0] ? 0 : 2;
    }

    if (o.json_path) {
        json = fopen(o.json_path, "w");
        if (!json) {
            perror(o.json_path);
            return 2;
        }
        fprintf(json, "[");
        json_first = 1;
    }
    CK(cudaFree(0));
    bool sanitize = !strcmp(mode, "sanitize");
    std::vector<Case *> cases;
    if (mode_wants_cases(mode)) {
        /* sizes: tiny for sanitizers and --quick, medium for correctness
         * (outputs are fetched and compared after every run), large for
         * the benchmarks */
        int scale = sanitize || o.quick ? 0 : !strcmp(mode, "correctness") ? 1 : 2;
        cases = make_cases(scale);
        if (o.only && !keep_cases(cases, o.only)) {
            return 2;
        }
    }
    int rc = run_mode(mode, cases, o);
    for (Case *c : cases) {
        delete c;
    }
    if (json) {
        fprintf(json, "\n]\n");
        fclose(json);
    }
    CK(cudaDeviceSynchronize());
    return rc ? 1 : 0;
}
