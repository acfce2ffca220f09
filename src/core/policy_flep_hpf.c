/*
 * policy_flep_hpf.c — FLEP's HPF policy: highest priority first, shortest
 * remaining time among equals, with preemption (FLEP §5, Fig. 6).
 *
 * Each kernel keeps FLEP's triplet (§5.1): T_e, its duration as predicted
 * by the kernel's duration model (duration_model.h, trained on the profile
 * store's solo runs); T_w, the time it has waited; T_r, its predicted
 * remaining time (T_e at first, decreasing while it runs). T_w and T_r are
 * brought up to date when a kernel arrives, is preempted or finishes.
 *
 * Decisions, on every arrival and completion (Fig. 6): let K_s be the
 * waiting kernel of the highest priority present, shortest T_r first.
 *  - If no running kernel has a higher priority, K_s may take CapSMs from
 *    running kernels of lower priority, and from running kernels of its own
 *    priority whose T_r exceeds T_r(K_s) + O, O being the measured
 *    preemption overhead of the victim (preempt_cost.h) — FLEP's
 *    Schedule_for_queue.
 *  - It takes only what it needs: a kernel whose grid cannot fill the GPU
 *    needs ceil(tasks / workers per SM) CapSMs, and when that is less than
 *    the GPU it evicts just so many CapSMs from its victims (spatial
 *    preemption, FLEP's spa_P); otherwise its victims are stopped and yield
 *    the whole GPU (temporal preemption, FLEP's temp_P).
 *  - Free CapSMs go to running kernels below what they need, then to
 *    waiting kernels, in the same order; with HPF_SPATIAL = 0 (temporal
 *    only, FLEP's baseline in §6.4) a waiting kernel starts only when
 *    nothing runs.
 *
 * Where this departs from the paper, and why:
 *  - A preempted kernel is not relaunched with the range of tasks it has
 *    left: its workers leave after their chunk and new workers continue from
 *    the shared task counter, so no task runs twice and none is skipped.
 *  - Spatial preemption evicts CapSMs (capacity: worker slots anywhere on
 *    the GPU) rather than the SMs with the lowest ids; the preempting kernel
 *    gets exactly as many worker slots as FLEP's SM range would give it,
 *    without depending on where the hardware places blocks. A victim that
 *    would lose everything is stopped instead.
 *  - T_r of a preempted kernel is recomputed from its task counter when its
 *    workers have left (T_e x tasks left / tasks), which costs nothing (the
 *    scheduler reads the counter then anyway) and corrects a wrong T_e; in
 *    between it decreases with time as FLEP's does, in proportion to the
 *    CapSMs the kernel holds against what it needs.
 *  - A kernel with no duration model (too few recorded runs) has an unknown
 *    T_e, taken as infinite: among equals it never preempts and is preempted
 *    by any kernel with a model; unknown kernels run in arrival order.
 *  - FLEP runs one kernel at a time unless spatially preempted; corun also
 *    lets waiting kernels use CapSMs that no running kernel needs (a small
 *    kernel leaves most of the GPU free), in priority order, as the
 *    hardware's leftover policy would.
 */
#include <math.h>
#include <stdlib.h>

#include "core/duration_model.h"
#include "core/policy.h"
#include "core/preempt_cost.h"
#include "core/profile_store.h"

typedef struct hpf_kernel {
    double te, tw, tr;   /* ns; te (and so tr) may be INFINITY: no model */
    uint64_t t_upd;      /* when tw and tr were last brought up to date */
    uint64_t t_stop;     /* when it was told to stop, 0 if it was not */
    uint32_t need;       /* CapSMs it can use */
} hpf_kernel;

typedef struct hpf {
    corun__dm_set models;
    corun__pcost_table cost;
    bool spatial;
} hpf;

static hpf_kernel *hk(const corun__job *k)
{
    return (hpf_kernel *)k->pdata;
}

static bool waiting(const corun__job *k)
{
    return k->pdata != NULL && (k->state == CORUN_JS_WAITING || k->state == CORUN_JS_PAUSED);
}

static bool running(const corun__job *k)
{
    return k->pdata != NULL && k->state == CORUN_JS_RUNNING && !k->plain;
}

