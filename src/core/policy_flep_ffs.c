/*
 * policy_flep_ffs.c — FLEP's FFS policy: fairness first under an overhead
 * bound (FLEP §5.2.2).
 *
 * Weighted round robin: in each round, each kernel i with work runs alone
 * on the GPU for an epoch of T x W_i, W_i its weight (corun_launch_attr
 * weight, scenario "weight"), then is preempted temporally for the next.
 * T is the smallest value that keeps the time lost to preemptions within
 * the bound (setting FFS_MAX_OVERHEAD, 10 % by default):
 *
 *     sum_i O_i / (T sum_i W_i) <= max_overhead
 *     T = sum_i O_i / (max_overhead x sum_i W_i)
 *
 * over the kernels taking part in the round, O_i being kernel i's measured
 * preemption overhead (preempt_cost.h). T is recomputed at every epoch, so
 * it follows the measurements.
 *
 * Where this departs from the paper, and why:
 *  - "A kernel" of the round robin is a stream of launches of one kernel
 *    name (a flow): FLEP's FFS experiment has each program invoke the same
 *    kernel in a loop, and a share only means something across
 *    invocations. Within a flow launches run in arrival order; a launch
 *    that completes inside its flow's epoch hands the rest of the epoch to
 *    the flow's next launch.
 *  - When a flow has nothing left to run inside its epoch, its epoch waits
 *    FFS_GRACE_US for the program's next launch before moving on, so the
 *    moment between a completion and the next launch does not cost the flow
 *    its turn; with no other flow waiting, nothing is preempted at all.
 *  - T has a floor (FFS_MIN_EPOCH_US): overheads measured near zero would
 *    otherwise make epochs arbitrarily short.
 *  - Preemption does not relaunch: workers leave after their chunk and the
 *    next epoch's workers continue from the task counter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "core/policy.h"
#include "core/preempt_cost.h"

#define NO_FLOW ((size_t)-1)

typedef struct ffs_flow {
    char name[64];
    uint32_t weight;
} ffs_flow;

typedef struct ffs_kernel {
    size_t flow;
    uint64_t t_stop;     /* when it was told to stop, 0 if it was not */
} ffs_kernel;

typedef struct ffs {
    ffs_flow *flows;
    size_t nflows, cap;
    corun__pcost_table cost;
    size_t cur;          /* flow whose epoch it is, or NO_FLOW */
    uint64_t epoch_end;
    uint64_t hold_until; /* cur has nothing to run: its epoch waits until then */
    double max_overhead, min_epoch_ns, grace_ns;
} ffs;

static ffs_kernel *fk(const corun__job *k)
{
    return (ffs_kernel *)k->pdata;
}

static int ffs_create(corun__sched *s, void **state)
{
    const corun__settings *set = corun__sched_settings(s);
    ffs *f = calloc(1, sizeof(*f));

    if (f == NULL) {
        return CORUN_ENOMEM;
    }
    corun__pcost_init(&f->cost, set->preempt_overhead_us * 1e3);
    f->cur = NO_FLOW;
    f->max_overhead = set->ffs_max_overhead;
    f->min_epoch_ns = set->ffs_min_epoch_us * 1e3;
    f->grace_ns = set->ffs_grace_us * 1e3;
    *state = f;
    return CORUN_OK;
}

static void ffs_destroy(void *state)
{
    ffs *f = state;

    corun__pcost_free(&f->cost);
    free(f->flows);
    free(f);
}

/* The flow of a kernel name, created on first sight; NO_FLOW out of memory. */
static size_t flow_of(ffs *f, const corun__job *k)
{
    size_t i;

    for (i = 0; i < f->nflows; i++) {
        if (strcmp(f->flows[i].name, k->name) == 0) {
            f->flows[i].weight = k->attr.weight ? k->attr.weight : 1;
            return i;
        }
    }
    if (corun__grow((void **)&f->flows, &f->cap, f->nflows, sizeof(*f->flows), 8) != 0) {
        return NO_FLOW;
    }
    snprintf(f->flows[f->nflows].name, sizeof(f->flows[0].name), "%s", k->name);
    f->flows[f->nflows].weight = k->attr.weight ? k->attr.weight : 1;
    return f->nflows++;
}

static bool in_flow(const corun__job *k, size_t flow)
{
    return k->pdata != NULL && fk(k)->flow == flow;
}

/* The kernel of `flow` that runs now, or NULL. */
static corun__job *flow_running(corun__sched *s, size_t flow)
{
    corun__job *k;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (in_flow(k, flow) && k->state == CORUN_JS_RUNNING) {
            return k;
        }
    }
    return NULL;
}

/* The flow's next launch to run: the oldest waiting or paused one. */
static corun__job *flow_next(corun__sched *s, size_t flow)
{
    corun__job *k;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (in_flow(k, flow) && (k->state == CORUN_JS_WAITING || k->state == CORUN_JS_PAUSED)) {
            return k;
        }
    }
    return NULL;
}

static bool flow_live(corun__sched *s, size_t flow)
{
    corun__job *k;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (in_flow(k, flow)) {
            return true;
        }
    }
    return false;
}

