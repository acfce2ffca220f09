/*
 * ctl.c — the host side of the control-block protocol. See ctl.h; the
 * protocol itself is stated in corun_ctl.h.
 */
#include <stddef.h>
#include <string.h>

#include "core/ctl.h"
#include "corun/corun_chunk.h"

#define OFF(field) ((uint32_t)offsetof(corun_ctl, field))

void corun__ctl_init(corun__ctl_host *h, const corun__kspec *spec, uint32_t per_sm,
                     const corun_gpu_desc *gpu, uint32_t budget_ns, uint32_t chunk_max,
                     bool direct)
{
    memset(h, 0, sizeof(*h));
    h->grid_x = spec->grid.x;
    h->grid_y = spec->grid.y;
    h->grid_z = spec->grid.z;
    h->div_x = corun_divisor_of(spec->grid.x);
    h->div_y = corun_divisor_of(spec->grid.y);
    h->tasks = (uint64_t)spec->grid.x * spec->grid.y * spec->grid.z;
    h->per_sm = per_sm;
    h->budget_ns = budget_ns;
    h->chunk_max = chunk_max;
    h->sm_count = gpu->sm_count;
    h->ahead = spec->ahead;
    h->direct = direct;
}

void corun__ctl_launch(corun__ctl_host *h, const corun__launch_req *req, uint32_t sm_lo,
                       uint32_t sm_hi, corun_worker_arg *wa)
{
    bool own = false;

    if (!h->launched && (h->direct || h->ahead) && !h->signalled && req->base == 0 &&
        req->gen == 0 && sm_lo == 0 && sm_hi + 1 >= h->sm_count) {
        h->preset = (uint64_t)req->nworkers < h->tasks ? req->nworkers : (uint32_t)h->tasks;
        own = true;
    }
    h->launched = true;
    memset(wa, 0, sizeof(*wa));
    wa->base = req->base;
    wa->gen = req->gen;
    wa->grid_x = h->grid_x;
    wa->grid_y = h->grid_y;
    wa->grid_z = h->grid_z;
    wa->div_x_mul = h->div_x.mul;
    wa->div_x_sh = h->div_x.sh;
    wa->div_y_mul = h->div_y.mul;
    wa->div_y_sh = h->div_y.sh;
    wa->tasks = (uint32_t)h->tasks;
    wa->workers_per_capsm = h->per_sm;
    wa->nworkers = req->nworkers;
    wa->budget_ns = h->budget_ns;
    wa->chunk_max = h->chunk_max;
    wa->preset = h->preset;
    wa->own = own;
    wa->sm_lo = sm_lo;
    wa->sm_hi = sm_hi;
    wa->direct = h->direct;
    /* Not with a preset: a preset task's worker may not have started, and
     * holders could keep the slot it needs (corun_ctl.h). */
    wa->hold = req->hold && h->preset == 0;
}

static void put(corun__ctl_write *w, size_t *n, uint32_t off, uint32_t size, uint64_t value)
{
    w[*n].off = off;
    w[*n].size = size;
    w[*n].value = value;
    (*n)++;
}

