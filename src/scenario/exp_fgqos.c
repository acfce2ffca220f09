/*
 * exp_fgqos.c — `corun experiment fgqos`: fine-grained QoS's evaluation
 * (qos-fine-grained.md §4) over the ten kernels (experiments.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_num.h"
#include "core/hsm.h"
#include "core/policy.h"
#include "core/profile_store.h"
#include "scenario/experiments_int.h"

/* the ten kernels' 90 ordered pairs and 60 trios of each kind */
#define FQ_TRIOS 60
#define FQ_GOALS 10

static const char *const fq_schemes[] = {"naive", "history", "elastic", "rollover", "spart"};
#define FQ_NSCHEMES 5
#define FQ_ROLLOVER 3
#define FQ_SPART 4

/* Tally of one scheme over a kind of case. */
typedef struct fq_tally {
    size_t cases, met; /* met: against the QoS kernels' rates alone next to the case */
    size_t met_start; /* ... against their rates alone at the start of the run */
    size_t met_plain; /* ... against the plain kernels alone */
    size_t met_store; /* ... against the profile store's isolated rates */
    double nq_sum;   /* non-QoS throughput (over alone), cases that met their goals */
    double over_sum; /* QoS rate over its goal, cases that met it */
} fq_tally;

/* What one app of a case achieved: its block-tasks per second in the window
 * (rate) over its rate alone as corun's workers in a loop measured next to
 * the case (adjacent, for QoS apps; fq_set) and at the start of the run
 * (workers), over the plain kernel's in a loop, and over the isolated rate of
 * the profile store (what fgqos's goals are fractions of: its loop of
 * launches at the launch's size). */
typedef struct fq_got {
    double rate;
    double adjacent, workers, plain, store;
} fq_got;

/* Runs apps idx[0..n) with QoS goals goal[0..n) (0: none) under fgqos with
 * scheme sch; got[i] is app i's. */
static int fq_case(ectx *e, const int *idx, size_t n, const double *goal, const char *sch,
                   fq_got *got)
{
    corun__scenario *p = corun__exp_pick(e, idx, n);
    corun__run_env env = e->o->env;
    corun__run_result r;
    size_t i;
    int rc;

    if (p == NULL) {
        return CORUN_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        p->apps[i].attr.qos = goal[i];
    }
    snprintf(env.settings.fgqos_scheme, sizeof(env.settings.fgqos_scheme), "%s", sch);
    rc = corun__scenario_run(p, &env, "fgqos", -1, 0, &r, e->why, e->why_len);
    if (rc != CORUN_OK) {
        /* which case, for whoever reruns it */
        size_t len = strlen(e->why);
        snprintf(e->why + len, e->why_len - len, " (fgqos, FGQOS_SCHEME=%s, apps", sch);
        for (i = 0; i < n; i++) {
            len = strlen(e->why);
            snprintf(e->why + len, e->why_len - len, " %s qos %.2f", p->apps[i].name, goal[i]);
        }
        len = strlen(e->why);
        snprintf(e->why + len, e->why_len - len, ")");
        free(p);
        return rc;
    }
    free(p);
    for (i = 0; i < n && rc == CORUN_OK; i++) {
        const corun_dim3 *g = &e->sc->apps[idx[i]].kernel.grid;
        const double tasks = (double)g->x * g->y * g->z;
        double alone = 0, walone = 0;
        rc = corun__exp_solo(e, idx[i]);
        if (rc == CORUN_OK) {
            rc = corun__exp_solo_workers(e, idx[i]);
        }
        if (rc == CORUN_OK) {
            alone = e->solo_rate[idx[i]] * 1e-9 * tasks;
            walone = e->wsolo_rate[idx[i]] * 1e-9 * tasks;
            if (!(alone > 0) || !(walone > 0) || !(r.window_ns > 0)) {
                snprintf(e->why, e->why_len, "fgqos: app '%s' has no rate", r.apps[i].name);
                rc = CORUN_ESTATE;
            }
        }
        if (rc == CORUN_OK) {
            const corun__kspec *k = &e->sc->apps[idx[i]].kernel;
            const double iso = corun__pstore_own_rate(
                &e->store, r.backend, k->name, tasks, (double)k->block.x * k->block.y * k->block.z);
            got[i].rate = r.apps[i].window_tasks / r.window_ns;
            got[i].workers = got[i].adjacent = got[i].rate / walone;
            got[i].plain = r.apps[i].window_tasks / r.window_ns / alone;
            got[i].store = iso > 0 ? r.apps[i].window_tasks / r.window_ns / iso : 0;
        }
    }
    corun__run_result_free(&r);
    return rc;
}

