/* test_flep.c — FLEP's policies.
 *
 * Decisions, observed through the calls flep-hpf makes to a recording
 * backend: a higher priority preempts temporally, or spatially (only the
 * CapSMs it needs) when it cannot fill the GPU; among equal priorities the
 * shortest remaining time preempts only when the running kernel's remaining
 * time exceeds the waiting one's plus the preemption overhead.
 *
 * The papers' headline properties, on simulator runs of bench/scenarios/:
 *  - HPF: a high-priority kernel behind a long low-priority one turns around
 *    at least 5x faster than under mps (FLEP: 10.1x on average);
 *  - SRT improves ANTT over FIFO (mps) at equal priorities;
 *  - spatial preemption costs less than temporal (FLEP 6.4);
 *  - FFS at weights 2:1 gives shares within 3 points of 2/3 and 1/3 and
 *    loses less throughput than FFS_MAX_OVERHEAD;
 *  - and keeps 2:1 on the recording backend when the weight-2 flow's
 *    kernels leave gaps between them and stopped kernels drain for varying
 *    times, as on a real GPU. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/create.h"
#include "backends/null/null.h"
#include "core/policy.h"
#include "core/profile_store.h"
#include "corun/corun_sim.h"
#include "core/sched.h"
#include "scenario/experiments.h"

static char dir[128];
static char store[256];

static int make_dir(void **state)
{
    corun_test_mkdtemp(dir, sizeof(dir), "flep");
    snprintf(store, sizeof(store), "%s/profiles.txt", dir);
    return 0;
}

static int remove_dir(void **state)
{
    corun_test_rmdir(dir);
    return 0;
}

/* ---- decisions, on the recording backend ------------------------------- */

typedef struct fixture {
    corun__backend *be;
    corun__sched *s;
} fixture;

static fixture fx;

/* Durations the model will learn: 1 us per block-task for "long" and
 * "short", so T_e = tasks us. */
static void write_models(void)
{
    corun__pstore ps;
    char note[256];
    int i, k;

    corun__pstore_init(&ps);
    for (k = 0; k < 2; k++) {
        for (i = 1; i <= 10; i++) {
            corun__prun r;
            memset(&r, 0, sizeof(r));
            snprintf(r.backend, sizeof(r.backend), "null");
            snprintf(r.kernel, sizeof(r.kernel), "%s", k ? "short" : "long");
            r.grid = 1000.0 * i;
            r.block = 256;
            r.dur_ns = 1000.0 * r.grid;
            assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
        }
    }
    assert_int_equal(corun__pstore_merge(store, &ps, note, sizeof(note)), CORUN_OK);
    corun__pstore_free(&ps);
}

static void start_policy(const char *policy, int spatial, double overhead_us)
{
    corun_gpu_desc d;
    corun__sched_opts o;
    char why[256];

    corun_gpu_desc_h100(&d);
    assert_int_equal(corun__null_create(&d, &fx.be), CORUN_OK);
    memset(&o, 0, sizeof(o));
    o.backend = fx.be;
    o.policy = corun__policy_find(policy);
    assert_non_null(o.policy);
    corun__settings_default(&o.settings);
    assert_int_equal(corun__settings_set(&o.settings, "profile_path", store, why, sizeof(why)),
                     CORUN_OK);
    o.settings.hpf_spatial = (uint64_t)spatial;
    o.settings.preempt_overhead_us = overhead_us;
    assert_int_equal(corun__sched_create(&o, &fx.s), CORUN_OK);
}

static void start_hpf(int spatial, double overhead_us)
{
    start_policy("flep-hpf", spatial, overhead_us);
}

static int setup_null(void **state)
{
    write_models();
    return 0;
}

static int teardown_null(void **state)
{
    corun__sched_destroy(fx.s);
    fx.be->ops->destroy(fx.be);
    return 0;
}

