/*
 * cuda_backend.c — the backend operations on a real GPU and the backend's
 * life. See cuda_backend.h for what it does and cuda_int.h for how the
 * files share the work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "backends/cuda/cuda_int.h"
#include "corun/corun_chunk.h"

static uint64_t cuda_now(corun__backend *be)
{
    (void)be;
    return corun__mono_ns();
}

/* Limits every kernel meets, direct or not. */
static int check_grid(const corun_gpu_desc *g, const corun__kspec *spec, char *why,
                      size_t why_len)
{
    uint64_t tasks = (uint64_t)spec->grid.x * spec->grid.y * spec->grid.z;
    uint32_t threads = spec->block.x * spec->block.y * spec->block.z;

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
    return CORUN_OK;
}

/* The synthetic kernel of a scenario: its parameters and occupancy. */
static int open_synthetic(cuda_backend *b, corun__exec *k, char *why, size_t why_len)
{
    const corun__cu *cu = b->d->cu;
    const uint32_t threads = k->spec.block.x * k->spec.block.y * k->spec.block.z;
    corun_synth_args *a = calloc(1, sizeof(*a));
    int occ = 0, rc;

    if (a == NULL) {
        return CORUN_ENOMEM;
    }
    k->args = a;
    k->plain = b->d->synth_plain;
    k->worker = k->entry = b->d->synth_worker;
    k->spec.smem_dynamic += k->spec.shape.smem_static; /* the scenario's shared memory */
    rc = corun__cuda_synth_args(b, &k->spec, threads, k->spec.smem_dynamic, a, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    k->nparams = 1;
    k->offset[0] = 0;
    if (k->spec.smem_dynamic > b->d->desc.smem_per_block) {
        snprintf(why, why_len, "kernel '%s': %u bytes of shared memory exceeds the limit of %u",
                 k->spec.name, k->spec.smem_dynamic, b->d->desc.smem_per_block);
        return CORUN_ERANGE;
    }
    if (!CU_OK(cu, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k->worker, (int)threads,
                                                                    k->spec.smem_dynamic),
               why, why_len)) {
        return CORUN_ECUDA;
    }
    if (occ == 0) {
        snprintf(why, why_len, "kernel '%s': a block of %u threads with %u bytes of shared memory "
                 "does not fit on an SM", k->spec.name, threads, k->spec.smem_dynamic);
        return CORUN_ERANGE;
    }
    k->per_sm = (uint32_t)occ;
    return CORUN_OK;
}

/* A program's registered kernel, launched by the scheduler. */
static int open_user(cuda_backend *b, corun__exec *k, char *why, size_t why_len)
{
    cuda_code *c = (cuda_code *)k->spec.user;
    bool ahead_ok = false;
    int rc;

    if (c == NULL) {
        snprintf(why, why_len, "kernel '%s': not registered", k->spec.name);
        return CORUN_EINVAL;
    }
    k->code = c;
    k->plain = c->plain;
    k->worker = c->worker;
    rc = corun__cuda_code_shape(b, c, k->spec.block, k->spec.smem_dynamic, &k->per_sm, &ahead_ok,
                                NULL, why, why_len);
    if (rc == CORUN_OK) {
        rc = corun__cuda_code_layout(b, c, why, why_len);
    }
    if (rc == CORUN_OK) {
        rc = corun__cuda_pack_args(b, k, c, why, why_len);
    }
    k->entry = k->spec.ahead && ahead_ok ? c->ahead : c->worker;
    k->spec.ahead = k->entry == c->ahead;
    return rc;
}

