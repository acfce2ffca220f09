/*
 * sim.c — the simulated GPU behind the backend interface: options, kernels,
 * launches, signals, and the event loop that poll drives.
 *
 * The clock only moves inside poll: launch, signal and rewind act at the
 * current virtual time and schedule their effects (a grid reaching the
 * dispatcher after launch_ns, a control-block word changing after
 * signal_ns). poll then processes events in (time, insertion) order; after
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
#include "core/gpu.h"
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

void corun__sim_opts_default(corun__sim_opts *o)
{
    memset(o, 0, sizeof(*o));
    corun_gpu_desc_h100(&o->desc);
    o->seed = 1;
    o->dispatch = CORUN_SIM_DISPATCH_FIFO;
    o->signal_ns = 8000;
    o->launch_ns = 5000;
    o->notify_ns = 10000;
    o->claim_ns = 800;
    o->budget_ns = 10000;
    o->chunk_max = 1024;
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
static void cancel_events(corun__sim *s, const corun__bkernel *k)
{
    size_t i;

    for (i = 0; i < s->events.n; i++) {
        corun__hevent *e = &s->events.v[i];
        if (e->p == k) {
            e->kind = CORUN_SIM_EV_NOP;
        }
    }
}

void corun__sim_apply_signal(corun__sim *s, corun__bkernel *k, corun__signal sig, uint64_t value)
{
    corun_ctl *c = &k->ctl;

    switch (sig) {
    case CORUN_SIG_HALT_GEN:
        if (k->ahead) { /* the void, as the cuda backend writes it (corun_ctl.h) */
            c->next = CORUN_AHEAD_VOID;
            k->voided = true;
        }
        c->halt_gen = (uint32_t)value;
        break;
    case CORUN_SIG_EVICT_BELOW:
        c->evict_below = (uint32_t)value;
        break;
    case CORUN_SIG_SM_RANGE:
        c->sm_lo = (uint32_t)value;
        c->sm_hi = (uint32_t)(value >> 32);
        break;
    case CORUN_SIG_TASK_LIMIT:
        c->task_limit = value < k->tasks ? value : k->tasks;
        break;
    case CORUN_SIG_NWORKERS:
        c->nworkers = (uint32_t)value;
        break;
    }
}

static void kernel_free(corun__sim *s, corun__bkernel *k)
{
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
    corun__bkernel *k = l->k;

    if (++l->gone < l->blocks) {
        return;
    }
    corun__sim_push(s, s->now + s->notify_ns, CORUN_SIM_EV_NOTIFY, (uint32_t)CORUN_OK, l->cookie,
                    NULL);
    k->launches--;
    if (l->workers) {
        k->worker_launches--;
    }
    l->k = NULL;
    l->next = s->free_launches;
    s->free_launches = l;
}

/* Frees kernels closed while their launches ran, once those are over. Runs
 * between events, never inside one (an event may still hold the kernel). */
static void reap_closed(corun__sim *s)
{
    corun__bkernel *k, *next;

    for (k = s->kernels; k != NULL && s->closing > 0; k = next) {
        next = k->next;
        if (k->closed && k->launches == 0) {
            s->closing--;
            kernel_free(s, k);
        }
    }
}

