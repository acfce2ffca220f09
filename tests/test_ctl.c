/* test_ctl.c — the host's reading of a kernel's end from its report
 * (corun__ctl_progress_reported, corun_ctl.h): a scheduled kernel whose
 * workers wrote FINISHED for this use of the block is done, every task,
 * with no read of the control block; another use's report, a report of a
 * held or released kernel, or one being written says nothing, and the host
 * reads the block instead. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finished_for_this_use_is_every_task_done),
        cmocka_unit_test(other_reports_say_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
