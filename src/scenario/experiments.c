/*
 * experiments.c — the FLEP and Slate evaluations over bench/scenarios/
 * (experiments.h), the registry of every experiment, and what the
 * experiments share (experiments_int.h); fgqos's and hsm's evaluations are
 * exp_fgqos.c and exp_hsm.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json_num.h"
#include "core/duration_model.h"
#include "core/intensity.h"
#include "core/metrics.h"
#include "core/policy.h"
#include "core/profile_store.h"
#include "scenario/experiments.h"
#include "scenario/experiments_int.h"

const char *const corun__exp_names[] = {"hpf",   "srt",   "spatial", "ffs",
                                        "model", "slate", "fgqos",   "hsm", NULL};

/* FLEP's benchmarks (Table 1) and the sets its figures use. */
static const char *const flep_all[] = {"cfd", "nn", "pf", "pl", "md", "spmv", "mm", "va", NULL};
static const char *const flep_low[] = {"cfd", "nn", "pf", "pl", NULL};        /* Fig. 8, 13 */
static const char *const flep_short[] = {"md", "mm", "spmv", "va", NULL};     /* Fig. 10 */

#define MAX_SETS 64


void corun__exp_progress(const corun__exp_opts *o, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (o->log == NULL) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    o->log(o->log_ctx, line);
}

void corun__exp_unload(ectx *e)
{
    free(e->sc);
    e->sc = NULL;
}

/* Loads the experiment's scenario file into e->sc; on failure e->sc is
 * NULL again (nothing to unload). */
static int load(ectx *e, const char *file)
{
    char path[4096];
    int rc;

    snprintf(path, sizeof(path), "%s/%s", e->o->dir, file);
    e->sc = malloc(sizeof(*e->sc));
    if (e->sc == NULL) {
        return CORUN_ENOMEM;
    }
    memset(e->solo_done, 0, sizeof(e->solo_done));
    memset(e->wsolo_done, 0, sizeof(e->wsolo_done));
    memset(e->adj_fresh, 0, sizeof(e->adj_fresh));
    memset(e->adj_lo, 0, sizeof(e->adj_lo));
    memset(e->adj_hi, 0, sizeof(e->adj_hi));
    rc = corun__scenario_load(path, e->sc, e->why, e->why_len);
    if (rc != CORUN_OK) {
        corun__exp_unload(e);
    }
    return rc;
}

