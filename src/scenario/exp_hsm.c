/*
 * exp_hsm.c — `corun experiment hsm`: HSM's evaluation (hsm.md §6) over
 * the ten kernels' 45 pairs (experiments.h).
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

#define HS_WINDOW_MS 60.0

/* One run of a pair: each app's block-tasks per ns in the window and its
 * share of the GPU's SMs there. */
typedef struct hs_got {
    double rate, share;
} hs_got;

/* Apps idx[0..2) under `policy` with HSM_FAIR_THRESHOLD `threshold` (hsm-fair)
 * or HSM_QOS_FIXED `fixed` (hsm-qos), app `high` (or none, -1) at priority 1. */
static int hs_case(ectx *e, const int *idx, const char *policy, double threshold, double fixed,
                   int high, hs_got got[2])
{
    corun__scenario *p = corun__exp_pick(e, idx, 2);
    corun__run_env env = e->o->env;
    corun__run_result r;
    int i, rc;

    if (p == NULL) {
        return CORUN_ENOMEM;
    }
    for (i = 0; i < 2; i++) {
        p->apps[i].attr.priority = i == high ? 1 : 0;
    }
    env.settings.hsm_fair_threshold = threshold;
    env.settings.hsm_qos_fixed = fixed;
    rc = corun__scenario_run(p, &env, policy, -1, 0, &r, e->why, e->why_len);
    free(p);
    if (rc != CORUN_OK) {
        return rc;
    }
    for (i = 0; i < 2; i++) {
        got[i].rate = r.window_ns > 0 ? r.apps[i].window_tasks / r.window_ns : 0;
        got[i].share = r.window_ns > 0 && r.sm_count > 0
                           ? r.apps[i].window_capsm_ns / ((double)r.sm_count * r.window_ns)
                           : 0;
    }
    corun__run_result_free(&r);
    return CORUN_OK;
}

/* A run's NPs against the rates alone, and its fairness, STP and ANTT
 * (Eyerman and Eeckhout; HSM's metrics). */
static json_t *hs_view(const hs_got got[2], const double alone[2], double np[2])
{
    int i;

    for (i = 0; i < 2; i++) {
        np[i] = alone[i] > 0 ? got[i].rate / alone[i] : 0;
    }
    return json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "np_a", corun__json_num(np[0]), "np_b",
        corun__json_num(np[1]), "share_a", corun__json_num(got[0].share), "share_b",
        corun__json_num(got[1].share), "fairness",
        corun__json_num(fmax(np[0], np[1]) > 0 ? fmin(np[0], np[1]) / fmax(np[0], np[1]) : 0.0),
        "stp", corun__json_num(np[0] + np[1]), "antt",
        corun__json_num(np[0] > 0 && np[1] > 0 ? (1 / np[0] + 1 / np[1]) / 2 : 0.0));
}

/* App i's isolated rate in the store, block-tasks per ns (the policies'). */
static double own_rate(const ectx *e, int i)
{
    const corun__kspec *k = &e->sc->apps[i].kernel;

    return corun__pstore_own_rate(&e->store, e->o->backend, k->name,
                                  (double)k->grid.x * k->grid.y * k->grid.z,
                                  (double)k->block.x * k->block.y * k->block.z);
}

