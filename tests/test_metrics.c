/* test_metrics.c — ANTT, STP, fairness and percentiles on values worked by
 * hand, and a figure as JSON: a number, or null where there is none. */
#include "support.h"

#include <math.h>

#include "common/json_num.h"
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

static void figures_as_json(void **state)
{
    const double none[] = {NAN, INFINITY, -INFINITY};
    json_t *j, *row;
    size_t i;

    j = corun__json_num(1.625);
    assert_true(json_is_real(j));
    assert_true(json_real_value(j) == 1.625);
    json_decref(j);
    j = corun__json_num(0.0);
    assert_true(json_is_real(j));
    assert_true(json_real_value(j) == 0.0);
    json_decref(j);
    for (i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        j = corun__json_num(none[i]);
        assert_true(json_is_null(j));
        json_decref(j);
    }
    /* in a row: the row stays, the figure is null ("s:f" would fail the pack) */
    row = json_pack("{s:s, s:o, s:o}", "system", "mps", "p50", corun__json_num(NAN), "p99",
                    corun__json_num(2.5));
    assert_non_null(row);
    assert_true(json_is_null(json_object_get(row, "p50")));
    assert_true(json_real_value(json_object_get(row, "p99")) == 2.5);
    json_decref(row);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_apps),
        cmocka_unit_test(solo_is_one),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(percentiles),
        cmocka_unit_test(figures_as_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
