/*
 * test_direct.c — stream-ordered launches (corun_launch_stream, the backend's
 * direct_launch) on the simulator: kernels of one stream run one after the
 * other, released by the device side of the kernel before (not by the
 * host); a halted kernel holds its stream until it is resumed and done; a
 * halt that races the last tasks loses no wake-up; a resume opens the gate
 * of the grid the halt enqueued, with no launch; short kernels, and batch
 * kernels of one wave, run plain; a grid with a relay block obeys a halt
 * sooner.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/sim/sim.h"
#include "corun/corun.h"
#include "corun/corun_sim.h"

#define US 1000ull

static int stream_a, stream_b; /* their addresses name two streams */

/* Every event polled and not yet taken (a poll may return several). */
static corun__bevent seen[256];
static size_t nseen;

static corun__backend *new_sim(const corun__sim_faults *f)
{
    corun__sim_opts o;
    corun__backend *be;

    nseen = 0;
    corun__sim_opts_default(&o);
    if (f != NULL) {
        o.faults = *f;
    }
    assert_int_equal(corun__sim_create(&o, &be), CORUN_OK);
    return be;
}

static corun__kspec spec_of(const char *name, uint32_t tasks, double task_us)
{
    corun__kspec s;

    memset(&s, 0, sizeof(s));
    snprintf(s.name, sizeof(s.name), "%s", name);
    s.grid = (corun_dim3){tasks, 1, 1};
    s.block = (corun_dim3){256, 1, 1};
    s.shape.threads_per_block = 256;
    s.shape.regs_per_thread = 32;
    s.code = CORUN_CODE_SYNTHETIC;
    s.task_ns = (corun__dist){CORUN_DIST_CONST, task_us * 1e3, 0};
    return s;
}

/* When each kernel's workers first claimed (its grid reached the SMs). */
typedef struct first_claims {
    corun__exec *k[4];
    uint64_t t[4];
} first_claims;

static void on_claim(void *ctx, corun__exec *k, const corun__sim_claim *c)
{
    first_claims *fc = ctx;
    int i;

    for (i = 0; i < 4; i++) {
        if (fc->k[i] == k && fc->t[i] == 0) {
            fc->t[i] = c->time_ns;
        }
    }
}

/* A direct launch on SMs [0, sm_hi], its workers holding their slots
 * through its tail if hold; in the grid form where grid is set (corun_ctl.h:
 * capsm and sm_hi the whole GPU), which it must then take. */
static corun__exec *direct_req(corun__backend *be, const corun__kspec *s, void *stream,
                               uint32_t capsm, uint64_t cookie, uint32_t sm_hi, bool hold,
                               bool grid)
{
    corun__direct_req r;
    corun__exec *k = NULL;
    corun__direct_got got;
    char why[256] = "";

    memset(&r, 0, sizeof(r));
    r.stream = stream;
    r.capsm = capsm;
    r.sm_hi = sm_hi;
    r.hold = hold;
    r.grid = grid;
    if (be->ops->direct_launch(be, s, &r, &k, &got, why, sizeof(why)) != CORUN_OK) {
        fail_msg("direct_launch: %s", why);
    }
    assert_true(got.grid == grid);
    be->ops->bind(be, k, cookie);
    return k;
}

static corun__exec *direct_on(corun__backend *be, const corun__kspec *s, void *stream,
                              uint32_t capsm, uint64_t cookie, uint32_t sm_hi, bool hold)
{
    return direct_req(be, s, stream, capsm, cookie, sm_hi, hold, false);
}

static corun__exec *direct(corun__backend *be, const corun__kspec *s, void *stream,
                           uint32_t capsm, uint64_t cookie)
{
    return direct_on(be, s, stream, capsm, cookie, be->desc.sm_count - 1, false);
}

/* A direct launch on the whole GPU in the grid form. */
static corun__exec *direct_grid(corun__backend *be, const corun__kspec *s, void *stream,
                                uint64_t cookie)
{
    return direct_req(be, s, stream, be->desc.sm_count, cookie, be->desc.sm_count - 1, false,
                      true);
}

/* Polls until an event of kind for cookie (taken from what was polled
 * before if there); returns its time. */
