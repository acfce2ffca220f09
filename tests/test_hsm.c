/* test_hsm.c — HSM-Fair and HSM-QoS (policies hsm-fair, hsm-qos) on the
 * simulator, each kernel's normalized progress (NP) measured from its
 * progress in an epoch over its rate alone:
 *  - hsm-fair lifts fairness (min NP / max NP) of a compute-bound and a
 *    memory-bound kernel from an even split's ~0.5 to its threshold (0.9)
 *    from the seventh epoch on (the first whole epoch is the second; two
 *    moves follow it, each followed by an epoch it does not judge by), and
 *    keeps it there, with more throughput (STP), every
 *    task run once while its moves shift both kernels' SMs;
 *  - hsm-qos holds the high-priority memory-bound kernel at its target NP
 *    (0.8) beside a compute-bound co-runner, with more STP than giving it a
 *    fixed 80 % of the SMs, and again from the fifth epoch after the
 *    co-runner changes phase (it ends, and a memory-bound one arrives: the
 *    split is even again while the old flow leaves and the new one joins);
 *  - `corun experiment hsm` on its first pairs: hsm-fair's fairness above
 *    the even split's, HSM's NP prediction within 10 % of the NP measured
 *    on average, every member of the JSON there. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/sim/sim.h"
#include "corun/corun_sim.h"
#include "core/policy.h"
#include "core/profile_store.h"
#include "core/sched.h"
#include "scenario/experiments.h"

#define US 1000.0
#define EPOCH_US 1000.0
#define TASKS 1500000u /* more than 20 epochs run */
#define NKINDS 3

static char dir[128];
static char store[256];

/* mem and mem2: memory-bound (demand three times the DRAM peak on every
 * SM); comp: compute-bound. */
static const char *const kind_name[NKINDS] = {"mem", "comp", "mem2"};
static double alone[NKINDS]; /* tasks per ns alone on the whole GPU */

typedef struct fixture {
    corun__backend *be;
    corun__sched *s;
} fixture;

static void start(fixture *f, const char *policy, const char *key, double value)
{
    corun__sched_opts o;
    corun__sim_opts so;
    char why[256] = "", v[32];

    memset(f, 0, sizeof(*f));
    corun__sim_opts_default(&so);
    assert_int_equal(corun__sim_create(&so, &f->be), CORUN_OK);
    memset(&o, 0, sizeof(o));
    o.backend = f->be;
    o.policy = corun__policy_find(policy);
    assert_non_null(o.policy);
    corun__settings_default(&o.settings);
    assert_int_equal(corun__settings_set(&o.settings, "profile_path", store, why, sizeof(why)),
                     CORUN_OK);
    o.settings.hsm_epoch_us = EPOCH_US;
    if (key != NULL) {
        snprintf(v, sizeof(v), "%g", value);
        assert_int_equal(corun__settings_set(&o.settings, key, v, why, sizeof(why)), CORUN_OK);
    }
    o.why = why;
    o.why_len = sizeof(why);
    if (corun__sched_create(&o, &f->s) != CORUN_OK) {
        fail_msg("sched_create: %s", why);
    }
}

static void stop(fixture *f)
{
    corun__sched_destroy(f->s);
    f->be->ops->destroy(f->be);
}

static corun__job *submit(fixture *f, int kind, int32_t priority)
{
    corun__kspec k;
    corun_launch_attr a = {.cls = CORUN_CLASS_BATCH, .weight = 1, .priority = priority};
    corun__job *out = NULL;
    char why[256] = "";

    memset(&k, 0, sizeof(k));
    snprintf(k.name, sizeof(k.name), "%s", kind_name[kind]);
    k.grid = (corun_dim3){TASKS, 1, 1};
    k.block = (corun_dim3){256, 1, 1};
    k.shape.regs_per_thread = 32; /* 8 workers per SM */
    k.code = CORUN_CODE_SYNTHETIC;
    k.task_ns = (corun__dist){CORUN_DIST_CONST, 20 * US, 0};
    if (kind == 1) {
        k.compute = 0.95;
        k.mem_bw = 0.1;
        k.mem_frac = 0.05;
    } else {
        k.compute = 0.1;
        k.mem_bw = 3.0;
        k.mem_frac = 0.9;
    }
    if (corun__sched_submit(f->s, &k, &a, NULL, NULL, &out, why, sizeof(why)) != CORUN_OK) {
        fail_msg("submit %s: %s", kind_name[kind], why);
    }
    return out;
}