static int app_index(const ectx *e, const char *name)
{
    size_t i;

    for (i = 0; i < e->sc->napps; i++) {
        if (strcmp(e->sc->apps[i].name, name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* A scenario of the file's apps idx[0..n), in that order. */
corun__scenario *corun__exp_pick(const ectx *e, const int *idx, size_t n)
{
    corun__scenario *p = malloc(sizeof(*p));
    size_t i;

    if (p == NULL) {
        return NULL;
    }
    *p = *e->sc;
    for (i = 0; i < n; i++) {
        p->apps[i] = e->sc->apps[idx[i]];
    }
    p->napps = n;
    if (e->o->duration_ms > 0) {
        for (i = 0; i < n; i++) {
            if (p->apps[i].arrival.kind == CORUN_ARRIVAL_LOOP) {
                p->duration_ns = e->o->duration_ms * 1e6;
            }
        }
    }
    return p;
}

/* The file's app i alone under `policy`, once per experiment: its kernels
 * per second into rate[i], its mean turnaround into mean[i] (mean may be
 * NULL), done[i] set. */
static int solo_under(ectx *e, int i, const char *policy, bool *done, double *rate,
                      double *mean)
{
    corun__scenario *p;
    corun__run_result r;
    int rc;

    if (done[i]) {
        return CORUN_OK;
    }
    p = corun__exp_pick(e, &i, 1);
    if (p == NULL) {
        return CORUN_ENOMEM;
    }
    rc = corun__scenario_run(p, &e->o->env, policy, -1, 0, &r, e->why, e->why_len);
    free(p);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (r.apps[0].completed == 0) {
        snprintf(e->why, e->why_len, "app '%s' completed no kernel alone", e->sc->apps[i].name);
        corun__run_result_free(&r);
        return CORUN_ESTATE;
    }
    if (mean != NULL) {
        mean[i] = r.apps[0].mean_ns;
    }
    rate[i] = r.apps[0].rate_per_s;
    done[i] = true;
    corun__run_result_free(&r);
    return CORUN_OK;
}

/* The file's app i alone under plain dispatch (mps). */
int corun__exp_solo(ectx *e, int i)
{
    return solo_under(e, i, "mps", e->solo_done, e->solo_rate, e->solo_mean);
}

/* App i's windows alone (block-tasks per ns) recorded as `corun profile`
 * records them: runs at the kernel's own size in the store's file and in
 * e->store, so that the policies created next take them as its isolated
 * rate (corun__pstore_own_rate, read from the latest windows). */
static int record_alone(ectx *e, int i, const double r[3])
{
    const corun__kspec *k = &e->sc->apps[i].kernel;
    corun__pstore add;
    char path[4096], note[512] = "";
    int w, rc;

    rc = corun__pstore_path(e->o->env.settings.profile_path, path, sizeof(path), e->why,
                            e->why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    corun__pstore_init(&add);
    for (w = 0; w < 3 && rc == CORUN_OK; w++) {
        corun__prun run;
        corun__scenario_prun(&run, e->o->backend, k, &e->sc->apps[i].attr,
                             (double)k->grid.x * k->grid.y * k->grid.z / r[w]);
        rc = corun__pstore_add_run(&add, &run);
        if (rc == CORUN_OK) {
            rc = corun__pstore_add_run(&e->store, &run);
        }
    }
    if (rc == CORUN_OK) {
        rc = corun__pstore_merge(path, &add, note, sizeof(note));
        if (rc != CORUN_OK) {
            snprintf(e->why, e->why_len, "%s", note[0] ? note : corun_strerror(rc));
        }
    }
    corun__pstore_free(&add);
    return rc;
}

/* The file's app i alone as corun's workers on the whole GPU, in kernels per
 * second: the median of three windows of corun__scenario_rate_alone, the
 * isolated rate fgqos's goals are fractions of, measured as `corun profile`
 * measures it (a loop of launches through the scheduler now and then has a
 * slow window). */
int corun__exp_rate_alone(ectx *e, int i, double *per_s)
{
    const corun_dim3 *g = &e->sc->apps[i].kernel.grid;
    double r[3];
    int w;

    for (w = 0; w < 3; w++) {
        corun__scenario *p = corun__exp_pick(e, &i, 1);
        int rc;
        if (p == NULL) {
            return CORUN_ENOMEM;
        }
        rc = corun__scenario_rate_alone(p, &e->o->env, &r[w], e->why, e->why_len);
        free(p);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    *per_s = fmax(fmin(r[0], r[1]), fmin(fmax(r[0], r[1]), r[2])) * 1e9 /
             ((double)g->x * g->y * g->z);
    return e->record_alone ? record_alone(e, i, r) : CORUN_OK;
}

/* rate_alone of app i once per experiment, into e->wsolo_rate[i]. */
int corun__exp_solo_workers(ectx *e, int i)
{
    int rc = CORUN_OK;

    if (!e->wsolo_done[i]) {
        rc = corun__exp_rate_alone(e, i, &e->wsolo_rate[i]);
        e->wsolo_done[i] = rc == CORUN_OK;
    }
    return rc;
}

/* Runs apps idx[0..n) of the file under a policy, with these settings. */
static int run_set(ectx *e, const int *idx, size_t n, const char *policy,
                   const corun__settings *set, corun__run_result *out)
{
    corun__scenario *p = corun__exp_pick(e, idx, n);
    corun__run_env env = e->o->env;
    int rc;

    if (p == NULL) {
        return CORUN_ENOMEM;
    }
    if (set != NULL) {
        env.settings = *set;
    }
    rc = corun__scenario_run(p, &env, policy, -1, 0, out, e->why, e->why_len);
    free(p);
    if (rc == CORUN_OK) {
        size_t i;
        for (i = 0; i < n; i++) {
            if (out->apps[i].completed == 0) {
                snprintf(e->why, e->why_len, "%s: app '%s' completed no kernel", policy,
                         out->apps[i].name);
                corun__run_result_free(out);
                return CORUN_ESTATE;
            }
        }
    }
    return rc;
}

/* ANTT and STP against the solo references (Eyerman and Eeckhout). */
static int colocation(ectx *e, const int *idx, size_t n, const corun__run_result *r,
                      corun__colocation *out)
{
    corun__app_times t[CORUN_SCENARIO_MAX_APPS];
    size_t i;
    int rc;

    for (i = 0; i < n; i++) {
        rc = corun__exp_solo(e, idx[i]);
        if (rc != CORUN_OK) {
            return rc;
        }
        t[i].solo_ns = e->solo_mean[idx[i]];
        t[i].shared_ns = r->apps[i].mean_ns;
    }
    return corun__colocation_calc(t, n, out);
}

/* Sum over apps of block-tasks done per second in the arrival window over
 * block-tasks per second alone: 1 = no work lost to sharing. */
static int throughput(ectx *e, const int *idx, size_t n, const corun__run_result *r,
                      double *out)
{
    double sum = 0;
    size_t i;
    int rc;

    for (i = 0; i < n; i++) {
        const corun_dim3 *g = &e->sc->apps[idx[i]].kernel.grid;
        double alone;
        rc = corun__exp_solo(e, idx[i]);
        if (rc != CORUN_OK) {
            return rc;
        }
        alone = e->solo_rate[idx[i]] * 1e-9 * (double)g->x * g->y * g->z;
        if (!(alone > 0) || !(r->window_ns > 0)) {
            return CORUN_ESTATE;
        }
        sum += r->apps[i].window_tasks / r->window_ns / alone;
    }
    *out = sum;
    return CORUN_OK;
}

static double share(const corun__run_result *r, size_t i)
{
    return r->window_ns > 0 ? r->apps[i].window_capsm_ns / ((double)r->sm_count * r->window_ns)
                            : 0;
}

/* Time both apps had a kernel on the GPU (first launch to completion), over
 * the span of the run. */
static double corun_fraction(const corun__run_result *r)
{
    const corun__app_result *a = &r->apps[0], *b = &r->apps[1];
    size_t i = 0, j = 0;
    double both = 0;

    while (i < a->completed && j < b->completed) {
        double lo = fmax(a->kernels[i].start_ns, b->kernels[j].start_ns);
        double hi = fmin(a->kernels[i].end_ns, b->kernels[j].end_ns);
        if (hi > lo) {
            both += hi - lo;
        }
        if (a->kernels[i].end_ns < b->kernels[j].end_ns) {
            i++;
        } else {
            j++;
        }
    }
    return r->span_ns > 0 ? both / r->span_ns : 0;
}

/* Pairs (a_SUFFIX_A, b_SUFFIX_B) for a in as, b in bs, a != b. */
static size_t make_pairs(const ectx *e, const char *const *as, const char *sa,
                         const char *const *bs, const char *sb, int (*out)[3])
{
    size_t n = 0, i, j;

    for (j = 0; bs[j] != NULL; j++) {
        for (i = 0; as[i] != NULL; i++) {
            char x[64], y[64];
            if (strcmp(as[i], bs[j]) == 0 || n == MAX_SETS) {
                continue;
            }
            snprintf(x, sizeof(x), "%s_%s", as[i], sa);
            snprintf(y, sizeof(y), "%s_%s", bs[j], sb);
            out[n][0] = app_index(e, x);
            out[n][1] = app_index(e, y);
            out[n][2] = -1;
            if (out[n][0] >= 0 && out[n][1] >= 0) {
                n++;
            }
        }
    }
    if (e->o->max_sets > 0 && n > e->o->max_sets) {
        n = e->o->max_sets;
    }
    return n;
}

/* Records the profiles the policy needs for the apps used by the sets. */
int corun__exp_ensure(ectx *e, int (*sets)[3], size_t n, unsigned needs)
{
    corun__scenario *p;
    int idx[CORUN_SCENARIO_MAX_APPS];
    size_t i, j, k, m = 0;
    char path[4096];
    int rc;

    rc = corun__pstore_path(e->o->env.settings.profile_path, path, sizeof(path), e->why,
                            e->why_len);
    if (rc == CORUN_ENOENT && e->why[0] == '\0') {
        snprintf(e->why, e->why_len, "this experiment needs a profile store (PROFILE_PATH is off)");
        return CORUN_EINVAL;
    }
    if (rc != CORUN_OK) {
        return rc;
    }
    for (i = 0; i < n; i++) {
        for (j = 0; j < 3 && sets[i][j] >= 0; j++) {
            bool have = false;
            for (k = 0; k < m; k++) {
                have |= idx[k] == sets[i][j];
            }
            if (!have && m < CORUN_SCENARIO_MAX_APPS) {
                idx[m++] = sets[i][j];
            }
        }
    }
    p = corun__exp_pick(e, idx, m);
    if (p == NULL) {
        return CORUN_ENOMEM;
    }
    rc = corun__scenario_ensure_profiles(p, &e->o->env, e->o->backend, path, needs, e->o->log,
                                         e->o->log_ctx, e->why, e->why_len);
    free(p);
    return rc;
}

static void summary(json_t *root, const char *prefix, const double *v, size_t n)
{
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    char key[64];
    size_t i;

    for (i = 0; i < n; i++) {
        sum += v[i];
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    snprintf(key, sizeof(key), "mean_%s", prefix);
    json_object_set_new(root, key, n ? corun__json_num(sum / n) : json_null());
    snprintf(key, sizeof(key), "min_%s", prefix);
    json_object_set_new(root, key, n ? corun__json_num(lo) : json_null());
    snprintf(key, sizeof(key), "max_%s", prefix);
    json_object_set_new(root, key, n ? corun__json_num(hi) : json_null());
}

/* ---- the experiments ------------------------------------------------------ */

static json_t *exp_hpf(ectx *e)
{
    int sets[MAX_SETS][3];
    double speedup[MAX_SETS];
    json_t *root, *arr;
    size_t n, i;

    if (load(e, "flep-hpf-pairs.json") != CORUN_OK) {
        return NULL;
    }
    n = make_pairs(e, flep_low, "large", flep_all, "small", sets);
    root = json_object();
    arr = json_array();
    for (i = 0; i < n; i++) {
        corun__run_result m, f;
        if (run_set(e, sets[i], 2, "mps", NULL, &m) != CORUN_OK) {
            goto out_fail;
        }
        if (run_set(e, sets[i], 2, "flep-hpf", NULL, &f) != CORUN_OK) {
            corun__run_result_free(&m);
            goto out_fail;
        }
        speedup[i] = m.apps[1].mean_ns / f.apps[1].mean_ns;
        corun__exp_progress(e->o, "hpf %s + %s: high-priority speedup %.2fx", m.apps[0].name,
                            m.apps[1].name, speedup[i]);
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "low", m.apps[0].name, "high",
                           m.apps[1].name, "high_mps_us", corun__json_num(m.apps[1].mean_ns * 1e-3),
                           "high_flep_us", corun__json_num(f.apps[1].mean_ns * 1e-3), "low_mps_us",
                           corun__json_num(m.apps[0].mean_ns * 1e-3), "low_flep_us",
                           corun__json_num(f.apps[0].mean_ns * 1e-3), "speedup",
                           corun__json_num(speedup[i])));
        corun__run_result_free(&m);
        corun__run_result_free(&f);
    }
    json_object_set_new(root, "pairs", arr);
    summary(root, "speedup", speedup, n);
    corun__exp_unload(e);
    return root;
out_fail:
    json_decref(root);
    json_decref(arr);
    corun__exp_unload(e);
    return NULL;
}

/* Shortest remaining time among equal priorities: pairs and triplets. */
static json_t *exp_srt(ectx *e)
{
    int sets[MAX_SETS][3];
    double gain[MAX_SETS], loss[MAX_SETS];
    size_t n, npairs, i, j;
    json_t *root, *pairs, *triplets;

    if (load(e, "flep-srt-pairs.json") != CORUN_OK) {
        return NULL;
    }
    npairs = make_pairs(e, flep_all, "large", flep_short, "small", sets);
    /* Triplets (Fig. 12): each long kernel with the next two short ones
     * other than itself, in a fixed order (FLEP picked 28 at random). */
    n = npairs;
    for (i = 0; flep_all[i] != NULL && n < MAX_SETS; i++) {
        char name[64];
        size_t got = 0;
        if (e->o->max_sets > 0 && n - npairs >= e->o->max_sets) {
            break;
        }
        snprintf(name, sizeof(name), "%s_large", flep_all[i]);
        sets[n][0] = app_index(e, name);
        for (j = 0; flep_short[j] != NULL && got < 2; j++) {
            size_t s = (i + j) % 4;
            if (strcmp(flep_short[s], flep_all[i]) == 0) {
                continue;
            }
            snprintf(name, sizeof(name), "%s_small", flep_short[s]);
            sets[n][1 + got++] = app_index(e, name);
        }
        if (got == 2 && sets[n][0] >= 0 && sets[n][1] >= 0 && sets[n][2] >= 0) {
            n++;
        }
    }
    if (corun__exp_ensure(e, sets, n, CORUN_POLICY_NEEDS_DURATIONS) != CORUN_OK) {
        corun__exp_unload(e);
        return NULL;
    }
    root = json_object();
    pairs = json_array();
    triplets = json_array();
    for (i = 0; i < n; i++) {
        size_t k = i < npairs ? 2 : 3;
        corun__run_result m, f;
        corun__colocation cm, cf;
        double tm, tf;
        json_t *o;
        if (run_set(e, sets[i], k, "mps", NULL, &m) != CORUN_OK) {
            goto out_fail;
        }
        if (run_set(e, sets[i], k, "flep-hpf", NULL, &f) != CORUN_OK) {
            corun__run_result_free(&m);
            goto out_fail;
        }
        if (colocation(e, sets[i], k, &m, &cm) != CORUN_OK ||
            colocation(e, sets[i], k, &f, &cf) != CORUN_OK ||
            throughput(e, sets[i], k, &m, &tm) != CORUN_OK ||
            throughput(e, sets[i], k, &f, &tf) != CORUN_OK) {
            corun__run_result_free(&m);
            corun__run_result_free(&f);
            goto out_fail;
        }
        gain[i] = cm.antt / cf.antt;
        loss[i] = 1 - tf / tm;
        o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "antt_mps", corun__json_num(cm.antt),
                      "antt_flep", corun__json_num(cf.antt), "antt_gain", corun__json_num(gain[i]),
                      "stp_mps", corun__json_num(cm.stp), "stp_flep", corun__json_num(cf.stp),
                      "throughput_mps", corun__json_num(tm), "throughput_flep",
                      corun__json_num(tf));
        json_object_set_new(o, "throughput_loss", corun__json_num(loss[i]));
        for (j = 0; j < k; j++) {
            char key[16];
            snprintf(key, sizeof(key), "%s", j == 0 ? "long" : j == 1 ? "short" : "short2");
            json_object_set_new(o, key, json_string(m.apps[j].name));
        }
        corun__exp_progress(e->o, "srt %s + %s%s%s: ANTT %.2f -> %.2f (%.2fx)", m.apps[0].name,
                            m.apps[1].name, k == 3 ? " + " : "", k == 3 ? m.apps[2].name : "",
                            cm.antt, cf.antt, gain[i]);
        json_array_append_new(i < npairs ? pairs : triplets, o);
        corun__run_result_free(&m);
        corun__run_result_free(&f);
    }
    json_object_set_new(root, "pairs", pairs);
    json_object_set_new(root, "triplets", triplets);
    summary(root, "antt_gain", gain, npairs);
    summary(root, "throughput_loss", loss, npairs);
    summary(root, "triplet_antt_gain", gain + npairs, n - npairs);
    corun__exp_unload(e);
    return root;
out_fail:
    json_decref(root);
    json_decref(pairs);
    json_decref(triplets);
    corun__exp_unload(e);
    return NULL;
}

static json_t *exp_spatial(ectx *e)
{
    int sets[MAX_SETS][3];
    double reduction[MAX_SETS], ovs[MAX_SETS], ovt[MAX_SETS];
    corun__settings temporal = e->o->env.settings;
    json_t *root, *arr;
    size_t n, i, nred = 0;

    if (load(e, "flep-spatial-pairs.json") != CORUN_OK) {
        return NULL;
    }
    temporal.hpf_spatial = 0;
    n = make_pairs(e, flep_low, "large", flep_all, "trivial", sets);
    root = json_object();
    arr = json_array();
    for (i = 0; i < n; i++) {
        corun__run_result m, sp, tp;
        json_t *o;
        if (run_set(e, sets[i], 2, "mps", NULL, &m) != CORUN_OK) {
            goto out_fail;
        }
        if (run_set(e, sets[i], 2, "flep-hpf", NULL, &sp) != CORUN_OK) {
            corun__run_result_free(&m);
            goto out_fail;
        }
        if (run_set(e, sets[i], 2, "flep-hpf", &temporal, &tp) != CORUN_OK) {
            corun__run_result_free(&m);
            corun__run_result_free(&sp);
            goto out_fail;
        }
        /* FLEP's preemption overhead: (T_FLEP - T_org) / T_org, T the time
         * from the first launch until both kernels are done. */
        ovs[i] = (sp.span_ns - m.span_ns) / m.span_ns;
        ovt[i] = (tp.span_ns - m.span_ns) / m.span_ns;
        o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "low", m.apps[0].name,
                      "high", m.apps[1].name, "t_org_us", corun__json_num(m.span_ns * 1e-3),
                      "spatial_us", corun__json_num(sp.span_ns * 1e-3), "temporal_us",
                      corun__json_num(tp.span_ns * 1e-3), "overhead_spatial",
                      corun__json_num(ovs[i]), "overhead_temporal", corun__json_num(ovt[i]),
                      "high_spatial_us", corun__json_num(sp.apps[1].mean_ns * 1e-3),
                      "high_temporal_us", corun__json_num(tp.apps[1].mean_ns * 1e-3));
        if (ovt[i] > 0) {
            reduction[nred] = 1 - ovs[i] / ovt[i];
            json_object_set_new(o, "reduction", corun__json_num(reduction[nred]));
            nred++;
        }
        corun__exp_progress(e->o, "spatial %s + %s: overhead %.2f%% spatial, %.2f%% temporal",
                            m.apps[0].name, m.apps[1].name, ovs[i] * 100, ovt[i] * 100);
        json_array_append_new(arr, o);
        corun__run_result_free(&m);
        corun__run_result_free(&sp);
        corun__run_result_free(&tp);
    }
    json_object_set_new(root, "pairs", arr);
    summary(root, "overhead_spatial", ovs, n);
    summary(root, "overhead_temporal", ovt, n);
    summary(root, "reduction", reduction, nred);
    corun__exp_unload(e);
    return root;
out_fail:
    json_decref(root);
    json_decref(arr);
    corun__exp_unload(e);
    return NULL;
}

static json_t *exp_ffs(ectx *e)
{
    int sets[MAX_SETS][3];
    double hi[MAX_SETS], lo[MAX_SETS], ovh[MAX_SETS], held[MAX_SETS], hi_held[MAX_SETS];
    json_t *root, *arr;
    size_t n, i;

    if (load(e, "flep-ffs-pairs.json") != CORUN_OK) {
        return NULL;
    }
    n = make_pairs(e, flep_low, "large", flep_all, "small", sets);
    root = json_object();
    arr = json_array();
    for (i = 0; i < n; i++) {
        corun__run_result f;
        double tp;
        if (run_set(e, sets[i], 2, "flep-ffs", NULL, &f) != CORUN_OK) {
            goto out_fail;
        }
        if (throughput(e, sets[i], 2, &f, &tp) != CORUN_OK) {
            corun__run_result_free(&f);
            goto out_fail;
        }
        lo[i] = share(&f, 0);
        hi[i] = share(&f, 1);
        held[i] = lo[i] + hi[i];
        hi_held[i] = held[i] > 0 ? hi[i] / held[i] : 0;
        ovh[i] = 1 - tp;
        corun__exp_progress(
            e->o,
            "ffs %s (w1) + %s (w2): shares %.3f / %.3f (of the time held: %.3f / %.3f), "
            "throughput lost %.2f%%",
            f.apps[0].name, f.apps[1].name, lo[i], hi[i], 1 - hi_held[i], hi_held[i], ovh[i] * 100);
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "low", f.apps[0].name,
                           "high", f.apps[1].name, "share_low", corun__json_num(lo[i]),
                           "share_high", corun__json_num(hi[i]), "held", corun__json_num(held[i]),
                           "held_share_high", corun__json_num(hi_held[i]), "throughput",
                           corun__json_num(tp), "overhead", corun__json_num(ovh[i])));
        corun__run_result_free(&f);
    }
    json_object_set_new(root, "pairs", arr);
    json_object_set_new(root, "max_overhead_setting",
                        corun__json_num(e->o->env.settings.ffs_max_overhead));
    summary(root, "share_high", hi, n);
    summary(root, "share_low", lo, n);
    summary(root, "held", held, n);
    summary(root, "held_share_high", hi_held, n);
    summary(root, "overhead", ovh, n);
    corun__exp_unload(e);
    return root;
out_fail:
    json_decref(root);
    json_decref(arr);
    corun__exp_unload(e);
    return NULL;
}

/* Held-out error of each FLEP kernel's duration model (Fig. 7). */
static json_t *exp_model(ectx *e)
{
    int sets[CORUN_SCENARIO_MAX_APPS][3];
    double mape[CORUN_SCENARIO_MAX_APPS];
    char path[4096];
    corun__pstore ps;
    json_t *root, *arr;
    size_t i, n = 0, nk = 0;

    if (load(e, "flep-srt-pairs.json") != CORUN_OK) {
        return NULL;
    }
    /* Every kernel, trained at the sizes of its large input (a tenth to
     * all of it), which cover its small input too. */
    for (i = 0; flep_all[i] != NULL; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s_large", flep_all[i]);
        sets[n][0] = app_index(e, name);
        sets[n][1] = sets[n][2] = -1;
        if (sets[n][0] >= 0 && (e->o->max_sets == 0 || n < e->o->max_sets)) {
            n++;
        }
    }
    if (corun__exp_ensure(e, sets, n, CORUN_POLICY_NEEDS_DURATIONS) != CORUN_OK ||
        corun__pstore_path(e->o->env.settings.profile_path, path, sizeof(path), e->why,
                           e->why_len) != CORUN_OK ||
        corun__pstore_load(path, &ps, NULL, 0) != CORUN_OK) {
        corun__exp_unload(e);
        return NULL;
    }
    root = json_object();
    arr = json_array();
    for (i = 0; i < n; i++) {
        const char *kernel = e->sc->apps[sets[i][0]].kernel.name;
        const corun__prun **runs;
        corun__dm_eval ev;
        size_t nr;
        if (corun__dm_runs_of(&ps, e->o->backend, kernel, &runs, &nr) != CORUN_OK) {
            continue;
        }
        if (corun__dm_evaluate(runs, nr, e->o->env.settings.profile_holdout,
                               e->o->env.settings.ridge_lambda, &ev) == CORUN_OK) {
            mape[nk++] = ev.mape;
            corun__exp_progress(e->o, "model %s: %zu runs, held-out error %.2f%% (worst %.2f%%)",
                                kernel, nr, ev.mape * 100, ev.max_ape * 100);
            json_array_append_new(
                arr, json_pack("{s:s, s:I, s:I, s:o, s:o}", "kernel", kernel, "train",
                               (json_int_t)ev.ntrain, "test", (json_int_t)ev.ntest, "mape",
                               corun__json_num(ev.mape), "max_ape", corun__json_num(ev.max_ape)));
        }
        free(runs);
    }
    corun__pstore_free(&ps);
    json_object_set_new(root, "kernels", arr);
    summary(root, "mape", mape, nk);
    corun__exp_unload(e);
    return root;
}

static json_t *exp_slate(ectx *e)
{
    int sets[MAX_SETS][3];
    double gain[MAX_SETS] = {0};
    char path[4096];
    corun__pstore ps;
    json_t *root, *arr;
    size_t n = 0, i, j, ncorun = 0;
    double corun_gain = 0;

    if (load(e, "slate-pairs.json") != CORUN_OK) {
        return NULL;
    }
    for (i = 0; i < e->sc->napps; i++) {
        for (j = i; j < e->sc->napps && n < MAX_SETS; j++) {
            sets[n][0] = (int)i;
            sets[n][1] = (int)j;
            sets[n][2] = -1;
            n++;
        }
    }
    if (e->o->max_sets > 0 && n > e->o->max_sets) {
        n = e->o->max_sets;
    }
    if (corun__exp_ensure(e, sets, n, CORUN_POLICY_NEEDS_PROFILES) != CORUN_OK ||
        corun__pstore_path(e->o->env.settings.profile_path, path, sizeof(path), e->why,
                           e->why_len) != CORUN_OK ||
        corun__pstore_load(path, &ps, NULL, 0) != CORUN_OK) {
        corun__exp_unload(e);
        return NULL;
    }
    root = json_object();
    arr = json_array();
    for (i = 0; i < n; i++) {
        corun__kclass cls[2];
        corun__run_result m, s;
        corun__colocation cm, cs;
        double frac;
        bool expect;
        for (j = 0; j < 2; j++) {
            const corun__pprof *p =
                corun__pstore_find_prof(&ps, e->o->backend, e->sc->apps[sets[i][j]].kernel.name);
            cls[j] = p ? corun__kclass_of(p->flop_frac, p->bw_frac, &e->o->env.settings)
                       : CORUN_KCLASS_UNKNOWN;
        }
        /* Both start at once; the first app's kernel is submitted first and
         * is the running kernel J_k of Table I's row. */
        expect = corun__slate_complementary(cls[0], cls[1]);
        if (run_set(e, sets[i], 2, "mps", NULL, &m) != CORUN_OK) {
            goto out_fail;
        }
        if (run_set(e, sets[i], 2, "slate", NULL, &s) != CORUN_OK) {
            corun__run_result_free(&m);
            goto out_fail;
        }
        if (colocation(e, sets[i], 2, &m, &cm) != CORUN_OK ||
            colocation(e, sets[i], 2, &s, &cs) != CORUN_OK) {
            corun__run_result_free(&m);
            corun__run_result_free(&s);
            goto out_fail;
        }
        frac = corun_fraction(&s);
        gain[i] = cs.stp / cm.stp - 1;
        if (expect) {
            corun_gain += gain[i];
            ncorun++;
        }
        corun__exp_progress(
            e->o, "slate %s (%s) + %s (%s): %s, co-ran %.0f%% of the time, STP %.3f vs mps %.3f",
            s.apps[0].name, corun__kclass_name(cls[0]), s.apps[1].name, corun__kclass_name(cls[1]),
            expect ? "corun" : "solo", frac * 100, cs.stp, cm.stp);
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "a",
                           s.apps[0].name, "b", s.apps[1].name, "class_a",
                           corun__kclass_name(cls[0]), "class_b", corun__kclass_name(cls[1]),
                           "decision", expect ? "corun" : "solo", "corun_fraction",
                           corun__json_num(frac), "stp_mps", corun__json_num(cm.stp), "stp_slate",
                           corun__json_num(cs.stp), "gain", corun__json_num(gain[i]), "antt_mps",
                           corun__json_num(cm.antt), "antt_slate", corun__json_num(cs.antt)));
        corun__run_result_free(&m);
        corun__run_result_free(&s);
    }
    corun__pstore_free(&ps);
    json_object_set_new(root, "pairs", arr);
    summary(root, "gain", gain, n);
    json_object_set_new(root, "mean_corun_gain",
                        ncorun ? corun__json_num(corun_gain / ncorun) : json_null());
    corun__exp_unload(e);
    return root;