static uint64_t until_event(corun__backend *be, uint64_t cookie, corun__bev_kind kind,
                            corun__bevent *got)
{
    size_t i;

    for (i = 0;; i++) {
        if (i == nseen) {
            size_t n = 0;
            assert_true(nseen + 8 <= sizeof(seen) / sizeof(seen[0]));
            assert_int_equal(be->ops->poll(be, UINT64_MAX, seen + nseen, 8, &n), CORUN_OK);
            nseen += n;
            if (n == 0) {
                i--; /* nothing new yet: poll again */
                continue;
            }
        }
        if (seen[i].cookie == cookie && seen[i].kind == kind) {
            corun__bevent e = seen[i];
            memmove(seen + i, seen + i + 1, (nseen - i - 1) * sizeof(seen[0]));
            nseen--;
            if (got != NULL) {
                *got = e;
            }
            return e.time_ns;
        }
    }
}

static void assert_all_once(corun__backend *be, corun__exec *k, uint64_t tasks)
{
    const uint32_t *hits = corun__sim_task_hits(be, k);
    uint64_t i;

    assert_non_null(hits);
    for (i = 0; i < tasks; i++) {
        if (hits[i] != 1) {
            fail_msg("task %llu ran %u times", (unsigned long long)i, hits[i]);
        }
    }
}

/* Two kernels in one stream: the second reaches the SMs the stream gap after
 * the first's end on the device -- before the host has heard of that end
 * (the notify delay is longer than the gap). In another stream, a third
 * runs beside the first. */
static void a_stream_runs_its_kernels_in_order_released_by_the_device(void **state)
{
    corun__backend *be = new_sim(NULL);
    corun__kspec sa = spec_of("a", 4000, 20), sb = spec_of("b", 2000, 1),
                 sc = spec_of("c", 2000, 10);
    first_claims fc;
    corun__exec *a, *b, *c;
    corun__bevent ec;
    uint64_t ta, tc;

    (void)state;
    memset(&fc, 0, sizeof(fc));
    corun__sim_set_claim_hook(be, on_claim, &fc);
    a = direct(be, &sa, &stream_a, 8, 1);
    b = direct(be, &sb, &stream_a, 132, 2);
    c = direct(be, &sc, &stream_b, 132, 3);
    fc.k[0] = a;
    fc.k[1] = b;
    fc.k[2] = c;
    tc = until_event(be, 3, CORUN_BEV_FINISHED, &ec);
    ta = until_event(be, 1, CORUN_BEV_FINISHED, NULL);
    /* its grid ran every task: the device's measure of that run (its first
     * worker's start to its last one's end) reaches the host, the plain
     * line's prediction (corun__entry_predict_ns): at least its 2,000
     * tasks of 10 us over 1,056 slots, and no longer than until the host
     * heard of it */
    assert_true(ec.run_ns >= 2 * 10 * US);
    assert_true(ec.run_ns < tc);
    (void)until_event(be, 2, CORUN_BEV_FINISHED, NULL);
    assert_true(fc.t[2] < ta);     /* the other stream did not wait for a */
    assert_true(tc < ta);
    /* a ended on the device notify_ns (10 us) before the host read it; b's
     * grid arrived the stream gap (2.3 us) after that end */
    assert_true(fc.t[1] >= ta - 10 * US + 2300);
    assert_true(fc.t[1] < ta);
    assert_all_once(be, a, 4000);
    assert_all_once(be, b, 2000);
    assert_all_once(be, c, 2000);
    be->ops->exec_close(be, a);
    be->ops->exec_close(be, b);
    be->ops->exec_close(be, c);
    be->ops->destroy(be);
}

/* A stream-ordered kernel bound to SMs 0-123 with hold (smguard's batch
 * allotment while LS work goes on): once its 992 workers there have run the
 * first round, the 892 with no task left hold their slots beside the 100
 * still running, reporting nothing; when the last task ends every worker
 * leaves, the kernel finishes with every task once, and the kernel behind
 * it in the stream runs. */
static void a_held_kernel_keeps_its_sms_until_its_last_task(void **state)
{
    corun__backend *be = new_sim(NULL);
    corun__kspec sa = spec_of("a", 992 + 100, 1000), sb = spec_of("b", 500, 5);
    corun__exec *a, *b;
    corun_progress p;
    corun__bevent ev[4];
    size_t n = 0;
    uint64_t ta, tb;

    (void)state;
    a = direct_on(be, &sa, &stream_a, 124, 1, 123, true);
    b = direct(be, &sb, &stream_a, 132, 2);
    assert_int_equal(be->ops->poll(be, 1200 * US, ev, 4, &n), CORUN_OK);
    assert_int_equal(n, 0);
    assert_int_equal(be->ops->progress(be, a, &p), CORUN_OK);
    assert_int_equal(p.done, 992);
    assert_int_equal(p.live, 992);
    ta = until_event(be, 1, CORUN_BEV_FINISHED, NULL);
    tb = until_event(be, 2, CORUN_BEV_FINISHED, NULL);
    /* the last 100 tasks, alone on their SMs beside idle holders, run
     * faster than at full occupancy (sim_share.c) */
    assert_true(ta > 1200 * US && ta < 2100 * US);
    assert_true(tb > ta);
    assert_int_equal(be->ops->progress(be, a, &p), CORUN_OK);
    assert_int_equal(p.live, 0);
    assert_all_once(be, a, 992 + 100);
    assert_all_once(be, b, 500);
    be->ops->exec_close(be, a);
    be->ops->exec_close(be, b);
    be->ops->destroy(be);
}

