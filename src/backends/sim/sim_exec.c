/*
 * sim_exec.c — block-tasks, the shared-DRAM model, plain blocks and the
 * persistent-worker loop.
 *
 * DRAM. A resident block of kernel k demands bw_k = mem_bw_k / (per_sm_k * SMs)
 * of peak bandwidth (the kernel's mem_bw spread over its full occupancy).
 * With D the demand of all resident blocks, the slowdown is s = max(1, D) and
 * a task of k progresses at r_k = 1 / ((1 - mem_frac_k) + mem_frac_k * s)
 * of its solo speed. Every kernel keeps a virtual clock V_k that advances at
 * r_k, and its running tasks in a min-heap of end times on that clock; the
 * global event heap holds one valid wake-up per kernel, for its earliest end
 * (wake-ups it replaces stay in the heap and are skipped by version). A
 * change of s therefore touches O(kernels) state, and nothing at all while
 * the GPU is not bandwidth-bound (s stays 1). On that clock each task
 * advances at its block's speed (sim_share.c): its end on the clock is set
 * again, and its place in the heap, when the speed changes, which only SM
 * events do.
 *
 * Demand is counted per resident block, not per running task: a worker that
 * is claiming (claim_ns, a fraction of a chunk) still counts. Counting it out
 * would change every rate twice per chunk of every worker; counted this way,
 * D changes only when blocks arrive or leave. Changes within one instant are
 * applied together, just before the clock moves (corun__sim_update_rates).
 *
 * Workers follow corun_worker_loop (corun_device.cuh) step by step: check
 * the signals, claim a chunk with corun_chunk_size (claim_ns, during which
 * the worker holds its SM but runs nothing), run the chunk's tasks one after
 * the other, then count them in `done` and feed the chunk's time per task to
 * corun_chunk_ewma. As on the device, the claim of chunk k+1 happens before
 * chunk k is counted, so the time measured for a chunk includes one claim.
 * Worker 0 leaving (on a signal or at the end) stores its measured task time
 * in task_ns_seed, and workers of a later generation start from it, as on
 * the device.
 *
 * A kernel launched through its ahead entry (spec.ahead) follows
 * corun_worker_loop_ahead instead: one task per claim; at each task's start
 * the worker copies the signals and claims the next task at once (on the
 * device that claim's round trip overlaps the task, so it costs no time
 * here); after the task the copied signals decide whether it claims again,
 * and the task claimed runs either way. A halt voids the claims (the backend
 * sets next = CORUN_AHEAD_VOID with halt_gen): a claim after it is beyond the
 * limit, so the worker leaves after the task it claimed before. `done` and the task time every four
 * tasks. Workers with id < the launch's preset run task id first, unclaimed;
 * the others make one claim (claim_ns) before their first task.
 * A kernel's primary grid in the grid form (wa.grid) is one block per task:
 * a block below the preset runs its own task, any other one claims a task
 * (claim_ns) unless its launch is halted; it runs that task and leaves.
 * One simplification: a worker told to leave by a signal leaves at once,
 * without the final barrier.
 */
#include <math.h>
#include <stdlib.h>

#include "backends/sim/sim_int.h"
#include "corun/corun_chunk.h"

/* Virtual-clock slack when deciding that a task has ended: the clock is a
 * double of up to ~1e10 ns, whose rounding error is far below a picosecond. */
#define VCLOCK_EPS 1e-3
/* A task this far away (ns) is stalled in all but name: no wake-up for it
 * (its block's speed is re-set before it could matter). */
#define VCLOCK_NEVER 1e17

int corun__sim_kernel_exec_init(corun__sim *s, corun__exec *k)
{
    k->run = malloc((size_t)k->per_sm * s->nsm * sizeof(*k->run));
    if (k->run == NULL) {
        return CORUN_ENOMEM;
    }
    k->nrun = 0;
    k->vclock = 0;
    k->vtime = s->now;
    k->rate = 1;
    k->task_seq = 0;
    k->version = 0;
    k->wake_set = false;
    k->bw = k->spec.mem_bw / ((double)k->per_sm * s->nsm);
    corun__sim_share_kernel(s, k);
    return CORUN_OK;
}

