/* test_ctl.c — the host's reading of a kernel's end from its report
 * (corun__ctl_progress_reported, corun_ctl.h): a scheduled kernel whose
 * workers wrote FINISHED for this use of the block is done, every task,
 * with no read of the control block; another use's report, a report of a
 * held or released kernel, or one being written says nothing, and the host
 * reads the block instead. The relay's host side: which writes reach the
 * mirror, and which grids get a relay block. */
#include "support.h"

#include <string.h>

#include "core/ctl.h"

static void host_of(corun__ctl_host *h, uint64_t tasks, bool ahead)
{
    memset(h, 0, sizeof(*h));
    h->tasks = tasks;
    h->ahead = ahead;
}

/* What a worker writes (corun__report in corun_device.cuh), FINISHED
 * unfenced. */
static void write_report(corun_report *r, uint32_t seq, uint32_t count, uint32_t state,
                         uint32_t done, uint32_t task_ns)
{
    r->done = done;
    r->live = 0;
    r->task_ns = task_ns;
    r->tag = CORUN_REPORT_TAG(seq, count, state);
}

static void finished_for_this_use_is_every_task_done(void **state)
{
    corun__ctl_host h;
    corun_report r;
    corun_progress p;
    (void)state;

    memset(&r, 0, sizeof(r));
    host_of(&h, 132, true);
    write_report(&r, 7, 62, CORUN_REPORT_FINISHED, 132, 21000);
    memset(&p, 0xff, sizeof(p));
    assert_true(corun__ctl_progress_reported(&h, &r, 7, &p));
    assert_int_equal(p.tasks, 132);
    assert_int_equal(p.done, 132);
    assert_int_equal(p.claimed, 132);
    assert_int_equal(p.live, 0);
    assert_int_equal(p.task_ns, 21000);
    assert_int_equal(p.ahead, 1);
    /* the tag keeps 24 bits of the use */
    write_report(&r, 7, 62, CORUN_REPORT_FINISHED, 132, 21000);
    assert_true(corun__ctl_progress_reported(&h, &r, 7u | (1u << 24), &p));
}

/* For use 8 of a block, none of these says the kernel is done: the slot's
 * previous kernel's FINISHED (this one was halted), a fresh slot's zeros, a
 * held or released kernel's report, and one being written (an odd count). */
static void other_reports_say_nothing(void **state)
{
    static const struct {
        uint32_t seq, count, state;
    } cases[] = {
        {7, 62, CORUN_REPORT_FINISHED}, {0, 0, CORUN_REPORT_NONE}, {8, 4, CORUN_REPORT_HELD},
        {8, 62, CORUN_REPORT_RELEASED}, {8, 5, CORUN_REPORT_FINISHED},
    };
    corun__ctl_host h;
    corun_report r;
    corun_progress p;
    size_t i;
    (void)state;

    host_of(&h, 132, false);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&r, 0, sizeof(r));
        if (cases[i].state != CORUN_REPORT_NONE) {
            write_report(&r, cases[i].seq, cases[i].count, cases[i].state, 60, 9000);
        }
        if (corun__ctl_progress_reported(&h, &r, 8, &p)) {
            fail_msg("case %zu read as done", i);
        }
    }
}

/* The mirror takes the signal words of every signal (the halt, an eviction,
 * an SM range), in the control block's layout, and nothing else: not the
 * task limit, the tail-shrink hint, a resume or the void. */