/* Halted: its workers leave, the primary grid's last worker stays and holds
 * the stream (HELD, nothing running); the kernel behind it does not start.
 * Opening the gate of the grid enqueued before the halt resumes it with no
 * launch call; it finishes, and then the one behind runs. */
/* The resume grid a halt of k enqueues first (cookie 7): every slot's
 * worker, generation 1, behind the gate resume >= 1. */
static void launch_gated_resume(corun__backend *be, corun__exec *k)
{
    corun__launch_req gated;

    memset(&gated, 0, sizeof(gated));
    gated.nworkers = 132 * 8;
    gated.base = 132 * 8;
    gated.gen = 1;
    gated.gate = 1;
    gated.cookie = 7;
    assert_int_equal(be->ops->launch_workers(be, k, &gated), CORUN_OK);
}

/* Halts k (bound to cookie) behind its gated resume grid and polls until
 * it holds its stream with no worker running (*held: that report). */
static void halt_held(corun__backend *be, corun__exec *k, uint64_t cookie, corun__bevent *held)
{
    launch_gated_resume(be, k);
    assert_int_equal(be->ops->signal(be, k, CORUN_SIG_HALT_GEN, 1), CORUN_OK);
    for (;;) {
        until_event(be, cookie, CORUN_BEV_HELD, held);
        if (held->live == 0) {
            break;
        }
    }
}

static void a_halted_kernel_holds_its_stream_until_resumed(void **state)
{
    corun__backend *be = new_sim(NULL);
    corun__kspec sa = spec_of("a", 20000, 20), sb = spec_of("b", 3000, 5);
    first_claims fc;
    corun__bevent held;
    corun__sim_stats st0, st1;
    corun__exec *a, *b;
    uint64_t t;

    (void)state;
    memset(&fc, 0, sizeof(fc));
    corun__sim_set_claim_hook(be, on_claim, &fc);
    a = direct(be, &sa, &stream_a, 132, 1);
    b = direct(be, &sb, &stream_a, 132, 2);
    fc.k[0] = a;
    fc.k[1] = b;
    {
        corun__bevent ev[4];
        size_t n = 0;
        assert_int_equal(be->ops->poll(be, 200 * US, ev, 4, &n), CORUN_OK);
        assert_int_equal(n, 0);
    }
    halt_held(be, a, 1, &held);
    assert_true(held.done > 0 && held.done < 20000);
    /* a long while later, b has still not started */
    t = be->ops->now_ns(be);
    {
        corun__bevent ev[4];
        size_t n = 0;
        assert_int_equal(be->ops->poll(be, t + 5000 * US, ev, 4, &n), CORUN_OK);
        assert_int_equal(n, 0);
    }
    assert_int_equal(fc.t[1], 0);
    corun__sim_get_stats(be, &st0);
    assert_int_equal(be->ops->signal(be, a, CORUN_SIG_RESUME, 1), CORUN_OK);
    (void)until_event(be, 1, CORUN_BEV_FINISHED, NULL);
    (void)until_event(be, 2, CORUN_BEV_FINISHED, NULL);
    corun__sim_get_stats(be, &st1);
    assert_int_equal(st1.launches, st0.launches); /* the resume launched nothing */
    assert_true(fc.t[1] > t + 5000 * US);
    assert_all_once(be, a, 20000);
    assert_all_once(be, b, 3000);
    (void)until_event(be, 7, CORUN_BEV_LAUNCH, NULL); /* the resume grid ended too */
    be->ops->exec_close(be, a);
    be->ops->exec_close(be, b);
    be->ops->destroy(be);
}

/* The grid form: a block per task, so 20,000 tasks run as 20,000 blocks,
 * each once, and the kernel behind it in the stream follows; the report
 * carries block 0's task time. Halted, its blocks not yet started claim
 * nothing and the grid holds its stream (HELD, no worker running) until the
 * gate grid resumes it as workers from the claim counter: every task once. */