static int hpf_create(corun__sched *s, void **state)
{
    const corun__settings *set = corun__sched_settings(s);
    hpf *h = calloc(1, sizeof(*h));
    int rc;

    if (h == NULL) {
        return CORUN_ENOMEM;
    }
    h->spatial = set->hpf_spatial != 0;
    corun__pcost_init(&h->cost, set->preempt_overhead_us * 1e3);
    rc = corun__dm_set_load(set->profile_path, corun__sched_backend(s), set->ridge_lambda,
                            &h->models, NULL);
    if (rc != CORUN_OK) {
        corun__pcost_free(&h->cost);
        free(h);
        return rc;
    }
    *state = h;
    return CORUN_OK;
}

static void hpf_destroy(void *state)
{
    hpf *h = state;

    corun__dm_set_free(&h->models);
    corun__pcost_free(&h->cost);
    free(h);
}

/* FLEP §5.1: T_w grows while a kernel waits, T_r shrinks while it runs. */
static void update_times(corun__sched *s)
{
    uint64_t now = corun__sched_now(s);
    corun__job *k;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        hpf_kernel *p = hk(k);
        double dt;
        if (p == NULL) {
            continue;
        }
        dt = (double)(now - p->t_upd);
        p->t_upd = now;
        if (k->state == CORUN_JS_RUNNING && p->need > 0) {
            double frac = (double)corun__job_capsm(k) / p->need;
            p->tr = fmax(0.0, p->tr - dt * fmin(1.0, frac));
        } else {
            p->tw += dt;
        }
    }
}

/* Orders kernels for service: priority, then shortest T_r, then arrival. */
static bool before(const corun__job *a, const corun__job *b)
{
    if (a->attr.priority != b->attr.priority) {
        return a->attr.priority > b->attr.priority;
    }
    if (hk(a)->tr != hk(b)->tr) {
        return hk(a)->tr < hk(b)->tr;
    }
    return a->id < b->id;
}

/* The first kernel in service order among those `ok` accepts, or NULL. */
static corun__job *best(corun__sched *s, bool (*ok)(const corun__job *))
{
    corun__job *k, *b = NULL;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (ok(k) && (b == NULL || before(k, b))) {
            b = k;
        }
    }
    return b;
}

/* May `ks` take CapSMs from the running kernel v? Lower priority always;
 * equal priority when v would take longer than ks plus the cost of
 * preempting v (FLEP's Schedule_for_queue). */
static bool may_preempt(const hpf *h, const corun__job *ks, const corun__job *v)
{
    if (v->attr.priority != ks->attr.priority) {
        return v->attr.priority < ks->attr.priority;
    }
    return hk(v)->tr > hk(ks)->tr + corun__pcost_get(&h->cost, v->name);
}

static void stop(corun__sched *s, corun__job *v)
{
    if (corun__sched_stop(s, v) == CORUN_OK) {
        hk(v)->t_stop = corun__sched_now(s);
    }
}

/* Frees CapSMs for ks from the kernels it may preempt, lowest priority and
 * longest remaining time first, then starts it. */
static void preempt_for(corun__sched *s, hpf *h, corun__job *ks)
{
    const uint32_t sms = corun__sched_gpu(s)->sm_count;
    uint32_t need = hk(ks)->need, free_now = corun__sched_free_capsm(s), n;
    bool spatial = h->spatial && need < sms;

    while (need > free_now) {
        corun__job *k, *v = NULL;
        for (k = corun__sched_first(s); k != NULL; k = k->next) {
            if (!running(k) || k == ks || corun__job_capsm(k) == 0 || !may_preempt(h, ks, k)) {
                continue;
            }
            /* the last in service order is the first victim */
            if (v == NULL || before(v, k)) {
                v = k;
            }
        }
        if (v == NULL) {
            break;
        }
        if (spatial && corun__job_capsm(v) > need - free_now) {
            if (corun__sched_shrink(s, v, need - free_now) != CORUN_OK) {
                break;
            }
        } else {
            stop(s, v);
            if (v->state != CORUN_JS_STOPPING) {
                break;
            }
        }
        free_now = corun__sched_free_capsm(s);
    }
    if (!h->spatial && best(s, running) != NULL) {
        return; /* temporal only: it waits for the GPU to itself */
    }
    n = need < free_now ? need : free_now;
    if (n > 0) {
        (void)corun__sched_run(s, ks, n);
    }
}

