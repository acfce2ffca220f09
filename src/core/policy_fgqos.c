/*
 * policy_fgqos.c — fine-grained QoS by per-epoch progress quotas
 * (../shared/papers/qos-fine-grained.md, §3.4–3.6), on corun's task limit.
 *
 * A QoS kernel has a goal, a fraction of its isolated rate (launch attribute
 * `qos`, scenario key "qos"); the isolated rate is block-tasks per second
 * alone on the whole GPU, from the profile store's runs at the launch's own
 * size (the median of three windows of the kernel alone in a loop of
 * launches: what a program that launches it back to back gets), else the
 * kernel's duration model. Time is cut
 * into epochs of FGQOS_EPOCH_US. Each epoch a kernel k gets a quota of
 * block-tasks,
 *
 *     QoS:      quota_k = alpha_k x goal_k x rate_isolated_k x T_epoch      (1)
 *     non-QoS:  quota_j = goal_j x T_epoch, with the artificial goal (§3.5)
 *               goal_j = rate_epoch_j x prod_k rate_epoch_k / (alpha_k goal_k rate_isolated_k)
 *
 * and corun enforces it through the control block's task limit: a kernel's
 * workers claim no task at or beyond it, so a kernel that used its quota
 * pauses until it gets more. FGQOS_SCHEME picks how quotas follow the epochs
 * (§3.4):
 *   naive     alpha = 1; unused quota is dropped at the epoch's end;
 *   history   alpha_k = max(goal_k / rate_history_k, 1) (§3.4.2), unused dropped;
 *   elastic   history, and once every kernel has used its quota the next
 *             epoch starts at once (§3.4.3);
 *   rollover  history, and a QoS kernel keeps its unused quota (§3.4.4);
 *   spart     no quotas: the baseline the paper compares with, a spatial
 *             partition whose QoS share hill-climbs by whole SMs each epoch.
 * In naive, history and rollover, once each QoS kernel has used its quota the
 * non-QoS kernels get their quota again, so the GPU stays busy to the
 * epoch's end (§3.4.1); elastic starts the next epoch instead.
 *
 * Static allocation (§3.6). Each QoS kernel runs on sm_count / (QoS kernels
 * + 1 if any non-QoS) CapSMs and the non-QoS kernels split the rest evenly.
 * At an epoch's start a QoS kernel behind its goal that did not use up its
 * quota (it lacked the capacity, corun's stand-in for "no idle TB") grows by
 * step_capsm() CapSMs, taken from a non-QoS kernel, or from a QoS kernel whose
 * history x (1 - n / N) still meets its goal.
 *
 * Where this departs from the paper, and why:
 *  - Progress is counted in block-tasks, not instructions: corun's workers
 *    count tasks, and a task is the unit they can be stopped at. A quota is
 *    therefore met to the task, never overrun (the paper's counters go
 *    negative by up to a warp instruction).
 *  - The quota is enforced between a worker's claims, by the task limit,
 *    which may change only while no worker of the kernel runs
 *    (docs/decisions/0008): a raised limit takes effect when the kernel
 *    pauses at its old one (its workers leave and are launched again), and a
 *    limit that must drop (a scheme that drops unused quota, on a kernel
 *    still running) halts the kernel first. `corun experiment fgqos` measures
 *    what that costs a kernel alone (its "alone_nonqos" member). A paused
 *    kernel keeps no workers, where the paper's throttled one keeps its
 *    thread blocks while the SM issues the others' warps: so a spent
 *    kernel's CapSMs are lent to the running ones until the epoch ends or it
 *    runs again.
 *  - Quotas aim FGQOS_MARGIN above a QoS goal: corun's are met to the task,
 *    where the paper's successful cases overshoot by 1.3-2.8 %, and on a
 *    real GPU a loop's rate moves by a few per cent from run to run.
 *  - A non-QoS kernel refilled once the QoS kernels are spent gets at least
 *    the rest of the epoch at its isolated rate (the paper: "some quantity,
 *    e.g. quota_k"), so that it is not drained and relaunched quota after
 *    quota.
 *  - The quota is one per kernel for the whole GPU, not one per SM split by
 *    its thread blocks: corun's claims come from one counter.
 *  - Static adjustment moves step_capsm() (sm_count / 16) CapSMs at a
 *    time by resize (evict / grow), without counting idle warps, which no
 *    counter gives per kernel on a real GPU.
 *  - alpha is capped at FQ_ALPHA_MAX: in the first epoch, with next to no
 *    history, it is otherwise unbounded.
 *  - An epoch ends when the host's timer fires, some tens of microseconds
 *    late on a real GPU; the next quotas are for the last epoch's real
 *    length (up to twice the setting), so a kernel kept to its quotas is not
 *    kept a few percent under its goal.
 *  - spart (the paper's [3]) splits capacity in CapSMs, as slate does, not
 *    by SM ids.
 *  - A kernel of a program is a stream of launches of one kernel name (a
 *    flow), as for flep-ffs: the quota and the history belong to the flow,
 *    and its launches run one at a time, in arrival order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/duration_model.h"
#include "core/policy.h"
#include "core/profile_store.h"

#define FQ_ALPHA_MAX 4.0

typedef enum fq_scheme { FQ_NAIVE, FQ_HISTORY, FQ_ELASTIC, FQ_ROLLOVER, FQ_SPART } fq_scheme;

typedef struct fq_flow {
    char name[CORUN_FLOW_NAME]; /* first (policy.h) */
    double goal;         /* fraction of the isolated rate; 0: non-QoS */
    double iso;          /* isolated block-tasks per ns; 0: unknown */
    uint64_t iso_tasks;  /* the launch shape iso was found for (a flow's */
    uint32_t iso_block;  /* launches mostly repeat it: the store is not read again) */
    uint64_t done_base;  /* tasks of its finished launches */
    uint64_t granted;    /* tasks it may have run, all epochs together */
    uint64_t at_epoch;   /* tasks done at the epoch's start */
    uint64_t quota;      /* this epoch's quota */
    uint64_t t0;         /* its first arrival */
    double alpha;
    double rate_epoch;   /* tasks per ns in the last epoch */
    uint32_t capsm;      /* its static allocation */
    uint32_t lent;       /* CapSMs lent to it by spent flows, until the epoch ends or
                            their owner runs again */
    bool exhausted;      /* paused at its limit, and not given more since */
    bool spent_epoch;    /* was exhausted at some point of this epoch */
    bool seen_epoch;     /* in the split: had a launch within an epoch */
    uint64_t last_active;/* its last arrival or completion */
} fq_flow;

