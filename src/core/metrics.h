/*
 * metrics.h — the co-location metrics the papers use (Eyerman & Eeckhout,
 * as cited by SMGuard §6.1 and HSM):
 *   NTT_i  = T_i^shared / T_i^solo          normalized turnaround time
 *   ANTT   = (1/N) sum NTT_i                average NTT (lower is better)
 *   NP_i   = T_i^solo / T_i^shared          normalized progress
 *   STP    = sum NP_i                       system throughput (higher is better)
 *   fairness = min NP_i / max NP_i          1 is perfectly fair
 */
#ifndef CORUN_CORE_METRICS_H
#define CORUN_CORE_METRICS_H

#include <stddef.h>

typedef struct corun__app_times {
    double solo_ns;    /* turnaround alone on the GPU */
    double shared_ns;  /* turnaround under co-location */
} corun__app_times;

typedef struct corun__colocation {
    double antt;
    double stp;
    double fairness;
} corun__colocation;

/* Returns CORUN_EINVAL if n == 0 or any time is not positive. */
int corun__colocation_calc(const corun__app_times *apps, size_t n, corun__colocation *out);

/* The p-th percentile (0..100) of v[0..n), linear between closest ranks
 * (the "R-7" definition). v is sorted in place. n > 0. */
double corun__percentile(double *v, size_t n, double p);

/* Mean and median of v[0..n); v is sorted in place by median. */
double corun__mean(const double *v, size_t n);
double corun__median(double *v, size_t n);

#endif
