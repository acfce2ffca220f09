/* test_settings.c — the settings table: defaults within their bounds, which
 * settings were given, one setting read alone (corun-cc, the launch shim),
 * the simulator's defaults equal to the table's, a context's settings given
 * over the environment (corun_test_ctx_create), the policy names, numbers in
 * decimal within bounds, and the profile store's path. */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "backends/sim/sim.h"
#include "core/policy.h"
#include "core/profile_store.h"
#include "core/settings.h"
#include "corun/corun.h"
#include "corun/corun_sim.h"

/* A default the table cannot parse would be silently zero. */
static void defaults_parse(void **state)
{
    corun__settings s;
    char why[256];
    size_t i;

    corun__settings_default(&s);
    for (i = 0; i < corun__settings_count(); i++) {
        const corun__setting_info *in = corun__settings_info(i);
        why[0] = '\0';
        assert_int_equal(corun__settings_set(&s, in->name, in->def, why, sizeof(why)), CORUN_OK);
    }
}

static void given_by_variable_or_set(void **state)
{
    corun__settings s;
    char why[256];

    unsetenv("CORUN_RESERVE_CAPSM");
    setenv("CORUN_SEED", "7", 1);
    corun__settings_default(&s);
    assert_int_equal(corun__settings_load_env(&s, why, sizeof(why)), CORUN_OK);
    unsetenv("CORUN_SEED");
    assert_true(corun__settings_given(&s, "seed"));
    assert_true(corun__settings_given(&s, "CORUN_SEED"));
    assert_false(corun__settings_given(&s, "reserve_capsm"));
    assert_int_equal(s.reserve_capsm, 8);
    /* the default's value given explicitly still counts as given */
    assert_int_equal(corun__settings_set(&s, "RESERVE_CAPSM", "8", why, sizeof(why)), CORUN_OK);
    assert_true(corun__settings_given(&s, "reserve_capsm"));
    /* a refused value is not given */
    assert_int_equal(corun__settings_set(&s, "chunk_max", "0", why, sizeof(why)), CORUN_EINVAL);
    assert_false(corun__settings_given(&s, "chunk_max"));
    assert_false(corun__settings_given(&s, "nosuch"));
}

static void read_one(void **state)
{
    char buf[64], why[256];

    unsetenv("CORUN_LAUNCH_STATS");
    strcpy(buf, "x");
    assert_int_equal(corun_setting_get("launch_stats", buf, sizeof(buf)), CORUN_OK);
    assert_string_equal(buf, "");
    setenv("CORUN_LAUNCH_STATS", "/tmp/stats.jsonl", 1);
    assert_int_equal(corun_setting_get("CORUN_LAUNCH_STATS", buf, sizeof(buf)), CORUN_OK);
    assert_string_equal(buf, "/tmp/stats.jsonl");
    /* too short a buffer: nothing written */
    strcpy(buf, "x");
    assert_int_equal(corun_setting_get("launch_stats", buf, 8), CORUN_ERANGE);
    assert_string_equal(buf, "x");
    unsetenv("CORUN_LAUNCH_STATS");

    assert_int_equal(corun_setting_get("ahead", buf, sizeof(buf)), CORUN_OK);
    assert_string_equal(buf, "1");
    setenv("CORUN_AHEAD", "2", 1);
    assert_int_equal(corun_setting_get("ahead", buf, sizeof(buf)), CORUN_OK);
    assert_string_equal(buf, "2");
    /* checked against the bounds, as libcorun checks it */
    setenv("CORUN_AHEAD", "3", 1);
    assert_int_equal(corun__settings_read_one("ahead", buf, sizeof(buf), why, sizeof(why)),
                     CORUN_EINVAL);
    assert_non_null(strstr(why, "CORUN_AHEAD"));
    unsetenv("CORUN_AHEAD");
    assert_int_equal(corun_setting_get("nosuch", buf, sizeof(buf)), CORUN_ENOENT);
}

/* The simulator is built from the settings (backends/create.c); its own
 * defaults, which tests use, must be the table's. */
static void sim_defaults_are_the_tables(void **state)
{
    corun__settings s;
    corun__sim_opts o;

    corun__settings_default(&s);
    corun__sim_opts_default(&o);
    assert_int_equal(o.seed, s.seed);
    assert_float_equal(o.signal_ns, s.sim_signal_us * 1e3, 1e-9);
    assert_float_equal(o.launch_ns, s.sim_launch_us * 1e3, 1e-9);
    assert_float_equal(o.notify_ns, s.sim_notify_us * 1e3, 1e-9);
    assert_float_equal(o.claim_ns, s.sim_claim_ns, 1e-9);
    assert_float_equal(o.block_speedup, s.sim_block_speedup, 1e-9);
    assert_int_equal(o.budget_ns, corun__budget_ns(&s));
    assert_int_equal(o.chunk_max, s.chunk_max);
}

/* A test's own settings over the environment (corun_test_ctx_create),
 * without changing the environment; a bad one is refused with its name. */