void corun__sim_kernel_exec_free(corun__exec *k)
{
    free(k->run);
    k->run = NULL;
}

/* --- durations --------------------------------------------------------- */

/* A solo task duration in whole nanoseconds. */
static double draw_ns(corun__sim *s, const corun__dist *d)
{
    double x = d->a;
    int i;

    switch (d->kind) {
    case CORUN_DIST_CONST:
        break;
    case CORUN_DIST_UNIFORM:
        x = corun__rng_uniform(&s->rng, d->a, d->b);
        break;
    case CORUN_DIST_NORMAL:
        /* Truncated, not clamped: redraw below the floor. Each draw is above
         * it with probability > 1/2, so the bound is never reached in
         * practice; it only keeps the loop finite. */
        for (i = 0; i < 64; i++) {
            x = corun__rng_normal(&s->rng, d->a, d->b);
            if (x >= 0.05 * d->a) {
                break;
            }
        }
        if (x < 0.05 * d->a) {
            x = 0.05 * d->a;
        }
        break;
    case CORUN_DIST_EXP:
        x = corun__rng_exp(&s->rng, d->a);
        break;
    }
    return x > 0 ? floor(x + 0.5) : 0;
}

/* --- the DRAM model ---------------------------------------------------- */

static double rate_of(const corun__exec *k, double slow)
{
    return 1.0 / ((1.0 - k->spec.mem_frac) + k->spec.mem_frac * slow);
}

static void advance(const corun__sim *s, corun__exec *k)
{
    if (k->vtime != s->now) {
        k->vclock += k->rate * (double)(s->now - k->vtime);
        k->vtime = s->now;
    }
}

static bool task_before(const corun__sim_task *a, const corun__sim_task *b)
{
    return a->vend < b->vend || (a->vend == b->vend && a->seq < b->seq);
}

/* Puts t at heap slot i and tells its block where it is. */
static void run_set(corun__sim *s, corun__exec *k, uint32_t i, corun__sim_task t)
{
    k->run[i] = t;
    s->blocks[t.block].hpos = i;
}

static void run_sift_up(corun__sim *s, corun__exec *k, uint32_t i, corun__sim_task t)
{
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!task_before(&t, &k->run[parent])) {
            break;
        }
        run_set(s, k, i, k->run[parent]);
        i = parent;
    }
    run_set(s, k, i, t);
}

static void run_sift_down(corun__sim *s, corun__exec *k, uint32_t i, corun__sim_task t)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m;
        if (l >= k->nrun) {
            break;
        }
        m = r < k->nrun && task_before(&k->run[r], &k->run[l]) ? r : l;
        if (!task_before(&k->run[m], &t)) {
            break;
        }
        run_set(s, k, i, k->run[m]);
        i = m;
    }
    run_set(s, k, i, t);
}

static void run_push(corun__sim *s, corun__exec *k, corun__sim_task t)
{
    run_sift_up(s, k, k->nrun++, t);
}

static corun__sim_task run_pop(corun__sim *s, corun__exec *k)
{
    corun__sim_task top = k->run[0];
    corun__sim_task last = k->run[--k->nrun];

    if (k->nrun > 0) {
        run_sift_down(s, k, 0, last);
    }
    s->blocks[top.block].hpos = CORUN_SIM_NO_BLOCK;
    return top;
}

/* Makes sure the one valid TASK event of k is at the time its earliest task
 * ends (or that there is none when nothing runs or every task is stalled).
 * Cheap when unchanged. */