static int cuda_exec_open(corun__backend *be, const corun__kspec *spec, corun__exec **out,
                            uint32_t *per_sm, char *why, size_t why_len)
{
    cuda_backend *b = cb(be);
    corun__exec *k;
    builtin_args ba;
    size_t i;
    int rc = check_grid(&b->d->desc, spec, why, why_len);

    if (rc != CORUN_OK) {
        return rc;
    }
    if (corun__cuda_set_current(b) != CORUN_OK) {
        return CORUN_ECUDA;
    }
    k = malloc(sizeof(*k));
    if (k == NULL) {
        return CORUN_ENOMEM;
    }
    memset(k, 0, offsetof(corun__exec, offset));
    k->spec = *spec;
    if (spec->code == CORUN_CODE_BUILTIN) {
        rc = corun__cuda_builtin_bind(b, &k->spec, &ba, why, why_len);
        rc = rc == CORUN_OK ? open_user(b, k, why, why_len) : rc;
    } else {
        rc = spec->code == CORUN_CODE_USER ? open_user(b, k, why, why_len)
                                           : open_synthetic(b, k, why, why_len);
    }
    k->spec.args = NULL;
    if (rc == CORUN_OK) {
        rc = corun__cuda_slot_take(b, &k->slot);
        if (rc != CORUN_OK) {
            snprintf(why, why_len, "all %d control blocks are in use", CTL_SLOTS);
        }
    }
    if (rc != CORUN_OK) {
        free(k->args);
        free(k);
        return rc;
    }
    k->ctl = b->slab + (CUdeviceptr)k->slot * sizeof(corun_ctl);
    k->seq = b->slot_seq[k->slot];
    corun__ctl_init(&k->ch, &k->spec, k->per_sm, &b->d->desc, corun__budget_ns(&b->set),
                    (uint32_t)b->set.chunk_max, false);
    k->params[0] = &k->wa;
    for (i = 0; i < k->nparams; i++) {
        k->params[i + 1] = (char *)k->args + k->offset[i];
    }
    *per_sm = k->per_sm;
    *out = k;
    return CORUN_OK;
}

void corun__cuda_kernel_free(cuda_backend *b, corun__exec *k)
{
    if (k->ready != NULL) {
        (void)b->d->cu->cuEventDestroy(k->ready);
    }
    free(k->args);
    free(k);
}

/* Waits for every launch of k on our streams; only when the scheduler is
 * torn down with work on the GPU. */
static void wait_inflight(cuda_backend *b, corun__exec *k)
{
    int tries, i;

    corun__cuda_collect(b);
    pthread_mutex_lock(&b->mu);
    for (tries = 0; tries < 10000 && k->inflight > 0; tries++) {
        launch_rec **pp = &b->done_head, *r;
        b->done_tail = NULL;
        while ((r = *pp) != NULL) {
            if (r->k == k) {
                *pp = r->next;
                b->load[r->stream]--;
                k->inflight--;
                if (r->done != NULL) {
                    corun__cuda_give_event(b, r->done);
                }
                free(r);
            } else {
                b->done_tail = r;
                pp = &r->next;
            }
        }
        if (k->inflight > 0) {
            pthread_mutex_unlock(&b->mu);
            for (i = 0; i < NALLSTREAMS; i++) {
                if (b->streams[i]) {
                    (void)b->d->cu->cuStreamSynchronize(b->streams[i]);
                }
            }
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
            corun__cuda_collect(b);
            pthread_mutex_lock(&b->mu);
        }
    }
    pthread_mutex_unlock(&b->mu);
}

/* A direct kernel closed before its device side said it was over (the
 * scheduler torn down): let its stream go, and wait a second for the last
 * worker to say so. Returns false if it did not (the slot is then never
 * reused). */
