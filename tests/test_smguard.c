/* test_smguard.c — the scheduler's mechanism and SMGuard's Algorithm 1,
 * observed through the calls the scheduler makes to a recording backend. */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "backends/null/null.h"
#include "core/policy.h"
#include "core/sched.h"

typedef struct fixture {
    corun__backend *be;
    corun__sched *s;
    int done_calls;
} fixture;

static void on_done(corun__sched *s, corun__job *k, void *user)
{
    ((fixture *)user)->done_calls++;
}

static int setup_with(void **state, unsigned bind, unsigned reserve, double ls_cap)
{
    static fixture f;
    corun_gpu_desc d;
    corun__sched_opts o;

    memset(&f, 0, sizeof(f));
    corun_gpu_desc_h100(&d);
    assert_int_equal(corun__null_create(&d, &f.be), CORUN_OK);
    memset(&o, 0, sizeof(o));
    o.backend = f.be;
    o.policy = corun__policy_find("smguard");
    corun__settings_default(&o.settings);
    o.settings.smguard_bind = bind;
    o.settings.reserve_capsm = reserve;
    o.settings.smguard_ls_cap = ls_cap;
    assert_non_null(o.policy);
    assert_int_equal(corun__sched_create(&o, &f.s), CORUN_OK);
    *state = &f;
    return 0;
}

/* Batch kernels bound to the SMs outside the reservation, LS kernels on
 * the reservation (SMGUARD_LS_CAP=0): Algorithm 1 as in the paper. */
static int setup(void **state)
{
    return setup_with(state, 1, 8, 0);
}

/* SMGUARD_BIND=0: the paper's logical CapSMs. */
static int setup_logical(void **state)
{
    return setup_with(state, 0, 8, 0);
}

/* A reservation of the whole GPU (132 SMs). */
static int setup_whole_reserve(void **state)
{
    return setup_with(state, 1, 132, 0);
}

/* The defaults: LS kernels sized by need, up to half the GPU. */
static int setup_need(void **state)
{
    return setup_with(state, 1, 8, 0.5);
}

static int teardown(void **state)
{
    fixture *f = *state;
    corun__sched_destroy(f->s);
    f->be->ops->destroy(f->be);
    return 0;
}

static corun__kspec spec(const char *name, uint32_t blocks)
{
    corun__kspec k;
    memset(&k, 0, sizeof(k));
    snprintf(k.name, sizeof(k.name), "%s", name);
    k.grid = (corun_dim3){blocks, 1, 1};
    k.block = (corun_dim3){256, 1, 1};
    k.shape.regs_per_thread = 32; /* 8 workers per SM */
    k.task_ns = (corun__dist){CORUN_DIST_CONST, 1000, 0};
    return k;
}

static corun__job *submit_n(fixture *f, const char *name, corun_class cls, uint32_t capsm,
                           uint32_t blocks)
{
    corun__kspec k = spec(name, blocks);
    corun_launch_attr a = {.cls = cls, .capsm = capsm, .weight = 1};
    corun__job *out = NULL;
    char why[256];
    assert_int_equal(corun__sched_submit(f->s, &k, &a, on_done, f, &out, why, sizeof(why)), CORUN_OK);
    return out;
}

static corun__job *submit(fixture *f, const char *name, corun_class cls, uint32_t capsm)
{
    return submit_n(f, name, cls, capsm, 10000);
}

/* The last recorded call of the given kind, or NULL. */
static const corun__null_call *last(fixture *f, int what)
{
    const corun__null_call *c;
    size_t n = corun__null_calls(f->be, &c);
    while (n-- > 0) {
        if ((int)c[n].what == what) {
            return &c[n];
        }
    }
    return NULL;
}

/* The value of the last signal `sig` recorded, or UINT64_MAX. */
static uint64_t last_signal(fixture *f, corun__signal sig)
{
    const corun__null_call *c;
    size_t n = corun__null_calls(f->be, &c);

    while (n-- > 0) {
        if (c[n].what == CORUN_NULL_SIGNAL && c[n].sig == sig) {
            return c[n].value;
        }
    }
    return UINT64_MAX;
}

