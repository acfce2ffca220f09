/*
 * sim.c — the simulated GPU behind the backend interface: options, kernels,
 * launches, signals, and the event loop that poll drives.
 *
 * The clock only moves inside poll: launch, signal and rewind act at the
 * current virtual time and schedule their effects (a grid reaching the
 * dispatcher after launch_ns, a control-block word changing after
 * signal_ns, or relay_ns through a direct kernel's relay). poll then processes events in (time, insertion) order; after
 * each event the dispatcher places whatever now fits, and before the clock
 * leaves an instant the DRAM rates are brought up to date.
 *
 * What the scheduler can observe follows the real GPU: the control block
 * (corun_ctl.h) is only touched by workers; plain launches run the original
 * kernel, which has no control block, so they show up in task_hits and the
 * stats but not in progress().
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/sim/sim_int.h"
#include "core/occupancy.h"
#include "corun/corun_chunk.h"

static const corun__backend_ops sim_ops;

static corun__sim *sim_of(corun__backend *be)
{
    return (corun__sim *)be;
}

static int say(char *why, size_t why_len, int status, const char *msg)
{
    if (why != NULL && why_len > 0) {
        snprintf(why, why_len, "%s", msg);
    }
    return status;
}

void corun__sim_opts_from(corun__sim_opts *o, const corun__settings *set)
{
    memset(o, 0, sizeof(*o));
    corun_gpu_desc_h100(&o->desc);
    o->seed = set->seed;
    o->dispatch = CORUN_SIM_DISPATCH_FIFO;
    o->signal_ns = set->sim_signal_us * 1e3;
    o->relay_ns = set->sim_relay_us * 1e3;
    o->relay = (uint32_t)set->relay;
    o->launch_ns = set->sim_launch_us * 1e3;
    o->launch_jitter_ns = set->sim_launch_jitter_us * 1e3;
    o->idle_launch_ns = set->sim_idle_launch_us * 1e3;
    o->idle_after_ns = set->sim_idle_after_us * 1e3;
    o->notify_ns = set->sim_notify_us * 1e3;
    o->wake_ns = set->sim_wake_us * 1e3;
    o->claim_ns = set->sim_claim_ns;
    o->stream_gap_ns = set->sim_stream_gap_us * 1e3;
    o->block_speedup = set->sim_block_speedup;
    o->budget_ns = corun__budget_ns(set);
    o->chunk_max = (uint32_t)set->chunk_max;
    o->gpu_index = (uint32_t)strtoul(set->device, NULL, 10); /* "auto": 0 */
}

void corun__sim_opts_default(corun__sim_opts *o)
{
    corun__settings set;

    corun__settings_default(&set);
    corun__sim_opts_from(o, &set);
}

/* --- events -------------------------------------------------------------- */

void corun__sim_push(corun__sim *s, uint64_t time, corun__sim_ev kind, uint32_t a, uint64_t b,
                     void *p)
{
    corun__hevent ev;

    ev.time = time;
    ev.kind = kind;
    ev.a = a;
    ev.b = b;
    ev.p = p;
    if (corun__heap_push(&s->events, &ev) != CORUN_OK && s->broken == CORUN_OK) {
        s->broken = CORUN_ENOMEM;
    }
}

/* Cancels every pending event of kernel k. Rare (close), so a scan of the
 * heap is fine. */
static void cancel_events(corun__sim *s, const corun__exec *k)
{
    size_t i;

    for (i = 0; i < s->events.n; i++) {
        corun__hevent *e = &s->events.v[i];
        if (e->p == k) {
            e->kind = CORUN_SIM_EV_NOP;
        }
    }
}

/* Gated launches of k whose gate the block's resume has reached go to the
 * dispatcher now. */
static void open_gates(corun__sim *s, corun__exec *k);

void corun__sim_apply_writes(corun__sim *s, corun__exec *k, const corun__ctl_write *w,
                             size_t n)
{
    size_t i;

    corun__ctl_apply(&k->ctl, w, n);
    for (i = 0; i < n; i++) {
        if (w[i].off == offsetof(corun_ctl, resume)) {
            open_gates(s, k);
        }
    }
    corun__sim_holders_signalled(s, k);
}

static void kernel_free(corun__sim *s, corun__exec *k)
{
    uint32_t i;

    for (i = 0; i < s->nstreams; i++) {
        if (s->streams[i].tail == k) {
            s->streams[i].tail = NULL; /* over: the stream is free */
        }
    }
    cancel_events(s, k);
    if (k->prev != NULL) {
        k->prev->next = k->next;
    } else {
        s->kernels = k->next;
    }
    if (k->next != NULL) {
        k->next->prev = k->prev;
    }
    corun__sim_kernel_exec_free(k);
    free(k->hits);
    free(k);
}

