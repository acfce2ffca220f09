/*
 * synth.c — the synthetic kernel that stands for a scenario's kernels on a
 * real GPU (synth.h): its calibration (iterations per ns), the device's
 * FLOP and DRAM peaks, the memory traffic a kernel declares, and Slate's
 * rates of a kernel alone (counted operations, or CUPTI's counters through
 * cupti_meter.c). See cuda_int.h.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_int.h"
#include "backends/cuda/cupti_meter.h"

#define SYNTH_CAL_ITERS 20000
#define SYNTH_MEM_BYTES (512ull << 20) /* DRAM traffic of synthetic kernels: ~10x L2 */
#define SYNTH_PEAK_LOADS 256           /* per thread in the bandwidth probe: 1 MiB a block */

static atomic_uint synth_seed = 1; /* task durations differ per kernel, repeat per process */

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
 * Without it, on the H100 (driver 580, CUDA 13.0), the first host-to-device
 * copy after a measurement arrived as zeros although the copy and its stream
 * reported success, and the runs after it hung; any such copy right after
 * the measurement made every later one arrive (docs/decisions). The cause
 * inside the driver or CUPTI is not known; the copy is checked, so should
 * it ever not arrive, the measurement fails instead of the runs after it.
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

/* The synthetic kernel's parameters for spec (block of `threads`, `smem`
 * bytes of shared memory): its duration distribution in calibrated
 * iterations, its DRAM traffic and FLOP share. */
int corun__cuda_synth_args(cuda_backend *b, const corun__kspec *spec, uint32_t threads, uint32_t smem,
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

/* The same for a scenario's real kernel (builtin.c): its plain kernel once
 * at its full grid, alone, through the hardware counters; its operations are
 * not known, so without the counters it has no profile. */
static int builtin_rates(cuda_backend *b, const corun__kspec *spec, corun__rates *out, char *why,
                         size_t why_len)
{
    device_state *d = b->d;
    corun__kspec k = *spec;
    builtin_args ba;
    corun__meter_sample m;
    synth_launch l;
    int rc;

    if (corun__cuda_set_current(b) != CORUN_OK) {
        return CORUN_ECUDA;
    }
    rc = corun__cuda_builtin_bind(b, &k, &ba, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    l = (synth_launch){b, ((const cuda_code *)k.user)->plain, k.grid.x, k.grid.y, k.grid.z,
                       k.block.x, k.block.y, k.block.z, k.smem_dynamic, ba.argv};
    pthread_mutex_lock(&d->cal_mu);
    rc = synth_peaks_locked(b, why, why_len);
    if (rc == CORUN_OK && !(d->meter_ok && b->set.profile_counters != 0)) {
        snprintf(why, why_len, "kernel '%s': a real kernel's achieved rates need the hardware "
                 "counters (%.200s)", spec->name,
                 d->meter_ok ? "PROFILE_COUNTERS is 0" : d->meter_why);
        rc = CORUN_ENOTSUP;
    }
    if (rc == CORUN_OK) {
        rc = meter_run(d, &l, &m, why, why_len);
    }
    if (rc == CORUN_OK && !(m.gpu_ns > 0)) {
        snprintf(why, why_len, "kernel '%s': the counters saw no GPU time", spec->name);
        rc = CORUN_ECUDA;
    }
    if (rc == CORUN_OK) {
        out->flops_per_s = m.flops / m.gpu_ns * 1e9;
        out->bytes_per_s = m.dram_bytes / m.gpu_ns * 1e9;
        out->peak_flops = d->meter_flop_ns * 1e9;
        out->peak_bytes_per_s = d->meter_byte_ns * 1e9;
        out->flop_frac = out->flops_per_s / out->peak_flops;
        out->bw_frac = out->bytes_per_s / out->peak_bytes_per_s;
        snprintf(out->source, sizeof(out->source), "cupti counters");
    }
    pthread_mutex_unlock(&d->cal_mu);
    return rc;
}

/*
 * Slate's profile of a synthetic kernel: one plain launch at its full grid,
 * alone. With the meter, FLOPs and DRAM bytes come from the hardware
 * counters and the GPU time from gpu__time_duration, against peaks measured
 * the same way; without it (counters not permitted, no CUPTI), from the
 * operations and bytes the kernel is known to perform over its event-timed
 * duration, against the counted peaks. out->source says which.
 */
int corun__cuda_rates(corun__backend *be, const corun__kspec *spec, corun__rates *out, char *why,
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
    if (spec->code == CORUN_CODE_BUILTIN) {
        return builtin_rates(b, spec, out, why, why_len);
    }
    if (spec->code != CORUN_CODE_SYNTHETIC) {
        snprintf(why, why_len, "kernel '%s': achieved rates are measured for the scenarios' "
                 "synthetic and real kernels only", spec->name);
        return CORUN_ENOTSUP;
    }
    if (threads == 0 || threads > d->desc.max_threads_per_block || smem > d->desc.smem_per_block) {
        snprintf(why, why_len, "kernel '%s': %u threads and %u bytes of shared memory per block "
                 "cannot be measured", spec->name, threads, smem);
        return CORUN_ERANGE;
    }
    if (corun__cuda_set_current(b) != CORUN_OK) {
        return CORUN_ECUDA;
    }
    /* Not through exec_open: no control block, no control stream, only
     * the plain kernel on a stream of its own, as the peak probes run. */
    rc = corun__cuda_synth_args(b, spec, threads, smem, &a, why, why_len);
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

