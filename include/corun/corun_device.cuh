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
 * parameter is a corun_worker_arg; a CORUN_SHARED kernel also gets
 * `NAME__corun_ahead`, the same worker with claims made a task ahead (see
 * corun_worker_loop_ahead), and every kernel `NAME__corun_grid`, a block
 * per task that claims it as it starts (corun_grid_block). The host
 * launches a worker through libcorun,
 * which decides how many workers run, which entry, and signals them.
 *
 * The loop (corun_worker_loop) follows the protocol in corun_ctl.h. Its cost
 * per chunk: one atomicAdd on the task counter and two loads of the control
 * block by one thread, one fire-and-forget atomicAdd on the done counter, and
 * one __syncthreads. Kernels whose body uses __syncthreads or shared memory
 * also get one __syncthreads between consecutive tasks of a chunk (the block
 * boundary of the original grid implied it); pass CORUN_SHARED to ask for it.
 * A worker leaves through corun__leave, where the last worker of a direct
 * kernel's primary grid reports to the host or holds the stream, and a
 * worker of a scheduled launch that finds every task done says so in the
 * kernel's report.
 *
 * The claim is made by the block's first thread once its own warp has
 * finished the chunk, not by whichever warp finishes first: that hid the
 * claim's latency but read the signals up to a chunk early, so halts waited
 * longer (docs/decisions).
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
                  offsetof(corun_ctl, sm_lo) == 8 && offsetof(corun_ctl, sm_hi_inv) == 12 &&
                  offsetof(corun_ctl, task_cut) == 16 && offsetof(corun_ctl, nworkers) == 20,
              "corun_ctl: signal words moved; update corun__claim");
/* The anchor reads done, release and started as one 16-byte word. */
static_assert(offsetof(corun_ctl, done) % 16 == 0 &&
                  offsetof(corun_ctl, release) == offsetof(corun_ctl, done) + 8 &&
                  offsetof(corun_ctl, started) == offsetof(corun_ctl, done) + 12,
              "corun_ctl: progress words moved; update corun__anchor");

/* Per-worker state kept in shared memory rather than registers, so the loop
 * adds as few registers as possible around the body (occupancy is decided by
 * registers). Two chunk slots alternate so one barrier per chunk suffices.
 * Aligned (and so sized) to 16 bytes: the body's own __shared__ arrays may be
 * placed after it, and at an 8-byte offset the compiler can no longer use
 * 128-bit shared loads on them (docs/decisions/0002). */
struct __align__(16) corun_worker_state {
    unsigned long long first[2]; /* first task of the chunk */
    uint32_t count[2];           /* tasks in the chunk; 0 = leave */
    uint3 first_idx[2];          /* virtual blockIdx of the first task */
    uint32_t mean_ns;            /* measured task duration (leader only) */
    uint32_t ran;                /* a chunk ran here (leader only; corun__hold) */
    unsigned long long t_chunk;  /* when the current chunk started */
    unsigned long long next_hint;/* counter value after our last claim */
    uint32_t capsm;              /* SMGuard CapSM id of this worker */
    uint32_t smid;
    uint32_t smid_inv;           /* ~smid, compared with the block's sm_hi_inv */
};

/* The virtual blockIdx of task f (x fastest), with the launch's divisors. */
__device__ __forceinline__ uint3 corun__task_idx(const corun_worker_arg &wa, uint32_t f)
{
    const uint32_t q = corun_div(f, corun_divisor{wa.div_x_mul, wa.div_x_sh});
    const uint32_t z = corun_div(q, corun_divisor{wa.div_y_mul, wa.div_y_sh});
    return make_uint3(f - q * wa.grid_x, q - z * wa.grid_y, z);
}

