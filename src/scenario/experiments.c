/*
 * experiments.c — the FLEP and Slate evaluations over scenarios/
 * (experiments.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/duration_model.h"
#include "core/hsm.h"
#include "core/intensity.h"
#include "core/metrics.h"
#include "core/policy.h"
#include "core/profile_store.h"
#include "scenario/experiments.h"

const char *const corun__exp_names[] = {"hpf",   "srt",   "spatial", "ffs",
                                        "model", "slate", "fgqos",   "hsm", NULL};

/* FLEP's benchmarks (Table 1) and the sets its figures use. */
static const char *const flep_all[] = {"cfd", "nn", "pf", "pl", "md", "spmv", "mm", "va", NULL};
static const char *const flep_low[] = {"cfd", "nn", "pf", "pl", NULL};        /* Fig. 8, 13 */
static const char *const flep_short[] = {"md", "mm", "spmv", "va", NULL};     /* Fig. 10 */

#define MAX_SETS 64
/* fgqos: the ten kernels' 90 ordered pairs and 60 trios of each kind */
#define FQ_KERNELS 10
#define FQ_TRIOS 60
#define FQ_GOALS 10

typedef struct ectx {
    const corun__exp_opts *o;
    corun__scenario *sc;            /* the experiment's scenario file */
    bool solo_done[CORUN_SCENARIO_MAX_APPS];
    double solo_mean[CORUN_SCENARIO_MAX_APPS];   /* turnaround alone, ns */
    double solo_rate[CORUN_SCENARIO_MAX_APPS];   /* kernels per second alone */
    bool wsolo_done[CORUN_SCENARIO_MAX_APPS];
    double wsolo_rate[CORUN_SCENARIO_MAX_APPS];  /* the same as corun's workers */
    corun__pstore store;            /* fgqos: the profile store its goals are fractions of */
    /* fgqos: a QoS kernel's rate alone measured right after the last set of
     * cases (fresh: no case ran since), kernels per second */
    bool adj_fresh[CORUN_SCENARIO_MAX_APPS];
    double adj_rate[CORUN_SCENARIO_MAX_APPS];
    double adj_lo[CORUN_SCENARIO_MAX_APPS], adj_hi[CORUN_SCENARIO_MAX_APPS]; /* over the run */
    char *why;
    size_t why_len;
} ectx;

__attribute__((format(printf, 2, 3))) static void progress_line(const corun__exp_opts *o,
                                                                 const char *fmt, ...)
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

static void unload(ectx *e)
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
        unload(e);
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
static corun__scenario *pick(const ectx *e, const int *idx, size_t n)
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
    p = pick(e, &i, 1);
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
static int solo(ectx *e, int i)
{
    return solo_under(e, i, "mps", e->solo_done, e->solo_rate, e->solo_mean);
}

/* The file's app i alone as corun's workers on the whole GPU, in kernels per
 * second: the median of three windows of corun__scenario_rate_alone, the
 * isolated rate fgqos's goals are fractions of, measured as `corun profile`
 * measures it (a loop of launches through the scheduler now and then has a
 * slow window). */