/* Counts one case: met when every app with a goal reached it. */
static bool fq_count(fq_tally *t, const double *goal, const fq_got *got, size_t n)
{
    double nq = 0, over = 0;
    size_t i, q = 0;
    bool met = true, met_plain = true, met_store = true;

    bool met_start = true;

    for (i = 0; i < n; i++) {
        if (goal[i] > 0) {
            met &= got[i].adjacent >= goal[i];
            met_start &= got[i].workers >= goal[i];
            met_plain &= got[i].plain >= goal[i];
            met_store &= got[i].store >= goal[i];
            over += got[i].adjacent / goal[i];
            q++;
        } else {
            nq += got[i].workers;
        }
    }
    t->cases++;
    t->met_start += met_start;
    t->met_plain += met_plain;
    t->met_store += met_store;
    if (met) {
        t->met++;
        t->nq_sum += nq;
        t->over_sum += q ? over / q : 0;
    }
    return met;
}

static json_t *fq_tally_json(const fq_tally *t)
{
    return json_pack(
        "{s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "cases", (json_int_t)t->cases, "met",
        (json_int_t)t->met, "qos_reach",
        corun__json_num(t->cases ? (double)t->met / t->cases : 0.0), "qos_reach_start",
        corun__json_num(t->cases ? (double)t->met_start / t->cases : 0.0), "qos_reach_plain",
        corun__json_num(t->cases ? (double)t->met_plain / t->cases : 0.0), "qos_reach_store",
        corun__json_num(t->cases ? (double)t->met_store / t->cases : 0.0), "nonqos_throughput_met",
        t->met ? corun__json_num(t->nq_sum / t->met) : json_null(), "qos_over_goal_met",
        t->met ? corun__json_num(t->over_sum / t->met) : json_null());
}

/* One set of cases: apps idx[0..n), the first nq of them with a goal, every
 * goal of the sweep (from g0 in steps of 0.05) under schemes s0..s1. A QoS
 * kernel's case is counted against its rate alone measured right before and
 * right after the set (the mean of the two): on the H100 a kernel's rate
 * alone moves by several percent over a run, the plain kernel's as much
 * (docs/decisions/0032), so a reference from the run's start would count
 * the machine's drift as the policy's. */
static int fq_set(ectx *e, const int *idx, size_t n, size_t nq, double g0, size_t s0, size_t s1,
                  fq_tally *tally, json_t *cases, size_t met[FQ_NSCHEMES])
{
    fq_got got[FQ_GOALS][FQ_NSCHEMES][3];
    double before[2], after[2];
    size_t g, sc, i;
    int rc = CORUN_OK;

    for (i = 0; i < nq && rc == CORUN_OK; i++) {
        rc = corun__exp_adjacent_rate(e, idx[i], &before[i]);
    }
    for (g = 0; g < FQ_GOALS && rc == CORUN_OK; g++) {
        const double x = g0 + 0.05 * (double)g;
        const double goal[3] = {x, nq > 1 ? x : 0, 0};
        for (sc = s0; sc <= s1 && rc == CORUN_OK; sc++) {
            memset(e->adj_fresh, 0, sizeof(e->adj_fresh));
            rc = fq_case(e, idx, n, goal, fq_schemes[sc], got[g][sc]);
        }
    }
    for (i = 0; i < nq && rc == CORUN_OK; i++) {
        rc = corun__exp_adjacent_rate(e, idx[i], &after[i]);
    }
    if (rc != CORUN_OK) {
        return rc;
    }
    for (g = 0; g < FQ_GOALS; g++) {
        const double x = g0 + 0.05 * (double)g;
        const double goal[3] = {x, nq > 1 ? x : 0, 0};
        for (sc = s0; sc <= s1; sc++) {
            fq_got *gt = got[g][sc];
            for (i = 0; i < nq; i++) {
                const corun_dim3 *d = &e->sc->apps[idx[i]].kernel.grid;
                const double per_ns = (before[i] + after[i]) * 0.5 * 1e-9 * d->x * d->y * d->z;
                gt[i].adjacent = gt[i].rate / per_ns;
            }
            met[sc] += fq_count(&tally[sc], goal, gt, n);
            if (n == 2 && cases != NULL) {
                json_array_append_new(
                    cases, json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "qos",
                                     e->sc->apps[idx[0]].name, "other", e->sc->apps[idx[1]].name,
                                     "scheme", fq_schemes[sc], "goal", corun__json_num(goal[0]),
                                     "qos_rate", corun__json_num(gt[0].adjacent), "qos_rate_start",
                                     corun__json_num(gt[0].workers), "qos_rate_plain",
                                     corun__json_num(gt[0].plain), "qos_rate_store",
                                     corun__json_num(gt[0].store), "alone_moved",
                                     corun__json_num(after[0] / before[0]), "other_rate",
                                     corun__json_num(gt[1].workers)));
            }
        }
    }
    return CORUN_OK;
}

