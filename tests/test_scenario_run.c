/* test_scenario_run.c — what a scenario run does at its edges (issue 31,
 * point 6), on the simulator:
 *  - nothing is submitted at or after duration_ms, and an application that
 *    would never arrive is refused before the run;
 *  - a GPU share never exceeds 1, also when CapSMs are oversubscribed;
 *  - a reservation of the whole GPU leaves batch kernels no quota: smguard
 *    refuses them, with the reason, rather than let them wait for ever;
 *  - a run or a profiling too large to simulate is refused up front with
 *    its estimated cost;
 *  - a request of chained kernels ("kernels") runs them one after another,
 *    each once, and counts once, from its arrival to its last kernel's end;
 *  - rates alone a policy needs and the store lacks are measured in rounds,
 *    every kernel once a round, and the store keeps them in that order. */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "core/policy.h"
#include "core/profile_store.h"
#include "scenario/scenario.h"

static corun__settings set;
static corun__run_env env;

static int setup(void **state)
{
    corun__settings_default(&set);
    corun_test_fixed_model(&set);
    memset(&env, 0, sizeof(env));
    env.make_backend = corun_test_make_sim;
    env.make_ctx = &set;
    env.settings = set;
    return 0;
}

static void parse(const char *text, corun__scenario *sc)
{
    char why[512] = "";

    if (corun__scenario_parse(text, "t.json", sc, why, sizeof(why)) != CORUN_OK) {
        fail_msg("%s", why);
    }
}

/* A loop app from the start and a second app as `arrival` says, in a
 * scenario of duration_ms. */
static void two_apps(corun__scenario *sc, double duration_ms, const char *arrival)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"name\":\"t\",\"duration_ms\":%g,\"apps\":["
             "{\"name\":\"a\",\"arrival\":{\"kind\":\"loop\"},"
             "\"kernel\":{\"grid\":132,\"block\":128,\"task_us\":100}},"
             "{\"name\":\"b\",\"arrival\":%s,"
             "\"kernel\":{\"grid\":132,\"block\":128,\"task_us\":100}}]}",
             duration_ms, arrival);
    parse(text, sc);
}

static void expect_refused(const corun__scenario *sc, const char *policy, int code,
                           const char *words)
{
    corun__run_result r;
    char why[512] = "";

    assert_int_equal(corun__scenario_check(sc, &set, corun__policy_find(policy), -1, 0, 1, why,
                                           sizeof(why)),
                     code);
    if (strstr(why, words) == NULL) {
        fail_msg("check: '%s' lacks '%s'", why, words);
    }
    why[0] = '\0';
    assert_int_equal(corun__scenario_run(sc, &env, policy, -1, 0, &r, why, sizeof(why)), code);
    if (strstr(why, words) == NULL) {
        fail_msg("run: '%s' lacks '%s'", why, words);
    }
}