static bool release_direct(cuda_backend *b, corun__exec *k)
{
    corun__ctl_write w[CORUN_CTL_MAX_WRITES];
    size_t n = 0;
    uint64_t until = corun__mono_ns() + 1000000000ull;

    corun__ctl_release(w, &n);
    (void)corun__cuda_write(b, k, w, n);
    while (corun__mono_ns() < until) {
        if (corun__cuda_direct_over(b, k)) {
            return true;
        }
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return false;
}

static void cuda_exec_close(corun__backend *be, corun__exec *k)
{
    cuda_backend *b = cb(be);
    bool reuse = true;

    if (k == NULL) {
        return;
    }
    (void)corun__cuda_set_current(b);
    if (k->direct && !corun__cuda_launcher_forget(b, k)) {
        return; /* the launcher still holds it: kept, never freed (teardown only) */
    }
    if (k->inflight > 0) {
        wait_inflight(b, k);
    }
    if (k->direct) {
        corun__cuda_direct_unwatch(b, k);
        if (!k->over) {
            reuse = release_direct(b, k);
        }
    }
    if (reuse) {
        corun__cuda_slot_give(b, k->slot, !k->ch.launched && !k->direct);
    }
    corun__cuda_kernel_free(b, k);
}

/* Picks the least loaded stream of the wanted priority. Under b->mu. */
/* The least loaded of streams [base, base + n). */
static int pick_stream(cuda_backend *b, int base, int n)
{
    int best = base, i;

    for (i = base; i < base + n; i++) {
        if (b->load[i] < b->load[best]) {
            best = i;
        }
    }
    return best;
}

/* Reserves the least loaded of streams [base, base + n) for a launch of k:
 * its load and k's inflight counted. */
static int reserve_in(cuda_backend *b, corun__exec *k, int base, int n)
{
    int si;

    pthread_mutex_lock(&b->mu);
    si = pick_stream(b, base, n);
    b->load[si]++;
    k->inflight++;
    pthread_mutex_unlock(&b->mu);
    return si;
}

int corun__cuda_launch_reserve(cuda_backend *b, corun__exec *k, int32_t prio)
{
    return reserve_in(b, k, prio > 0 ? NSTREAMS : 0, NSTREAMS);
}

int corun__cuda_launch_issue(cuda_backend *b, corun__exec *k, int si, int worker,
                             unsigned nblocks_x, uint32_t gate, uint64_t cookie, void **params)
{
    const corun__cu *cu = b->d->cu;
    const corun__kspec *sp = &k->spec;
    const CUstream s = b->streams[si];
    launch_rec *r;
    CUresult res = CUDA_SUCCESS;

    if (corun__cuda_set_current(b) != CORUN_OK) {
        return CORUN_ECUDA;
    }
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return CORUN_ENOMEM;
    }
    r->k = k;
    r->cookie = cookie;
    r->stream = si;
    if (k->ready != NULL) {
        res = cu->cuStreamWaitEvent(s, k->ready, 0);
    }
    if (res == CUDA_SUCCESS && gate > 0) {
        res = cu->cuStreamWaitValue32(s, k->ctl + offsetof(corun_ctl, resume), gate,
                                      CU_STREAM_WAIT_VALUE_GEQ);
    }
    if (res == CUDA_SUCCESS) {
        res = worker ? cu->cuLaunchKernel(k->entry, nblocks_x, 1, 1, sp->block.x, sp->block.y,
                                          sp->block.z, sp->smem_dynamic, s, params, NULL)
                     : cu->cuLaunchKernel(k->plain, sp->grid.x, sp->grid.y, sp->grid.z,
                                          sp->block.x, sp->block.y, sp->block.z,
                                          sp->smem_dynamic, s, params + 1, NULL);
    }
    pthread_mutex_lock(&b->mu);
    if (res == CUDA_SUCCESS && corun__cuda_take_event(b, &r->done) != CORUN_OK) {
        res = CUDA_ERROR_UNKNOWN;
    }
    if (res == CUDA_SUCCESS && cu->cuEventRecord(r->done, s) != CUDA_SUCCESS) {
        corun__cuda_give_event(b, r->done);
        r->done = NULL;
        res = CUDA_ERROR_UNKNOWN;
    }
    if (res != CUDA_SUCCESS) {
        pthread_mutex_unlock(&b->mu);
        free(r);
        return CORUN_ELAUNCH;
    }
    corun__cuda_await(b, r);
    pthread_mutex_unlock(&b->mu);
    return CORUN_OK;
}

/* A launch on one of our streams, from the calling thread: after the
 * control-block writes before it (k->ready), behind the resume gate if it
 * has one, then recorded and handed to a waiter. launch_on: on stream si,
 * already reserved (its load and k's inflight counted). */