static void wake(corun__sim *s, corun__exec *k)
{
    double dt;
    uint64_t t;

    dt = k->nrun > 0 ? (k->run[0].vend - k->vclock) / k->rate : INFINITY;
    if (!(dt < VCLOCK_NEVER)) {
        if (k->wake_set) {
            k->version++;
            k->wake_set = false;
        }
        return;
    }
    t = k->vtime;
    if (dt > VCLOCK_EPS) {
        t += (uint64_t)ceil(dt - VCLOCK_EPS);
    }
    if (t < s->now) {
        t = s->now;
    }
    if (k->wake_set && k->wake_time == t) {
        return;
    }
    k->version++;
    k->wake_set = true;
    k->wake_time = t;
    corun__sim_push(s, t, CORUN_SIM_EV_TASK, 0, k->version, k);
}

void corun__sim_update_rates(corun__sim *s)
{
    corun__exec *k;
    double demand = 0, slow;

    if (!s->demand_dirty) {
        return;
    }
    s->demand_dirty = false;
    for (k = s->kernels; k != NULL; k = k->next) {
        demand += k->nres * k->bw;
    }
    slow = demand > 1 ? demand : 1;
    if (slow == s->slow) {
        return;
    }
    s->slow = slow;
    for (k = s->kernels; k != NULL; k = k->next) {
        if (k->spec.mem_frac > 0 && k->nrun > 0) {
            advance(s, k);
            k->rate = rate_of(k, slow);
            wake(s, k);
        }
    }
}

/* --- blocks ------------------------------------------------------------ */

/* A task starts at its block's current speed; the block's SM is marked, so
 * that speeds are set again before the clock moves (sim_share.c). */
static void task_start(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;
    const double solo = draw_ns(s, &k->spec.task_ns);
    corun__sim_task t;

    blk->ran = true;
    advance(s, k);
    if (k->nrun == 0) {
        k->rate = rate_of(k, s->slow);
    }
    if (blk->speed > 0) {
        t.vend = k->vclock + (blk->speed == 1 ? solo : solo / blk->speed);
    } else {
        t.vend = INFINITY;
        blk->rem = solo;
    }
    t.seq = k->task_seq++;
    t.block = b;
    run_push(s, k, t);
    corun__sim_share_dirty(s, blk->sm);
    wake(s, k);
}

void corun__sim_task_speed(corun__sim *s, uint32_t b, double speed)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;
    corun__sim_task t;
    double left;

    if (blk->hpos == CORUN_SIM_NO_BLOCK) {
        blk->speed = speed;
        return;
    }
    advance(s, k);
    t = k->run[blk->hpos];
    left = blk->speed > 0 ? (t.vend - k->vclock) * blk->speed : blk->rem;
    if (left < 0) {
        left = 0;
    }
    if (speed > 0) {
        t.vend = k->vclock + left / speed;
    } else {
        t.vend = INFINITY;
        blk->rem = left;
    }
    blk->speed = speed;
    if (blk->hpos > 0 && task_before(&t, &k->run[(blk->hpos - 1) / 2])) {
        run_sift_up(s, k, blk->hpos, t);
    } else {
        run_sift_down(s, k, blk->hpos, t);
    }
    wake(s, k);
}

static void block_leave(corun__sim *s, uint32_t b)
{
    corun__sim_launch *l = s->blocks[b].l;

    if (l->k->bw > 0) {
        l->k->nres--;
        s->demand_dirty = true;
    }
    corun__sim_block_release(s, b);
    corun__sim_launch_block_gone(s, l);
}

static uint32_t done_of(const corun__exec *k)
{
    return (uint32_t)k->ctl.done;
}

/* Workers of k running now (the anchor, which has left, not counted). */
static uint32_t live_of(const corun__exec *k)
{
    const uint32_t gone = k->ctl.exited + (uint32_t)(k->ctl.done >> 32);
    return k->ctl.started > gone ? k->ctl.started - gone : 0;
}

/* The anchor lets the stream go: the tasks are done. */
static void anchor_leave(corun__sim *s, corun__exec *k)
{
    uint32_t b = k->anchor;

    k->anchor = CORUN_SIM_NO_BLOCK;
    corun__sim_report(s, k, CORUN_BEV_FINISHED, 0);
    block_leave(s, b);
}