/* Leader only: decide the next chunk and publish it in slot s. kStart: the
 * worker's first claim, where a relaunch (gen > 0) takes the task time its
 * kernel's earlier launch measured (task_ns_seed) instead of measuring one
 * task first. */
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

    /* Past every task already (its last claim went beyond them, or all were
     * preset: a kernel of one wave): nothing to claim, no round trip. */
    if (st->next_hint >= wa.tasks) {
        st->count[s] = 0;
        return;
    }
    /* The signals and the limit in two loads that travel together, so the
     * claim costs two round trips to L2 (these, then the atomic), not three:
     * halt_gen, evict_below, sm_lo, sm_hi_inv; task_cut, nworkers. (Loading
     * next with them, to skip a claim that must fail, cost the kernels of
     * short tasks far more than it saved: that line is what every claim's
     * atomic hammers.) */
    const uint4 sig = corun_ld_volatile128(&ctl->halt_gen);
    const uint4 lim = corun_ld_volatile128(&ctl->task_cut);

    if (wa.gen >= sig.x && st->capsm >= sig.y && st->smid >= sig.z && st->smid_inv >= sig.w) {
        /* limit <= tasks < 2^32 (the backend refuses larger grids), so
         * everything below that is divided fits in 32 bits. */
        const unsigned long long limit = wa.tasks - lim.x;
        const unsigned long long hint = st->next_hint;
        const uint32_t remaining = limit > hint ? (uint32_t)(limit - hint) : 0u;
        const uint32_t c = corun_chunk_size(st->mean_ns, wa.budget_ns, remaining,
                                            lim.y != 0 ? lim.y : wa.nworkers, wa.chunk_max);
        first = wa.preset + atomicAdd((unsigned long long *)&ctl->next, (unsigned long long)c);
        st->next_hint = first + c;
        if (first < limit) {
            count = (uint32_t)(limit - first < c ? limit - first : c);
        }
    }
    st->first[s] = first;
    st->count[s] = count;
    if (count > 0) {
        st->first_idx[s] = corun__task_idx(wa, (uint32_t)first);
    }
}

/* Leader only, at a worker's start: its first chunk is its preset task
 * (id < preset), nothing (its SM is outside the launch's range), or a
 * claim. */
__device__ __forceinline__ void corun__first_chunk(const corun_worker_arg &wa,
                                                   corun_worker_state *st, uint32_t id)
{
    if (st->smid < wa.sm_lo || st->smid > wa.sm_hi) {
        st->count[0] = 0;
    } else if (id < wa.preset && wa.own) {
        st->first[0] = id;
        st->count[0] = 1;
        st->first_idx[0] = corun__task_idx(wa, id);
    } else {
        corun__claim<true>(wa, st, 0);
    }
}

/* Leader only, as a worker starts: counts it; the primary grid's worker 0
 * also stamps the grid's start in its report, in host memory, where nothing
 * on the device reads it (the start kept in the control block and read by
 * the last worker cost the kernel's end microseconds on the H100). */
__device__ __forceinline__ void corun__started(const corun_worker_arg &wa, uint32_t id)
{
    atomicAdd(&wa.ctl->started, 1u);
    if (id == 0 && wa.primary != 0) {
        wa.report->t_start = corun_globaltimer();
    }
}

/* Host memory: the report's data, then its tag. A HELD report, which may
 * overwrite an earlier one, first writes its tag with count - 1 (odd:
 * being written) and fences around its data, so the host never keeps data
 * from two reports (corun__ctl_report_read). FINISHED and RELEASED, the
 * last report of a launch, need no fence: the host takes their state from
 * the tag and their numbers as hints, and a fence here would make every
 * kernel's end wait for a round trip to host memory. count is even. */
__device__ __forceinline__ void corun__report(const corun_worker_arg &wa, uint32_t state,
                                              uint32_t count, uint32_t done, uint32_t live,
                                              uint32_t task_ns, unsigned long long t_end = 0)
{
    volatile corun_report *r = wa.report;
    const bool held = state == CORUN_REPORT_HELD;
    if (held) {
        r->tag = CORUN_REPORT_TAG(wa.seq, count - 1, state);
        __threadfence_system();
    }
    r->done = done;
    r->live = live;
    r->task_ns = task_ns;
    if (!held) {
        r->t_end = t_end;
    }
    if (held) {
        __threadfence_system();
    }
    r->tag = CORUN_REPORT_TAG(wa.seq, count, state);
}

