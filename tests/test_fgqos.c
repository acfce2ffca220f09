/* test_fgqos.c — fine-grained QoS by per-epoch task quotas (policy fgqos).
 *
 * On the simulator:
 *  - quotas hold to the task: under the naive scheme a QoS kernel runs at
 *    most its quota in every epoch, and gets it;
 *  - quotas cover an epoch's real length when the host's timer ends epochs
 *    late;
 *  - no task is lost or run twice while quotas pause and resume kernels every
 *    epoch, also when the device evicts workers in mid-epoch, in every
 *    scheme;
 *  - the paper's ordering (qos-fine-grained.md §4.2) on the first 12 pairs
 *    of `corun experiment fgqos`: rollover >= elastic > naive, history >
 *    naive and rollover > spart, in QoS_reach. */
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
#define QOS_TASKS 400000u  /* more than the tests run */
#define BATCH_TASKS 400000u
#define TASK_US 50.0

static char dir[128];
static char store[256];

typedef struct fixture {
    corun__backend *be;
    corun__sched *s;
    corun__job *q, *b;
} fixture;

/* Solo runs at the kernels' own sizes: 50 us tasks, 1,056 at a time on the
 * H100's 132 SMs, so TASKS / (ceil(TASKS / 1056) x 50 us) per us alone. */
static double iso_per_ns(uint32_t tasks)
{
    return tasks / (ceil(tasks / 1056.0) * TASK_US * US);
}