static void the_grid_form_runs_each_task_once_and_resumes_as_workers(void **state)
{
    corun__backend *be = new_sim(NULL);
    corun__kspec sa = spec_of("a", 20000, 20), sb = spec_of("b", 3000, 5);
    corun__kspec sc = spec_of("c", 20000, 20);
    corun__sim_stats st0, st1;
    corun__bevent ev, held;
    corun__exec *a, *b, *c;

    (void)state;
    corun__sim_get_stats(be, &st0);
    a = direct_grid(be, &sa, &stream_a, 1);
    b = direct(be, &sb, &stream_a, 132, 2);
    until_event(be, 1, CORUN_BEV_FINISHED, &ev);
    assert_int_equal(ev.done, 20000);
    assert_true(ev.task_ns > 0); /* block 0's task time */
    (void)until_event(be, 2, CORUN_BEV_FINISHED, NULL);
    corun__sim_get_stats(be, &st1);
    /* a's 20,000 blocks each started as a worker; b's 1,056 workers */
    assert_int_equal(st1.workers_started - st0.workers_started, 20000 + 1056);
    assert_all_once(be, a, 20000);
    assert_all_once(be, b, 3000);

    c = direct_grid(be, &sc, &stream_b, 3);
    {
        corun__bevent e[4];
        size_t n = 0;
        const uint64_t t = be->ops->now_ns(be);
        assert_int_equal(be->ops->poll(be, t + 100 * US, e, 4, &n), CORUN_OK);
    }
    halt_held(be, c, 3, &held);
    assert_true(held.done > 0 && held.done < 20000);
    assert_int_equal(be->ops->signal(be, c, CORUN_SIG_RESUME, 1), CORUN_OK);
    until_event(be, 3, CORUN_BEV_FINISHED, &ev);
    assert_all_once(be, c, 20000);
    (void)until_event(be, 7, CORUN_BEV_LAUNCH, NULL); /* the resume grid ended too */
    be->ops->exec_close(be, a);
    be->ops->exec_close(be, b);
    be->ops->exec_close(be, c);
    be->ops->destroy(be);
}

/* A halt that lands when every task is claimed (a fault at task 1999 of
 * 2000): the tasks claimed still run, the primary grid's last worker finds
 * them done (or waits for them), and the kernel finishes with no resume;
 * the kernel behind it in the stream runs. */
static void a_halt_racing_the_last_task_loses_no_wakeup(void **state)
{
    corun__sim_faults f;
    corun__backend *be;
    corun__kspec sa = spec_of("a", 2000, 30), sb = spec_of("b", 500, 5);
    corun__exec *a, *b;

    (void)state;
    memset(&f, 0, sizeof(f));
    snprintf(f.signal_kernel, sizeof(f.signal_kernel), "a");
    f.signal_at_task = 1999;
    f.signal_kind = CORUN_SIG_HALT_GEN;
    f.signal_value = 1;
    be = new_sim(&f);
    a = direct(be, &sa, &stream_a, 132, 1);
    b = direct(be, &sb, &stream_a, 132, 2);
    (void)until_event(be, 1, CORUN_BEV_FINISHED, NULL);
    (void)until_event(be, 2, CORUN_BEV_FINISHED, NULL);
    assert_all_once(be, a, 2000);
    assert_all_once(be, b, 500);
    be->ops->exec_close(be, a);
    be->ops->exec_close(be, b);
    be->ops->destroy(be);
}

/* The last claim that got tasks, for the relay test. */
typedef struct last_claim {
    corun__exec *k;
    uint64_t t;
} last_claim;

static void on_claim_last(void *ctx, corun__exec *k, const corun__sim_claim *c)
{
    last_claim *lc = ctx;

    if (k == lc->k && c->count > 0 && c->time_ns > lc->t) {
        lc->t = c->time_ns;
    }
}

/* One kernel of 70 waves of 5-15 us tasks on the whole GPU, halted 300 us in,
 * then resumed: the workers its grid started, and how long after the halt
 * its last claim that got tasks was made (the halt landing). */