/* A worker leaves (corun__leave): worker 0 stores its task time; a primary
 * worker counts itself in done's high half, and the last one of its grid
 * reports or, with tasks left, stays as the anchor. */
static void worker_leave(corun__sim *s, uint32_t b)
{
    const corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;
    corun_ctl *ctl = &k->ctl;
    const uint32_t primary = blk->l->wa.primary;

    if (blk->worker == 0 && blk->mean_ns != 0) {
        ctl->task_ns_seed = blk->mean_ns; /* seeds a relaunch (corun_ctl.h) */
    }
    if (primary == 0) {
        ctl->exited++;
        block_leave(s, b);
        if (k->anchor != CORUN_SIM_NO_BLOCK && live_of(k) == 0) {
            corun__sim_report(s, k, CORUN_BEV_HELD, 0);
        }
        return;
    }
    ctl->done += CORUN_PRIMARY_LEFT;
    if ((uint32_t)(ctl->done >> 32) != primary) {
        block_leave(s, b);
        return;
    }
    k->rep_task_ns = blk->mean_ns;
    if (blk->l->wa.grid && k->rep_task_ns == 0) {
        k->rep_task_ns = ctl->task_ns_seed; /* block 0's (corun__leave) */
    }
    if (done_of(k) >= k->tasks) {
        k->rep_run_ns = (uint32_t)(s->now - k->t_primary); /* the grid ran every task alone */
        corun__sim_report(s, k, CORUN_BEV_FINISHED, 0);
        block_leave(s, b);
        return;
    }
    k->anchor = b; /* holds its SM slot and the stream */
    corun__sim_report(s, k, CORUN_BEV_HELD, live_of(k));
}

static void release_holders(corun__sim *s, corun__exec *k, bool every);

/* done += n, the holders' and the anchor's leave once the tasks are done,
 * and the "signal at task k" fault once done reaches k. */
static void count_done(corun__sim *s, corun__exec *k, uint32_t n)
{
    const corun__sim_faults *f = &s->opts.faults;

    k->ctl.done += n;
    if (k->holders > 0 && done_of(k) >= k->tasks - k->ctl.task_cut) {
        release_holders(s, k, true);
    }
    if (k->anchor != CORUN_SIM_NO_BLOCK && done_of(k) >= k->tasks) {
        anchor_leave(s, k);
    }
    if (k->fault_armed && done_of(k) >= f->signal_at_task) {
        corun__ctl_write w[CORUN_CTL_MAX_WRITES];
        size_t nw = 0;
        k->fault_armed = false;
        if (corun__ctl_signal(&k->ch, f->signal_kind, f->signal_value, w, &nw) == CORUN_OK) {
            corun__sim_apply_writes(s, k, w, nw);
        }
    }
}

/* The limit of claims: tasks - task_cut. */
static uint64_t limit_of(const corun__sim_block *blk)
{
    return blk->l->wa.tasks - blk->l->k->ctl.task_cut;
}

/* Whether this worker's SM is one of its launch's. */
static bool in_launch(const corun__sim_block *blk)
{
    return blk->sm >= blk->l->wa.sm_lo && blk->sm <= blk->l->wa.sm_hi;
}

/* Whether the signals let this worker stay. */
static bool signals_allow(const corun__sim_block *blk)
{
    const corun__exec *k = blk->l->k;
    const corun_ctl *ctl = &k->ctl;

    return blk->l->wa.gen >= ctl->halt_gen && blk->worker / k->per_sm >= ctl->evict_below &&
           blk->sm >= ctl->sm_lo && ~blk->sm >= ctl->sm_hi_inv;
}

/* Whether a worker of a launch with wa.hold may keep its slot (corun__hold):
 * not after a halt; moved off its SM by an eviction or a narrowing, only
 * if it ran a task there (the SM's other tasks still run). */
