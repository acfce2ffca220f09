/* test_sim_share.c — SMs shared between blocks (src/backends/sim/sim_share.c):
 * on a one-SM H100, with block_speedup g = 2 (round numbers; the default is
 * the H200's) and fixed launch delays,
 *  - a block alone runs its compute g times faster than at full occupancy,
 *    and a kernel alone keeps its throughput (per_sm tasks per task time);
 *  - a younger block gets what the older blocks on its SM leave of the issue
 *    rate: slower than alone by that share, and not at all while they can
 *    use it all;
 *  - kernels held by latency at full occupancy do not slow each other;
 *  - an LS block that took a free slot under stream priorities waits for the
 *    older batch blocks beside it to end.
 * Times are exact to the nanosecond where no speed changes mid-task, else
 * to 2 ns (a task's remaining work is carried over in floating point). */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "backends/sim/sim.h"

#define US 1000ull
#define G 2.0
#define LAUNCH_NS (CORUN_TEST_LAUNCH_US * US) /* corun_test_fixed_sim_opts */
#define NOTIFY_NS (CORUN_TEST_NOTIFY_US * US)

static corun__backend *one_sm_sim(corun__sim_dispatch dispatch)
{
    corun__sim_opts o;
    corun__backend *be = NULL;

    corun_test_fixed_sim_opts(&o);
    o.desc.sm_count = 1;
    o.block_speedup = G;
    o.dispatch = dispatch;
    assert_int_equal(corun__sim_create(&o, &be), CORUN_OK);
    return be;
}

/* A plain synthetic kernel of `blocks` blocks of `threads` threads and
 * `smem` bytes each, every task `task_ns` alone at full occupancy. */
static corun__exec *kernel_mem(corun__backend *be, const char *name, uint32_t blocks,
                               uint32_t threads, uint32_t smem, double task_ns, double mem_frac,
                               uint32_t *per_sm)
{
    corun__kspec s;
    corun__exec *k = NULL;
    uint32_t p = 0;
    char why[256] = "";

    memset(&s, 0, sizeof(s));
    snprintf(s.name, sizeof(s.name), "%s", name);
    s.grid = (corun_dim3){blocks, 1, 1};
    s.block = (corun_dim3){threads, 1, 1};
    s.shape.regs_per_thread = 32;
    s.shape.smem_static = smem;
    s.shape.smem_optin = smem > 48 * 1024;
    s.code = CORUN_CODE_SYNTHETIC;
    s.task_ns = (corun__dist){CORUN_DIST_CONST, task_ns, 0};
    s.mem_frac = mem_frac; /* no mem_bw: no DRAM contention */
    if (be->ops->exec_open(be, &s, &k, &p, why, sizeof(why)) != CORUN_OK) {
        fail_msg("exec_open %s: %s", name, why);
    }
    if (per_sm != NULL) {
        *per_sm = p;
    }
    return k;
}

/* All compute (no mem_frac, no declared compute). */
static corun__exec *kernel(corun__backend *be, const char *name, uint32_t blocks,
                           uint32_t threads, uint32_t smem, double task_ns, uint32_t *per_sm)
{
    return kernel_mem(be, name, blocks, threads, smem, task_ns, 0, per_sm);
}

/* Polls until nothing is pending; end[cookie] = when launch `cookie` ended
 * on the device (notification time less the notify delay). */
static void ends(corun__backend *be, uint64_t *end, size_t n)
{
    for (;;) {
        corun__bevent ev[8];
        size_t got = 0, i;
        int rc = be->ops->poll(be, UINT64_MAX, ev, 8, &got);
        if (rc == CORUN_ESTATE) {
            return;
        }
        assert_int_equal(rc, CORUN_OK);
        for (i = 0; i < got; i++) {
            assert_true(ev[i].cookie < n);
            end[ev[i].cookie] = ev[i].time_ns - NOTIFY_NS;
        }
    }
}

