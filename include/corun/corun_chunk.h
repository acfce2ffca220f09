/*
 * corun_chunk.h — how many block-tasks a worker claims at once.
 *
 * Compiled both for the host (the simulator runs this exact policy) and for
 * the device (the worker loop). No per-kernel tuning: the size comes from the
 * latency budget and the task duration the worker has measured so far.
 *
 *  - First claim: one task, to measure -- except in a relaunch (a resumed
 *    kernel), whose workers start from the task time the halted launch
 *    measured (corun_ctl.task_ns_seed; the caller passes it as task_ns):
 *    measuring again there kept the chunks too small for several claims.
 *    Fresh launches still measure (docs/decisions).
 *  - Then: as many tasks as fit in the budget, so a signal is seen at most one
 *    budget (or one task, if a task is longer) after it lands.
 *  - Near the end: no more than remaining / (2 * workers), so the last chunks
 *    are small and workers finish together (guided self-scheduling).
 *  - Not one task per claim: a memory-bound tiled kernel would like it, but
 *    claiming every task ahead cost the short-task kernels far more; the
 *    ahead entry (corun_device.cuh) is a separate kernel, chosen per kernel
 *    by the host (src/core/entry.h).
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

/* Division by a divisor fixed for a launch (the grid's width and height),
 * as a multiply-high and two shifts (Granlund and Montgomery, "Division by
 * invariant integers using multiplication", 1994, fig. 4.1): the host
 * computes the constants once per launch; a worker splits a task number
 * into its block index without the ~20-instruction division routine. Exact
 * for every 32-bit n and every d >= 1. */
typedef struct corun_divisor {
    uint32_t mul;   /* m' = floor(2^32 * (2^l - d) / d) + 1, l = ceil(log2 d) */
    uint32_t sh;    /* min(l, 1) | max(l - 1, 0) << 8 */
} corun_divisor;

CORUN_HD corun_divisor corun_divisor_of(uint32_t d)
{
    corun_divisor v;
    uint32_t l = 0;

    if (d == 0) {
        d = 1; /* no launch divides by 0; keep the constants defined */
    }
    while (l < 32 && (1ull << l) < d) {
        ++l;
    }
    v.mul = (uint32_t)((((1ull << l) - d) << 32) / d + 1);
    v.sh = (l < 1 ? l : 1u) | ((l > 0 ? l - 1 : 0u) << 8);
    return v;
}

CORUN_HD uint32_t corun_div(uint32_t n, corun_divisor v)
{
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(v.mul, n);
#else
    const uint32_t t = (uint32_t)(((uint64_t)v.mul * n) >> 32);
#endif
    return (t + ((n - t) >> (v.sh & 0xffu))) >> (v.sh >> 8);
}

/* Tasks below this may run through the ahead entry: its claims add to next's
 * low 32 bits, which must not wrap with every worker's last claim added. */
#define CORUN_AHEAD_MAX_TASKS 0x7fffffffull

/* The largest task space a corun kernel may have: task indices are 32-bit. */
#define CORUN_MAX_TASKS 0xffffffffull

#endif /* CORUN_CHUNK_H */