static bool hold_allows(const corun__sim_block *blk)
{
    return blk->l->wa.gen >= blk->l->k->ctl.halt_gen && (blk->ran || signals_allow(blk));
}

/* A worker out of tasks (its claim found none left, or the signals moved
 * it off): leaves, or, in a launch with wa.hold, holds its slot until done
 * reaches the limit or the signals send it away (hold_allows). The GPU's
 * holders see either within one poll (~2 us); here they leave at the
 * instant it happens. Returns whether it holds. */
static bool worker_out(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;

    if (blk->l->wa.hold && in_launch(blk) && hold_allows(blk) && done_of(k) < limit_of(blk)) {
        blk->holding = true;
        k->holders++;
        return true;
    }
    worker_leave(s, b);
    return false;
}

/* Lets k's holders go: all of them (every), or those the signals send
 * away (hold_allows). */
static void release_holders(corun__sim *s, corun__exec *k, bool every)
{
    uint32_t b;

    for (b = 0; b < s->nblocks && k->holders > 0; b++) {
        corun__sim_block *blk = &s->blocks[b];
        if (blk->l == NULL || blk->l->k != k || !blk->holding ||
            (!every && hold_allows(blk))) {
            continue;
        }
        blk->holding = false;
        k->holders--;
        worker_leave(s, b);
    }
}

void corun__sim_holders_signalled(corun__sim *s, corun__exec *k)
{
    if (k->holders > 0) {
        release_holders(s, k, false);
    }
}

/* Reports a claim of c tasks from first, count of them runnable. */
static void report_claim(corun__sim *s, corun__exec *k, uint32_t worker, uint32_t c,
                         uint64_t first, uint32_t count)
{
    if (s->claim_fn != NULL) {
        corun__sim_claim cl = {s->now, worker, c, first, count};
        s->claim_fn(s->claim_ctx, k, &cl);
    }
}

/* A chunk boundary (or the worker's start): obey the signals, else claim. */
static void worker_boundary(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;
    corun_ctl *ctl = &k->ctl;
    uint64_t limit, first;
    uint32_t remaining, c;

    if (blk->next_hint >= blk->l->wa.tasks) {
        /* past every task already: no claim (corun__claim); the chunk is
         * counted and timed as after any claim */
        if (blk->count > 0) {
            count_done(s, k, blk->count);
            blk->mean_ns = corun_chunk_ewma(blk->mean_ns, (s->now - blk->t_chunk) / blk->count);
        }
        worker_out(s, b);
        return;
    }
    if (!signals_allow(blk)) {
        if (blk->count > 0) {
            count_done(s, k, blk->count);
        }
        if (!worker_out(s, b)) { /* a holder that ran tasks here stays (corun__hold) */
            s->stats.workers_exited_signal++;
        }
        return;
    }
    limit = limit_of(blk);
    remaining = limit > blk->next_hint
                    ? (limit - blk->next_hint > UINT32_MAX ? UINT32_MAX
                                                           : (uint32_t)(limit - blk->next_hint))
                    : 0;
    c = corun_chunk_size(blk->mean_ns, blk->l->wa.budget_ns, remaining,
                         ctl->nworkers != 0 ? ctl->nworkers : blk->l->wa.nworkers,
                         blk->l->wa.chunk_max);
    first = blk->l->wa.preset + ctl->next;
    ctl->next += c;
    blk->next_hint = first + c;
    blk->claim_first = first;
    blk->claim_count = first < limit ? (uint32_t)(limit - first < c ? limit - first : c) : 0;
    report_claim(s, k, blk->worker, c, first, blk->claim_count);
    corun__sim_push(s, s->now + s->claim_ns, CORUN_SIM_EV_CLAIM, b, 0, NULL);
}

/* --- the ahead entry ------------------------------------------------------ */

/* A claim on next's low word, as the ahead entry's 32-bit add makes it. */
static uint64_t ahead_claim(corun__exec *k)
{
    uint32_t lo = (uint32_t)k->ctl.next;
    k->ctl.next = (k->ctl.next & ~0xffffffffull) | (uint32_t)(lo + 1u);
    return lo;
}