static int rate_alone(ectx *e, int i, double *per_s)
{
    const corun_dim3 *g = &e->sc->apps[i].kernel.grid;
    double r[3];
    int w;

    for (w = 0; w < 3; w++) {
        corun__scenario *p = pick(e, &i, 1);
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
    return CORUN_OK;
}

/* rate_alone of app i once per experiment, into e->wsolo_rate[i]. */
static int solo_workers(ectx *e, int i)
{
    int rc = CORUN_OK;

    if (!e->wsolo_done[i]) {
        rc = rate_alone(e, i, &e->wsolo_rate[i]);
        e->wsolo_done[i] = rc == CORUN_OK;
    }
    return rc;
}

/* Runs apps idx[0..n) of the file under a policy, with these settings. */
static int run_set(ectx *e, const int *idx, size_t n, const char *policy,
                   const corun__settings *set, corun__run_result *out)
{
    corun__scenario *p = pick(e, idx, n);
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
        rc = solo(e, idx[i]);
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
        rc = solo(e, idx[i]);
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
static int ensure(ectx *e, int (*sets)[3], size_t n, unsigned needs)
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
    p = pick(e, idx, m);
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
    json_object_set_new(root, key, n ? json_real(sum / n) : json_null());
    snprintf(key, sizeof(key), "min_%s", prefix);
    json_object_set_new(root, key, n ? json_real(lo) : json_null());
    snprintf(key, sizeof(key), "max_%s", prefix);
    json_object_set_new(root, key, n ? json_real(hi) : json_null());
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
        progress_line(e->o, "hpf %s + %s: high-priority speedup %.2fx", m.apps[0].name,
                      m.apps[1].name, speedup[i]);
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f}", "low", m.apps[0].name, "high",
                           m.apps[1].name, "high_mps_us", m.apps[1].mean_ns * 1e-3,
                           "high_flep_us", f.apps[1].mean_ns * 1e-3, "low_mps_us",
                           m.apps[0].mean_ns * 1e-3, "low_flep_us", f.apps[0].mean_ns * 1e-3,
                           "speedup", speedup[i]));
        corun__run_result_free(&m);
        corun__run_result_free(&f);
    }
    json_object_set_new(root, "pairs", arr);
    summary(root, "speedup", speedup, n);
    unload(e);
    return root;
out_fail:
    json_decref(root);
    json_decref(arr);
    unload(e);
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
    if (ensure(e, sets, n, CORUN_POLICY_NEEDS_DURATIONS) != CORUN_OK) {
        unload(e);
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
        o = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "antt_mps", cm.antt, "antt_flep",
                      cf.antt, "antt_gain", gain[i], "stp_mps", cm.stp, "stp_flep", cf.stp,
                      "throughput_mps", tm, "throughput_flep", tf);
        json_object_set_new(o, "throughput_loss", json_real(loss[i]));
        for (j = 0; j < k; j++) {
            char key[16];
            snprintf(key, sizeof(key), "%s", j == 0 ? "long" : j == 1 ? "short" : "short2");
            json_object_set_new(o, key, json_string(m.apps[j].name));
        }
        progress_line(e->o, "srt %s + %s%s%s: ANTT %.2f -> %.2f (%.2fx)", m.apps[0].name,
                      m.apps[1].name, k == 3 ? " + " : "", k == 3 ? m.apps[2].name : "", cm.antt,
                      cf.antt, gain[i]);
        json_array_append_new(i < npairs ? pairs : triplets, o);
        corun__run_result_free(&m);
        corun__run_result_free(&f);
    }
    json_object_set_new(root, "pairs", pairs);
    json_object_set_new(root, "triplets", triplets);
    summary(root, "antt_gain", gain, npairs);
    summary(root, "throughput_loss", loss, npairs);
    summary(root, "triplet_antt_gain", gain + npairs, n - npairs);
    unload(e);
    return root;