/* The primary grid's last worker while tasks remain (corun_ctl.h, direct
 * kernels): holds the stream until they are done or the host releases it,
 * reporting HELD at once, whenever the workers running change, and about
 * every 100 us while the tasks done change. Returns the final state. Not
 * inlined: its loop adds nothing to the registers held across a task body. */
static __device__ __noinline__ uint32_t corun__anchor(const corun_worker_arg wa, uint32_t done,
                                                      uint32_t task_ns)
{
    corun_ctl *const ctl = wa.ctl;
    uint32_t count = 0, last_done = ~0u, last_live = ~0u, polls = 0;

    for (;; ++polls) {
        /* done (low, high), release, started; then exited */
        const uint4 p = corun_ld_volatile128(&ctl->done);
        const uint32_t exited = corun_ld_volatile32(&ctl->exited);
        const uint32_t live = p.w - exited - wa.primary;
        done = p.x;
        if (done >= wa.tasks) {
            return CORUN_REPORT_FINISHED;
        }
        if (p.z != 0) {
            return CORUN_REPORT_RELEASED;
        }
        if (live != last_live || (done != last_done && polls >= 50)) {
            count += 2;
            corun__report(wa, CORUN_REPORT_HELD, count, done, live, task_ns);
            last_done = done;
            last_live = live;
            polls = 0;
        }
        __nanosleep(2000);
    }
}

/* Leader only, as a worker of a launch with wa.hold finds no task left or
 * is moved off its SM: holds its slot, running nothing, until the kernel's
 * tasks are done (up to the limit) or a halt tells it to leave
 * (corun_ctl.h). A worker an eviction or a narrowing moved off an SM where
 * it ran tasks holds on too: that SM's other tasks of the kernel still run,
 * and a slot freed beside them would take an LS block, which runs there far
 * slower than alone; the SM frees whole when the kernel ends. One
 * that ran nothing (ran == 0) leaves at such a signal: its SM may be clean
 * (a reservation kept from a kernel's start). Its other threads
 * wait at the barrier after it, issuing nothing. Not inlined, like the
 * anchor: its loop adds nothing to the registers held across a task body. */
static __device__ __noinline__ void corun__hold(const corun_worker_arg wa, uint32_t capsm,
                                                uint32_t smid, uint32_t ran)
{
    corun_ctl *const ctl = wa.ctl;

    if (smid < wa.sm_lo || smid > wa.sm_hi) {
        return; /* never one of its launch's SMs */
    }
    for (;;) {
        const uint4 sig = corun_ld_volatile128(&ctl->halt_gen);
        if (wa.gen < sig.x ||
            (ran == 0 && !(capsm >= sig.y && smid >= sig.z && ~smid >= sig.w))) {
            return;
        }
        const uint32_t done = corun_ld_volatile32((const uint32_t *)&ctl->done);
        if (done >= wa.tasks - corun_ld_volatile32(&ctl->task_cut)) {
            return;
        }
        __nanosleep(2000);
    }
}

