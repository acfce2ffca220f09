/*
 * policy_hsm.c — HSM-Fair and HSM-QoS (../shared/papers/hsm.md, §4): the
 * SMs repartitioned between co-running applications by epochs, from each
 * one's predicted normalized progress (NP: its speed sharing the GPU over
 * its speed alone on the whole GPU).
 *
 * Every application starts with an even share of the SMs (§4.2). At each
 * epoch's end (HSM_EPOCH_US) HSM predicts every co-runner's NP (§2.3),
 *
 *     compute-bound:  NP_k = S_k / sigma        (eq. 4: its CapSMs over the GPU's SMs)
 *     memory-bound:   NP_k = B_k / beta_k       (eq. 5: bandwidth now over alone)
 *
 * and its gradient g_k = NP_k / S_k, the linear NP model through the origin
 * (§4.1), which the policies use to size a move:
 *   hsm-fair  when fairness, min NP / max NP, is below HSM_FAIR_THRESHOLD,
 *             moves d = (NP_max - NP_min) / (g_max + g_min) CapSMs from the
 *             application of the highest NP to that of the lowest, so that
 *             both would reach the same NP; above it, nothing moves (a move
 *             costs preemptions);
 *   hsm-qos   the high-priority application (the greatest launch priority)
 *             below HSM_QOS_TARGET takes aim / g_h - S_h CapSMs from the
 *             others, those that lose least NP per CapSM first; above
 *             HSM_QOS_UPPER it keeps aim / g_h CapSMs and gives the rest to
 *             the other application whose NP grows most per CapSM (the most
 *             STP). The aim is the middle of [HSM_QOS_TARGET,
 *             HSM_QOS_UPPER]: the paper sizes to "marginally outperform" the
 *             target, and a model whose reference is a few per cent off (a
 *             kernel's rate alone moves on the GPU) would hold NP at the
 *             target's edge, half the epochs under it. HSM_QOS_FIXED > 0
 *             instead gives it that fixed share and never moves (the paper's
 *             proportional baseline).
 *
 * Where this departs from the paper, and why:
 *  - The classifier. The paper compares a kernel's bandwidth demand with
 *    the supply its row-buffer hit rate (RBH) allows. The H100's counters
 *    give neither per co-running kernel, so a kernel is memory-bound where
 *    its memory intensity alone is Medium or High (Slate's classes, from
 *    the intensity profile `corun profile` measures), else compute-bound.
 *  - beta_k. The paper predicts a kernel's private-mode bandwidth from its
 *    shared-mode RBH by a regression (c1 x RBH + c2). corun's profile store
 *    holds each kernel's rate alone at a launch's size (corun profile, the
 *    isolated rate fgqos uses too: corun__pstore_own_rate, high among its
 *    recent measurements, since that rate moves on the GPU), and a
 *    block-task moves the same DRAM
 *    bytes alone and shared, so B_k / beta_k is the block-tasks the flow ran
 *    per ns in the epoch over its tasks per ns alone: the bytes cancel and
 *    NP comes from the progress corun's workers count. A kernel without a
 *    rate alone is predicted as compute-bound.
 *  - S_k is the flow's share of the partition, not the SMs its blocks sat
 *    on: corun's CapSMs are worker slots, and a flow between two launches
 *    holds its share idle (no lending, unlike fgqos).
 *  - An application is a flow (a program's stream of launches of one kernel
 *    name, as for flep-ffs and fgqos): its launches run one at a time on the
 *    flow's CapSMs and its NP counts all of them. The paper starts a new
 *    epoch with an even split when a kernel completes; here the split is
 *    made even again when a flow joins or leaves (no launch for a whole
 *    epoch), and an epoch a flow did not see whole is not used to move SMs,
 *    nor is the epoch after a move (the paper judges every epoch; on the
 *    H100 a move completes only as the losers' running tasks end, and
 *    judged in that epoch hsm-qos moved SMs back and forth).
 *  - An application's CapSMs are whole SMs, its own (corun__sched_bind),
 *    as the paper's SM partition is: on logical CapSMs a kernel's workers
 *    would spread over every SM and run faster the fewer share one, and eq.
 *    4 would not hold. A repartition moves a running kernel's range at
 *    either end (corun__sched_move: eviction of the SMs it loses, new
 *    workers on those it gains), never stopping it; the paper chooses
 *    between draining and a context switch, corun's eviction drains at task
 *    granularity. Moves are whole SMs and every application keeps at least
 *    one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/duration_model.h"
#include "core/hsm.h"
#include "core/intensity.h"
#include "core/policy.h"
#include "core/profile_store.h"

typedef struct hs_flow {
    char name[CORUN_FLOW_NAME]; /* first (policy.h) */
    int32_t priority;    /* of its latest launch */
    double iso;          /* isolated block-tasks per ns; 0: unknown */
    uint64_t iso_tasks;  /* the launch shape iso was found for */
    uint32_t iso_block;
    bool memory;         /* classified memory-bound */
    bool seen;           /* in the partition */
    bool whole;          /* in it, on its SMs, since the epoch began */
    uint64_t done_base;  /* tasks of its finished launches */
    uint64_t at_epoch;   /* tasks done at the epoch's start */
    uint32_t capsm;      /* its partition */
    double np;           /* predicted in the last epoch; < 0: none */
    uint64_t last_active;/* its last arrival or completion */
} hs_flow;