/* A task's start: while go, copy the signals and claim the next task. */
static void ahead_task_start(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;

    blk->claimed = blk->go;
    if (blk->go) {
        blk->stay = signals_allow(blk);
        blk->ahead_next = blk->l->wa.preset + ahead_claim(k);
        report_claim(s, k, blk->worker, 1, blk->ahead_next,
                     blk->ahead_next < limit_of(blk) ? 1u : 0u);
    }
    blk->count = 1;
    blk->cur = 0;
    task_start(s, b);
}

/* A task's end: the task claimed at its start runs next, whatever the
 * signals copied then say; they decide whether that one claims again. */
static void ahead_task_end(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;
    const uint64_t limit = limit_of(blk);
    uint64_t n = limit;

    (void)k;
    if (blk->claimed) {
        blk->go = blk->stay;
        n = blk->ahead_next;
    }
    if (++blk->pend == 4) {
        count_done(s, k, 4);
        blk->mean_ns = corun_chunk_ewma(blk->mean_ns, (s->now - blk->t_chunk) / 4);
        blk->t_chunk = s->now;
        blk->pend = 0;
    }
    if (n >= limit) {
        if (blk->pend > 0) {
            if (blk->mean_ns == 0) { /* as corun_worker_loop_ahead times a short run */
                blk->mean_ns = (uint32_t)((s->now - blk->t_chunk) / blk->pend);
            }
            count_done(s, k, blk->pend);
            blk->pend = 0;
        }
        const bool told = !blk->go;
        if (!worker_out(s, b) && told) { /* a holder that ran tasks here stays */
            s->stats.workers_exited_signal++;
        }
        return;
    }
    blk->first = n;
    ahead_task_start(s, b);
}

/* A worker's start: a preset task, or one claim (claim_ns) if the signals
 * allow. */
static void ahead_worker_start(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;
    const uint64_t limit = limit_of(blk);

    blk->pend = 0;
    blk->mean_ns = 0;
    blk->t_chunk = s->now;
    blk->go = in_launch(blk) && signals_allow(blk);
    if (in_launch(blk) && blk->worker < blk->l->wa.preset && blk->l->wa.own) {
        if (blk->worker >= limit) {
            worker_leave(s, b);
            return;
        }
        blk->first = blk->worker; /* its own task */
        ahead_task_start(s, b);
        return;
    }
    if (!blk->go) {
        s->stats.workers_exited_signal++;
        worker_leave(s, b);
        return;
    }
    blk->claim_first = blk->l->wa.preset + ahead_claim(k);
    blk->claim_count = blk->claim_first < limit ? 1 : 0;
    report_claim(s, k, blk->worker, 1, blk->claim_first, blk->claim_count);
    corun__sim_push(s, s->now + s->claim_ns, CORUN_SIM_EV_CLAIM, b, 0, NULL);
}

/* --- the grid form ------------------------------------------------------- */

/* A block of the grid form starts (corun_grid_block): its own task, or one
 * claim (claim_ns) unless its launch is halted, or none. */
static void grid_block_start(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;
    const corun_worker_arg *wa = &blk->l->wa;

    blk->mean_ns = 0;
    blk->count = 0;
    blk->cur = 0;
    blk->t_chunk = s->now;
    if (blk->worker < wa->preset) {
        blk->first = blk->worker; /* its own task */
        blk->count = 1;
        task_start(s, b);
        return;
    }
    if (wa->gen < k->ctl.halt_gen) {
        s->stats.workers_exited_signal++;
        worker_leave(s, b);
        return;
    }
    blk->claim_first = wa->preset + k->ctl.next++;
    blk->claim_count = blk->claim_first < wa->tasks ? 1 : 0;
    report_claim(s, k, blk->worker, 1, blk->claim_first, blk->claim_count);
    corun__sim_push(s, s->now + s->claim_ns, CORUN_SIM_EV_CLAIM, b, 0, NULL);
}

