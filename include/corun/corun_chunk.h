/*
 * corun_chunk.h — how many block-tasks a worker claims at once.
 *
 * Compiled both for the host (the simulator runs this exact policy) and for
 * the device (the worker loop). No per-kernel tuning: the size comes from the
 * latency budget and the task duration the worker has measured so far.
 *
 *  - First claim: one task, to measure -- except in a relaunch (a resumed
 *    kernel), whose workers start from the task time the halted launch
 *    measured (corun_ctl.task_ns_seed; the caller passes it as task_ns).
 *    Measuring again there cost the H100 ~8 us per resume: the first
 *    measurement includes a claim, so chunks stay too small for several
 *    claims (bench/results/h100-2026-11-22-seed-relaunch.txt). Fresh launches
 *    still measure: seeding them from the previous launch, with every worker
 *    storing its time at exit, cost 1-2 % (h100-2026-11-21-seed-ab.txt).
 *  - Then: as many tasks as fit in the budget, so a signal is seen at most one
 *    budget (or one task, if a task is longer) after it lands.
 *  - Near the end: no more than remaining / (2 * workers), so the last chunks
 *    are small and workers finish together (guided self-scheduling).
 *  - Not one task per claim: a memory-bound tiled kernel would like it
 *    (transpose, bare persistent loop with the claim hidden: +1.9..2.6 %
 *    against +3.3..4.6 % with chunks of 3), but claiming every task ahead
 *    cost the short-task kernels far more (reduce -14 -> +12 % on the H100,
 *    bench/results/h100-2026-11-22-transpose-floor.txt), and claiming one
 *    task ahead only where three fit in the budget left transpose no better
 *    (h100-2026-11-22-la-timeline.txt), also with the leader's work moved
 *    after the barrier (h100-2026-11-22-la2.txt).
 */
#ifndef CORUN_CHUNK_H
#define CORUN_CHUNK_H

#include <stdint.h>

#if defined(__CUDACC__)
#define CORUN_HD __host__ __device__ __forceinline__
#else
#define CORUN_HD static inline
#endif

/* task_ns: measured mean task duration (0 = nothing measured yet);
 * remaining: tasks not yet claimed; nworkers: workers sharing them.
 * All arithmetic is 32-bit on purpose: 64-bit division on the GPU expands to
 * a routine whose registers would be added to every worker kernel and could
 * cost it an occupancy slot. */
CORUN_HD uint32_t corun_chunk_size(uint32_t task_ns, uint32_t budget_ns, uint32_t remaining,
                                   uint32_t nworkers, uint32_t chunk_max)
{
    uint32_t c = 1;
    uint32_t tail;

    if (task_ns > 0) {
        c = budget_ns / task_ns;
    }
    if (nworkers == 0) {
        nworkers = 1;
    }
    tail = remaining / (nworkers > 0x7fffffffu ? 0xffffffffu : 2u * nworkers);
    if (c > tail) {
        c = tail;
    }
    if (c > chunk_max) {
        c = chunk_max;
    }
    if (c < 1) {
        c = 1;
    }
    return c;
}

/* Exponentially weighted mean of the task duration, weight 1/4 on the new
 * sample; the first sample is taken as is. Saturates at 2^32-1 ns. */
CORUN_HD uint32_t corun_chunk_ewma(uint32_t mean_ns, uint64_t sample_ns)
{
    uint64_t m;

    if (sample_ns > 0xffffffffull) {
        sample_ns = 0xffffffffull;
    }
    if (mean_ns == 0) {
        return sample_ns > 0 ? (uint32_t)sample_ns : 1u;
    }
    m = (3ull * mean_ns + sample_ns + 2) / 4;
    return (uint32_t)m;
}

