/*
 * corun_ctl.h — the control block of one corun kernel, shared by the host
 * (which signals) and the device workers (which obey and count), and the
 * report a direct kernel's device side writes to host memory. Plain C, no
 * CUDA header: the CUDA backend, the device header, the simulator and the
 * core protocol module (src/core/ctl.h, which says what the host writes)
 * all read this one definition.
 *
 * Protocol, in one place:
 *  - A fresh control block is all zeros. Zero means: no halt, no eviction,
 *    every SM, the launch's own task count and worker count. Everything a
 *    launch needs beyond that travels in its parameters (corun_worker_arg),
 *    so a launch needs no host-to-device write before it: the host takes a
 *    zeroed block from a pool (the CUDA backend zeroes finished ones in
 *    batches, off the launch path).
 *  - Tasks [0, preset) belong to the workers of the kernel's first launch
 *    with those ids (wa.own): worker w < preset runs task w first,
 *    unclaimed, whatever the signals say. Every other task is claimed: a
 *    claim of c tasks is preset + atomicAdd(&next, c), made only while none
 *    of the signals below tells the worker to leave, and every claimed task
 *    below the limit is run to the end. So a fresh launch's first tasks cost
 *    no claim where preset is its worker count (never for a launch bound to
 *    some SMs, whose workers elsewhere must not run anything); later
 *    launches keep the same preset as an offset.
 *  - Between chunks a worker leaves if its launch generation < halt_gen
 *    (temporal preemption), if its CapSM id < evict_below (SMGuard eviction),
 *    if its SM is outside [sm_lo, ~sm_hi_inv] (spatial binding), or if the
 *    next claim starts at or beyond the limit, tasks - task_cut (epoch quota).
 *    A worker starts only on an SM of its launch's own range
 *    (corun_worker_arg.sm_lo..sm_hi); elsewhere it leaves before any task.
 *  - So the tasks run form a prefix [0, done) of the task space once every
 *    launch of the kernel has finished (the kernel's end, not `exited`,
 *    publishes the last adds to done). A resumed kernel continues from
 *    preset + next = done: the chunk loop's halted workers claim nothing, so
 *    next is already there; a voided or limited one is rewound.
 *  - task_cut is written only while no worker runs. Raised under running
 *    workers it could leave a hole: a worker that loaded the old limit just
 *    before the write claims, and runs, a chunk beyond one that a worker
 *    which saw the new limit claimed and left unrun (a failed claim still
 *    advances next). Halts have no such race: a worker told to leave claims
 *    nothing.
 *  - Holding the tail (wa.hold, a launch bound to some SMs with no preset):
 *    a worker of its launch's SMs whose claim finds no task left does not
 *    leave but stays, its slot held and nothing run, until done reaches the
 *    limit or a halt tells it to leave. So the slots a kernel's tail frees
 *    on its SMs stay its own until its last task ends (the hardware would
 *    put other kernels' blocks there, beside its running tasks), and its end
 *    comes at most one poll (~2 us) after that task. Every task is then
 *    claimed by a running worker, so done reaches the limit without a new
 *    block having to start. An eviction or a narrowing of the SM range
 *    sends away only the workers that ran no task; one that ran tasks on an
 *    SM the signal takes from the kernel holds on as well, since that SM's
 *    other tasks of the kernel still run: the SM frees whole, at the end.
 *  - Worker 0, when it leaves (on a signal or at the end), stores its measured
 *    task time in task_ns_seed; workers of a later generation start from it
 *    instead of measuring one task first.
 *  - The ahead entry (NAME__corun_ahead, CORUN_SHARED kernels) claims one task
 *    at a time, each claim issued while the task before it runs, with a 32-bit
 *    add on next's low word: every launch of one kernel then uses that entry
 *    (the host fixes it per kernel), and next stays below 2^31. A task it
 *    claimed runs whatever the signals say, so the prefix above holds.
 *  - The void: a halt of a kernel running the ahead entry on corun's own
 *    streams first writes CORUN_AHEAD_VOID to next's low word. Claims the L2
 *    ordered before that store got tasks below it, and those run; every claim
 *    after it returns a value >= CORUN_AHEAD_VOID > any task, which the worker
 *    reads as "no task" and leaves. The valid claims are therefore still a
 *    prefix, and once every worker has left it is [0, done): a resume rewinds
 *    next = done - preset. So a halt waits for the rest of the running task
 *    and the one claimed with it (two tasks at most). A direct kernel (below)
 *    is never voided: its resume may not wait for a host write of next.
 *  - A scheduled launch (on corun's own streams) carries the kernel's report
 *    too: a worker that leaves with every task done writes FINISHED there,
 *    so once every launch of the kernel has finished the scheduler reads
 *    its end from host memory. A halted, evicted or limited kernel leaves no
 *    FINISHED; the host then reads the control block.
 *  - Direct kernels. A launch in the user's stream (corun_launch_stream)
 *    runs a "primary" grid there: wa.primary is its worker count. A primary
 *    worker that leaves adds 2^32 to `done` (the primary workers that have
 *    left, in done's high half, beside the tasks done in its low half, so one
 *    atomic tells both). The one that brings the count to wa.primary is the
 *    last of its grid: if the tasks are all done it writes the report
 *    FINISHED and leaves, and the grid's end lets the stream go on; if not
 *    (the kernel was halted or evicted, or other launches still run tasks),
 *    it stays, the anchor: it sleeps, reports HELD with the tasks done and
 *    the workers still running whenever they change, and leaves once done
 *    reaches the tasks (FINISHED) or the host writes `release` (RELEASED,
 *    teardown only). So a halted kernel holds its stream until it is resumed
 *    and finished, with no host write on the way, and the host learns of
 *    completions from host memory, never from a driver call.
 *  - Resume of a direct kernel without a launch at resume time: when the host
 *    halts one, it first enqueues (from corun's launcher thread: a launch may
 *    wait for a program's synchronous copy) a resume grid on a stream of its own,
 *    behind a wait (cuStreamWaitValue32) for `resume` to reach the grid's
 *    number, and then writes halt_gen. Resuming is then one 32-bit write,
 *    which the driver takes even while another thread sits in a synchronous
 *    copy that waits for the held stream (a launch there would wait for the
 *    copy: a deadlock).
 *  - Signals are 32-bit words written by the host on a high-priority stream
 *    (cuStreamWriteValue32); next is 64-bit and, like task_cut above, written
 *    by the host only while no worker runs (the void, a 32-bit store of the
 *    same size as the ahead claims, excepted).
 *  - The relay (direct kernels). A stream write lands ~8-10 us after the
 *    call, the GPU front end's time for any stream memory operation; a CPU
 *    store into host memory is seen in ~2 us by one reader on an SM (by many
 *    readers of one line far later: their reads are served one by one). So
 *    the four signal words (halt_gen, evict_below, sm_lo, sm_hi_inv) also
 *    have a mirror in mapped host memory (corun_mirror, one per control
 *    block, wa.relay), which every writer -- the host's signal path, corund
 *    narrowing a client -- stores before it issues the stream write. A grid
 *    launched with wa.relay_block has one block more than its workers, the
 *    first (block 0; worker ids are the block's index minus one): its first
 *    thread copies the mirror's words into the control block whenever they
 *    change, reading the mirror back to back (~2 us a read) and nothing in
 *    device memory (a load of the control block, a line the workers' atomics
 *    keep busy, held it up for tens of microseconds). Block 0 because its
 *    warp is then the oldest on its SM: as the grid's last block, beside
 *    workers whose tasks keep the SM's issue busy, it got to read only about
 *    every 9 us (up to 31), later than the stream write landed. The
 *    stream write still follows: a grid with no relay running gets it, and
 *    one that lands after a newer value is followed by that value's own.
 *    The relay never counts as a worker (started, exited, done, primary). It
 *    leaves once it has copied a halt that covers its launch's generation,
 *    or once the kernel is over: the primary grid's last worker stores its
 *    launch's number (seq) in the mirror's `over` just before its last
 *    report (FINISHED or RELEASED). The host zeroes a mirror's signal words
 *    when the block is recycled, after that report, but never `over`: a
 *    relay that had not yet read it (its context switched out, say) would
 *    otherwise spin on, holding its stream. A relay leaves once `over` is
 *    its launch's number or a later one (corun_relay_over), so one that
 *    wakes after its block served another kernel leaves too. A grid's workers that all left on an eviction
 *    or a narrowing leave its relay there, one slot, until one of those.
 *    Only kernels with claims get a relay: a preset task runs whatever the
 *    signals say.
 *  - The grid form (NAME__corun_grid, wa.grid; direct kernels only): the
 *    primary grid is one block per task, as the plain kernel's, each block
 *    running one task and leaving, so the hardware schedules the blocks and no worker waits
 *    on a claim between tasks. Block b < preset runs task b, unclaimed
 *    (its launch's own, as above); every later block reads halt_gen and,
 *    unless its launch is halted, claims one task (preset + atomicAdd(&next,
 *    1)), so the tasks run stay a prefix and a halted grid resumes as any
 *    direct kernel does, through its gate grid of workers. A grid block
 *    obeys a halt only: the other signals name CapSMs and SMs, which its
 *    blocks do not keep, so the host halts such a kernel and resumes it as
 *    workers before it evicts or narrows it (corun__sched_degrid). Every
 *    block is a primary worker (wa.primary is the grid's size) and counts
 *    itself, with its task, in one add as it leaves; the last one anchors.
 *    Block 0 stores its task's time in task_ns_seed. Launched only on the
 *    whole GPU, without hold, where the tasks exceed the workers.
 */
