/* test_metrics.c — ANTT, STP, fairness and percentiles on values worked by hand. */
#include "support.h"

#include "core/metrics.h"
#include "corun/corun.h"

static void two_apps(void **state)
{
    /* App A slowed 2x, app B slowed 1.25x: NTT 2 and 1.25, ANTT 1.625;
     * NP 0.5 and 0.8, STP 1.3, fairness 0.5/0.8 = 0.625. */
    corun__app_times a[] = {{100, 200}, {400, 500}};
    corun__colocation c;

    assert_int_equal(corun__colocation_calc(a, 2, &c), CORUN_OK);
    assert_float_equal(c.antt, 1.625, 1e-12);
    assert_float_equal(c.stp, 1.3, 1e-12);
    assert_float_equal(c.fairness, 0.625, 1e-12);
}

static void solo_is_one(void **state)
{
    corun__app_times a[] = {{7, 7}};
    corun__colocation c;

    assert_int_equal(corun__colocation_calc(a, 1, &c), CORUN_OK);
    assert_float_equal(c.antt, 1.0, 1e-12);
    assert_float_equal(c.stp, 1.0, 1e-12);
    assert_float_equal(c.fairness, 1.0, 1e-12);
}

static void bad_input(void **state)
{
    corun__app_times a[] = {{0, 7}};
    corun__colocation c;

    assert_int_equal(corun__colocation_calc(a, 0, &c), CORUN_EINVAL);
    assert_int_equal(corun__colocation_calc(a, 1, &c), CORUN_EINVAL);
}

static void percentiles(void **state)
{
    double v[] = {5, 1, 4, 2, 3};
    double w[100];
    int i;

    assert_float_equal(corun__percentile(v, 5, 50), 3, 1e-12);
    assert_float_equal(corun__percentile(v, 5, 0), 1, 1e-12);
    assert_float_equal(corun__percentile(v, 5, 100), 5, 1e-12);
    assert_float_equal(corun__percentile(v, 5, 25), 2, 1e-12);
    for (i = 0; i < 100; i++) {
        w[i] = i + 1; /* 1..100 */
    }
    /* h = 99 * 0.99 = 98.01 -> 99 + 0.01 * (100 - 99) = 99.01 */
    assert_float_equal(corun__percentile(w, 100, 99), 99.01, 1e-9);
    assert_float_equal(corun__mean(w, 100), 50.5, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_apps),
        cmocka_unit_test(solo_is_one),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(percentiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