out_fail:
    corun__pstore_free(&ps);
    json_decref(root);
    json_decref(arr);
    corun__exp_unload(e);
    return NULL;
}


/* ---- shared by fgqos and hsm (exp_fgqos.c, exp_hsm.c) ----------------------- */

/* App k's rate alone next to a set of cases: the last measurement where no
 * case ran since, else a new one; e->adj_lo/hi keep its range over the run
 * as a fraction of its rate at the start. */
int corun__exp_adjacent_rate(ectx *e, int k, double *per_s)
{
    double f;
    int rc = CORUN_OK;

    if (!e->adj_fresh[k]) {
        rc = corun__exp_rate_alone(e, k, &e->adj_rate[k]);
        if (rc != CORUN_OK) {
            return rc;
        }
        f = e->adj_rate[k] / e->wsolo_rate[k];
        if (e->adj_lo[k] == 0 || f < e->adj_lo[k]) {
            e->adj_lo[k] = f;
        }
        if (f > e->adj_hi[k]) {
            e->adj_hi[k] = f;
        }
        e->adj_fresh[k] = true;
    }
    *per_s = e->adj_rate[k];
    return rc;
}

/* The ten kernels of fgqos and hsm: as a backend runs them where a file
 * says so (the GPU's real kernels at their own sizes), else as the
 * simulator models them. */
