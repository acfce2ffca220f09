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
 *    for the program's next launch before moving on, so the moment between
 *    a completion and the next launch does not cost the flow its turn; with
 *    no other flow waiting, nothing is preempted at all. The wait is
 *    FFS_GRACE_US, or longer where the flow's own recent gaps were (a
 *    quarter over their decaying maximum), up to 5 x FFS_GRACE_US.
 *  - T has a floor (FFS_MIN_EPOCH_US): overheads measured near zero would
 *    otherwise make epochs arbitrarily short.
 *  - Preemption does not relaunch: workers leave after their chunk and the
 *    next epoch's workers continue from the task counter.
 *  - An epoch is measured in the GPU time the flow receives, not in wall
 *    time: flow i's turn ends once it has held T x W_i x sm_count CapSM-ns
 *    since the turn began, and what it received over or under that is
 *    carried to its next turn, as in deficit round robin (Shreedhar and
 *    Varghese). Why: on a real GPU the host learns of a completion some tens
 *    of microseconds late, and a preempted kernel keeps its SMs while its
 *    workers drain; wall-clock epochs charge the first to the flow whose
 *    turn it is and give the second away, which tilts the shares away from
 *    the weights (docs/decisions/0029). A flow's credit carried forward is
 *    at most one quantum, so no flow saves up a long turn.
 */
#include <stdlib.h>

#include "core/policy.h"
#include "core/preempt_cost.h"

typedef struct ffs_flow {
    char name[CORUN_FLOW_NAME]; /* first (policy.h) */
    uint32_t weight;
    double served;  /* CapSM-ns of its finished kernels */
    double charged; /* CapSM-ns received that credit was charged for */
    double credit;  /* CapSM-ns it may still receive in its turn */
    uint64_t idle_since; /* when its last kernel ended with none behind it, 0 = not idle */
    double gap_ns;  /* decaying maximum of its gaps between a completion and the next launch */
} ffs_flow;

typedef struct ffs_kernel {
    size_t flow; /* first (policy.h) */
    uint64_t t_stop;     /* when it was told to stop, 0 if it was not */
} ffs_kernel;

_Static_assert(offsetof(ffs_flow, name) == 0 && offsetof(ffs_kernel, flow) == 0,
               "flow records as policy.h has them");