static int launch_on(cuda_backend *b, corun__exec *k, int si, int worker, unsigned nblocks_x,
                     uint32_t gate, uint64_t cookie)
{
    const int rc = corun__cuda_launch_issue(b, k, si, worker, nblocks_x, gate, cookie, k->params);

    if (rc != CORUN_OK) {
        pthread_mutex_lock(&b->mu);
        b->load[si]--;
        k->inflight--;
        pthread_mutex_unlock(&b->mu);
    }
    return rc;
}

static int launch(cuda_backend *b, corun__exec *k, int worker, unsigned nblocks_x, int32_t prio,
                  uint32_t gate, uint64_t cookie)
{
    return launch_on(b, k, corun__cuda_launch_reserve(b, k, prio), worker, nblocks_x, gate,
                     cookie);
}

/* Reserves the least loaded stream of green partition part (1 or 2), or
 * returns -1 where the GPU is not split so. */
static int reserve_part(cuda_backend *b, corun__exec *k, unsigned part)
{
    if (part < 1 || part > 2 || b->green[part - 1] == NULL) {
        return -1;
    }
    return reserve_in(b, k, GREEN_STREAM0 + (int)(part - 1) * NGREEN, NGREEN);
}

static int cuda_launch_workers(corun__backend *be, corun__exec *k, const corun__launch_req *req)
{
    cuda_backend *b = cb(be);
    int rc;

    if (req->nworkers == 0) {
        return CORUN_EINVAL;
    }
    /* Parameters are copied by cuLaunchKernel, so k->wa may be reused. */
    corun__ctl_launch(&k->ch, req, 0, b->d->desc.sm_count - 1, &k->wa);
    k->wa.ctl = (corun_ctl *)(uintptr_t)k->ctl;
    k->wa.task_hits = k->spec.task_hits;
    k->wa.seq = k->seq;
    if (k->direct) {
        /* a halt's resume grid or a growth: never from the asking thread
         * (launcher.c says why); with a relay where one fits. No preset to
         * keep: only a kernel's first launch fixes one. */
        corun__launch_req r = *req;
        r.nworkers = corun__cuda_relay_plan(b, k, req->nworkers, 0, b->d->desc.sm_count - 1);
        r.nworkers += k->wa.relay_block;
        return corun__cuda_launch_later(b, k, &r);
    }
    /* its workers report the kernel's end there (cuda_progress) */
    k->wa.report = (corun_report *)(uintptr_t)(b->reports_dev + k->slot * sizeof(corun_report));
    if (req->part != 0) {
        const int si = reserve_part(b, k, req->part);
        return si < 0 ? CORUN_EINVAL
                      : launch_on(b, k, si, 1, req->nworkers, req->gate, req->cookie);
    }
    rc = launch(b, k, 1, req->nworkers, req->priority, req->gate, req->cookie);
    return rc;
}

static int cuda_launch_plain(corun__backend *be, corun__exec *k, int32_t priority,
                             uint64_t cookie)
{
    return launch(cb(be), k, 0, 0, priority, 0, cookie);
}

/* backend.h, partition: two green contexts, the first of at least sms SMs
 * (cuDevSmResourceSplitByCount rounds up: on the H100 to a multiple of 8),
 * the second of the rest, each with NGREEN streams, the first's of high
 * priority. Kernels, events and memory of the primary context serve them. */