int corun__exp_load_ten(ectx *e)
{
    char file[4096];
    int rc;

    snprintf(file, sizeof(file), "%s/fgqos-kernels-%s.json", e->o->dir, e->o->backend);
    rc = load(e, access(file, R_OK) == 0 ? file + strlen(e->o->dir) + 1 : "fgqos-kernels.json");
    if (rc == CORUN_OK && e->sc->napps != CORUN_EXP_TEN) {
        snprintf(e->why, e->why_len, "%s: %zu apps, the experiment takes %d", e->sc->name,
                 e->sc->napps, CORUN_EXP_TEN);
        corun__exp_unload(e);
        rc = CORUN_EINVAL;
    }
    return rc;
}

/* The ten kernels' pairs (ordered: every (a, b) with a != b; else a < b),
 * as many as --max-sets allows, into pairs (*np of them), every kernel alone
 * into all; then the profiles `needs` asks for, and the store into e->store. */
int corun__exp_ten_pairs(ectx *e, bool ordered, unsigned needs, int (*pairs)[3], size_t *np,
                     int (*all)[3])
{
    int a, b;

    *np = 0;
    for (a = 0; a < CORUN_EXP_TEN; a++) {
        all[a][0] = a;
        all[a][1] = all[a][2] = -1;
        for (b = ordered ? 0 : a + 1; b < CORUN_EXP_TEN; b++) {
            if (a != b) {
                pairs[*np][0] = a;
                pairs[*np][1] = b;
                pairs[*np][2] = -1;
                (*np)++;
            }
        }
    }
    if (e->o->max_sets > 0 && *np > e->o->max_sets) {
        *np = e->o->max_sets;
    }
    if (corun__exp_ensure(e, all, CORUN_EXP_TEN, needs) != CORUN_OK) {
        return CORUN_ESTATE;
    }
    return corun__pstore_load_setting(e->o->env.settings.profile_path, &e->store, e->why,
                                      e->why_len);
}

