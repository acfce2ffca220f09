/*
 * bench_admit.c — the scheduler's cost to admit a kernel with 64 kernels in
 * flight (issue: decision cost). A null backend records launches and signals
 * and does nothing else, so what is timed is the scheduler and the SMGuard
 * policy: corun__sched_submit up to the launch call returning.
 *
 * Two cases, each timed per admission with CLOCK_MONOTONIC:
 *  - fits:   a batch kernel whose quota fits the free CapSMs
 *  - evicts: an LS kernel whose reservation exceeds the free CapSMs, so
 *            Algorithm 1 runs onlineResourceAdjust (evicts from a batch
 *            kernel) before launching it
 * After each timed admission the kernel is completed (untimed), which gives
 * evicted CapSMs back, so every iteration starts from the same state.
 * Prints one JSON object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/null/null.h"
#include "core/metrics.h"
#include "core/policy.h"
#include "core/sched.h"

#define IN_FLIGHT 64
#define ITERS 200000

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static corun__kspec spec(const char *name)
{
    corun__kspec k;
    memset(&k, 0, sizeof(k));
    snprintf(k.name, sizeof(k.name), "%s", name);
    k.grid = (corun_dim3){100000, 1, 1};
    k.block = (corun_dim3){256, 1, 1};
    k.shape.regs_per_thread = 32;
    return k;
}

static void finish(corun__backend *be, corun__sched *s, corun__job *k)
{
    corun__null_set_done(be, k->ex, k->tasks);
    while (k->inflight > 0) {
        corun__null_finish(be, (uint64_t)(uintptr_t)k);
        (void)corun__sched_step(s, corun__sched_now(s) + 1);
    }
    (void)corun__sched_step(s, corun__sched_now(s) + 1);
    corun__sched_release(s, k);
}

static void run_case(corun__backend *be, corun__sched *s, corun_class cls, uint32_t capsm,
                     double *t, const char *label, FILE *out, int last)
{
    corun__kspec k = spec(label);
    corun_launch_attr a = {.cls = cls, .capsm = capsm, .weight = 1};
    char why[128];
    int i;

    for (i = 0; i < ITERS; i++) {
        corun__job *kk = NULL;
        double t0 = now_ns();
        if (corun__sched_submit(s, &k, &a, NULL, NULL, &kk, why, sizeof(why)) != CORUN_OK) {
            fprintf(stderr, "submit failed: %s\n", why);
            exit(1);
        }
        t[i] = now_ns() - t0;
        finish(be, s, kk);
        if (i % 4096 == 0) {
            corun__null_clear(be);
        }
    }
    fprintf(out, "  \"%s\": {\"median_ns\": %.0f, \"p90_ns\": %.0f, \"p99_ns\": %.0f, \"iters\": %d}%s\n",
            label, corun__percentile(t, ITERS, 50), corun__percentile(t, ITERS, 90),
            corun__percentile(t, ITERS, 99), ITERS, last ? "" : ",");
}

int main(void)
{
    corun_gpu_desc d;
    corun__backend *be;
    corun__sched *s;
    corun__sched_opts o;
    corun__job *live[IN_FLIGHT];
    double *t = malloc(ITERS * sizeof(double));
    char why[128];
    int i;

    corun_gpu_desc_h100(&d);
    if (t == NULL || corun__null_create(&d, &be) != CORUN_OK) {
        return 1;
    }
    memset(&o, 0, sizeof(o));
    o.backend = be;
    o.policy = corun__policy_find("smguard");
    corun__settings_default(&o.settings);
    if (corun__sched_create(&o, &s) != CORUN_OK) {
        return 1;
    }
    /* 64 batch kernels in flight, 2 CapSMs each: 128 of 132 held. */
    for (i = 0; i < IN_FLIGHT; i++) {
        corun__kspec k = spec("batch");
        corun_launch_attr a = {.cls = CORUN_CLASS_BATCH, .capsm = 2, .weight = 1};
        if (corun__sched_submit(s, &k, &a, NULL, NULL, &live[i], why, sizeof(why)) != CORUN_OK) {
            fprintf(stderr, "setup: %s\n", why);
            return 1;
        }
    }
    printf("{\n  \"in_flight\": %d,\n", IN_FLIGHT);
    run_case(be, s, CORUN_CLASS_BATCH, 4, t, "admit_fits", stdout, 0);
    run_case(be, s, CORUN_CLASS_LS, 8, t, "admit_evicts", stdout, 1);
    printf("}\n");
    corun__sched_destroy(s);
    be->ops->destroy(be);
    free(t);
    return 0;
}