typedef struct fq_kernel {
    size_t flow;         /* first (policy.h) */
    uint64_t base;       /* the flow's task count at this launch's task 0 */
    bool started;
    uint64_t lim_dev;    /* limit in force on the device */
} fq_kernel;

_Static_assert(offsetof(fq_flow, name) == 0 && offsetof(fq_kernel, flow) == 0,
               "flow records as policy.h has them");

typedef struct fq {
    fq_scheme scheme;
    double epoch_ns, init, margin;
    fq_flow *flows;
    size_t nflows, cap;
    uint64_t epoch_t0, epoch_end;
    bool epochs;
    corun__dm_set models;
    corun__pstore store;
    char backend[16];
} fq;

static fq_kernel *qk(const corun__job *k)
{
    return (fq_kernel *)k->pdata;
}

static int scheme_of(const char *name, fq_scheme *out)
{
    static const char *const names[] = {"naive", "history", "elastic", "rollover", "spart"};
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (fq_scheme)i;
            return CORUN_OK;
        }
    }
    return CORUN_EINVAL;
}

static int fq_create(corun__sched *s, void **state)
{
    const corun__settings *set = corun__sched_settings(s);
    fq *f = calloc(1, sizeof(*f));
    int rc;

    if (f == NULL) {
        return CORUN_ENOMEM;
    }
    if (scheme_of(set->fgqos_scheme, &f->scheme) != CORUN_OK) {
        free(f);
        return CORUN_EINVAL;
    }
    f->epoch_ns = set->fgqos_epoch_us * 1e3;
    f->init = set->fgqos_nonqos_init;
    f->margin = set->fgqos_margin;
    snprintf(f->backend, sizeof(f->backend), "%s", corun__sched_backend(s));
    /* the store kept for the solo runs at a launch's own size */
    rc = corun__dm_set_load(set->profile_path, f->backend, set->ridge_lambda, &f->models,
                            &f->store);
    if (rc != CORUN_OK) {
        free(f);
        return rc;
    }
    *state = f;
    return CORUN_OK;
}