json_t *corun__exp_run(const char *name, const corun__exp_opts *o, char *why, size_t why_len)
{
    static json_t *(*const fns[])(ectx *) = {exp_hpf,          exp_srt,       exp_spatial,
                                             exp_ffs,          exp_model,     exp_slate,
                                             corun__exp_fgqos, corun__exp_hsm};
    ectx e;
    size_t i;

    memset(&e, 0, sizeof(e));
    e.o = o;
    e.why = why;
    e.why_len = why_len;
    if (why_len > 0) {
        why[0] = '\0';
    }
    if (strcmp(name, "all") == 0) {
        json_t *root = json_object();
        for (i = 0; corun__exp_names[i] != NULL; i++) {
            json_t *r;
            if (strcmp(corun__exp_names[i], "fgqos") == 0 ||
                strcmp(corun__exp_names[i], "hsm") == 0) {
                continue; /* runs of their own: not FLEP's and Slate's */
            }
            r = corun__exp_run(corun__exp_names[i], o, why, why_len);
            if (r == NULL) {
                json_decref(root);
                return NULL;
            }
            json_object_set_new(root, corun__exp_names[i], r);
        }
        return root;
    }
    for (i = 0; corun__exp_names[i] != NULL; i++) {
        if (strcmp(name, corun__exp_names[i]) == 0) {
            json_t *r = fns[i](&e);
            if (r == NULL && why_len > 0 && why[0] == '\0') {
                snprintf(why, why_len, "experiment '%s' failed", name);
            }
            if (r != NULL) {
                json_object_set_new(r, "experiment", json_string(name));
                json_object_set_new(r, "backend", json_string(o->backend));
            }
            return r;
        }
    }
    snprintf(why, why_len,
             "unknown experiment '%s' (hpf, srt, spatial, ffs, model, slate, fgqos, hsm, all)",
             name);
    return NULL;
}
