/* test_scenario_run.c — what a scenario run does at its edges (issue 31,
 * point 6), on the simulator:
 *  - a GPU share never exceeds 1, also when CapSMs are oversubscribed. */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "scenario/scenario.h"

static corun__settings set;
static corun__run_env env;

static int setup(void **state)
{
    corun__settings_default(&set);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(shares_never_exceed_the_gpu, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