static int count_signals(fixture *f, corun__signal sig)
{
    const corun__null_call *c;
    size_t n = corun__null_calls(f->be, &c), i;
    int count = 0;
    for (i = 0; i < n; i++) {
        count += c[i].what == CORUN_NULL_SIGNAL && c[i].sig == sig;
    }
    return count;
}

static void complete(fixture *f, corun__job *k)
{
    corun__null_set_done(f->be, k->ex, k->tasks);
    while (k->inflight > 0) {
        corun__null_finish(f->be, (uint64_t)(uintptr_t)k);
        assert_int_equal(corun__sched_step(f->s, corun__sched_now(f->s) + 1), CORUN_OK);
    }
    assert_int_equal(corun__sched_step(f->s, corun__sched_now(f->s) + 1), CORUN_OK);
}

static void batch_quota_is_the_rest_of_the_gpu(void **state)
{
    fixture *f = *state;
    corun__job *b = submit(f, "batch", CORUN_CLASS_BATCH, 0);
    const corun__null_call *c = last(f, CORUN_NULL_WORKERS);

    /* 132 SMs - 8 reserved = 124 CapSMs x 8 workers per CapSM. */
    assert_non_null(c);
    assert_int_equal(c->req.nworkers, 124 * 8);
    assert_int_equal(c->req.base, 0);
    assert_int_equal(corun__job_capsm(b), 124);
    assert_int_equal(corun__sched_free_capsm(f->s), 8);
}

static void reservation_fits_in_the_reserve(void **state)
{
    fixture *f = *state;
    corun__job *b = submit(f, "batch", CORUN_CLASS_BATCH, 0);
    corun__job *ls;

    corun__null_clear(f->be);
    ls = submit(f, "ls", CORUN_CLASS_LS, 0);
    assert_int_equal(corun__job_capsm(ls), 8);
    assert_int_equal(last(f, CORUN_NULL_WORKERS)->req.nworkers, 64);
    assert_int_equal(last(f, CORUN_NULL_WORKERS)->req.priority, 1);
    /* Nothing was evicted. */
    assert_int_equal(count_signals(f, CORUN_SIG_EVICT_BELOW), 0);
    assert_int_equal(corun__job_capsm(b), 124);
    assert_int_equal(corun__sched_free_capsm(f->s), 0);
}

static void reservation_beyond_free_evicts_and_gives_back(void **state)
{
    fixture *f = *state;
    corun__job *b = submit(f, "batch", CORUN_CLASS_BATCH, 0);
    corun__job *ls1 = submit(f, "ls1", CORUN_CLASS_LS, 0);
    corun__job *ls2;
    const corun__null_call *c;
    const corun__null_call *calls;
    size_t n, i;
    int evicted = 0;

    corun__null_clear(f->be);
    ls2 = submit(f, "ls2", CORUN_CLASS_LS, 20);
    /* R_remain = 0 < 20: onlineResourceAdjust(20) evicts the batch kernel's
     * 20 lowest CapSMs, then the LS kernel runs on its full reservation. */
    n = corun__null_calls(f->be, &calls);
    for (i = 0; i < n; i++) {
        if (calls[i].what == CORUN_NULL_SIGNAL && calls[i].sig == CORUN_SIG_EVICT_BELOW) {
            assert_ptr_equal(calls[i].k, b->ex);
            assert_int_equal(calls[i].value, 20);
            evicted = 1;
        }
    }
    assert_true(evicted);
    assert_int_equal(corun__job_capsm(b), 104);
    assert_int_equal(corun__job_capsm(ls2), 20);
    assert_int_equal(last(f, CORUN_NULL_WORKERS)->req.nworkers, 160);

    /* When ls2 completes, the batch kernel gets its 20 CapSMs back as new
     * workers above its window: ids 124..143. */
    corun__null_clear(f->be);
    complete(f, ls2);
    c = last(f, CORUN_NULL_WORKERS);
    assert_non_null(c);
    assert_ptr_equal(c->k, b->ex);
    assert_int_equal(c->req.nworkers, 160);
    assert_int_equal(c->req.base, 124 * 8);
    assert_int_equal(corun__job_capsm(b), 124);
    assert_int_equal(f->done_calls, 1);
    (void)ls1;
}

