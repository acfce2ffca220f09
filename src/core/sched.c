/*
 * sched.c — the scheduler's mechanism: kernel records, CapSM accounting,
 * launches, signals, and the event loop. Decisions live in policies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl.h"
#include "core/policy.h"
#include "core/sched.h"

#define CORUN_SCHED_EVBUF 64

struct corun__sched {
    corun__backend *be;
    char *create_why;            /* corun__sched_opts.why, during create only */
    size_t create_why_len;
    bool parted;                 /* corun__sched_split_ls split the GPU */
    uint32_t win_lo, win_hi;     /* corun__sched_window: the SMs every kernel is kept in */
    const corun__policy_ops *pol;
    void *pst;
    corun__settings set;
    void (*observe)(void *ctx, const corun__job *k, corun__job_change what);
    void *observe_ctx;
    corun__job *head, *tail;     /* live kernels, submission order */
    corun__job **deferred;       /* kernels whose completion is not yet announced */
    size_t ndeferred, capdeferred;
    uint32_t next_id;
    uint32_t held;                  /* CapSMs held by all kernels */
    /* The share clock: the integral over time of what one CapSM is of an SM,
     * min(1, sm_count / held) -- it runs at one per ns unless CapSMs are
     * oversubscribed (manual). A kernel's CapSM-time grows by its CapSMs
     * times this clock's advance, so no set of kernels holds more than the
     * GPU. Brought up to date before every change of held. */
    double share_clock;
    uint64_t t_share_clock;         /* when share_clock was last brought up to date */
    uint64_t timer;                 /* policy timer, UINT64_MAX = none */
    uint64_t direct_plain;          /* direct launches that ran plain */
    uint64_t degrids;               /* grid-form kernels made workers (degrid) */
    corun__job *free_list;       /* released records, reused */
    corun__bevent ev[CORUN_SCHED_EVBUF];
};

/* Tells the observer, if any, what changed of k. */
static void observed(corun__sched *s, const corun__job *k, corun__job_change what)
{
    if (s->observe != NULL) {
        s->observe(s->observe_ctx, k, what);
    }
}


/* Per-kernel state the scheduler keeps beside the public record. */
typedef struct kernel_ext {
    corun__job k;
    uint64_t limit;          /* task limit now in force on the device */
    uint64_t limit_pending;  /* limit to apply at the next resume */
    bool announced;          /* complete/on_done already called */
    bool release_asked;      /* released while launches were in flight: freed
                                when the last one ends */
    bool clock_on;           /* k->t_run_since is valid (the sim clock starts at 0) */
    bool cancel;             /* corun__sched_cancel: ends FAILED once nothing runs */
} kernel_ext;

static kernel_ext *ext(corun__job *k)
{
    return (kernel_ext *)k;
}

uint64_t corun__sched_now(const corun__sched *s)
{
    return s->be->ops->now_ns(s->be);
}

const corun_gpu_desc *corun__sched_gpu(const corun__sched *s)
{
    return &s->be->desc;
}

const char *corun__sched_backend(const corun__sched *s)
{
    return s->be->ops->name;
}

unsigned corun__sched_caps(const corun__sched *s)
{
    return s->be->ops->caps;
}

uint64_t corun__sched_direct_plain(const corun__sched *s)
{
    return s->direct_plain;
}

uint64_t corun__sched_degrids(const corun__sched *s)
{
    return s->degrids;
}

/* The SMs a kernel asking for [lo, hi] runs on: the window while there is
 * one. The window is the whole GPU this process may use now: a policy's own
 * placement (smguard's LS floor, its bound batch range) was made for a GPU
 * the process had to itself, and intersected with the window it could leave
 * a kernel a sliver of SMs. */
static void clamp(const corun__sched *s, uint32_t *lo, uint32_t *hi)
{
    if (s->win_lo != 0 || s->win_hi != s->be->desc.sm_count - 1) {
        *lo = s->win_lo;
        *hi = s->win_hi;
    }
}

static bool windowed(const corun__sched *s)
{
    return s->win_lo != 0 || s->win_hi != s->be->desc.sm_count - 1;
}

void corun__sched_allot(corun__sched *s, corun_class cls, corun__allotment *out)
{
    out->plain = false;
    out->capsm = s->be->desc.sm_count;
    out->sm_lo = 0;
    out->sm_hi = s->be->desc.sm_count - 1;
    out->hold = false;
    if (s->pol->allot != NULL) {
        s->pol->allot(s, s->pst, cls, out);
    }
    if (windowed(s)) {
        clamp(s, &out->sm_lo, &out->sm_hi);
        if (out->capsm > out->sm_hi - out->sm_lo + 1) {
            out->capsm = out->sm_hi - out->sm_lo + 1;
        }
    }
}

const corun__settings *corun__sched_settings(const corun__sched *s)
{
    return &s->set;
}

uint32_t corun__sched_free_capsm(const corun__sched *s)
{
    uint32_t total = s->be->desc.sm_count;
    return s->held >= total ? 0 : total - s->held;
}

corun__job *corun__sched_first(const corun__sched *s)
{
    return s->head;
}

int corun__sched_create(const corun__sched_opts *o, corun__sched **out)
{
    corun__sched *s;
    int rc;

    if (o == NULL || o->backend == NULL || o->policy == NULL || out == NULL) {
        return CORUN_EINVAL;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return CORUN_ENOMEM;
    }
    s->be = o->backend;
    s->observe = o->observe;
    s->observe_ctx = o->observe_ctx;
    s->win_hi = o->backend->desc.sm_count - 1;
    s->pol = o->policy;
    s->set = o->settings;
    s->timer = UINT64_MAX;
    s->next_id = 1;
    if (s->pol->create != NULL) {
        s->create_why = o->why;
        s->create_why_len = o->why_len;
        rc = s->pol->create(s, &s->pst);
        s->create_why = NULL;
        if (rc != CORUN_OK) {
            free(s);
            return rc;
        }
    }
    *out = s;
    return CORUN_OK;
}