static corun__job *submit_w(const char *name, int32_t prio, uint32_t weight, uint32_t tasks)
{
    corun__kspec k;
    corun_launch_attr a = {.cls = CORUN_CLASS_BATCH, .priority = prio, .weight = weight};
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

static corun__job *submit(const char *name, int32_t prio, uint32_t tasks)
{
    return submit_w(name, prio, 1, tasks);
}

static int signals(const corun__job *k, corun__signal sig, uint64_t *value)
{
    const corun__null_call *c;
    size_t n = corun__null_calls(fx.be, &c), i;
    int count = 0;

    for (i = 0; i < n; i++) {
        if (c[i].what == CORUN_NULL_SIGNAL && c[i].k == k->ex && c[i].sig == sig) {
            count++;
            if (value != NULL) {
                *value = c[i].value;
            }
        }
    }
    return count;
}

/* The workers of k leave with `done` tasks done; the scheduler hears of it. */
static void leave(corun__job *k, uint64_t done)
{
    corun__null_set_done(fx.be, k->ex, done);
    while (k->inflight > 0) {
        corun__null_finish(fx.be, (uint64_t)(uintptr_t)k);
        assert_int_equal(corun__sched_step(fx.s, corun__sched_now(fx.s) + 1), CORUN_OK);
    }
    assert_int_equal(corun__sched_step(fx.s, corun__sched_now(fx.s) + 1), CORUN_OK);
}

static void higher_priority_preempts_temporally(void **state)
{
    corun__job *low, *high;

    start_hpf(1, 50);
    low = submit("long", 0, 100000);
    assert_int_equal(corun__job_capsm(low), 132);
    corun__null_clear(fx.be);
    high = submit("short", 1, 20000); /* fills the GPU: temporal */
    assert_int_equal(signals(low, CORUN_SIG_HALT_GEN, NULL), 1);
    assert_int_equal(low->state, CORUN_JS_STOPPING);
    assert_int_equal(corun__job_capsm(high), 132);
    /* The low kernel waits while the high one runs, and resumes after. */
    leave(low, 3000);
    assert_int_equal(low->state, CORUN_JS_PAUSED);
    leave(high, high->tasks);
    assert_int_equal(high->state, CORUN_JS_DONE);
    assert_int_equal(low->state, CORUN_JS_RUNNING);
    assert_int_equal(corun__job_capsm(low), 132);
    assert_int_equal(low->preemptions, 1);
}

static void small_arrival_preempts_only_the_sms_it_needs(void **state)
{
    corun__job *low, *high;
    uint64_t v = 0;

    start_hpf(1, 50);
    low = submit("long", 0, 100000);
    corun__null_clear(fx.be);
    high = submit("short", 1, 40); /* 40 blocks: 5 SMs of 8 */
    assert_int_equal(signals(low, CORUN_SIG_HALT_GEN, NULL), 0);
    assert_int_equal(signals(low, CORUN_SIG_EVICT_BELOW, &v), 1);
    assert_int_equal(v, 5);
    assert_int_equal(corun__job_capsm(low), 127);
    assert_int_equal(corun__job_capsm(high), 5);
    /* When it is done, the low kernel grows back to the whole GPU. */
    leave(high, high->tasks);
    assert_int_equal(corun__job_capsm(low), 132);
    assert_int_equal(low->preemptions, 0);
}

static void temporal_only_when_spatial_is_off(void **state)
{
    corun__job *low, *high;

    start_hpf(0, 50);
    low = submit("long", 0, 100000);
    corun__null_clear(fx.be);
    high = submit("short", 1, 40);
    assert_int_equal(signals(low, CORUN_SIG_HALT_GEN, NULL), 1);
    assert_int_equal(signals(low, CORUN_SIG_EVICT_BELOW, NULL), 0);
    assert_int_equal(corun__job_capsm(high), 5);
    /* The rest of the GPU stays idle: one kernel at a time. */
    leave(low, 500);
    assert_int_equal(low->state, CORUN_JS_PAUSED);
    assert_int_equal(corun__sched_free_capsm(fx.s), 127);
}

static void lower_priority_waits(void **state)
{
    corun__job *high, *low;

    start_hpf(1, 50);
    high = submit("long", 1, 100000);
    corun__null_clear(fx.be);
    low = submit("short", 0, 1000);
    assert_int_equal(low->state, CORUN_JS_WAITING);
    assert_int_equal(signals(high, CORUN_SIG_HALT_GEN, NULL), 0);
    leave(high, high->tasks);
    assert_int_equal(low->state, CORUN_JS_RUNNING);
}

static void equal_priority_shortest_remaining_time_first(void **state)
{
    corun__job *lng, *shrt;

    /* T_e: long 100 ms, short 20 ms; preempting costs 50 us. */
    start_hpf(1, 50);
    lng = submit("long", 0, 100000);
    corun__null_clear(fx.be);
    shrt = submit("short", 0, 20000);
    assert_int_equal(signals(lng, CORUN_SIG_HALT_GEN, NULL), 1);
    assert_int_equal(corun__job_capsm(shrt), 132);
    /* After the short one, the long one resumes from its counter. */
    leave(lng, 10000);
    leave(shrt, shrt->tasks);
    assert_int_equal(lng->state, CORUN_JS_RUNNING);
}

static void overhead_margin_prevents_preemption(void **state)
{
    corun__job *lng, *shrt;

    /* T_r(long) = 100 ms is not above T_r(short) + O = 20 ms + 90 ms. */
    start_hpf(1, 90000);
    lng = submit("long", 0, 100000);
    corun__null_clear(fx.be);
    shrt = submit("short", 0, 20000);
    assert_int_equal(signals(lng, CORUN_SIG_HALT_GEN, NULL), 0);
    assert_int_equal(shrt->state, CORUN_JS_WAITING);
    /* Nor does a long kernel preempt a shorter one. */
    leave(lng, lng->tasks);
    assert_int_equal(shrt->state, CORUN_JS_RUNNING);
    corun__null_clear(fx.be);
    lng = submit("long", 0, 100000);
    assert_int_equal(signals(shrt, CORUN_SIG_HALT_GEN, NULL), 0);
    assert_int_equal(lng->state, CORUN_JS_WAITING);
}

static void kernels_without_a_model_run_in_arrival_order(void **state)
{
    corun__job *a, *b, *c;

    start_hpf(1, 50);
    a = submit("unknown1", 0, 100000);
    b = submit("unknown2", 0, 10);
    assert_int_equal(signals(a, CORUN_SIG_HALT_GEN, NULL), 0);
    assert_int_equal(b->state, CORUN_JS_WAITING);
    /* A kernel with a model preempts one without. */
    c = submit("short", 0, 20000);
    assert_int_equal(signals(a, CORUN_SIG_HALT_GEN, NULL), 1);
    assert_int_equal(c->state, CORUN_JS_RUNNING);
}

/* ---- the host API selects the policies by name --------------------------- */

static void host_api_runs_flep_hpf_by_name(void **state)
{
    corun_ctx_opts co = {"sim", "flep-hpf"};
    corun_sim_kernel_desc kd;
    corun_launch_attr lo = {.cls = CORUN_CLASS_BATCH, .weight = 1}, hi = lo;
    corun_progress p;
    corun_ctx *ctx;
    corun_kernel *k;
    corun_job *low, *high;
    const char *names[] = {"flep-hpf", "flep-ffs", "slate"};
    size_t i;

    setenv("CORUN_PROFILE_PATH", store, 1);
    for (i = 0; i < 3; i++) {
        co.policy = names[i];
        assert_int_equal(corun_ctx_create(&co, &ctx), CORUN_OK);
        corun_ctx_destroy(ctx);
    }
    co.policy = "flep-nope";
    assert_int_equal(corun_ctx_create(&co, &ctx), CORUN_ENOENT);

    co.policy = "flep-hpf";
    assert_int_equal(corun_ctx_create(&co, &ctx), CORUN_OK);
    memset(&kd, 0, sizeof(kd));
    kd.name = "k";
    kd.task_us = 10;
    assert_int_equal(corun_sim_kernel_register(ctx, &kd, &k), CORUN_OK);
    hi.priority = 1;
    assert_int_equal(corun_launch(ctx, k, (corun_dim3){200000, 1, 1}, (corun_dim3){256, 1, 1}, 0,
                                  NULL, &lo, &low),
                     CORUN_OK);
    assert_int_equal(corun_launch(ctx, k, (corun_dim3){2000, 1, 1}, (corun_dim3){256, 1, 1}, 0,
                                  NULL, &hi, &high),
                     CORUN_OK);
    /* The high-priority job finishes while the low one has work left. */
    assert_int_equal(corun_job_wait(high, -1), CORUN_OK);
    assert_int_equal(corun_job_progress(low, &p), CORUN_OK);
    assert_true(p.done < p.tasks);
    assert_int_equal(corun_job_wait(low, -1), CORUN_OK);
    corun_job_release(low);
    corun_job_release(high);
    corun_ctx_destroy(ctx);
    unsetenv("CORUN_PROFILE_PATH");
}

/* ---- the papers' properties, on the simulator ---------------------------- */

static corun__settings sim_settings;

static void init_sim_settings(void)
{
    char why[256];

    corun__settings_default(&sim_settings);
    assert_int_equal(corun__settings_set(&sim_settings, "profile_path", store, why, sizeof(why)),
                     CORUN_OK);
    /* Fewer training runs than FLEP's 100: the simulated kernels are
     * linear enough, and the test stays short. */
    sim_settings.profile_train_runs = 12;
}

static void exp_opts(corun__exp_opts *o, size_t max_sets, double duration_ms)
{
    init_sim_settings();
    corun_test_exp_opts(o, &sim_settings);
    o->max_sets = max_sets;
    o->duration_ms = duration_ms;
}

static json_t *run_exp(const char *name, size_t max_sets, double duration_ms)
{
    corun__exp_opts o;
    char why[1024] = "";
    json_t *r;

    exp_opts(&o, max_sets, duration_ms);
    r = corun__exp_run(name, &o, why, sizeof(why));
    if (r == NULL) {
        fail_msg("experiment %s: %s", name, why);
    }
    return r;
}

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) {
        fail_msg("no number '%s'", key);
    }
    return json_number_value(v);
}