/* With binding (the default), the batch kernel's range is set before its
 * first launch, and the launch fills every slot so that the workers placed
 * on the reserved SMs (which leave at once) leave 124 SMs' worth. */
static void bound_batch_fills_the_sms_outside_the_reserve(void **state)
{
    fixture *f = *state;
    corun__job *b = submit(f, "batch", CORUN_CLASS_BATCH, 0);
    const corun__null_call *calls;
    size_t n = corun__null_calls(f->be, &calls), i;
    int range_at = -1, launch_at = -1;

    for (i = 0; i < n; i++) {
        if (calls[i].what == CORUN_NULL_SIGNAL && calls[i].sig == CORUN_SIG_SM_RANGE) {
            assert_int_equal(calls[i].value, (uint64_t)0 | ((uint64_t)123 << 32));
            range_at = (int)i;
        } else if (calls[i].what == CORUN_NULL_WORKERS && launch_at < 0) {
            launch_at = (int)i;
        }
    }
    assert_true(range_at >= 0 && launch_at > range_at);
    assert_int_equal(last(f, CORUN_NULL_WORKERS)->req.nworkers, 132 * 8);
    assert_int_equal(corun__job_capsm(b), 124);
    assert_int_equal(corun__sched_free_capsm(f->s), 8);
    assert_int_equal(b->sm_lo, 0);
    assert_int_equal(b->sm_hi, 123);
}

/* An LS kernel alone, sized by need: 17 CapSMs of 8 workers for its 132
 * tasks, launched as 132 workers (no more than tasks on the whole GPU: the
 * hardware would put the surplus on SMs that already have one, where they
 * claim tasks beside each other). A bound batch kernel keeps its surplus. */
static void no_more_workers_than_tasks_on_the_whole_gpu(void **state)
{
    fixture *f = *state;
    corun__job *ls = submit_n(f, "ls", CORUN_CLASS_LS, 0, 132);
    corun__job *small;

    assert_int_equal(corun__job_capsm(ls), 17);
    assert_int_equal(last(f, CORUN_NULL_WORKERS)->req.nworkers, 132);
    complete(f, ls);
    corun__null_clear(f->be);
    small = submit_n(f, "small", CORUN_CLASS_LS, 8, 20);
    assert_int_equal(corun__job_capsm(small), 8);
    assert_int_equal(last(f, CORUN_NULL_WORKERS)->req.nworkers, 20);
    complete(f, small);
    corun__null_clear(f->be);
    (void)submit(f, "batch", CORUN_CLASS_BATCH, 0);
    assert_int_equal(last(f, CORUN_NULL_WORKERS)->req.nworkers, 132 * 8);
}

/* corund's window (corun__sched_window): a running bound batch kernel is
 * moved onto it at once (its SM range signalled), keeps its own range to go
 * back to, direct launches are allotted the window, and lifting it gives
 * the kernel its own range back; an LS kernel runs on the whole window (not
 * on its floor's part of it) with no surplus workers (they would wait for
 * other programs' slots). */