/* Each kind alone on the whole GPU (the policy gives a lone flow every SM),
 * then a store with those rates at the kernels' size and intensity
 * profiles that class mem and mem2 memory-bound, comp compute-bound. */
static int make_store(void **state)
{
    corun__pstore ps;
    char note[256];
    int kind;

    (void)state;
    corun_test_mkdtemp(dir, sizeof(dir), "hsm");
    snprintf(store, sizeof(store), "%s/profiles.txt", dir);
    corun__pstore_init(&ps);
    for (kind = 0; kind < NKINDS; kind++) {
        fixture f;
        corun__job *k;
        uint64_t t0, d0;
        corun__prun r;
        corun__pprof p;
        start(&f, "hsm-fair", NULL, 0);
        t0 = corun__sched_now(f.s);
        k = submit(&f, kind, 0);
        corun_test_step_to(f.s, t0 + (uint64_t)(1000 * US));
        d0 = corun_test_done_of(f.s, k);
        corun_test_step_to(f.s, t0 + (uint64_t)(5000 * US));
        alone[kind] = (double)(corun_test_done_of(f.s, k) - d0) / (4000 * US);
        stop(&f);
        memset(&r, 0, sizeof(r));
        snprintf(r.backend, sizeof(r.backend), "sim");
        snprintf(r.kernel, sizeof(r.kernel), "%s", kind_name[kind]);
        r.grid = TASKS;
        r.block = 256;
        r.dur_ns = TASKS / alone[kind];
        assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
        memset(&p, 0, sizeof(p));
        snprintf(p.backend, sizeof(p.backend), "sim");
        snprintf(p.kernel, sizeof(p.kernel), "%s", kind_name[kind]);
        p.flop_frac = kind == 1 ? 0.9 : 0.05;
        p.bw_frac = kind == 1 ? 0.02 : 0.95;
        p.dur_ns = r.dur_ns;
        p.samples = 1;
        assert_int_equal(corun__pstore_add_prof(&ps, &p), CORUN_OK);
    }
    assert_int_equal(corun__pstore_merge(store, &ps, note, sizeof(note)), CORUN_OK);
    corun__pstore_free(&ps);
    return 0;
}

static int remove_store(void **state)
{
    (void)state;
    corun_test_rmdir(dir);
    return 0;
}

/* Runs jobs k[0..n) (kinds kind[]) epoch by epoch from epoch e0 to e1 of a
 * run that began at t0, writing each epoch's NP of every job to np[e][i]
 * (last[] holds the tasks done at the epoch before). */
static void epochs(fixture *f, uint64_t t0, corun__job **k, const int *kind, size_t n, int e0,
                   int e1, uint64_t *last, double np[][NKINDS])
{
    int e;
    size_t i;

    for (e = e0; e <= e1; e++) {
        corun_test_step_to(f->s, t0 + (uint64_t)(e * EPOCH_US * US));
        for (i = 0; i < n; i++) {
            const uint64_t d = corun_test_done_of(f->s, k[i]);
            np[e][i] = (double)(d - last[i]) / (EPOCH_US * US) / alone[kind[i]];
            last[i] = d;
        }
    }
}

static double fairness(const double *np, size_t n)
{
    double lo = INFINITY, hi = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        lo = fmin(lo, np[i]);
        hi = fmax(hi, np[i]);
    }
    return hi > 0 ? lo / hi : 0;
}

/* mem and comp together, 20 epochs: fairness and STP of each epoch; every
 * task once while the repartitions move both kernels' SMs. */