typedef struct hs_kernel {
    size_t flow;         /* first (policy.h) */
    bool started;
} hs_kernel;

_Static_assert(offsetof(hs_flow, name) == 0 && offsetof(hs_kernel, flow) == 0,
               "flow records as policy.h has them");

typedef struct hs {
    bool qos;            /* hsm-qos, else hsm-fair */
    const corun__settings *set;
    double epoch_ns;
    hs_flow *flows;
    size_t nflows, cap;
    uint64_t epoch_t0, epoch_end;
    bool epochs;
    bool moved;          /* this epoch's decision moved CapSMs */
    corun__dm_set models;
    corun__pstore store;
    char backend[16];
} hs;

static hs_kernel *hk(const corun__job *k)
{
    return (hs_kernel *)k->pdata;
}

static int hs_create_as(corun__sched *s, void **state, bool qos)
{
    const corun__settings *set = corun__sched_settings(s);
    hs *h = calloc(1, sizeof(*h));
    int rc;

    if (h == NULL) {
        return CORUN_ENOMEM;
    }
    h->qos = qos;
    h->set = set;
    h->epoch_ns = set->hsm_epoch_us * 1e3;
    snprintf(h->backend, sizeof(h->backend), "%s", corun__sched_backend(s));
    rc = corun__dm_set_load(set->profile_path, h->backend, set->ridge_lambda, &h->models,
                            &h->store);
    if (rc != CORUN_OK) {
        free(h);
        return rc;
    }
    *state = h;
    return CORUN_OK;
}

static int hs_create_fair(corun__sched *s, void **state)
{
    return hs_create_as(s, state, false);
}

static int hs_create_qos(corun__sched *s, void **state)
{
    return hs_create_as(s, state, true);
}

static void hs_destroy(void *state)
{
    hs *h = state;

    corun__dm_set_free(&h->models);
    corun__pstore_free(&h->store);
    free(h->flows);
    free(h);
}

/* Tasks the flow has run, all launches together (reads the head's counters). */
static uint64_t flow_done(corun__sched *s, const hs *h, size_t i)
{
    corun__job *k = corun__policy_flow_head(s, i);
    corun_progress p;
    uint64_t d = h->flows[i].done_base;

    if (k != NULL && hk(k)->started && !k->plain && corun__sched_progress(s, k, &p) == CORUN_OK) {
        d += p.done;
    }
    return d;
}

/* The high-priority flow of hsm-qos: the one whose priority is greatest and
 * no other's equals; CORUN_NO_FLOW if there is none. */
static size_t high_flow(const hs *h)
{
    size_t i, best = CORUN_NO_FLOW;
    bool tie = false;

    for (i = 0; i < h->nflows; i++) {
        if (!h->flows[i].seen) {
            continue;
        }
        if (best == CORUN_NO_FLOW || h->flows[i].priority > h->flows[best].priority) {
            best = i;
            tie = false;
        } else if (h->flows[i].priority == h->flows[best].priority) {
            tie = true;
        }
    }
    return tie ? CORUN_NO_FLOW : best;
}

/* The even split (§4.2) over the flows in the partition, or hsm-qos's fixed
 * share for the high-priority flow and an even split of the rest. */