/* Its task ended: counted, block 0's timed, and the block leaves. */
static void grid_task_end(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];

    if (blk->worker == 0) {
        blk->mean_ns = (uint32_t)(s->now - blk->t_chunk);
    }
    count_done(s, blk->l->k, 1);
    worker_leave(s, b);
}

void corun__sim_on_claim_event(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;

    s->stats.events++;
    if (blk->l->wa.grid) {
        if (blk->claim_count == 0) {
            worker_leave(s, b);
            return;
        }
        blk->first = blk->claim_first;
        blk->count = 1;
        task_start(s, b);
        return;
    }
    if (k->ahead) { /* the ahead entry's first claim */
        if (blk->claim_count == 0) {
            worker_out(s, b);
            return;
        }
        blk->first = blk->claim_first;
        ahead_task_start(s, b);
        return;
    }
    if (blk->count > 0) {
        count_done(s, k, blk->count);
        blk->mean_ns = corun_chunk_ewma(blk->mean_ns, (s->now - blk->t_chunk) / blk->count);
    }
    blk->t_chunk = s->now;
    blk->first = blk->claim_first;
    blk->count = blk->claim_count;
    blk->cur = 0;
    if (blk->count == 0) {
        worker_out(s, b);
        return;
    }
    task_start(s, b);
}

void corun__sim_block_start(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__exec *k = blk->l->k;

    if (k->bw > 0) {
        k->nres++;
        s->demand_dirty = true;
    }
    if (!blk->l->workers) {
        blk->count = 1;
        task_start(s, b);
        return;
    }
    k->ctl.started++;
    s->stats.workers_started++;
    if (blk->worker == 0 && blk->l->wa.primary != 0) {
        k->t_primary = s->now; /* corun__started's stamp */
    }
    blk->holding = false;
    blk->ran = false;
    blk->next_hint = blk->l->wa.preset;
    if (blk->l->wa.grid) {
        grid_block_start(s, b);
        return;
    }
    if (k->ahead) {
        ahead_worker_start(s, b);
        return;
    }
    blk->mean_ns = blk->l->wa.gen > 0 ? k->ctl.task_ns_seed : 0; /* a relaunch starts from
                                                                    the measured time */
    blk->count = 0;
    if (!in_launch(blk)) {
        s->stats.workers_exited_signal++;
        worker_leave(s, b);
        return;
    }
    if (blk->worker < blk->l->wa.preset && blk->l->wa.own && blk->worker < limit_of(blk)) {
        /* its own task, unclaimed (corun__first_chunk) */
        blk->t_chunk = s->now;
        blk->first = blk->worker;
        blk->count = 1;
        blk->cur = 0;
        task_start(s, b);
        return;
    }
    worker_boundary(s, b);
}

void corun__sim_on_task_event(corun__sim *s, corun__exec *k, uint64_t version)
{
    corun__sim_task t;
    corun__sim_block *blk;

    if (version != k->version) {
        return; /* superseded by a later wake-up */
    }
    k->wake_set = false;
    advance(s, k);
    if (k->nrun == 0 || k->run[0].vend > k->vclock + VCLOCK_EPS) {
        wake(s, k); /* the rate fell since this wake-up was set */
        return;
    }
    t = run_pop(s, k);
    s->stats.events++;
    s->stats.tasks_run++;
    blk = &s->blocks[t.block];
    corun__sim_share_dirty(s, blk->sm);
    k->hits[blk->first + blk->cur]++;
    if (!blk->l->workers) {
        block_leave(s, t.block);
    } else if (blk->l->wa.grid) {
        grid_task_end(s, t.block);
    } else if (k->ahead) {
        ahead_task_end(s, t.block);
    } else if (++blk->cur < blk->count) {
        task_start(s, t.block);
    } else {
        worker_boundary(s, t.block);
    }
    wake(s, k);
}