out_fail:
    json_decref(root);
    json_decref(pairs);
    json_decref(triplets);
    unload(e);
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
        o = json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "low", m.apps[0].name,
                      "high", m.apps[1].name, "t_org_us", m.span_ns * 1e-3, "spatial_us",
                      sp.span_ns * 1e-3, "temporal_us", tp.span_ns * 1e-3, "overhead_spatial",
                      ovs[i], "overhead_temporal", ovt[i], "high_spatial_us",
                      sp.apps[1].mean_ns * 1e-3, "high_temporal_us", tp.apps[1].mean_ns * 1e-3);
        if (ovt[i] > 0) {
            reduction[nred] = 1 - ovs[i] / ovt[i];
            json_object_set_new(o, "reduction", json_real(reduction[nred]));
            nred++;
        }
        progress_line(e->o, "spatial %s + %s: overhead %.2f%% spatial, %.2f%% temporal",
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
    unload(e);
    return root;
out_fail:
    json_decref(root);
    json_decref(arr);
    unload(e);
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
        progress_line(e->o,
                      "ffs %s (w1) + %s (w2): shares %.3f / %.3f (of the time held: %.3f / %.3f), "
                      "throughput lost %.2f%%",
                      f.apps[0].name, f.apps[1].name, lo[i], hi[i], 1 - hi_held[i], hi_held[i],
                      ovh[i] * 100);
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "low", f.apps[0].name,
                           "high", f.apps[1].name, "share_low", lo[i], "share_high", hi[i],
                           "held", held[i], "held_share_high", hi_held[i], "throughput", tp,
                           "overhead", ovh[i]));
        corun__run_result_free(&f);
    }
    json_object_set_new(root, "pairs", arr);
    json_object_set_new(root, "max_overhead_setting",
                        json_real(e->o->env.settings.ffs_max_overhead));
    summary(root, "share_high", hi, n);
    summary(root, "share_low", lo, n);
    summary(root, "held", held, n);
    summary(root, "held_share_high", hi_held, n);
    summary(root, "overhead", ovh, n);
    unload(e);
    return root;
out_fail:
    json_decref(root);
    json_decref(arr);
    unload(e);
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
    if (ensure(e, sets, n, CORUN_POLICY_NEEDS_DURATIONS) != CORUN_OK ||
        corun__pstore_path(e->o->env.settings.profile_path, path, sizeof(path), e->why,
                           e->why_len) != CORUN_OK ||
        corun__pstore_load(path, &ps, NULL, 0) != CORUN_OK) {
        unload(e);
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
            progress_line(e->o, "model %s: %zu runs, held-out error %.2f%% (worst %.2f%%)", kernel,
                          nr, ev.mape * 100, ev.max_ape * 100);
            json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:f, s:f}", "kernel", kernel,
                                                 "train", (json_int_t)ev.ntrain, "test",
                                                 (json_int_t)ev.ntest, "mape", ev.mape, "max_ape",
                                                 ev.max_ape));
        }
        free(runs);
    }
    corun__pstore_free(&ps);
    json_object_set_new(root, "kernels", arr);
    summary(root, "mape", mape, nk);
    unload(e);
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
    if (ensure(e, sets, n, CORUN_POLICY_NEEDS_PROFILES) != CORUN_OK ||
        corun__pstore_path(e->o->env.settings.profile_path, path, sizeof(path), e->why,
                           e->why_len) != CORUN_OK ||
        corun__pstore_load(path, &ps, NULL, 0) != CORUN_OK) {
        unload(e);
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
        progress_line(e->o,
                      "slate %s (%s) + %s (%s): %s, co-ran %.0f%% of the time, STP %.3f vs mps %.3f",
                      s.apps[0].name, corun__kclass_name(cls[0]), s.apps[1].name,
                      corun__kclass_name(cls[1]), expect ? "corun" : "solo", frac * 100, cs.stp,
                      cm.stp);
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "a",
                           s.apps[0].name, "b", s.apps[1].name, "class_a",
                           corun__kclass_name(cls[0]), "class_b", corun__kclass_name(cls[1]),
                           "decision", expect ? "corun" : "solo", "corun_fraction", frac,
                           "stp_mps", cm.stp, "stp_slate", cs.stp, "gain", gain[i], "antt_mps",
                           cm.antt, "antt_slate", cs.antt));
        corun__run_result_free(&m);
        corun__run_result_free(&s);
    }
    corun__pstore_free(&ps);
    json_object_set_new(root, "pairs", arr);
    summary(root, "gain", gain, n);
    json_object_set_new(root, "mean_corun_gain", ncorun ? json_real(corun_gain / ncorun)
                                                       : json_null());
    unload(e);
    return root;
out_fail:
    corun__pstore_free(&ps);
    json_decref(root);
    json_decref(arr);
    unload(e);
    return NULL;
}


