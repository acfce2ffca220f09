/*
 * sim_share.c — SMs shared between blocks: how much of its SM's issue rate
 * each running block-task gets, and so how fast it runs.
 *
 * The model. A kernel's task_ns is a task's duration when the kernel runs
 * alone at full occupancy (speed 1). Of that time a share c is compute,
 * bound by the SM's issue rate (the kernel's declared `compute`, else
 * 1 - mem_frac: what the GPU's synthetic kernel spends in its FMA chain);
 * the rest is memory-bound (mem_frac, slowed by DRAM contention in
 * sim_exec.c) or waiting on latency, and does not depend on the SM. At
 * full occupancy a block's compute uses issue_k = c x warps per block /
 * warps per SM of the SM's issue rate. When its block gets x times that
 * (share = x issue_k), a task runs at
 *
 *     speed = 1 / (c / x + 1 - c)
 *
 * (0 when x = 0). A block's warps cannot use more than issue_max_k =
 * max(1, g x occupancy_k) times issue_k (occupancy_k: the kernel's share of
 * the SM's warp slots at full occupancy): g, block_speedup, is how much
 * faster a block's compute runs with an SM to itself than at full
 * occupancy (dependent instructions, latency), and a kernel that leaves
 * warp slots empty at full occupancy is already held by latency there.
 * The SM's issue rate (1) goes to its running tasks oldest block first,
 * as the warp schedulers favour older warps (greedy-then-oldest): walking
 * the blocks in the order they were placed,
 *
 *     share_b = min(issue_max_k x issue_k, what older blocks left),
 *
 * so a block placed on a busy SM gets only what the blocks before it cannot
 * use, and waits for them to end when they can use it all. Blocks placed in
 * the same instant (a grid's first wave) are served in dispatch order.
 * DRAM contention multiplies in on the kernel's virtual clock (a task
 * advances at speed x rate_k; speed is taken without contention, a
 * simplification where both act at once).
 *
 * Consequences: an all-compute kernel (c = 1) alone at full occupancy keeps
 * its throughput, its oldest blocks on an SM running first when g > 1; with
 * c < 1 its tasks leave 1 - c of the issue rate unused at speed 1, which
 * its oldest blocks take, so it runs a little faster than task_ns (about
 * 5 % for c = 0.8: the GPU overlaps memory waits with other warps'
 * compute the same way); a block with an SM to itself runs up to
 * 1 / (c / g + 1 - c) faster; kernels slow each other only where their blocks together want
 * more than an SM's issue rate, and then the younger blocks lose; kernels
 * with little compute (memory-bound, or waiting) neither slow others nor
 * speed up. With g = 1 one kernel's blocks always run at speed 1.
 *
 * g comes from the settings (sim_block_speedup): on the H200 the LS kernel
 * of bench/scenarios/ls-batch.json runs a wave of its 100 us tasks in ~80 us
 * at eight blocks per SM and in ~20 us at one, so g = 4 (docs/decisions/0044;
 * 0021 had 1.9 from an H100 measurement that included a sleeping waiter).
 * Applied to the compute share alone, it runs that kernel alone in 40 us.
 *
 * Cost: an SM's shares are recomputed only when its running tasks changed,
 * once per instant, in O(blocks on the SM); a task whose speed did not
 * change is not touched, so a run in which every block keeps speed 1 is
 * exactly the integer-time run of a simulator without this model.
 */
#include "backends/sim/sim_int.h"

/* Shares below this are none: what the blocks of an SM leave over after
 * rounding. */
#define SHARE_EPS 1e-9

void corun__sim_share_kernel(const corun__sim *s, corun__exec *k)
{
    const double slots = (double)k->warps / s->max_warps;
    const double g = s->opts.block_speedup * k->per_sm * slots;
    double c = k->spec.compute > 0 ? k->spec.compute : 1 - k->spec.mem_frac;

    k->compute = c < 1 ? c : 1;
    k->issue = k->compute * slots;
    k->issue_max = g > 1 ? g : 1;
}

/* A task's speed when its block gets x times the issue rate it uses at
 * full occupancy. */
static double speed_at(const corun__exec *k, double x)
{
    if (x == 1) {
        return 1; /* exact, for integer-time runs */
    }
    return x > 0 ? 1 / (k->compute / x + 1 - k->compute) : 0;
}

void corun__sim_share_link(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    corun__sim_sm *m = &s->sm[blk->sm];

    blk->sm_prev = m->tail;
    blk->sm_next = CORUN_SIM_NO_BLOCK;
    if (m->tail != CORUN_SIM_NO_BLOCK) {
        s->blocks[m->tail].sm_next = b;
    } else {
        m->head = b;
    }
    m->tail = b;
    blk->speed = 0;
    blk->hpos = CORUN_SIM_NO_BLOCK;
}

void corun__sim_share_unlink(corun__sim *s, uint32_t b)
{
    const corun__sim_block *blk = &s->blocks[b];
    corun__sim_sm *m = &s->sm[blk->sm];

    if (blk->sm_prev != CORUN_SIM_NO_BLOCK) {
        s->blocks[blk->sm_prev].sm_next = blk->sm_next;
    } else {
        m->head = blk->sm_next;
    }
    if (blk->sm_next != CORUN_SIM_NO_BLOCK) {
        s->blocks[blk->sm_next].sm_prev = blk->sm_prev;
    } else {
        m->tail = blk->sm_prev;
    }
}

void corun__sim_share_dirty(corun__sim *s, uint32_t j)
{
    if (!s->sm[j].dirty) {
        s->sm[j].dirty = true;
        s->dirty[s->ndirty++] = j;
    }
}

/* Gives SM j's issue rate to its running tasks, oldest block first. */
static void share_sm(corun__sim *s, uint32_t j)
{
    double left = 1.0;
    uint32_t b;

    for (b = s->sm[j].head; b != CORUN_SIM_NO_BLOCK; b = s->blocks[b].sm_next) {
        const corun__sim_block *blk = &s->blocks[b];
        const corun__exec *k = blk->l->k;
        const double want = k->issue_max * k->issue;
        double x;

        if (blk->hpos == CORUN_SIM_NO_BLOCK) {
            continue; /* no task running: claiming, or holding a stream */
        }
        if (k->issue <= 0) {
            x = 1; /* no compute: the SM does not hold it */
        } else if (left >= want - SHARE_EPS) {
            x = k->issue_max;
            left = left > want ? left - want : 0;
        } else if (left > SHARE_EPS) {
            x = left / k->issue;
            left = 0;
        } else {
            x = 0;
        }
        if (speed_at(k, x) != blk->speed) {
            corun__sim_task_speed(s, b, speed_at(k, x));
        }
    }
}

void corun__sim_share_update(corun__sim *s)
{
    uint32_t i;

    for (i = 0; i < s->ndirty; i++) {
        const uint32_t j = s->dirty[i];
        s->sm[j].dirty = false;
        share_sm(s, j);
    }
    s->ndirty = 0;
}
