/*
 * cuda_backend.c — the backend interface on a real GPU. See cuda_backend.h.
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "backends/cuda/cuda_api.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cupti_meter.h"
#include "backends/cuda/synth.h"
#include "core/gpu.h"
#include "corun/corun_chunk.h"
#include "corun/corun_ctl.h"

#define NSTREAMS 32            /* per priority level */
#define CTL_SLOTS 1024         /* control blocks in the slab */
#define MAX_PARAMS 64
#define SYNTH_CAL_ITERS 20000
#define SYNTH_CAL_CACHE 32
#define SYNTH_MEM_BYTES (512ull << 20) /* DRAM traffic of synthetic kernels: ~10x L2 */
#define SYNTH_PEAK_LOADS 256           /* per thread in the bandwidth probe: 1 MiB a block */

_Static_assert(sizeof(corun_ctl) == 3 * CORUN_CTL_LINE, "control block layout");
_Static_assert(offsetof(corun_ctl, next) == CORUN_CTL_LINE, "control block layout");

/*
 * Eager module loading, unless the user chose otherwise. With lazy loading
 * (CUDA's default since 12.2) the first use of a kernel loads it, and that
 * load waits for the context to be idle (CUDA Programming Guide, Lazy
 * Loading, "Potential hazards"). A stream-ordered corun launch leaves the
 * user's stream waiting on the GPU for a completion word that corun's
 * scheduler thread writes; if the application meanwhile touches a kernel
 * for the first time, the load waits for that stream and the scheduler
 * thread waits for the load: a deadlock (seen on the H100 as gpu/apps
 * programs with more than one kernel hanging). Setting the variable before
 * the runtime starts, from a constructor of libcorun, loads every kernel at
 * start-up instead. CUDA_MODULE_LOADING=LAZY set by the user is kept.
 */
__attribute__((constructor)) static void eager_loading(void)
{
    (void)setenv("CUDA_MODULE_LOADING", "EAGER", 0);
}

/* ---- process-wide device state: context, module, calibration ------------- */

extern const unsigned char *corun__synth_fatbin(size_t *len);

typedef struct synth_cal {
    uint32_t threads, smem;
    double it_per_ns;          /* iterations per ns of one block at full occupancy */
} synth_cal;

typedef struct device_state {
    const corun__cu *cu;
    CUdevice dev;
    CUcontext ctx;
    CUmodule synth_mod;
    CUfunction synth_plain, synth_worker;
    corun_gpu_desc desc;
    char name[128];
    int prio_lo, prio_hi;       /* least and greatest stream priority */
    pthread_mutex_t cal_mu;         /* everything below up to error */
    synth_cal cal[SYNTH_CAL_CACHE];
    size_t ncal;
    /* The synthetic kernels' DRAM buffer and the device's peaks, measured
     * once: FMA and streaming probes, timed with events (counted) and, where
     * the hardware counters can be read, with CUPTI (meter). */
    CUdeviceptr synth_mem;
    CUstream probe;                                /* calibrations, probes, meter */
    int peaks_ok;
    double peak_flop_ns, peak_byte_ns;             /* counted, per ns */
    int meter_ok, meter_tried;                     /* the counters can be read */
    char meter_why[256];                           /* why they cannot */
    double meter_flop_ns, meter_byte_ns;           /* peaks through the meter */
    char error[256];
    int ok;
} device_state;

static device_state dstate = {.cal_mu = PTHREAD_MUTEX_INITIALIZER};
static atomic_uint synth_seed = 1; /* task durations differ per kernel, repeat per process */
static atomic_uint order_seq = 0;  /* stream-ordered launches, in order */
static pthread_once_t dstate_once = PTHREAD_ONCE_INIT;

/* True if r is success; otherwise writes "CALL failed: NAME: text" to why. */
static bool cu_ok(const corun__cu *cu, CUresult r, const char *call, char *why, size_t why_len)
{
    if (r != CUDA_SUCCESS) {
        char buf[160];
        snprintf(why, why_len, "%s failed: %s", call, corun__cu_describe(cu, r, buf, sizeof(buf)));
        return false;
    }
    return true;
}

#define CU_OK(cu, call, why, why_len) cu_ok((cu), (call), #call, (why), (why_len))