int corun__ctl_signal(corun__ctl_host *h, corun__signal sig, uint64_t value,
                      corun__ctl_write *w, size_t *n)
{
    *n = 0;
    switch (sig) {
    case CORUN_SIG_HALT_GEN:
        if (value > UINT32_MAX) {
            return CORUN_ERANGE;
        }
        if (h->ahead && !h->direct) {
            /* The void first: the workers read it at their next claim, a
             * task before the copied halt_gen (corun_ctl.h). */
            put(w, n, OFF(next), 4, CORUN_AHEAD_VOID);
            h->voided = true;
        }
        put(w, n, OFF(halt_gen), 4, value);
        break;
    case CORUN_SIG_EVICT_BELOW:
        if (value > UINT32_MAX) {
            return CORUN_ERANGE;
        }
        put(w, n, OFF(evict_below), 4, value);
        break;
    case CORUN_SIG_NWORKERS:
        if (value > UINT32_MAX) {
            return CORUN_ERANGE;
        }
        put(w, n, OFF(nworkers), 4, value);
        return CORUN_OK; /* a hint: not a signal that forbids a preset start */
    case CORUN_SIG_SM_RANGE: {
        uint32_t lo = (uint32_t)value, hi = (uint32_t)(value >> 32);
        if (lo > hi || hi >= h->sm_count) {
            return CORUN_ERANGE;
        }
        /* Widen first, then narrow, so no worker in both ranges leaves. */
        put(w, n, OFF(sm_hi_inv), 4, (uint32_t)~hi);
        put(w, n, OFF(sm_lo), 4, lo);
        break;
    }
    case CORUN_SIG_RESUME:
        if (value > UINT32_MAX) {
            return CORUN_ERANGE;
        }
        put(w, n, OFF(resume), 4, value);
        return CORUN_OK;
    case CORUN_SIG_TASK_LIMIT:
        if (value > h->tasks) {
            return CORUN_ERANGE;
        }
        put(w, n, OFF(task_cut), 4, h->tasks - value);
        break;
    default:
        return CORUN_EINVAL;
    }
    h->signalled = true;
    return CORUN_OK;
}

int corun__ctl_rewind(corun__ctl_host *h, uint64_t next, uint64_t limit, corun__ctl_write *w,
                      size_t *n)
{
    *n = 0;
    if (next > h->tasks || limit > h->tasks || next < h->preset) {
        return CORUN_ERANGE;
    }
    put(w, n, OFF(next), 8, next - h->preset);
    put(w, n, OFF(task_cut), 4, h->tasks - limit);
    h->voided = false;
    h->signalled = true;
    return CORUN_OK;
}

void corun__ctl_release(corun__ctl_write *w, size_t *n)
{
    *n = 0;
    put(w, n, OFF(release), 4, 1);
}

void corun__ctl_progress(const corun__ctl_host *h, const corun_ctl *blk, corun_progress *out)
{
    const uint32_t done = (uint32_t)blk->done, primary_left = (uint32_t)(blk->done >> 32);
    const uint32_t gone = blk->exited + primary_left;

    out->tasks = h->tasks;
    /* Voided, next says nothing of the claims that ran: once every worker
     * has left they are [0, done) (corun_ctl.h). */
    out->claimed = h->voided ? done : h->preset + blk->next;
    out->done = done;
    out->live = blk->started > gone ? blk->started - gone : 0;
    out->task_ns = blk->task_ns_seed;
    out->ahead = h->ahead;
}

bool corun__ctl_report_read(const volatile corun_report *r, corun__report_view *out)
{
    uint32_t t0 = __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE), t1;

    out->done = r->done;
    out->live = r->live;
    out->task_ns = r->task_ns;
    {
        const uint64_t begin = r->t_start, end = r->t_end;
        out->run_ns = end > begin && end - begin < UINT32_MAX ? (uint32_t)(end - begin) : 0;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    t1 = __atomic_load_n(&r->tag, __ATOMIC_RELAXED);
    if (t0 != t1 || (t0 & 4u) != 0) { /* changed, or an odd count: being written */
        return false;
    }
    out->seq = CORUN_REPORT_SEQ(t0);
    out->state = CORUN_REPORT_STATE(t0);
    out->count = (t0 >> 2) & 0x3fu;
    return true;
}

bool corun__ctl_report_of(const volatile corun_report *r, uint32_t seq, corun__report_view *out)
{
    return corun__ctl_report_read(r, out) && out->seq == (seq & 0xffffffu);
}

bool corun__ctl_progress_reported(const corun__ctl_host *h, const volatile corun_report *r,
                                  uint32_t seq, corun_progress *out)
{
    corun__report_view v;

    if (!corun__ctl_report_of(r, seq, &v) || v.state != CORUN_REPORT_FINISHED) {
        return false;
    }
    out->tasks = h->tasks;
    out->claimed = h->tasks;
    out->done = h->tasks;
    out->live = 0;
    out->task_ns = v.task_ns;
    out->ahead = h->ahead;
    return true;
}