static void ctx_settings_over_the_environment(void **state)
{
    const char *const sim[] = {"backend=sim", "plain_below_us=0", NULL};
    const char *const bad[] = {"backend=sim", "plain_below_us=-1", NULL};
    const char *const unknown[] = {"nosuch=1", NULL};
    const char *const malformed[] = {"backend", NULL};
    corun_ctx *ctx = NULL;

    const char *const ls[] = {"backend=sim", "launch_class=ls", "CORUN_LAUNCH_CAPSM=12", NULL};
    const char *const bad_class[] = {"backend=sim", "launch_class=rt", NULL};
    corun_launch_attr la;

    setenv("CORUN_BACKEND", "cuda", 1);
    assert_int_equal(corun_test_ctx_create(NULL, sim, &ctx), CORUN_OK);
    assert_string_equal(corun_ctx_backend(ctx), "sim");
    corun_ctx_launch_attr(ctx, &la); /* what transformed programs launch with */
    assert_int_equal(la.cls, CORUN_CLASS_BATCH);
    assert_int_equal(la.capsm, 0);
    corun_ctx_destroy(ctx);
    assert_int_equal(corun_test_ctx_create(NULL, ls, &ctx), CORUN_OK);
    corun_ctx_launch_attr(ctx, &la);
    assert_int_equal(la.cls, CORUN_CLASS_LS);
    assert_int_equal(la.capsm, 12);
    assert_int_equal(la.priority, 0);
    corun_ctx_destroy(ctx);
    assert_int_equal(corun_test_ctx_create(NULL, bad_class, &ctx), CORUN_EINVAL);
    assert_string_equal(getenv("CORUN_BACKEND"), "cuda");
    unsetenv("CORUN_BACKEND");
    assert_int_equal(corun_test_ctx_create(NULL, bad, &ctx), CORUN_EINVAL);
    assert_non_null(strstr(corun_last_error(), "CORUN_PLAIN_BELOW_US"));
    assert_int_equal(corun_test_ctx_create(NULL, unknown, &ctx), CORUN_ENOENT);
    assert_int_equal(corun_test_ctx_create(NULL, malformed, &ctx), CORUN_EINVAL);
    assert_non_null(strstr(corun_last_error(), "NAME=VALUE"));
}

/* CORUN_POLICY takes exactly the names of the policy registry, in its order. */
static void policy_names_are_the_registrys(void **state)
{
    const corun__setting_info *in = NULL;
    char names[256] = "";
    size_t i;

    for (i = 0; i < corun__settings_count(); i++) {
        if (strcmp(corun__settings_info(i)->name, "policy") == 0) {
            in = corun__settings_info(i);
        }
    }
    assert_non_null(in);
    for (i = 0; i < corun__policy_count(); i++) {
        strcat(names, i > 0 ? "," : "");
        strcat(names, corun__policy_at(i)->name);
    }
    assert_string_equal(in->allowed, names);
}

/* Numbers in decimal only, refused with the bounds; bounds and values of
 * whole numbers printed in digits. */
static void numbers_are_decimal_and_bounded(void **state)
{
    static const char *const bad_whole[] = {"0x10", "+16", " 16", "16 ", "", "-1", "1e3", "1.0"};
    static const char *const bad_decimal[] = {"0x10", "0x1p3", "inf", "nan", " 5", "5 ", "", "e"};
    corun__settings s;
    char why[256], buf[64];
    uint64_t u;
    double d;
    size_t i;

    for (i = 0; i < sizeof(bad_whole) / sizeof(bad_whole[0]); i++) {
        assert_int_equal(corun__parse_whole(bad_whole[i], &u), -1);
    }
    for (i = 0; i < sizeof(bad_decimal) / sizeof(bad_decimal[0]); i++) {
        assert_int_equal(corun__parse_decimal(bad_decimal[i], &d), -1);
    }
    assert_int_equal(corun__parse_whole("0016", &u), 0);
    assert_int_equal(u, 16);
    assert_int_equal(corun__parse_decimal("-1.5e3", &d), 0);
    assert_true(d == -1500);
    corun__settings_default(&s);
    assert_int_equal(corun__settings_set(&s, "chunk_budget_us", "0x10", why, sizeof(why)),
                     CORUN_EINVAL);
    assert_string_equal(why,
                        "CORUN_CHUNK_BUDGET_US: '0x10' is not a decimal number in [0.5, 1000000]");
    assert_int_equal(corun__settings_set(&s, "profile_train_runs", "4", why, sizeof(why)),
                     CORUN_EINVAL);
    assert_string_equal(why, "CORUN_PROFILE_TRAIN_RUNS: 4 is outside [5, 100000]");
    assert_int_equal(corun__settings_set(&s, "plain_below_us", "1e6", why, sizeof(why)), CORUN_OK);
    for (i = 0; i < corun__settings_count(); i++) {
        if (strcmp(corun__settings_info(i)->name, "chunk_max") == 0) {
            corun__settings_bounds(i, buf, sizeof(buf));
            assert_string_equal(buf, "[1, 1048576]");
        }
        if (strcmp(corun__settings_info(i)->name, "plain_below_us") == 0) {
            corun__settings_format(&s, i, buf, sizeof(buf));
            assert_string_equal(buf, "1000000");
        }
    }
}

/* PROFILE_PATH: not empty; 'off' in any case is no store. */
static void profile_path_off_and_empty(void **state)
{
    corun__settings s;
    char why[256], path[256];

    corun__settings_default(&s);
    assert_int_equal(corun__settings_set(&s, "profile_path", "", why, sizeof(why)), CORUN_EINVAL);
    assert_non_null(strstr(why, "CORUN_PROFILE_PATH: empty"));
    assert_int_equal(corun__pstore_path("OFF", path, sizeof(path), why, sizeof(why)), CORUN_ENOENT);
    assert_int_equal(corun__pstore_path("Off", path, sizeof(path), why, sizeof(why)), CORUN_ENOENT);
    assert_int_equal(corun__pstore_path("offx", path, sizeof(path), why, sizeof(why)), CORUN_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_parse),
        cmocka_unit_test(given_by_variable_or_set),
        cmocka_unit_test(read_one),
        cmocka_unit_test(sim_defaults_are_the_tables),
        cmocka_unit_test(ctx_settings_over_the_environment),
        cmocka_unit_test(policy_names_are_the_registrys),
        cmocka_unit_test(numbers_are_decimal_and_bounded),
        cmocka_unit_test(profile_path_off_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