static int cuda_partition(corun__backend *be, uint32_t sms, uint32_t *got, char *why,
                          size_t why_len)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    CUdevResource all, part[2];
    CUdevResourceDesc desc;
    unsigned n = 1;
    int i, j;

    if (b->green[0] != NULL) {
        snprintf(why, why_len, "the GPU is split already");
        return CORUN_ESTATE;
    }
    if (corun__cuda_set_current(b) != CORUN_OK ||
        !CU_OK(cu, cu->cuDeviceGetDevResource(b->d->dev, &all, CU_DEV_RESOURCE_TYPE_SM), why,
               why_len) ||
        !CU_OK(cu, cu->cuDevSmResourceSplitByCount(&part[0], &n, &all, &part[1], 0, sms), why,
               why_len)) {
        return CORUN_ENOTSUP;
    }
    if (n == 1 && part[1].sm.smCount == 0 && all.sm.smCount > all.sm.smCoscheduledAlignment) {
        /* the most that leaves the second partition some */
        const unsigned most = all.sm.smCount - all.sm.smCoscheduledAlignment;
        if (!CU_OK(cu, cu->cuDevSmResourceSplitByCount(&part[0], &n, &all, &part[1], 0, most),
                   why, why_len)) {
            return CORUN_ENOTSUP;
        }
    }
    if (n != 1 || part[1].sm.smCount == 0) {
        snprintf(why, why_len, "%u SMs (%u asked for) leave none of the GPU's %u",
                 part[0].sm.smCount, sms, all.sm.smCount);
        return CORUN_ERANGE;
    }
    for (i = 0; i < 2; i++) {
        const int prio = i == 0 ? b->d->prio_hi : b->d->prio_lo;
        if (!CU_OK(cu, cu->cuDevResourceGenerateDesc(&desc, &part[i], 1), why, why_len) ||
            !CU_OK(cu, cu->cuGreenCtxCreate(&b->green[i], desc, b->d->dev, CU_GREEN_CTX_DEFAULT_STREAM),
                   why, why_len)) {
            return CORUN_ECUDA; /* what was made goes with the backend */
        }
        for (j = 0; j < NGREEN; j++) {
            if (!CU_OK(cu, cu->cuGreenCtxStreamCreate(&b->streams[GREEN_STREAM0 + i * NGREEN + j],
                                                      b->green[i], CU_STREAM_NON_BLOCKING, prio),
                       why, why_len)) {
                return CORUN_ECUDA;
            }
        }
    }
    (void)corun__cuda_set_current(b);
    *got = part[0].sm.smCount;
    return CORUN_OK;
}

static int cuda_launch_plain_part(corun__backend *be, corun__exec *k, int32_t priority,
                                  unsigned part, uint64_t cookie)
{
    cuda_backend *b = cb(be);
    const int si = reserve_part(b, k, part);

    (void)priority; /* each partition's streams have its own */
    return si < 0 ? CORUN_EINVAL : launch_on(b, k, si, 0, 0, 0, cookie);
}

int corun__cuda_write(cuda_backend *b, corun__exec *k, const corun__ctl_write *w, size_t n)
{
    const corun__cu *cu = b->d->cu;
    size_t i;

    if (corun__cuda_set_current(b) != CORUN_OK) {
        return CORUN_ECUDA;
    }
    if (b->mirror != NULL) {
        /* a relay copies these at once; the stream writes follow (corun_ctl.h) */
        corun__ctl_mirror(corun__cuda_mirror(b, k->slot), w, n);
    }
    for (i = 0; i < n; i++) {
        CUresult r = w[i].size == 8 ? cu->cuStreamWriteValue64(b->ctl, k->ctl + w[i].off,
                                                               w[i].value, 0)
                                    : cu->cuStreamWriteValue32(b->ctl, k->ctl + w[i].off,
                                                               (uint32_t)w[i].value, 0);
        if (r != CUDA_SUCCESS) {
            return CORUN_ECUDA;
        }
    }
    return CORUN_OK;
}

/* Later launches of a kernel on our streams wait for the writes made before
 * them. Not for direct kernels: their resume grids wait at their gate, and
 * an event record may wait on the driver while a stream is held. */