static void fq_destroy(void *state)
{
    fq *f = state;

    corun__dm_set_free(&f->models);
    corun__pstore_free(&f->store);
    free(f->flows);
    free(f);
}

static uint32_t step_capsm(corun__sched *s)
{
    uint32_t n = corun__sched_gpu(s)->sm_count / 16;
    return n > 0 ? n : 1;
}

/* Tasks the flow has run, all launches together (reads the head's counters). */
static uint64_t flow_done(corun__sched *s, fq *f, size_t i)
{
    corun__job *k = corun__policy_flow_head(s, i);
    corun_progress p;
    uint64_t d = f->flows[i].done_base;

    if (k != NULL && qk(k)->started && !k->plain && corun__sched_progress(s, k, &p) == CORUN_OK) {
        d += p.done;
    }
    return d;
}

static bool is_qos(const fq_flow *w)
{
    return w->goal > 0 && w->iso > 0;
}

/* The static split (§3.6) over the flows seen this epoch, afresh: it is
 * made again whenever a flow joins or leaves, and adjust() moves it. */
static void split(corun__sched *s, fq *f)
{
    const uint32_t sms = corun__sched_gpu(s)->sm_count;
    uint32_t q = 0, nq = 0, each, rest;
    size_t i;

    for (i = 0; i < f->nflows; i++) {
        if (f->flows[i].seen_epoch) {
            if (is_qos(&f->flows[i])) {
                q++;
            } else {
                nq++;
            }
        }
    }
    if (q + nq == 0) {
        return;
    }
    each = sms / (q + (nq > 0));
    if (each == 0) {
        each = 1;
    }
    rest = sms - (q * each < sms ? q * each : sms);
    for (i = 0; i < f->nflows; i++) {
        fq_flow *w = &f->flows[i];
        if (!w->seen_epoch) {
            continue;
        }
        if (is_qos(w)) {
            w->capsm = each;
        } else {
            w->capsm = nq > 0 && rest / nq > 0 ? rest / nq : 1;
        }
    }
}

/* The limit the flow's allowance gives launch k, in k's own tasks. */
static uint64_t limit_of(const fq *f, const fq_flow *w, const corun__job *k)
{
    if (f->scheme == FQ_SPART || w->iso <= 0 || k->direct || k->plain) {
        return k->tasks; /* a stream-ordered launch's claims are never rewound */
    }
    if (w->granted <= qk(k)->base) {
        return 0;
    }
    return w->granted - qk(k)->base < k->tasks ? w->granted - qk(k)->base : k->tasks;
}

static void apply(corun__sched *s, fq *f, size_t i);

/* Takes lent CapSMs back from the flows other than `self` until `need`
 * are free. */
static void reclaim(corun__sched *s, fq *f, size_t self, uint32_t need)
{
    size_t i;

    for (i = 0; i < f->nflows && corun__sched_free_capsm(s) < need; i++) {
        fq_flow *w = &f->flows[i];
        uint32_t short_by = need - corun__sched_free_capsm(s);
        if (i != self && w->lent > 0) {
            w->lent -= short_by < w->lent ? short_by : w->lent;
            apply(s, f, i);
        }
    }
}

