/* test_slate.c — Slate's policy.
 *
 *  - Classes: Slate's Table II benchmarks fall in the classes the paper
 *    gives them; Table I reads as printed.
 *  - Profiling measures achieved rates: a bandwidth-bound kernel achieves
 *    the peak, not the demand it declares.
 *  - Decisions, on a recording backend: a complementary arrival shrinks the
 *    running kernel and takes the CapSMs it gave up, a conflicting or
 *    unknown one waits; the survivor grows back.
 *  - On the simulator, over all 15 pairings of Slate's benchmarks: slate
 *    co-runs exactly the complementary pairs, runs the conflicting ones
 *    solo, and its STP stays at or above mps's (co-run pairs) or close to it
 *    (solo pairs). */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/create.h"
#include "backends/null/null.h"
#include "backends/sim/sim.h"
#include "core/intensity.h"
#include "core/policy.h"
#include "core/profile_store.h"
#include "core/sched.h"
#include "scenario/experiments.h"

static char dir[128];
static char store[256];

static int make_dir(void **state)
{
    corun_test_mkdtemp(dir, sizeof(dir), "slate");
    snprintf(store, sizeof(store), "%s/profiles.txt", dir);
    return 0;
}

static int remove_dir(void **state)
{
    corun_test_rmdir(dir);
    return 0;
}

static void table_ii_benchmarks_get_their_classes(void **state)
{
    /* Slate Table II on the Titan Xp: 12.15 TFLOP/s, 547.7 GB/s peaks. */
    static const struct {
        const char *name;
        double gflops, gbs;
        corun__kclass cls;
    } b[] = {
        {"BS", 161.3, 401.49, CORUN_KCLASS_MM}, {"GS", 19.6, 340.9, CORUN_KCLASS_MM},
        {"MM", 1525, 403.5, CORUN_KCLASS_MM},   {"RG", 4.2, 71.6, CORUN_KCLASS_LC},
        {"TR", 0.0, 568.6, CORUN_KCLASS_HM},
    };
    corun__settings set;
    size_t i;

    corun__settings_default(&set);
    for (i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
        corun__kclass c = corun__kclass_of(b[i].gflops / 12150, b[i].gbs / 547.7, &set);
        if (c != b[i].cls) {
            fail_msg("%s: %s, expected %s", b[i].name, corun__kclass_name(c),
                     corun__kclass_name(b[i].cls));
        }
    }
    /* Memory first: a high-compute kernel with medium memory is M_M. */
    assert_int_equal(corun__kclass_of(0.5, 0.5, &set), CORUN_KCLASS_MM);
    assert_int_equal(corun__kclass_of(0.5, 0.1, &set), CORUN_KCLASS_HC);
    assert_int_equal(corun__kclass_of(0.05, 0.1, &set), CORUN_KCLASS_MC);
    assert_string_equal(corun__kclass_name(CORUN_KCLASS_HM), "H_M");
}

static void table_i_reads_as_printed(void **state)
{
    /* Slate Table I: rows (the running kernel) and columns (the candidate)
     * L_C, M_C, H_C, M_M, H_M; 1 = corun, 0 = solo. */
    static const int t[5][5] = {
        {1, 1, 0, 1, 1}, {1, 1, 0, 0, 1}, {0, 0, 0, 0, 1}, {1, 0, 1, 0, 0}, {1, 1, 0, 0, 0},
    };
    int r, c;

    for (r = 0; r < 5; r++) {
        for (c = 0; c < 5; c++) {
            assert_int_equal(corun__slate_complementary((corun__kclass)r, (corun__kclass)c),
                             t[r][c]);
        }
    }
    /* The two cells where the published table is not symmetric. */
    assert_false(corun__slate_complementary(CORUN_KCLASS_HC, CORUN_KCLASS_MM));
    assert_true(corun__slate_complementary(CORUN_KCLASS_MM, CORUN_KCLASS_HC));
    assert_true(corun__slate_complementary(CORUN_KCLASS_HC, CORUN_KCLASS_HM));
    assert_false(corun__slate_complementary(CORUN_KCLASS_HM, CORUN_KCLASS_HC));
    assert_false(corun__slate_complementary(CORUN_KCLASS_UNKNOWN, CORUN_KCLASS_LC));
    assert_false(corun__slate_complementary(CORUN_KCLASS_LC, CORUN_KCLASS_UNKNOWN));
}

