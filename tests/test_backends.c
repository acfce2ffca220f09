/* test_backends.c — the backend factory (backends/create.h): which backend
 * a name gives, told by capability, without making one; and that making it
 * gives that backend. Holds with or without a GPU: where no GPU is usable
 * (this machine without a driver, or a build without CUDA) "auto" falls
 * back to the simulator and "cuda" is an error with the reason. */
#include "support.h"

#include <string.h>

#include "backends/create.h"
#include "core/settings.h"
#include "corun/corun.h"

static void sim_is_the_simulator(void **state)
{
    corun__backend_pick p;
    char why[256] = "";

    assert_int_equal(corun__backend_resolve("sim", "auto", &p, why, sizeof(why)), CORUN_OK);
    assert_string_equal(p.name, "sim");
    assert_true(p.caps & CORUN_BE_VIRTUAL_TIME);
    assert_false(p.caps & CORUN_BE_USER_CODE);
    assert_false(p.fell_back);
}

static void auto_is_cuda_where_usable_else_sim(void **state)
{
    corun__backend_pick cuda, aut;
    char why_cuda[256] = "", why_auto[256] = "";
    int rc = corun__backend_resolve("cuda", "auto", &cuda, why_cuda, sizeof(why_cuda));

    assert_int_equal(corun__backend_resolve("auto", "auto", &aut, why_auto, sizeof(why_auto)), CORUN_OK);
    if (rc == CORUN_OK) {
        /* a GPU machine */
        assert_string_equal(cuda.name, "cuda");
        assert_true(cuda.caps & CORUN_BE_USER_CODE);
        assert_false(cuda.caps & CORUN_BE_VIRTUAL_TIME);
        assert_string_equal(aut.name, "cuda");
        assert_false(aut.fell_back);
        return;
    }
    /* no usable GPU: cuda is an error that says why, auto the simulator with the same why */
    assert_int_equal(rc, CORUN_ENODEV);
    assert_true(strlen(why_cuda) > 0);
    assert_string_equal(aut.name, "sim");
    assert_true(aut.caps & CORUN_BE_VIRTUAL_TIME);
    assert_true(aut.fell_back);
    assert_string_equal(why_auto, why_cuda);
}

static void unknown_names_are_refused(void **state)
{
    corun__backend_pick p;
    char why[256] = "";

    assert_int_equal(corun__backend_resolve("tpu", "auto", &p, why, sizeof(why)), CORUN_EINVAL);
    assert_non_null(strstr(why, "unknown backend 'tpu'"));
    assert_int_equal(corun__backend_resolve("", "auto", &p, why, sizeof(why)), CORUN_EINVAL);
    /* setting DEVICE: auto or a number, on every backend */
    assert_int_equal(corun__backend_resolve("sim", "one", &p, why, sizeof(why)), CORUN_EINVAL);
    assert_non_null(strstr(why, "CORUN_DEVICE = 'one'"));
    assert_int_equal(corun__backend_resolve("sim", "1", &p, why, sizeof(why)), CORUN_OK);
    assert_true(corun__backend_is_auto("auto"));
    assert_false(corun__backend_is_auto("sim"));
    assert_false(corun__backend_is_auto(NULL));
}

/* What resolve says is what create makes, so a command may resolve once and
 * make the picked backend for each of its runs. */
static void create_makes_the_pick(void **state)
{
    static const char *const names[] = {"sim", "auto"};
    corun__settings set;
    corun_gpu_desc gpu;
    size_t i;

    corun__settings_default(&set);
    corun_gpu_desc_h100(&gpu);
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        corun__backend_pick p;
        corun__backend *be = NULL;
        char why[256] = "";
        assert_int_equal(corun__backend_resolve(names[i], set.device, &p, why, sizeof(why)), CORUN_OK);
        if (corun__backend_create(names[i], &set, &gpu, 1, &be, why, sizeof(why)) != CORUN_OK) {
            /* only a GPU that passes the check and then fails to be set up */
            assert_string_equal(p.name, "cuda");
            assert_true(strlen(why) > 0);
            continue;
        }
        assert_string_equal(be->ops->name, p.name);
        assert_int_equal(be->ops->caps, p.caps);
        be->ops->destroy(be);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sim_is_the_simulator),
        cmocka_unit_test(auto_is_cuda_where_usable_else_sim),
        cmocka_unit_test(unknown_names_are_refused),
        cmocka_unit_test(create_makes_the_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