static void hpf_high_priority_5x_faster_than_mps(void **state)
{
    json_t *r = run_exp("hpf", 0, 0), *pairs = json_object_get(r, "pairs"), *p;
    size_t i;

    assert_int_equal(json_array_size(pairs), 28);
    json_array_foreach(pairs, i, p) {
        double speedup = num(p, "speedup");
        /* Behind a long kernel (at least 5x the high one's turnaround
         * alone), the high one is at least 5x faster. FLEP's smallest
         * speedup, MM behind PF, is 4.1x: PL and PF are not long enough
         * for MM, whose bound is lower; every pair still gains 4x. */
        assert_true(speedup >= 4.0);
        if (num(p, "low_mps_us") >= 5 * num(p, "high_flep_us")) {
            if (speedup < 5.0) {
                fail_msg("%s behind %s: %.2fx", json_string_value(json_object_get(p, "high")),
                         json_string_value(json_object_get(p, "low")), speedup);
            }
        }
        /* The low-priority kernel pays the high one's time and little more. */
        assert_true(num(p, "low_flep_us") <
                    num(p, "low_mps_us") * 1.03 + num(p, "high_flep_us"));
    }
    print_message("HPF speedup over mps: mean %.2fx, min %.2fx, max %.2fx\n",
                  num(r, "mean_speedup"), num(r, "min_speedup"), num(r, "max_speedup"));
    assert_true(num(r, "mean_speedup") >= 5.0);
    json_decref(r);
}