/* Moves the flow's head towards its allowance and its CapSMs. */
static void apply(corun__sched *s, fq *f, size_t i)
{
    fq_flow *w = &f->flows[i];
    corun__job *k = corun__policy_flow_head(s, i);
    uint64_t lim;
    uint32_t free_c, n, want;

    if (k == NULL) {
        return;
    }
    if (!qk(k)->started) {
        qk(k)->base = w->done_base;
    }
    lim = limit_of(f, w, k);
    want = w->capsm + w->lent;
    switch (k->state) {
    case CORUN_JS_WAITING:
    case CORUN_JS_PAUSED:
        if (k->state == CORUN_JS_PAUSED) {
            corun_progress p;
            if (corun__sched_progress(s, k, &p) != CORUN_OK) {
                return;
            }
        }
        if (lim <= k->done_tasks || lim == 0) {
            w->exhausted = true;
            w->spent_epoch = true;
            return;
        }
        free_c = corun__sched_free_capsm(s);
        if (free_c < w->capsm) {
            reclaim(s, f, i, w->capsm); /* its own share back first */
            free_c = corun__sched_free_capsm(s);
        }
        n = want < free_c ? want : free_c;
        if (n == 0) {
            return;
        }
        if (!k->direct && corun__sched_limit(s, k, lim) != CORUN_OK) {
            return;
        }
        if (corun__sched_run(s, k, n) == CORUN_OK) {
            qk(k)->started = true;
            qk(k)->lim_dev = lim;
        }
        return;
    case CORUN_JS_RUNNING:
        if (k->plain) {
            return;
        }
        if (k->direct) {
            /* no limit: only its CapSMs follow the split */
        } else if (lim < qk(k)->lim_dev) {
            /* only a stopped kernel's limit may drop (docs/decisions/0008) */
            if (corun__sched_limit(s, k, lim) == CORUN_OK) {
                (void)corun__sched_stop(s, k);
            }
        } else if (lim > qk(k)->lim_dev) {
            (void)corun__sched_limit(s, k, lim); /* taken when it pauses at the old one */
        }
        corun__policy_resize(s, k, want);
        return;
    default:
        return;
    }
}

/* Shrinks first, so that the CapSMs they give up are free for the growers. */
static void apply_all(corun__sched *s, fq *f)
{
    size_t i;
    int pass;

    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < f->nflows; i++) {
            corun__job *k = corun__policy_flow_head(s, i);
            bool shrinking = k != NULL && k->state == CORUN_JS_RUNNING &&
                             corun__job_capsm(k) > f->flows[i].capsm + f->flows[i].lent;
            if ((pass == 0) == shrinking) {
                apply(s, f, i);
            }
        }
    }
}

/* The rate a QoS flow's quotas aim at, tasks per ns: its goal and
 * FGQOS_MARGIN. */
static double qos_rate(const fq *f, const fq_flow *w)
{
    return w->goal * w->iso * (1 + f->margin);
}

/* The artificial goal of a non-QoS flow (§3.5), tasks per ns. */
static double nonqos_goal(const fq *f, const fq_flow *w)
{
    double base = w->rate_epoch, floor = f->init * (w->iso > 0 ? w->iso : 0), prod = 1;
    size_t i;

    if (base < floor) {
        base = floor;
    }
    for (i = 0; i < f->nflows; i++) {
        const fq_flow *q = &f->flows[i];
        if (q->seen_epoch && is_qos(q)) {
            prod *= q->rate_epoch / (q->alpha * qos_rate(f, q));
        }
    }
    return fmax(base * prod, floor);
}

/* Tasks of a quota at rate r per ns over t ns, at least one. */
static uint64_t tasks_of(double r, double t)
{
    double n = r * t;
    return n < 1 ? 1 : (uint64_t)ceil(n);
}

