/*
 * corun_device.cuh — turns a kernel body into persistent, preemptible,
 * resizable workers.
 *
 * A corun kernel is written (or emitted by corun-cc) as a body function whose
 * last two parameters are named blockIdx and gridDim; inside the body they
 * shadow the built-ins, so the original text runs unchanged on a *virtual*
 * block index. `return` ends that block-task only; __syncthreads and
 * __shared__ keep their meaning because a worker runs one task at a time with
 * all its threads.
 *
 *   CORUN_BODY(vadd, (const float *a, const float *b, float *c, int n))
 *   {
 *       int i = blockIdx.x * blockDim.x + threadIdx.x;
 *       if (i >= n) return;
 *       c[i] = a[i] + b[i];
 *   }
 *   CORUN_KERNELS(vadd, (const float *a, const float *b, float *c, int n), (a, b, c, n))
 *
 * defines the body, the plain kernel `vadd` (the original, for baselines and
 * for occupancy checks) and the worker kernel `vadd__corun` whose first
 * parameter is a corun_worker_arg. The host launches the worker through
 * libcorun, which decides how many workers run and signals them.
 *
 * The loop (corun_worker_loop) follows the protocol in corun_ctl.h. Its cost
 * per chunk: one atomicAdd on the task counter and two loads of the control
 * block by one thread, one fire-and-forget atomicAdd on the done counter, and
 * one __syncthreads. Kernels whose body uses __syncthreads or shared memory
 * also get one __syncthreads between consecutive tasks of a chunk (the block
 * boundary of the original grid implied it); pass CORUN_SHARED to ask for it.
 *
 * The claim is made by the block's first thread once its own warp has
 * finished the chunk, not by whichever warp finishes first: that hid the
 * claim's latency (Black-Scholes +2.3 -> +0.7 % on the H100) but read the
 * signals up to a chunk early, and the halt with 2 us tasks went from 19.4 to
 * 22.3 us (bench/results/h100-2026-11-22-claim-ab.txt).
 *
 * Departures from the papers, deliberately:
 *  - SMGuard's Algorithm 2 assigns each worker a static range of tasks and
 *    remaps the ranges of evicted CapSMs to the survivors. Here all workers
 *    claim from one counter (Slate's slateIdx), so eviction needs no remapping
 *    and a resumed kernel simply continues from the counter.
 *  - FLEP tunes the amortising factor L offline per kernel; here the chunk
 *    size follows the measured task time and a latency budget
 *    (corun_chunk.h), so no kernel is tuned by hand.
 */
#ifndef CORUN_DEVICE_CUH
#define CORUN_DEVICE_CUH

#include <stddef.h>
#include <stdint.h>

#include "corun/corun_chunk.h"
#include "corun/corun_ctl.h"

#define CORUN_PLAIN 0
#define CORUN_SHARED 1

