/*
 * corun_ctl.h — the control block of one corun kernel, shared by the host
 * (which signals) and the device workers (which obey and count). Plain C,
 * no CUDA header: the CUDA backend, the device header and the simulator all
 * read this one definition.
 *
 * Protocol, in one place:
 *  - Workers claim block-tasks in chunks with atomicAdd(&next, c); a chunk
 *    is claimed only while none of the signals below tells the worker to
 *    leave, and every claimed task below task_limit is run to the end.
 *  - Between chunks a worker leaves if its launch generation < halt_gen
 *    (temporal preemption), if its CapSM id < evict_below (SMGuard eviction),
 *    if its SM is outside [sm_lo, sm_hi] (spatial binding), or if the next
 *    claim starts at or beyond task_limit (epoch quota).
 *  - So the tasks run form a prefix [0, done) of the task space once every
 *    launch of the kernel has finished (the kernel's end, not `exited`,
 *    publishes the last adds to done). A resumed kernel therefore continues
 *    from next = done.
 *  - task_limit is written only while no worker runs. Lowered under running
 *    workers it could leave a hole: a worker that loaded the old limit just
 *    before the write claims, and runs, a chunk beyond one that a worker
 *    which saw the new limit claimed and left unrun (a failed claim still
 *    advances next). Halts have no such race: a worker told to leave claims
 *    nothing.
 *  - Worker 0, when it leaves (on a signal or at the end), stores its measured
 *    task time in task_ns_seed (one plain store per launch: every leaving
 *    worker storing there stretched the H100's drain by 6.5 us for
 *    blackscholes); workers of a later generation start from it instead of
 *    measuring one task first, and the host reads it to choose the next
 *    launch's entry (corun_ahead_wanted).
 *  - The ahead entry (NAME__corun_ahead, CORUN_SHARED kernels) claims one task
 *    at a time, each claim issued while the task before it runs, with a 32-bit
 *    add on next's low word: every launch of one kernel then uses that entry
 *    (the host fixes it per kernel), and next stays below 2^31. A task it
 *    claimed runs whatever the signals say, so the prefix above holds. A
 *    fresh launch may start without claims: the host sets next = preset and
 *    worker w < preset runs task w.
 *  - The void: a halt of a kernel running the ahead entry first writes
 *    CORUN_AHEAD_VOID to next's low word. Claims the L2 ordered before that
 *    store got tasks below it, and those run; every claim after it returns
 *    a value >= CORUN_AHEAD_VOID > any task, which the worker reads as "no
 *    task" and leaves. The valid claims are therefore still a prefix, and
 *    once every worker has left it is [0, done): the host never needs the
 *    value it overwrote, and a resume rewinds next = done as after any halt.
 *    So a halt waits for the rest of the running task and the one claimed
 *    with it (two tasks at most, where the halt_gen word alone, read a task
 *    late through the copy, made it three). Evictions and SM ranges, which
 *    leave other workers running, still go through the copied words only.
 *  - Signals are 32-bit words written by the host on a high-priority stream
 *    (cuStreamWriteValue32); task_limit and next are 64-bit and, like
 *    task_limit above, written by the host only while no worker runs (the
 *    void, a 32-bit store of the same size as the ahead claims, excepted).
 */
#ifndef CORUN_CTL_H
#define CORUN_CTL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORUN_CTL_LINE 128

/* next's low word after a halt of a kernel running the ahead entry (above);
 * above CORUN_AHEAD_MAX_TASKS (corun_chunk.h), so no claim after it is a task. */
#define CORUN_AHEAD_VOID 0x80000000u

typedef struct corun_ctl {
    /* --- signals: host writes, workers read between chunks --------------- */
    uint32_t halt_gen;          /* workers with gen < halt_gen leave */
    uint32_t evict_below;       /* workers whose CapSM id < evict_below leave */
    uint32_t sm_lo;             /* workers on an SM outside [sm_lo, sm_hi] leave */
    uint32_t sm_hi;
    uint64_t task_limit;        /* no task at or beyond this is claimed;
                                   written only while no worker runs */
    uint32_t budget_ns;         /* chunk latency budget */
    uint32_t nworkers;          /* workers asked to run (tail-shrink hint) */
    uint32_t chunk_max;         /* upper bound on tasks per claim */
    uint32_t workers_per_capsm; /* max active workers per SM (SMGuard's M) */
    uint32_t grid_x, grid_y, grid_z; /* the virtual grid (original gridDim) */
    uint32_t pad0_;
    uint64_t tasks;             /* grid_x * grid_y * grid_z */
    uint64_t task_hits;         /* device address of a uint32 per task, or 0;
                                   counted only in builds with CORUN_TASK_HITS */
    uint8_t pad1_[CORUN_CTL_LINE - 72];

    /* --- the next-task counter, alone on its line ----------------------- */
    uint64_t next;
    uint8_t pad2_[CORUN_CTL_LINE - 8];

    /* --- progress: workers write, host reads ----------------------------- */
    uint64_t done;              /* tasks completed (counted after a barrier) */
    uint32_t started;           /* workers that ever started */
    uint32_t exited;            /* workers that have left (running now:
                                   started - exited). Relaxed adds: read while
                                   workers run, a worker may count as gone
                                   before its last add to done shows; once the
                                   launch has finished every count is final */
    uint32_t complete_seq;      /* host writes the launch's sequence number when
                                   the kernel is finished; streams ordered after
                                   it wait for it (corun_launch_stream) */
    uint32_t task_ns_seed;      /* worker 0's measured task time, written when
                                   it leaves; a relaunch (gen > 0) sizes its
                                   first chunk from it (0 = none) */
    uint8_t pad4_[CORUN_CTL_LINE - 24];
} corun_ctl;

/* What every worker launch receives before the kernel's own parameters.
 * The constants of the kernel travel here as well as in the control block:
 * a parameter is read from the constant bank, where a control-block word
 * costs each starting worker one more round trip to L2. */
typedef struct corun_worker_arg {
    corun_ctl *ctl;     /* device address of the control block */
    uint32_t base;      /* worker id of this launch's blockIdx.x == 0 */
    uint32_t gen;       /* launch generation, compared with halt_gen */
    uint32_t grid_x, grid_y, grid_z; /* = the control block's */
    uint32_t workers_per_capsm;      /* = the control block's */
    uint32_t preset;    /* ahead entry only: workers with id < preset run task
                           id first, unclaimed (the host set next = preset) */
} corun_worker_arg;

#ifdef __cplusplus
}
#endif

#endif /* CORUN_CTL_H */