static void advance_clock(corun__sim *s, uint64_t t)
{
    if (t > s->now) {
        corun__sim_update_rates(s);
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
    case CORUN_SIM_EV_ARRIVE:
        s->stats.events++;
        corun__sim_enqueue(s, (corun__sim_launch *)e->p);
        break;
    case CORUN_SIM_EV_TASK:
        corun__sim_on_task_event(s, (corun__bkernel *)e->p, e->b);
        break;
    case CORUN_SIM_EV_CLAIM:
        corun__sim_on_claim_event(s, e->a);
        break;
    case CORUN_SIM_EV_SIGNAL:
        s->stats.events++;
        corun__sim_apply_signal(s, (corun__bkernel *)e->p, (corun__signal)e->a, e->b);
        break;
    case CORUN_SIM_EV_NOTIFY:
        s->stats.events++;
        out->cookie = e->b;
        out->time_ns = e->time;
        out->status = (int)e->a;
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
    for (;;) {
        const corun__hevent *top = corun__heap_peek(&s->events);
        corun__hevent e;

        if (top == NULL) {
            if (*n > 0) {
                return CORUN_OK;
            }
            if (deadline_ns == UINT64_MAX) {
                return CORUN_ESTATE;
            }
            advance_clock(s, deadline_ns);
            return CORUN_OK;
        }
        if (*n > 0 && (top->time != s->now || top->kind != CORUN_SIM_EV_NOTIFY)) {
            return CORUN_OK;
        }
        if (top->time > s->now && s->demand_dirty) {
            /* The last instant changed the DRAM demand: re-time the running
             * tasks before the clock moves (it may bring a wake-up forward). */
            corun__sim_update_rates(s);
            continue;
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
static int sim_kernel_open(corun__backend *be, const corun__kspec *spec, corun__bkernel **out,
                           uint32_t *per_sm, char *why, size_t why_len)
{
    corun__sim *s = sim_of(be);
    corun_kernel_shape shape;
    corun_occupancy occ;
    corun__bkernel *k;
    uint64_t threads, tasks;
    int rc;

    if (spec == NULL || out == NULL || per_sm == NULL) {
        return say(why, why_len, CORUN_EINVAL, "missing argument");
    }
    if (s->broken != CORUN_OK) {
        return s->broken;
    }
    if (spec->code != CORUN_CODE_SYNTHETIC) {
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

    k->ctl.halt_gen = 0;
    k->ctl.evict_below = 0;
    k->ctl.sm_lo = 0;
    k->ctl.sm_hi = s->nsm - 1;
    k->ctl.task_limit = tasks;
    k->ctl.budget_ns = s->opts.budget_ns;
    k->ctl.nworkers = 0;
    k->ctl.chunk_max = s->opts.chunk_max;
    k->ctl.workers_per_capsm = k->per_sm;
    k->ctl.grid_x = spec->grid.x;
    k->ctl.grid_y = spec->grid.y;
    k->ctl.grid_z = spec->grid.z;
    k->ctl.tasks = tasks;
    k->ctl.next = 0;
    k->ctl.done = 0;
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
static void sim_kernel_close(corun__backend *be, corun__bkernel *k)
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
static int launch(corun__sim *s, corun__bkernel *k, uint64_t blocks, bool workers, uint32_t base,
                  uint32_t gen, uint32_t preset, int32_t priority, uint64_t cookie)
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
    l->base = base;
    l->gen = gen;
    l->preset = preset;
    l->priority = priority;
    l->workers = workers;
    l->queued = false;
    corun__sim_push(s, s->now + s->launch_ns > k->range_at ? s->now + s->launch_ns : k->range_at,
                    CORUN_SIM_EV_ARRIVE, 0, 0, l);
    if (s->broken != CORUN_OK) {
        l->k = NULL;
        l->next = s->free_launches;
        s->free_launches = l;
        return s->broken;
    }
    k->launches++;
    if (workers) {
        k->worker_launches++;
    }
    s->stats.launches++;
    return CORUN_OK;
}

static int sim_launch_workers(corun__backend *be, corun__bkernel *k, const corun__launch_req *req)
{
    uint32_t preset = 0;
    int rc;

    if (k == NULL || req == NULL || req->nworkers == 0) {
        return CORUN_EINVAL;
    }
    if ((uint64_t)req->base + req->nworkers - 1 > UINT32_MAX) {
        return CORUN_ERANGE;
    }
    if (k->ahead && k->worker_calls == 0 && !k->signalled && req->base == 0 && req->gen == 0) {
        /* the ahead entry's fresh start, as the cuda backend makes it */
        preset = req->nworkers;
        k->ctl.next = preset;
    }
    rc = launch(sim_of(be), k, req->nworkers, true, req->base, req->gen, preset, req->priority,
                req->cookie);
    if (rc == CORUN_OK) {
        k->worker_calls++;
    } else if (preset > 0) {
        k->ctl.next = 0;
    }
    return rc;
}

static int sim_launch_plain(corun__backend *be, corun__bkernel *k, int32_t priority,
                            uint64_t cookie)
{
    if (k == NULL) {
        return CORUN_EINVAL;
    }
    return launch(sim_of(be), k, k->tasks, false, 0, 0, 0, priority, cookie);
}

/* --- signals and counters ------------------------------------------------- */

/* The word changes on the device signal_ns from now. The task limit changes
 * only while no worker of k is live or on its way (CORUN_EBUSY otherwise,
 * corun_ctl.h says why), and then at once, as rewind's does. */
static int sim_signal(corun__backend *be, corun__bkernel *k, corun__signal sig, uint64_t value)
{
    corun__sim *s = sim_of(be);

    if (k == NULL) {
        return CORUN_EINVAL;
    }
    if (s->broken != CORUN_OK) {
        return s->broken;
    }
    if (k->closed) {
        return CORUN_ESTATE;
    }
    if (sig != CORUN_SIG_NWORKERS) {
        k->signalled = true;
    }
    switch (sig) {
    case CORUN_SIG_HALT_GEN:
    case CORUN_SIG_EVICT_BELOW:
    case CORUN_SIG_NWORKERS:
        if (value > UINT32_MAX) {
            return CORUN_ERANGE;
        }
        break;
    case CORUN_SIG_SM_RANGE:
        break;
    case CORUN_SIG_TASK_LIMIT:
        if (value > k->tasks) {
            return CORUN_ERANGE;
        }
        if (k->worker_launches > 0) {
            return CORUN_EBUSY;
        }
        corun__sim_apply_signal(s, k, sig, value);
        return CORUN_OK;
    default:
        return CORUN_EINVAL;
    }
    corun__sim_push(s, s->now + s->signal_ns, CORUN_SIM_EV_SIGNAL, (uint32_t)sig, value, k);
    if (s->broken != CORUN_OK) {
        return s->broken;
    }
    if (sig == CORUN_SIG_SM_RANGE) {
        k->range_at = s->now + s->signal_ns;
    }
    return CORUN_OK;
}

/* A host write while no worker runs, so it takes effect at once. The done
 * counter is left alone. */
static int sim_rewind(corun__backend *be, corun__bkernel *k, uint64_t next, uint64_t limit)
{
    if (k == NULL) {
        return CORUN_EINVAL;
    }
    if (k->worker_launches > 0) {
        return CORUN_EBUSY;
    }
    if (next > k->tasks || limit > k->tasks) {
        return CORUN_ERANGE;
    }
    k->ctl.next = next;
    k->ctl.task_limit = limit;
    k->voided = false;
    return CORUN_OK;
}

/* live counts workers on SMs (started - exited, as the CUDA backend reads
 * it); workers launched but not yet dispatched are not running and are not
 * counted (as on the device, where a worker counts itself when it starts). */
static int sim_progress(corun__backend *be, corun__bkernel *k, corun_progress *out)
{
    if (k == NULL || out == NULL) {
        return CORUN_EINVAL;
    }
    out->tasks = k->tasks;
    out->claimed = k->voided ? k->ctl.done : k->ctl.next; /* as the cuda backend's */
    out->done = k->ctl.done;
    out->live = k->ctl.started - k->ctl.exited;
    out->task_ns = k->ctl.task_ns_seed;
    out->ahead = k->ahead;
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
    free(s);
}

static const corun__backend_ops sim_ops = {
    .name = "sim",
    .kernel_open = sim_kernel_open,
    .kernel_close = sim_kernel_close,
    .launch_workers = sim_launch_workers,
    .launch_plain = sim_launch_plain,
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
    if (!delay_ok(o->signal_ns) || !delay_ok(o->launch_ns) || !delay_ok(o->notify_ns) ||
        !delay_ok(o->claim_ns)) {
        return CORUN_EINVAL;
    }
    /* A task limit is not a signal workers see while they run (corun_ctl.h). */
    if ((unsigned)o->dispatch > CORUN_SIM_DISPATCH_PRIORITY ||
        (unsigned)o->faults.signal_kind > CORUN_SIG_NWORKERS ||
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
    s->signal_ns = (uint64_t)llround(o->signal_ns);
    s->launch_ns = (uint64_t)llround(o->launch_ns);
    s->notify_ns = (uint64_t)llround(o->notify_ns);
    s->claim_ns = (uint64_t)llround(o->claim_ns);
    s->slow = 1;
    corun__rng_seed(&s->rng, o->seed);
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

const uint32_t *corun__sim_task_hits(corun__backend *be, corun__bkernel *k)
{
    corun__sim *s = sim_checked(be);
    const corun__bkernel *it;

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
