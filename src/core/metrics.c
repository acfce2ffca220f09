/* metrics.c — ANTT, STP, fairness and percentiles. */
#include <stdlib.h>

#include "core/metrics.h"
#include "corun/corun.h"

int corun__colocation_calc(const corun__app_times *apps, size_t n, corun__colocation *out)
{
    double sum_ntt = 0, stp = 0, np_min = 0, np_max = 0;
    size_t i;

    if (n == 0) {
        return CORUN_EINVAL;
    }
    for (i = 0; i < n; i++) {
        double np;
        if (!(apps[i].solo_ns > 0) || !(apps[i].shared_ns > 0)) {
            return CORUN_EINVAL;
        }
        np = apps[i].solo_ns / apps[i].shared_ns;
        sum_ntt += apps[i].shared_ns / apps[i].solo_ns;
        stp += np;
        if (i == 0 || np < np_min) {
            np_min = np;
        }
        if (i == 0 || np > np_max) {
            np_max = np;
        }
    }
    out->antt = sum_ntt / (double)n;
    out->stp = stp;
    out->fairness = np_min / np_max;
    return CORUN_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double corun__percentile(double *v, size_t n, double p)
{
    double h;
    size_t lo;

    qsort(v, n, sizeof(*v), cmp_double);
    if (p <= 0) {
        return v[0];
    }
    if (p >= 100) {
        return v[n - 1];
    }
    h = (double)(n - 1) * p / 100.0;
    lo = (size_t)h;
    if (lo + 1 >= n) {
        return v[n - 1];
    }
    return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

double corun__mean(const double *v, size_t n)
{
    double s = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        s += v[i];
    }
    return n ? s / (double)n : 0;
}

double corun__median(double *v, size_t n)
{
    return corun__percentile(v, n, 50);
}