static void srt_improves_antt_over_fifo(void **state)
{
    json_t *r = run_exp("srt", 4, 0), *p;
    size_t i;

    assert_int_equal(json_array_size(json_object_get(r, "pairs")), 4);
    assert_int_equal(json_array_size(json_object_get(r, "triplets")), 4);
    json_array_foreach(json_object_get(r, "pairs"), i, p) {
        assert_true(num(p, "antt_gain") > 1.5);
        /* Preempting costs the system little throughput. */
        assert_true(num(p, "throughput_loss") < 0.05);
    }
    json_array_foreach(json_object_get(r, "triplets"), i, p) {
        assert_true(num(p, "antt_gain") > 1.5);
    }
    print_message("SRT ANTT gain over mps: pairs mean %.2fx, triplets mean %.2fx\n",
                  num(r, "mean_antt_gain"), num(r, "mean_triplet_antt_gain"));
    json_decref(r);
}

static void srt_orders_the_triplet_by_remaining_time(void **state)
{
    corun__run_env env;
    corun__run_result r;
    corun__scenario sc;
    char why[512] = "";

    /* The models trained by the test above are in the store already, or
     * get trained here. */
    init_sim_settings();
    assert_int_equal(corun__scenario_load(corun_test_path("bench/scenarios/flep-srt-3kernel.json"),
                                          &sc, why, sizeof(why)),
                     CORUN_OK);
    memset(&env, 0, sizeof(env));
    env.make_backend = corun_test_make_sim;
    env.make_ctx = &sim_settings;
    env.settings = sim_settings;
    assert_int_equal(corun__scenario_ensure_profiles(&sc, &env, "sim", store,
                                                     CORUN_POLICY_NEEDS_DURATIONS, NULL, NULL, why,
                                                     sizeof(why)),
                     CORUN_OK);
    assert_int_equal(corun__scenario_run(&sc, &env, "flep-hpf", -1, 0, &r, why, sizeof(why)),
                     CORUN_OK);
    /* FLEP 6.3.2: SPMV first, then MM, then VA. */
    assert_true(r.apps[1].kernels[0].end_ns < r.apps[2].kernels[0].end_ns);
    assert_true(r.apps[2].kernels[0].end_ns < r.apps[0].kernels[0].end_ns);
    assert_true(r.apps[0].preemptions >= 1);
    corun__run_result_free(&r);
}