/* Whether a kernel's next launch runs its ahead entry (corun_device.cuh:
 * one task per claim, each claim issued while the task before it runs), from
 * the task time its last launch measured (task_ns, 0 = none) and whether that
 * launch ran the ahead entry. Three tasks must fit in the budget, give or
 * take an eighth: the time a chunked launch measures includes its claims'
 * share (~0.5 us of the H100 transpose's 3.2-3.4 us), which the ahead entry
 * does not pay, and a bound that tight made the transpose enter on some
 * launches and not others. A halt there waits for two tasks at most (the
 * void, corun_ctl.h), so within 3/4 of the budget. It
 * is entered where a chunk would hold at most three tasks, as there one
 * claim's round trip (1.5-1.9 us on the H100 under a memory-bound load) is
 * paid every three tasks or fewer, and hiding it was worth 2-3 points to the
 * transpose (bench/results/h100-2026-11-22-ahead-ab.txt); with four or more
 * a chunk pays it rarely enough, and a claim per task costs short-task
 * kernels more than it saves (reduce -14 -> +12 %, h100-2026-11-22-
 * transpose-floor.txt). It is left once tasks are shorter than a fifth of the
 * budget, so a task time near the edge does not switch entries at every
 * launch. */
CORUN_HD int corun_ahead_wanted(uint32_t task_ns, uint32_t budget_ns, int was_ahead)
{
    const uint64_t t = task_ns, b = budget_ns;

    return t != 0 && 24 * t <= 9 * b && (was_ahead ? 5 * t > b : 4 * t > b);
}

/* What a kernel's finished launches say about its entry, kept per kernel
 * (and per budget) by whoever launches it: corun_ahead_choose decides a
 * launch, corun_ahead_learn takes in what a finished one measured.
 *
 * corun_ahead_wanted alone switched entries at every launch where a kernel's
 * chunked task time (its claims' share included) says "enter" and its ahead
 * task time (claims hidden, or waited for where a task is shorter than a
 * claim's round trip) says "leave": the H100 reduce at budget 5 us, +11.8 %
 * (bench/results/h100-2026-11-22-1f47499-check/). The two times measure
 * different things, so they are not compared with each other: once a
 * kernel has left the ahead entry, its next CORUN_AHEAD_BAR launches do not
 * enter it again on a chunked time within a quarter of the one it was
 * entered on; outside that band its tasks have changed and the rule alone
 * decides. The bar runs out so that one slow ahead launch (a co-runner
 * taking memory bandwidth) does not keep a kernel out for good. */
#define CORUN_AHEAD_BAR 16u
typedef struct corun_ahead_memo {
    uint32_t task_ns;    /* task time the last finished launch measured (0 = none) */
    uint32_t entered_ns; /* the chunked task time the ahead entry was last entered on */
    uint32_t left_ns;    /* entered_ns of the ahead run last left */
    uint32_t barred;     /* launches still kept out within a quarter of left_ns */
    uint32_t ran_ahead;  /* the last finished launch ran the ahead entry */
} corun_ahead_memo;

/* Whether the next launch runs the ahead entry (the caller checked it has
 * one that may run, and the setting). */
CORUN_HD int corun_ahead_choose(corun_ahead_memo *m, uint32_t budget_ns)
{
    const uint64_t t = m->task_ns, l = m->left_ns;

    if (!corun_ahead_wanted(m->task_ns, budget_ns, (int)m->ran_ahead)) {
        return 0;
    }
    if (!m->ran_ahead) {
        if (m->barred > 0 && 5 * t >= 4 * l && 4 * t <= 5 * l) {
            m->barred--;
            return 0;
        }
        m->entered_ns = m->task_ns;
        m->barred = 0;
    }
    return 1;
}

/* A launch finished having measured task_ns (0: nothing, ignored). */
CORUN_HD void corun_ahead_learn(corun_ahead_memo *m, uint32_t task_ns, int ran_ahead,
                                uint32_t budget_ns)
{
    if (task_ns == 0) {
        return;
    }
    if (ran_ahead && !corun_ahead_wanted(task_ns, budget_ns, 1) && m->entered_ns != 0) {
        m->left_ns = m->entered_ns;
        m->barred = CORUN_AHEAD_BAR;
    }
    m->task_ns = task_ns;
    m->ran_ahead = ran_ahead != 0;
}

/* Tasks below this may run through the ahead entry: its claims add to next's
 * low 32 bits, which must not wrap with every worker's last claim added. */
#define CORUN_AHEAD_MAX_TASKS 0x7fffffffull

/* The largest task space a corun kernel may have: task indices are 32-bit. */
#define CORUN_MAX_TASKS 0xffffffffull

#endif /* CORUN_CHUNK_H */