/* ---- profiling on the simulator ------------------------------------------ */

static corun__settings sim_settings;

static void init_sim_settings(void)
{
    char why[256];

    corun__settings_default(&sim_settings);
    assert_int_equal(corun__settings_set(&sim_settings, "profile_path", store, why, sizeof(why)),
                     CORUN_OK);
}

typedef int (*make_backend_fn)(void *, const corun__scenario *, uint64_t, corun__backend **,
                               char *, size_t);

/* The index of the app whose kernel is `name` in sc, or -1. */
static int app_index(const corun__scenario *sc, const char *name)
{
    size_t i;

    for (i = 0; i < sc->napps; i++) {
        if (strcmp(sc->apps[i].kernel.name, name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* The Slate scenario, and an environment and default options that train it
 * on backends from `make`. */
static void slate_training(corun__scenario *sc, corun__run_env *env, corun__train_opts *o,
                           make_backend_fn make)
{
    char why[512] = "";

    init_sim_settings();
    assert_int_equal(corun__scenario_load(corun_test_path("bench/scenarios/slate-pairs.json"), sc,
                                          why, sizeof(why)),
                     CORUN_OK);
    memset(env, 0, sizeof(*env));
    env->make_backend = make;
    env->make_ctx = &sim_settings;
    env->settings = sim_settings;
    corun__train_opts_default(o, &sim_settings);
}

static void profiles_measure_achieved_rates(void **state)
{
    corun__scenario sc;
    corun__run_env env;
    corun__train_opts o;
    corun__pstore ps;
    char why[512] = "";
    const corun__pprof *tr, *bs, *rg;

    slate_training(&sc, &env, &o, corun_test_make_sim);
    o.runs = 0;
    o.profile_runs = 1;
    corun__pstore_init(&ps);
    assert_int_equal(corun__scenario_train(&sc, &env, &o, -1, &ps, why, sizeof(why)), CORUN_OK);
    /* each kernel's three loop windows at its own size, kept as runs: its
     * rate alone (fgqos's isolated rate) */
    assert_int_equal(ps.nruns, 15);
    for (size_t i = 0; i < sc.napps; i++) {
        const corun__kspec *k = &sc.apps[i].kernel;
        assert_true(corun__pstore_own_rate(&ps, "sim", k->name,
                                           (double)k->grid.x * k->grid.y * k->grid.z,
                                           (double)k->block.x * k->block.y * k->block.z) > 0);
    }
    assert_int_equal(ps.nprofs, 5);
    tr = corun__pstore_find_prof(&ps, "sim", "slate_tr");
    bs = corun__pstore_find_prof(&ps, "sim", "slate_bs");
    rg = corun__pstore_find_prof(&ps, "sim", "slate_rg");
    assert_non_null(tr);
    assert_non_null(bs);
    assert_non_null(rg);
    /* TR demands 1.6 peaks of DRAM bandwidth; it can only get one. */
    print_message("achieved bandwidth: TR %.3f, BS %.3f, RG %.3f of peak\n", tr->bw_frac,
                  bs->bw_frac, rg->bw_frac);
    assert_true(tr->bw_frac > 0.9 && tr->bw_frac <= 1.05);
    /* BS is not held back: it achieves nearly what it demands. */
    assert_true(fabs(bs->bw_frac - 0.73) < 0.05);
    /* RG's 264 blocks use a quarter of the GPU's slots. */
    assert_true(rg->bw_frac < 0.05);
    assert_int_equal(corun__kclass_of(tr->flop_frac, tr->bw_frac, &sim_settings), CORUN_KCLASS_HM);
    assert_int_equal(corun__kclass_of(bs->flop_frac, bs->bw_frac, &sim_settings), CORUN_KCLASS_MM);
    assert_int_equal(corun__kclass_of(rg->flop_frac, rg->bw_frac, &sim_settings), CORUN_KCLASS_LC);
    corun__pstore_free(&ps);
}

/* A backend that measures rates itself (as cuda does with its counters) is
 * believed: its shares go into the profile, and the log says how they were
 * measured. The sim with a rates operation added stands in for it. */
static corun__backend_ops measuring_ops;
static int rates_calls;

static int fixed_rates(corun__backend *be, const corun__kspec *spec, corun__rates *out, char *why,
                       size_t why_len)
{
    (void)be;
    memset(out, 0, sizeof(*out));
    rates_calls++;
    if (strcmp(spec->name, "slate_rg") == 0) {
        snprintf(why, why_len, "cannot measure '%s'", spec->name);
        return CORUN_ENOTSUP;
    }
    out->peak_flops = 60e12;
    out->peak_bytes_per_s = 3e12;
    out->flops_per_s = 30e12;
    out->bytes_per_s = 0.3e12;
    out->flop_frac = 0.5;
    out->bw_frac = 0.1;
    snprintf(out->source, sizeof(out->source), "test counters");
    return CORUN_OK;
}

static int make_measuring_sim(void *ctx, const corun__scenario *sc, uint64_t seed,
                              corun__backend **out, char *why, size_t why_len)
{
    int rc = corun_test_make_sim(ctx, sc, seed, out, why, why_len);

    if (rc == CORUN_OK) {
        measuring_ops = *(*out)->ops;
        measuring_ops.rates = fixed_rates;
        (*out)->ops = &measuring_ops;
    }
    return rc;
}

static char heard[2048];

static void hear(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(heard + strlen(heard), sizeof(heard) - strlen(heard), "%s\n", line);
}

static void measured_rates_are_recorded(void **state)
{
    corun__scenario sc;
    corun__run_env env;
    corun__train_opts o;
    corun__pstore ps;
    char why[512] = "";
    const corun__pprof *bs;
    int bs_app, rg_app;

    slate_training(&sc, &env, &o, make_measuring_sim);
    bs_app = app_index(&sc, "slate_bs");
    rg_app = app_index(&sc, "slate_rg");
    assert_true(bs_app >= 0 && rg_app >= 0);
    o.runs = 0;
    o.profile_runs = 1;
    o.log = hear;
    heard[0] = '\0';
    rates_calls = 0;
    corun__pstore_init(&ps);
    assert_int_equal(corun__scenario_train(&sc, &env, &o, bs_app, &ps, why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(rates_calls, 1);
    bs = corun__pstore_find_prof(&ps, "sim", "slate_bs");
    assert_non_null(bs);
    /* the backend's shares, not the declared mem_bw of 0.73 */
    assert_true(fabs(bs->flop_frac - 0.5) < 1e-12);
    assert_true(fabs(bs->bw_frac - 0.1) < 1e-12);
    assert_int_equal(corun__kclass_of(bs->flop_frac, bs->bw_frac, &sim_settings),
                     CORUN_KCLASS_HC);
    assert_non_null(strstr(heard, "slate_bs"));
    assert_non_null(strstr(heard, "test counters"));
    /* a kernel the backend cannot measure gets no profile, says why, and
     * keeps its loop windows at its own size */
    heard[0] = '\0';
    assert_int_equal(corun__scenario_train(&sc, &env, &o, rg_app, &ps, why, sizeof(why)),
                     CORUN_OK);
    assert_non_null(strstr(heard, "no intensity profile of 'slate_rg'"));
    assert_non_null(strstr(heard, "cannot measure 'slate_rg'"));
    assert_null(corun__pstore_find_prof(&ps, "sim", "slate_rg"));
    assert_int_equal(ps.nruns, 6); /* slate_bs's and slate_rg's, three windows each */
    corun__pstore_free(&ps);
}

/* A kernel whose workers leave unbidden while it is profiled alone (on the
 * H100, after a CUPTI measurement, its control block once arrived as zeros)
 * fails the training with the reason; under the manual policy nothing would
 * resume it, and training used to wait for it forever. The sim's fault
 * injection halts the kernel on the device behind the scheduler's back. */
static int make_halting_sim(void *ctx, const corun__scenario *sc, uint64_t seed,
                            corun__backend **out, char *why, size_t why_len)
{
    corun__sim_opts o;

    (void)ctx;
    (void)why;
    (void)why_len;
    corun__sim_opts_default(&o);
    o.desc = sc->gpu;
    o.seed = seed;
    snprintf(o.faults.signal_kernel, sizeof(o.faults.signal_kernel), "slate_bs");
    o.faults.signal_at_task = 100;
    o.faults.signal_kind = CORUN_SIG_HALT_GEN;
    o.faults.signal_value = 1;
    return corun__sim_create(&o, out);
}

static void a_kernel_that_stops_alone_fails_training(void **state)
{
    corun__scenario sc;
    corun__run_env env;
    corun__train_opts o;
    corun__pstore ps;
    char why[512] = "";
    int bs_app;

    (void)state;
    slate_training(&sc, &env, &o, make_halting_sim);
    bs_app = app_index(&sc, "slate_bs");
    assert_true(bs_app >= 0);
    o.runs = 1;
    o.profile_runs = 0;
    corun__pstore_init(&ps);
    assert_int_equal(corun__scenario_train(&sc, &env, &o, bs_app, &ps, why, sizeof(why)),
                     CORUN_ESTATE);
    print_message("%s\n", why);
    assert_non_null(strstr(why, "'slate_bs' stopped alone"));
    assert_non_null(strstr(why, "left without being told to"));
    assert_int_equal(ps.nruns, 0); /* nothing recorded from the broken run */
    corun__pstore_free(&ps);
}

/* ---- decisions, on the recording backend ------------------------------- */

typedef struct fixture {
    corun__backend *be;
    corun__sched *s;
} fixture;

static fixture fx;

static void add_prof(corun__pstore *ps, const char *kernel, double flop, double bw)
{
    corun__pprof p;

    memset(&p, 0, sizeof(p));
    snprintf(p.backend, sizeof(p.backend), "null");
    snprintf(p.kernel, sizeof(p.kernel), "%s", kernel);
    p.flop_frac = flop;
    p.bw_frac = bw;
    p.dur_ns = 1e6;
    p.samples = 1;
    assert_int_equal(corun__pstore_add_prof(ps, &p), CORUN_OK);
}

static int setup_null(void **state)
{
    corun__pstore ps;
    corun_gpu_desc d;
    corun__sched_opts o;
    char note[256], why[256];

    corun__pstore_init(&ps);
    add_prof(&ps, "compute", 0.5, 0.05);  /* H_C */
    add_prof(&ps, "compute2", 0.5, 0.05); /* H_C */
    add_prof(&ps, "memory", 0.001, 1.0);  /* H_M */
    add_prof(&ps, "light", 0.001, 0.05);  /* L_C */
    assert_int_equal(corun__pstore_merge(store, &ps, note, sizeof(note)), CORUN_OK);
    corun__pstore_free(&ps);

    corun_gpu_desc_h100(&d);
    assert_int_equal(corun__null_create(&d, &fx.be), CORUN_OK);
    memset(&o, 0, sizeof(o));
    o.backend = fx.be;
    o.policy = corun__policy_find("slate");
    assert_non_null(o.policy);
    corun__settings_default(&o.settings);
    assert_int_equal(corun__settings_set(&o.settings, "profile_path", store, why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(corun__sched_create(&o, &fx.s), CORUN_OK);
    return 0;
}

static int teardown_null(void **state)
{
    corun__sched_destroy(fx.s);
    fx.be->ops->destroy(fx.be);
    return 0;
}

static corun__job *submit(const char *name, uint32_t tasks)
{
    corun__kspec k;
    corun_launch_attr a = {.cls = CORUN_CLASS_BATCH, .weight = 1};
    corun__job *out = NULL;
    char why[256];

    memset(&k, 0, sizeof(k));
    snprintf(k.name, sizeof(k.name), "%s", name);
    k.grid = (corun_dim3){tasks, 1, 1};
    k.block = (corun_dim3){256, 1, 1};
    k.shape.regs_per_thread = 32; /* 8 workers per SM */
    k.task_ns = (corun__dist){CORUN_DIST_CONST, 1000, 0};
    assert_int_equal(corun__sched_submit(fx.s, &k, &a, NULL, NULL, &out, why, sizeof(why)),
                     CORUN_OK);
    return out;
}

static void complete(corun__job *k)
{
    corun__null_set_done(fx.be, k->ex, k->tasks);
    while (k->inflight > 0) {
        corun__null_finish(fx.be, (uint64_t)(uintptr_t)k);
        assert_int_equal(corun__sched_step(fx.s, corun__sched_now(fx.s) + 1), CORUN_OK);
    }
    /* The policy decides after launches made at the same instant. */
    assert_int_equal(corun__sched_step(fx.s, corun__sched_now(fx.s) + 1), CORUN_OK);
    assert_int_equal(corun__sched_step(fx.s, corun__sched_now(fx.s) + 1), CORUN_OK);
}

static void complementary_arrival_shares_the_gpu(void **state)
{
    corun__job *c = submit("compute", 100000), *m;

    assert_int_equal(corun__job_capsm(c), 132);
    m = submit("memory", 100000);
    /* H_C running, H_M arriving: corun. Half each. */
    assert_int_equal(m->state, CORUN_JS_RUNNING);
    assert_int_equal(corun__job_capsm(c), 66);
    assert_int_equal(corun__job_capsm(m), 66);
    /* The survivor claims the SMs of the one that finished. */
    complete(m);
    assert_int_equal(corun__job_capsm(c), 132);
}

static void conflicting_arrival_waits(void **state)
{
    corun__job *c = submit("compute", 100000), *c2 = submit("compute2", 100000);

    assert_int_equal(c2->state, CORUN_JS_WAITING);
    assert_int_equal(corun__job_capsm(c), 132);
    complete(c);
    assert_int_equal(c2->state, CORUN_JS_RUNNING);
    assert_int_equal(corun__job_capsm(c2), 132);
}

static void first_complementary_kernel_in_the_queue_is_chosen(void **state)
{
    corun__job *c = submit("compute", 100000);
    corun__job *c2 = submit("compute2", 100000);
    corun__job *u = submit("unprofiled", 100000);
    corun__job *m = submit("memory", 100000);

    /* Slate skips kernels that conflict (or are unknown) to find one that
     * complements the running kernel. */
    assert_int_equal(c2->state, CORUN_JS_WAITING);
    assert_int_equal(u->state, CORUN_JS_WAITING);
    assert_int_equal(m->state, CORUN_JS_RUNNING);
    assert_int_equal(corun__job_capsm(c), 66);
    /* When one co-runner is done, the other is the running kernel: nothing
     * waiting complements it (H_M then H_C is solo), so it takes the GPU. */
    complete(c);
    assert_int_equal(c2->state, CORUN_JS_WAITING);
    assert_int_equal(corun__job_capsm(m), 132);
    /* Then the head of the queue runs, solo. */
    complete(m);
    assert_int_equal(c2->state, CORUN_JS_RUNNING);
    assert_int_equal(corun__job_capsm(c2), 132);
    assert_int_equal(u->state, CORUN_JS_WAITING);
}

static void asymmetric_cell_follows_the_running_kernel(void **state)
{
    corun__job *m = submit("memory", 100000), *c = submit("compute", 100000);

    /* Row H_M, column H_C: solo (the other way round, it is corun). */
    assert_int_equal(c->state, CORUN_JS_WAITING);
    assert_int_equal(corun__job_capsm(m), 132);
}

static void small_kernel_takes_only_what_it_needs(void **state)
{
    corun__job *m = submit("memory", 100000), *l = submit("light", 80);

    /* 80 blocks need 10 SMs; the partner keeps the rest. */
    assert_int_equal(corun__job_capsm(l), 10);
    assert_int_equal(corun__job_capsm(m), 122);
}

/* ---- all of Slate's pairings, on the simulator --------------------------- */

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) {
        fail_msg("no number '%s'", key);
    }
    return json_number_value(v);
}

static void slate_coruns_complementary_pairs_only(void **state)
{
    corun__exp_opts o;
    char why[1024] = "";
    json_t *r, *p;
    size_t i, ncorun = 0, nsolo = 0;

    init_sim_settings();
    corun_test_exp_opts(&o, &sim_settings);
    o.duration_ms = 40;
    r = corun__exp_run("slate", &o, why, sizeof(why));
    if (r == NULL) {
        fail_msg("%s", why);
    }
    assert_int_equal(json_array_size(json_object_get(r, "pairs")), 15);
    json_array_foreach(json_object_get(r, "pairs"), i, p) {
        const char *a = json_string_value(json_object_get(p, "a"));
        const char *b = json_string_value(json_object_get(p, "b"));
        bool corun = strcmp(json_string_value(json_object_get(p, "decision")), "corun") == 0;
        double frac = num(p, "corun_fraction");
        print_message("%-3s + %-3s %s: co-ran %3.0f%%, STP %.3f (mps %.3f)\n", a, b,
                      corun ? "corun" : "solo ", frac * 100, num(p, "stp_slate"),
                      num(p, "stp_mps"));
        /* Slate co-runs RG (L_C) with everything; the M_M and H_M kernels
         * conflict with each other (Table I). */
        assert_int_equal(corun, strcmp(a, "rg") == 0 || strcmp(b, "rg") == 0);
        if (corun) {
            ncorun++;
            assert_true(frac > 0.8);
            assert_true(num(p, "stp_slate") >= 0.99 * num(p, "stp_mps"));
        } else {
            nsolo++;
            assert_true(frac < 0.01);
            /* Solo, one kernel at a time: what mps does with full-GPU
             * grids, less the tail that mps's leftover policy overlaps
             * (with a block alone on an SM 4x faster, 0044, up to 5 %). */
            assert_true(num(p, "stp_slate") >= 0.94 * num(p, "stp_mps"));
        }
    }
    assert_int_equal(ncorun, 5);
    assert_int_equal(nsolo, 10);
    assert_true(num(r, "mean_corun_gain") > 0);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_ii_benchmarks_get_their_classes),
        cmocka_unit_test(table_i_reads_as_printed),
        cmocka_unit_test(profiles_measure_achieved_rates),
        cmocka_unit_test(measured_rates_are_recorded),
        cmocka_unit_test(a_kernel_that_stops_alone_fails_training),
        cmocka_unit_test_setup_teardown(complementary_arrival_shares_the_gpu, setup_null,
                                        teardown_null),
        cmocka_unit_test_setup_teardown(conflicting_arrival_waits, setup_null, teardown_null),
        cmocka_unit_test_setup_teardown(first_complementary_kernel_in_the_queue_is_chosen,
                                        setup_null, teardown_null),
        cmocka_unit_test_setup_teardown(asymmetric_cell_follows_the_running_kernel, setup_null,
                                        teardown_null),
        cmocka_unit_test_setup_teardown(small_kernel_takes_only_what_it_needs, setup_null,
                                        teardown_null),
        cmocka_unit_test(slate_coruns_complementary_pairs_only),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