void corun__sim_launch_block_gone(corun__sim *s, corun__sim_launch *l)
{
    corun__exec *k = l->k;

    if (++l->gone < l->blocks) {
        return;
    }
    k->launches--;
    if (l->workers) {
        k->worker_launches--;
        k->relay_launches -= l->wa.relay_block;
    }
    if (k->direct && !l->workers) {
        /* a plain kernel in its program's stream: its end lets the stream on */
        corun__sim_report(s, k, CORUN_BEV_FINISHED, 0);
    } else if (l->wa.primary == 0) {
        corun__sim_push(s, s->now + s->notify_ns, CORUN_SIM_EV_NOTIFY, (uint32_t)CORUN_OK,
                        l->cookie, NULL);
    }
    l->k = NULL;
    l->next = s->free_launches;
    s->free_launches = l;
}

/* --- streams of direct kernels -------------------------------------------- */

static struct sim_stream *stream_of(corun__sim *s, const void *id)
{
    uint32_t i;

    for (i = 0; i < s->nstreams; i++) {
        if (s->streams[i].id == id) {
            return &s->streams[i];
        }
    }
    if (s->nstreams == s->cap_streams) {
        uint32_t cap = s->cap_streams ? 2 * s->cap_streams : 8;
        struct sim_stream *v = realloc(s->streams, cap * sizeof(*v));
        if (v == NULL) {
            return NULL;
        }
        s->streams = v;
        s->cap_streams = cap;
    }
    s->streams[s->nstreams].id = id;
    s->streams[s->nstreams].tail = NULL;
    return &s->streams[s->nstreams++];
}

/* When a launch made now reaches the dispatcher: launch_ns later, more on a
 * GPU idle for idle_after_ns (the H200 starts an LS kernel ~35 us after its
 * launch on an idle GPU), plus a draw of the launch noise; never before a
 * launch made earlier (one host thread launches in order). */
static uint64_t launch_arrival(corun__sim *s)
{
    const bool idle = s->resident == 0 && s->q_head == NULL &&
                      (s->idle_since == UINT64_MAX || s->now - s->idle_since >= s->idle_after_ns);
    uint64_t at = s->now + s->launch_ns + (idle ? s->idle_launch_ns : 0);

    if (s->jitter_ns > 0) {
        at += (uint64_t)llround(corun__rng_exp(&s->jitter, s->jitter_ns));
    }
    if (at < s->last_arrival) {
        at = s->last_arrival;
    }
    s->last_arrival = at;
    return at;
}

/* A direct kernel's grid reaches the dispatcher: now if its stream is free,
 * else when the kernel before it is over (corun__sim_report). */
static void stream_enqueue(corun__sim *s, corun__exec *k, corun__sim_launch *l)
{
    struct sim_stream *st = stream_of(s, k->stream);
    corun__exec *before = st != NULL ? st->tail : NULL;

    if (st == NULL) {
        s->broken = CORUN_ENOMEM;
        return;
    }
    st->tail = k;
    k->primary = l;
    if (before != NULL && !before->over) {
        before->snext = k;
        l->held = true;
        return;
    }
    corun__sim_push(s, launch_arrival(s), CORUN_SIM_EV_ARRIVE, 0, 0, l);
}

void corun__sim_report(corun__sim *s, corun__exec *k, corun__bev_kind kind, uint32_t live)
{
    uint32_t done = (uint32_t)k->ctl.done;

    corun__sim_push(s, s->now + s->notify_ns, CORUN_SIM_EV_REPORT, (uint32_t)kind,
                    ((uint64_t)done << 32) | live, k);
    if (kind == CORUN_BEV_HELD) {
        return;
    }
    k->over = true;
    if (k->snext != NULL && k->snext->primary != NULL) {
        corun__sim_launch *next = k->snext->primary;
        next->held = false;
        corun__sim_push(s, s->now + s->stream_gap_ns, CORUN_SIM_EV_ARRIVE, 0, 0, next);
    }
    if (k->owned && k->launches == 0) {
        k->closed = true;
        s->closing++;
    }
}

static void open_gates(corun__sim *s, corun__exec *k)
{
    corun__sim_launch *l;

    for (l = s->all_launches; l != NULL; l = l->all) {
        if (l->k == k && l->gate != 0 && l->gate <= k->ctl.resume) {
            l->gate = 0;
            corun__sim_push(s, s->now, CORUN_SIM_EV_ARRIVE, 0, 0, l);
        }
    }
}

/* Frees kernels closed while their launches ran, once those are over. Runs
 * between events, never inside one (an event may still hold the kernel). */
static void reap_closed(corun__sim *s)
{
    corun__exec *k, *next;

    for (k = s->kernels; k != NULL && s->closing > 0; k = next) {
        next = k->next;
        if (k->closed && k->launches == 0) {
            s->closing--;
            kernel_free(s, k);
        }
    }
}

/* Whether speeds or DRAM rates are to be set again before the clock moves. */
static bool rates_dirty(const corun__sim *s)
{
    return s->demand_dirty || s->ndirty > 0;
}