static void spatial_preemption_costs_less_than_temporal(void **state)
{
    json_t *r = run_exp("spatial", 6, 0), *p;
    size_t i;

    json_array_foreach(json_object_get(r, "pairs"), i, p) {
        assert_true(num(p, "overhead_spatial") < num(p, "overhead_temporal"));
    }
    print_message("preemption overhead: spatial %.2f%%, temporal %.2f%%, reduction %.0f%%\n",
                  num(r, "mean_overhead_spatial") * 100, num(r, "mean_overhead_temporal") * 100,
                  num(r, "mean_reduction") * 100);
    assert_true(num(r, "mean_reduction") > 0.2);
    json_decref(r);
}

static void ffs_shares_follow_the_weights_within_the_overhead(void **state)
{
    json_t *r = run_exp("ffs", 3, 50), *p;
    size_t i;

    assert_int_equal(json_array_size(json_object_get(r, "pairs")), 3);
    json_array_foreach(json_object_get(r, "pairs"), i, p) {
        print_message("FFS %s + %s: shares %.3f / %.3f, throughput lost %.2f%%\n",
                      json_string_value(json_object_get(p, "low")),
                      json_string_value(json_object_get(p, "high")), num(p, "share_low"),
                      num(p, "share_high"), num(p, "overhead") * 100);
        assert_true(fabs(num(p, "share_high") - 2.0 / 3) <= 0.03);
        assert_true(fabs(num(p, "share_low") - 1.0 / 3) <= 0.03);
        assert_true(num(p, "overhead") <= sim_settings.ffs_max_overhead);
    }
    json_decref(r);
}

/* FFS on the recording backend, acting as a GPU in steps of 1 us: a weight-1
 * flow with one endless kernel beside a weight-2 flow of 600 us kernels,
 * each submitted 15 us (inside the grace) after the last one finished, and
 * every stopped kernel draining for 10 to 150 us. Over 200 ms the flows'
 * CapSM-time keeps 2:1 within 2 points of the time they held together. */