static void window_keeps_kernels_on_the_daemons_sms(void **state)
{
    fixture *f = *state;
    corun__job *b = submit(f, "batch", CORUN_CLASS_BATCH, 0);
    corun__allotment a;

    assert_int_equal(b->sm_hi, 123);
    assert_int_equal(corun__sched_window(f->s, 0, 99), CORUN_OK);
    assert_int_equal(last(f, CORUN_NULL_SIGNAL)->sig, CORUN_SIG_SM_RANGE);
    assert_int_equal(last(f, CORUN_NULL_SIGNAL)->value, (uint64_t)0 | ((uint64_t)99 << 32));
    assert_int_equal(b->sm_lo, 0);
    assert_int_equal(b->sm_hi, 123);
    corun__sched_allot(f->s, CORUN_CLASS_BATCH, &a);
    assert_true(a.sm_hi <= 99);
    assert_true(a.capsm <= 100);
    assert_int_equal(corun__sched_window(f->s, 0, 131), CORUN_OK);
    assert_int_equal(last(f, CORUN_NULL_SIGNAL)->value, (uint64_t)0 | ((uint64_t)123 << 32));
    assert_int_equal(corun__sched_window(f->s, 5, 200), CORUN_ERANGE);
    assert_int_equal(corun__sched_window(f->s, 9, 8), CORUN_ERANGE);
    complete(f, b);
    assert_int_equal(corun__sched_window(f->s, 112, 131), CORUN_OK);
    (void)submit(f, "ls", CORUN_CLASS_LS, 0);
    assert_int_equal(last(f, CORUN_NULL_WORKERS)->req.nworkers, 8 * 8);
    assert_int_equal(last_signal(f, CORUN_SIG_SM_RANGE), (uint64_t)112 | ((uint64_t)131 << 32));
}

/* A bound batch kernel gives an LS kernel whole SMs: its range loses its top
 * SMs (no CapSM-id eviction), and gets them back when the LS kernel is done,
 * with workers launched for them. ls2 asks for 20 CapSMs while ls1 holds the
 * 8 reserved ones: it queues for those 8 and 12 are evicted (0036). Evicted
 * SMs still run their batch tasks, so ls2 starts on the 8 it queues for; the
 * 12 are draining, for the LS kernels after it. Its workers then hold their
 * SMs through its tail (hold). */
static void bound_batch_gives_and_takes_back_whole_sms(void **state)
{
    fixture *f = *state;
    corun__job *b = submit(f, "batch", CORUN_CLASS_BATCH, 0);
    corun__job *ls1 = submit(f, "ls1", CORUN_CLASS_LS, 0);
    corun__job *ls2;
    const corun__null_call *c;

    assert_true(last(f, CORUN_NULL_WORKERS)->req.hold == false); /* an LS kernel */
    assert_true(b->hold);
    corun__null_clear(f->be);
    ls2 = submit(f, "ls2", CORUN_CLASS_LS, 20);
    assert_int_equal(count_signals(f, CORUN_SIG_EVICT_BELOW), 0);
    c = last(f, CORUN_NULL_SIGNAL);
    assert_non_null(c);
    assert_int_equal(b->sm_hi, 111);
    assert_int_equal(corun__job_capsm(b), 112);
    assert_int_equal(corun__job_capsm(ls2), 8);
    assert_int_equal(corun__sched_free_capsm(f->s), 4); /* 132 - 112 - 8 - 8 */
    /* LS kernels are not bound. */
    assert_int_equal(ls2->sm_hi, 131);

    corun__null_clear(f->be);
    complete(f, ls2);
    assert_int_equal(b->sm_hi, 123);
    c = last(f, CORUN_NULL_WORKERS);
    assert_non_null(c);
    assert_ptr_equal(c->k, b->ex);
    assert_true(c->req.hold);
    /* 12 SMs' worth, over-launched by 132/124 for the reserved SMs. */
    assert_int_equal(c->req.nworkers, (12 * 8 * 132 + 123) / 124);
    assert_int_equal(corun__job_capsm(b), 124);
    (void)ls1;
}

/* Size by need: an LS kernel of 132 blocks (8 per SM) asks for the 17
 * CapSMs one wave takes: the 8 reserved ones, then 9 whole SMs evicted from
 * the bound batch kernel. Those are draining, so it starts on the 8: the
 * batch kernel holds (corun__hold), so its workers keep those SMs until it
 * ends, whatever its task time says, and an LS kernel then starts on the 8
 * too. While LS work goes on, the 17 stay free: the batch kernel does not
 * grow back into them when an LS kernel completes, and the next batch
 * kernel is bound below them. An LS kernel after the batch kernel's end
 * starts at once on all 17. */