/* §3.6's run-time adjustment for one QoS flow behind its goal. */
static void adjust(corun__sched *s, fq *f, size_t i, double hist)
{
    fq_flow *w = &f->flows[i];
    const uint32_t step = step_capsm(s), sms = corun__sched_gpu(s)->sm_count;
    size_t j, victim = CORUN_NO_FLOW;

    if (f->scheme == FQ_SPART) {
        /* hill climbing on the epoch's rate against the goal */
        if (w->rate_epoch < qos_rate(f, w) && w->capsm + step <= sms) {
            for (j = 0; j < f->nflows; j++) {
                if (j != i && f->flows[j].seen_epoch && !is_qos(&f->flows[j]) &&
                    f->flows[j].capsm > step) {
                    f->flows[j].capsm -= step;
                    w->capsm += step;
                    return;
                }
            }
        } else if (w->rate_epoch > 1.05 * qos_rate(f, w) && w->capsm > step) {
            for (j = 0; j < f->nflows; j++) {
                if (j != i && f->flows[j].seen_epoch && !is_qos(&f->flows[j])) {
                    f->flows[j].capsm += step;
                    w->capsm -= step;
                    return;
                }
            }
        }
        return;
    }
    /* short of its goal over its history and in this epoch, without ever
     * having used up its quota: it lacked the capacity */
    if (hist >= qos_rate(f, w) || w->rate_epoch >= qos_rate(f, w) || w->spent_epoch) {
        return;
    }
    for (j = 0; j < f->nflows && victim == CORUN_NO_FLOW; j++) {
        const fq_flow *v = &f->flows[j];
        if (j != i && v->seen_epoch && !is_qos(v) && v->capsm > step) {
            victim = j;
        }
    }
    for (j = 0; j < f->nflows && victim == CORUN_NO_FLOW; j++) {
        const fq_flow *v = &f->flows[j];
        uint64_t done = v->at_epoch;
        double vh = done > 0 && v->t0 < f->epoch_t0 ? (double)done / (double)(f->epoch_t0 - v->t0)
                                                    : 0;
        if (j != i && v->seen_epoch && is_qos(v) && v->capsm > step &&
            vh * (1 - (double)step / v->capsm) > qos_rate(f, v)) {
            victim = j;
        }
    }
    if (victim != CORUN_NO_FLOW) {
        f->flows[victim].capsm -= step;
        w->capsm += step;
    }
}

/* Ends the epoch at `now` and starts the next one. */
static void new_epoch(corun__sched *s, fq *f, uint64_t now)
{
    const double t_prev = (double)(now - f->epoch_t0);
    /* the next quotas cover the epoch's length and what the last one ran
     * over it (the host's timer ends epochs late) */
    const double t_quota =
        t_prev > f->epoch_ns && t_prev < 2 * f->epoch_ns ? t_prev : f->epoch_ns;
    size_t i;
    bool any = false, left = false;

    for (i = 0; i < f->nflows; i++) {
        fq_flow *w = &f->flows[i];
        uint64_t done = flow_done(s, f, i);
        w->rate_epoch = t_prev > 0 ? (double)(done - w->at_epoch) / t_prev : 0;
        w->at_epoch = done;
    }
    for (i = 0; i < f->nflows; i++) {
        fq_flow *w = &f->flows[i];
        double hist = now > w->t0 ? (double)w->at_epoch / (double)(now - w->t0) : 0;
        if (!w->seen_epoch) {
            continue;
        }
        if (is_qos(w)) {
            w->alpha = 1;
            if (f->scheme != FQ_NAIVE && hist > 0) {
                w->alpha = fmin(fmax(qos_rate(f, w) / hist, 1), FQ_ALPHA_MAX);
            }
            adjust(s, f, i, hist);
        }
    }
    for (i = 0; i < f->nflows; i++) {
        fq_flow *w = &f->flows[i];
        if (!w->seen_epoch) {
            continue;
        }
        any = true;
        if (is_qos(w)) {
            w->quota = tasks_of(w->alpha * qos_rate(f, w), t_quota);
        } else {
            w->quota = tasks_of(nonqos_goal(f, w), t_quota);
        }
        if (f->scheme == FQ_ROLLOVER && is_qos(w)) {
            w->granted += w->quota;
        } else {
            w->granted = w->at_epoch + w->quota;
        }
        w->exhausted = false;
        w->spent_epoch = false;
        w->lent = 0;
        /* a flow without a launch for a whole epoch leaves the split */
        if (corun__policy_flow_head(s, i) == NULL && (double)(now - w->last_active) > f->epoch_ns) {
            w->seen_epoch = false;
            left = true;
        }
    }
    if (left) {
        split(s, f);
    }
    f->epoch_t0 = now;
    f->epoch_end = now + (uint64_t)f->epoch_ns;
    f->epochs = any;
    if (any) {
        corun__sched_timer(s, f->epoch_end);
    }
    apply_all(s, f);
}