/* Loads from mapped host memory, past every cache (the relay's mirror). */
__device__ __forceinline__ uint4 corun_ld_sys128(const void *p)
{
    uint4 v;
    asm volatile("ld.relaxed.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}

__device__ __forceinline__ uint32_t corun_ld_sys32(const void *p)
{
    uint32_t v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static_assert(offsetof(corun_mirror, sm_hi_inv) == 12 && offsetof(corun_mirror, over) == 16 &&
                  sizeof(corun_mirror) <= CORUN_MIRROR_STRIDE,
              "corun_mirror: the relay copies its first 16 bytes as the control block's");

/* The relay (corun_ctl.h): the first thread of the grid's first block, where
 * wa.relay_block is set. Copies the mirror's signal words into the control
 * block whenever they change (all four at its first read: the mirror is
 * never older than the block), until it has copied a halt that covers its
 * launch or the mirror says the kernel is over. Reads host memory alone,
 * back to back (its warp waits on the reads, issuing nothing: a poll is
 * their round trip, ~2 us). Not inlined, like the anchor. */
static __device__ __noinline__ void corun__relay(const corun_worker_arg wa)
{
    volatile uint32_t *const w = &wa.ctl->halt_gen;
    const corun_mirror *const mir = (const corun_mirror *)(uintptr_t)wa.relay;
    uint4 last = make_uint4(~0u, ~0u, ~0u, ~0u);

    for (;;) {
        const uint4 m = corun_ld_sys128(mir);
        if (corun_relay_over(corun_ld_sys32(&mir->over), wa.seq)) {
            return;
        }
        if (m.x != last.x) {
            w[0] = m.x;
        }
        if (m.y != last.y) {
            w[1] = m.y;
        }
        if (m.z != last.z) {
            w[2] = m.z;
        }
        if (m.w != last.w) {
            w[3] = m.w;
        }
        if (wa.gen < m.x) {
            return; /* every worker of its launch leaves */
        }
        last = m;
    }
}

/* Whether this block is its grid's relay rather than a worker: the first,
 * so that its warp is the oldest on its SM (corun_ctl.h). */
__device__ __forceinline__ bool corun__is_relay(const corun_worker_arg &wa)
{
    return wa.relay_block != 0 && blockIdx.x == 0;
}

/* This worker's id: its launch's base plus its block, past the relay. */
__device__ __forceinline__ uint32_t corun__worker_id(const corun_worker_arg &wa)
{
    return wa.base + blockIdx.x - wa.relay_block;
}

/* Adds n tasks, which every thread of this worker has finished, to done.
 * A direct kernel's grid other than the primary one fences first: the
 * primary grid's anchor lets the user's stream go on once done reaches the
 * tasks, and the work behind it must see this worker's writes. (The primary
 * grid's own writes are published by its end.) */
__device__ __forceinline__ void corun__count_done(const corun_worker_arg &wa, uint32_t n)
{
    if (wa.direct && wa.primary == 0) {
        __threadfence();
    }
    atomicAdd((unsigned long long *)&wa.ctl->done, (unsigned long long)n);
}

/* A worker of a scheduled launch (wa.report set, no primary grid) as it
 * leaves: if every task is done, it writes the kernel's report FINISHED, so
 * the host learns the end from host memory once the launch has finished,
 * without reading the control block (corun_ctl.h). The worker whose add
 * brought done to the tasks reads it here after that add, so one always
 * writes; workers leaving after it write the same. The task time is worker
 * 0's (task_ns_seed, what the host read from the block before) once it has
 * stored it, else the writer's own: the last workers to leave are the
 * slowest, whose mean may span several tasks' time. One that ran no task
 * (task_ns 0) writes nothing. Not inlined: nothing here adds to the
 * registers held across a task body. */
static __device__ __noinline__ void corun__report_end(const corun_worker_arg wa, uint32_t task_ns)
{
    const uint32_t done = corun_ld_volatile32((const uint32_t *)&wa.ctl->done);
    if (done >= wa.tasks && task_ns != 0) {
        const uint32_t seed = corun_ld_volatile32(&wa.ctl->task_ns_seed);
        corun__report(wa, CORUN_REPORT_FINISHED, 62, wa.tasks, 0, seed != 0 ? seed : task_ns);
    }
}

/* Leader only, as a worker leaves. A primary worker counts itself in done's
 * high half, with the pend tasks it has not yet added to done; the last one
 * of its grid reports, or holds the stream first (corun__anchor). Any other
 * worker counts itself in exited, and a scheduled launch's may report the
 * end (corun__report_end). */
__device__ __forceinline__ void corun__leave(const corun_worker_arg &wa, uint32_t pend,
                                             uint32_t task_ns)
{
    corun_ctl *const ctl = wa.ctl;

    if (wa.primary == 0) {
        if (pend != 0) {
            corun__count_done(wa, pend);
        }
        /* Relaxed, no fence: nothing that needs this worker's writes reads
         * `exited` (the scheduler reads done and the seed once the launch
         * has finished, and the kernel's end publishes them), and a fence
         * made the leader wait for its own last stores. */
        atomicAdd(&ctl->exited, 1u);
        if (wa.report != nullptr) {
            corun__report_end(wa, task_ns);
        }
        return;
    }
    const unsigned long long old =
        atomicAdd((unsigned long long *)&ctl->done, CORUN_PRIMARY_LEFT + pend);
    if ((uint32_t)(old >> 32) + 1u != wa.primary) {
        return;
    }
    /* Every other primary worker's adds to done came before its own count
     * in this word, so done holds all of this grid's tasks. */
    const uint32_t done = (uint32_t)old + pend;
    uint32_t state = CORUN_REPORT_FINISHED;
    if (wa.grid && task_ns == 0) {
        task_ns = corun_ld_volatile32(&ctl->task_ns_seed); /* block 0's (corun_grid_block) */
    }
    unsigned long long t_end = 0;
    if (done < wa.tasks) {
        state = corun__anchor(wa, done, task_ns);
    } else {
        t_end = corun_globaltimer(); /* the grid ran every task alone */
    }
    if (wa.relay != 0) {
        /* the kernel's relays leave; before the report, after which the
         * host may recycle the block (corun_ctl.h) */
        ((volatile corun_mirror *)(uintptr_t)wa.relay)->over = wa.seq;
    }
    corun__report(wa, state, 62, state == CORUN_REPORT_FINISHED ? wa.tasks : done, 0, task_ns,
                  t_end);
}

/*
 * The grid form (NAME__corun_grid; corun_ctl.h): a block per task, as the
 * plain kernel's. Its own task (block < preset), or one claimed unless its
 * launch is halted, or none; then it leaves, counting itself and its task
 * in one add (corun__leave). None of the worker loop's bookkeeping: no SM,
 * CapSM or chunk is kept, and only block 0 times its task. An entry of its
 * own, not a branch of the worker's: inlined there, the body's second copy
 * changed the registers and the schedule of the worker's loop.
 */
struct __align__(16) corun_grid_state {
    uint32_t task;               /* the block's task; >= tasks: none */
    uint32_t pad_;
    unsigned long long t0;       /* block 0: its task's start */
};

template <typename Body>
__device__ __forceinline__ void corun_grid_block(const corun_worker_arg wa, Body body)
{
    __shared__ corun_grid_state st;
    corun_ctl *const ctl = wa.ctl;
    const bool leader = (threadIdx.x | threadIdx.y | threadIdx.z) == 0;
    const uint32_t id = blockIdx.x;

    if (leader) {
        uint32_t f = wa.tasks; /* none */
        if (id < wa.preset) {
            f = id;
        } else if (wa.gen >= corun_ld_volatile32(&ctl->halt_gen)) {
            const unsigned long long c =
                wa.preset + atomicAdd((unsigned long long *)&ctl->next, 1ull);
            if (c < wa.tasks) {
                f = (uint32_t)c;
            }
        }
        st.task = f;
        corun__started(wa, id);
        if (id == 0) {
            st.t0 = corun_globaltimer();
        }
    }
    __syncthreads();
    const uint32_t f = st.task;
    if (f < wa.tasks) {
#ifdef CORUN_TASK_HITS
        if (leader && wa.task_hits != 0) {
            atomicAdd((uint32_t *)(uintptr_t)wa.task_hits + f, 1u);
        }
#endif
        body(corun__task_idx(wa, f), dim3(wa.grid_x, wa.grid_y, wa.grid_z));
    }
    __syncthreads(); /* done counts a task only once every thread has run it */
    if (leader) {
        uint32_t ns = 0;
        if (id == 0 && f < wa.tasks) {
            const unsigned long long dt = corun_globaltimer() - st.t0;
            ns = dt < 0xffffffffull ? (uint32_t)dt : 0xffffffffu;
            ctl->task_ns_seed = ns;
        }
        corun__leave(wa, f < wa.tasks ? 1u : 0u, ns);
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

    if (corun__is_relay(wa)) {
        if (leader) {
            corun__relay(wa);
        }
        return;
    }
    if (leader) {
        const uint32_t id = corun__worker_id(wa);
        st.capsm = id / wa.workers_per_capsm;
        st.smid = corun_smid();
        st.smid_inv = ~st.smid;
        st.mean_ns = 0;
        st.ran = 0;
        st.next_hint = wa.preset;
        corun__started(wa, id);
        corun__first_chunk(wa, &st, id);
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
            if (leader && wa.task_hits != 0) {
                atomicAdd((uint32_t *)(uintptr_t)wa.task_hits + first + i, 1u);
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
            corun__count_done(wa, count);
            st.ran = 1;
            /* 32-bit: a 64-bit division is a routine of its own */
            const unsigned long long dt = now - st.t_chunk;
            st.mean_ns = corun_chunk_ewma(st.mean_ns,
                                          (dt < 0xffffffffull ? (uint32_t)dt : 0xffffffffu) / count);
            st.t_chunk = now;
        }
    }
    if (leader) {
        if (corun__worker_id(wa) == 0 && st.mean_ns != 0) {
            /* seeds a relaunch, and tells the host which entry to use next */
            ctl->task_ns_seed = st.mean_ns;
        }
        if (wa.hold) {
            corun__hold(wa, st.capsm, st.smid, st.ran);
        }
    }
    if (wa.hold) {
        __syncthreads(); /* the whole block keeps its slot while the leader holds */
    }
    if (leader) {
        corun__leave(wa, 0, st.mean_ns);
    }
}

/*
 * The ahead entry (NAME__corun_ahead, CORUN_SHARED kernels only): one task
 * per claim, the next task's claim issued at the top of the task before it,
 * so the claim's round trip (a memory-bound load makes it long)
 * overlaps the task instead of stalling the worker between chunks. The
 * host runs a kernel through it where its last launch's tasks made chunks of
 * at most three and three fit in 9/8 of the budget (src/core/entry.h).
 *
 * At the top of each task the leader copies the signal words into shared
 * memory (cp.async: no register held across the body) and adds 1 to next's
 * low 32 bits (one result register; a 64-bit add's pair cost the transpose
 * ~1 point, its stores became branches under the 32-register cap). After the
 * task it checks the copied signals and makes the claimed task the next one:
 * it runs whatever they say, so the tasks run stay the prefix [0, done), and
 * a worker told to leave claims nothing more. Read through the copy alone, a
 * halt would wait for the rest of the task running, the task claimed with it
 * and, if the signal landed just after a copy, one more: three tasks. So a
 * halt also voids the claims (CORUN_AHEAD_VOID in next, corun_ctl.h): a claim
 * after it returns no task, and the worker leaves after the task it runs and
 * the one it claimed before the halt, two at most; nothing here tests for it,
 * the void is above every limit. The limit is read once (the host writes it
 * only while no worker runs). `done` and the task time every
 * four tasks; worker 0 stores its task time when it leaves (task_ns_seed).
 * Workers with id < wa.preset start with their own task, unclaimed: the
 * preset tasks run whatever the signals say, like claimed ones. A worker
 * outside its launch's SMs runs nothing.
 *
 * Departure from Slate and SMGuard, whose workers claim or compute their next
 * block only when the one before is done: here the claim is a task ahead, at
 * the price of a halt waiting up to two tasks instead of one chunk.
 */

/* atomicAdd(p, 1) on a 32-bit word by lane 0, its result waited for only
 * where it is used. On an address the compiler can prove warp-uniform it
 * aggregates the add over the warp (one lane adds, a shuffle hands out the
 * results) and that shuffle waits for the atomic at once, so the claim would
 * not overlap the task. The
 * address is p + %laneid * 8 * salt, salt = 1 read from shared memory by the
 * caller: with p + %laneid * 8 alone ptxas computed it once before the loop
 * and held it in two registers across every task's body. */
__device__ __forceinline__ uint32_t corun__claim1_lane0(uint32_t *p, uint32_t salt)
{
    uint32_t old;
    asm volatile("{\n\t.reg .u32 l;\n\t.reg .u64 a;\n\t"
                 "mov.u32 l, %%laneid;\n\t"
                 "mul.lo.u32 l, l, %2;\n\t"
                 "mad.wide.u32 a, l, 8, %1;\n\t"
                 "atom.global.add.u32 %0, [a], 1;\n\t}"
                 : "=r"(old)
                 : "l"(p), "r"(salt)
                 : "memory");
    return old;
}

/* next's low 32 bits (the GPU is little-endian). */
static_assert(offsetof(corun_ctl, next) % 8 == 0, "corun_ctl: next must be 8-byte aligned");
static_assert(CORUN_AHEAD_VOID > CORUN_AHEAD_MAX_TASKS, "a voided claim must be no task");

struct __align__(16) corun_ahead_state {
    uint4 sig;        /* halt_gen, evict_below, sm_lo, sm_hi, copied at a task's top */
    uint32_t slot[2]; /* the task to run next; >= lim: none */
    uint32_t lim;     /* task_limit */
    uint32_t capsm, smid;
    uint32_t pend;    /* tasks run, not yet added to done */
    uint32_t go;      /* 1: claim ahead at the next task's top */
    uint32_t mean;    /* measured task time (ns) */
    unsigned long long t0;
};

template <typename Body>
__device__ __forceinline__ void corun_worker_loop_ahead(const corun_worker_arg wa, Body body)
{
    __shared__ corun_ahead_state st;
    corun_ctl *const ctl = wa.ctl;
    uint32_t *const next_lo = (uint32_t *)&ctl->next;
    const bool leader = (threadIdx.x | threadIdx.y | threadIdx.z) == 0;

    if (corun__is_relay(wa)) {
        if (leader) {
            corun__relay(wa);
        }
        return;
    }
    if (leader) {
        const uint32_t id = corun__worker_id(wa);
        st.capsm = id / wa.workers_per_capsm;
        st.smid = corun_smid();
        st.pend = 0;
        st.mean = 0;
        corun__started(wa, id);
        const uint4 s = corun_ld_volatile128(&ctl->halt_gen);
        const uint32_t l = wa.tasks - corun_ld_volatile32(&ctl->task_cut);
        const bool here = st.smid >= wa.sm_lo && st.smid <= wa.sm_hi;
        const bool stay =
            here && wa.gen >= s.x && st.capsm >= s.y && st.smid >= s.z && ~st.smid >= s.w;
        uint32_t f = l;
        if (here && id < wa.preset && wa.own) {
            f = id; /* its own task */
        } else if (stay) {
            f = wa.preset + atomicAdd(next_lo, 1u);
        }
        st.lim = l;
        st.slot[0] = f < l ? f : l;
        st.go = stay;
        st.t0 = corun_globaltimer();
    }
    __syncthreads();

    const dim3 grid(wa.grid_x, wa.grid_y, wa.grid_z);
    uint32_t k = 0; /* tasks run */
    for (;; ++k) {
        const uint32_t f = st.slot[k & 1u];
        if (f >= st.lim) {
            break;
        }
        /* The division routine, not corun__task_idx: with the constants the
         * transpose's ahead entry ran slower (same registers; why not found). */
        const uint32_t q = f / grid.x;
        const uint3 b = make_uint3(f - q * grid.x, q % grid.y, q / grid.y);
        const uint32_t g = st.go;
        const bool ahead = leader && g != 0;
        uint32_t nx = 0;
        if (ahead) {
            const uint32_t d = (uint32_t)__cvta_generic_to_shared(&st.sig);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n\t"
                         "cp.async.commit_group;" ::"r"(d),
                         "l"(&ctl->halt_gen)
                         : "memory");
            nx = corun__claim1_lane0(next_lo, g);
        }
#ifdef CORUN_TASK_HITS
        if (leader && wa.task_hits != 0) {
            atomicAdd((uint32_t *)(uintptr_t)wa.task_hits + f, 1u);
        }
#endif
        body(b, grid);
        if (leader) {
            const uint32_t l = st.lim;
            uint32_t n = l;
            if (ahead) {
                asm volatile("cp.async.wait_all;" ::: "memory");
                const uint4 s = st.sig;
                st.go = wa.gen >= s.x && st.capsm >= s.y && st.smid >= s.z && ~st.smid >= s.w;
                nx += wa.preset;
                n = nx < l ? nx : l;
            }
            st.slot[(k + 1) & 1u] = n;
            /* Counts the task before this one, which every thread finished
             * before the last barrier; this one may still run in other
             * warps. (Counted by another thread, or after the barrier, it
             * made ptxas split backprop's loads in two rounds: 0016.) */
            if (k > 0 && ++st.pend == 4) {
                const unsigned long long now = corun_globaltimer();
                corun__count_done(wa, 4);
                st.mean = corun_chunk_ewma(st.mean, (now - st.t0) / 4);
                st.t0 = now;
                st.pend = 0;
            }
        }
        __syncthreads();
    }
    if (leader) {
        st.pend += k > 0 ? 1u : 0u; /* the last task run, not yet counted */
        if (st.mean == 0 && st.pend != 0) {
            /* fewer than four tasks ran: time those, so the host learns the
             * task time of a short kernel too */
            st.mean = (uint32_t)((corun_globaltimer() - st.t0) / st.pend);
        }
        if (corun__worker_id(wa) == 0 && st.mean != 0) {
            ctl->task_ns_seed = st.mean;
        }
        if (wa.hold) {
            /* its own tasks count before it holds: the hold waits for done */
            if (st.pend != 0) {
                corun__count_done(wa, st.pend);
                st.pend = 0;
            }
            corun__hold(wa, st.capsm, st.smid, k > 0 ? 1u : 0u);
        }
    }
    if (wa.hold) {
        __syncthreads();
    }
    if (leader) {
        corun__leave(wa, st.pend, st.mean);
    }
}

/* NAME__corun_ahead, for CORUN_SHARED kernels only (KIND is pasted: the
 * macro's argument as written, or its value when CORUN_KERNELS passed it on). */
#define CORUN__AHEAD_ENTRY(NAME, PARAMS, ARGS, ATTRS)                                         \
    extern "C" __global__ void ATTRS NAME##__corun_ahead(const corun_worker_arg corun_wa,    \
                                                         CORUN__UNPAREN PARAMS)               \
    {                                                                                         \
        corun_worker_loop_ahead(corun_wa, [&](const uint3 corun_b, const dim3 corun_g) {     \
            NAME##__corun_body(CORUN__UNPAREN ARGS, corun_b, corun_g);                        \
        });                                                                                   \
    }
#define CORUN__AHEAD_CORUN_SHARED(NAME, PARAMS, ARGS, ATTRS) CORUN__AHEAD_ENTRY(NAME, PARAMS, ARGS, ATTRS)
#define CORUN__AHEAD_1(NAME, PARAMS, ARGS, ATTRS) CORUN__AHEAD_ENTRY(NAME, PARAMS, ARGS, ATTRS)
#define CORUN__AHEAD_CORUN_PLAIN(NAME, PARAMS, ARGS, ATTRS)
#define CORUN__AHEAD_0(NAME, PARAMS, ARGS, ATTRS)
#define CORUN__AHEAD(KIND, NAME, PARAMS, ARGS, ATTRS) CORUN__AHEAD_##KIND(NAME, PARAMS, ARGS, ATTRS)

/* Declares the body of kernel NAME with its parameter list PARAMS. The body's
 * braces follow the macro. */
#define CORUN_BODY(NAME, PARAMS)                                                              \
    static __device__ __forceinline__ void NAME##__corun_body(CORUN__UNPAREN PARAMS,         \
                                                              const uint3 blockIdx,          \
                                                              const dim3 gridDim)

/* Defines the plain kernel NAME, the worker kernel NAME##__corun (and, for
 * CORUN_SHARED, NAME##__corun_ahead) and the grid form NAME##__corun_grid.
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
    }                                                                                         \
    CORUN__AHEAD(KIND, NAME, PARAMS, ARGS, ATTRS)                                            \
    extern "C" __global__ void ATTRS NAME##__corun_grid(const corun_worker_arg corun_wa,     \
                                                        CORUN__UNPAREN PARAMS)                \
    {                                                                                         \
        corun_grid_block(corun_wa, [&](const uint3 corun_b, const dim3 corun_g) {            \
            NAME##__corun_body(CORUN__UNPAREN ARGS, corun_b, corun_g);                        \
        });                                                                                   \
    }

#define CORUN_KERNELS(NAME, PARAMS, ARGS, KIND) CORUN_KERNELS_EX(NAME, PARAMS, ARGS, KIND, )

#define CORUN__UNPAREN(...) __VA_ARGS__

#endif /* CORUN_DEVICE_CUH */