/* Trios in a fixed order: every 6th of (QoS, a, b) with a < b (one QoS
 * kernel), or of (QoS a < QoS b, c) (two). */
static size_t fq_trios(int two, int (*out)[3])
{
    size_t n = 0, seen = 0;
    int a, b, c;

    for (a = 0; a < CORUN_EXP_TEN; a++) {
        for (b = 0; b < CORUN_EXP_TEN; b++) {
            for (c = 0; c < CORUN_EXP_TEN; c++) {
                bool ok = two ? (a < b && c != a && c != b) : (b < c && a != b && a != c);
                if (!ok || seen++ % 6 != 0 || n == FQ_TRIOS) {
                    continue;
                }
                out[n][0] = a;
                out[n][1] = b;
                out[n][2] = c;
                n++;
            }
        }
    }
    return n;
}

json_t *corun__exp_fgqos(corun__exp_ctx *e)
{
    int pairs[CORUN_EXP_TEN * CORUN_EXP_TEN][3], trios[FQ_TRIOS][3], all[CORUN_EXP_TEN][3];
    fq_tally pt[FQ_NSCHEMES], t1[FQ_NSCHEMES], t2[FQ_NSCHEMES];
    size_t np = 0, nt, i, sc, two;
    json_t *root = NULL, *cases = NULL;
    int a;

    memset(pt, 0, sizeof(pt));
    memset(t1, 0, sizeof(t1));
    memset(t2, 0, sizeof(t2));
    if (corun__exp_load_ten(e) != CORUN_OK) {
        return NULL;
    }
    if (corun__exp_ten_pairs(e, true, corun__policy_fgqos.needs, pairs, &np, all) != CORUN_OK) {
        goto fail;
    }
    /* every case's reference, each kernel's rate alone, measured first, as
     * close in time to the store's as the run allows */
    for (a = 0; a < CORUN_EXP_TEN; a++) {
        if (corun__exp_solo_workers(e, a) != CORUN_OK) {
            goto fail;
        }
    }
    root = json_object();
    cases = json_array();
    {
        /* what enforcing quotas costs: each kernel alone as a non-QoS kernel
         * (its quota paused and refilled), over its rate alone */
        json_t *alone = json_object();
        double sum = 0;
        for (a = 0; a < CORUN_EXP_TEN; a++) {
            const double goal = 0;
            fq_got got;
            if (fq_case(e, &all[a][0], 1, &goal, "rollover", &got) != CORUN_OK) {
                json_decref(alone);
                goto fail;
            }
            json_object_set_new(alone, e->sc->apps[a].name, corun__json_num(got.workers));
            sum += got.workers;
        }
        corun__exp_progress(e->o,
                            "fgqos: each kernel alone as a non-QoS kernel, %.3f of its rate alone "
                            "(mean of %d)",
                            sum / CORUN_EXP_TEN, CORUN_EXP_TEN);
        json_object_set_new(root, "alone_nonqos", alone);
        json_object_set_new(root, "mean_alone_nonqos", corun__json_num(sum / CORUN_EXP_TEN));
    }
    for (i = 0; i < np; i++) {
        size_t met[FQ_NSCHEMES] = {0};
        if (fq_set(e, pairs[i], 2, 1, 0.50, 0, FQ_NSCHEMES - 1, pt, cases, met) != CORUN_OK) {
            goto fail;
        }
        corun__exp_progress(e->o,
                            "fgqos %s (QoS) + %s: goals met of %d: naive %zu, history %zu, elastic "
                            "%zu, rollover %zu, spart %zu (its rate alone %.3f of the start's)",
                            e->sc->apps[pairs[i][0]].name, e->sc->apps[pairs[i][1]].name, FQ_GOALS,
                            met[0], met[1], met[2], met[3], met[4],
                            e->adj_rate[pairs[i][0]] / e->wsolo_rate[pairs[i][0]]);
    }
    for (two = 0; two < 2; two++) {
        nt = fq_trios((int)two, trios);
        if (e->o->max_sets > 0 && nt > e->o->max_sets) {
            nt = e->o->max_sets;
        }
        for (i = 0; i < nt; i++) {
            size_t met[FQ_NSCHEMES] = {0};
            /* one QoS kernel: 50-95 %; two: 25-70 % each (the paper's sweep) */
            if (fq_set(e, trios[i], 3, two ? 2 : 1, two ? 0.25 : 0.50, FQ_ROLLOVER, FQ_SPART,
                       two ? t2 : t1, NULL, met) != CORUN_OK) {
                goto fail;
            }
            corun__exp_progress(e->o,
                                "fgqos trio %s%s + %s%s + %s: goals met of %d: rollover %zu, "
                                "spart %zu",
                                e->sc->apps[trios[i][0]].name, " (QoS)",
                                e->sc->apps[trios[i][1]].name, two ? " (QoS)" : "",
                                e->sc->apps[trios[i][2]].name, FQ_GOALS, met[FQ_ROLLOVER],
                                met[FQ_SPART]);
        }
    }
    {
        json_t *sch = json_object();
        for (sc = 0; sc < FQ_NSCHEMES; sc++) {
            json_t *o = json_object();
            json_object_set_new(o, "pairs", fq_tally_json(&pt[sc]));
            if (sc >= FQ_ROLLOVER) {
                json_object_set_new(o, "trios_one_qos", fq_tally_json(&t1[sc]));
                json_object_set_new(o, "trios_two_qos", fq_tally_json(&t2[sc]));
            }
            json_object_set_new(sch, fq_schemes[sc], o);
        }
        json_object_set_new(root, "schemes", sch);
    }
    {
        /* each kernel's rate alone measured again after every case, over the
         * reference: how far a kernel's rate alone moved during the run */
        double again[CORUN_SCENARIO_MAX_APPS];
        json_t *moved = json_object();
        json_t *lo = json_object(), *hi = json_object();
        json_object_set_new(root, "alone_end_over_start", moved);
        json_object_set_new(root, "adjacent_min_over_start", lo);
        json_object_set_new(root, "adjacent_max_over_start", hi);
        for (a = 0; a < CORUN_EXP_TEN; a++) {
            if (e->adj_hi[a] > 0) {
                json_object_set_new(lo, e->sc->apps[a].name, corun__json_num(e->adj_lo[a]));
                json_object_set_new(hi, e->sc->apps[a].name, corun__json_num(e->adj_hi[a]));
            }
            if (corun__exp_rate_alone(e, a, &again[a]) != CORUN_OK) {
                goto fail;
            }
            json_object_set_new(moved, e->sc->apps[a].name,
                                corun__json_num(again[a] / e->wsolo_rate[a]));
            corun__exp_progress(e->o, "fgqos: %s alone at the end, %.3f of its rate at the start",
                                e->sc->apps[a].name, again[a] / e->wsolo_rate[a]);
        }
    }
    json_object_set_new(root, "epoch_us", corun__json_num(e->o->env.settings.fgqos_epoch_us));
    json_object_set_new(root, "cases", cases);
    corun__pstore_free(&e->store);
    corun__exp_unload(e);
    return root;
fail:
    json_decref(root);
    json_decref(cases);
    corun__pstore_free(&e->store);
    corun__exp_unload(e);
    return NULL;
}