static void nothing_arrives_at_or_after_the_duration(void **state)
{
    static const char *const late[] = {
        "{\"kind\":\"loop\",\"start_us\":2000000}",
        "{\"kind\":\"loop\",\"start_us\":1e12}",
        "{\"kind\":\"random\",\"mean_us\":100,\"start_us\":1000000}",
        "{\"kind\":\"periodic\",\"period_us\":100,\"start_us\":1500000}",
        "{\"kind\":\"at\",\"at_us\":[1000000,1200000]}",
    };
    corun__scenario sc;
    corun__run_result r;
    char why[512] = "";
    size_t i, j, k;

    for (i = 0; i < sizeof(late) / sizeof(late[0]); i++) {
        two_apps(&sc, 1000, late[i]);
        expect_refused(&sc, "mps", CORUN_EINVAL, "app 'b' never arrives");
    }
    /* Those that arrive in time stop arriving at duration_ms. */
    two_apps(&sc, 20, "{\"kind\":\"at\",\"at_us\":[0,10000,19999,20000,30000]}");
    assert_int_equal(corun__scenario_run(&sc, &env, "mps", -1, 0, &r, why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(r.apps[1].submitted, 3);
    for (j = 0; j < r.napps; j++) {
        assert_true(r.apps[j].submitted > 0);
        for (k = 0; k < r.apps[j].completed; k++) {
            assert_true(r.apps[j].kernels[k].submit_ns < 20e6);
        }
    }
    corun__run_result_free(&r);
}

/* Per kernel and per application, CapSM-time over the GPU's never passes 1. */
static void check_shares(const corun__run_result *r)
{
    double sum = 0;
    size_t i, j;

    for (i = 0; i < r->napps; i++) {
        const corun__app_result *a = &r->apps[i];
        double share = a->window_capsm_ns / ((double)r->sm_count * r->window_ns);
        print_message("%s: share %.4f\n", a->name, share);
        assert_true(share <= 1 + 1e-9);
        sum += share;
        for (j = 0; j < a->completed; j++) {
            assert_true(a->kernels[j].capsm_ns <=
                        (double)r->sm_count * a->turnaround_ns[j] * (1 + 1e-9));
        }
    }
    assert_true(sum <= 1 + 1e-9);
}

static void shares_never_exceed_the_gpu(void **state)
{
    corun__scenario sc;
    corun__run_result r;
    char why[512] = "";

    /* Under manual every kernel gets every CapSM: five or so in flight at once. */
    parse("{\"name\":\"many\",\"duration_ms\":50,\"apps\":[{\"name\":\"r\","
          "\"arrival\":{\"kind\":\"random\",\"mean_us\":100},"
          "\"kernel\":{\"grid\":264,\"block\":128,\"task_us\":500}}]}",
          &sc);
    assert_int_equal(corun__scenario_run(&sc, &env, "manual", -1, 0, &r, why, sizeof(why)),
                     CORUN_OK);
    check_shares(&r);
    assert_true(r.apps[0].window_capsm_ns / ((double)r.sm_count * r.window_ns) > 0.9);
    corun__run_result_free(&r);
    parse(corun__scenario_default_text(), &sc);
    sc.duration_ns = 100e6;
    assert_int_equal(corun__scenario_run(&sc, &env, "manual", -1, 0, &r, why, sizeof(why)),
                     CORUN_OK);
    check_shares(&r);
    corun__run_result_free(&r);
}

static void whole_gpu_reservation_leaves_batch_no_quota(void **state)
{
    corun__scenario sc;
    corun__run_result r;
    char why[512] = "";

    parse(corun__scenario_default_text(), &sc);
    sc.duration_ns = 50e6;
    sc.reserve_capsm = sc.gpu.sm_count;
    expect_refused(&sc, "smguard", CORUN_ERANGE, "app 'batch': smguard:");
    expect_refused(&sc, "smguard", CORUN_ERANGE, "no quota");
    /* The policies that have no quotas run it; so does smguard with one
     * CapSM left, or with the batch app's own CapSMs. */
    assert_int_equal(corun__scenario_run(&sc, &env, "mps", -1, 0, &r, why, sizeof(why)),
                     CORUN_OK);
    corun__run_result_free(&r);
    sc.reserve_capsm = sc.gpu.sm_count - 1;
    assert_int_equal(corun__scenario_run(&sc, &env, "smguard", -1, 0, &r, why, sizeof(why)),
                     CORUN_OK);
    assert_true(r.apps[0].completed > 0);
    corun__run_result_free(&r);
    sc.reserve_capsm = sc.gpu.sm_count;
    sc.apps[0].attr.capsm = 66;
    assert_int_equal(corun__scenario_run(&sc, &env, "smguard", -1, 0, &r, why, sizeof(why)),
                     CORUN_OK);
    assert_true(r.apps[0].completed > 0);
    corun__run_result_free(&r);
}

static void huge_runs_are_refused_with_their_cost(void **state)
{
    corun__scenario sc;
    corun__plan plan;
    corun__train_opts o;
    corun__run_result r;
    char why[512] = "";

    /* 2^31 - 1 block-tasks in one launch */
    parse("{\"name\":\"huge\",\"duration_ms\":10,\"apps\":[{\"name\":\"a\","
          "\"arrival\":{\"kind\":\"at\",\"at_us\":[0]},"
          "\"kernel\":{\"grid\":2147483647,\"block\":128,\"task_us\":5}}]}",
          &sc);
    expect_refused(&sc, "mps", CORUN_ERANGE, "about 2.1e+09 steps");
    corun__train_opts_default(&o, &set);
    assert_int_equal(corun__scenario_check_train(&sc, &set, &o, -1, 1, why, sizeof(why)),
                     CORUN_ERANGE);
    assert_non_null(strstr(why, "profiling scenario 'huge'"));
    /* on a GPU, or with the limit off, it would run */
    assert_int_equal(corun__scenario_check(&sc, &set, NULL, -1, 0, 0, why, sizeof(why)),
                     CORUN_OK);
    set.sim_max_steps = 0;
    assert_int_equal(corun__scenario_check(&sc, &set, NULL, -1, 0, 1, why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(corun__scenario_check_train(&sc, &set, &o, -1, 1, why, sizeof(why)),
                     CORUN_OK);
    set.sim_max_steps = 1000000000;

    /* The built-in scenario over 1e7 ms; its estimate over 1,000 ms bounds
     * the batch loop's launches from above, and not by much. */
    parse(corun__scenario_default_text(), &sc);
    sc.duration_ns = 1e13;
    expect_refused(&sc, "smguard", CORUN_ERANGE, "CORUN_SIM_MAX_STEPS");
    sc.duration_ns = 1e9;
    corun__scenario_plan(&sc, &set, -1, 0, &plan);
    assert_int_equal(corun__scenario_run(&sc, &env, "mps", -1, 0, &r, why, sizeof(why)),
                     CORUN_OK);
    print_message("batch: %zu launches, %.0f estimated\n", r.apps[0].submitted,
                  plan.launches[0]);
    assert_true(plan.launches[0] >= (double)r.apps[0].submitted);
    assert_true(plan.launches[0] <= 1.5 * (double)r.apps[0].submitted);
    corun__run_result_free(&r);
}

/* Three kernels of one full wave each (8 blocks per SM of 256 threads, 2
 * of 1024: the rate task_us is given at), tasks of 100, 50 and 20 us,
 * requests 1 ms apart: nothing overlaps, so each request
 * takes the three kernels' times in a row, and every task runs once. */
static void chained_kernels_run_one_after_another(void **state)
{
    static corun__scenario sc;
    corun__run_result r, one;
    char why[512] = "";
    double lo;
    size_t i;

    parse("{\"name\":\"t\",\"duration_ms\":10,\"apps\":[{\"name\":\"ls\",\"class\":\"ls\","
          "\"arrival\":{\"kind\":\"periodic\",\"period_us\":1000},\"kernels\":["
          "{\"grid\":1056,\"block\":256,\"task_us\":100},"
          "{\"code\":\"reduce\",\"grid\":1056,\"block\":256,\"task_us\":50},"
          "{\"code\":\"matmul\",\"grid\":[132,2],\"block\":[32,32],\"task_us\":20}]}]}",
          &sc);
    assert_int_equal(sc.apps[0].nthen, 2);
    assert_int_equal(corun__scenario_run(&sc, &env, "mps", -1, 0, &r, why, sizeof(why)), CORUN_OK);
    assert_int_equal(r.apps[0].submitted, 10);
    assert_int_equal(r.apps[0].completed, 10);
    assert_int_equal(r.apps[0].failed, 0);
    assert_float_equal(r.apps[0].tasks_done, 10 * (1056 + 1056 + 264), 0);
    lo = (100 + 50 + 20) * 1e3;
    for (i = 0; i < r.apps[0].completed; i++) {
        const corun__job_rec *k = &r.apps[0].kernels[i];
        assert_true(r.apps[0].turnaround_ns[i] >= lo);
        assert_true(r.apps[0].turnaround_ns[i] < lo + 100e3); /* launch and notify delays */
        assert_float_equal(k->end_ns - k->submit_ns, r.apps[0].turnaround_ns[i], 1);
        assert_true(k->start_ns >= k->submit_ns && k->run_ns >= lo * 0.99);
    }
    /* the first kernel alone: a request of three takes longer by the other two */
    sc.apps[0].nthen = 0;
    assert_int_equal(corun__scenario_run(&sc, &env, "mps", -1, 0, &one, why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(one.apps[0].completed, 10);
    assert_true(r.apps[0].p50_ns - one.apps[0].p50_ns >= (50 + 20) * 1e3);
    corun__run_result_free(&r);
    corun__run_result_free(&one);
}

/* Two kernels' rates alone, missing from the store: three rounds of three
 * windows, a then b in each (decision 0035), nine windows each at its own
 * size, which the kernel's rate alone is then read from. */
static void rates_alone_are_measured_in_rounds(void **state)
{
    static corun__scenario sc;
    char dir[256], path[512], why[512] = "", note[512] = "", seq[32];
    corun__pstore ps;
    size_t i, n = 0;

    (void)state;
    two_apps(&sc, 10, "{\"kind\":\"loop\"}");
    corun_test_mkdtemp(dir, sizeof(dir), "rounds");
    snprintf(path, sizeof(path), "%s/store.txt", dir);
    assert_int_equal(corun__scenario_ensure_profiles(&sc, &env, "sim", path,
                                                     CORUN_POLICY_NEEDS_RATES, NULL, NULL, why,
                                                     sizeof(why)),
                     CORUN_OK);
    assert_int_equal(corun__pstore_load(path, &ps, note, sizeof(note)), CORUN_OK);
    for (i = 0; i < ps.nruns && n + 1 < sizeof(seq); i++) {
        if (ps.runs[i].grid == 132 && ps.runs[i].block == 128) {
            seq[n++] = ps.runs[i].kernel[0];
        }
    }
    seq[n] = '\0';
    assert_string_equal(seq, "aaabbbaaabbbaaabbb");
    assert_true(corun__pstore_own_rate(&ps, "sim", "a", 132, 128) > 0);
    assert_true(corun__pstore_own_rate(&ps, "sim", "b", 132, 128) > 0);
    corun__pstore_free(&ps);
    /* present now: a second call measures nothing */
    assert_int_equal(corun__scenario_ensure_profiles(&sc, &env, "sim", path,
                                                     CORUN_POLICY_NEEDS_RATES, NULL, NULL, why,
                                                     sizeof(why)),
                     CORUN_OK);
    assert_int_equal(corun__pstore_load(path, &ps, note, sizeof(note)), CORUN_OK);
    assert_int_equal(ps.nruns, 18);
    corun__pstore_free(&ps);
    corun_test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(nothing_arrives_at_or_after_the_duration, setup),
        cmocka_unit_test_setup(shares_never_exceed_the_gpu, setup),
        cmocka_unit_test_setup(whole_gpu_reservation_leaves_batch_no_quota, setup),
        cmocka_unit_test_setup(huge_runs_are_refused_with_their_cost, setup),
        cmocka_unit_test_setup(chained_kernels_run_one_after_another, setup),
        cmocka_unit_test_setup(rates_alone_are_measured_in_rounds, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