static void halt_with_relay(uint32_t relay, uint64_t *workers, uint64_t *last_ns)
{
    corun__sim_opts o;
    corun__backend *be;
    corun__kspec s = spec_of("r", 1056 * 70, 10);
    s.task_ns = (corun__dist){CORUN_DIST_UNIFORM, 5e3, 15e3}; /* claims not in step */
    corun__sim_stats st;
    last_claim lc;
    corun__bevent ev[8];
    size_t n = 0;
    uint64_t t0;

    nseen = 0;
    corun__sim_opts_default(&o);
    o.relay = relay;
    assert_int_equal(corun__sim_create(&o, &be), CORUN_OK);
    memset(&lc, 0, sizeof(lc));
    lc.k = direct(be, &s, &stream_a, 132, 1);
    corun__sim_set_claim_hook(be, on_claim_last, &lc);
    assert_int_equal(be->ops->poll(be, 300 * US, ev, 8, &n), CORUN_OK);
    assert_int_equal(n, 0);
    corun__sim_get_stats(be, &st);
    *workers = st.workers_started;
    launch_gated_resume(be, lc.k);
    t0 = be->ops->now_ns(be);
    assert_int_equal(be->ops->signal(be, lc.k, CORUN_SIG_HALT_GEN, 1), CORUN_OK);
    for (;;) {
        corun__bevent held;
        until_event(be, 1, CORUN_BEV_HELD, &held);
        if (held.live == 0) {
            break;
        }
    }
    *last_ns = lc.t - t0;
    assert_int_equal(be->ops->signal(be, lc.k, CORUN_SIG_RESUME, 1), CORUN_OK);
    (void)until_event(be, 1, CORUN_BEV_FINISHED, NULL);
    assert_all_once(be, lc.k, 1056 * 70);
    (void)until_event(be, 7, CORUN_BEV_LAUNCH, NULL);
    be->ops->exec_close(be, lc.k);
    be->ops->destroy(be);
}

/* A kernel of 64 waves or more that fills the GPU gives one worker up for a
 * relay block (corun_ctl.h); a halt then lands SIM_RELAY_US after the write,
 * where without one it lands SIM_SIGNAL_US after; every task still runs
 * once, the rest after the resume. */
static void a_relayed_grid_obeys_a_halt_sooner(void **state)
{
    corun__sim_opts o;
    uint64_t w_relay, w_plain, t_relay, t_plain;
    (void)state;

    corun__sim_opts_default(&o);
    assert_true(o.relay_ns < o.signal_ns);
    halt_with_relay(1, &w_relay, &t_relay);
    halt_with_relay(0, &w_plain, &t_plain);
    assert_int_equal(w_relay, 132 * 8 - 1);
    assert_int_equal(w_plain, 132 * 8);
    /* claims are made every few ns: the last one just before the halt lands */
    if (t_relay > (uint64_t)o.relay_ns || t_relay + 1000 < (uint64_t)o.relay_ns) {
        fail_msg("relayed: last claim %llu ns after the halt", (unsigned long long)t_relay);
    }
    if (t_plain > (uint64_t)o.signal_ns || t_plain + 1000 < (uint64_t)o.signal_ns) {
        fail_msg("not relayed: last claim %llu ns after the halt", (unsigned long long)t_plain);
    }
}

/* A simulated context under policy with one kernel of task_us tasks. */
static corun_ctx *sim_ctx(const char *policy, const char *name, double task_us, corun_kernel **k)
{
    corun_ctx_opts co = {"sim", policy};
    corun_sim_kernel_desc kd;
    corun_ctx *ctx;

    setenv("CORUN_PROFILE_PATH", "off", 1);
    assert_int_equal(corun_ctx_create(&co, &ctx), CORUN_OK);
    memset(&kd, 0, sizeof(kd));
    kd.name = name;
    kd.task_us = task_us;
    assert_int_equal(corun_sim_kernel_register(ctx, &kd, k), CORUN_OK);
    return ctx;
}

/* Through the host API: a stream-ordered job preempted while a second one
 * waits behind it in its stream; the second does not start while the first
 * is paused, and both finish once it is resumed. */