static int make_store(void **state)
{
    corun__pstore ps;
    char note[256];
    const char *names[] = {"qos", "batch"};
    const uint32_t tasks[] = {QOS_TASKS, BATCH_TASKS};
    int k;

    (void)state;
    corun_test_mkdtemp(dir, sizeof(dir), "fgqos");
    snprintf(store, sizeof(store), "%s/profiles.txt", dir);
    corun__pstore_init(&ps);
    for (k = 0; k < 2; k++) {
        corun__prun r;
        memset(&r, 0, sizeof(r));
        snprintf(r.backend, sizeof(r.backend), "sim");
        snprintf(r.kernel, sizeof(r.kernel), "%s", names[k]);
        r.grid = tasks[k];
        r.block = 256;
        r.dur_ns = tasks[k] / iso_per_ns(tasks[k]);
        assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
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

static corun__job *submit(fixture *f, const char *name, uint32_t tasks, double qos)
{
    corun__kspec k;
    corun_launch_attr a = {.cls = CORUN_CLASS_BATCH, .weight = 1, .qos = qos};
    corun__job *out = NULL;
    char why[256] = "";

    memset(&k, 0, sizeof(k));
    snprintf(k.name, sizeof(k.name), "%s", name);
    k.grid = (corun_dim3){tasks, 1, 1};
    k.block = (corun_dim3){256, 1, 1};
    k.shape.regs_per_thread = 32; /* 8 workers per SM */
    k.code = CORUN_CODE_SYNTHETIC;
    k.task_ns = (corun__dist){CORUN_DIST_CONST, TASK_US * US, 0};
    k.mem_frac = 0.5;
    if (corun__sched_submit(f->s, &k, &a, NULL, NULL, &out, why, sizeof(why)) != CORUN_OK) {
        fail_msg("submit %s: %s", name, why);
    }
    return out;
}

/* A simulated H100 under fgqos with scheme sch; faults (may be NULL)
 * injected on the device; the host wakes wake_us late for its timers. */
static void start_late(fixture *f, const char *sch, const corun__sim_faults *faults,
                       double wake_us)
{
    corun__sched_opts o;
    corun__sim_opts so;
    char why[256] = "";

    memset(f, 0, sizeof(*f));
    corun_test_fixed_sim_opts(&so);
    if (faults != NULL) {
        so.faults = *faults;
    }
    so.wake_ns = wake_us * US;
    assert_int_equal(corun__sim_create(&so, &f->be), CORUN_OK);
    memset(&o, 0, sizeof(o));
    o.backend = f->be;
    o.policy = corun__policy_find("fgqos");
    assert_non_null(o.policy);
    corun__settings_default(&o.settings);
    assert_int_equal(corun__settings_set(&o.settings, "profile_path", store, why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(corun__settings_set(&o.settings, "fgqos_scheme", sch, why, sizeof(why)),
                     CORUN_OK);
    o.settings.fgqos_epoch_us = EPOCH_US;
    o.why = why;
    o.why_len = sizeof(why);
    if (corun__sched_create(&o, &f->s) != CORUN_OK) {
        fail_msg("sched_create: %s", why);
    }
}

static void start(fixture *f, const char *sch, const corun__sim_faults *faults)
{
    start_late(f, sch, faults, 0);
}

static void stop(fixture *f)
{
    corun__sched_destroy(f->s);
    f->be->ops->destroy(f->be);
}

static void naive_quota_holds_every_epoch(void **state)
{
    const double goal = 0.5;
    fixture f;
    uint64_t t0, last = 0, quota;
    corun__settings set;
    int e;

    (void)state;
    corun__settings_default(&set);
    /* naive: alpha = 1 and the same quota every epoch, to the task */
    quota = (uint64_t)ceil(goal * (1 + set.fgqos_margin) * iso_per_ns(QOS_TASKS) * EPOCH_US * US);
    start(&f, "naive", NULL);
    t0 = corun__sched_now(f.s);
    f.q = submit(&f, "qos", QOS_TASKS, goal);
    f.b = submit(&f, "batch", BATCH_TASKS, 0);
    for (e = 1; e <= 12; e++) {
        uint64_t d;
        corun_test_step_to(f.s, t0 + (uint64_t)(e * EPOCH_US * US));
        d = corun_test_done_of(f.s, f.q);
        if (d - last > quota) {
            fail_msg("epoch %d: %llu tasks against a quota of %llu", e,
                     (unsigned long long)(d - last), (unsigned long long)quota);
        }
        /* and it gets its quota (the first epoch starts with the launch) */
        if (e > 1 && d - last < quota * 9 / 10) {
            fail_msg("epoch %d: %llu tasks, quota %llu", e, (unsigned long long)(d - last),
                     (unsigned long long)quota);
        }
        last = d;
    }
    /* the batch kernel used what the QoS kernel left */
    assert_true(corun_test_done_of(f.s, f.b) > last / 2);
    corun_test_prefix_once(f.be, f.q->ex, f.q->tasks, corun_test_done_of(f.s, f.q), f.q->name);
    corun_test_prefix_once(f.be, f.b->ex, f.b->tasks, corun_test_done_of(f.s, f.b), f.b->name);
    stop(&f);
}

/* Epochs that end 100 us late, as the host's timer makes them on a GPU: the
 * quotas cover each epoch's real length, so the QoS kernel still runs at its
 * goal over the time that passed (quotas of the nominal length would keep it
 * at 1.05 / 1.1 of it). */
static void quotas_cover_late_epochs(void **state)
{
    const double goal = 0.5;
    fixture f;
    uint64_t t0;
    double got;

    (void)state;
    start_late(&f, "naive", NULL, 100);
    t0 = corun__sched_now(f.s);
    f.q = submit(&f, "qos", QOS_TASKS, goal);
    f.b = submit(&f, "batch", BATCH_TASKS, 0);
    corun_test_step_to(f.s, t0 + (uint64_t)(30 * EPOCH_US * US));
    got = (double)corun_test_done_of(f.s, f.q) / (double)(corun__sched_now(f.s) - t0) /
          iso_per_ns(QOS_TASKS);
    print_message("epochs 100 us late: the QoS kernel at %.3f of its isolated rate (goal %.2f)\n",
                  got, goal);
    assert_true(got >= goal);
    stop(&f);
}

/* Both kernels to the end, every task once, with the device evicting some of
 * one kernel's workers in mid-epoch (a fault the policy did not ask for). */
static void every_task_once_in_every_scheme(void **state)
{
    const char *schemes[] = {"naive", "history", "elastic", "rollover", "spart"};
    const uint32_t tasks = 40000;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
        corun__sim_faults fl;
        fixture f;
        int guard = 0;

        memset(&fl, 0, sizeof(fl));
        snprintf(fl.signal_kernel, sizeof(fl.signal_kernel), "%s", i % 2 ? "qos" : "batch");
        fl.signal_at_task = 7777 + 1111 * i;
        fl.signal_kind = CORUN_SIG_EVICT_BELOW;
        fl.signal_value = 40; /* workers on CapSM ids below 40 leave */
        start(&f, schemes[i], &fl);
        f.q = submit(&f, "qos", tasks, 0.6);
        f.b = submit(&f, "batch", tasks, 0);
        while ((f.q->state != CORUN_JS_DONE || f.b->state != CORUN_JS_DONE) && guard++ < 100000) {
            assert_int_equal(corun__sched_step(f.s, corun__sched_now(f.s) + 100000000ull),
                             CORUN_OK);
            assert_true(f.q->state != CORUN_JS_FAILED && f.b->state != CORUN_JS_FAILED);
        }
        if (f.q->state != CORUN_JS_DONE || f.b->state != CORUN_JS_DONE) {
            fail_msg("%s: the kernels did not finish (%d, %d)", schemes[i], f.q->state,
                     f.b->state);
        }
        corun_test_prefix_once(f.be, f.q->ex, f.q->tasks, tasks, f.q->name);
        corun_test_prefix_once(f.be, f.b->ex, f.b->tasks, tasks, f.b->name);
        stop(&f);
    }
}

/* The host API's epoch quota (corun_job_limit): a job pauses exactly at its
 * limit, a new limit takes effect at the next resume, and raised to the
 * grid it finishes. */
static void job_limit_pauses_at_the_limit(void **state)
{
    corun_ctx_opts co = {.backend = "sim", .policy = "manual"};
    corun_sim_kernel_desc kd = {.name = "q", .task_us = 10};
    corun_launch_attr a = {.cls = CORUN_CLASS_BATCH};
    corun_progress p;
    corun_kernel *k;
    corun_ctx *ctx;
    corun_job *j;

    (void)state;
    assert_int_equal(corun_ctx_create(&co, &ctx), CORUN_OK);
    assert_int_equal(corun_sim_kernel_register(ctx, &kd, &k), CORUN_OK);
    assert_int_equal(corun_launch(ctx, k, (corun_dim3){100000, 1, 1}, (corun_dim3){256, 1, 1}, 0,
                                  NULL, &a, &j),
                     CORUN_OK);
    assert_int_equal(corun_job_limit(j, 100001), CORUN_ERANGE);
    /* under running workers the limit waits for the next resume */
    assert_int_equal(corun_job_preempt(j), CORUN_OK);
    assert_int_equal(corun_job_limit(j, 30000), CORUN_OK);
    assert_int_equal(corun_job_resume(j, 0), CORUN_OK);
    /* it stops at its limit and stays */
    assert_int_equal(corun_job_wait(j, 50), CORUN_ESTATE);
    assert_int_equal(corun_job_progress(j, &p), CORUN_OK);
    assert_int_equal(p.done, 30000);
    /* a raised limit takes effect at the resume */
    assert_int_equal(corun_job_limit(j, 70000), CORUN_OK);
    assert_int_equal(corun_job_resume(j, 0), CORUN_OK);
    assert_int_equal(corun_job_wait(j, 50), CORUN_ESTATE);
    assert_int_equal(corun_job_progress(j, &p), CORUN_OK);
    assert_int_equal(p.done, 70000);
    assert_int_equal(corun_job_limit(j, 100000), CORUN_OK);
    assert_int_equal(corun_job_resume(j, 0), CORUN_OK);
    assert_int_equal(corun_job_wait(j, -1), CORUN_OK);
    assert_int_equal(corun_job_progress(j, &p), CORUN_OK);
    assert_int_equal(p.done, 100000);
    assert_int_equal(corun_job_limit(j, 10), CORUN_ESTATE);
    corun_job_release(j);
    corun_ctx_destroy(ctx);
}

static double reach(json_t *r, const char *scheme)
{
    json_t *v = json_object_get(
        json_object_get(json_object_get(json_object_get(r, "schemes"), scheme), "pairs"),
        "qos_reach");
    if (!json_is_number(v)) {
        fail_msg("no qos_reach for %s", scheme);
    }
    return json_number_value(v);
}

static void rollover_reaches_most(void **state)
{
    corun__exp_opts o;
    corun__settings set;
    char why[1024] = "", st[300];
    double naive, history, elastic, rollover;
    json_t *r;

    (void)state;
    corun__settings_default(&set);
    snprintf(st, sizeof(st), "%s/exp-profiles.txt", dir);
    assert_int_equal(corun__settings_set(&set, "profile_path", st, why, sizeof(why)), CORUN_OK);
    set.profile_train_runs = 12;
    /* The schemes' order as the paper has it (history above naive) holds on
     * the model it was set on; on the H200's model history ties naive
     * (0.800 and 0.800, docs/decisions/0044). */
    corun_test_fixed_model(&set);
    corun_test_exp_opts(&o, &set);
    o.max_sets = 12;
    r = corun__exp_run("fgqos", &o, why, sizeof(why));
    if (r == NULL) {
        fail_msg("experiment fgqos: %s", why);
    }
    naive = reach(r, "naive");
    history = reach(r, "history");
    elastic = reach(r, "elastic");
    rollover = reach(r, "rollover");
    print_message("QoS_reach over 120 cases: naive %.3f, history %.3f, elastic %.3f, rollover "
                  "%.3f, spart %.3f\n",
                  naive, history, elastic, rollover, reach(r, "spart"));
    assert_true(rollover >= elastic);
    assert_true(elastic > naive);
    assert_true(history > naive);
    assert_true(rollover > reach(r, "spart"));
    {
        /* the profile store's rate alone (what goals are fractions of) is
         * measured as the experiment measures a kernel alone: a loop of
         * launches under the manual policy */
        json_t *c;
        size_t i;
        double lo = INFINITY, hi = 0;
        double alo = INFINITY, ahi = 0;
        json_array_foreach(json_object_get(r, "cases"), i, c)
        {
            const double ratio = json_number_value(json_object_get(c, "qos_rate")) /
                                 json_number_value(json_object_get(c, "qos_rate_store"));
            /* a case counts against the QoS kernel's rate alone measured
             * next to it; on the simulator that is the run's first measure */
            const double adj = json_number_value(json_object_get(c, "qos_rate")) /
                               json_number_value(json_object_get(c, "qos_rate_start"));
            lo = fmin(lo, ratio);
            hi = fmax(hi, ratio);
            alo = fmin(alo, fmin(adj, json_number_value(json_object_get(c, "alone_moved"))));
            ahi = fmax(ahi, fmax(adj, json_number_value(json_object_get(c, "alone_moved"))));
        }
        print_message("store's rate alone over the experiment's: %.4f..%.4f; next to a case "
                      "over the start's, and after a set over before it: %.4f..%.4f\n",
                      lo, hi, alo, ahi);
        assert_true(lo > 0.995 && hi < 1.005);
        assert_true(alo > 0.995 && ahi < 1.005);
    }
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(naive_quota_holds_every_epoch),
        cmocka_unit_test(quotas_cover_late_epochs),
        cmocka_unit_test(every_task_once_in_every_scheme),
        cmocka_unit_test(job_limit_pauses_at_the_limit),
        cmocka_unit_test(rollover_reaches_most),
    };
    return cmocka_run_group_tests(tests, make_store, remove_store);
}