static double jnum(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

/* Over the 45 pairs of the ten kernels: HSM's NP prediction against the NP
 * measured (each kernel's rate alone right before and after the pair's
 * runs, as fgqos's cases), an even SM split against hsm-fair, and where one
 * kernel is memory-bound and the other not, hsm-qos holding the
 * memory-bound one at HSM_QOS_TARGET against giving it 80 % of the SMs. */
json_t *corun__exp_hsm(corun__exp_ctx *e)
{
    int pairs[CORUN_EXP_TEN * CORUN_EXP_TEN / 2][3], all[CORUN_EXP_TEN][3];
    bool memory[CORUN_EXP_TEN];
    double iso0[CORUN_EXP_TEN], err_sum = 0, err_max = 0, err0_sum = 0, err0_max = 0;
    double sum[6] = {0}, qnp_min = INFINITY;
    size_t np = 0, i, nerr = 0, nq = 0, met = 0, met_fixed = 0;
    json_t *root = NULL, *list = NULL;
    int a;

    if (corun__exp_load_ten(e) != CORUN_OK) {
        return NULL;
    }
    /* windows of HS_WINDOW_MS at least, unless --duration-ms says otherwise:
     * the policies move SMs at epochs' ends and need a few to settle */
    e->sc->duration_ns = fmax(e->sc->duration_ns, HS_WINDOW_MS * 1e6);
    if (corun__exp_ten_pairs(e, false, corun__policy_hsm_fair.needs, pairs, &np, all) != CORUN_OK) {
        goto fail;
    }
    for (a = 0; a < CORUN_EXP_TEN; a++) {
        const corun__kspec *k = &e->sc->apps[a].kernel;
        memory[a] = corun__hsm_memory_bound(
            corun__pstore_find_prof(&e->store, e->o->backend, k->name), &e->o->env.settings);
        iso0[a] = own_rate(e, a);
        if (corun__exp_solo_workers(e, a) != CORUN_OK) {
            goto fail;
        }
    }
    /* from here every measurement alone goes to the store: the policies of a
     * pair take its kernels' rates alone measured right before it, as after
     * a `corun profile` there */
    e->record_alone = true;
    root = json_object();
    list = json_array();
    for (i = 0; i < np; i++) {
        const int *idx = pairs[i];
        const int high = memory[idx[0]] != memory[idx[1]] ? (memory[idx[0]] ? 0 : 1) : -1;
        double before[2], after[2], alone[2], iso[2], n_even[2], n_fair[2], n_qos[2], n_fix[2];
        hs_got even[2], fair[2], q[2], fix[2];
        json_t *o;
        int j, rc = CORUN_OK;
        for (j = 0; j < 2 && rc == CORUN_OK; j++) {
            rc = corun__exp_adjacent_rate(e, idx[j], &before[j]);
        }
        for (j = 0; j < 2; j++) {
            iso[j] = own_rate(e, idx[j]);
        }
        memset(e->adj_fresh, 0, sizeof(e->adj_fresh));
        if (rc == CORUN_OK) {
            rc = hs_case(e, idx, "hsm-fair", 0, 0, -1, even);
        }
        if (rc == CORUN_OK) {
            rc = hs_case(e, idx, "hsm-fair", e->o->env.settings.hsm_fair_threshold, 0, -1, fair);
        }
        if (rc == CORUN_OK && high >= 0) {
            rc = hs_case(e, idx, "hsm-qos", 0, 0, high, q);
            if (rc == CORUN_OK) {
                rc = hs_case(e, idx, "hsm-qos", 0, 0.8, high, fix);
            }
        }
        for (j = 0; j < 2 && rc == CORUN_OK; j++) {
            rc = corun__exp_adjacent_rate(e, idx[j], &after[j]);
        }
        if (rc != CORUN_OK) {
            goto fail;
        }
        for (j = 0; j < 2; j++) {
            const corun_dim3 *g = &e->sc->apps[idx[j]].kernel.grid;
            alone[j] = (before[j] + after[j]) * 0.5 * 1e-9 * g->x * g->y * g->z;
        }
        /* the rates alone (block-tasks per ns): the store's as the policies
         * read it, the store's at the run's start, the adjacent mean */
        o = json_pack("{s:s, s:s, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:o}", "a",
                      e->sc->apps[idx[0]].name, "b", e->sc->apps[idx[1]].name, "memory_bound_a",
                      memory[idx[0]], "memory_bound_b", memory[idx[1]], "iso_a",
                      corun__json_num(iso[0]), "iso_b", corun__json_num(iso[1]), "iso_start_a",
                      corun__json_num(iso0[idx[0]]), "iso_start_b", corun__json_num(iso0[idx[1]]),
                      "alone_a", corun__json_num(alone[0]), "alone_b", corun__json_num(alone[1]));
        json_object_set_new(o, "even", hs_view(even, alone, n_even));
        json_object_set_new(o, "hsm_fair", hs_view(fair, alone, n_fair));
        {
            /* the model's NP of each kernel in both runs, against the measured:
             * with the store's rates as the policies read them, and with those
             * of the run's start (a profile taken once) */
            json_t *pe = json_array(), *pe0 = json_array();
            const hs_got *runs[2] = {even, fair};
            const double *meas[2] = {n_even, n_fair};
            int r;
            for (r = 0; r < 2; r++) {
                for (j = 0; j < 2; j++) {
                    const double pred = corun__hsm_np(memory[idx[j]], runs[r][j].share,
                                                      runs[r][j].rate, iso[j]);
                    const double pred0 = corun__hsm_np(memory[idx[j]], runs[r][j].share,
                                                       runs[r][j].rate, iso0[idx[j]]);
                    const double err = meas[r][j] > 0 ? fabs(pred - meas[r][j]) / meas[r][j] : 0;
                    const double err0 =
                        meas[r][j] > 0 ? fabs(pred0 - meas[r][j]) / meas[r][j] : 0;
                    json_array_append_new(pe, corun__json_num(err));
                    json_array_append_new(pe0, corun__json_num(err0));
                    err_sum += err;
                    err_max = fmax(err_max, err);
                    err0_sum += err0;
                    err0_max = fmax(err0_max, err0);
                    nerr++;
                }
            }
            json_object_set_new(o, "prediction_error", pe);
            json_object_set_new(o, "prediction_error_start", pe0);
        }
        {
            const json_t *ev = json_object_get(o, "even"), *fa = json_object_get(o, "hsm_fair");
            sum[0] += jnum(ev, "fairness");
            sum[1] += jnum(fa, "fairness");
            sum[2] += jnum(ev, "stp");
            sum[3] += jnum(fa, "stp");
            corun__exp_progress(e->o,
                                "hsm %s + %s: fairness %.3f even, %.3f hsm-fair; STP %.3f, %.3f",
                                e->sc->apps[idx[0]].name, e->sc->apps[idx[1]].name,
                                jnum(ev, "fairness"), jnum(fa, "fairness"), jnum(ev, "stp"),
                                jnum(fa, "stp"));
        }
        if (high >= 0) {
            json_t *qv = hs_view(q, alone, n_qos), *fv = hs_view(fix, alone, n_fix);
            json_object_set_new(o, "high", json_string(high == 0 ? "a" : "b"));
            json_object_set_new(o, "hsm_qos", qv);
            json_object_set_new(o, "proportional", fv);
            nq++;
            met += n_qos[high] >= e->o->env.settings.hsm_qos_target;
            met_fixed += n_fix[high] >= e->o->env.settings.hsm_qos_target;
            qnp_min = fmin(qnp_min, n_qos[high]);
            sum[4] += n_qos[0] + n_qos[1];
            sum[5] += n_fix[0] + n_fix[1];
            corun__exp_progress(
                e->o,
                "hsm-qos %s (high) + %s: its NP %.3f, STP %.3f; 80 %% of the SMs: %.3f, "
                "%.3f",
                e->sc->apps[idx[high]].name, e->sc->apps[idx[1 - high]].name, n_qos[high],
                n_qos[0] + n_qos[1], n_fix[high], n_fix[0] + n_fix[1]);
        }
        json_array_append_new(list, o);
    }
    json_object_set_new(root, "pairs", list);
    list = NULL;
    if (np > 0) {
        json_object_set_new(root, "mean_fairness_even", corun__json_num(sum[0] / (double)np));
        json_object_set_new(root, "mean_fairness_hsm_fair", corun__json_num(sum[1] / (double)np));
        json_object_set_new(root, "mean_stp_even", corun__json_num(sum[2] / (double)np));
        json_object_set_new(root, "mean_stp_hsm_fair", corun__json_num(sum[3] / (double)np));
    }
    if (nerr > 0) {
        json_object_set_new(root, "prediction_error_mean", corun__json_num(err_sum / (double)nerr));
        json_object_set_new(root, "prediction_error_worst", corun__json_num(err_max));
        json_object_set_new(root, "prediction_error_start_mean",
                            corun__json_num(err0_sum / (double)nerr));
        json_object_set_new(root, "prediction_error_start_worst", corun__json_num(err0_max));
    }
    json_object_set_new(root, "qos_pairs", json_integer((json_int_t)nq));
    if (nq > 0) {
        json_object_set_new(root, "qos_target", corun__json_num(e->o->env.settings.hsm_qos_target));
        json_object_set_new(root, "qos_met", json_integer((json_int_t)met));
        json_object_set_new(root, "qos_met_proportional", json_integer((json_int_t)met_fixed));
        json_object_set_new(root, "qos_np_min", corun__json_num(qnp_min));
        json_object_set_new(root, "mean_stp_hsm_qos", corun__json_num(sum[4] / (double)nq));
        json_object_set_new(root, "mean_stp_proportional", corun__json_num(sum[5] / (double)nq));
    }
    json_object_set_new(root, "epoch_us", corun__json_num(e->o->env.settings.hsm_epoch_us));
    corun__pstore_free(&e->store);
    corun__exp_unload(e);
    return root;
fail:
    json_decref(root);
    json_decref(list);
    corun__pstore_free(&e->store);
    corun__exp_unload(e);
    return NULL;
}