static void unlink_kernel(corun__sched *s, corun__job *k)
{
    if (k->prev) {
        k->prev->next = k->next;
    } else {
        s->head = k->next;
    }
    if (k->next) {
        k->next->prev = k->prev;
    } else {
        s->tail = k->prev;
    }
    k->prev = k->next = NULL;
}

static void free_kernel(corun__sched *s, corun__job *k)
{
    if (k->ex != NULL) {
        s->be->ops->exec_close(s->be, k->ex);
        k->ex = NULL;
    }
    k->next = s->free_list;
    s->free_list = k;
}

void corun__sched_destroy(corun__sched *s)
{
    corun__job *k, *n;
    uint64_t give_up;

    if (s == NULL) {
        return;
    }
    /* Halt what still runs and wait for its launches, so no worker touches a
     * control block after it is freed. A direct kernel is the program's own
     * work in its stream: its gates are opened instead, so it finishes and
     * the stream goes on. */
    for (k = s->head; k != NULL; k = k->next) {
        if (k->direct && k->gates_open < k->gates) {
            (void)s->be->ops->signal(s->be, k->ex, CORUN_SIG_RESUME, k->gates);
            k->gates_open = k->gates;
        } else if (corun__job_active(k) && !k->plain && !k->direct && k->inflight > 0) {
            (void)s->be->ops->signal(s->be, k->ex, CORUN_SIG_HALT_GEN, (uint64_t)k->gen + 1);
        }
    }
    give_up = corun__sched_now(s) + 1000000000ull;
    for (;;) {
        uint32_t inflight = 0;
        size_t n_ev = 0, i;
        for (k = s->head; k != NULL; k = k->next) {
            inflight += k->inflight;
        }
        if (inflight == 0 || corun__sched_now(s) >= give_up) {
            break;
        }
        if (s->be->ops->poll(s->be, give_up, s->ev, CORUN_SCHED_EVBUF, &n_ev) != CORUN_OK) {
            break;
        }
        for (i = 0; i < n_ev; i++) {
            corun__job *ek = (corun__job *)(uintptr_t)s->ev[i].cookie;
            if (s->ev[i].kind != CORUN_BEV_HELD && ek->inflight > 0) {
                ek->inflight--;
            }
        }
    }
    for (k = s->head; k != NULL; k = n) {
        n = k->next;
        if (k->pdata != NULL && s->pol->forget != NULL) {
            s->pol->forget(s, s->pst, k);
        }
        if (k->ex != NULL) {
            /* Backends wait for, or outlive, launches still in flight. */
            s->be->ops->exec_close(s->be, k->ex);
        }
        free(ext(k));
    }
    for (k = s->free_list; k != NULL; k = n) {
        n = k->next;
        free(ext(k));
    }
    if (s->pol->destroy != NULL) {
        s->pol->destroy(s->pst);
    }
    free(s->deferred);
    free(s);
}

static int defer(corun__sched *s, corun__job *k)
{
    if (s->ndeferred == s->capdeferred) {
        size_t cap = s->capdeferred ? s->capdeferred * 2 : 16;
        corun__job **v = realloc(s->deferred, cap * sizeof(*v));
        if (v == NULL) {
            return CORUN_ENOMEM;
        }
        s->deferred = v;
        s->capdeferred = cap;
    }
    s->deferred[s->ndeferred++] = k;
    return CORUN_OK;
}

/* The share clock at `now`, held unchanged since it was last brought up to date. */
static double share_clock_at(const corun__sched *s, uint64_t now)
{
    uint32_t sms = s->be->desc.sm_count;
    double rate = s->held > sms ? (double)sms / s->held : 1.0;

    return now > s->t_share_clock ? s->share_clock + rate * (double)(now - s->t_share_clock)
                                  : s->share_clock;
}

/* Brings k->capsm_ns (and the share clock) up to now; called before every
 * change of k's CapSMs, so before every change of s->held. */
static void capsm_clock(corun__sched *s, corun__job *k)
{
    uint64_t now = corun__sched_now(s);

    s->share_clock = share_clock_at(s, now);
    s->t_share_clock = now;
    k->capsm_ns += (double)corun__job_capsm(k) * (s->share_clock - k->capsm_mark);
    k->capsm_mark = s->share_clock;
}

double corun__sched_capsm_ns(const corun__sched *s, const corun__job *k)
{
    return k->capsm_ns +
           (double)corun__job_capsm(k) * (share_clock_at(s, corun__sched_now(s)) - k->capsm_mark);
}

/* Gives back whatever CapSMs k holds. */
static void drop_capsm(corun__sched *s, corun__job *k)
{
    uint32_t n = corun__job_capsm(k);

    capsm_clock(s, k);
    s->held -= n;
    k->capsm_lo = k->capsm_hi;
}

static void stop_running_clock(corun__sched *s, corun__job *k)
{
    if (ext(k)->clock_on) {
        k->run_ns += corun__sched_now(s) - k->t_run_since;
        k->t_run_since = 0;
        ext(k)->clock_on = false;
    }
}