static void a_preempted_stream_job_holds_the_job_behind_it(void **state)
{
    corun_kernel *k;
    corun_ctx *ctx = sim_ctx("manual", "k", 20, &k);
    corun_job *a, *b;
    corun_progress pa, pb;

    (void)state;
    assert_int_equal(corun_launch_stream(ctx, k, (corun_dim3){40000, 1, 1},
                                         (corun_dim3){256, 1, 1}, 0, NULL, NULL, &stream_a, &a),
                     CORUN_OK);
    assert_int_equal(corun_launch_stream(ctx, k, (corun_dim3){4000, 1, 1},
                                         (corun_dim3){256, 1, 1}, 0, NULL, NULL, &stream_a, &b),
                     CORUN_OK);
    assert_int_equal(corun_job_preempt(a), CORUN_OK);
    /* paused: resume waits for that, so resize settles it first */
    assert_int_equal(corun_job_wait(b, 50), CORUN_ETIMEDOUT);
    assert_int_equal(corun_job_progress(a, &pa), CORUN_OK);
    assert_int_equal(corun_job_progress(b, &pb), CORUN_OK);
    assert_true(pa.done < pa.tasks);
    assert_int_equal(pb.done, 0);
    assert_int_equal(corun_job_resume(a, 0), CORUN_OK);
    assert_int_equal(corun_job_wait(b, -1), CORUN_OK);
    assert_int_equal(corun_job_wait(a, -1), CORUN_OK);
    assert_int_equal(corun_job_progress(a, &pa), CORUN_OK);
    assert_int_equal(pa.done, 40000);
    corun_job_release(a);
    corun_job_release(b);
    corun_ctx_destroy(ctx);
    unsetenv("CORUN_PROFILE_PATH");
}

/* One launch of k's 1056 tasks into stream (with attr, or the context's),
 * waited for; or, with wait false, fire and forget. */
static void launch_1056(corun_ctx *ctx, corun_kernel *k, const corun_launch_attr *attr,
                        void *stream, bool wait)
{
    corun_job *j = NULL;

    assert_int_equal(corun_launch_stream(ctx, k, (corun_dim3){1056, 1, 1},
                                         (corun_dim3){256, 1, 1}, 0, NULL, attr, stream,
                                         wait ? &j : NULL),
                     CORUN_OK);
    if (wait) {
        assert_int_equal(corun_job_wait(j, -1), CORUN_OK);
        corun_job_release(j);
    }
}

/* The plain line is CORUN_PLAIN_BATCH_BELOW_US while only batch work has
 * launched, and the shorter CORUN_PLAIN_BELOW_US once LS work has: a kernel
 * of one 30 us wave runs plain beside batch work (default lines 100 / 15),
 * and preemptible again after an LS launch. */
static void the_plain_line_is_shorter_while_ls_work_runs(void **state)
{
    const corun_launch_attr ls = {.cls = CORUN_CLASS_LS};
    corun_kernel *k;
    corun_ctx *ctx;
    corun_job *j;
    int i;

    (void)state;
    unsetenv("CORUN_PLAIN_BELOW_US");
    unsetenv("CORUN_PLAIN_BATCH_BELOW_US");
    ctx = sim_ctx("smguard", "mid", 30, &k);
    launch_1056(ctx, k, NULL, &stream_a, true); /* measures */
    for (i = 0; i < 5; i++) {
        launch_1056(ctx, k, NULL, &stream_a, false);
    }
    assert_int_equal(corun_ctx_plain_launches(ctx), 5);
    /* an LS launch (kept preemptible: it has a handle) */
    launch_1056(ctx, k, &ls, &stream_b, true);
    for (i = 0; i < 5; i++) {
        assert_int_equal(corun_launch_stream(ctx, k, (corun_dim3){1056, 1, 1},
                                             (corun_dim3){256, 1, 1}, 0, NULL, NULL, &stream_a,
                                             &j),
                         CORUN_OK);
        corun_job_release(j);
        launch_1056(ctx, k, NULL, &stream_a, false);
    }
    assert_int_equal(corun_ctx_plain_launches(ctx), 5);
    launch_1056(ctx, k, NULL, &stream_a, true);
    corun_ctx_destroy(ctx);
    unsetenv("CORUN_PROFILE_PATH");
}

/* A kernel whose last run took less than the plain line (here
 * CORUN_PLAIN_BATCH_BELOW_US: batch work only) runs plain
 * (fire-and-forget launches only), and the stream keeps its order. */
static void short_kernels_run_plain_once_measured(void **state)
{
    corun_kernel *k;
    corun_ctx *ctx;
    int i;

    (void)state;
    setenv("CORUN_PLAIN_BATCH_BELOW_US", "50", 1);
    ctx = sim_ctx("smguard", "short", 5, &k);
    /* the first launch runs as workers and measures */
    launch_1056(ctx, k, NULL, &stream_a, true);
    assert_int_equal(corun_ctx_plain_launches(ctx), 0);
    for (i = 0; i < 10; i++) {
        launch_1056(ctx, k, NULL, &stream_a, false);
    }
    assert_int_equal(corun_ctx_plain_launches(ctx), 10);
    /* a job handle asks for a preemptible kernel: workers */
    launch_1056(ctx, k, NULL, &stream_a, true);
    assert_int_equal(corun_ctx_plain_launches(ctx), 10);
    corun_ctx_destroy(ctx);
    unsetenv("CORUN_PLAIN_BATCH_BELOW_US");
    unsetenv("CORUN_PROFILE_PATH");
}

