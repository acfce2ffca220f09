/* duration_model.c — ridge regression of kernel durations (duration_model.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/duration_model.h"
#include "corun/corun.h"

void corun__dm_features(const corun__prun *r, double x[CORUN_DM_NFEAT])
{
    x[0] = r->grid;
    x[1] = r->block;
    x[2] = r->size;
    x[3] = r->smem;
}

/* Solves a x = y in place (a is n x n, row-major) by Gaussian elimination
 * with partial pivoting. A pivot below eps leaves that unknown at 0: with
 * lambda = 0 and two features that move together (grid and size hint), the
 * system is singular, and one of the two then carries the weight. */
static void solve(double *a, double *y, double *x, int n)
{
    const double eps = 1e-12;
    int col, row, i, j;
    int used[CORUN_DM_NFEAT] = {0};
    int piv_row[CORUN_DM_NFEAT];

    for (col = 0; col < n; col++) {
        int best = -1;
        double bv = eps;
        for (row = 0; row < n; row++) {
            if (!used[row] && fabs(a[row * n + col]) > bv) {
                bv = fabs(a[row * n + col]);
                best = row;
            }
        }
        piv_row[col] = best;
        if (best < 0) {
            continue;
        }
        used[best] = 1;
        for (row = 0; row < n; row++) {
            double f;
            if (row == best || a[row * n + col] == 0) {
                continue;
            }
            f = a[row * n + col] / a[best * n + col];
            for (j = col; j < n; j++) {
                a[row * n + j] -= f * a[best * n + j];
            }
            y[row] -= f * y[best];
        }
    }
    for (i = 0; i < n; i++) {
        x[i] = piv_row[i] < 0 ? 0 : y[piv_row[i]] / a[piv_row[i] * n + i];
    }
}

int corun__dm_fit(const corun__prun *const *runs, size_t n, double lambda, corun__dmodel *out)
{
    double a[CORUN_DM_NFEAT * CORUN_DM_NFEAT] = {0}, rhs[CORUN_DM_NFEAT] = {0};
    double x[CORUN_DM_NFEAT], ymean = 0, ymin = INFINITY;
    size_t i;
    int f, g;

    if (n < CORUN_DM_MIN_RUNS || !(lambda >= 0)) {
        return CORUN_EINVAL;
    }
    memset(out, 0, sizeof(*out));
    out->n = n;
    for (i = 0; i < n; i++) {
        corun__dm_features(runs[i], x);
        for (f = 0; f < CORUN_DM_NFEAT; f++) {
            out->mean[f] += x[f];
        }
        ymean += runs[i]->dur_ns;
        ymin = fmin(ymin, runs[i]->dur_ns);
    }
    ymean /= (double)n;
    for (f = 0; f < CORUN_DM_NFEAT; f++) {
        out->mean[f] /= (double)n;
    }
    for (i = 0; i < n; i++) {
        corun__dm_features(runs[i], x);
        for (f = 0; f < CORUN_DM_NFEAT; f++) {
            double d = x[f] - out->mean[f];
            out->sd[f] += d * d;
        }
    }
    for (f = 0; f < CORUN_DM_NFEAT; f++) {
        out->sd[f] = sqrt(out->sd[f] / (double)n);
        /* Relative test: a feature equal in every run varies by rounding only. */
        if (out->sd[f] <= 1e-9 * fabs(out->mean[f])) {
            out->sd[f] = 0;
        }
    }
    for (i = 0; i < n; i++) {
        double z[CORUN_DM_NFEAT], dy = runs[i]->dur_ns - ymean;
        corun__dm_features(runs[i], x);
        for (f = 0; f < CORUN_DM_NFEAT; f++) {
            z[f] = out->sd[f] > 0 ? (x[f] - out->mean[f]) / out->sd[f] : 0;
        }
        for (f = 0; f < CORUN_DM_NFEAT; f++) {
            for (g = 0; g < CORUN_DM_NFEAT; g++) {
                a[f * CORUN_DM_NFEAT + g] += z[f] * z[g] / (double)n;
            }
            rhs[f] += z[f] * dy / (double)n;
        }
    }
    for (f = 0; f < CORUN_DM_NFEAT; f++) {
        if (out->sd[f] > 0) {
            a[f * CORUN_DM_NFEAT + f] += lambda;
        }
    }
    solve(a, rhs, out->w, CORUN_DM_NFEAT);
    out->b = ymean;
    out->floor_ns = 0.5 * ymin;
    return CORUN_OK;
}

double corun__dm_predict(const corun__dmodel *m, const double x[CORUN_DM_NFEAT])
{
    double y = m->b;
    int f;

    for (f = 0; f < CORUN_DM_NFEAT; f++) {
        if (m->sd[f] > 0) {
            y += m->w[f] * (x[f] - m->mean[f]) / m->sd[f];
        }
    }
    return y > m->floor_ns ? y : m->floor_ns;
}