static void ls_sized_by_need_keeps_its_floor(void **state)
{
    fixture *f = *state;
    corun__job *b = submit(f, "batch", CORUN_CLASS_BATCH, 0);
    corun__job *ls, *ls2, *ls3, *b2;

    assert_int_equal(corun__job_capsm(b), 124);
    b->task_ns = 2000000; /* as measured by an earlier launch: drains in 3 ms */
    corun__null_clear(f->be);
    ls = submit_n(f, "ls", CORUN_CLASS_LS, 0, 132);
    /* the 8 reserved CapSMs at once; the 9 evicted ones are draining */
    assert_int_equal(corun__job_capsm(ls), 8);
    assert_int_equal(last(f, CORUN_NULL_WORKERS)->req.nworkers, 8 * 8);
    assert_int_equal(b->sm_hi, 114);
    assert_int_equal(corun__job_capsm(b), 115);

    corun__null_clear(f->be);
    complete(f, ls);
    assert_null(last(f, CORUN_NULL_WORKERS)); /* nothing given back: the floor */
    assert_int_equal(corun__job_capsm(b), 115);
    assert_int_equal(corun__sched_free_capsm(f->s), 17);

    corun__null_advance(f->be, 3100000); /* a task later: still held */
    corun__null_clear(f->be);
    ls2 = submit_n(f, "ls2", CORUN_CLASS_LS, 0, 132);
    assert_int_equal(corun__job_capsm(ls2), 8);
    assert_int_equal(count_signals(f, CORUN_SIG_SM_RANGE), 0); /* no eviction */
    complete(f, ls2);

    complete(f, b);
    corun__null_clear(f->be);
    ls3 = submit_n(f, "ls3", CORUN_CLASS_LS, 0, 132);
    assert_int_equal(corun__job_capsm(ls3), 17);
    assert_int_equal(count_signals(f, CORUN_SIG_SM_RANGE), 0);
    complete(f, ls3);

    b2 = submit(f, "batch2", CORUN_CLASS_BATCH, 0);
    assert_int_equal(corun__job_capsm(b2), 115);
    assert_int_equal(b2->sm_hi, 114);
}

/* The need is one wave of the grid, at least the reservation, at most
 * SMGUARD_LS_CAP of the GPU; after LS_WINDOW_NS without an LS arrival the
 * floor is the reservation again. */
static void ls_need_is_bounded_and_the_floor_decays(void **state)
{
    fixture *f = *state;
    corun__job *small = submit_n(f, "small", CORUN_CLASS_LS, 0, 40);
    corun__job *big, *b;

    assert_int_equal(corun__job_capsm(small), 8); /* needs 5: the reservation */
    complete(f, small);
    big = submit_n(f, "big", CORUN_CLASS_LS, 0, 100000);
    assert_int_equal(corun__job_capsm(big), 66); /* half of 132 */
    complete(f, big);
    b = submit(f, "batch", CORUN_CLASS_BATCH, 0);
    assert_int_equal(corun__job_capsm(b), 66);
    complete(f, b);

    corun__null_advance(f->be, 2000000000ull);
    b = submit(f, "batch2", CORUN_CLASS_BATCH, 0);
    assert_int_equal(corun__job_capsm(b), 124);
    assert_int_equal(b->sm_hi, 123);
}

static void quota_waits_when_nothing_is_free(void **state)
{
    fixture *f = *state;
    corun__job *b1 = submit(f, "b1", CORUN_CLASS_BATCH, 132);
    corun__job *b2;

    assert_int_equal(corun__job_capsm(b1), 132);
    b2 = submit(f, "b2", CORUN_CLASS_BATCH, 50);
    assert_int_equal(b2->state, CORUN_JS_WAITING);
    complete(f, b1);
    assert_int_equal(b2->state, CORUN_JS_RUNNING);
    assert_int_equal(corun__job_capsm(b2), 50);
}

