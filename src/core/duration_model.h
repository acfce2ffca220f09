/*
 * duration_model.h — FLEP's kernel duration model (§4.2): per kernel, a
 * linear model of the solo duration in four launch features — grid size,
 * block size, an input-size hint and shared memory — fitted by ridge
 * regression (L2 penalty) to recorded solo runs (profile_store.h).
 *
 * Features are standardised (mean 0, standard deviation 1 over the training
 * runs) so one penalty suits them all; a feature that does not vary in the
 * training runs carries no information and gets weight 0. The intercept is
 * not penalised. With n runs, standardised features Z and durations y:
 *
 *     (Z'Z / n + lambda I) w = Z'(y - mean(y)) / n,   b = mean(y)
 *
 * a 4x4 system solved by Gaussian elimination with partial pivoting.
 */
#ifndef CORUN_CORE_DURATION_MODEL_H
#define CORUN_CORE_DURATION_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/profile_store.h"

#define CORUN_DM_NFEAT 4

typedef struct corun__dmodel {
    size_t n;                         /* runs it was fitted on */
    double mean[CORUN_DM_NFEAT];      /* standardisation */
    double sd[CORUN_DM_NFEAT];        /* 0: the feature did not vary, weight 0 */
    double w[CORUN_DM_NFEAT];         /* weights on standardised features */
    double b;                         /* intercept: mean training duration */
    double floor_ns;                  /* predictions are at least this (half the
                                         shortest training run) */
} corun__dmodel;

/* A model needs at least this many runs. */
#define CORUN_DM_MIN_RUNS 3

/* The features of a run, in model order. */
void corun__dm_features(const corun__prun *r, double x[CORUN_DM_NFEAT]);

/* Fits a model to runs[0..n). Returns CORUN_EINVAL if n < CORUN_DM_MIN_RUNS
 * or lambda < 0. */
int corun__dm_fit(const corun__prun *const *runs, size_t n, double lambda, corun__dmodel *out);

/* Predicted solo duration, ns, of a launch with these features. */
double corun__dm_predict(const corun__dmodel *m, const double x[CORUN_DM_NFEAT]);

/* Held-out error of the model of one kernel: every k-th run (k about
 * 1/holdout) is held out, the model is fitted on the others and judged on
 * them by the absolute percentage error |pred - real| / real. */
typedef struct corun__dm_eval {
    size_t ntrain, ntest;
    double mape;       /* mean absolute percentage error, as a fraction */
    double max_ape;    /* worst held-out run */
} corun__dm_eval;

/* CORUN_EINVAL when there are too few runs to fit and test (holdout in
 * (0, 1) and at least CORUN_DM_MIN_RUNS training runs and 1 test run). */
int corun__dm_evaluate(const corun__prun *const *runs, size_t n, double holdout, double lambda,
                       corun__dm_eval *out);

/* ---- the models of every kernel in a store, for one backend ------------- */

typedef struct corun__dm_entry {
    char kernel[64];
    corun__dmodel model;
} corun__dm_entry;

typedef struct corun__dm_set {
    corun__dm_entry *v;
    size_t n;
} corun__dm_set;

/* Fits a model for each kernel with enough runs on `backend` in the store. */
int corun__dm_set_build(const corun__pstore *ps, const char *backend, double lambda,
                        corun__dm_set *out);
void corun__dm_set_free(corun__dm_set *set);
/* The models of the store the PROFILE_PATH setting names, for one backend:
 * without a readable store, none (every kernel simply has no model). keep,
 * if not NULL, receives the store's records (initialised empty without one;
 * the caller frees them), else they are freed. CORUN_ENOMEM, nothing kept. */
int corun__dm_set_load(const char *profile_path, const char *backend, double lambda,
                       corun__dm_set *out, corun__pstore *keep);
/* The model of a kernel, or NULL. */
const corun__dmodel *corun__dm_set_find(const corun__dm_set *set, const char *kernel);

/* The runs of one kernel on one backend, in store order; *out is malloc'd
 * (free it), NULL when there are none. */
int corun__dm_runs_of(const corun__pstore *ps, const char *backend, const char *kernel,
                      const corun__prun ***out, size_t *n);

#endif