static void ffs_keeps_two_to_one_through_gaps_and_drains(void **state)
{
    const uint64_t us = 1000;
    corun__job *big, *small = NULL, *k;
    uint64_t t0, next_small, small_left = 0, drain_end[2] = {0, 0}, big_done = 0;
    double held[2] = {0, 0}, share;
    unsigned seed = 7;
    int i;

    (void)state;
    start_policy("flep-ffs", 0, 50);
    t0 = next_small = corun__sched_now(fx.s);
    big = submit_w("big", 0, 1, 1u << 30);
    while (corun__sched_now(fx.s) < t0 + 200000 * us) {
        uint64_t now = corun__sched_now(fx.s);
        if (small == NULL && now >= next_small) {
            small = submit_w("small", 0, 2, 60000);
            small_left = 600 * us;
        }
        for (i = 0; i < 2; i++) {
            k = i == 0 ? big : small;
            if (k == NULL) {
                continue;
            }
            if (k->state == CORUN_JS_RUNNING && i == 1 && (small_left -= us) == 0) {
                leave(k, k->tasks);
                assert_int_equal(k->state, CORUN_JS_DONE);
                held[1] += corun__sched_capsm_ns(fx.s, k);
                corun__sched_release(fx.s, k);
                small = NULL;
                next_small = corun__sched_now(fx.s) + (5 + (uint64_t)(rand_r(&seed) % 36)) * us;
            } else if (k->state == CORUN_JS_STOPPING && drain_end[i] == 0) {
                drain_end[i] = now + (10 + (uint64_t)(rand_r(&seed) % 141)) * us;
            } else if (k->state == CORUN_JS_STOPPING && now >= drain_end[i]) {
                drain_end[i] = 0;
                leave(k, i == 0 ? (big_done += 1000) : k->tasks / 2);
                assert_int_equal(k->state, CORUN_JS_PAUSED);
            }
        }
        if (big->state == CORUN_JS_RUNNING) {
            corun__null_set_done(fx.be, big->ex, big_done);
        }
        assert_int_equal(corun__sched_step(fx.s, corun__sched_now(fx.s) + us), CORUN_OK);
    }
    held[0] = corun__sched_capsm_ns(fx.s, big);
    if (small != NULL) {
        held[1] += corun__sched_capsm_ns(fx.s, small);
    }
    share = held[1] / (held[0] + held[1]);
    print_message("FFS with gaps and drains: weight-2 share %.3f of the held time, %.3f of the "
                  "GPU; %u preemptions of the weight-1 flow\n",
                  share, held[1] / (132.0 * (double)(corun__sched_now(fx.s) - t0)),
                  big->preemptions);
    assert_true(big->preemptions > 50);
    assert_true(fabs(share - 2.0 / 3) <= 0.02);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(higher_priority_preempts_temporally, setup_null,
                                        teardown_null),
        cmocka_unit_test_setup_teardown(small_arrival_preempts_only_the_sms_it_needs, setup_null,
                                        teardown_null),
        cmocka_unit_test_setup_teardown(temporal_only_when_spatial_is_off, setup_null,
                                        teardown_null),
        cmocka_unit_test_setup_teardown(lower_priority_waits, setup_null, teardown_null),
        cmocka_unit_test_setup_teardown(equal_priority_shortest_remaining_time_first, setup_null,
                                        teardown_null),
        cmocka_unit_test_setup_teardown(overhead_margin_prevents_preemption, setup_null,
                                        teardown_null),
        cmocka_unit_test_setup_teardown(kernels_without_a_model_run_in_arrival_order, setup_null,
                                        teardown_null),
        cmocka_unit_test_setup_teardown(ffs_keeps_two_to_one_through_gaps_and_drains, setup_null,
                                        teardown_null),
        cmocka_unit_test(host_api_runs_flep_hpf_by_name),
        cmocka_unit_test(hpf_high_priority_5x_faster_than_mps),
        cmocka_unit_test(srt_improves_antt_over_fifo),
        cmocka_unit_test(srt_orders_the_triplet_by_remaining_time),
        cmocka_unit_test(spatial_preemption_costs_less_than_temporal),
        cmocka_unit_test(ffs_shares_follow_the_weights_within_the_overhead),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