/* Every QoS flow has used its quota (or has nothing to run). */
static bool qos_spent(corun__sched *s, const fq *f)
{
    size_t i;

    for (i = 0; i < f->nflows; i++) {
        /* between a flow's launches it has no head, and is not spent */
        if (is_qos(&f->flows[i]) && f->flows[i].seen_epoch && !f->flows[i].exhausted) {
            return false;
        }
    }
    return true;
}

static bool all_spent(corun__sched *s, const fq *f)
{
    size_t i;

    for (i = 0; i < f->nflows; i++) {
        if (f->flows[i].seen_epoch && !f->flows[i].exhausted) {
            return false;
        }
    }
    return true;
}

/* The CapSMs of spent flows go to the running ones, QoS flows first, until
 * the epoch ends or their owners run again: the paper's quotas throttle a
 * kernel's warps while its thread blocks stay, so an SM issues the others'
 * warps meanwhile; corun's paused kernel has no workers left to keep. */
static void lend(corun__sched *s, fq *f)
{
    int pass;

    for (pass = 0; pass < 2; pass++) {
        uint32_t free_c = corun__sched_free_capsm(s), m = 0;
        size_t i;
        for (i = 0; i < f->nflows; i++) {
            corun__job *k = corun__policy_flow_head(s, i);
            m += k != NULL && k->state == CORUN_JS_RUNNING && !f->flows[i].exhausted &&
                 is_qos(&f->flows[i]) == (pass == 0);
        }
        for (i = 0; i < f->nflows && m > 0 && free_c > 0; i++) {
            fq_flow *w = &f->flows[i];
            corun__job *k = corun__policy_flow_head(s, i);
            if (k != NULL && k->state == CORUN_JS_RUNNING && !w->exhausted &&
                is_qos(w) == (pass == 0)) {
                w->lent += free_c / m > 0 ? free_c / m : free_c;
                apply(s, f, i);
                free_c = corun__sched_free_capsm(s);
                m--;
            }
        }
    }
}

/* After a pause or a completion: refill the non-QoS flows once the QoS ones
 * are spent (§3.4.1), or, elastic, start the next epoch once all are. */
static void settle(corun__sched *s, fq *f)
{
    size_t i;

    apply_all(s, f);
    if (f->scheme == FQ_SPART) {
        return;
    }
    if (f->scheme == FQ_ELASTIC && all_spent(s, f)) {
        new_epoch(s, f, corun__sched_now(s));
        return;
    }
    if (qos_spent(s, f)) {
        for (i = 0; i < f->nflows; i++) {
            fq_flow *w = &f->flows[i];
            /* elastic ends the epoch instead (above) */
            if (f->scheme != FQ_ELASTIC && !is_qos(w) && w->exhausted && corun__policy_flow_head(s, i) != NULL) {
                /* the paper adds "some quantity, e.g. quota_k": here at least
                 * the rest of the epoch at its isolated rate, so that it is
                 * not drained and relaunched quota after quota */
                uint64_t rest = tasks_of(w->iso, (double)(f->epoch_end > corun__sched_now(s)
                                                              ? f->epoch_end - corun__sched_now(s)
                                                              : 0));
                w->granted = flow_done(s, f, i) + (rest > w->quota ? rest : w->quota);
                w->exhausted = false;
                apply(s, f, i);
            }
        }
    }
    lend(s, f);
}