static void split(corun__sched *s, hs *h)
{
    const uint32_t sms = corun__sched_gpu(s)->sm_count;
    const size_t top = h->qos && h->set->hsm_qos_fixed > 0 ? high_flow(h) : CORUN_NO_FLOW;
    uint32_t n = 0, pool = sms, each, extra;
    size_t i;

    for (i = 0; i < h->nflows; i++) {
        n += h->flows[i].seen && i != top;
    }
    if (top != CORUN_NO_FLOW) {
        uint32_t mine = (uint32_t)lround(h->set->hsm_qos_fixed * sms);
        mine = mine < 1 ? 1 : mine;
        mine = n > 0 && mine > sms - n ? sms - n : mine;
        h->flows[top].capsm = mine;
        pool = sms - mine;
    }
    if (n == 0) {
        return;
    }
    each = pool / n > 0 ? pool / n : 1;
    extra = pool > each * n ? pool - each * n : 0;
    for (i = 0; i < h->nflows; i++) {
        hs_flow *w = &h->flows[i];
        if (w->seen && i != top) {
            w->capsm = each + (extra > 0);
            extra -= extra > 0;
        }
        w->whole = false;
    }
}

/* The flow's SMs: the partition's flows side by side in index order, each
 * on as many whole SMs as it has CapSMs. */
static void range_of(const hs *h, size_t i, uint32_t *lo, uint32_t *hi)
{
    uint32_t at = 0;
    size_t j;

    for (j = 0; j < i; j++) {
        at += h->flows[j].seen ? h->flows[j].capsm : 0;
    }
    *lo = at;
    *hi = at + (h->flows[i].capsm > 0 ? h->flows[i].capsm : 1) - 1;
}

/* Moves the flow's head onto its SMs. A running one moves there at once
 * (corun__sched_move: its workers leave the SMs it loses, new ones start on
 * those it gains); those that lose SMs move in the first pass, so that the
 * others' new workers find the slots free. A waiting or paused launch is
 * bound to them and run, in the second pass. */
static void apply(corun__sched *s, hs *h, size_t i, int pass)
{
    corun__job *k = corun__policy_flow_head(s, i);
    const uint32_t sms = corun__sched_gpu(s)->sm_count;
    uint32_t want = h->flows[i].capsm, lo, hi, free_c;

    if (k == NULL || k->plain) {
        return;
    }
    range_of(h, i, &lo, &hi);
    if (hi >= sms) {
        return; /* a flow that joined this instant, before the split */
    }
    switch (k->state) {
    case CORUN_JS_WAITING:
    case CORUN_JS_PAUSED:
        free_c = corun__sched_free_capsm(s);
        if (pass == 0 || (want < free_c ? want : free_c) == 0 ||
            corun__sched_bind(s, k, lo, hi) != CORUN_OK) {
            return;
        }
        if (corun__sched_run(s, k, want < free_c ? want : free_c) == CORUN_OK) {
            hk(k)->started = true;
        }
        return;
    case CORUN_JS_RUNNING:
        if ((k->sm_lo != lo || k->sm_top != hi) &&
            (pass == 1 || hi - lo + 1 < corun__job_capsm(k))) {
            (void)corun__sched_move(s, k, lo, hi);
        }
        return;
    default:
        return;
    }
}

/* Moves the flows that lose SMs first, then the rest, then starts what
 * waits. */
static void apply_all(corun__sched *s, hs *h)
{
    int pass;
    size_t i;

    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < h->nflows; i++) {
            apply(s, h, i, pass);
        }
    }
}

/* Moves up to n CapSMs from flow a to flow b, leaving a at least one. */
static void move(hs *h, size_t a, size_t b, uint32_t n)
{
    uint32_t can = h->flows[a].capsm > 1 ? h->flows[a].capsm - 1 : 0;

    n = n < can ? n : can;
    h->flows[a].capsm -= n;
    h->flows[b].capsm += n;
    h->moved |= n > 0;
}

/* The linear NP model's gradient: NP per CapSM. */
static double grad(const hs_flow *w)
{
    return w->capsm > 0 ? w->np / w->capsm : 0;
}