/* The SM this thread runs on. */
__device__ __forceinline__ uint32_t corun_smid(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

/* The GPU's nanosecond clock (same on every SM). */
__device__ __forceinline__ uint64_t corun_globaltimer(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ uint32_t corun_ld_volatile32(const uint32_t *p)
{
    return *(const volatile uint32_t *)p;
}

/* Four consecutive 32-bit words (16-byte aligned) in one volatile load. */
__device__ __forceinline__ uint4 corun_ld_volatile128(const void *p)
{
    uint4 v;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}

/* The claim reads the control block's first 32 bytes as two 16-byte words. */
static_assert(offsetof(corun_ctl, halt_gen) == 0 && offsetof(corun_ctl, evict_below) == 4 &&
                  offsetof(corun_ctl, sm_lo) == 8 && offsetof(corun_ctl, sm_hi) == 12 &&
                  offsetof(corun_ctl, task_limit) == 16 && offsetof(corun_ctl, budget_ns) == 24 &&
                  offsetof(corun_ctl, nworkers) == 28,
              "corun_ctl: signal words moved; update corun__claim");

/* Per-worker state kept in shared memory rather than registers, so the loop
 * adds as few registers as possible around the body (occupancy is decided by
 * registers). Two chunk slots alternate so one barrier per chunk suffices.
 * Aligned (and so sized) to 16 bytes: the body's own __shared__ arrays may be
 * placed after it, and at an 8-byte offset the compiler can no longer use
 * 128-bit shared loads on them (matmul's tiles lost LDS.128 that way, 3.5 %). */
struct __align__(16) corun_worker_state {
    unsigned long long first[2]; /* first task of the chunk */
    uint32_t count[2];           /* tasks in the chunk; 0 = leave */
    uint3 first_idx[2];          /* virtual blockIdx of the first task */
    uint32_t mean_ns;            /* measured task duration (leader only) */
    unsigned long long t_chunk;  /* when the current chunk started */
    unsigned long long next_hint;/* counter value after our last claim */
    uint32_t capsm;              /* SMGuard CapSM id of this worker */
    uint32_t smid;
};

/* Leader only: decide the next chunk and publish it in slot s. kStart: the
 * worker's first claim, where a relaunch (gen > 0) takes the task time its
 * kernel's earlier launch measured (task_ns_seed, loaded with the signals so
 * it costs no round trip) instead of measuring one task first. */
template <bool kStart>
__device__ __forceinline__ void corun__claim(const corun_worker_arg &wa, corun_worker_state *st,
                                             int s)
{
    corun_ctl *const ctl = wa.ctl;
    uint32_t count = 0;
    unsigned long long first = 0;

    if (kStart && wa.gen > 0) {
        st->mean_ns = corun_ld_volatile32(&ctl->task_ns_seed);
    }

    /* The signals and the limit in two loads that travel together, so the
     * claim costs two round trips to L2 (these, then the atomic), not three:
     * halt_gen, evict_below, sm_lo, sm_hi; task_limit, budget_ns, nworkers. */
    const uint4 sig = corun_ld_volatile128(&ctl->halt_gen);
    const uint4 lim = corun_ld_volatile128(&ctl->task_limit);

    if (wa.gen >= sig.x && st->capsm >= sig.y && st->smid >= sig.z && st->smid <= sig.w) {
        /* limit <= tasks < 2^32 (the backend refuses larger grids), so
         * everything below that is divided fits in 32 bits. */
        const unsigned long long limit = ((unsigned long long)lim.y << 32) | lim.x;
        const unsigned long long hint = st->next_hint;
        const uint32_t remaining = limit > hint ? (uint32_t)(limit - hint) : 0u;
        const uint32_t c = corun_chunk_size(st->mean_ns, lim.z, remaining, lim.w, ctl->chunk_max);
        first = atomicAdd((unsigned long long *)&ctl->next, (unsigned long long)c);
        st->next_hint = first + c;
        if (first < limit) {
            count = (uint32_t)(limit - first < c ? limit - first : c);
        }
    } else if (wa.base + blockIdx.x == 0 && st->mean_ns != 0) {
        ctl->task_ns_seed = st->mean_ns; /* leaving on a signal: seed the relaunch */
    }
    st->first[s] = first;
    st->count[s] = count;
    if (count > 0) {
        const uint32_t f = (uint32_t)first;
        const uint32_t gx = wa.grid_x;
        const uint32_t gy = wa.grid_y;
        const uint32_t q = f / gx;
        st->first_idx[s] = make_uint3(f - q * gx, q % gy, q / gy);
    }
}

/*
 * Run block-tasks until the kernel is finished or a signal tells this worker
 * to leave. body(blockIdx, gridDim) runs one task with all threads of the
 * block. Every task this worker claims runs to completion before it leaves;
 * the done counter is updated only after a barrier, so it never counts a task
 * some thread is still running.
 */
template <int kShared, typename Body>
__device__ __forceinline__ void corun_worker_loop(const corun_worker_arg wa, Body body)
{
    __shared__ corun_worker_state st;
    corun_ctl *const ctl = wa.ctl;
    const bool leader = (threadIdx.x | threadIdx.y | threadIdx.z) == 0;

    if (leader) {
        st.capsm = (wa.base + blockIdx.x) / wa.workers_per_capsm;
        st.smid = corun_smid();
        st.mean_ns = 0;
        st.next_hint = 0;
        atomicAdd(&ctl->started, 1u);
        /* A start without this claim (the host setting next and worker w
         * running task w unclaimed) was worth 0.1-0.4 points to the H100
         * transpose and moved three other kernels by more, both ways,
         * through their code (bench/results/h100-2026-11-22-preset-ab.txt). */
        corun__claim<true>(wa, &st, 0);
        st.t_chunk = corun_globaltimer();
    }
    __syncthreads();

    const dim3 grid(wa.grid_x, wa.grid_y, wa.grid_z);
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k & 1u);
        const uint32_t count = st.count[s];
        if (count == 0) {
            break;
        }
        uint3 b = st.first_idx[s];
#ifdef CORUN_TASK_HITS
        const unsigned long long first = st.first[s];
#endif
        for (uint32_t i = 0; i < count; ++i) {
            if (kShared && i > 0) {
                __syncthreads();
            }
#ifdef CORUN_TASK_HITS
            if (leader && ctl->task_hits != 0) {
                atomicAdd((uint32_t *)(uintptr_t)ctl->task_hits + first + i, 1u);
            }
#endif
            body(b, grid);
            if (++b.x == grid.x) {
                b.x = 0;
                if (++b.y == grid.y) {
                    b.y = 0;
                    ++b.z;
                }
            }
        }
        if (leader) {
            corun__claim<false>(wa, &st, s ^ 1);
        }
        __syncthreads();
        /* Every thread has finished chunk k: count it, and time it. */
        if (leader) {
            const unsigned long long now = corun_globaltimer();
            atomicAdd((unsigned long long *)&ctl->done, (unsigned long long)count);
            st.mean_ns = corun_chunk_ewma(st.mean_ns, (now - st.t_chunk) / count);
            st.t_chunk = now;
        }
    }
    if (leader) {
        /* Leaving: a relaxed add, no fence. Nothing that needs this worker's
         * writes reads `exited`: the scheduler reads done and the seed only
         * once the launch has finished, and the kernel's end publishes them.
         * A fence here (a release add since 8f480b5, __threadfence before it)
         * made the leader wait for its own last stores before leaving; without
         * it an empty launch ends ~1 us sooner on the H100 and the halt of the
         * short-task kernels 0.5-1.3 us sooner, in every pair of a same-run
         * A/B (bench/results/h100-2026-11-22-fixed-cost.txt). */
        atomicAdd(&ctl->exited, 1u);
    }
}