/* Gives free CapSMs to running kernels below their need, then to waiting
 * kernels, in service order. */
static void fill(corun__sched *s, hpf *h)
{
    corun__job *k;

    for (;;) {
        corun__job *b = NULL;
        uint32_t free_now = corun__sched_free_capsm(s);
        if (free_now == 0) {
            return;
        }
        for (k = corun__sched_first(s); k != NULL; k = k->next) {
            if (running(k) && corun__job_capsm(k) < hk(k)->need && (b == NULL || before(k, b))) {
                b = k;
            }
        }
        if (b == NULL) {
            break;
        }
        if (corun__sched_grow(s, b, hk(b)->need - corun__job_capsm(b) < free_now
                                        ? hk(b)->need - corun__job_capsm(b)
                                        : free_now) != CORUN_OK) {
            break;
        }
    }
    if (!h->spatial) {
        for (k = corun__sched_first(s); k != NULL; k = k->next) {
            if (k->pdata != NULL && corun__job_active(k)) {
                return; /* temporal only: one kernel at a time */
            }
        }
    }
    for (;;) {
        uint32_t free_now = corun__sched_free_capsm(s);
        corun__job *b = best(s, waiting);
        if (free_now == 0 || b == NULL) {
            return;
        }
        if (corun__sched_run(s, b, hk(b)->need < free_now ? hk(b)->need : free_now) != CORUN_OK &&
            b->state != CORUN_JS_FAILED) {
            return;
        }
        if (!h->spatial) {
            return;
        }
    }
}

/* Fig. 6, both cases: an arrival or a completion. */
static void decide(corun__sched *s, hpf *h)
{
    corun__job *ks, *top;

    update_times(s);
    ks = best(s, waiting);
    top = best(s, running);
    if (ks != NULL && (top == NULL || ks->attr.priority >= top->attr.priority)) {
        preempt_for(s, h, ks);
    }
    fill(s, h);
}

static void hpf_arrive(corun__sched *s, void *state, corun__job *k)
{
    hpf *h = state;
    const uint32_t sms = corun__sched_gpu(s)->sm_count;
    hpf_kernel *p = calloc(1, sizeof(*p));
    const corun__dmodel *m;

    if (p == NULL) {
        corun__policy_run_on_free(s, k);
        return;
    }
    p->need = sms;
    if (k->per_sm > 0 && k->tasks < (uint64_t)sms * k->per_sm) {
        p->need = (uint32_t)((k->tasks + k->per_sm - 1) / k->per_sm);
    }
    m = corun__dm_set_find(&h->models, k->name);
    if (m != NULL) {
        double x[CORUN_DM_NFEAT] = {(double)k->tasks, (double)k->block_threads,
                                    k->attr.size_hint, (double)k->smem_bytes};
        p->te = corun__dm_predict(m, x);
    } else {
        p->te = INFINITY;
    }
    p->tr = p->te;
    p->t_upd = corun__sched_now(s);
    k->pdata = p;
    decide(s, h);
}

static void hpf_paused(corun__sched *s, void *state, corun__job *k)
{
    hpf *h = state;
    hpf_kernel *p = hk(k);

    if (p != NULL) {
        if (p->t_stop != 0) {
            corun__pcost_add(&h->cost, k->name, (double)(corun__sched_now(s) - p->t_stop));
            p->t_stop = 0;
        }
        if (k->tasks > 0 && isfinite(p->te)) {
            p->tr = p->te * (double)(k->tasks - k->done_tasks) / (double)k->tasks;
        }
    }
    decide(s, h);
}

static void hpf_complete(corun__sched *s, void *state, corun__job *k)
{
    corun__policy_forget_pdata(s, state, k);
    decide(s, state);
}

const corun__policy_ops corun__policy_flep_hpf = {
    .name = "flep-hpf",
    .help = "FLEP HPF: highest priority first, shortest remaining time among equals, "
            "temporal or spatial preemption",
    .needs = CORUN_POLICY_NEEDS_DURATIONS,
    .create = hpf_create,
    .destroy = hpf_destroy,
    .arrive = hpf_arrive,
    .paused = hpf_paused,
    .complete = hpf_complete,
    .forget = corun__policy_forget_pdata,
};