int corun__dm_evaluate(const corun__prun *const *runs, size_t n, double holdout, double lambda,
                       corun__dm_eval *out)
{
    const corun__prun **train;
    corun__dmodel m;
    size_t k, i, ntrain = 0, ntest = 0;
    double sum = 0, worst = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!(holdout > 0 && holdout < 1)) {
        return CORUN_EINVAL;
    }
    k = (size_t)lround(1.0 / holdout);
    if (k < 2) {
        k = 2;
    }
    if (n < k || n - n / k < CORUN_DM_MIN_RUNS) {
        return CORUN_EINVAL;
    }
    train = malloc(n * sizeof(*train));
    if (train == NULL) {
        return CORUN_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        if (i % k != k - 1) {
            train[ntrain++] = runs[i];
        }
    }
    rc = corun__dm_fit(train, ntrain, lambda, &m);
    free(train);
    if (rc != CORUN_OK) {
        return rc;
    }
    for (i = k - 1; i < n; i += k) {
        double x[CORUN_DM_NFEAT], ape;
        corun__dm_features(runs[i], x);
        ape = fabs(corun__dm_predict(&m, x) - runs[i]->dur_ns) / runs[i]->dur_ns;
        sum += ape;
        worst = fmax(worst, ape);
        ntest++;
    }
    out->ntrain = ntrain;
    out->ntest = ntest;
    out->mape = sum / (double)ntest;
    out->max_ape = worst;
    return CORUN_OK;
}

int corun__dm_runs_of(const corun__pstore *ps, const char *backend, const char *kernel,
                      const corun__prun ***out, size_t *n)
{
    const corun__prun **v;
    size_t i, m = 0;

    *out = NULL;
    *n = 0;
    for (i = 0; i < ps->nruns; i++) {
        m += strcmp(ps->runs[i].backend, backend) == 0 && strcmp(ps->runs[i].kernel, kernel) == 0;
    }
    if (m == 0) {
        return CORUN_OK;
    }
    v = malloc(m * sizeof(*v));
    if (v == NULL) {
        return CORUN_ENOMEM;
    }
    for (i = 0, m = 0; i < ps->nruns; i++) {
        if (strcmp(ps->runs[i].backend, backend) == 0 && strcmp(ps->runs[i].kernel, kernel) == 0) {
            v[m++] = &ps->runs[i];
        }
    }
    *out = v;
    *n = m;
    return CORUN_OK;
}

const corun__dmodel *corun__dm_set_find(const corun__dm_set *set, const char *kernel)
{
    size_t i;

    for (i = 0; i < set->n; i++) {
        if (strcmp(set->v[i].kernel, kernel) == 0) {
            return &set->v[i].model;
        }
    }
    return NULL;
}

void corun__dm_set_free(corun__dm_set *set)
{
    free(set->v);
    set->v = NULL;
    set->n = 0;
}

int corun__dm_set_load(const char *profile_path, const char *backend, double lambda,
                       corun__dm_set *out, corun__pstore *keep)
{
    corun__pstore ps;
    int rc = CORUN_OK;

    memset(out, 0, sizeof(*out));
    if (keep != NULL) {
        corun__pstore_init(keep);
    }
    if (corun__pstore_load_setting(profile_path, &ps, NULL, 0) != CORUN_OK) {
        return CORUN_OK;
    }
    rc = corun__dm_set_build(&ps, backend, lambda, out);
    if (rc == CORUN_OK && keep != NULL) {
        *keep = ps;
    } else {
        corun__pstore_free(&ps);
    }
    return rc;
}

int corun__dm_set_build(const corun__pstore *ps, const char *backend, double lambda,
                        corun__dm_set *out)
{
    size_t i;

    out->v = NULL;
    out->n = 0;
    for (i = 0; i < ps->nruns; i++) {
        const corun__prun *r = &ps->runs[i];
        const corun__prun **runs;
        corun__dm_entry *e;
        size_t n;
        int rc;

        if (strcmp(r->backend, backend) != 0 || corun__dm_set_find(out, r->kernel) != NULL) {
            continue;
        }
        rc = corun__dm_runs_of(ps, backend, r->kernel, &runs, &n);
        if (rc != CORUN_OK) {
            corun__dm_set_free(out);
            return rc;
        }
        if (n >= CORUN_DM_MIN_RUNS) {
            e = realloc(out->v, (out->n + 1) * sizeof(*e));
            if (e == NULL) {
                free(runs);
                corun__dm_set_free(out);
                return CORUN_ENOMEM;
            }
            out->v = e;
            e = &out->v[out->n];
            memset(e, 0, sizeof(*e));
            snprintf(e->kernel, sizeof(e->kernel), "%s", r->kernel);
            rc = corun__dm_fit(runs, n, lambda, &e->model);
            if (rc == CORUN_OK) {
                out->n++;
            }
        }
        free(runs);
    }
    return CORUN_OK;
}