static void the_mirror_holds_the_signal_words_only(void **state)
{
    corun__ctl_host h;
    corun__ctl_write w[CORUN_CTL_MAX_WRITES];
    corun_mirror m;
    corun_ctl blk;
    size_t n = 0;
    (void)state;

    host_of(&h, 100000, true); /* ahead, not direct: a halt voids first */
    h.sm_count = 132;
    memset(&m, 0, sizeof(m));
    memset(&blk, 0, sizeof(blk));
    assert_int_equal(corun__ctl_signal(&h, CORUN_SIG_HALT_GEN, 3, w, &n), CORUN_OK);
    assert_int_equal(n, 2);
    corun__ctl_mirror(&m, w, n);
    corun__ctl_apply(&blk, w, n);
    assert_int_equal(m.halt_gen, 3);
    assert_int_equal(blk.next, CORUN_AHEAD_VOID); /* on the stream only */
    assert_int_equal(corun__ctl_signal(&h, CORUN_SIG_EVICT_BELOW, 5, w, &n), CORUN_OK);
    corun__ctl_mirror(&m, w, n);
    corun__ctl_apply(&blk, w, n);
    assert_int_equal(corun__ctl_signal(&h, CORUN_SIG_SM_RANGE, 8 | (120ull << 32), w, &n),
                     CORUN_OK);
    corun__ctl_mirror(&m, w, n);
    corun__ctl_apply(&blk, w, n);
    assert_int_equal(m.evict_below, 5);
    assert_int_equal(m.sm_lo, 8);
    assert_int_equal(m.sm_hi_inv, ~120u);
    assert_memory_equal(&m, &blk, CORUN_MIRROR_SIGNALS); /* the block's first 16 bytes */
    assert_int_equal(corun__ctl_signal(&h, CORUN_SIG_NWORKERS, 77, w, &n), CORUN_OK);
    corun__ctl_mirror(&m, w, n);
    assert_int_equal(corun__ctl_signal(&h, CORUN_SIG_RESUME, 2, w, &n), CORUN_OK);
    corun__ctl_mirror(&m, w, n);
    assert_int_equal(corun__ctl_signal(&h, CORUN_SIG_TASK_LIMIT, 99000, w, &n), CORUN_OK);
    corun__ctl_mirror(&m, w, n);
    assert_memory_equal(&m, &blk, CORUN_MIRROR_SIGNALS);
    assert_int_equal(m.over, 0); /* the task limit's word is not the mirror's */
}

/* A relay leaves once its launch has ended, or a later launch of its block
 * (the host recycles a block without clearing `over`, so a relay that wakes
 * late still finds a number at or past its own), never before. */
static void a_relay_leaves_at_its_launch_or_a_later_one(void **state)
{
    (void)state;
    assert_false(corun_relay_over(0, 1));  /* a fresh mirror: the first launch runs */
    assert_false(corun_relay_over(6, 7));  /* the block's previous launch ended */
    assert_true(corun_relay_over(7, 7));
    assert_true(corun_relay_over(8, 7));   /* it served another kernel meanwhile */
    assert_true(corun_relay_over(0u, 0xffffffffu)); /* the count wrapped */
    assert_false(corun_relay_over(0xffffffffu, 0u));
}

/* A relay block where a slot is free for it (a grid below one worker per
 * slot, or bound to some SMs), or in place of one worker of a grid that
 * fills the GPU for 64 waves or more; none for a full grid of fewer waves,
 * where it would start only as the tasks run out, nor for a kernel with no
 * more tasks than workers. */
static void a_relay_where_a_slot_is_free_or_many_waves(void **state)
{
    static const struct {
        uint32_t w, per_sm, lo, hi;
        uint64_t tasks;
        uint32_t workers;
        bool relay;
    } cases[] = {
        {132, 8, 0, 131, 132, 132, false},            /* one wave: all preset */
        {132, 8, 0, 131, 133, 132, true},             /* one claim past the wave */
        {528, 8, 0, 131, 100000, 528, true},          /* half the GPU's CapSMs */
        {1056, 8, 0, 131, 1056 * 20, 1056, false},    /* full, 20 waves */
        {1056, 8, 0, 131, 1056 * 64, 1055, true},     /* full, 64 waves */
        {1056, 8, 8, 131, 1056 * 20, 1056, true},     /* bound: workers off it leave */
        {132, 1, 0, 131, 132 * 63, 132, false},
        {132, 1, 0, 131, 132 * 64, 131, true},
        {1, 1, 0, 0, 1000, 1, false},                 /* one SM, one slot */
        {0, 8, 0, 131, 10, 0, false},
    };
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool relay = !cases[i].relay;
        const uint32_t sms = cases[i].hi == 0 ? 1 : 132;
        const uint32_t got = corun__relay_plan(cases[i].w, cases[i].per_sm, cases[i].lo,
                                               cases[i].hi, sms, cases[i].tasks, &relay);
        if (got != cases[i].workers || relay != cases[i].relay) {
            fail_msg("case %zu: %u workers, relay %d", i, got, (int)relay);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_mirror_holds_the_signal_words_only),
        cmocka_unit_test(a_relay_leaves_at_its_launch_or_a_later_one),
        cmocka_unit_test(a_relay_where_a_slot_is_free_or_many_waves),
        cmocka_unit_test(finished_for_this_use_is_every_task_done),
        cmocka_unit_test(other_reports_say_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