static void device_init(void)
{
    device_state *d = &dstate;
    const corun__cu *cu = corun__cu_load(d->error, sizeof(d->error));
    int count = 0, v;
    size_t fat_len;
    const unsigned char *fat = corun__synth_fatbin(&fat_len);

    if (cu == NULL) {
        return;
    }
    d->cu = cu;
    if (!CU_OK(cu, cu->cuDeviceGetCount(&count), d->error, sizeof(d->error))) {
        return;
    }
    if (count == 0) {
        snprintf(d->error, sizeof(d->error), "the NVIDIA driver sees no GPU");
        return;
    }
    if (!CU_OK(cu, cu->cuDeviceGet(&d->dev, 0), d->error, sizeof(d->error)) ||
        !CU_OK(cu, cu->cuDevicePrimaryCtxRetain(&d->ctx, d->dev), d->error, sizeof(d->error)) ||
        !CU_OK(cu, cu->cuCtxSetCurrent(d->ctx), d->error, sizeof(d->error))) {
        return;
    }
    (void)cu->cuDeviceGetName(d->name, sizeof(d->name), d->dev);
    (void)cu->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
    if (v < 7) {
        snprintf(d->error, sizeof(d->error), "%.100s has compute capability %d.x; corun needs 7.0+",
                 d->name, v);
        return;
    }
    corun_gpu_desc_h100(&d->desc);
#define ATTR(field, attr) \
    if (cu->cuDeviceGetAttribute(&v, attr, d->dev) == CUDA_SUCCESS) d->desc.field = (uint32_t)v
    ATTR(sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    ATTR(max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    ATTR(max_blocks_per_sm, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    ATTR(regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    ATTR(smem_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    ATTR(max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    ATTR(regs_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    ATTR(smem_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    ATTR(smem_per_block_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    ATTR(smem_reserved_per_block, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
#undef ATTR
    (void)cu->cuCtxGetStreamPriorityRange(&d->prio_lo, &d->prio_hi);
    if (!CU_OK(cu, cu->cuModuleLoadData(&d->synth_mod, fat), d->error, sizeof(d->error)) ||
        !CU_OK(cu, cu->cuModuleGetFunction(&d->synth_plain, d->synth_mod, "corun_synth"), d->error,
               sizeof(d->error)) ||
        !CU_OK(cu, cu->cuModuleGetFunction(&d->synth_worker, d->synth_mod, "corun_synth__corun"),
               d->error, sizeof(d->error))) {
        return;
    }
    if (!CU_OK(cu, cu->cuStreamCreateWithPriority(&d->probe, CU_STREAM_NON_BLOCKING, d->prio_lo),
               d->error, sizeof(d->error))) {
        return;
    }
    (void)fat_len;
    d->ok = 1;
}

/* ---- the backend ---------------------------------------------------------- */

typedef struct launch_rec {
    struct cuda_backend *b;
    corun__bkernel *k;
    uint64_t cookie;
    int stream;                 /* index into streams[] */
    CUevent done;               /* recorded after the kernel (blocking sync) */
    struct launch_rec *next;    /* in the pending or the finished queue */
} launch_rec;

#define MAX_WAITERS 256

typedef struct cuda_backend {
    corun__backend be;
    device_state *d;
    corun__settings set;
    CUstream ctl;                       /* signals, highest priority */
    CUstream streams[2 * NSTREAMS];     /* [0, NSTREAMS) normal, then high priority */
    uint32_t load[2 * NSTREAMS];        /* launches in flight per stream */
    CUdeviceptr slab;                   /* CTL_SLOTS control blocks */
    corun_ctl *staging;                 /* pinned, one per slot */
    uint8_t slot_used[CTL_SLOTS];
    corun_ctl *readback;                /* pinned, for progress reads */
    pthread_mutex_t mu;                 /* queues, loads, inflight counts, waiters */
    launch_rec *done_head, *done_tail;  /* finished, not yet reported by poll */
    launch_rec *pend_head, *pend_tail;  /* launched, no waiter has taken it yet */
    pthread_cond_t work;                /* a launch is pending, or stopping */
    pthread_t waiters[MAX_WAITERS];
    int nwaiters, idle, stopping;
    CUevent free_events[MAX_WAITERS];   /* recycled completion events */
    int nfree_events;
    int efd;
} cuda_backend;

struct corun__bkernel {
    corun__kspec spec;
    const corun__cuda_code *code;
    CUfunction plain, worker;
    CUfunction ahead_fn;                /* the ahead entry, where spec.ahead and it keeps
                                           the worker's occupancy; else NULL */
    uint32_t slot;
    CUdeviceptr ctl;
    CUevent ready;                      /* control block written; launches wait on it */
    uint64_t tasks;
    uint32_t per_sm;
    uint32_t inflight;                  /* under b->mu */
    void *args;                         /* packed parameter values */
    size_t nparams;
    size_t offset[MAX_PARAMS];
    void *params[MAX_PARAMS + 1];       /* [0] = &wa for the worker, then user params */
    corun_worker_arg wa;
    uint32_t launches;                  /* worker launches made */
    bool signalled;                     /* a signal word was written: no preset start */
    bool voided;                        /* a halt voided the ahead claims (next holds
                                           CORUN_AHEAD_VOID until the rewind) */
    /* stream order (corun_launch_stream) */
    bool ordered;
    bool released;                      /* complete_seq written */
    uint32_t seq;
    CUevent before;                     /* user stream's work before the launch */
    CUevent after;                      /* user stream has passed its wait on us */
};

/* A completion event from the free list, or a new one. Under b->mu. */
static CUresult take_event(cuda_backend *b, CUevent *ev)
{
    if (b->nfree_events > 0) {
        *ev = b->free_events[--b->nfree_events];
        return CUDA_SUCCESS;
    }
    return b->d->cu->cuEventCreate(ev, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING);
}

/* Returns a completion event to the free list. Under b->mu. */
static void give_event(cuda_backend *b, CUevent ev)
{
    if (b->nfree_events < MAX_WAITERS) {
        b->free_events[b->nfree_events++] = ev;
    } else {
        (void)b->d->cu->cuEventDestroy(ev);
    }
}

static cuda_backend *cb(corun__backend *be)
{
    return (cuda_backend *)be;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cuda_now(corun__backend *be)
{
    return mono_ns();
}

static int set_current(cuda_backend *b)
{
    return b->d->cu->cuCtxSetCurrent(b->d->ctx) == CUDA_SUCCESS ? CORUN_OK : CORUN_ECUDA;
}

/* One plain launch of a synthetic kernel: the callback the meter runs. */
typedef struct synth_launch {
    cuda_backend *b;
    CUfunction fn;
    unsigned grid_x, grid_y, grid_z;
    uint32_t bx, by, bz, smem;
    void **params;
} synth_launch;

static int synth_launch_sync(void *arg)
{
    const synth_launch *l = arg;
    const corun__cu *cu = l->b->d->cu;
    CUstream s = l->b->d->probe;

    if (cu->cuLaunchKernel(l->fn, l->grid_x, l->grid_y, l->grid_z, l->bx, l->by, l->bz, l->smem,
                           s, l->params, NULL) != CUDA_SUCCESS ||
        cu->cuStreamSynchronize(s) != CUDA_SUCCESS) {
        return CORUN_ELAUNCH;
    }
    return CORUN_OK;
}

/* Best GPU time in ns of three timed launches after a warm-up (the clock
 * ramps up on the first). */
static int synth_time(const synth_launch *l, double *ns, char *why, size_t why_len)
{
    const corun__cu *cu = l->b->d->cu;
    CUstream s = l->b->d->probe;
    CUevent e0 = NULL, e1 = NULL;
    float ms = 0, best = 0;
    int rep, rc = CORUN_ECUDA;

    if (!CU_OK(cu, cu->cuEventCreate(&e0, CU_EVENT_DEFAULT), why, why_len) ||
        !CU_OK(cu, cu->cuEventCreate(&e1, CU_EVENT_DEFAULT), why, why_len)) {
        goto out_destroy_events;
    }
    for (rep = 0; rep < 4; rep++) {
        if (!CU_OK(cu, cu->cuEventRecord(e0, s), why, why_len) ||
            !CU_OK(cu, cu->cuLaunchKernel(l->fn, l->grid_x, l->grid_y, l->grid_z, l->bx, l->by,
                                          l->bz, l->smem, s, l->params, NULL),
                   why, why_len) ||
            !CU_OK(cu, cu->cuEventRecord(e1, s), why, why_len) ||
            !CU_OK(cu, cu->cuEventSynchronize(e1), why, why_len) ||
            !CU_OK(cu, cu->cuEventElapsedTime(&ms, e0, e1), why, why_len)) {
            goto out_destroy_events;
        }
        if (rep > 0 && (best == 0 || ms < best)) {
            best = ms;
        }
    }
    *ns = (double)best * 1e6;
    rc = CORUN_OK;
out_destroy_events:
    if (e0) {
        (void)cu->cuEventDestroy(e0);
    }
    if (e1) {
        (void)cu->cuEventDestroy(e1);
    }
    return rc;
}

/* Iterations per ns of one synthetic block at full occupancy, measured once
 * per (threads, smem) for the process. Under d->cal_mu. */
static int synth_calibrate_locked(cuda_backend *b, uint32_t threads, uint32_t smem, double *out,
                                  char *why, size_t why_len)
{
    device_state *d = b->d;
    const corun__cu *cu = d->cu;
    corun_synth_args a;
    CUdeviceptr sink = 0;
    int per_sm = 0, rc = CORUN_ECUDA;
    const unsigned waves = 4;
    void *params[1] = {&a};
    synth_launch l;
    double ns = 0;
    size_t i;

    for (i = 0; i < d->ncal; i++) {
        if (d->cal[i].threads == threads && d->cal[i].smem == smem) {
            *out = d->cal[i].it_per_ns;
            return CORUN_OK;
        }
    }
    if (!CU_OK(cu, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, d->synth_plain,
                                                                    (int)threads, smem),
               why, why_len) ||
        !CU_OK(cu, cu->cuMemAlloc(&sink, 4096), why, why_len)) {
        goto out_free_sink;
    }
    memset(&a, 0, sizeof(a));
    a.a_it = SYNTH_CAL_ITERS;
    a.fma_share = 1.0f;
    a.sink = (float *)(uintptr_t)sink;
    l = (synth_launch){b, d->synth_plain, waves * (unsigned)per_sm * d->desc.sm_count, 1, 1,
                       threads, 1, 1, smem, params};
    rc = synth_time(&l, &ns, why, why_len);
    if (rc != CORUN_OK) {
        goto out_free_sink;
    }
    *out = (double)SYNTH_CAL_ITERS * waves / ns;
    if (d->ncal < SYNTH_CAL_CACHE) {
        d->cal[d->ncal++] = (synth_cal){threads, smem, *out};
    }
out_free_sink:
    if (sink) {
        (void)cu->cuMemFree(sink);
    }
    return rc;
}

static int synth_calibrate(cuda_backend *b, uint32_t threads, uint32_t smem, double *out,
                           char *why, size_t why_len)
{
    int rc;

    pthread_mutex_lock(&b->d->cal_mu);
    rc = synth_calibrate_locked(b, threads, smem, out, why, why_len);
    pthread_mutex_unlock(&b->d->cal_mu);
    return rc;
}

/*
 * After a CUPTI measurement: one small host-to-device copy, read back.
 * Without it, on the H100 (driver 580, CUDA 13.0; the H200 showed the same
 * symptom, not traced there), the first control block written after a
 * measurement arrived as zeros although the copy and its stream reported
 * success: the next scheduled kernel's workers read task_limit 0 and SM
 * range 0..0, left at once, and the kernel stayed paused with nothing done
 * (what `corun profile` hung on). Any such copy
 * right after the measurement -- pinned or pageable source, any stream, 128
 * or 384 bytes -- made every later one arrive; synchronising the streams, a
 * sleep or an allocation did not (bench/results/h100-2026-11-22-cupti-copy.txt).
 * The cause inside the driver or CUPTI is not known; the copy is checked,
 * so should it ever not arrive, the measurement fails instead of the runs
 * after it.
 */
static int meter_settle(device_state *d, char *why, size_t why_len)
{
    const corun__cu *cu = d->cu;
    uint32_t put[32], got[32];
    CUdeviceptr dv = 0;
    int i, rc = CORUN_OK;

    for (i = 0; i < 32; i++) {
        put[i] = 0xc0de0000u + (uint32_t)i;
    }
    memset(got, 0, sizeof(got));
    if (!CU_OK(cu, cu->cuMemAlloc(&dv, sizeof(put)), why, why_len)) {
        return CORUN_ECUDA;
    }
    if (!CU_OK(cu, cu->cuMemcpyHtoDAsync(dv, put, sizeof(put), d->probe), why, why_len) ||
        !CU_OK(cu, cu->cuStreamSynchronize(d->probe), why, why_len) ||
        !CU_OK(cu, cu->cuMemcpyDtoH(got, dv, sizeof(got)), why, why_len)) {
        rc = CORUN_ECUDA;
    } else if (memcmp(put, got, sizeof(put)) != 0) {
        snprintf(why, why_len, "after the CUPTI measurement a host-to-device copy did not "
                 "arrive (read back %08x, wrote %08x); measure with CORUN_PROFILE_COUNTERS=0",
                 got[0], put[0]);
        rc = CORUN_ECUDA;
    }
    (void)cu->cuMemFree(dv);
    return rc;
}

/* Profiles one launch with the CUPTI meter. The profiler is enabled only
 * for the measurement: left on, it would intercept every later launch of
 * the process (the scheduled runs that follow a profile). */
static int meter_run(device_state *d, synth_launch *l, corun__meter_sample *out, char *why,
                     size_t why_len)
{
    corun__meter *m = NULL;
    char settle_why[256];
    int rc = corun__meter_open(d->ctx, &m, why, why_len), rs;

    if (rc == CORUN_OK) {
        rc = corun__meter_measure(m, synth_launch_sync, l, out, why, why_len);
        corun__meter_close(m);
    }
    /* Also after a failed open: it may have profiled its empty range. */
    rs = meter_settle(d, settle_why, sizeof(settle_why));
    if (rc == CORUN_OK && rs != CORUN_OK) {
        snprintf(why, why_len, "%s", settle_why);
        rc = rs;
    }
    return rc;
}

/*
 * The device's peaks, once per process, under d->cal_mu: an FMA-only and a
 * streaming-only synthetic kernel, 256 threads, four full waves. Counted
 * peaks divide the operations and bytes the kernels are known to perform by
 * their event-timed duration; the meter's divide what the hardware counters
 * saw by the kernel's GPU time. Both probes use the synthetic kernel's own
 * instruction mix and access pattern, so "peak" means what this code can
 * reach on this device, which is what a share of it should be compared with.
 */
static int synth_peaks_locked(cuda_backend *b, char *why, size_t why_len)
{
    device_state *d = b->d;
    const corun__cu *cu = d->cu;
    const uint32_t threads = 256;
    const unsigned waves = 4;
    corun_synth_args fma, stream;
    void *pf[1] = {&fma}, *ps[1] = {&stream};
    synth_launch lf, ls;
    double it_per_ns, ns = 0, blocks;
    int per_sm = 0, rc;

    if (d->peaks_ok) {
        return CORUN_OK;
    }
    if (d->synth_mem == 0) {
        if (!CU_OK(cu, cu->cuMemAlloc(&d->synth_mem, SYNTH_MEM_BYTES), why, why_len) ||
            !CU_OK(cu, cu->cuMemsetD8(d->synth_mem, 0, SYNTH_MEM_BYTES), why, why_len)) {
            d->synth_mem = 0;
            return CORUN_ECUDA;
        }
    }
    rc = synth_calibrate_locked(b, threads, 0, &it_per_ns, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (!CU_OK(cu, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, d->synth_plain,
                                                                    (int)threads, 0),
               why, why_len)) {
        return CORUN_ECUDA;
    }
    blocks = (double)waves * per_sm * d->desc.sm_count;
    memset(&fma, 0, sizeof(fma));
    fma.a_it = SYNTH_CAL_ITERS;
    fma.fma_share = 1.0f;
    fma.sink = (float *)(uintptr_t)d->synth_mem;
    stream = fma;
    stream.a_it = 1.0f; /* one iteration: no FMA, SYNTH_PEAK_LOADS loads */
    stream.fma_share = 0.0f;
    stream.loads_per_it = SYNTH_PEAK_LOADS;
    stream.mem = (const void *)(uintptr_t)d->synth_mem;
    stream.mem_mask = (uint32_t)(SYNTH_MEM_BYTES / 16 - 1);
    lf = (synth_launch){b, d->synth_plain, (unsigned)blocks, 1, 1, threads, 1, 1, 0, pf};
    ls = lf;
    ls.params = ps;
    /* 2 FMAs per iteration and thread, 2 operations each */
    d->peak_flop_ns = it_per_ns * blocks / waves * threads * 4.0;
    rc = synth_time(&ls, &ns, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    d->peak_byte_ns = blocks * threads * SYNTH_PEAK_LOADS * 16.0 / ns;
    if (!d->meter_tried && b->set.profile_counters == 0) {
        snprintf(d->meter_why, sizeof(d->meter_why), "CORUN_PROFILE_COUNTERS=0");
    } else if (!d->meter_tried) {
        corun__meter_sample f, m;
        d->meter_tried = 1;
        rc = meter_run(d, &lf, &f, d->meter_why, sizeof(d->meter_why));
        if (rc == CORUN_OK) {
            rc = meter_run(d, &ls, &m, d->meter_why, sizeof(d->meter_why));
        }
        if (rc == CORUN_OK && f.gpu_ns > 0 && m.gpu_ns > 0 && f.flops > 0 && m.dram_bytes > 0) {
            d->meter_flop_ns = f.flops / f.gpu_ns;
            d->meter_byte_ns = m.dram_bytes / m.gpu_ns;
            d->meter_ok = 1;
        } else if (rc == CORUN_OK) {
            snprintf(d->meter_why, sizeof(d->meter_why),
                     "the counters saw no work in the peak probes (%.3g FLOP, %.3g bytes)",
                     f.flops, m.dram_bytes);
        }
    }
    d->peaks_ok = 1;
    return CORUN_OK;
}

/* Mean iterations of a task of the synthetic kernel (as corun__synth_iters
 * draws them, ignoring the truncations). */
static double synth_mean_iters(const corun_synth_args *a)
{
    return a->dist == CORUN_DIST_UNIFORM ? 0.5 * ((double)a->a_it + a->b_it) : (double)a->a_it;
}

/*
 * DRAM traffic of a synthetic kernel that declares it: mem_bw (a share of the
 * peak at full occupancy) becomes bytes per task, spread over the task's
 * iterations; mem_frac of the iterations leave the FMA chain to make room.
 * On the GPU a task then takes about task_ns only while the bandwidth it
 * asks for is there; with co-runners that also stream, it takes longer,
 * which is the interference Slate's pairing avoids.
 */
static int synth_memory(cuda_backend *b, const corun__kspec *spec, uint32_t threads, uint32_t smem,
                        double it_per_ns, corun_synth_args *a, char *why, size_t why_len)
{
    device_state *d = b->d;
    int per_sm = 0, rc;
    double workers;

    pthread_mutex_lock(&d->cal_mu);
    rc = synth_peaks_locked(b, why, why_len);
    pthread_mutex_unlock(&d->cal_mu);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (!CU_OK(d->cu, d->cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, d->synth_plain,
                                                                          (int)threads, smem),
               why, why_len)) {
        return CORUN_ECUDA;
    }
    workers = (double)(per_sm > 0 ? per_sm : 1) * d->desc.sm_count;
    a->fma_share = (float)(1.0 - spec->mem_frac);
    /* bytes per ns of one block = mem_bw * peak / workers; per iteration
     * that is divided by it_per_ns, per thread by threads, per load by 16 */
    a->loads_per_it = (float)(spec->mem_bw * d->peak_byte_ns / (workers * it_per_ns) /
                              (16.0 * threads));
    a->mem = (const void *)(uintptr_t)d->synth_mem;
    a->mem_mask = (uint32_t)(SYNTH_MEM_BYTES / 16 - 1);
    return CORUN_OK;
}

static int take_slot(cuda_backend *b, uint32_t *slot)
{
    uint32_t i;

    for (i = 0; i < CTL_SLOTS; i++) {
        if (!b->slot_used[i]) {
            b->slot_used[i] = 1;
            *slot = i;
            return CORUN_OK;
        }
    }
    return CORUN_EBUSY;
}

/* Packs the parameter values of a user kernel (one pointer per parameter,
 * as cuLaunchKernel takes them) using the plain function's layout. */
static int pack_user_args(cuda_backend *b, corun__bkernel *k, char *why, size_t why_len)
{
    const corun__cu *cu = b->d->cu;
    void *const *user = (void *const *)k->spec.args;
    size_t i, total = 0, off, size;

    for (i = 0; i < MAX_PARAMS; i++) {
        if (cu->cuFuncGetParamInfo(k->plain, i, &off, &size) != CUDA_SUCCESS) {
            break;
        }
        k->offset[i] = off;
        total = off + size;
    }
    k->nparams = i;
    if (k->nparams > 0 && user == NULL) {
        snprintf(why, why_len, "kernel '%s' takes %zu parameters but no arguments were given",
                 k->spec.name, k->nparams);
        return CORUN_EINVAL;
    }
    k->args = calloc(1, total ? total : 1);
    if (k->args == NULL) {
        return CORUN_ENOMEM;
    }
    for (i = 0; i < k->nparams; i++) {
        size_t end = i + 1 < k->nparams ? k->offset[i + 1] : total;
        (void)cu->cuFuncGetParamInfo(k->plain, i, &off, &size);
        if (user[i] == NULL) {
            snprintf(why, why_len, "kernel '%s': argument %zu is NULL", k->spec.name, i);
            return CORUN_EINVAL;
        }
        memcpy((char *)k->args + off, user[i], size);
        (void)end;
    }
    return CORUN_OK;
}

/* The synthetic kernel's parameters for spec (block of `threads`, `smem`
 * bytes of shared memory): its duration distribution in calibrated
 * iterations, its DRAM traffic and FLOP share. */
static int synth_args(cuda_backend *b, const corun__kspec *spec, uint32_t threads, uint32_t smem,
                      corun_synth_args *a, char *why, size_t why_len)
{
    double it_per_ns;
    int rc = synth_calibrate(b, threads, smem, &it_per_ns, why, why_len);

    if (rc != CORUN_OK) {
        return rc;
    }
    memset(a, 0, sizeof(*a));
    a->dist = (uint32_t)spec->task_ns.kind;
    a->a_it = (float)(spec->task_ns.a * it_per_ns);
    a->b_it = (float)(spec->task_ns.b * (spec->task_ns.kind == CORUN_DIST_UNIFORM ||
                                                 spec->task_ns.kind == CORUN_DIST_NORMAL
                                             ? it_per_ns
                                             : 0));
    a->seed = atomic_fetch_add(&synth_seed, 0x9e3779b9u);
    a->fma_share = 1.0f;
    a->ns_per_it = (float)(1.0 / it_per_ns);
    if (spec->mem_bw > 0) {
        rc = synth_memory(b, spec, threads, smem, it_per_ns, a, why, why_len);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    if (spec->compute > 0 && spec->compute < a->fma_share) {
        /* a declared FLOP rate: the FMA chain runs at the peak, so it takes
         * that share of the task, and the clock the rest */
        a->spin_share = a->fma_share - (float)spec->compute;
        a->fma_share = (float)spec->compute;
    }
    return CORUN_OK;
}

static int cuda_kernel_open(corun__backend *be, const corun__kspec *spec, corun__bkernel **out,
                            uint32_t *per_sm, char *why, size_t why_len)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    const corun_gpu_desc *g = &b->d->desc;
    corun__bkernel *k;
    uint64_t tasks = (uint64_t)spec->grid.x * spec->grid.y * spec->grid.z;
    uint32_t threads = spec->block.x * spec->block.y * spec->block.z;
    uint32_t smem = spec->smem_dynamic;
    int occ_plain = 0, occ_worker = 0, rc;
    corun_ctl *st;
    size_t i;

    if (tasks == 0 || threads == 0) {
        snprintf(why, why_len, "kernel '%s': empty grid or block", spec->name);
        return CORUN_EINVAL;
    }
    if (tasks > CORUN_MAX_TASKS) {
        snprintf(why, why_len, "kernel '%s': %llu block-tasks; corun supports up to %llu",
                 spec->name, (unsigned long long)tasks, (unsigned long long)CORUN_MAX_TASKS);
        return CORUN_ERANGE;
    }
    if (threads > g->max_threads_per_block || spec->block.z > 64) {
        snprintf(why, why_len, "kernel '%s': %u threads per block exceeds the limit of %u",
                 spec->name, threads, g->max_threads_per_block);
        return CORUN_ERANGE;
    }
    if (spec->grid.y > 65535 || spec->grid.z > 65535) {
        snprintf(why, why_len, "kernel '%s': grid y and z must be at most 65535", spec->name);
        return CORUN_ERANGE;
    }
    if (set_current(b) != CORUN_OK) {
        return CORUN_ECUDA;
    }
    k = calloc(1, sizeof(*k));
    if (k == NULL) {
        return CORUN_ENOMEM;
    }
    k->spec = *spec;
    k->tasks = tasks;
    if (spec->code == CORUN_CODE_USER) {
        k->code = spec->user;
        if (k->code == NULL || k->code->plain == NULL || k->code->worker == NULL) {
            snprintf(why, why_len, "kernel '%s': null kernel function", spec->name);
            rc = CORUN_EINVAL;
            goto out_free_k;
        }
        k->plain = (CUfunction)k->code->plain;
        k->worker = (CUfunction)k->code->worker;
        rc = pack_user_args(b, k, why, why_len);
        if (rc != CORUN_OK) {
            goto out_free_args;
        }
    } else {
        corun_synth_args *a = calloc(1, sizeof(*a));
        if (a == NULL) {
            rc = CORUN_ENOMEM;
            goto out_free_k;
        }
        k->args = a;
        k->plain = b->d->synth_plain;
        k->worker = b->d->synth_worker;
        smem += spec->shape.smem_static; /* reproduce the scenario's shared memory */
        rc = synth_args(b, spec, threads, smem, a, why, why_len);
        if (rc != CORUN_OK) {
            goto out_free_args;
        }
        k->nparams = 1;
        k->offset[0] = 0;
    }
    k->spec.smem_dynamic = smem;
    if (smem > g->smem_per_block) {
        if (smem > g->smem_per_block_optin) {
            snprintf(why, why_len, "kernel '%s': %u bytes of shared memory exceeds the limit of %u",
                     spec->name, smem, g->smem_per_block_optin);
            rc = CORUN_ERANGE;
            goto out_free_args;
        }
        (void)cu->cuFuncSetAttribute(k->plain, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     (int)smem);
        (void)cu->cuFuncSetAttribute(k->worker, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     (int)smem);
    }
    if (!CU_OK(cu, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ_plain, k->plain,
                                                                    (int)threads, smem),
               why, why_len) ||
        !CU_OK(cu, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ_worker, k->worker,
                                                                    (int)threads, smem),
               why, why_len)) {
        rc = CORUN_ECUDA;
        goto out_free_args;
    }
    if (occ_plain == 0 || occ_worker == 0) {
        snprintf(why, why_len, "kernel '%s': a block of %u threads with %u bytes of shared memory "
                 "does not fit on an SM", spec->name, threads, smem);
        rc = CORUN_ERANGE;
        goto out_free_args;
    }
    if (occ_worker < occ_plain && !(k->code != NULL && k->code->allow_occupancy_loss)) {
        int regs_p = 0, regs_w = 0;
        (void)cu->cuFuncGetAttribute(&regs_p, CU_FUNC_ATTRIBUTE_NUM_REGS, k->plain);
        (void)cu->cuFuncGetAttribute(&regs_w, CU_FUNC_ATTRIBUTE_NUM_REGS, k->worker);
        snprintf(why, why_len,
                 "kernel '%s': the worker form fits %d blocks per SM where the plain kernel fits "
                 "%d (%d vs %d registers); pin it with __maxnreg__(%d) or __launch_bounds__",
                 spec->name, occ_worker, occ_plain, regs_w, regs_p, regs_p);
        rc = CORUN_ERANGE;
        goto out_free_args;
    }
    k->per_sm = (uint32_t)occ_worker;
    if (spec->ahead && k->code != NULL && k->code->ahead != NULL) {
        /* The ahead entry only where it keeps the worker's occupancy (its
         * loop differs; corun-gpucheck occupancy checks gpu-check's own). */
        int occ_ahead = 0;
        CUfunction fa = (CUfunction)k->code->ahead;
        if (smem > g->smem_per_block) {
            (void)cu->cuFuncSetAttribute(fa, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         (int)smem);
        }
        if (cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ_ahead, fa, (int)threads, smem) ==
                CUDA_SUCCESS &&
            occ_ahead == occ_worker) {
            k->ahead_fn = fa;
        }
    }
    rc = take_slot(b, &k->slot);
    if (rc != CORUN_OK) {
        snprintf(why, why_len, "more than %d corun kernels at once", CTL_SLOTS);
        goto out_free_args;
    }
    k->ctl = b->slab + (CUdeviceptr)k->slot * sizeof(corun_ctl);
    st = &b->staging[k->slot];
    memset(st, 0, sizeof(*st));
    st->sm_lo = 0;
    st->sm_hi = g->sm_count - 1;
    st->task_limit = tasks;
    st->budget_ns = corun__budget_ns(&b->set);
    st->chunk_max = (uint32_t)b->set.chunk_max;
    st->workers_per_capsm = k->per_sm;
    st->grid_x = spec->grid.x;
    st->grid_y = spec->grid.y;
    st->grid_z = spec->grid.z;
    st->tasks = tasks;
    st->task_hits = spec->task_hits;
    if (!CU_OK(cu, cu->cuEventCreate(&k->ready, CU_EVENT_DISABLE_TIMING), why, why_len) ||
        !CU_OK(cu, cu->cuMemcpyHtoDAsync(k->ctl, st, sizeof(*st), b->ctl), why, why_len) ||
        !CU_OK(cu, cu->cuEventRecord(k->ready, b->ctl), why, why_len)) {
        rc = CORUN_ECUDA;
        goto out_free_slot;
    }
    if (spec->ordered) {
        /* The user's stream: its earlier work happens before our launches
         * (they wait on `before`); its later work waits on the GPU for
         * complete_seq to reach our number (written by `finished`). The
         * number grows with every ordered launch, so a value left in the
         * slot by an earlier kernel never releases the wait. */
        CUstream us = (CUstream)spec->order_stream;
        k->ordered = true;
        k->seq = atomic_fetch_add(&order_seq, 1) + 1;
        if (!CU_OK(cu, cu->cuEventCreate(&k->before, CU_EVENT_DISABLE_TIMING), why, why_len) ||
            !CU_OK(cu, cu->cuEventCreate(&k->after, CU_EVENT_DISABLE_TIMING), why, why_len) ||
            !CU_OK(cu, cu->cuEventRecord(k->before, us), why, why_len) ||
            !CU_OK(cu, cu->cuStreamWaitValue32(us, k->ctl + offsetof(corun_ctl, complete_seq),
                                               k->seq, CU_STREAM_WAIT_VALUE_GEQ),
                   why, why_len) ||
            !CU_OK(cu, cu->cuEventRecord(k->after, us), why, why_len)) {
            rc = CORUN_ECUDA;
            goto out_free_order;
        }
    }
    k->wa.ctl = (corun_ctl *)(uintptr_t)k->ctl;
    k->wa.grid_x = st->grid_x;
    k->wa.grid_y = st->grid_y;
    k->wa.grid_z = st->grid_z;
    k->wa.workers_per_capsm = st->workers_per_capsm;
    k->params[0] = &k->wa;
    for (i = 0; i < k->nparams; i++) {
        k->params[i + 1] = (char *)k->args + k->offset[i];
    }
    *per_sm = k->per_sm;
    *out = k;
    return CORUN_OK;

out_free_order:
    if (k->before) {
        (void)cu->cuEventDestroy(k->before);
    }
    if (k->after) {
        (void)cu->cuEventDestroy(k->after);
    }
out_free_slot:
    if (k->ready) {
        (void)cu->cuEventDestroy(k->ready);
    }
    b->slot_used[k->slot] = 0;
out_free_args:
    free(k->args);
out_free_k:
    free(k);
    return rc;
}

static void cuda_kernel_close(corun__backend *be, corun__bkernel *k)
{
    cuda_backend *b = cb(be);

    if (k == NULL) {
        return;
    }
    (void)set_current(b);
    pthread_mutex_lock(&b->mu);
    if (k->inflight > 0) {
        /* Only when the scheduler is torn down with work on the GPU: wait
         * for it, then for the waiters to queue its records, and drop them. */
        int tries;
        pthread_mutex_unlock(&b->mu);
        (void)b->d->cu->cuCtxSynchronize();
        pthread_mutex_lock(&b->mu);
        for (tries = 0; tries < 10000 && k->inflight > 0; tries++) {
            launch_rec **pp = &b->done_head, *r;
            b->done_tail = NULL;
            while ((r = *pp) != NULL) {
                if (r->k == k) {
                    *pp = r->next;
                    b->load[r->stream]--;
                    k->inflight--;
                    give_event(b, r->done);
                    free(r);
                } else {
                    b->done_tail = r;
                    pp = &r->next;
                }
            }
            if (k->inflight > 0) {
                pthread_mutex_unlock(&b->mu);
                struct timespec ts = {0, 100000};
                nanosleep(&ts, NULL);
                pthread_mutex_lock(&b->mu);
            }
        }
    }
    pthread_mutex_unlock(&b->mu);
    if (k->ordered) {
        /* Never leave the user's stream waiting on a slot that is reused. */
        if (!k->released) {
            (void)b->d->cu->cuStreamWriteValue32(b->ctl, k->ctl + offsetof(corun_ctl, complete_seq),
                                                 k->seq, 0);
        }
        (void)b->d->cu->cuEventSynchronize(k->after);
        (void)b->d->cu->cuEventDestroy(k->before);
        (void)b->d->cu->cuEventDestroy(k->after);
    }
    /* The staging slot may still be read by a queued copy: let it finish. */
    (void)b->d->cu->cuEventSynchronize(k->ready);
    (void)b->d->cu->cuEventDestroy(k->ready);
    b->slot_used[k->slot] = 0;
    free(k->args);
    free(k);
}

/*
 * Completion without a spinning core, and without host functions: a host
 * function (cuLaunchHostFunc) in one stream serialises kernels of other
 * streams (NVIDIA/nccl#1742; measured by gpu-check's hostfunc mode), which
 * would make every kernel wait for the one before it. Instead each launch
 * records a blocking-sync event, and a pool of waiter threads sleeps in
 * cuEventSynchronize, one launch each, then queues the launch and wakes the
 * eventfd that poll() sleeps on.
 */
static void *waiter_main(void *p)
{
    cuda_backend *b = p;
    const corun__cu *cu = b->d->cu;
    uint64_t one = 1;

    (void)cu->cuCtxSetCurrent(b->d->ctx);
    pthread_mutex_lock(&b->mu);
    for (;;) {
        launch_rec *r;
        while (b->pend_head == NULL && !b->stopping) {
            b->idle++;
            pthread_cond_wait(&b->work, &b->mu);
            b->idle--;
        }
        if (b->pend_head == NULL) {
            break; /* stopping, nothing left */
        }
        r = b->pend_head;
        b->pend_head = r->next;
        if (b->pend_head == NULL) {
            b->pend_tail = NULL;
        }
        pthread_mutex_unlock(&b->mu);
        (void)cu->cuEventSynchronize(r->done);
        pthread_mutex_lock(&b->mu);
        r->next = NULL;
        if (b->done_tail) {
            b->done_tail->next = r;
        } else {
            b->done_head = r;
        }
        b->done_tail = r;
        if (write(b->efd, &one, sizeof(one)) < 0) {
            /* the counter cannot overflow in practice */
        }
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* Hands a launch to a waiter, starting one if none is idle. Under b->mu. */
static void await_launch(cuda_backend *b, launch_rec *r)
{
    r->next = NULL;
    if (b->pend_tail) {
        b->pend_tail->next = r;
    } else {
        b->pend_head = r;
    }
    b->pend_tail = r;
    if (b->idle == 0 && b->nwaiters < MAX_WAITERS &&
        pthread_create(&b->waiters[b->nwaiters], NULL, waiter_main, b) == 0) {
        b->nwaiters++;
    }
    pthread_cond_signal(&b->work);
}

/* Picks the least loaded stream of the wanted priority. Under b->mu. */
static int pick_stream(cuda_backend *b, int high)
{
    int base = high ? NSTREAMS : 0, best = base, i;

    for (i = base; i < base + NSTREAMS; i++) {
        if (b->load[i] < b->load[best]) {
            best = i;
        }
    }
    return best;
}

static int launch(cuda_backend *b, corun__bkernel *k, int worker, unsigned nblocks_x, int32_t prio,
                  uint64_t cookie)
{
    const corun__cu *cu = b->d->cu;
    launch_rec *r;
    CUstream s;
    CUresult res;
    int si;

    if (set_current(b) != CORUN_OK) {
        return CORUN_ECUDA;
    }
    r = malloc(sizeof(*r));
    if (r == NULL) {
        return CORUN_ENOMEM;
    }
    pthread_mutex_lock(&b->mu);
    si = pick_stream(b, prio > 0);
    b->load[si]++;
    k->inflight++;
    pthread_mutex_unlock(&b->mu);
    s = b->streams[si];
    r->b = b;
    r->k = k;
    r->cookie = cookie;
    r->stream = si;
    res = cu->cuStreamWaitEvent(s, k->ready, 0);
    if (res == CUDA_SUCCESS && k->ordered) {
        res = cu->cuStreamWaitEvent(s, k->before, 0);
    }
    if (res == CUDA_SUCCESS) {
        const corun__kspec *sp = &k->spec;
        if (worker) {
            CUfunction fn = k->ahead_fn != NULL ? k->ahead_fn : k->worker;
            res = cu->cuLaunchKernel(fn, nblocks_x, 1, 1, sp->block.x, sp->block.y,
                                     sp->block.z, sp->smem_dynamic, s, k->params, NULL);
        } else {
            res = cu->cuLaunchKernel(k->plain, sp->grid.x, sp->grid.y, sp->grid.z, sp->block.x,
                                     sp->block.y, sp->block.z, sp->smem_dynamic, s,
                                     k->params + 1, NULL);
        }
    }
    if (res == CUDA_SUCCESS) {
        pthread_mutex_lock(&b->mu);
        res = take_event(b, &r->done);
        pthread_mutex_unlock(&b->mu);
    }
    if (res == CUDA_SUCCESS) {
        res = cu->cuEventRecord(r->done, s);
        if (res != CUDA_SUCCESS) {
            pthread_mutex_lock(&b->mu);
            give_event(b, r->done);
            pthread_mutex_unlock(&b->mu);
        }
    }
    pthread_mutex_lock(&b->mu);
    if (res != CUDA_SUCCESS) {
        b->load[si]--;
        k->inflight--;
        pthread_mutex_unlock(&b->mu);
        free(r);
        return CORUN_ELAUNCH;
    }
    await_launch(b, r);
    pthread_mutex_unlock(&b->mu);
    return CORUN_OK;
}

static int write32(cuda_backend *b, corun__bkernel *k, size_t off, uint32_t v)
{
    return b->d->cu->cuStreamWriteValue32(b->ctl, k->ctl + off, v, 0) == CUDA_SUCCESS
               ? CORUN_OK
               : CORUN_ECUDA;
}

static int write64(cuda_backend *b, corun__bkernel *k, size_t off, uint64_t v)
{
    return b->d->cu->cuStreamWriteValue64(b->ctl, k->ctl + off, v, 0) == CUDA_SUCCESS
               ? CORUN_OK
               : CORUN_ECUDA;
}

static int cuda_launch_workers(corun__backend *be, corun__bkernel *k, const corun__launch_req *req)
{
    cuda_backend *b = cb(be);
    int rc;

    if (req->nworkers == 0) {
        return CORUN_EINVAL;
    }
    /* Parameters are copied by cuLaunchKernel, so k->wa may be reused. */
    k->wa.base = req->base;
    k->wa.gen = req->gen;
    k->wa.preset = 0;
    if (k->ahead_fn != NULL && k->launches == 0 && !k->signalled && req->base == 0 &&
        req->gen == 0) {
        /* The ahead entry's fresh start: worker w runs task w unclaimed. Only
         * before any signal, so no preset task runs where one forbids it. */
        if (set_current(b) != CORUN_OK ||
            write64(b, k, offsetof(corun_ctl, next), req->nworkers) != CORUN_OK ||
            b->d->cu->cuEventRecord(k->ready, b->ctl) != CUDA_SUCCESS) {
            return CORUN_ECUDA;
        }
        k->wa.preset = req->nworkers;
    }
    rc = launch(b, k, 1, req->nworkers, req->priority, req->cookie);
    if (rc == CORUN_OK) {
        k->launches++;
    }
    return rc;
}

static int cuda_launch_plain(corun__backend *be, corun__bkernel *k, int32_t priority,
                             uint64_t cookie)
{
    return launch(cb(be), k, 0, 0, priority, cookie);
}

static int cuda_signal(corun__backend *be, corun__bkernel *k, corun__signal sig, uint64_t value)
{
    cuda_backend *b = cb(be);
    uint32_t inflight;
    int rc;

    if (set_current(b) != CORUN_OK) {
        return CORUN_ECUDA;
    }
    if (sig != CORUN_SIG_NWORKERS) {
        k->signalled = true;
    }
    switch (sig) {
    case CORUN_SIG_HALT_GEN:
        if (k->ahead_fn != NULL) {
            /* Void the ahead claims first: the workers read it at their next
             * claim, a task before the copied halt_gen (corun_ctl.h). */
            if (write32(b, k, offsetof(corun_ctl, next), CORUN_AHEAD_VOID) != CORUN_OK) {
                return CORUN_ECUDA;
            }
            k->voided = true;
        }
        return write32(b, k, offsetof(corun_ctl, halt_gen), (uint32_t)value);
    case CORUN_SIG_EVICT_BELOW:
        return write32(b, k, offsetof(corun_ctl, evict_below), (uint32_t)value);
    case CORUN_SIG_NWORKERS:
        return write32(b, k, offsetof(corun_ctl, nworkers), (uint32_t)value);
    case CORUN_SIG_SM_RANGE: {
        uint32_t lo = (uint32_t)value, hi = (uint32_t)(value >> 32);
        if (lo > hi || hi >= b->d->desc.sm_count) {
            return CORUN_ERANGE;
        }
        /* Widen first, then narrow, so no worker in both ranges leaves.
         * Launches made after this wait for it (k->ready), so a kernel
         * bound before its first launch never runs a task outside. */
        rc = write32(b, k, offsetof(corun_ctl, sm_hi), hi);
        if (rc == CORUN_OK) {
            rc = write32(b, k, offsetof(corun_ctl, sm_lo), lo);
        }
        if (rc == CORUN_OK && b->d->cu->cuEventRecord(k->ready, b->ctl) != CUDA_SUCCESS) {
            rc = CORUN_ECUDA;
        }
        return rc;
    }
    case CORUN_SIG_TASK_LIMIT:
        /* Only while no launch is in flight (corun_ctl.h says why); later
         * launches wait for the write (k->ready). */
        pthread_mutex_lock(&b->mu);
        inflight = k->inflight;
        pthread_mutex_unlock(&b->mu);
        if (inflight > 0) {
            return CORUN_EBUSY;
        }
        rc = write64(b, k, offsetof(corun_ctl, task_limit), value);
        if (rc == CORUN_OK && b->d->cu->cuEventRecord(k->ready, b->ctl) != CUDA_SUCCESS) {
            rc = CORUN_ECUDA;
        }
        return rc;
    }
    return CORUN_EINVAL;
}

static int cuda_rewind(corun__backend *be, corun__bkernel *k, uint64_t next, uint64_t limit)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    uint32_t inflight;

    pthread_mutex_lock(&b->mu);
    inflight = k->inflight;
    pthread_mutex_unlock(&b->mu);
    if (inflight > 0) {
        return CORUN_EBUSY;
    }
    if (set_current(b) != CORUN_OK ||
        write64(b, k, offsetof(corun_ctl, next), next) != CORUN_OK ||
        write64(b, k, offsetof(corun_ctl, task_limit), limit) != CORUN_OK ||
        cu->cuEventRecord(k->ready, b->ctl) != CUDA_SUCCESS) {
        return CORUN_ECUDA;
    }
    k->voided = false;
    return CORUN_OK;
}

static int cuda_progress(corun__backend *be, corun__bkernel *k, corun_progress *out)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    corun_ctl *rb = b->readback;

    if (set_current(b) != CORUN_OK ||
        cu->cuMemcpyDtoHAsync(&rb->next, k->ctl + offsetof(corun_ctl, next),
                              sizeof(*rb) - offsetof(corun_ctl, next), b->ctl) != CUDA_SUCCESS ||
        cu->cuStreamSynchronize(b->ctl) != CUDA_SUCCESS) {
        return CORUN_ECUDA;
    }
    out->tasks = k->tasks;
    /* Voided, next says nothing of the claims that ran: once every worker
     * has left they are [0, done) (corun_ctl.h). */
    out->claimed = k->voided ? rb->done : rb->next;
    out->done = rb->done;
    out->live = rb->started > rb->exited ? rb->started - rb->exited : 0;
    out->task_ns = rb->task_ns_seed;
    out->ahead = k->ahead_fn != NULL;
    return CORUN_OK;
}

/* Drains finished launches into ev. Under nothing; takes b->mu. */
static void drain(cuda_backend *b, corun__bevent *ev, size_t cap, size_t *n)
{
    pthread_mutex_lock(&b->mu);
    while (b->done_head != NULL && *n < cap) {
        launch_rec *r = b->done_head;
        b->done_head = r->next;
        if (b->done_head == NULL) {
            b->done_tail = NULL;
        }
        b->load[r->stream]--;
        r->k->inflight--;
        give_event(b, r->done);
        ev[*n].cookie = r->cookie;
        ev[*n].time_ns = mono_ns();
        ev[*n].status = CORUN_OK;
        (*n)++;
        free(r);
    }
    pthread_mutex_unlock(&b->mu);
}

/* Returns when launches finished, the deadline passed, or someone called
 * wake (then possibly with no event: callers loop). Sleeps in ppoll. */
static int cuda_poll(corun__backend *be, uint64_t deadline, corun__bevent *ev, size_t cap,
                     size_t *n)
{
    cuda_backend *b = cb(be);
    struct pollfd pfd = {b->efd, POLLIN, 0};
    struct timespec ts;
    uint64_t now, wait, cnt;

    *n = 0;
    drain(b, ev, cap, n);
    if (*n > 0) {
        return CORUN_OK;
    }
    now = mono_ns();
    if (now >= deadline) {
        return CORUN_OK;
    }
    /* At most a second at a time, so a lost wake-up costs little. */
    wait = deadline - now;
    if (wait > 1000000000ull) {
        wait = 1000000000ull;
    }
    ts.tv_sec = (time_t)(wait / 1000000000ull);
    ts.tv_nsec = (long)(wait % 1000000000ull);
    if (ppoll(&pfd, 1, &ts, NULL) > 0 && read(b->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN) {
        return CORUN_EIO;
    }
    drain(b, ev, cap, n);
    return CORUN_OK;
}

static void cuda_finished(corun__backend *be, corun__bkernel *k)
{
    cuda_backend *b = cb(be);

    if (k->ordered && !k->released && set_current(b) == CORUN_OK &&
        write32(b, k, offsetof(corun_ctl, complete_seq), k->seq) == CORUN_OK) {
        k->released = true;
    }
}

void corun__cuda_wake(corun__backend *be)
{
    uint64_t one = 1;
    if (write(cb(be)->efd, &one, sizeof(one)) < 0) {
        /* see launch_done */
    }
}

static void cuda_destroy(corun__backend *be)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    int i;

    (void)set_current(b);
    /* Our own streams only: the application's other work is not ours to
     * wait for (and cuCtxSynchronize here crashed inside libcuda under
     * compute-sanitizer, driver 580 -- it was loaded then with the ABI
     * that takes a context and called without one, which may be why:
     * cuda_api.c's abi_version). */
    if (b->ctl) {
        (void)cu->cuStreamSynchronize(b->ctl);
    }
    for (i = 0; i < 2 * NSTREAMS; i++) {
        if (b->streams[i]) {
            (void)cu->cuStreamSynchronize(b->streams[i]);
        }
    }
    pthread_mutex_lock(&b->mu);
    b->stopping = 1;
    pthread_cond_broadcast(&b->work);
    pthread_mutex_unlock(&b->mu);
    for (i = 0; i < b->nwaiters; i++) {
        pthread_join(b->waiters[i], NULL);
    }
    while (b->done_head) {
        launch_rec *r = b->done_head;
        b->done_head = r->next;
        give_event(b, r->done);
        free(r);
    }
    for (i = 0; i < b->nfree_events; i++) {
        (void)cu->cuEventDestroy(b->free_events[i]);
    }
    for (i = 0; i < 2 * NSTREAMS; i++) {
        if (b->streams[i]) {
            (void)cu->cuStreamDestroy(b->streams[i]);
        }
    }
    if (b->ctl) {
        (void)cu->cuStreamDestroy(b->ctl);
    }
    if (b->slab) {
        (void)cu->cuMemFree(b->slab);
    }
    if (b->staging) {
        (void)cu->cuMemFreeHost(b->staging);
    }
    if (b->readback) {
        (void)cu->cuMemFreeHost(b->readback);
    }
    if (b->efd >= 0) {
        close(b->efd);
    }
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->work);
    free(b);
}

/*
 * Slate's profile of a synthetic kernel: one plain launch at its full grid,
 * alone. With the meter, FLOPs and DRAM bytes come from the hardware
 * counters and the GPU time from gpu__time_duration, against peaks measured
 * the same way; without it (counters not permitted, no CUPTI), from the
 * operations and bytes the kernel is known to perform over its event-timed
 * duration, against the counted peaks. out->source says which.
 */
static int cuda_rates(corun__backend *be, const corun__kspec *spec, corun__rates *out, char *why,
                      size_t why_len)
{
    cuda_backend *b = cb(be);
    device_state *d = b->d;
    corun_synth_args a;
    void *params[1] = {&a};
    synth_launch l;
    uint32_t threads = spec->block.x * spec->block.y * spec->block.z;
    uint32_t smem = spec->smem_dynamic + spec->shape.smem_static;
    double peak_f = 0, peak_b = 0, ns = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if (spec->code != CORUN_CODE_SYNTHETIC) {
        snprintf(why, why_len, "kernel '%s': achieved rates are measured for synthetic scenario "
                 "kernels only", spec->name);
        return CORUN_ENOTSUP;
    }
    if (threads == 0 || threads > d->desc.max_threads_per_block || smem > d->desc.smem_per_block) {
        snprintf(why, why_len, "kernel '%s': %u threads and %u bytes of shared memory per block "
                 "cannot be measured", spec->name, threads, smem);
        return CORUN_ERANGE;
    }
    if (set_current(b) != CORUN_OK) {
        return CORUN_ECUDA;
    }
    /* Not through kernel_open: no control block, no control stream, only
     * the plain kernel on a stream of its own, as the peak probes run. */
    rc = synth_args(b, spec, threads, smem, &a, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    l = (synth_launch){b, d->synth_plain, spec->grid.x, spec->grid.y, spec->grid.z, spec->block.x,
                       spec->block.y, spec->block.z, smem, params};
    pthread_mutex_lock(&d->cal_mu);
    rc = synth_peaks_locked(b, why, why_len);
    if (rc == CORUN_OK && d->meter_ok && b->set.profile_counters != 0) {
        corun__meter_sample m;
        rc = meter_run(d, &l, &m, why, why_len);
        if (rc == CORUN_OK && m.gpu_ns > 0) {
            out->flops_per_s = m.flops / m.gpu_ns * 1e9;
            out->bytes_per_s = m.dram_bytes / m.gpu_ns * 1e9;
            peak_f = d->meter_flop_ns;
            peak_b = d->meter_byte_ns;
            snprintf(out->source, sizeof(out->source), "cupti counters");
        } else if (rc == CORUN_OK) {
            snprintf(why, why_len, "kernel '%s': the counters saw no GPU time", spec->name);
            rc = CORUN_ECUDA;
        }
    } else if (rc == CORUN_OK) {
        rc = synth_time(&l, &ns, why, why_len);
        if (rc == CORUN_OK) {
            double tasks = (double)spec->grid.x * spec->grid.y * spec->grid.z;
            double it = synth_mean_iters(&a) * tasks * threads;
            out->flops_per_s = it * a.fma_share * 4.0 / ns * 1e9;
            out->bytes_per_s = it * a.loads_per_it * 16.0 / ns * 1e9;
            peak_f = d->peak_flop_ns;
            peak_b = d->peak_byte_ns;
            snprintf(out->source, sizeof(out->source),
                     "counted operations (no hardware counters: %.250s)", d->meter_why);
        }
    }
    pthread_mutex_unlock(&d->cal_mu);
    if (rc == CORUN_OK) {
        out->peak_flops = peak_f * 1e9;
        out->peak_bytes_per_s = peak_b * 1e9;
        out->flop_frac = out->flops_per_s / out->peak_flops;
        out->bw_frac = out->bytes_per_s / out->peak_bytes_per_s;
    }
    return rc;
}

static const corun__backend_ops cuda_ops = {
    .name = "cuda",
    .kernel_open = cuda_kernel_open,
    .kernel_close = cuda_kernel_close,
    .launch_workers = cuda_launch_workers,
    .launch_plain = cuda_launch_plain,
    .signal = cuda_signal,
    .rewind = cuda_rewind,
    .progress = cuda_progress,
    .now_ns = cuda_now,
    .poll = cuda_poll,
    .finished = cuda_finished,
    .rates = cuda_rates,
    .wake = corun__cuda_wake,
    .destroy = cuda_destroy,
};

int corun__cuda_create(const corun__settings *set, corun__backend **out, char *why,
                       size_t why_len)
{
    device_state *d = &dstate;
    const corun__cu *cu;
    cuda_backend *b;
    int i;

    pthread_once(&dstate_once, device_init);
    if (!d->ok) {
        snprintf(why, why_len, "%s", d->error);
        return CORUN_ENODEV;
    }
    cu = d->cu;
    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return CORUN_ENOMEM;
    }
    b->be.ops = &cuda_ops;
    b->be.desc = d->desc;
    b->d = d;
    b->set = *set;
    b->efd = -1;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->work, NULL);
    if (!CU_OK(cu, cu->cuCtxSetCurrent(d->ctx), why, why_len) ||
        !CU_OK(cu, cu->cuStreamCreateWithPriority(&b->ctl, CU_STREAM_NON_BLOCKING, d->prio_hi), why,
               why_len)) {
        goto out_destroy;
    }
    for (i = 0; i < 2 * NSTREAMS; i++) {
        int prio = i < NSTREAMS ? d->prio_lo : d->prio_hi;
        if (!CU_OK(cu, cu->cuStreamCreateWithPriority(&b->streams[i], CU_STREAM_NON_BLOCKING, prio),
                   why, why_len)) {
            goto out_destroy;
        }
    }
    if (!CU_OK(cu, cu->cuMemAlloc(&b->slab, CTL_SLOTS * sizeof(corun_ctl)), why, why_len) ||
        !CU_OK(cu, cu->cuMemAllocHost((void **)&b->staging, CTL_SLOTS * sizeof(corun_ctl)), why,
               why_len) ||
        !CU_OK(cu, cu->cuMemAllocHost((void **)&b->readback, sizeof(corun_ctl)), why, why_len) ||
        !CU_OK(cu, cu->cuMemsetD8(b->slab, 0, CTL_SLOTS * sizeof(corun_ctl)), why, why_len)) {
        goto out_destroy;
    }
    b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (b->efd < 0) {
        snprintf(why, why_len, "eventfd: %s", strerror(errno));
        goto out_destroy;
    }
    *out = &b->be;
    return CORUN_OK;

out_destroy:
    cuda_destroy(&b->be);
    return CORUN_ECUDA;
}

unsigned long long corun__cuda_ctl_addr(corun__backend *be, corun__bkernel *k)
{
    return (unsigned long long)k->ctl;
}

int corun__cuda_set_task_hits(corun__backend *be, corun__bkernel *k, unsigned long long dptr)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;

    if (set_current(b) != CORUN_OK ||
        write64(b, k, offsetof(corun_ctl, task_hits), dptr) != CORUN_OK ||
        cu->cuEventRecord(k->ready, b->ctl) != CUDA_SUCCESS) {
        return CORUN_ECUDA;
    }
    return CORUN_OK;
}

void corun__cuda_describe(corun__backend *be, char *name, size_t len, int *driver_version)
{
    snprintf(name, len, "%s", cb(be)->d->name);
    *driver_version = cb(be)->d->cu->driver_version;
}