/* SM shares first: they decide which tasks run, DRAM rates how fast. */
static void update_rates(corun__sim *s)
{
    corun__sim_share_update(s);
    corun__sim_update_rates(s);
}

static void advance_clock(corun__sim *s, uint64_t t)
{
    if (t > s->now) {
        update_rates(s);
        s->stats.busy_slot_ns += (double)s->resident * (double)(t - s->now);
        s->now = t;
    }
}

/* Processes one event; a finished launch is written to *out (returns 1). */
static int handle(corun__sim *s, const corun__hevent *e, corun__bevent *out)
{
    int reported = 0;

    switch ((corun__sim_ev)e->kind) {
    case CORUN_SIM_EV_NOP:
        return 0;
    case CORUN_SIM_EV_ARRIVE: {
        corun__sim_launch *l = e->p;
        s->stats.events++;
        if (l->k != NULL && l->k->primary == l) {
            l->k->primary = NULL; /* on its way: no longer waits for the stream */
        }
        corun__sim_enqueue(s, l);
        break;
    }
    case CORUN_SIM_EV_TASK:
        corun__sim_on_task_event(s, (corun__exec *)e->p, e->b);
        break;
    case CORUN_SIM_EV_CLAIM:
        corun__sim_on_claim_event(s, e->a);
        break;
    case CORUN_SIM_EV_WRITE: {
        corun__ctl_write w = {e->a & 0xffffu, e->a >> 16, e->b};
        s->stats.events++;
        corun__sim_apply_writes(s, (corun__exec *)e->p, &w, 1);
        break;
    }
    case CORUN_SIM_EV_REPORT: {
        corun__exec *k = e->p;
        s->stats.events++;
        if (k->owned) {
            break; /* a plain kernel nobody adopted */
        }
        if (k->cookie == 0) { /* not adopted yet: the host reads it again later */
            corun__sim_push(s, s->now + s->notify_ns, CORUN_SIM_EV_REPORT, e->a, e->b, k);
            break;
        }
        memset(out, 0, sizeof(*out));
        out->cookie = k->cookie;
        out->time_ns = e->time;
        out->status = CORUN_OK;
        out->kind = (corun__bev_kind)e->a;
        out->done = (uint32_t)(e->b >> 32);
        out->live = (uint32_t)e->b;
        out->task_ns = k->rep_task_ns;
        out->run_ns = out->kind == CORUN_BEV_FINISHED ? k->rep_run_ns : 0;
        reported = 1;
        break;
    }
    case CORUN_SIM_EV_NOTIFY:
        s->stats.events++;
        memset(out, 0, sizeof(*out));
        out->cookie = e->b;
        out->time_ns = e->time;
        out->status = (int)e->a;
        out->kind = CORUN_BEV_LAUNCH;
        reported = 1;
        break;
    }
    corun__sim_dispatch_run(s);
    if (s->closing > 0) {
        reap_closed(s);
    }
    return reported;
}

/*
 * Runs events in order until at least one launch-finished notification is
 * due (then also takes the others due at that same instant, up to cap) or
 * the next event lies beyond deadline_ns. The clock ends at the notification
 * time or at the deadline. With nothing pending at all and no deadline, it
 * would wait forever: CORUN_ESTATE.
 */
static int sim_poll(corun__backend *be, uint64_t deadline_ns, corun__bevent *ev, size_t cap,
                    size_t *n)
{
    corun__sim *s = sim_of(be);

    if (ev == NULL || cap == 0 || n == NULL) {
        return CORUN_EINVAL;
    }
    *n = 0;
    if (s->broken != CORUN_OK) {
        return s->broken;
    }
    if (deadline_ns < s->now) {
        return CORUN_OK;
    }
    /* The host sleeps wake_ns past its deadline unless a report wakes it:
     * the device's own events go on meanwhile. */
    if (deadline_ns != UINT64_MAX) {
        deadline_ns = deadline_ns > UINT64_MAX - 1 - s->wake_ns ? UINT64_MAX - 1
                                                                 : deadline_ns + s->wake_ns;
    }
    for (;;) {
        const corun__hevent *top = corun__heap_peek(&s->events);
        corun__hevent e;

        if (*n > 0 && (top == NULL || top->time != s->now ||
                       (top->kind != CORUN_SIM_EV_NOTIFY && top->kind != CORUN_SIM_EV_REPORT))) {
            return CORUN_OK;
        }
        if ((top == NULL || top->time > s->now) && rates_dirty(s)) {
            /* The last instant changed which tasks run or the DRAM demand:
             * re-time the running tasks before the clock moves (it may bring
             * a wake-up forward, or the first one of a task that was
             * waiting for its share). */
            update_rates(s);
            continue;
        }
        if (top == NULL) {
            if (deadline_ns == UINT64_MAX) {
                return CORUN_ESTATE;
            }
            advance_clock(s, deadline_ns);
            return CORUN_OK;
        }
        if (top->time > deadline_ns) {
            advance_clock(s, deadline_ns);
            return CORUN_OK;
        }
        corun__heap_pop(&s->events, &e);
        advance_clock(s, e.time);
        *n += (size_t)handle(s, &e, &ev[*n]);
        if (s->broken != CORUN_OK) {
            return s->broken;
        }
        if (*n == cap) {
            return CORUN_OK;
        }
    }
}