/* Marks k finished (DONE or FAILED) and queues the announcement. */
static void finish(corun__sched *s, corun__job *k, corun__jstate state, int status)
{
    if (k->direct && k->gates_open < k->gates) {
        /* A resume grid enqueued by a halt that came too late: let it run,
         * find nothing to do and leave, so the block can be reused. */
        (void)s->be->ops->signal(s->be, k->ex, CORUN_SIG_RESUME, k->gates);
        k->gates_open = k->gates;
    }
    drop_capsm(s, k);
    stop_running_clock(s, k);
    k->state = state;
    k->status = status;
    k->t_end = corun__sched_now(s);
    if (state == CORUN_JS_DONE) {
        k->done_tasks = k->tasks;
    }
    if (defer(s, k) != CORUN_OK) {
        /* Out of memory for the queue: announce now rather than never. */
        ext(k)->announced = true;
        if (s->pol->complete) {
            s->pol->complete(s, s->pst, k);
        }
        if (k->on_done) {
            k->on_done(s, k, k->user);
        }
    }
}

static void announce_deferred(corun__sched *s)
{
    /* Announcements may finish more kernels (a policy's action fails),
     * which join the end of the queue: take them in order by index, and
     * empty the queue once all are taken (a memmove per announcement made
     * thousands of direct kernels finishing at once quadratic). */
    size_t i;

    for (i = 0; i < s->ndeferred; i++) {
        corun__job *k = s->deferred[i];
        if (ext(k)->announced) {
            continue;
        }
        ext(k)->announced = true;
        if (s->pol->complete) {
            s->pol->complete(s, s->pst, k);
        }
        if (k->on_done) {
            k->on_done(s, k, k->user);
        }
    }
    s->ndeferred = 0;
}

/* A zeroed record, reused or new; NULL when out of memory. */
static corun__job *new_record(corun__sched *s)
{
    kernel_ext *e;

    if (s->free_list != NULL) {
        corun__job *k = s->free_list;
        s->free_list = k->next;
        e = ext(k);
        memset(e, 0, sizeof(*e));
        return k;
    }
    e = calloc(1, sizeof(*e));
    return e != NULL ? &e->k : NULL;
}

/* Fills k from spec and attr and links it at the tail; ex already set. */
static void setup_record(corun__sched *s, corun__job *k, const corun__kspec *spec,
                         const corun_launch_attr *attr, uint32_t per_sm,
                         corun__job_done_fn on_done, void *user)
{
    kernel_ext *e = ext(k);
    uint64_t tasks = (uint64_t)spec->grid.x * spec->grid.y * spec->grid.z;

    (void)e;
    k->id = s->next_id++;
    snprintf(k->name, sizeof(k->name), "%s", spec->name);
    k->attr = *attr;
    if (k->attr.weight == 0) {
        k->attr.weight = 1;
    }
    k->tasks = tasks;
    k->per_sm = per_sm;
    k->sm_lo = 0;
    k->sm_hi = s->be->desc.sm_count - 1;
    k->sm_top = k->sm_hi;
    k->block_threads = spec->block.x * spec->block.y * spec->block.z;
    k->smem_bytes = spec->shape.smem_static + spec->smem_dynamic;
    k->state = CORUN_JS_WAITING;
    k->status = CORUN_OK;
    k->t_submit = corun__sched_now(s);
    k->on_done = on_done;
    k->user = user;
    e->limit = tasks;
    e->limit_pending = tasks;
    k->prev = s->tail;
    if (s->tail) {
        s->tail->next = k;
    } else {
        s->head = k;
    }
    s->tail = k;
}

int corun__sched_submit(corun__sched *s, const corun__kspec *spec, const corun_launch_attr *attr,
                        corun__job_done_fn on_done, void *user, corun__job **out, char *why,
                        size_t why_len)
{
    corun__job *k;
    uint32_t per_sm = 0;
    int rc;

    if (spec == NULL || attr == NULL) {
        return CORUN_EINVAL;
    }
    if (attr->capsm > s->be->desc.sm_count) {
        if (why != NULL && why_len > 0) {
            snprintf(why, why_len, "kernel '%s' asks for %u CapSMs but the GPU has %u", spec->name,
                     attr->capsm, s->be->desc.sm_count);
        }
        return CORUN_ERANGE;
    }
    if (s->pol->admit != NULL &&
        (rc = s->pol->admit(&s->set, &s->be->desc, attr, why, why_len)) != CORUN_OK) {
        return rc;
    }
    k = new_record(s);
    if (k == NULL) {
        return CORUN_ENOMEM;
    }
    rc = s->be->ops->exec_open(s->be, spec, &k->ex, &per_sm, why, why_len);
    if (rc != CORUN_OK) {
        k->ex = NULL;
        k->next = s->free_list;
        s->free_list = k;
        return rc;
    }
    setup_record(s, k, spec, attr, per_sm, on_done, user);
    if (out != NULL) {
        *out = k;
    }
    if (s->pol->arrive) {
        s->pol->arrive(s, s->pst, k);
    }
    return CORUN_OK;
}