/* HSM-Fair (§4.3): the flows of the highest and lowest NP made even. */
static void fair(hs *h)
{
    size_t i, lo = CORUN_NO_FLOW, hi = CORUN_NO_FLOW;
    double d;

    for (i = 0; i < h->nflows; i++) {
        const hs_flow *w = &h->flows[i];
        if (!w->seen || w->np <= 0) {
            continue;
        }
        if (lo == CORUN_NO_FLOW || w->np < h->flows[lo].np) {
            lo = i;
        }
        if (hi == CORUN_NO_FLOW || w->np > h->flows[hi].np) {
            hi = i;
        }
    }
    if (lo == CORUN_NO_FLOW || lo == hi ||
        h->flows[lo].np / h->flows[hi].np >= h->set->hsm_fair_threshold) {
        return;
    }
    d = (h->flows[hi].np - h->flows[lo].np) / (grad(&h->flows[hi]) + grad(&h->flows[lo]));
    if (d >= 0.5) {
        move(h, hi, lo, (uint32_t)lround(d));
    }
}

/* HSM-QoS (§4.3): the high-priority flow held between its target and the
 * upper threshold, what it does not need to the flow it helps most. */
static void qos(hs *h)
{
    const size_t top = high_flow(h);
    const double target = h->set->hsm_qos_target;
    const double aim = 0.5 * (target + fmax(target, h->set->hsm_qos_upper));
    hs_flow *t;
    size_t i;

    if (top == CORUN_NO_FLOW || h->set->hsm_qos_fixed > 0 || h->flows[top].np <= 0) {
        return;
    }
    t = &h->flows[top];
    if (t->np < target) {
        uint32_t need = (uint32_t)ceil(aim / grad(t));
        while (t->capsm < need) {
            /* from the flow that loses least NP per CapSM */
            size_t v = CORUN_NO_FLOW;
            for (i = 0; i < h->nflows; i++) {
                const hs_flow *w = &h->flows[i];
                if (i != top && w->seen && w->capsm > 1 &&
                    (v == CORUN_NO_FLOW || grad(w) < grad(&h->flows[v]))) {
                    v = i;
                }
            }
            if (v == CORUN_NO_FLOW) {
                return;
            }
            move(h, v, top, need - t->capsm);
        }
    } else if (t->np > h->set->hsm_qos_upper) {
        const uint32_t keep = (uint32_t)ceil(aim / grad(t));
        size_t best = CORUN_NO_FLOW;
        for (i = 0; i < h->nflows; i++) {
            const hs_flow *w = &h->flows[i];
            if (i != top && w->seen && (best == CORUN_NO_FLOW || grad(w) > grad(&h->flows[best]))) {
                best = i;
            }
        }
        if (best != CORUN_NO_FLOW && keep < t->capsm) {
            move(h, top, best, t->capsm - keep);
        }
    }
}

/* Ends the epoch at `now`: every flow's NP predicted, SMs moved, the next
 * epoch begun. */
static void new_epoch(corun__sched *s, hs *h, uint64_t now)
{
    const double t = (double)(now - h->epoch_t0), sms = corun__sched_gpu(s)->sm_count;
    bool any = false, left = false;
    size_t i;

    for (i = 0; i < h->nflows; i++) {
        hs_flow *w = &h->flows[i];
        const uint64_t done = flow_done(s, h, i);
        w->np = -1;
        if (w->seen && w->whole && t > 0) {
            w->np = corun__hsm_np(w->memory, w->capsm / sms, (double)(done - w->at_epoch) / t,
                                  w->iso);
        }
        w->at_epoch = done;
    }
    h->moved = false;
    if (h->qos) {
        qos(h);
    } else {
        fair(h);
    }
    for (i = 0; i < h->nflows; i++) {
        hs_flow *w = &h->flows[i];
        if (!w->seen) {
            continue;
        }
        /* a flow without a launch for a whole epoch leaves the partition */
        if (corun__policy_flow_head(s, i) == NULL &&
            (double)(now - w->last_active) > h->epoch_ns) {
            w->seen = false;
            left = true;
            continue;
        }
        any = true;
        /* the epoch after a move is not one to judge by: the losers' workers
         * leave only after their running tasks, so the gainers' new workers
         * wait for slots, up to a task's length (matmul's 76 us, longtask's
         * 0.7 ms); judged on it, the next move answers the move itself */
        w->whole = !h->moved;
    }
    if (left) {
        split(s, h);
    }
    h->epoch_t0 = now;
    h->epoch_end = now + (uint64_t)h->epoch_ns;
    h->epochs = any;
    if (any) {
        corun__sched_timer(s, h->epoch_end);
    }
    apply_all(s, h);
}