/* fire-and-forget launches of k's grid of n tasks into stream_a */
static void launch_n(corun_ctx *ctx, corun_kernel *k, uint32_t n, int times)
{
    int i;

    for (i = 0; i < times; i++) {
        assert_int_equal(corun_launch_stream(ctx, k, (corun_dim3){n, 1, 1},
                                             (corun_dim3){256, 1, 1}, 0, NULL, NULL, &stream_a,
                                             NULL),
                         CORUN_OK);
    }
}

/* With setting `var` 0, none of three launches of `tasks` tasks of task_us
 * (and one waited for) is counted by count. */
static void none_with_setting_off(const char *var, double task_us, uint32_t tasks,
                                  uint64_t (*count)(corun_ctx *))
{
    corun_kernel *k;
    corun_ctx *ctx;

    setenv(var, "0", 1);
    ctx = sim_ctx("smguard", "off", task_us, &k);
    launch_n(ctx, k, tasks, 3);
    launch_1056(ctx, k, NULL, &stream_a, true);
    assert_int_equal(count(ctx), 0);
    corun_ctx_destroy(ctx);
    unsetenv(var);
    unsetenv("CORUN_PROFILE_PATH");
}

/* Batch work alone: a fire-and-forget launch whose every block fits at once
 * on the whole GPU (1,056 blocks, 8 on each SM of the simulated H100) runs
 * plain however long its tasks (as workers each would run its own preset
 * task, halt or not: docs/decisions/0048); one block more, two waves, runs
 * as workers, so do a launch with a job handle or a QoS goal, an LS launch
 * and batch launches beside it, and, with CORUN_PLAIN_ONE_WAVE=0, every
 * one. */
static void a_one_wave_batch_launch_runs_plain(void **state)
{
    const corun_launch_attr ls = {.cls = CORUN_CLASS_LS}, goal = {.qos = 0.5};
    corun_kernel *k;
    corun_ctx *ctx;

    (void)state;
    unsetenv("CORUN_PLAIN_ONE_WAVE");
    /* 500 us tasks: far beyond the plain line */
    ctx = sim_ctx("smguard", "wave", 500, &k);
    launch_n(ctx, k, 1056, 3);
    launch_1056(ctx, k, NULL, &stream_a, true); /* a handle: workers */
    assert_int_equal(corun_ctx_plain_launches(ctx), 3);
    launch_n(ctx, k, 1057, 2);
    launch_1056(ctx, k, NULL, &stream_a, true);
    assert_int_equal(corun_ctx_plain_launches(ctx), 3);
    /* so does a batch launch with a QoS goal */
    launch_1056(ctx, k, &goal, &stream_a, false);
    launch_1056(ctx, k, NULL, &stream_a, true);
    assert_int_equal(corun_ctx_plain_launches(ctx), 3);
    /* an LS launch keeps its workers, and so do batch ones beside it */
    launch_1056(ctx, k, &ls, &stream_b, false);
    launch_n(ctx, k, 1056, 2);
    launch_1056(ctx, k, NULL, &stream_a, true);
    assert_int_equal(corun_ctx_plain_launches(ctx), 3);
    corun_ctx_destroy(ctx);

    none_with_setting_off("CORUN_PLAIN_ONE_WAVE", 500, 1056, corun_ctx_plain_launches);
}

/* Through the host API: a batch launch of more than one wave on the whole
 * GPU runs in the grid form once a launch of its kernel has measured tasks
 * of at least CORUN_GRID_TASK_US (default 100 us), with a job handle too:
 * not its first, not a kernel of shorter tasks, not on fewer CapSMs, not
 * with a QoS goal or beside LS work, and never with CORUN_GRID=0. A direct
 * kernel evicted of every CapSM resumes on new workers. Under smguard an LS launch arriving beside a
 * grid-form kernel makes room by halting it and resuming it as workers
 * (corun__sched_degrid): both finish. */