static int order_after_writes(cuda_backend *b, corun__exec *k)
{
    const corun__cu *cu = b->d->cu;

    if (k->direct) {
        return CORUN_OK;
    }
    if (k->ready == NULL && cu->cuEventCreate(&k->ready, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
        k->ready = NULL;
        return CORUN_ECUDA;
    }
    return cu->cuEventRecord(k->ready, b->ctl) == CUDA_SUCCESS ? CORUN_OK : CORUN_ECUDA;
}

/* Whether a launch of k on our streams is in flight (task limits and
 * rewinds are written only while none is: corun_ctl.h). */
static bool in_flight(cuda_backend *b, corun__exec *k)
{
    uint32_t n;

    pthread_mutex_lock(&b->mu);
    n = k->inflight;
    pthread_mutex_unlock(&b->mu);
    return n > 0;
}

static int cuda_signal(corun__backend *be, corun__exec *k, corun__signal sig, uint64_t value)
{
    cuda_backend *b = cb(be);
    corun__ctl_write w[CORUN_CTL_MAX_WRITES];
    size_t n = 0;
    int rc;

    if (sig == CORUN_SIG_TASK_LIMIT && in_flight(b, k)) {
        return CORUN_EBUSY;
    }
    rc = corun__ctl_signal(&k->ch, sig, value, w, &n);
    if (rc == CORUN_OK) {
        /* a direct kernel's signals keep their place behind its queued
         * grids (launcher.c) */
        rc = k->direct ? corun__cuda_write_after(b, k, w, n) : corun__cuda_write(b, k, w, n);
    }
    if (rc == CORUN_OK && (sig == CORUN_SIG_SM_RANGE || sig == CORUN_SIG_TASK_LIMIT)) {
        rc = order_after_writes(b, k);
    }
    return rc;
}

static int cuda_rewind(corun__backend *be, corun__exec *k, uint64_t next, uint64_t limit)
{
    cuda_backend *b = cb(be);
    corun__ctl_write w[CORUN_CTL_MAX_WRITES];
    size_t n = 0;
    int rc;

    if (in_flight(b, k)) {
        return CORUN_EBUSY;
    }
    rc = corun__ctl_rewind(&k->ch, next, limit, w, &n);
    if (rc == CORUN_OK) {
        rc = corun__cuda_write(b, k, w, n);
    }
    return rc == CORUN_OK ? order_after_writes(b, k) : rc;
}

/* From the report where a scheduled kernel's workers said every task was
 * done once none of its launches is in flight (no driver call: the
 * scheduler asks at every kernel's end); else a copy of the control
 * block, waited for. */
static int cuda_progress(corun__backend *be, corun__exec *k, corun_progress *out)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    corun_ctl *rb = b->readback;

    if (!k->direct && !in_flight(b, k) &&
        corun__ctl_progress_reported(&k->ch, &b->reports[k->slot], k->seq, out)) {
        return CORUN_OK;
    }
    if (corun__cuda_set_current(b) != CORUN_OK ||
        cu->cuMemcpyDtoHAsync(&rb->next, k->ctl + offsetof(corun_ctl, next),
                              sizeof(*rb) - offsetof(corun_ctl, next), b->ctl) != CUDA_SUCCESS ||
        cu->cuStreamSynchronize(b->ctl) != CUDA_SUCCESS) {
        return CORUN_ECUDA;
    }
    corun__ctl_progress(&k->ch, rb, out);
    return CORUN_OK;
}

static int cuda_code_register(corun__backend *be, const corun_kernel_desc *d, const void **code,
                              char *why, size_t why_len)
{
    return corun__cuda_code_register(cb(be), d, code, why, why_len);
}

static int cuda_direct(corun__backend *be, const corun__kspec *spec, const corun__direct_req *req,
                       corun__exec **out, corun__direct_got *got, char *why, size_t why_len)
{
    int rc = check_grid(&cb(be)->d->desc, spec, why, why_len);

    return rc == CORUN_OK ? corun__cuda_direct_launch(be, spec, req, out, got, why, why_len)
                          : rc;
}

static void cuda_destroy(corun__backend *be)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    int i;

    (void)corun__cuda_set_current(b);
    /* Our own streams only: the application's other work is not ours to
     * wait for. */
    if (b->ctl) {
        (void)cu->cuStreamSynchronize(b->ctl);
    }
    for (i = 0; i < NALLSTREAMS; i++) {
        if (b->streams[i]) {
            (void)cu->cuStreamSynchronize(b->streams[i]);
        }
    }
    corun__cuda_launcher_stop(b);
    corun__cuda_waiters_stop(b);
    for (i = 0; i < NALLSTREAMS; i++) {
        if (b->streams[i]) {
            (void)cu->cuStreamDestroy(b->streams[i]);
        }
    }
    if (b->ctl) {
        (void)cu->cuStreamDestroy(b->ctl);
    }
    for (i = 0; i < 2; i++) {
        if (b->green[i]) {
            (void)cu->cuGreenCtxDestroy(b->green[i]);
        }
    }
    corun__cuda_slots_free(b);
    corun__cuda_code_free_all(b);
    if (b->efd >= 0) {
        close(b->efd);
    }
    pthread_mutex_destroy(&b->mu);
    pthread_mutex_destroy(&b->codes_mu);
    pthread_cond_destroy(&b->work);
    pthread_mutex_destroy(&b->lq_mu);
    pthread_cond_destroy(&b->lq_cv);
    free(b);
}