void corun__ctl_apply(corun_ctl *blk, const corun__ctl_write *w, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        char *p = (char *)blk + w[i].off;
        if (w[i].size == 8) {
            uint64_t v = w[i].value;
            memcpy(p, &v, 8);
        } else {
            uint32_t v = (uint32_t)w[i].value;
            memcpy(p, &v, 4);
        }
    }
}

void corun__ctl_mirror(volatile corun_mirror *m, const corun__ctl_write *w, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (w[i].size == 4 && w[i].off < CORUN_MIRROR_SIGNALS) {
            volatile uint32_t *p = (volatile uint32_t *)m + w[i].off / 4;
            __atomic_store_n(p, (uint32_t)w[i].value, __ATOMIC_RELEASE);
        }
    }
}

_Static_assert(offsetof(corun_ctl, halt_gen) == offsetof(corun_mirror, halt_gen) &&
                   offsetof(corun_ctl, evict_below) == offsetof(corun_mirror, evict_below) &&
                   offsetof(corun_ctl, sm_lo) == offsetof(corun_mirror, sm_lo) &&
                   offsetof(corun_ctl, sm_hi_inv) == offsetof(corun_mirror, sm_hi_inv),
               "the mirror holds the control block's first four words");

uint32_t corun__relay_plan(uint32_t w, uint32_t per_sm, uint32_t sm_lo, uint32_t sm_hi,
                           uint32_t sm_count, uint64_t tasks, bool *relay)
{
    const uint64_t slots = (uint64_t)per_sm * sm_count;
    const bool bound = sm_lo > 0 || sm_hi + 1 < sm_count;

    *relay = false;
    if (w == 0 || tasks <= w) {
        return w; /* every task a preset one, or a claim or so each: nothing to relay */
    }
    if (w < slots || bound) {
        *relay = true;
        return w;
    }
    if (w >= 2 && tasks / w >= CORUN_RELAY_MIN_WAVES) {
        *relay = true;
        return w - 1;
    }
    return w;
}

uint64_t corun__workers_capped(uint64_t w, uint32_t sm_lo, uint32_t sm_hi, uint32_t sm_count,
                               uint64_t tasks)
{
    return sm_lo == 0 && sm_hi + 1 >= sm_count && tasks > 0 && tasks < w ? tasks : w;
}

uint32_t corun__direct_workers(uint32_t n, uint32_t per_sm, uint32_t sm_lo, uint32_t sm_hi,
                               uint32_t sm_count, uint64_t tasks)
{
    return (uint32_t)corun__workers_capped(corun__workers_for(n, per_sm, sm_lo, sm_hi, sm_count),
                                           sm_lo, sm_hi, sm_count, tasks);
}

bool corun__direct_one_wave(uint32_t n, uint32_t per_sm, uint32_t sm_lo, uint32_t sm_hi,
                            uint32_t sm_count, uint64_t tasks)
{
    return sm_lo == 0 && sm_hi + 1 >= sm_count && tasks > 0 &&
           tasks <= corun__workers_for(n, per_sm, sm_lo, sm_hi, sm_count);
}

bool corun__direct_grid(uint32_t n, uint32_t w, uint32_t sm_lo, uint32_t sm_hi,
                        uint32_t sm_count, uint64_t tasks, bool hold)
{
    return n >= sm_count && sm_lo == 0 && sm_hi + 1 >= sm_count && !hold && w > 0 &&
           tasks > w && tasks <= INT32_MAX;
}

uint32_t corun__workers_for(uint32_t n, uint32_t per_sm, uint32_t sm_lo, uint32_t sm_hi,
                            uint32_t sm_count)
{
    uint64_t nworkers = (uint64_t)n * per_sm;
    const uint64_t bound = (uint64_t)sm_hi - sm_lo + 1;

    if (bound < sm_count) {
        uint64_t all = (uint64_t)sm_count * per_sm; /* one worker per slot of the GPU */
        uint64_t want = (nworkers * sm_count + bound - 1) / bound;
        if (want > all) {
            want = all;
        }
        if (want > nworkers) {
            nworkers = want;
        }
    }
    return nworkers > UINT32_MAX ? 0 : (uint32_t)nworkers;
}