typedef struct ffs {
    ffs_flow *flows;
    size_t nflows, cap;
    corun__pcost_table cost;
    size_t cur;          /* flow whose epoch it is, or CORUN_NO_FLOW */
    double round_t;      /* T of the current round, ns */
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
    f->cur = CORUN_NO_FLOW;
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

/* The flow of k's kernel name, created on first sight, its weight k's;
 * CORUN_NO_FLOW out of memory. */
static size_t flow_of(ffs *f, const corun__job *k)
{
    bool fresh;
    size_t i = corun__policy_flow((void **)&f->flows, &f->nflows, &f->cap, sizeof(*f->flows), k,
                                  &fresh);

    if (i != CORUN_NO_FLOW) {
        f->flows[i].weight = k->attr.weight ? k->attr.weight : 1;
    }
    return i;
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

/* Charges every flow's credit for the CapSM-ns it received since the last
 * charge (a stopped kernel's drain included): what its finished kernels and
 * its live ones have held, gathered in one walk of the kernels. */
static void charge(corun__sched *s, ffs *f)
{
    corun__job *k;
    size_t i;

    for (i = 0; i < f->nflows; i++) {
        f->flows[i].credit += f->flows[i].charged;
        f->flows[i].charged = f->flows[i].served;
    }
    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (k->pdata != NULL) {
            f->flows[fk(k)->flow].charged += corun__sched_capsm_ns(s, k);
        }
    }
    for (i = 0; i < f->nflows; i++) {
        f->flows[i].credit -= f->flows[i].charged;
    }
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

/* The flow after cur, round robin, that has a launch waiting; CORUN_NO_FLOW if none
 * other than cur. */
static size_t next_flow(corun__sched *s, ffs *f)
{
    size_t i;

    for (i = 1; i <= f->nflows; i++) {
        size_t j = f->cur == CORUN_NO_FLOW ? i - 1 : (f->cur + i) % f->nflows;
        if (j != f->cur && flow_next(s, j) != NULL) {
            return j;
        }
    }
    return CORUN_NO_FLOW;
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

/* A turn's quantum for `flow`: T x W of the whole GPU, in CapSM-ns, with the
 * T of the round, so that a T that moves within a round does not tilt the
 * weights. */
static double quantum(corun__sched *s, ffs *f, size_t flow)
{
    if (f->round_t <= 0) {
        f->round_t = epoch_unit(s, f);
    }
    return f->round_t * f->flows[flow].weight * corun__sched_gpu(s)->sm_count;
}

/* Gives `flow` a new quantum, keeping at most one quantum carried forward. */
static void refill(corun__sched *s, ffs *f, size_t flow)
{
    const double q = quantum(s, f, flow);
    ffs_flow *fl = &f->flows[flow];

    fl->credit = (fl->credit > q ? q : fl->credit) + q;
}

/* A check when `flow`'s credit could run out at the earliest (the whole GPU
 * held from now on). */
static void timer_for(corun__sched *s, const ffs *f, size_t flow, uint64_t now)
{
    const double c = f->flows[flow].credit / corun__sched_gpu(s)->sm_count;

    corun__sched_timer(s, now + (c > 1e3 ? (uint64_t)c : 1000));
}

/* Starts the turn of the next flow with work and credit, if any: a flow
 * whose debt outlasts its new quantum waits a round, as in deficit round
 * robin. */
static void switch_flow(corun__sched *s, ffs *f, uint64_t now)
{
    size_t next = CORUN_NO_FLOW;
    int round;

    for (round = 0; round < 64; round++) {
        next = next_flow(s, f);
        if (next == CORUN_NO_FLOW) {
            return;
        }
        if (f->cur == CORUN_NO_FLOW || next <= f->cur) {
            f->round_t = epoch_unit(s, f); /* a new round */
        }
        f->cur = next;
        refill(s, f, next);
        if (f->flows[next].credit > 0) {
            break;
        }
    }
    f->hold_until = 0;
    run_next_of(s, next);
    timer_for(s, f, next, now);
}

static void step(corun__sched *s, ffs *f)
{
    uint64_t now = corun__sched_now(s);
    corun__job *r;
    ffs_flow *cur;

    charge(s, f);
    if (f->cur == CORUN_NO_FLOW) {
        switch_flow(s, f, now);
        return;
    }
    cur = &f->flows[f->cur];
    r = flow_running(s, f->cur);
    if (r != NULL) {
        f->hold_until = 0;
        if (cur->credit > 0) {
            timer_for(s, f, f->cur, now);
        } else if (next_flow(s, f) != CORUN_NO_FLOW) {
            if (corun__sched_stop(s, r) == CORUN_OK) {
                fk(r)->t_stop = now;
            }
            switch_flow(s, f, now);
        } else {
            /* Alone: a new turn, nothing preempted, no debt kept. */
            cur->credit = quantum(s, f, f->cur);
            timer_for(s, f, f->cur, now);
        }
        return;
    }
    if (flow_next(s, f->cur) != NULL) {
        f->hold_until = 0;
        if (cur->credit <= 0 && next_flow(s, f) != CORUN_NO_FLOW) {
            switch_flow(s, f, now);
            return;
        }
        run_next_of(s, f->cur);
        timer_for(s, f, f->cur, now);
        return;
    }
    /* The flow has nothing to run: keep its turn a moment for its
     * program's next launch, then move on. */
    if (f->hold_until == 0) {
        const double g = 1.25 * cur->gap_ns;
        f->hold_until = now + (uint64_t)(g < f->grace_ns       ? f->grace_ns
                                         : g > 5 * f->grace_ns ? 5 * f->grace_ns
                                                               : g);
    }
    if (next_flow(s, f) == CORUN_NO_FLOW) {
        return;
    }
    if (now < f->hold_until && cur->credit > 0) {
        corun__sched_timer(s, f->hold_until);
        return;
    }
    switch_flow(s, f, now);
}

/* A launch of the flow arrives: the gap since its last completion, if it was
 * idle, goes into its decaying maximum. */
static void gap_ends(corun__sched *s, ffs_flow *fl)
{
    if (fl->idle_since != 0) {
        const double gap = (double)(corun__sched_now(s) - fl->idle_since);
        fl->gap_ns = gap > 0.95 * fl->gap_ns ? gap : 0.95 * fl->gap_ns;
        fl->idle_since = 0;
    }
}

static void ffs_arrive(corun__sched *s, void *state, corun__job *k)
{
    ffs *f = state;
    const ffs_kernel *p = corun__policy_attach_flow(s, k, sizeof(ffs_kernel), flow_of(f, k));

    if (p == NULL) {
        return;
    }
    gap_ends(s, &f->flows[p->flow]);
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
    ffs *f = state;

    if (k->pdata != NULL) {
        const size_t flow = fk(k)->flow;
        f->flows[flow].served += corun__sched_capsm_ns(s, k);
        corun__policy_forget_pdata(s, state, k); /* k is no longer live */
        if (!flow_live(s, flow)) {
            f->flows[flow].idle_since = corun__sched_now(s);
        }
    }
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
