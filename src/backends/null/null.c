/* null.c — the recording backend (see null.h). */
#include <stdlib.h>
#include <string.h>

#include "backends/null/null.h"

#define NULL_LOG 4096
#define NULL_PENDING 1024

struct corun__exec {
    uint64_t tasks;
    uint64_t done;
    uint64_t next;
    uint64_t limit;
};

typedef struct null_backend {
    corun__backend be;
    uint64_t now;
    corun__null_call log[NULL_LOG];
    size_t nlog;
    uint64_t pending[NULL_PENDING];
    size_t npending;
    int fail_next;
} null_backend;

static null_backend *nb(corun__backend *be)
{
    return (null_backend *)be;
}

static void record(corun__backend *be, const corun__null_call *c)
{
    null_backend *b = nb(be);
    if (b->nlog < NULL_LOG) {
        b->log[b->nlog++] = *c;
    }
}

static int null_open(corun__backend *be, const corun__kspec *spec, corun__exec **out,
                     uint32_t *per_sm, char *why, size_t why_len)
{
    corun_kernel_shape shape = spec->shape;
    corun_occupancy occ;
    corun__exec *k;
    int rc;

    shape.threads_per_block = spec->block.x * spec->block.y * spec->block.z;
    shape.smem_dynamic = spec->smem_dynamic;
    rc = corun_occupancy_calc(&be->desc, &shape, &occ, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    k = calloc(1, sizeof(*k));
    if (k == NULL) {
        return CORUN_ENOMEM;
    }
    k->tasks = (uint64_t)spec->grid.x * spec->grid.y * spec->grid.z;
    k->limit = k->tasks;
    *per_sm = occ.blocks_per_sm;
    *out = k;
    return CORUN_OK;
}

static void null_close(corun__backend *be, corun__exec *k)
{
    free(k);
}

static int null_workers(corun__backend *be, corun__exec *k, const corun__launch_req *req)
{
    corun__null_call c = {.what = CORUN_NULL_WORKERS, .k = k, .req = *req};
    if (nb(be)->fail_next != CORUN_OK) {
        int rc = nb(be)->fail_next;
        nb(be)->fail_next = CORUN_OK;
        return rc;
    }
    record(be, &c);
    return CORUN_OK;
}

static int null_plain(corun__backend *be, corun__exec *k, int32_t priority, uint64_t cookie)
{
    corun__null_call c = {.what = CORUN_NULL_PLAIN, .k = k};
    if (nb(be)->fail_next != CORUN_OK) {
        int rc = nb(be)->fail_next;
        nb(be)->fail_next = CORUN_OK;
        return rc;
    }
    c.req.priority = priority;
    c.req.cookie = cookie;
    record(be, &c);
    return CORUN_OK;
}

static int null_signal(corun__backend *be, corun__exec *k, corun__signal sig, uint64_t value)
{
    corun__null_call c = {.what = CORUN_NULL_SIGNAL, .k = k, .sig = sig, .value = value};
    record(be, &c);
    return CORUN_OK;
}

static int null_rewind(corun__backend *be, corun__exec *k, uint64_t next, uint64_t limit)
{
    corun__null_call c = {.what = CORUN_NULL_REWIND, .k = k, .value = next, .limit = limit};
    record(be, &c);
    k->next = next;
    k->limit = limit;
    return CORUN_OK;
}

static int null_progress(corun__backend *be, corun__exec *k, corun_progress *out)
{
    out->tasks = k->tasks;
    out->claimed = k->next;
    out->done = k->done;
    out->live = 0;
    out->task_ns = 0;
    out->ahead = 0;
    return CORUN_OK;
}

static uint64_t null_now(corun__backend *be)
{
    return nb(be)->now;
}

static int null_poll(corun__backend *be, uint64_t deadline, corun__bevent *ev, size_t cap,
                     size_t *n)
{
    null_backend *b = nb(be);
    size_t i, m = b->npending < cap ? b->npending : cap;

    for (i = 0; i < m; i++) {
        memset(&ev[i], 0, sizeof(ev[i]));
        ev[i].cookie = b->pending[i];
        ev[i].time_ns = b->now;
        ev[i].status = CORUN_OK;
        ev[i].kind = CORUN_BEV_LAUNCH;
    }
    memmove(b->pending, b->pending + m, (b->npending - m) * sizeof(b->pending[0]));
    b->npending -= m;
    if (m == 0 && deadline != UINT64_MAX && deadline > b->now) {
        b->now = deadline;
    }
    *n = m;
    return CORUN_OK;
}

static void null_destroy(corun__backend *be)
{
    free(be);
}

static const corun__backend_ops null_ops = {
    .name = "null",
    .caps = CORUN_BE_VIRTUAL_TIME,
    .exec_open = null_open,
    .exec_close = null_close,
    .launch_workers = null_workers,
    .launch_plain = null_plain,
    .signal = null_signal,
    .rewind = null_rewind,
    .progress = null_progress,
    .now_ns = null_now,
    .poll = null_poll,
    .destroy = null_destroy,
};

int corun__null_create(const corun_gpu_desc *desc, corun__backend **out)
{
    null_backend *b = calloc(1, sizeof(*b));

    if (b == NULL) {
        return CORUN_ENOMEM;
    }
    b->be.ops = &null_ops;
    b->be.desc = *desc;
    b->now = 1;
    *out = &b->be;
    return CORUN_OK;
}

size_t corun__null_calls(corun__backend *be, const corun__null_call **calls)
{
    *calls = nb(be)->log;
    return nb(be)->nlog;
}

void corun__null_clear(corun__backend *be)
{
    nb(be)->nlog = 0;
}

void corun__null_finish(corun__backend *be, uint64_t cookie)
{
    null_backend *b = nb(be);
    if (b->npending < NULL_PENDING) {
        b->pending[b->npending++] = cookie;
    }
}

void corun__null_set_done(corun__backend *be, corun__exec *k, uint64_t done)
{
    k->done = done;
}

void corun__null_fail_next(corun__backend *be, int rc)
{
    nb(be)->fail_next = rc;
}

void corun__null_advance(corun__backend *be, uint64_t ns)
{
    nb(be)->now += ns;
}
