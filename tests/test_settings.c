/* test_settings.c — the settings table: defaults within their bounds, which
 * settings were given, one setting read alone (corun-cc, the launch shim),
 * the simulator's defaults equal to the table's, and a context's settings
 * given over the environment (corun_test_ctx_create). */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "backends/sim/sim.h"
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

    setenv("CORUN_BACKEND", "cuda", 1);
    assert_int_equal(corun_test_ctx_create(NULL, sim, &ctx), CORUN_OK);
    assert_string_equal(corun_ctx_backend(ctx), "sim");
    corun_ctx_destroy(ctx);
    assert_string_equal(getenv("CORUN_BACKEND"), "cuda");
    unsetenv("CORUN_BACKEND");
    assert_int_equal(corun_test_ctx_create(NULL, bad, &ctx), CORUN_EINVAL);
    assert_non_null(strstr(corun_last_error(), "CORUN_PLAIN_BELOW_US"));
    assert_int_equal(corun_test_ctx_create(NULL, unknown, &ctx), CORUN_ENOENT);
    assert_int_equal(corun_test_ctx_create(NULL, malformed, &ctx), CORUN_EINVAL);
    assert_non_null(strstr(corun_last_error(), "NAME=VALUE"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_parse),
        cmocka_unit_test(given_by_variable_or_set),
        cmocka_unit_test(read_one),
        cmocka_unit_test(sim_defaults_are_the_tables),
        cmocka_unit_test(ctx_settings_over_the_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