/* ---- fgqos: fine-grained QoS (qos-fine-grained.md §4) ---------------------- */

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
    corun__scenario *p = pick(e, idx, n);
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
        rc = solo(e, idx[i]);
        if (rc == CORUN_OK) {
            rc = solo_workers(e, idx[i]);
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
    return json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:o, s:o}", "cases", (json_int_t)t->cases,
                     "met", (json_int_t)t->met, "qos_reach",
                     t->cases ? (double)t->met / t->cases : 0.0, "qos_reach_start",
                     t->cases ? (double)t->met_start / t->cases : 0.0,
                     "qos_reach_plain", t->cases ? (double)t->met_plain / t->cases : 0.0,
                     "qos_reach_store", t->cases ? (double)t->met_store / t->cases : 0.0,
                     "nonqos_throughput_met",
                     t->met ? json_real(t->nq_sum / t->met) : json_null(), "qos_over_goal_met",
                     t->met ? json_real(t->over_sum / t->met) : json_null());
}

/* App k's rate alone next to a set of cases: the last measurement where no
 * case ran since, else a new one; e->adj_lo/hi keep its range over the run
 * as a fraction of its rate at the start. */
static int adjacent_rate(ectx *e, int k, double *per_s)
{
    double f;
    int rc = CORUN_OK;

    if (!e->adj_fresh[k]) {
        rc = rate_alone(e, k, &e->adj_rate[k]);
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

/* One set of cases: apps idx[0..n), the first nq of them with a goal, every
 * goal of the sweep (from g0 in steps of 0.05) under schemes s0..s1. A QoS
 * kernel's case is counted against its rate alone measured right before and
 * right after the set (the mean of the two): on the H100 a kernel's rate
 * alone moves by several percent over a run, the plain kernel's as much
 * (bench/results/h100-2026-11-27-rate-drift), so a reference from the
 * run's start would count the machine's drift as the policy's. */
static int fq_set(ectx *e, const int *idx, size_t n, size_t nq, double g0, size_t s0, size_t s1,
                  fq_tally *tally, json_t *cases, size_t met[FQ_NSCHEMES])
{
    fq_got got[FQ_GOALS][FQ_NSCHEMES][3];
    double before[2], after[2];
    size_t g, sc, i;
    int rc = CORUN_OK;

    for (i = 0; i < nq && rc == CORUN_OK; i++) {
        rc = adjacent_rate(e, idx[i], &before[i]);
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
        rc = adjacent_rate(e, idx[i], &after[i]);
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
                    cases, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "qos",
                                     e->sc->apps[idx[0]].name, "other", e->sc->apps[idx[1]].name,
                                     "scheme", fq_schemes[sc], "goal", goal[0], "qos_rate",
                                     gt[0].adjacent, "qos_rate_start", gt[0].workers,
                                     "qos_rate_plain", gt[0].plain, "qos_rate_store",
                                     gt[0].store, "alone_moved", after[0] / before[0],
                                     "other_rate", gt[1].workers));
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

    for (a = 0; a < FQ_KERNELS; a++) {
        for (b = 0; b < FQ_KERNELS; b++) {
            for (c = 0; c < FQ_KERNELS; c++) {
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

/* The ten kernels of fgqos and hsm: as a backend runs them where a file
 * says so (the GPU's real kernels at their own sizes), else as the
 * simulator models them. */
static int load_ten(ectx *e)
{
    char file[4096];
    int rc;

    snprintf(file, sizeof(file), "%s/fgqos-kernels-%s.json", e->o->dir, e->o->backend);
    rc = load(e, access(file, R_OK) == 0 ? file + strlen(e->o->dir) + 1 : "fgqos-kernels.json");
    if (rc == CORUN_OK && e->sc->napps != FQ_KERNELS) {
        snprintf(e->why, e->why_len, "%s: %zu apps, the experiment takes %d", e->sc->name,
                 e->sc->napps, FQ_KERNELS);
        unload(e);
        rc = CORUN_EINVAL;
    }
    return rc;
}

/* The ten kernels' pairs (ordered: every (a, b) with a != b; else a < b),
 * as many as --max-sets allows, into pairs (*np of them), every kernel alone
 * into all; then the profiles `needs` asks for, and the store into e->store. */
static int ten_pairs(ectx *e, bool ordered, unsigned needs, int (*pairs)[3], size_t *np,
                     int (*all)[3])
{
    int a, b;

    *np = 0;
    for (a = 0; a < FQ_KERNELS; a++) {
        all[a][0] = a;
        all[a][1] = all[a][2] = -1;
        for (b = ordered ? 0 : a + 1; b < FQ_KERNELS; b++) {
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
    if (ensure(e, all, FQ_KERNELS, needs) != CORUN_OK) {
        return CORUN_ESTATE;
    }
    return corun__pstore_load_setting(e->o->env.settings.profile_path, &e->store, e->why,
                                      e->why_len);
}

static json_t *exp_fgqos(ectx *e)
{
    int pairs[FQ_KERNELS * FQ_KERNELS][3], trios[FQ_TRIOS][3], all[FQ_KERNELS][3];
    fq_tally pt[FQ_NSCHEMES], t1[FQ_NSCHEMES], t2[FQ_NSCHEMES];
    size_t np = 0, nt, i, sc, two;
    json_t *root = NULL, *cases = NULL;
    int a;

    memset(pt, 0, sizeof(pt));
    memset(t1, 0, sizeof(t1));
    memset(t2, 0, sizeof(t2));
    if (load_ten(e) != CORUN_OK) {
        return NULL;
    }
    if (ten_pairs(e, true, corun__policy_fgqos.needs, pairs, &np, all) != CORUN_OK) {
        goto fail;
    }
    /* every case's reference, each kernel's rate alone, measured first, as
     * close in time to the store's as the run allows */
    for (a = 0; a < FQ_KERNELS; a++) {
        if (solo_workers(e, a) != CORUN_OK) {
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
        for (a = 0; a < FQ_KERNELS; a++) {
            const double goal = 0;
            fq_got got;
            if (fq_case(e, &all[a][0], 1, &goal, "rollover", &got) != CORUN_OK) {
                json_decref(alone);
                goto fail;
            }
            json_object_set_new(alone, e->sc->apps[a].name, json_real(got.workers));
            sum += got.workers;
        }
        progress_line(e->o, "fgqos: each kernel alone as a non-QoS kernel, %.3f of its rate alone "
                            "(mean of %d)",
                      sum / FQ_KERNELS, FQ_KERNELS);
        json_object_set_new(root, "alone_nonqos", alone);
        json_object_set_new(root, "mean_alone_nonqos", json_real(sum / FQ_KERNELS));
    }
    for (i = 0; i < np; i++) {
        size_t met[FQ_NSCHEMES] = {0};
        if (fq_set(e, pairs[i], 2, 1, 0.50, 0, FQ_NSCHEMES - 1, pt, cases, met) != CORUN_OK) {
            goto fail;
        }
        progress_line(e->o,
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
            progress_line(e->o, "fgqos trio %s%s + %s%s + %s: goals met of %d: rollover %zu, "
                                "spart %zu",
                          e->sc->apps[trios[i][0]].name, " (QoS)", e->sc->apps[trios[i][1]].name,
                          two ? " (QoS)" : "", e->sc->apps[trios[i][2]].name, FQ_GOALS,
                          met[FQ_ROLLOVER], met[FQ_SPART]);
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
        for (a = 0; a < FQ_KERNELS; a++) {
            if (e->adj_hi[a] > 0) {
                json_object_set_new(lo, e->sc->apps[a].name, json_real(e->adj_lo[a]));
                json_object_set_new(hi, e->sc->apps[a].name, json_real(e->adj_hi[a]));
            }
            if (rate_alone(e, a, &again[a]) != CORUN_OK) {
                goto fail;
            }
            json_object_set_new(moved, e->sc->apps[a].name,
                                json_real(again[a] / e->wsolo_rate[a]));
            progress_line(e->o, "fgqos: %s alone at the end, %.3f of its rate at the start",
                          e->sc->apps[a].name, again[a] / e->wsolo_rate[a]);
        }
    }
    json_object_set_new(root, "epoch_us", json_real(e->o->env.settings.fgqos_epoch_us));
    json_object_set_new(root, "cases", cases);
    corun__pstore_free(&e->store);
    unload(e);
    return root;
fail:
    json_decref(root);
    json_decref(cases);
    corun__pstore_free(&e->store);
    unload(e);
    return NULL;
}

/* ---- hsm: HSM's prediction, HSM-Fair and HSM-QoS (hsm.md §6) --------------- */

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
    corun__scenario *p = pick(e, idx, 2);
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
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "np_a", np[0], "np_b", np[1],
                     "share_a", got[0].share, "share_b", got[1].share, "fairness",
                     fmax(np[0], np[1]) > 0 ? fmin(np[0], np[1]) / fmax(np[0], np[1]) : 0.0,
                     "stp", np[0] + np[1], "antt",
                     np[0] > 0 && np[1] > 0 ? (1 / np[0] + 1 / np[1]) / 2 : 0.0);
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
static json_t *exp_hsm(ectx *e)
{
    int pairs[FQ_KERNELS * FQ_KERNELS / 2][3], all[FQ_KERNELS][3];
    bool memory[FQ_KERNELS];
    double iso[FQ_KERNELS], err_sum = 0, err_max = 0, sum[6] = {0}, qnp_min = INFINITY;
    size_t np = 0, i, nerr = 0, nq = 0, met = 0, met_fixed = 0;
    json_t *root = NULL, *list = NULL;
    int a;

    if (load_ten(e) != CORUN_OK) {
        return NULL;
    }
    /* windows of HS_WINDOW_MS at least, unless --duration-ms says otherwise:
     * the policies move SMs at epochs' ends and need a few to settle */
    e->sc->duration_ns = fmax(e->sc->duration_ns, HS_WINDOW_MS * 1e6);
    if (ten_pairs(e, false, corun__policy_hsm_fair.needs, pairs, &np, all) != CORUN_OK) {
        goto fail;
    }
    for (a = 0; a < FQ_KERNELS; a++) {
        const corun__kspec *k = &e->sc->apps[a].kernel;
        memory[a] = corun__hsm_memory_bound(
            corun__pstore_find_prof(&e->store, e->o->backend, k->name), &e->o->env.settings);
        iso[a] = corun__pstore_own_rate(&e->store, e->o->backend, k->name,
                                        (double)k->grid.x * k->grid.y * k->grid.z,
                                        (double)k->block.x * k->block.y * k->block.z);
        if (solo_workers(e, a) != CORUN_OK) {
            goto fail;
        }
    }
    root = json_object();
    list = json_array();
    for (i = 0; i < np; i++) {
        const int *idx = pairs[i];
        const int high = memory[idx[0]] != memory[idx[1]] ? (memory[idx[0]] ? 0 : 1) : -1;
        double before[2], after[2], alone[2], n_even[2], n_fair[2], n_qos[2], n_fix[2];
        hs_got even[2], fair[2], q[2], fix[2];
        json_t *o;
        int j, rc = CORUN_OK;
        for (j = 0; j < 2 && rc == CORUN_OK; j++) {
            rc = adjacent_rate(e, idx[j], &before[j]);
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
            rc = adjacent_rate(e, idx[j], &after[j]);
        }
        if (rc != CORUN_OK) {
            goto fail;
        }
        for (j = 0; j < 2; j++) {
            const corun_dim3 *g = &e->sc->apps[idx[j]].kernel.grid;
            alone[j] = (before[j] + after[j]) * 0.5 * 1e-9 * g->x * g->y * g->z;
        }
        o = json_pack("{s:s, s:s, s:b, s:b}", "a", e->sc->apps[idx[0]].name, "b",
                      e->sc->apps[idx[1]].name, "memory_bound_a", memory[idx[0]],
                      "memory_bound_b", memory[idx[1]]);
        json_object_set_new(o, "even", hs_view(even, alone, n_even));
        json_object_set_new(o, "hsm_fair", hs_view(fair, alone, n_fair));
        {
            /* the model's NP of each kernel in both runs, against the measured */
            json_t *pe = json_array();
            const hs_got *runs[2] = {even, fair};
            const double *meas[2] = {n_even, n_fair};
            int r;
            for (r = 0; r < 2; r++) {
                for (j = 0; j < 2; j++) {
                    const double pred = corun__hsm_np(memory[idx[j]], runs[r][j].share,
                                                      runs[r][j].rate, iso[idx[j]]);
                    const double err = meas[r][j] > 0 ? fabs(pred - meas[r][j]) / meas[r][j] : 0;
                    json_array_append_new(pe, json_real(err));
                    err_sum += err;
                    err_max = fmax(err_max, err);
                    nerr++;
                }
            }
            json_object_set_new(o, "prediction_error", pe);
        }
        {
            const json_t *ev = json_object_get(o, "even"), *fa = json_object_get(o, "hsm_fair");
            sum[0] += jnum(ev, "fairness");
            sum[1] += jnum(fa, "fairness");
            sum[2] += jnum(ev, "stp");
            sum[3] += jnum(fa, "stp");
            progress_line(e->o,
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
            progress_line(e->o,
                          "hsm-qos %s (high) + %s: its NP %.3f, STP %.3f; 80 %% of the SMs: %.3f, "
                          "%.3f",
                          e->sc->apps[idx[high]].name, e->sc->apps[idx[1 - high]].name,
                          n_qos[high], n_qos[0] + n_qos[1], n_fix[high], n_fix[0] + n_fix[1]);
        }
        json_array_append_new(list, o);
    }
    json_object_set_new(root, "pairs", list);
    list = NULL;
    if (np > 0) {
        json_object_set_new(root, "mean_fairness_even", json_real(sum[0] / (double)np));
        json_object_set_new(root, "mean_fairness_hsm_fair", json_real(sum[1] / (double)np));
        json_object_set_new(root, "mean_stp_even", json_real(sum[2] / (double)np));
        json_object_set_new(root, "mean_stp_hsm_fair", json_real(sum[3] / (double)np));
    }
    if (nerr > 0) {
        json_object_set_new(root, "prediction_error_mean", json_real(err_sum / (double)nerr));
        json_object_set_new(root, "prediction_error_worst", json_real(err_max));
    }
    json_object_set_new(root, "qos_pairs", json_integer((json_int_t)nq));
    if (nq > 0) {
        json_object_set_new(root, "qos_target", json_real(e->o->env.settings.hsm_qos_target));
        json_object_set_new(root, "qos_met", json_integer((json_int_t)met));
        json_object_set_new(root, "qos_met_proportional", json_integer((json_int_t)met_fixed));
        json_object_set_new(root, "qos_np_min", json_real(qnp_min));
        json_object_set_new(root, "mean_stp_hsm_qos", json_real(sum[4] / (double)nq));
        json_object_set_new(root, "mean_stp_proportional", json_real(sum[5] / (double)nq));
    }
    json_object_set_new(root, "epoch_us", json_real(e->o->env.settings.hsm_epoch_us));
    corun__pstore_free(&e->store);
    unload(e);
    return root;
fail:
    json_decref(root);
    json_decref(list);
    corun__pstore_free(&e->store);
    unload(e);
    return NULL;
}

json_t *corun__exp_run(const char *name, const corun__exp_opts *o, char *why, size_t why_len)
{
    static json_t *(*const fns[])(ectx *) = {exp_hpf,   exp_srt,   exp_spatial, exp_ffs,
                                             exp_model, exp_slate, exp_fgqos, exp_hsm};
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