static void assert_near(uint64_t got, double want)
{
    if ((double)got < want - 2 || (double)got > want + 2) {
        fail_msg("%llu ns, expected %.1f", (unsigned long long)got, want);
    }
}

static void a_block_alone_runs_g_times_faster(void **state)
{
    const double t = 100 * US;
    corun__backend *be = one_sm_sim(CORUN_SIM_DISPATCH_FIFO);
    uint32_t per_sm;
    corun__exec *one = kernel(be, "one", 1, 256, 0, t, &per_sm);
    corun__exec *half = kernel_mem(be, "half", 1, 256, 0, t, 0.5, NULL);
    corun__exec *many = kernel(be, "many", 40, 256, 0, t, NULL);
    uint64_t end[4] = {0};

    (void)state;
    assert_int_equal(per_sm, 8);
    assert_int_equal(be->ops->launch_plain(be, one, 0, 1), CORUN_OK);
    ends(be, end, 4);
    assert_near(end[1], LAUNCH_NS + t / G);
    /* half of its time memory-bound: only the other half runs faster */
    assert_int_equal(be->ops->launch_plain(be, half, 0, 2), CORUN_OK);
    ends(be, end, 4);
    assert_near(end[2] - end[1] - NOTIFY_NS, LAUNCH_NS + t * (0.5 / G + 0.5));
    /* 40 tasks: the oldest four blocks (4 x 2 x 8/64 = the SM's whole issue
     * rate) run at a time, and the SM stays busy to the last: 40 tasks of
     * an eighth of the SM each. */
    assert_int_equal(be->ops->launch_plain(be, many, 0, 3), CORUN_OK);
    ends(be, end, 4);
    assert_near(end[3] - end[2] - NOTIFY_NS, LAUNCH_NS + 40 * t / per_sm);
    be->ops->destroy(be);
}

/* Three blocks of 8 warps (each wants 2 x 8/64 = 0.25 of the issue rate)
 * placed first; a block of 16 warps placed after them wants 0.5 and gets the
 * 0.25 they leave: half its speed alone, until they end. */
static void a_younger_block_gets_what_older_blocks_leave(void **state)
{
    const double t = 100 * US;
    corun__backend *be = one_sm_sim(CORUN_SIM_DISPATCH_FIFO);
    corun__exec *old = kernel(be, "old", 3, 256, 0, t, NULL);
    corun__exec *young = kernel(be, "young", 1, 512, 0, t, NULL);
    uint64_t end[3] = {0};

    (void)state;
    assert_int_equal(be->ops->launch_plain(be, old, 0, 1), CORUN_OK);
    assert_int_equal(be->ops->launch_plain(be, young, 0, 2), CORUN_OK);
    ends(be, end, 3);
    assert_near(end[1], LAUNCH_NS + t / G); /* the older ones as alone */
    /* speed 1 until t/2 (half its work done), then 2 */
    assert_near(end[2], LAUNCH_NS + t / 2 + (t / 2) / G);
    be->ops->destroy(be);
}

/* Four blocks of 8 warps want 4 x 0.25 = the whole issue rate: a block
 * placed after them runs only once they have ended. */
static void a_block_on_a_busy_sm_waits_for_the_older_ones(void **state)
{
    const double t = 100 * US;
    corun__backend *be = one_sm_sim(CORUN_SIM_DISPATCH_FIFO);
    corun__exec *old = kernel(be, "old", 4, 256, 0, t, NULL);
    corun__exec *young = kernel(be, "young", 1, 256, 0, t, NULL);
    uint64_t end[3] = {0};

    (void)state;
    assert_int_equal(be->ops->launch_plain(be, old, 0, 1), CORUN_OK);
    assert_int_equal(be->ops->launch_plain(be, young, 0, 2), CORUN_OK);
    ends(be, end, 3);
    assert_near(end[1], LAUNCH_NS + t / G);
    assert_near(end[2], LAUNCH_NS + 2 * t / G);
    be->ops->destroy(be);
}