static void long_tasks_of_several_waves_run_in_the_grid_form(void **state)
{
    const corun_launch_attr ls = {.cls = CORUN_CLASS_LS}, goal = {.qos = 0.5},
                            few = {.capsm = 100};
    corun_kernel *k, *kshort;
    corun_sim_kernel_desc kd;
    corun_ctx *ctx;
    corun_job *j;

    (void)state;
    unsetenv("CORUN_GRID");
    unsetenv("CORUN_GRID_TASK_US");
    ctx = sim_ctx("smguard", "long", 300, &k);
    memset(&kd, 0, sizeof(kd));
    kd.name = "shortish";
    kd.task_us = 20;
    assert_int_equal(corun_sim_kernel_register(ctx, &kd, &kshort), CORUN_OK);
    launch_n(ctx, k, 3000, 1);   /* the first: workers, which measure */
    launch_n(ctx, kshort, 3000, 1);
    launch_1056(ctx, k, NULL, &stream_a, true); /* waits for those (one stream) */
    assert_int_equal(corun_ctx_grid_launches(ctx), 0);
    launch_n(ctx, k, 3000, 2);
    launch_n(ctx, kshort, 3000, 2); /* 20 us tasks: workers */
    launch_1056(ctx, k, NULL, &stream_a, true);
    assert_int_equal(corun_ctx_grid_launches(ctx), 2);
    /* a handle: the grid form too, halted and resumed as workers */
    assert_int_equal(corun_launch_stream(ctx, k, (corun_dim3){3000, 1, 1},
                                         (corun_dim3){256, 1, 1}, 0, NULL, NULL, &stream_a, &j),
                     CORUN_OK);
    assert_int_equal(corun_ctx_grid_launches(ctx), 3);
    assert_int_equal(corun_job_wait(j, -1), CORUN_OK);
    corun_job_release(j);
    /* a QoS goal, or fewer CapSMs than SMs: workers */
    assert_int_equal(corun_launch_stream(ctx, k, (corun_dim3){3000, 1, 1},
                                         (corun_dim3){256, 1, 1}, 0, NULL, &goal, &stream_a,
                                         NULL),
                     CORUN_OK);
    assert_int_equal(corun_launch_stream(ctx, k, (corun_dim3){3000, 1, 1},
                                         (corun_dim3){256, 1, 1}, 0, NULL, &few, &stream_a,
                                         NULL),
                     CORUN_OK);
    launch_1056(ctx, k, NULL, &stream_a, true);
    assert_int_equal(corun_ctx_grid_launches(ctx), 3);
    /* an LS launch beside a grid-form kernel: it is made room for, both end */
    launch_n(ctx, k, 30000, 1);
    assert_int_equal(corun_ctx_grid_launches(ctx), 4);
    assert_int_equal(corun_launch_stream(ctx, k, (corun_dim3){132, 1, 1},
                                         (corun_dim3){256, 1, 1}, 0, NULL, &ls, &stream_b, &j),
                     CORUN_OK);
    assert_int_equal(corun_job_wait(j, -1), CORUN_OK);
    corun_job_release(j);
    {
        char line[512];
        corun_ctx_describe(ctx, line, sizeof(line));
        assert_non_null(strstr(line, "grid form so far 4, made workers 1;"));
    }
    /* beside LS work: workers (the choice is made as it launches). smguard
     * evicts every CapSM of the kernel before them for the LS kernel: it
     * pauses with no gate grid waiting, and resumes on new workers (before,
     * it held its stream for good and this wait failed) */
    launch_n(ctx, k, 3000, 1);
    launch_1056(ctx, k, NULL, &stream_a, true);
    assert_int_equal(corun_ctx_grid_launches(ctx), 4);
    corun_ctx_destroy(ctx);

    none_with_setting_off("CORUN_GRID", 300, 3000, corun_ctx_grid_launches);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_stream_runs_its_kernels_in_order_released_by_the_device),
        cmocka_unit_test(a_one_wave_batch_launch_runs_plain),
        cmocka_unit_test(the_grid_form_runs_each_task_once_and_resumes_as_workers),
        cmocka_unit_test(long_tasks_of_several_waves_run_in_the_grid_form),
        cmocka_unit_test(a_held_kernel_keeps_its_sms_until_its_last_task),
        cmocka_unit_test(a_halted_kernel_holds_its_stream_until_resumed),
        cmocka_unit_test(a_halt_racing_the_last_task_loses_no_wakeup),
        cmocka_unit_test(a_relayed_grid_obeys_a_halt_sooner),
        cmocka_unit_test(a_preempted_stream_job_holds_the_job_behind_it),
        cmocka_unit_test(short_kernels_run_plain_once_measured),
        cmocka_unit_test(the_plain_line_is_shorter_while_ls_work_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