static void pair_run(const char *key, double value, double fair[21], double stp[21])
{
    const int kind[2] = {0, 1};
    double np[21][NKINDS];
    uint64_t last[2] = {0, 0};
    corun__job *k[2];
    fixture f;
    uint64_t t0;
    int e;

    start(&f, "hsm-fair", key, value);
    t0 = corun__sched_now(f.s);
    k[0] = submit(&f, 0, 0);
    k[1] = submit(&f, 1, 0);
    epochs(&f, t0, k, kind, 2, 1, 20, last, np);
    for (e = 1; e <= 20; e++) {
        fair[e] = fairness(np[e], 2);
        stp[e] = np[e][0] + np[e][1];
    }
    /* to their ends, still repartitioned: then every task ran once */
    for (e = 21; k[0]->state != CORUN_JS_DONE || k[1]->state != CORUN_JS_DONE; e++) {
        assert_true(e < 2000);
        corun_test_step_to(f.s, t0 + (uint64_t)(e * EPOCH_US * US));
    }
    corun_test_prefix_once(f.be, k[0]->ex, k[0]->tasks, k[0]->tasks, k[0]->name);
    corun_test_prefix_once(f.be, k[1]->ex, k[1]->tasks, k[1]->tasks, k[1]->name);
    stop(&f);
}

static void fair_evens_progress_within_epochs(void **state)
{
    double fair[21], stp[21], even_fair[21], even_stp[21];
    int e;

    (void)state;
    pair_run("hsm_fair_threshold", 0, even_fair, even_stp); /* never repartitions */
    pair_run(NULL, 0, fair, stp);
    for (e = 1; e <= 20; e++) {
        print_message("epoch %2d: fairness %.3f STP %.3f (even split %.3f, %.3f)\n", e, fair[e],
                      stp[e], even_fair[e], even_stp[e]);
    }
    for (e = 3; e <= 20; e++) {
        /* the first epoch is the even split; HSM moves at its end */
        if (even_fair[e] > 0.6) {
            fail_msg("epoch %d: an even split's fairness %.3f, expected about 0.5", e,
                     even_fair[e]);
        }
    }
    for (e = 7; e <= 20; e++) {
        /* 1 % under: the policy moves on the last epoch's NP, at the line */
        if (fair[e] < 0.9 * 0.99) {
            fail_msg("epoch %d: hsm-fair's fairness %.3f, below its threshold 0.9", e, fair[e]);
        }
        if (stp[e] < even_stp[e]) {
            fail_msg("epoch %d: hsm-fair's STP %.3f below the even split's %.3f", e, stp[e],
                     even_stp[e]);
        }
    }
}

static void qos_holds_target_through_a_phase_change(void **state)
{
    const int kind[2] = {0, 1}, kind2[2] = {0, 2};
    double np[41][NKINDS], fixed_np[16][NKINDS];
    uint64_t last[2] = {0, 0};
    corun__job *k[2];
    fixture f;
    uint64_t t0;
    int e;

    (void)state;
    /* the proportional baseline: 80 % of the SMs to the high-priority kernel */
    start(&f, "hsm-qos", "hsm_qos_fixed", 0.8);
    t0 = corun__sched_now(f.s);
    k[0] = submit(&f, 0, 1);
    k[1] = submit(&f, 1, 0);
    epochs(&f, t0, k, kind, 2, 1, 15, last, fixed_np);
    stop(&f);

    last[0] = last[1] = 0;
    start(&f, "hsm-qos", NULL, 0);
    t0 = corun__sched_now(f.s);
    k[0] = submit(&f, 0, 1);
    k[1] = submit(&f, 1, 0);
    epochs(&f, t0, k, kind, 2, 1, 15, last, np);
    /* the co-runner's phase changes: comp ends, a memory-bound one comes */
    assert_int_equal(corun__sched_cancel(f.s, k[1]), CORUN_OK);
    k[1] = submit(&f, 2, 0);
    last[1] = 0;
    epochs(&f, t0, k, kind2, 2, 16, 40, last, np);
    stop(&f);
    for (e = 1; e <= 40; e++) {
        print_message("epoch %2d: high-priority NP %.3f, other %.3f, STP %.3f%s\n", e, np[e][0],
                      np[e][1], np[e][0] + np[e][1],
                      e <= 15 ? "" : " (memory-bound co-runner)");
    }
    for (e = 5; e <= 15; e++) {
        if (np[e][0] < 0.8 * 0.97) {
            fail_msg("epoch %d: high-priority NP %.3f, target 0.8", e, np[e][0]);
        }
        if (np[e][0] + np[e][1] <= fixed_np[e][0] + fixed_np[e][1]) {
            fail_msg("epoch %d: STP %.3f, not above 80 %% of the SMs' %.3f", e,
                     np[e][0] + np[e][1], fixed_np[e][0] + fixed_np[e][1]);
        }
    }
    for (e = 21; e <= 40; e++) {
        if (np[e][0] < 0.8 * 0.97) {
            fail_msg("epoch %d (memory-bound co-runner): high-priority NP %.3f, target 0.8", e,
                     np[e][0]);
        }
    }
}