/* The flow of k's kernel name, created on first sight; CORUN_NO_FLOW out of
 * memory. */
static size_t flow_of(fq *f, const corun__job *k)
{
    bool fresh;
    size_t i = corun__policy_flow((void **)&f->flows, &f->nflows, &f->cap, sizeof(*f->flows), k,
                                  &fresh);

    if (fresh) {
        f->flows[i].alpha = 1;
    }
    return i;
}

static void fq_arrive(corun__sched *s, void *state, corun__job *k)
{
    fq *f = state;
    const uint64_t now = corun__sched_now(s);
    const fq_kernel *p = corun__policy_attach_flow(s, k, sizeof(fq_kernel), flow_of(f, k));
    fq_flow *w;
    bool fresh;

    if (p == NULL) {
        return;
    }
    w = &f->flows[p->flow];
    fresh = w->t0 == 0 && w->done_base == 0 && w->granted == 0;
    w->goal = k->attr.qos;
    w->last_active = now;
    if (w->iso_tasks != k->tasks || w->iso_block != k->block_threads) {
        w->iso = corun__policy_isolated_rate(&f->store, &f->models, f->backend, k);
        w->iso_tasks = k->tasks;
        w->iso_block = k->block_threads;
    }
    if (fresh) {
        w->t0 = now;
    }
    if (!w->seen_epoch) {
        w->seen_epoch = true;
        split(s, f);
    }
    if (!f->epochs) {
        f->epoch_t0 = now;
        f->epoch_end = now + (uint64_t)f->epoch_ns;
        f->epochs = true;
        corun__sched_timer(s, f->epoch_end);
    }
    if (fresh) {
        /* its first quota covers what is left of this epoch */
        double left = (double)(f->epoch_end - now);
        double r = is_qos(w) ? qos_rate(f, w) : f->init * w->iso;
        w->quota = tasks_of(r > 0 ? r : 0, f->epoch_ns);
        w->granted = tasks_of(r > 0 ? r : 0, left);
    }
    apply_all(s, f);
}

static void fq_paused(corun__sched *s, void *state, corun__job *k)
{
    fq *f = state;

    if (qk(k) == NULL) {
        return;
    }
    settle(s, f);
}

static void fq_complete(corun__sched *s, void *state, corun__job *k)
{
    fq *f = state;

    if (qk(k) != NULL) {
        corun__policy_flow_ended(&f->flows[qk(k)->flow].done_base,
                                 &f->flows[qk(k)->flow].last_active, s, k);
    }
    corun__policy_forget_pdata(s, state, k);
    settle(s, f);
}

static void fq_timer(corun__sched *s, void *state, uint64_t now)
{
    fq *f = state;

    if (f->epochs && now >= f->epoch_end) {
        new_epoch(s, f, now);
        return;
    }
    /* an earlier request (an epoch elastic ended early) fired: the one
     * pending timer is gone, so ask for the epoch's end again */
    settle(s, f);
    if (f->epochs) {
        corun__sched_timer(s, f->epoch_end);
    }
}

const corun__policy_ops corun__policy_fgqos = {
    .name = "fgqos",
    .help = "fine-grained QoS: per-epoch task quotas for QoS kernels (launch attribute qos), "
            "the rest to the others (FGQOS_SCHEME)",
    .needs = CORUN_POLICY_NEEDS_DURATIONS | CORUN_POLICY_NEEDS_RATES,
    .create = fq_create,
    .destroy = fq_destroy,
    .arrive = fq_arrive,
    .paused = fq_paused,
    .complete = fq_complete,
    .timer = fq_timer,
    .forget = corun__policy_forget_pdata,
};