#ifndef CORUN_CTL_H
#define CORUN_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "corun/corun_chunk.h" /* CORUN_HD */

#ifdef __cplusplus
extern "C" {
#endif

#define CORUN_CTL_LINE 128

/* next's low word after a halt of a kernel running the ahead entry (above);
 * above CORUN_AHEAD_MAX_TASKS (corun_chunk.h), so no claim after it is a task. */
#define CORUN_AHEAD_VOID 0x80000000u

/* One primary worker leaving, in `done` (its high half counts them). */
#define CORUN_PRIMARY_LEFT (1ull << 32)

typedef struct corun_ctl {
    /* --- signals: host writes, workers read between chunks --------------- */
    uint32_t halt_gen;          /* workers with gen < halt_gen leave */
    uint32_t evict_below;       /* workers whose CapSM id < evict_below leave */
    uint32_t sm_lo;             /* workers on an SM below sm_lo leave */
    uint32_t sm_hi_inv;         /* ~(the highest SM allowed): 0 = every SM */
    uint32_t task_cut;          /* the limit is tasks - task_cut; written only
                                   while no worker runs */
    uint32_t nworkers;          /* workers asked to run now (tail-shrink hint);
                                   0 = the launch's (wa.nworkers) */
    uint32_t resume;            /* direct kernels: a resume grid waits on the
                                   GPU for resume >= its number */
    uint32_t pad0_;
    uint8_t pad1_[CORUN_CTL_LINE - 32];

    /* --- the claim counter, alone on its line ---------------------------- */
    uint64_t next;              /* tasks claimed beyond preset */
    uint8_t pad2_[CORUN_CTL_LINE - 8];

    /* --- progress: workers write, host reads ----------------------------- */
    uint64_t done;              /* low 32 bits: tasks completed (counted after a
                                   barrier); high 32: primary workers that have
                                   left (CORUN_PRIMARY_LEFT each) */
    uint32_t release;           /* direct kernels: nonzero lets the anchor go
                                   with tasks left (teardown only) */
    uint32_t started;           /* workers that ever started */
    uint32_t exited;            /* non-primary workers that have left (running
                                   now: started - exited - primary left).
                                   Relaxed adds: read while workers run, a
                                   worker may count as gone before its last add
                                   to done shows; once the launch has finished
                                   every count is final */
    uint32_t task_ns_seed;      /* worker 0's measured task time, written when
                                   it leaves; a relaunch (gen > 0) sizes its
                                   first chunk from it (0 = none) */
    uint8_t pad4_[CORUN_CTL_LINE - 24];
} corun_ctl;

/* The mirror of a control block's signal words in mapped host memory (the
 * relay, above), CORUN_MIRROR_STRIDE bytes apart: relays reading one line
 * would wait for each other. The signal words are zero when the block is
 * fresh; `over` keeps the number of the block's last launch that ended. */
typedef struct corun_mirror {
    uint32_t halt_gen, evict_below, sm_lo, sm_hi_inv; /* the writers' (host, corund) */
    uint32_t over;              /* the primary grid's last worker: its launch's seq */
    uint32_t pad_[3];
} corun_mirror;

/* Whether a relay of launch seq may leave, `over` being what the mirror
 * holds: that launch has ended, or a later launch of the same block (seq
 * counts a block's launches from 1 and wraps). */
CORUN_HD int corun_relay_over(uint32_t over, uint32_t seq)
{
    return (int32_t)(over - seq) >= 0;
}
#define CORUN_MIRROR_STRIDE 64
#define CORUN_MIRROR_SIGNALS 16 /* bytes of the control block the mirror holds */
#define CORUN_MIRROR_SLOTS 4096 /* mirrors in a process's shared file (its control blocks) */
#define CORUN_MIRROR_BYTES ((size_t)CORUN_MIRROR_SLOTS * CORUN_MIRROR_STRIDE) /* the file */

/* What the device side of a kernel tells the host, in host memory (one per
 * control block). A direct kernel's is written by one block at a time, the
 * primary grid's last worker. A kernel launched on corun's own streams (a
 * scheduled launch) gets FINISHED alone, from every worker that leaves after
 * its last task with a task run: all write the same but task_ns, and the host
 * reads it only once every launch of the kernel has finished, so it learns
 * the kernel's end without reading the control block. A HELD report
 * stores tag with an odd count, then (fenced) done, live and task_ns, then
 * (fenced) tag with the next, even count; the host reads tag, the rest, and
 * tag again, and keeps what it read only if both tags are equal and the
 * count even. FINISHED and RELEASED, the last report of a launch, store the
 * numbers and the tag unfenced: their state is what counts, their numbers
 * are hints. */
typedef struct corun_report {
    uint32_t done;              /* tasks completed when written */
    uint32_t live;              /* workers running when written (HELD) */
    uint32_t task_ns;           /* the writer's measured task time (0 = none) */
    uint32_t tag;               /* CORUN_REPORT_TAG(seq, count, state) */
    uint64_t t_start;           /* %globaltimer as the primary grid's worker 0
                                   started, written then */
    uint64_t t_end;             /* FINISHED by the primary grid alone: as its
                                   last worker left (0 = not so); t_end - t_start
                                   is the entry choice's measure (a hint: the two
                                   come from two SMs, unordered) */
} corun_report;

#define CORUN_REPORT_NONE 0u     /* nothing written for this launch yet */
#define CORUN_REPORT_HELD 1u     /* workers left with tasks remaining: the stream is held */
#define CORUN_REPORT_FINISHED 2u /* every task ran: the stream goes on */
#define CORUN_REPORT_RELEASED 3u /* the host let the stream go with tasks remaining */
/* seq: the launch's (24 bits); count: reports so far (6 bits, wraps). */
#define CORUN_REPORT_TAG(seq, count, state) \
    ((((uint32_t)(seq) & 0xffffffu) << 8) | (((uint32_t)(count) & 0x3fu) << 2) | (uint32_t)(state))
#define CORUN_REPORT_SEQ(tag) ((uint32_t)(tag) >> 8)
#define CORUN_REPORT_STATE(tag) ((uint32_t)(tag) & 3u)

/* What every worker launch receives before the kernel's own parameters: the
 * constants of the launch. A parameter is read from the constant bank, where
 * a control-block word costs each starting worker one more round trip to L2,
 * and it needs no write to the control block before the launch. */
typedef struct corun_worker_arg {
    corun_ctl *ctl;             /* device address of the control block */
    corun_report *report;       /* where the launch reports (device address of
                                   host memory): a direct kernel's primary grid,
                                   or a scheduled launch; else NULL */
    uint64_t task_hits;         /* device address of a uint32 per task, or 0;
                                   counted only in builds with CORUN_TASK_HITS */
    uint64_t relay;             /* device address of the block's corun_mirror (mapped
                                   host memory), for every grid of a direct kernel
                                   where there are mirrors; 0 = none */
    uint32_t base;              /* worker id of this launch's blockIdx.x == 0 */
    uint32_t gen;               /* launch generation, compared with halt_gen */
    uint32_t grid_x, grid_y, grid_z; /* the virtual grid (the original gridDim) */
    uint32_t div_x_mul, div_x_sh; /* division by grid_x (corun_divisor, corun_chunk.h) */
    uint32_t div_y_mul, div_y_sh; /* division by grid_y */
    uint32_t tasks;             /* grid_x * grid_y * grid_z */
    uint32_t workers_per_capsm; /* max active workers per SM (SMGuard's M) */
    uint32_t nworkers;          /* workers the kernel runs on at this launch */
    uint32_t budget_ns;         /* chunk latency budget */
    uint32_t chunk_max;         /* upper bound on tasks per claim */
    uint32_t preset;            /* tasks [0, preset) belong to those workers */
    uint32_t own;               /* 1: this launch fixed preset; its workers with id <
                                   preset start with their own task */
    uint32_t primary;           /* this launch's worker count if it is the grid in
                                   the user's stream (a direct kernel), else 0 */
    uint32_t sm_lo, sm_hi;      /* this launch's SMs */
    uint32_t seq;               /* the launch's number in its reports */
    uint32_t direct;            /* 1: a kernel launched in the user's stream (any of
                                   its grids), whose anchor reads done */
    uint32_t hold;              /* 1: workers out of tasks, or moved off an SM
                                   where they ran tasks, hold their slots until
                                   the kernel's tasks are done (above) */
    uint32_t relay_block;       /* 1: the grid's first block is its relay (above);
                                   worker ids start past it */
    uint32_t grid;              /* 1: the grid form's primary grid (NAME__corun_grid,
                                   above): a block per task, no relay */
} corun_worker_arg;

#ifdef __cplusplus
}
#endif

#endif /* CORUN_CTL_H */