static void cuda_describe(corun__backend *be, char *buf, size_t len)
{
    cuda_backend *b = cb(be);
    uint32_t free_n, ndirty;

    pthread_mutex_lock(&b->pool_mu);
    free_n = b->free_n;
    ndirty = b->ndirty;
    pthread_mutex_unlock(&b->pool_mu);
    snprintf(buf, len, "cuda: %u of %d control blocks free, %u being zeroed, %u direct kernels "
             "watched, %d waiter threads", free_n, CTL_SLOTS, ndirty,
             atomic_load_explicit(&b->ndirect, memory_order_relaxed), b->nwaiters);
}

static const corun__backend_ops cuda_ops = {
    .name = CORUN_CUDA_NAME,
    .caps = CORUN_CUDA_CAPS,
    .exec_open = cuda_exec_open,
    .exec_close = cuda_exec_close,
    .code_register = cuda_code_register,
    .direct_launch = cuda_direct,
    .bind = corun__cuda_bind,
    .launch_workers = cuda_launch_workers,
    .launch_plain = cuda_launch_plain,
    .partition = cuda_partition,
    .launch_plain_part = cuda_launch_plain_part,
    .signal = cuda_signal,
    .rewind = cuda_rewind,
    .progress = cuda_progress,
    .now_ns = cuda_now,
    .poll = corun__cuda_poll,
    .rates = corun__cuda_rates,
    .wake = corun__cuda_wake,
    .describe = cuda_describe,
    .ctl_share = corun__cuda_ctl_share,
    .mirror_fd = corun__cuda_mirror_fd,
    .peer_open = corun__cuda_peer_open,
    .peer_range = corun__cuda_peer_range,
    .peer_close = corun__cuda_peer_close,
    .destroy = cuda_destroy,
};

int corun__cuda_create(const corun__settings *set, corun__backend **out, char *why,
                       size_t why_len)
{
    device_state *d = corun__cuda_device(set->device, why, why_len);
    const corun__cu *cu;
    cuda_backend *b;
    CUcontext before = NULL;
    int i, rc = CORUN_ECUDA;

    if (d == NULL) {
        return CORUN_ENODEV;
    }
    cu = d->cu;
    /* the calling thread (a program's, at its first launch) keeps its context */
    (void)cu->cuCtxGetCurrent(&before);
    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return CORUN_ENOMEM;
    }
    b->be.ops = &cuda_ops;
    b->be.desc = d->desc;
    b->be.gpu_id = d->gpu_id;
    b->d = d;
    b->set = *set;
    b->efd = -1;
    pthread_mutex_init(&b->mu, NULL);
    pthread_mutex_init(&b->codes_mu, NULL);
    pthread_cond_init(&b->work, NULL);
    pthread_mutex_init(&b->lq_mu, NULL);
    pthread_cond_init(&b->lq_cv, NULL);
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
    rc = corun__cuda_slots_init(b, why, why_len);
    if (rc != CORUN_OK) {
        goto out_destroy;
    }
    b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (b->efd < 0) {
        snprintf(why, why_len, "eventfd: %s", strerror(errno));
        rc = CORUN_EIO;
        goto out_destroy;
    }
    *out = &b->be;
    if (before != NULL) {
        (void)cu->cuCtxSetCurrent(before);
    }
    return CORUN_OK;

out_destroy:
    cuda_destroy(&b->be);
    if (before != NULL) {
        (void)cu->cuCtxSetCurrent(before);
    }
    return rc;
}