/* Declares the body of kernel NAME with its parameter list PARAMS. The body's
 * braces follow the macro. */
#define CORUN_BODY(NAME, PARAMS)                                                              \
    static __device__ __forceinline__ void NAME##__corun_body(CORUN__UNPAREN PARAMS,         \
                                                              const uint3 blockIdx,          \
                                                              const dim3 gridDim)

/* Defines the plain kernel NAME and the worker kernel NAME##__corun.
 * ARGS names the parameters in order; KIND is CORUN_PLAIN or CORUN_SHARED;
 * ATTRS are extra declaration attributes for the worker (for example
 * __launch_bounds__(256, 8) or __maxnreg__(32) to pin its occupancy). */
#define CORUN_KERNELS_EX(NAME, PARAMS, ARGS, KIND, ATTRS)                                    \
    extern "C" __global__ void NAME(CORUN__UNPAREN PARAMS)                                   \
    {                                                                                         \
        NAME##__corun_body(CORUN__UNPAREN ARGS, blockIdx, gridDim);                           \
    }                                                                                         \
    extern "C" __global__ void ATTRS NAME##__corun(const corun_worker_arg corun_wa,          \
                                                   CORUN__UNPAREN PARAMS)                     \
    {                                                                                         \
        corun_worker_loop<KIND>(corun_wa, [&](const uint3 corun_b, const dim3 corun_g) {     \
            NAME##__corun_body(CORUN__UNPAREN ARGS, corun_b, corun_g);                        \
        });                                                                                   \
    }

#define CORUN_KERNELS(NAME, PARAMS, ARGS, KIND) CORUN_KERNELS_EX(NAME, PARAMS, ARGS, KIND, )

#define CORUN__UNPAREN(...) __VA_ARGS__

#endif /* CORUN_DEVICE_CUH */