bool corun__hsm_memory_bound(const corun__pprof *prof, const corun__settings *set)
{
    corun__kclass c;

    if (prof == NULL) {
        return false;
    }
    c = corun__kclass_of(prof->flop_frac, prof->bw_frac, set);
    return c == CORUN_KCLASS_MM || c == CORUN_KCLASS_HM;
}

double corun__hsm_np(bool memory, double sm_share, double tasks_per_ns, double iso)
{
    return memory && iso > 0 ? tasks_per_ns / iso : sm_share;
}

static void hs_arrive(corun__sched *s, void *state, corun__job *k)
{
    hs *h = state;
    const uint64_t now = corun__sched_now(s);
    bool fresh;
    size_t i = corun__policy_flow((void **)&h->flows, &h->nflows, &h->cap, sizeof(*h->flows), k,
                                  &fresh);
    hs_flow *w;

    if (corun__policy_attach_flow(s, k, sizeof(hs_kernel), i) == NULL) {
        return;
    }
    w = &h->flows[i];
    w->last_active = now;
    w->priority = k->attr.priority;
    if (fresh || w->iso_tasks != k->tasks || w->iso_block != k->block_threads) {
        w->iso = corun__policy_isolated_rate(&h->store, &h->models, h->backend, k);
        w->iso_tasks = k->tasks;
        w->iso_block = k->block_threads;
        w->memory = corun__hsm_memory_bound(
            corun__pstore_find_prof(&h->store, h->backend, k->name), h->set);
    }
    if (!w->seen) {
        w->seen = true;
        w->at_epoch = w->done_base;
        split(s, h);
    }
    if (!h->epochs) {
        h->epoch_t0 = now;
        h->epoch_end = now + (uint64_t)h->epoch_ns;
        h->epochs = true;
        corun__sched_timer(s, h->epoch_end);
    }
    apply_all(s, h);
}

static void hs_paused(corun__sched *s, void *state, corun__job *k)
{
    (void)k;
    apply_all(s, state);
}

static void hs_complete(corun__sched *s, void *state, corun__job *k)
{
    hs *h = state;

    if (hk(k) != NULL) {
        corun__policy_flow_ended(&h->flows[hk(k)->flow].done_base,
                                 &h->flows[hk(k)->flow].last_active, s, k);
    }
    corun__policy_forget_pdata(s, state, k);
    apply_all(s, h);
}

static void hs_timer(corun__sched *s, void *state, uint64_t now)
{
    hs *h = state;

    if (h->epochs && now >= h->epoch_end) {
        new_epoch(s, h, now);
    } else if (h->epochs) {
        corun__sched_timer(s, h->epoch_end);
    }
}

const corun__policy_ops corun__policy_hsm_fair = {
    .name = "hsm-fair",
    .help = "HSM-Fair: SMs repartitioned by epochs so that the co-runners' normalized progress "
            "stays even (HSM_FAIR_THRESHOLD)",
    .needs = CORUN_POLICY_NEEDS_DURATIONS | CORUN_POLICY_NEEDS_PROFILES |
             CORUN_POLICY_NEEDS_RATES,
    .create = hs_create_fair,
    .destroy = hs_destroy,
    .arrive = hs_arrive,
    .paused = hs_paused,
    .complete = hs_complete,
    .timer = hs_timer,
    .forget = corun__policy_forget_pdata,
};

const corun__policy_ops corun__policy_hsm_qos = {
    .name = "hsm-qos",
    .help = "HSM-QoS: the highest-priority application held at HSM_QOS_TARGET normalized "
            "progress, the other SMs to the others for throughput",
    .needs = CORUN_POLICY_NEEDS_DURATIONS | CORUN_POLICY_NEEDS_PROFILES |
             CORUN_POLICY_NEEDS_RATES,
    .create = hs_create_qos,
    .destroy = hs_destroy,
    .arrive = hs_arrive,
    .paused = hs_paused,
    .complete = hs_complete,
    .timer = hs_timer,
    .forget = corun__policy_forget_pdata,
};