int corun__sched_adopt(corun__sched *s, const corun__kspec *spec, const corun_launch_attr *attr,
                       corun__exec *ex, const corun__direct_info *info,
                       corun__job_done_fn on_done, void *user, corun__job **out)
{
    corun__job *k = new_record(s);

    if (k == NULL) {
        return CORUN_ENOMEM;
    }
    k->ex = ex;
    setup_record(s, k, spec, attr, info->per_sm, on_done, user);
    k->direct = true;
    k->grid = info->grid && info->capsm != 0;
    k->ran_ahead = info->ahead;
    k->launches = 1;
    k->t_submit = k->t_start = info->t_launch;
    if (out != NULL) {
        *out = k;
    }
    s->be->ops->bind(s->be, ex, (uint64_t)(uintptr_t)k);
    if (info->capsm == 0) {
        k->plain = true;
        s->direct_plain++;
        finish(s, k, CORUN_JS_DONE, CORUN_OK);
    } else {
        k->inflight = 1; /* the primary grid, until its device side reports */
        k->sm_lo = info->sm_lo;
        k->sm_hi = info->sm_hi;
        k->sm_top = info->sm_hi;
        capsm_clock(s, k);
        k->capsm_hi = info->capsm;
        s->held += info->capsm;
        k->state = CORUN_JS_RUNNING;
        k->t_run_since = info->t_launch;
        ext(k)->clock_on = true;
        observed(s, k, CORUN_JC_RUN);
    }
    if (s->pol->direct) {
        s->pol->direct(s, s->pst, k);
    }
    return CORUN_OK;
}

void corun__sched_release(corun__sched *s, corun__job *k)
{
    if (k == NULL || (k->state != CORUN_JS_DONE && k->state != CORUN_JS_FAILED)) {
        return;
    }
    if (k->inflight > 0) {
        ext(k)->release_asked = true; /* a direct kernel's resume grid still ends */
        return;
    }
    unlink_kernel(s, k);
    free_kernel(s, k);
}

static void set_nworkers(corun__sched *s, corun__job *k)
{
    (void)s->be->ops->signal(s->be, k->ex, CORUN_SIG_NWORKERS,
                             (uint64_t)corun__job_capsm(k) * k->per_sm);
}

/* Moves k's SM range (within what corun__sched_bind allowed); the workers
 * get it clamped to the window, k keeps what was asked. */
static int set_range(corun__sched *s, corun__job *k, uint32_t lo, uint32_t hi)
{
    uint32_t l = lo, h = hi;
    int rc;

    clamp(s, &l, &h);
    rc = s->be->ops->signal(s->be, k->ex, CORUN_SIG_SM_RANGE, (uint64_t)l | ((uint64_t)h << 32));
    if (rc == CORUN_OK) {
        k->sm_lo = lo;
        k->sm_hi = hi;
    }
    return rc;
}

/* Launches workers for CapSM ids [first, first + n) of k.
 *
 * A kernel bound to fewer SMs than the GPU has (corun__sched_bind) is
 * launched with more workers: the hardware places workers on every SM with a
 * free slot, and those outside the range leave at their first claim without
 * running a task. n CapSMs' worth stay if n * per_sm * sm_count / bound are
 * launched, capped at one per slot of the GPU (more would only wait for
 * slots). So a batch kernel bound to the SMs outside a reservation fills
 * them and leaves the reserved SMs empty. The surplus workers carry CapSM
 * ids beyond n; eviction by CapSM id stays approximate for a bound kernel. */