/* The epoch unit T over the flows taking part (those with launches). */
static double epoch_unit(corun__sched *s, ffs *f)
{
    double sum_o = 0, sum_w = 0, t;
    size_t i;

    for (i = 0; i < f->nflows; i++) {
        if (flow_live(s, i)) {
            sum_o += corun__pcost_get(&f->cost, f->flows[i].name);
            sum_w += f->flows[i].weight;
        }
    }
    t = sum_w > 0 ? sum_o / (f->max_overhead * sum_w) : 0;
    return t > f->min_epoch_ns ? t : f->min_epoch_ns;
}

/* The flow after cur, round robin, that has a launch waiting; NO_FLOW if none
 * other than cur. */
static size_t next_flow(corun__sched *s, ffs *f)
{
    size_t i;

    for (i = 1; i <= f->nflows; i++) {
        size_t j = f->cur == NO_FLOW ? i - 1 : (f->cur + i) % f->nflows;
        if (j != f->cur && flow_next(s, j) != NULL) {
            return j;
        }
    }
    return NO_FLOW;
}

static void run_next_of(corun__sched *s, size_t flow)
{
    corun__job *k = flow_next(s, flow);
    const uint32_t sms = corun__sched_gpu(s)->sm_count;
    uint32_t n = corun__sched_free_capsm(s), need = sms;

    if (k == NULL || n == 0) {
        return;
    }
    if (k->per_sm > 0 && k->tasks < (uint64_t)sms * k->per_sm) {
        need = (uint32_t)((k->tasks + k->per_sm - 1) / k->per_sm);
    }
    (void)corun__sched_run(s, k, need < n ? need : n);
}

/* Starts the epoch of the next flow with work, if any. */
static void switch_flow(corun__sched *s, ffs *f, uint64_t now)
{
    size_t next = next_flow(s, f);

    if (next == NO_FLOW) {
        return;
    }
    f->cur = next;
    f->hold_until = 0;
    f->epoch_end = now + (uint64_t)(epoch_unit(s, f) * f->flows[next].weight);
    run_next_of(s, next);
    corun__sched_timer(s, f->epoch_end);
}

static void step(corun__sched *s, ffs *f)
{
    uint64_t now = corun__sched_now(s);
    corun__job *r;

    if (f->cur == NO_FLOW) {
        switch_flow(s, f, now);
        return;
    }
    r = flow_running(s, f->cur);
    if (r != NULL) {
        f->hold_until = 0;
        if (now < f->epoch_end) {
            corun__sched_timer(s, f->epoch_end);
        } else if (next_flow(s, f) != NO_FLOW) {
            if (corun__sched_stop(s, r) == CORUN_OK) {
                fk(r)->t_stop = now;
            }
            switch_flow(s, f, now);
        } else {
            /* Alone: a new epoch, nothing preempted. */
            f->epoch_end = now + (uint64_t)(epoch_unit(s, f) * f->flows[f->cur].weight);
            corun__sched_timer(s, f->epoch_end);
        }
        return;
    }
    if (flow_next(s, f->cur) != NULL) {
        f->hold_until = 0;
        if (now >= f->epoch_end && next_flow(s, f) != NO_FLOW) {
            switch_flow(s, f, now);
            return;
        }
        run_next_of(s, f->cur);
        corun__sched_timer(s, f->epoch_end);
        return;
    }
    /* The flow has nothing to run: keep its epoch a moment for its
     * program's next launch, then move on. */
    if (f->hold_until == 0) {
        f->hold_until = now + (uint64_t)f->grace_ns;
    }
    if (next_flow(s, f) == NO_FLOW) {
        return;
    }
    if (now < f->hold_until && now < f->epoch_end) {
        corun__sched_timer(s, f->hold_until < f->epoch_end ? f->hold_until : f->epoch_end);
        return;
    }
    switch_flow(s, f, now);
}

static void ffs_arrive(corun__sched *s, void *state, corun__job *k)
{
    ffs *f = state;
    ffs_kernel *p = calloc(1, sizeof(*p));

    if (p != NULL) {
        p->flow = flow_of(f, k);
    }
    if (p == NULL || p->flow == NO_FLOW) {
        free(p);
        corun__policy_run_on_free(s, k);
        return;
    }
    k->pdata = p;
    step(s, f);
}

static void ffs_paused(corun__sched *s, void *state, corun__job *k)
{
    ffs *f = state;

    if (k->pdata != NULL && fk(k)->t_stop != 0) {
        corun__pcost_add(&f->cost, k->name, (double)(corun__sched_now(s) - fk(k)->t_stop));
        fk(k)->t_stop = 0;
    }
    step(s, f);
}

static void ffs_complete(corun__sched *s, void *state, corun__job *k)
{
    corun__policy_forget_pdata(s, state, k);
    step(s, state);
}

static void ffs_timer(corun__sched *s, void *state, uint64_t now)
{
    step(s, state);
}

const corun__policy_ops corun__policy_flep_ffs = {
    .name = "flep-ffs",
    .help = "FLEP FFS: weighted round robin of epochs T x weight, T bounded by FFS_MAX_OVERHEAD",
    .create = ffs_create,
    .destroy = ffs_destroy,
    .arrive = ffs_arrive,
    .paused = ffs_paused,
    .complete = ffs_complete,
    .timer = ffs_timer,
    .forget = corun__policy_forget_pdata,
};