/* Kernels that fill a sixteenth of the warp slots at full occupancy (one
 * warp per block, four blocks of 56 KiB) are held by latency, not issue:
 * alone or side by side, every task takes its time. */
static void latency_bound_kernels_do_not_slow_each_other(void **state)
{
    const double t = 100 * US;
    corun__backend *be = one_sm_sim(CORUN_SIM_DISPATCH_FIFO);
    uint32_t per_sm;
    corun__exec *a = kernel(be, "a", 2, 32, 56320, t, &per_sm);
    corun__exec *b = kernel(be, "b", 2, 32, 56320, t, NULL);
    uint64_t end[3] = {0};

    (void)state;
    assert_int_equal(per_sm, 4);
    assert_int_equal(be->ops->launch_plain(be, a, 0, 1), CORUN_OK);
    assert_int_equal(be->ops->launch_plain(be, b, 0, 2), CORUN_OK);
    ends(be, end, 3);
    assert_int_equal(end[1], LAUNCH_NS + 100 * US);
    assert_int_equal(end[2], LAUNCH_NS + 100 * US);
    be->ops->destroy(be);
}

/*
 * Stream priorities on a busy SM: a 300 us block and 15 blocks of 1 ms
 * (seven beside it, eight waiting), then at 100 us a high-priority LS block
 * of 100 us. The four oldest blocks use the SM's issue rate; the short one
 * ends at 150 us and the LS block takes its slot ahead of the waiting batch
 * blocks, but the seven batch blocks placed before it want more than the
 * whole issue rate: the fourth of them, which got the short block's share,
 * runs 1000 / 2 us more, and only when it ends does the LS block run (the
 * batch blocks placed meanwhile are younger). It waits for running batch
 * blocks to end, not for the queue.
 */
static void ls_under_priority_waits_for_older_batch_blocks(void **state)
{
    corun__backend *be = one_sm_sim(CORUN_SIM_DISPATCH_PRIORITY);
    corun__exec *s = kernel(be, "short", 1, 256, 0, 300 * US, NULL);
    corun__exec *l = kernel(be, "long", 15, 256, 0, 1000 * US, NULL);
    corun__exec *ls = kernel(be, "ls", 1, 256, 0, 100 * US, NULL);
    corun__bevent ev[4];
    size_t n = 99;
    uint64_t end[4] = {0};

    (void)state;
    assert_int_equal(be->ops->launch_plain(be, s, 0, 1), CORUN_OK);
    assert_int_equal(be->ops->launch_plain(be, l, 0, 2), CORUN_OK);
    assert_int_equal(be->ops->poll(be, 100 * US, ev, 4, &n), CORUN_OK);
    assert_int_equal(n, 0);
    assert_int_equal(be->ops->launch_plain(be, ls, 1, 3), CORUN_OK);
    /* by 600 us the short block has left and the LS block holds its slot */
    assert_int_equal(be->ops->poll(be, 600 * US, ev, 4, &n), CORUN_OK);
    assert_int_equal(n, 1);
    assert_int_equal(ev[0].cookie, 1);
    end[1] = ev[0].time_ns - NOTIFY_NS;
    assert_int_equal(corun__sim_sm_resident(be, 0), 8);
    ends(be, end, 4);
    assert_near(end[1], LAUNCH_NS + 300 * US / G);
    assert_near(end[3], LAUNCH_NS + 300 * US / G + 1000 * US / G + 100 * US / G);
    be->ops->destroy(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_block_alone_runs_g_times_faster),
        cmocka_unit_test(a_younger_block_gets_what_older_blocks_leave),
        cmocka_unit_test(a_block_on_a_busy_sm_waits_for_the_older_ones),
        cmocka_unit_test(latency_bound_kernels_do_not_slow_each_other),
        cmocka_unit_test(ls_under_priority_waits_for_older_batch_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