static void experiment_on_the_simulator(void **state)
{
    static const char *const keys[] = {
        "pairs",         "mean_fairness_even",     "mean_fairness_hsm_fair", "mean_stp_even",
        "mean_stp_hsm_fair", "prediction_error_mean", "prediction_error_worst", "qos_pairs",
        "qos_met",       "qos_met_proportional",   "qos_np_min",             "mean_stp_hsm_qos",
        "mean_stp_proportional"};
    corun__exp_opts o;
    corun__settings set;
    char why[1024] = "", st[300];
    size_t i;
    json_t *r;

    (void)state;
    corun__settings_default(&set);
    snprintf(st, sizeof(st), "%s/exp-profiles.txt", dir);
    assert_int_equal(corun__settings_set(&set, "profile_path", st, why, sizeof(why)), CORUN_OK);
    set.profile_train_runs = 12;
    corun_test_exp_opts(&o, &set);
    o.max_sets = 6; /* matmul with five others, two of them memory-bound */
    o.duration_ms = 30;
    r = corun__exp_run("hsm", &o, why, sizeof(why));
    if (r == NULL) {
        fail_msg("experiment hsm: %s", why);
    }
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (json_object_get(r, keys[i]) == NULL) {
            fail_msg("no '%s' in the experiment's JSON", keys[i]);
        }
    }
    print_message("fairness %.3f even, %.3f hsm-fair; prediction error %.3f mean, %.3f worst; "
                  "QoS met in %lld of %lld pairs (80 %% of the SMs: %lld)\n",
                  json_number_value(json_object_get(r, "mean_fairness_even")),
                  json_number_value(json_object_get(r, "mean_fairness_hsm_fair")),
                  json_number_value(json_object_get(r, "prediction_error_mean")),
                  json_number_value(json_object_get(r, "prediction_error_worst")),
                  (long long)json_integer_value(json_object_get(r, "qos_met")),
                  (long long)json_integer_value(json_object_get(r, "qos_pairs")),
                  (long long)json_integer_value(json_object_get(r, "qos_met_proportional")));
    assert_int_equal(json_array_size(json_object_get(r, "pairs")), 6);
    assert_true(json_integer_value(json_object_get(r, "qos_pairs")) > 0);
    assert_true(json_number_value(json_object_get(r, "mean_fairness_hsm_fair")) >=
                json_number_value(json_object_get(r, "mean_fairness_even")) - 0.01);
    assert_true(json_number_value(json_object_get(r, "prediction_error_mean")) < 0.10);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fair_evens_progress_within_epochs),
        cmocka_unit_test(qos_holds_target_through_a_phase_change),
        cmocka_unit_test(experiment_on_the_simulator),
    };
    return cmocka_run_group_tests(tests, make_store, remove_store);
}