static void partial_quota_then_grows_back(void **state)
{
    fixture *f = *state;
    corun__job *b1 = submit(f, "b1", CORUN_CLASS_BATCH, 100);
    corun__job *b2 = submit(f, "b2", CORUN_CLASS_BATCH, 100);

    /* Algorithm 1 line 9: R_quota = R_remain = 32. */
    assert_int_equal(corun__job_capsm(b2), 32);
    complete(f, b1);
    assert_int_equal(corun__job_capsm(b2), 100);
}

static void stop_pause_and_resume_from_the_counter(void **state)
{
    fixture *f = *state;
    corun__job *b = submit(f, "b", CORUN_CLASS_BATCH, 10);
    const corun__null_call *c;

    assert_int_equal(corun__sched_stop(f->s, b), CORUN_OK);
    c = last(f, CORUN_NULL_SIGNAL);
    assert_int_equal(c->sig, CORUN_SIG_HALT_GEN);
    assert_int_equal(c->value, 1);
    assert_int_equal(corun__sched_free_capsm(f->s), 132);
    assert_int_equal(b->state, CORUN_JS_STOPPING);

    /* The workers leave having done 4000 tasks: the kernel pauses, and the
     * policy resumes it at once (CapSMs are free) from task 4000, gen 1. */
    corun__null_set_done(f->be, b->ex, 4000);
    corun__null_clear(f->be);
    corun__null_finish(f->be, (uint64_t)(uintptr_t)b);
    assert_int_equal(corun__sched_step(f->s, corun__sched_now(f->s) + 1), CORUN_OK);
    c = last(f, CORUN_NULL_REWIND);
    assert_non_null(c);
    assert_int_equal(c->value, 4000);
    c = last(f, CORUN_NULL_WORKERS);
    assert_non_null(c);
    assert_int_equal(c->req.gen, 1);
    assert_int_equal(c->req.base, 10 * 8);
    assert_int_equal(b->state, CORUN_JS_RUNNING);
    assert_int_equal(b->preemptions, 1);
}

/* A task limit set under running workers waits for the next resume: the
 * scheduler writes it only when no worker runs (corun_ctl.h). */
static void limit_waits_for_the_next_resume(void **state)
{
    fixture *f = *state;
    corun__job *b = submit(f, "b", CORUN_CLASS_BATCH, 10);
    const corun__null_call *c;

    corun__null_clear(f->be);
    assert_int_equal(corun__sched_limit(f->s, b, 6000), CORUN_OK);
    assert_int_equal(count_signals(f, CORUN_SIG_TASK_LIMIT), 0);
    assert_int_equal(corun__sched_stop(f->s, b), CORUN_OK);
    corun__null_set_done(f->be, b->ex, 4000);
    corun__null_clear(f->be);
    corun__null_finish(f->be, (uint64_t)(uintptr_t)b);
    assert_int_equal(corun__sched_step(f->s, corun__sched_now(f->s) + 1), CORUN_OK);
    assert_int_equal(count_signals(f, CORUN_SIG_TASK_LIMIT), 0);
    c = last(f, CORUN_NULL_REWIND);
    assert_non_null(c);
    assert_int_equal(c->value, 4000);
    assert_int_equal(c->limit, 6000);
    assert_int_equal(b->state, CORUN_JS_RUNNING);
}

/* A kernel of class cls asking for capsm CapSMs is refused at submission
 * with a reason holding words, and nothing is launched. */
static void expect_refused(fixture *f, corun_class cls, uint32_t capsm, const char *words)
{
    corun__kspec k = spec("refused", 100);
    corun_launch_attr a = {.cls = cls, .capsm = capsm, .weight = 1};
    corun__job *out = NULL;
    char why[256] = "";

    assert_int_equal(corun__sched_submit(f->s, &k, &a, NULL, NULL, &out, why, sizeof(why)),
                     CORUN_ERANGE);
    if (strstr(why, words) == NULL) {
        fail_msg("'%s' lacks '%s'", why, words);
    }
    assert_null(out);
    assert_null(last(f, CORUN_NULL_WORKERS));
}