static uint64_t sim_now(corun__backend *be)
{
    return sim_of(be)->now;
}

/* --- kernels ----------------------------------------------------------- */

static int check_behaviour(const corun__kspec *spec, char *why, size_t why_len)
{
    const corun__dist *d = &spec->task_ns;

    if (!(d->a >= 0 && d->a < 1e15) || !(d->b >= 0 && d->b < 1e15)) {
        return say(why, why_len, CORUN_EINVAL,
                   "task duration parameters must be finite, >= 0 and below 1e15 ns");
    }
    if ((unsigned)d->kind > CORUN_DIST_EXP) {
        return say(why, why_len, CORUN_EINVAL, "unknown task duration distribution");
    }
    if (d->kind == CORUN_DIST_UNIFORM && d->b < d->a) {
        return say(why, why_len, CORUN_EINVAL, "uniform task duration needs b >= a");
    }
    if (!(spec->mem_frac >= 0 && spec->mem_frac <= 1)) {
        return say(why, why_len, CORUN_EINVAL, "mem_frac must be between 0 and 1");
    }
    if (!(spec->mem_bw >= 0 && spec->mem_bw <= CORUN_MEM_BW_MAX)) {
        return say(why, why_len, CORUN_EINVAL, "mem_bw must be between 0 and 16");
    }
    return CORUN_OK;
}

/*
 * Copies the spec (without user code, arguments or a device hits address,
 * which a synthetic kernel does not have: hits are counted here), checks
 * that one block fits on an SM and sets up the control block as the host
 * does before a first launch. The worker form is taken to use the same
 * resources as the plain form, so *per_sm is the plain occupancy either way.
 */