static int launch_workers(corun__sched *s, corun__job *k, uint32_t first, uint32_t n)
{
    corun__launch_req req;
    uint32_t lo = k->sm_lo, hi = k->sm_hi;
    uint64_t nworkers, base = (uint64_t)first * k->per_sm;
    int rc;

    clamp(s, &lo, &hi);
    nworkers = corun__workers_for(n, k->per_sm, lo, hi, s->be->desc.sm_count);
    if (nworkers == 0 || base + nworkers > UINT32_MAX) {
        return CORUN_ERANGE;
    }
    nworkers = corun__workers_capped(nworkers, lo, hi, s->be->desc.sm_count, k->tasks);
    if (windowed(s) && corun__attr_ls(&k->attr) &&
        nworkers > (uint64_t)n * k->per_sm) {
        /* An LS kernel's window is SMs of its own, the rest busy with other
         * programs' work: surplus workers would wait there for slots, and the
         * kernel could not end before they had come and gone. */
        nworkers = (uint64_t)n * k->per_sm;
    }
    if (windowed(s)) {
        /* its workers stay in the window from their first claim */
        rc = s->be->ops->signal(s->be, k->ex, CORUN_SIG_SM_RANGE,
                                (uint64_t)lo | ((uint64_t)hi << 32));
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    memset(&req, 0, sizeof(req));
    req.nworkers = (uint32_t)nworkers;
    req.base = (uint32_t)base;
    req.gen = k->gen;
    req.priority = corun__attr_ls(&k->attr) ? 1 : 0;
    req.cookie = (uint64_t)(uintptr_t)k;
    req.part = k->part;
    req.hold = k->hold;
    rc = s->be->ops->launch_workers(s->be, k->ex, &req);
    if (rc != CORUN_OK) {
        return rc;
    }
    k->inflight++;
    k->launches++;
    if (k->launches == 1) {
        k->t_start = corun__sched_now(s);
    }
    return CORUN_OK;
}

static int degrid(corun__sched *s, corun__job *k);
static int add_capsm(corun__sched *s, corun__job *k, uint32_t n);

/* A launch failed: if nothing of k is on the GPU any more, k has failed. */
static int launch_failed(corun__sched *s, corun__job *k, int rc)
{
    k->status = rc;
    if (k->inflight == 0) {
        finish(s, k, CORUN_JS_FAILED, rc);
    }
    return rc;
}

/* A paused direct kernel resumes by opening the gate of the grid its halt
 * enqueued (corun__sched_stop): that grid carries a worker for every slot of
 * the GPU, CapSM ids [gate_base, gate_base + sm_count); the lowest are
 * evicted before the gate opens so that n CapSMs' worth run. One paused by
 * an eviction of every CapSM it held has no gate grid waiting: it gets new
 * workers, as a growth does (launched off the scheduler's thread by the
 * backend: the launch may wait for a copy behind the held stream). */
static int resume_direct(corun__sched *s, corun__job *k, uint32_t n)
{
    const uint32_t nsm = s->be->desc.sm_count;
    const uint32_t lo = k->gate_base + (nsm - (n < nsm ? n : nsm));
    int rc;

    if (k->gates_open == k->gates) {
        if (corun__job_capsm(k) != 0) {
            return CORUN_ESTATE;
        }
        rc = add_capsm(s, k, n < nsm ? n : nsm);
        if (rc != CORUN_OK) {
            return rc;
        }
        k->state = CORUN_JS_RUNNING;
        k->t_run_since = corun__sched_now(s);
        ext(k)->clock_on = true;
        observed(s, k, CORUN_JC_RUN);
        return CORUN_OK;
    }
    if (n > nsm) {
        n = nsm;
    }
    rc = s->be->ops->signal(s->be, k->ex, CORUN_SIG_EVICT_BELOW, lo);
    if (rc == CORUN_OK && k->sm_hi < k->sm_top) {
        rc = set_range(s, k, k->sm_lo, k->sm_top);
    }
    if (rc == CORUN_OK) {
        rc = s->be->ops->signal(s->be, k->ex, CORUN_SIG_NWORKERS, (uint64_t)n * k->per_sm);
    }
    if (rc == CORUN_OK) {
        rc = s->be->ops->signal(s->be, k->ex, CORUN_SIG_RESUME, k->gates);
    }
    if (rc != CORUN_OK) {
        return rc;
    }
    k->gates_open = k->gates;
    capsm_clock(s, k);
    k->capsm_lo = lo;
    k->capsm_hi = k->gate_base + nsm;
    s->held += n;
    k->state = CORUN_JS_RUNNING;
    k->t_run_since = corun__sched_now(s);
    ext(k)->clock_on = true;
    observed(s, k, CORUN_JC_RUN);
    return CORUN_OK;
}

/* n more CapSMs for k (running, or starting): workers launched for CapSM ids from
 * capsm_hi on (its SM range as it stands). */
static int add_capsm(corun__sched *s, corun__job *k, uint32_t n)
{
    int rc = launch_workers(s, k, k->capsm_hi, n);

    if (rc != CORUN_OK) {
        return launch_failed(s, k, rc);
    }
    capsm_clock(s, k);
    k->capsm_hi += n;
    s->held += n;
    return CORUN_OK;
}

/* n fewer CapSMs for running k, its lowest ids (whose workers the caller
 * has told to leave); they count as free at once. */
static void drop_low_capsm(corun__sched *s, corun__job *k, uint32_t n)
{
    capsm_clock(s, k);
    k->capsm_lo += n;
    s->held -= n;
}

int corun__sched_run(corun__sched *s, corun__job *k, uint32_t n)
{
    kernel_ext *e = ext(k);
    int rc;

    if (n == 0) {
        return CORUN_EINVAL;
    }
    if (k->plain) {
        return CORUN_ESTATE;
    }
    if (k->state == CORUN_JS_RUNNING) {
        return corun__sched_grow(s, k, n);
    }
    if (k->state != CORUN_JS_WAITING && k->state != CORUN_JS_PAUSED) {
        return CORUN_ESTATE;
    }
    if (k->direct) {
        return resume_direct(s, k, n);
    }
    if (k->state == CORUN_JS_PAUSED) {
        /* Every worker has left, so the tasks run are exactly [0, done):
         * continue from there, with any raised limit now in force. */
        corun_progress p;
        rc = s->be->ops->progress(s->be, k->ex, &p);
        if (rc != CORUN_OK) {
            return rc;
        }
        rc = s->be->ops->rewind(s->be, k->ex, p.done, e->limit_pending);
        if (rc != CORUN_OK) {
            return rc;
        }
        e->limit = e->limit_pending;
        k->done_tasks = p.done;
    }
    if (k->sm_hi < k->sm_top) {
        /* Shrunk by SMs before it paused: it runs on its whole range again. */
        rc = set_range(s, k, k->sm_lo, k->sm_top);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    k->capsm_lo = k->capsm_hi;
    rc = add_capsm(s, k, n);
    if (rc != CORUN_OK) {
        return rc;
    }
    k->state = CORUN_JS_RUNNING;
    k->t_run_since = corun__sched_now(s);
    e->clock_on = true;
    set_nworkers(s, k);
    observed(s, k, CORUN_JC_RUN);
    return CORUN_OK;
}

int corun__sched_split_ls(corun__sched *s, uint32_t *got)
{
    const uint32_t want = s->set.green_ls_sms != 0 ? s->set.green_ls_sms
                                                   : (uint32_t)s->set.reserve_capsm;
    char why[256] = "";
    int rc = CORUN_ENOTSUP;

    if (s->be->ops->partition == NULL || s->be->ops->launch_plain_part == NULL) {
        snprintf(why, sizeof(why), "the %s backend cannot split the GPU into SM partitions",
                 s->be->ops->name);
    } else {
        rc = s->be->ops->partition(s->be, want, got, why, sizeof(why));
    }
    if (rc == CORUN_OK) {
        s->parted = true;
    } else if (s->create_why != NULL && s->create_why_len > 0) {
        snprintf(s->create_why, s->create_why_len,
                 "cannot split the GPU for LS kernels (%u SMs): %.256s", want,
                 why[0] != '\0' ? why : corun_strerror(rc));
    }
    return rc;
}

int corun__sched_run_plain(corun__sched *s, corun__job *k, int32_t priority)
{
    return corun__sched_run_plain_part(s, k, priority, 0);
}

int corun__sched_run_plain_part(corun__sched *s, corun__job *k, int32_t priority, unsigned part)
{
    const uint64_t cookie = (uint64_t)(uintptr_t)k;
    int rc;

    if (k->state != CORUN_JS_WAITING) {
        return CORUN_ESTATE;
    }
    if (part != 0 && s->be->ops->launch_plain_part == NULL) {
        return CORUN_ENOTSUP;
    }
    k->plain = true;
    rc = part == 0 ? s->be->ops->launch_plain(s->be, k->ex, priority, cookie)
                   : s->be->ops->launch_plain_part(s->be, k->ex, priority, part, cookie);
    if (rc != CORUN_OK) {
        return launch_failed(s, k, rc);
    }
    k->inflight++;
    k->launches++;
    k->t_start = corun__sched_now(s);
    k->t_run_since = k->t_start;
    ext(k)->clock_on = true;
    k->state = CORUN_JS_RUNNING;
    observed(s, k, CORUN_JC_RUN);
    return CORUN_OK;
}

int corun__sched_grow(corun__sched *s, corun__job *k, uint32_t n)
{
    int rc;

    if (n == 0) {
        return CORUN_OK;
    }
    if (k->state == CORUN_JS_PAUSED || k->state == CORUN_JS_WAITING) {
        return corun__sched_run(s, k, n);
    }
    if (k->state != CORUN_JS_RUNNING || k->plain) {
        return CORUN_ESTATE;
    }
    if (k->sm_hi < k->sm_top) {
        uint32_t hi = k->sm_top - k->sm_hi > n ? k->sm_hi + n : k->sm_top;
        rc = set_range(s, k, k->sm_lo, hi);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    rc = add_capsm(s, k, n);
    if (rc != CORUN_OK) {
        return rc;
    }
    set_nworkers(s, k);
    observed(s, k, CORUN_JC_RESIZE);
    return CORUN_OK;
}

int corun__sched_shrink(corun__sched *s, corun__job *k, uint32_t n)
{
    int rc;

    if (k->state != CORUN_JS_RUNNING || k->plain) {
        return CORUN_ESTATE;
    }
    if (n > corun__job_capsm(k)) {
        return CORUN_ERANGE;
    }
    if (n == 0) {
        return CORUN_OK;
    }
    if ((rc = degrid(s, k)) != CORUN_OK) {
        return rc;
    }
    if (k->sm_top - k->sm_lo + 1 < s->be->desc.sm_count && n <= k->sm_hi - k->sm_lo) {
        /* Bound: whole SMs, the top n of its range. */
        rc = set_range(s, k, k->sm_lo, k->sm_hi - n);
    } else {
        rc = s->be->ops->signal(s->be, k->ex, CORUN_SIG_EVICT_BELOW, k->capsm_lo + n);
    }
    if (rc != CORUN_OK) {
        return rc;
    }
    drop_low_capsm(s, k, n);
    set_nworkers(s, k);
    observed(s, k, CORUN_JC_RESIZE);
    return CORUN_OK;
}

/* SMs of [a_lo, a_hi] not in [b_lo, b_hi]. */
static uint32_t sms_outside(uint32_t a_lo, uint32_t a_hi, uint32_t b_lo, uint32_t b_hi)
{
    const uint32_t n = a_hi - a_lo + 1;
    const uint32_t lo = a_lo > b_lo ? a_lo : b_lo, hi = a_hi < b_hi ? a_hi : b_hi;

    return lo <= hi ? n - (hi - lo + 1) : n;
}

int corun__sched_move(corun__sched *s, corun__job *k, uint32_t sm_lo, uint32_t sm_hi)
{
    const uint32_t old_lo = k->sm_lo, old_hi = k->sm_top;
    uint32_t leaving, entering;
    int rc;

    if (k->state != CORUN_JS_RUNNING || k->plain) {
        return CORUN_ESTATE;
    }
    if (sm_lo > sm_hi || sm_hi >= s->be->desc.sm_count) {
        return CORUN_ERANGE;
    }
    if ((rc = degrid(s, k)) != CORUN_OK) {
        return rc;
    }
    leaving = sms_outside(old_lo, old_hi, sm_lo, sm_hi);
    entering = sms_outside(sm_lo, sm_hi, old_lo, old_hi);
    if (leaving > corun__job_capsm(k) - 1 + entering) {
        leaving = corun__job_capsm(k) - 1 + entering; /* it keeps a CapSM */
    }
    rc = set_range(s, k, sm_lo, sm_hi);
    if (rc != CORUN_OK) {
        return rc;
    }
    k->sm_top = sm_hi;
    if (entering > 0 && (rc = add_capsm(s, k, entering)) != CORUN_OK) {
        return rc;
    }
    if (leaving > 0) {
        /* the workers on the SMs it left leave at their next claim */
        drop_low_capsm(s, k, leaving);
    }
    set_nworkers(s, k);
    observed(s, k, CORUN_JC_RESIZE);
    return CORUN_OK;
}

int corun__sched_stop(corun__sched *s, corun__job *k)
{
    int rc;

    if (k->plain) {
        return CORUN_ENOTSUP;
    }
    if (k->state != CORUN_JS_RUNNING) {
        return CORUN_ESTATE;
    }
    if (k->direct) {
        /* Its resume grid first, behind a gate: a resume is then one write,
         * never a launch (corun_ctl.h says why). */
        const uint32_t nsm = s->be->desc.sm_count;
        corun__launch_req req;
        memset(&req, 0, sizeof(req));
        if ((uint64_t)(k->capsm_hi + nsm) * k->per_sm > UINT32_MAX) {
            return CORUN_ERANGE;
        }
        req.nworkers = nsm * k->per_sm;
        req.base = k->capsm_hi * k->per_sm;
        req.gen = k->gen + 1;
        req.priority = corun__attr_ls(&k->attr) ? 1 : 0;
        req.gate = k->gates + 1;
        req.cookie = (uint64_t)(uintptr_t)k;
        rc = s->be->ops->launch_workers(s->be, k->ex, &req);
        if (rc != CORUN_OK) {
            return rc;
        }
        k->gates++;
        k->gate_base = k->capsm_hi;
        k->inflight++;
        k->launches++;
    }
    k->gen++;
    rc = s->be->ops->signal(s->be, k->ex, CORUN_SIG_HALT_GEN, k->gen);
    if (rc != CORUN_OK) {
        k->gen--;
        return rc;
    }
    drop_capsm(s, k);
    k->preemptions++;
    k->grid = false; /* its blocks claim no more; it resumes as workers */
    k->state = CORUN_JS_STOPPING;
    observed(s, k, CORUN_JC_STOP);
    return CORUN_OK;
}

/* A kernel whose primary grid is the grid form becomes workers: halted, and
 * at once resumed on as many CapSMs through the gate grid its halt enqueued
 * (corun_ctl.h: a grid block obeys a halt only). Its blocks running go on
 * to their tasks' ends, like evicted workers; then an eviction or a
 * narrowing acts on workers. A no-op for any other kernel. */
static int degrid(corun__sched *s, corun__job *k)
{
    const uint32_t n = corun__job_capsm(k);
    int rc;

    if (!k->grid || k->state != CORUN_JS_RUNNING) {
        return CORUN_OK;
    }
    rc = corun__sched_stop(s, k);
    if (rc == CORUN_OK) {
        rc = resume_direct(s, k, n);
    }
    if (rc == CORUN_OK) {
        s->degrids++;
    }
    return rc;
}

int corun__sched_bind(corun__sched *s, corun__job *k, uint32_t sm_lo, uint32_t sm_hi)
{
    int rc;

    if (k->plain) {
        return CORUN_ENOTSUP;
    }
    if (sm_lo > sm_hi || sm_hi >= s->be->desc.sm_count) {
        return CORUN_ERANGE;
    }
    rc = degrid(s, k);
    if (rc == CORUN_OK) {
        rc = set_range(s, k, sm_lo, sm_hi);
    }
    if (rc == CORUN_OK) {
        k->sm_top = sm_hi;
    }
    return rc;
}

int corun__sched_window(corun__sched *s, uint32_t lo, uint32_t hi)
{
    corun__job *k;
    int rc = CORUN_OK;

    if (lo > hi || hi >= s->be->desc.sm_count) {
        return CORUN_ERANGE;
    }
    if (lo == s->win_lo && hi == s->win_hi) {
        return CORUN_OK;
    }
    s->win_lo = lo;
    s->win_hi = hi;
    for (k = s->head; k != NULL && rc == CORUN_OK; k = k->next) {
        if (!k->plain && (k->state == CORUN_JS_RUNNING || k->state == CORUN_JS_STOPPING)) {
            rc = degrid(s, k);
            if (rc == CORUN_OK) {
                rc = set_range(s, k, k->sm_lo, k->sm_hi);
            }
        }
    }
    return rc;
}

int corun__sched_place(corun__sched *s, corun__job *k, unsigned part)
{
    if (k->plain || k->direct || part > 2 ||
        (part != 0 && (s->be->ops->partition == NULL || !s->parted))) {
        return part > 2 ? CORUN_EINVAL : CORUN_ENOTSUP;
    }
    k->part = (uint8_t)part;
    return CORUN_OK;
}

int corun__sched_limit(corun__sched *s, corun__job *k, uint64_t limit)
{
    kernel_ext *e = ext(k);
    int rc;

    if (k->plain || k->direct) {
        return CORUN_ENOTSUP; /* a direct kernel's claims are never rewound */
    }
    if (limit > k->tasks) {
        limit = k->tasks;
    }
    e->limit_pending = limit;
    /* Never launched: set it now. Otherwise it waits for the next resume
     * (the rewind sets it): changed under running workers, a limit can leave
     * a task unrun (corun_ctl.h), and a paused kernel is rewound anyway. */
    if (k->state == CORUN_JS_WAITING && limit != e->limit) {
        rc = s->be->ops->signal(s->be, k->ex, CORUN_SIG_TASK_LIMIT, limit);
        if (rc != CORUN_OK) {
            return rc;
        }
        e->limit = limit;
    }
    return CORUN_OK;
}

int corun__sched_cancel(corun__sched *s, corun__job *k)
{
    if (k->state == CORUN_JS_DONE || k->state == CORUN_JS_FAILED) {
        return CORUN_OK;
    }
    if (k->plain || k->direct) {
        return CORUN_ENOTSUP; /* a plain grid cannot be halted; a direct one is the program's */
    }
    ext(k)->cancel = true;
    if (k->inflight == 0 && k->state != CORUN_JS_RUNNING) {
        finish(s, k, CORUN_JS_FAILED, CORUN_ECANCELED); /* waiting or paused */
        return CORUN_OK;
    }
    return k->state == CORUN_JS_RUNNING ? corun__sched_stop(s, k) : CORUN_OK;
}

void corun__sched_timer(corun__sched *s, uint64_t t)
{
    if (t < s->timer) {
        s->timer = t;
    }
}

int corun__sched_progress(corun__sched *s, corun__job *k, corun_progress *out)
{
    int rc;

    if (k->plain) {
        return CORUN_ENOTSUP;
    }
    rc = s->be->ops->progress(s->be, k->ex, out);
    if (rc == CORUN_OK) {
        k->done_tasks = out->done;
    }
    return rc;
}

/* Every launch of k has finished: it is done, paused, or failed. */
static void quiescent(corun__sched *s, corun__job *k)
{
    corun_progress p;
    int rc;

    if (k->status != CORUN_OK) {
        finish(s, k, CORUN_JS_FAILED, k->status);
        return;
    }
    if (k->plain) {
        finish(s, k, CORUN_JS_DONE, CORUN_OK);
        return;
    }
    rc = s->be->ops->progress(s->be, k->ex, &p);
    if (rc != CORUN_OK) {
        finish(s, k, CORUN_JS_FAILED, rc);
        return;
    }
    k->done_tasks = p.done;
    k->task_ns = p.task_ns;
    k->ran_ahead = p.ahead != 0;
    if (p.done >= k->tasks) {
        finish(s, k, CORUN_JS_DONE, CORUN_OK);
        return;
    }
    if (ext(k)->cancel) {
        finish(s, k, CORUN_JS_FAILED, CORUN_ECANCELED);
        return;
    }
    drop_capsm(s, k);
    stop_running_clock(s, k);
    k->state = CORUN_JS_PAUSED;
    observed(s, k, CORUN_JC_PAUSED);
    if (s->pol->paused) {
        s->pol->paused(s, s->pst, k);
    }
}

/* What a direct kernel's device side reported. */
static void direct_event(corun__sched *s, corun__job *k, const corun__bevent *ev)
{
    if (k->state == CORUN_JS_DONE || k->state == CORUN_JS_FAILED) {
        return;
    }
    k->done_tasks = ev->done;
    if (ev->task_ns != 0) {
        k->task_ns = ev->task_ns;
    }
    switch (ev->kind) {
    case CORUN_BEV_HELD:
        /* Paused once nothing runs after a halt, or after an eviction of
         * every CapSM it held. */
        if (ev->live == 0 && (k->state == CORUN_JS_STOPPING ||
                              (k->state == CORUN_JS_RUNNING && corun__job_capsm(k) == 0))) {
            drop_capsm(s, k);
            stop_running_clock(s, k);
            k->state = CORUN_JS_PAUSED;
            observed(s, k, CORUN_JC_PAUSED);
            if (s->pol->paused) {
                s->pol->paused(s, s->pst, k);
            }
        }
        break;
    case CORUN_BEV_FINISHED:
        if (k->inflight > 0) {
            k->inflight--;
        }
        k->dev_run_ns = k->preemptions == 0 ? ev->run_ns : 0;
        finish(s, k, CORUN_JS_DONE, CORUN_OK);
        break;
    case CORUN_BEV_RELEASED:
        if (k->inflight > 0) {
            k->inflight--;
        }
        finish(s, k, CORUN_JS_FAILED, CORUN_ESTATE);
        break;
    case CORUN_BEV_LAUNCH:
        break;
    }
}

static void launch_finished(corun__sched *s, const corun__bevent *ev)
{
    corun__job *k = (corun__job *)(uintptr_t)ev->cookie;

    if (ev->kind != CORUN_BEV_LAUNCH) {
        direct_event(s, k, ev);
        return;
    }
    if (k->inflight == 0) {
        return;
    }
    k->inflight--;
    if (ev->status != CORUN_OK && k->status == CORUN_OK) {
        k->status = ev->status;
    }
    if (k->direct) {
        /* a resume or growth grid: the primary grid's reports decide */
        if (ev->status != CORUN_OK && k->state != CORUN_JS_DONE && k->state != CORUN_JS_FAILED) {
            finish(s, k, CORUN_JS_FAILED, ev->status);
        }
        if (k->inflight == 0 && ext(k)->release_asked) {
            corun__sched_release(s, k);
        }
        return;
    }
    if (k->inflight == 0) {
        quiescent(s, k);
    }
}

int corun__sched_step(corun__sched *s, uint64_t deadline_ns)
{
    return corun__sched_step_unlocked(s, deadline_ns, NULL, NULL, NULL);
}

int corun__sched_step_unlocked(corun__sched *s, uint64_t deadline_ns, void (*unlock)(void *),
                               void (*lock)(void *), void *arg)
{
    size_t n = 0, i;
    uint64_t now;
    int rc;

    announce_deferred(s);
    now = corun__sched_now(s);
    if (s->timer <= now) {
        s->timer = UINT64_MAX;
        if (s->pol->timer) {
            s->pol->timer(s, s->pst, now);
        }
        announce_deferred(s);
    }
    if (s->ndeferred > 0 || s->timer <= now) {
        deadline_ns = now;
    } else if (s->timer < deadline_ns) {
        deadline_ns = s->timer;
    }
    if (unlock != NULL) {
        unlock(arg);
    }
    rc = s->be->ops->poll(s->be, deadline_ns, s->ev, CORUN_SCHED_EVBUF, &n);
    if (lock != NULL) {
        lock(arg);
    }
    if (rc != CORUN_OK) {
        return rc;
    }
    for (i = 0; i < n; i++) {
        launch_finished(s, &s->ev[i]);
    }
    announce_deferred(s);
    return CORUN_OK;
}