static void oversized_reservation_is_refused(void **state)
{
    expect_refused(*state, CORUN_CLASS_LS, 133, "133 CapSMs");
}

/* A batch kernel would have no quota: refused at submission with the
 * reason, not left waiting for ever; LS kernels and a batch kernel that
 * names its CapSMs run. */
static void whole_gpu_reservation_refuses_batch_without_quota(void **state)
{
    fixture *f = *state;

    expect_refused(f, CORUN_CLASS_BATCH, 0, "no quota");
    assert_int_equal(corun__job_capsm(submit(f, "ls", CORUN_CLASS_LS, 0)), 132);
    assert_non_null(submit(f, "own", CORUN_CLASS_BATCH, 10));
}

static void impossible_shape_is_refused(void **state)
{
    fixture *f = *state;
    corun__kspec k = spec("wide", 100);
    corun_launch_attr a = {.cls = CORUN_CLASS_BATCH, .weight = 1};
    corun__job *out = NULL;
    char why[256] = "";

    k.block.x = 2048;
    assert_int_equal(corun__sched_submit(f->s, &k, &a, NULL, NULL, &out, why, sizeof(why)),
                     CORUN_ERANGE);
    assert_non_null(strstr(why, "threads per block"));
    assert_null(corun__sched_first(f->s));
}

static void failed_launch_fails_the_kernel(void **state)
{
    fixture *f = *state;
    corun__job *b;

    corun__null_fail_next(f->be, CORUN_EFAULT);
    b = submit(f, "b", CORUN_CLASS_BATCH, 0);
    assert_int_equal(b->state, CORUN_JS_FAILED);
    assert_int_equal(b->status, CORUN_EFAULT);
    assert_int_equal(corun__sched_free_capsm(f->s), 132);
    assert_int_equal(corun__sched_step(f->s, corun__sched_now(f->s) + 1), CORUN_OK);
    assert_int_equal(f->done_calls, 1);
    corun__sched_release(f->s, b);
    assert_null(corun__sched_first(f->s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(batch_quota_is_the_rest_of_the_gpu, setup_logical, teardown),
        cmocka_unit_test_setup_teardown(reservation_fits_in_the_reserve, setup, teardown),
        cmocka_unit_test_setup_teardown(reservation_beyond_free_evicts_and_gives_back, setup_logical,
                                        teardown),
        cmocka_unit_test_setup_teardown(bound_batch_fills_the_sms_outside_the_reserve, setup, teardown),
        cmocka_unit_test_setup_teardown(window_keeps_kernels_on_the_daemons_sms, setup, teardown),
        cmocka_unit_test_setup_teardown(bound_batch_gives_and_takes_back_whole_sms, setup, teardown),
        cmocka_unit_test_setup_teardown(ls_sized_by_need_keeps_its_floor, setup_need, teardown),
        cmocka_unit_test_setup_teardown(no_more_workers_than_tasks_on_the_whole_gpu, setup_need,
                                        teardown),
        cmocka_unit_test_setup_teardown(ls_need_is_bounded_and_the_floor_decays, setup_need,
                                        teardown),
        cmocka_unit_test_setup_teardown(quota_waits_when_nothing_is_free, setup, teardown),
        cmocka_unit_test_setup_teardown(partial_quota_then_grows_back, setup, teardown),
        cmocka_unit_test_setup_teardown(stop_pause_and_resume_from_the_counter, setup, teardown),
        cmocka_unit_test_setup_teardown(limit_waits_for_the_next_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(oversized_reservation_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(whole_gpu_reservation_refuses_batch_without_quota,
                                        setup_whole_reserve, teardown),
        cmocka_unit_test_setup_teardown(impossible_shape_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_launch_fails_the_kernel, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