static int sim_exec_open(corun__backend *be, const corun__kspec *spec, corun__exec **out,
                           uint32_t *per_sm, char *why, size_t why_len)
{
    corun__sim *s = sim_of(be);
    corun_kernel_shape shape;
    corun_occupancy occ;
    corun__exec *k;
    uint64_t threads, tasks;
    int rc;

    if (spec == NULL || out == NULL || per_sm == NULL) {
        return say(why, why_len, CORUN_EINVAL, "missing argument");
    }
    if (s->broken != CORUN_OK) {
        return s->broken;
    }
    /* a real kernel of the repo (CORUN_CODE_BUILTIN) runs as the behaviour
     * its scenario declares for it */
    if (spec->code == CORUN_CODE_USER) {
        return say(why, why_len, CORUN_ENOTSUP,
                   "the sim backend runs synthetic kernels only (no user CUDA code)");
    }
    threads = (uint64_t)spec->block.x * spec->block.y; /* < 2^64: no overflow */
    if (threads > UINT32_MAX || threads * spec->block.z > UINT32_MAX) {
        return say(why, why_len, CORUN_ERANGE, "threads per block exceed 2^32");
    }
    shape = spec->shape;
    shape.threads_per_block = (uint32_t)(threads * spec->block.z);
    shape.smem_dynamic = spec->smem_dynamic;
    rc = corun_occupancy_calc(&s->opts.desc, &shape, &occ, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    tasks = (uint64_t)spec->grid.x * spec->grid.y;
    if (tasks == 0 || spec->grid.z == 0) {
        return say(why, why_len, CORUN_EINVAL, "empty grid");
    }
    if (tasks > CORUN_MAX_TASKS / spec->grid.z) {
        return say(why, why_len, CORUN_ERANGE, "more than 2^32-1 block-tasks");
    }
    tasks *= spec->grid.z;
    rc = check_behaviour(spec, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }

    k = calloc(1, sizeof(*k));
    if (k == NULL) {
        return CORUN_ENOMEM;
    }
    k->spec = *spec;
    k->spec.name[sizeof(k->spec.name) - 1] = '\0';
    k->spec.shape = shape;
    k->spec.user = NULL;
    k->spec.args = NULL;
    k->spec.task_hits = 0;
    k->tasks = tasks;
    k->ahead = spec->ahead;
    k->per_sm = occ.blocks_per_sm;
    k->warps = occ.warps_per_block;
    k->regs_per_warp = corun__regs_per_warp(&s->opts.desc, shape.regs_per_thread);
    k->smem = occ.smem_per_block;
    k->hits = calloc(tasks, sizeof(*k->hits));
    if (k->hits == NULL) {
        rc = CORUN_ENOMEM;
        goto out_free_kernel;
    }
    rc = corun__sim_kernel_exec_init(s, k);
    if (rc != CORUN_OK) {
        goto out_free_hits;
    }

    /* a fresh block is all zeros (corun_ctl.h) */
    corun__ctl_init(&k->ch, &k->spec, k->per_sm, &s->opts.desc, s->opts.budget_ns,
                    s->opts.chunk_max, false);
    k->anchor = CORUN_SIM_NO_BLOCK;
    k->fault_armed = s->opts.faults.signal_kernel[0] != '\0' &&
                     strncmp(k->spec.name, s->opts.faults.signal_kernel,
                             sizeof(k->spec.name)) == 0;

    k->next = s->kernels;
    if (s->kernels != NULL) {
        s->kernels->prev = k;
    }
    s->kernels = k;
    *per_sm = k->per_sm;
    *out = k;
    return CORUN_OK;

out_free_hits:
    free(k->hits);
out_free_kernel:
    free(k);
    return rc;
}

/* The scheduler closes a kernel only once its launches are over; should one
 * still be in flight, the kernel is freed when it ends instead. */
static void sim_exec_close(corun__backend *be, corun__exec *k)
{
    corun__sim *s = sim_of(be);

    if (k == NULL || k->closed) {
        return;
    }
    if (k->launches > 0) {
        k->closed = true;
        s->closing++;
        return;
    }
    kernel_free(s, k);
}

/* --- launches ------------------------------------------------------------ */

static corun__sim_launch *launch_alloc(corun__sim *s)
{
    corun__sim_launch *l = s->free_launches;

    if (l != NULL) {
        s->free_launches = l->next;
        return l;
    }
    l = calloc(1, sizeof(*l));
    if (l == NULL) {
        return NULL;
    }
    l->may_fit = malloc(s->words * sizeof(*l->may_fit));
    if (l->may_fit == NULL) {
        free(l);
        return NULL;
    }
    l->all = s->all_launches;
    s->all_launches = l;
    return l;
}

/* Common part of both launch calls: fault injection, then the grid is on
 * its way to the dispatcher. Argument errors are reported before and do not
 * count as launch calls. */
static int launch(corun__sim *s, corun__exec *k, uint64_t blocks, bool workers,
                  const corun_worker_arg *wa, int32_t priority, uint32_t gate, uint64_t cookie,
                  uint8_t part, corun__sim_launch **made)
{
    corun__sim_launch *l;

    if (s->broken != CORUN_OK) {
        return s->broken;
    }
    if (k->closed) {
        return CORUN_ESTATE;
    }
    if (++s->launch_calls == s->opts.faults.fail_launch_n) {
        return CORUN_EFAULT;
    }
    l = launch_alloc(s);
    if (l == NULL) {
        return CORUN_ENOMEM;
    }
    l->prev = l->next = NULL;
    l->k = k;
    l->cookie = cookie;
    l->blocks = blocks;
    l->placed = 0;
    l->gone = 0;
    if (wa != NULL) {
        l->wa = *wa;
    } else {
        memset(&l->wa, 0, sizeof(l->wa));
    }
    l->priority = priority;
    l->gate = gate;
    l->workers = workers;
    l->queued = false;
    l->held = false;
    l->part = part;
    if (made != NULL) {
        *made = l; /* the caller sends it on its way */
    } else if (gate == 0 || k->ctl.resume >= gate) {
        l->gate = 0;
        const uint64_t at = launch_arrival(s);
        corun__sim_push(s, at > k->range_at ? at : k->range_at,
                        CORUN_SIM_EV_ARRIVE, 0, 0, l);
    }
    if (s->broken != CORUN_OK) {
        l->k = NULL;
        l->next = s->free_launches;
        s->free_launches = l;
        return s->broken;
    }
    k->launches++;
    if (workers) {
        k->worker_launches++;
        k->relay_launches += l->wa.relay_block;
    }
    s->stats.launches++;
    return CORUN_OK;
}

/* A direct kernel's grid of w workers on SMs [lo, hi], as the CUDA
 * backend plans it (corun__relay_plan): the workers it runs, and
 * wa->relay_block where a relay comes before them. The relay block itself is not
 * modelled (it holds no slot here); its effect is relay_ns. */
static uint32_t relay_plan(const corun__sim *s, const corun__exec *k, uint32_t w, uint32_t lo,
                           uint32_t hi, corun_worker_arg *wa)
{
    bool on = false;

    wa->relay = 0;
    wa->relay_block = 0;
    if (!k->direct || s->opts.relay == 0) {
        return w;
    }
    w = corun__relay_plan(w, k->per_sm, lo, hi, s->nsm, k->tasks, &on);
    wa->relay = 1; /* no mirror here: a mark */
    wa->relay_block = on;
    return w;
}

static int sim_launch_workers(corun__backend *be, corun__exec *k, const corun__launch_req *req)
{
    corun__sim *s = sim_of(be);
    corun_worker_arg wa;
    int rc;

    if (k == NULL || req == NULL || req->nworkers == 0) {
        return CORUN_EINVAL;
    }
    if ((uint64_t)req->base + req->nworkers - 1 > UINT32_MAX) {
        return CORUN_ERANGE;
    }
    corun__ctl_launch(&k->ch, req, 0, s->nsm - 1, &wa);
    if (req->part > 2 || (req->part != 0 && s->part_sms == 0)) {
        return CORUN_EINVAL;
    }
    rc = launch(s, k, relay_plan(s, k, req->nworkers, 0, s->nsm - 1, &wa), true, &wa,
                req->priority, req->gate, req->cookie, req->part, NULL);
    if (rc == CORUN_OK) {
        k->worker_calls++;
    }
    return rc;
}

static int sim_launch_plain(corun__backend *be, corun__exec *k, int32_t priority,
                            uint64_t cookie)
{
    if (k == NULL) {
        return CORUN_EINVAL;
    }
    return launch(sim_of(be), k, k->tasks, false, NULL, priority, 0, cookie, 0, NULL);
}

/* The static split (backend.h, partition): SMs [0, got) and the rest, the
 * first rounded up to a multiple of 8 SMs as the H100's green contexts are
 * (cuDevSmResourceSplitByCount: at least 8, aligned to 8), at most the
 * largest multiple that leaves the rest some. */
#define SIM_PART_ALIGN 8u
static int sim_partition(corun__backend *be, uint32_t sms, uint32_t *got, char *why,
                         size_t why_len)
{
    corun__sim *s = sim_of(be);
    uint32_t n = (sms < SIM_PART_ALIGN ? SIM_PART_ALIGN : sms + SIM_PART_ALIGN - 1) /
                 SIM_PART_ALIGN * SIM_PART_ALIGN;

    if (s->part_sms != 0) {
        snprintf(why, why_len, "the GPU is split already (%u SMs and the rest)", s->part_sms);
        return CORUN_ESTATE;
    }
    if (n >= s->nsm) {
        n = (s->nsm - 1) / SIM_PART_ALIGN * SIM_PART_ALIGN;
    }
    if (n == 0) {
        snprintf(why, why_len, "a GPU of %u SMs has no two partitions of %u", s->nsm,
                 SIM_PART_ALIGN);
        return CORUN_ERANGE;
    }
    s->part_sms = n;
    *got = n;
    return CORUN_OK;
}

static int sim_launch_plain_part(corun__backend *be, corun__exec *k, int32_t priority,
                                 unsigned part, uint64_t cookie)
{
    corun__sim *s = sim_of(be);

    if (k == NULL || part < 1 || part > 2 || s->part_sms == 0) {
        return CORUN_EINVAL;
    }
    return launch(s, k, k->tasks, false, NULL, priority, 0, cookie, (uint8_t)part, NULL);
}

/* A direct launch: the kernel's grid (workers, or capsm 0: the plain
 * kernel) in the program's stream, behind the kernel launched there before. */
static int sim_direct_launch(corun__backend *be, const corun__kspec *spec,
                             const corun__direct_req *req, corun__exec **out,
                             corun__direct_got *got, char *why, size_t why_len)
{
    corun__sim *s = sim_of(be);
    corun__sim_launch *l = NULL;
    corun__exec *k;
    corun__launch_req lr;
    corun_worker_arg wa;
    uint32_t nworkers = 0;
    bool grid = false;
    int rc = sim_exec_open(be, spec, &k, &got->per_sm, why, why_len);

    *out = NULL;
    got->ahead = false;
    got->grid = false;
    if (rc != CORUN_OK) {
        return rc;
    }
    k->direct = true;
    k->ch.direct = true;
    k->stream = req->stream;
    if (req->capsm == 0 ||
        (req->one_wave_plain && corun__direct_one_wave(req->capsm, k->per_sm, req->sm_lo,
                                                       req->sm_hi, s->nsm, k->tasks))) {
        k->owned = true; /* nobody adopts a plain one: freed once over */
        rc = launch(s, k, k->tasks, false, NULL, req->priority, 0, 0, 0, &l);
    } else {
        nworkers = corun__direct_workers(req->capsm, k->per_sm, req->sm_lo, req->sm_hi, s->nsm,
                                         k->tasks);
        grid = req->grid && corun__direct_grid(req->capsm, nworkers, req->sm_lo, req->sm_hi, s->nsm,
                                               k->tasks, req->hold);
        /* a relay that takes a worker's slot takes its preset task too (the
         * grid form has none) */
        if (grid) {
            (void)relay_plan(s, k, 0, req->sm_lo, req->sm_hi, &wa);
        } else {
            nworkers = relay_plan(s, k, nworkers, req->sm_lo, req->sm_hi, &wa);
        }
        const uint64_t relay = wa.relay;
        const uint32_t relay_block = wa.relay_block;
        memset(&lr, 0, sizeof(lr));
        lr.nworkers = nworkers;
        lr.hold = req->hold;
        corun__ctl_launch(&k->ch, &lr, req->sm_lo, req->sm_hi, &wa);
        wa.relay = relay;
        wa.relay_block = relay_block;
        grid = grid && wa.own; /* its first blocks run their own tasks */
        wa.primary = grid ? (uint32_t)k->tasks : nworkers;
        wa.grid = grid;
        rc = nworkers == 0 ? CORUN_ERANGE
                           : launch(s, k, wa.primary, true, &wa, req->priority, 0, 0, 0, &l);
        if (rc == CORUN_OK) {
            k->worker_calls++;
        }
    }
    if (rc != CORUN_OK) {
        kernel_free(s, k);
        return rc;
    }
    stream_enqueue(s, k, l);
    if (!k->owned) {
        *out = k;
        got->ahead = k->ahead;
        got->grid = grid;
    }
    return s->broken;
}

static void sim_bind(corun__backend *be, corun__exec *k, uint64_t cookie)
{
    (void)be;
    if (k != NULL) {
        k->cookie = cookie;
    }
}

/* --- signals and counters ------------------------------------------------- */

/* The words change on the device signal_ns from now, in order. The task
 * limit changes only while no worker of k is live or on its way (CORUN_EBUSY
 * otherwise, corun_ctl.h says why), and then at once, as rewind's does. */
static int sim_signal(corun__backend *be, corun__exec *k, corun__signal sig, uint64_t value)
{
    corun__sim *s = sim_of(be);
    corun__ctl_write w[CORUN_CTL_MAX_WRITES];
    size_t n = 0, i;
    int rc;

    if (k == NULL) {
        return CORUN_EINVAL;
    }
    if (s->broken != CORUN_OK) {
        return s->broken;
    }
    if (k->closed) {
        return CORUN_ESTATE;
    }
    if (sig == CORUN_SIG_TASK_LIMIT && k->worker_launches > 0) {
        return CORUN_EBUSY;
    }
    rc = corun__ctl_signal(&k->ch, sig, value, w, &n);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (sig == CORUN_SIG_TASK_LIMIT) {
        corun__sim_apply_writes(s, k, w, n);
        return CORUN_OK;
    }
    /* the mirrored words through a running relay, the rest on the stream */
    const uint64_t relayed = k->relay_launches > 0 ? s->relay_ns : s->signal_ns;
    for (i = 0; i < n; i++) {
        const bool mirrored = w[i].size == 4 && w[i].off < CORUN_MIRROR_SIGNALS;
        corun__sim_push(s, s->now + (mirrored ? relayed : s->signal_ns), CORUN_SIM_EV_WRITE,
                        w[i].off | (w[i].size << 16), w[i].value, k);
    }
    if (s->broken != CORUN_OK) {
        return s->broken;
    }
    if (sig == CORUN_SIG_SM_RANGE) {
        k->range_at = s->now + relayed;
    }
    return CORUN_OK;
}

/* A host write while no worker runs, so it takes effect at once. The done
 * counter is left alone. */
static int sim_rewind(corun__backend *be, corun__exec *k, uint64_t next, uint64_t limit)
{
    corun__ctl_write w[CORUN_CTL_MAX_WRITES];
    size_t n = 0;
    int rc;

    if (k == NULL) {
        return CORUN_EINVAL;
    }
    if (k->worker_launches > 0) {
        return CORUN_EBUSY;
    }
    rc = corun__ctl_rewind(&k->ch, next, limit, w, &n);
    if (rc == CORUN_OK) {
        corun__sim_apply_writes(sim_of(be), k, w, n);
    }
    return rc;
}

/* live counts workers on SMs (started - exited, as the CUDA backend reads
 * it); workers launched but not yet dispatched are not running and are not
 * counted (as on the device, where a worker counts itself when it starts). */
static int sim_progress(corun__backend *be, corun__exec *k, corun_progress *out)
{
    (void)be;
    if (k == NULL || out == NULL) {
        return CORUN_EINVAL;
    }
    corun__ctl_progress(&k->ch, &k->ctl, out);
    return CORUN_OK;
}

/* --- lifecycle ------------------------------------------------------------ */

static void sim_destroy(corun__backend *be)
{
    corun__sim *s = sim_of(be);
    corun__sim_launch *l, *ln;

    if (s == NULL) {
        return;
    }
    while (s->kernels != NULL) {
        kernel_free(s, s->kernels);
    }
    for (l = s->all_launches; l != NULL; l = ln) {
        ln = l->all;
        free(l->may_fit);
        free(l);
    }
    corun__heap_free(&s->events);
    corun__sim_sms_free(s);
    free(s->streams);
    free(s);
}

static const corun__backend_ops sim_ops = {
    .name = CORUN_SIM_NAME,
    .caps = CORUN_SIM_CAPS,
    .exec_open = sim_exec_open,
    .exec_close = sim_exec_close,
    .direct_launch = sim_direct_launch,
    .bind = sim_bind,
    .launch_workers = sim_launch_workers,
    .launch_plain = sim_launch_plain,
    .partition = sim_partition,
    .launch_plain_part = sim_launch_plain_part,
    .signal = sim_signal,
    .rewind = sim_rewind,
    .progress = sim_progress,
    .now_ns = sim_now,
    .poll = sim_poll,
    .destroy = sim_destroy,
};

static bool delay_ok(double v)
{
    return v >= 0 && v <= 1e12; /* also false for NaN */
}

int corun__sim_create(const corun__sim_opts *o, corun__backend **out)
{
    corun__sim *s;
    int rc;

    if (o == NULL || out == NULL) {
        return CORUN_EINVAL;
    }
    rc = corun_gpu_desc_check(&o->desc, NULL, 0);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (!delay_ok(o->signal_ns) || !delay_ok(o->relay_ns) || !delay_ok(o->launch_ns) || !delay_ok(o->notify_ns) ||
        !delay_ok(o->claim_ns) || !delay_ok(o->stream_gap_ns) || !delay_ok(o->wake_ns) ||
        !delay_ok(o->launch_jitter_ns) || !delay_ok(o->idle_launch_ns) ||
        !delay_ok(o->idle_after_ns)) {
        return CORUN_EINVAL;
    }
    if (!(o->block_speedup >= 1 && o->block_speedup <= CORUN_SIM_SPEEDUP_MAX)) {
        return CORUN_EINVAL; /* also NaN */
    }
    /* A task limit is not a signal workers see while they run (corun_ctl.h). */
    if ((unsigned)o->dispatch > CORUN_SIM_DISPATCH_PRIORITY ||
        (unsigned)o->faults.signal_kind > CORUN_SIG_RESUME ||
        o->faults.signal_kind == CORUN_SIG_TASK_LIMIT) {
        return CORUN_EINVAL;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return CORUN_ENOMEM;
    }
    s->opts = *o;
    s->opts.faults.signal_kernel[sizeof(s->opts.faults.signal_kernel) - 1] = '\0';
    s->base.ops = &sim_ops;
    s->base.desc = o->desc;
    s->base.gpu_id = o->gpu_index;
    s->signal_ns = (uint64_t)llround(o->signal_ns);
    s->relay_ns = (uint64_t)llround(o->relay_ns);
    s->launch_ns = (uint64_t)llround(o->launch_ns);
    s->notify_ns = (uint64_t)llround(o->notify_ns);
    s->wake_ns = (uint64_t)llround(o->wake_ns);
    s->claim_ns = (uint64_t)llround(o->claim_ns);
    s->stream_gap_ns = (uint64_t)llround(o->stream_gap_ns);
    s->idle_since = UINT64_MAX; /* idle since ever */
    s->idle_launch_ns = (uint64_t)llround(o->idle_launch_ns);
    s->idle_after_ns = (uint64_t)llround(o->idle_after_ns);
    s->jitter_ns = o->launch_jitter_ns;
    s->slow = 1;
    corun__rng_seed(&s->rng, o->seed);
    /* its own stream: the launch noise leaves the tasks' draws as they were */
    corun__rng_seed(&s->jitter, o->seed ^ 0x6a17u);
    corun__heap_init(&s->events);
    rc = corun__sim_sms_init(s);
    if (rc != CORUN_OK) {
        goto out_free_sim;
    }
    *out = &s->base;
    return CORUN_OK;

out_free_sim:
    free(s);
    return rc;
}

/* --- test and report hooks ---------------------------------------------- */

static corun__sim *sim_checked(corun__backend *be)
{
    return be != NULL && be->ops == &sim_ops ? sim_of(be) : NULL;
}

void corun__sim_get_stats(corun__backend *be, corun__sim_stats *out)
{
    corun__sim *s = sim_checked(be);

    if (s == NULL) {
        memset(out, 0, sizeof(*out));
        return;
    }
    *out = s->stats;
}

const uint32_t *corun__sim_task_hits(corun__backend *be, corun__exec *k)
{
    corun__sim *s = sim_checked(be);
    const corun__exec *it;

    if (s == NULL) {
        return NULL;
    }
    for (it = s->kernels; it != NULL; it = it->next) {
        if (it == k) {
            return k->hits;
        }
    }
    return NULL;
}

void corun__sim_set_claim_hook(corun__backend *be, corun__sim_claim_fn fn, void *ctx)
{
    corun__sim *s = sim_checked(be);

    if (s != NULL) {
        s->claim_fn = fn;
        s->claim_ctx = ctx;
    }
}

uint32_t corun__sim_sm_resident(corun__backend *be, uint32_t sm)
{
    corun__sim *s = sim_checked(be);

    return s != NULL && sm < s->nsm ? s->sm[sm].blocks : 0;
}
