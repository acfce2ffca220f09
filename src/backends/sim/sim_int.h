/*
 * sim_int.h — the simulator's internal state, shared by its four files:
 *
 *   sim.c           the backend interface, the virtual clock, the event loop,
 *                   signals and launch bookkeeping;
 *   sim_dispatch.c  SMs and their resources, the hardware block dispatcher;
 *   sim_share.c     SMs shared between blocks: who gets an SM's issue rate;
 *   sim_exec.c      block-tasks, the shared-DRAM model, plain blocks and the
 *                   persistent-worker loop.
 *
 * Nothing declared here is visible outside src/backends/sim/.
 *
 * They call each other, the one call circle in src/ on purpose: they
 * are one event loop split by subject, not layers. sim.c hands task and
 * claim events to sim_exec.c, which schedules the next ones on sim.c's
 * clock (corun__sim_push), writes control blocks through it
 * (corun__sim_apply_writes) and tells it when a launch's blocks are gone
 * (corun__sim_launch_block_gone); the dispatcher starts blocks in sim_exec.c
 * (corun__sim_block_start), which gives them back (corun__sim_block_release);
 * sim_exec.c marks an SM whose running tasks changed (corun__sim_share_dirty)
 * and sim_share.c sets each running task's speed (corun__sim_task_speed).
 *
 * Time is integer nanoseconds everywhere except inside the DRAM and SM
 * models, where each kernel has a virtual clock that runs at its current
 * DRAM rate and each task advances on it at its block's speed (see
 * sim_exec.c, sim_share.c). Block-task durations are rounded to whole
 * nanoseconds, so a run in which every block keeps speed 1 and DRAM is not
 * contended is exact integer arithmetic.
 *
 * Memory is never allocated per event: blocks live in a pool that doubles
 * (rarely) up to the most blocks the GPU can hold, each kernel's running
 * tasks in a heap sized once for the most blocks of that kernel the GPU can
 * hold, and launch records are recycled. Should the pool or the global event
 * heap fail to grow inside an event, the simulator records CORUN_ENOMEM in
 * `broken` and every later call returns it.
 */
#ifndef CORUN_BACKENDS_SIM_INT_H
#define CORUN_BACKENDS_SIM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/sim/sim.h"
#include "common/heap.h"
#include "common/rng.h"
#include "core/ctl.h"
#include "corun/corun_ctl.h"

/* What an entry of the global event heap means. */
typedef enum corun__sim_ev {
    CORUN_SIM_EV_NOP,    /* cancelled (its kernel was closed or rewound) */
    CORUN_SIM_EV_ARRIVE, /* p: launch whose grid reaches the dispatcher */
    CORUN_SIM_EV_TASK,   /* p: kernel whose earliest task may end; b: version */
    CORUN_SIM_EV_CLAIM,  /* a: block whose chunk claim completes */
    CORUN_SIM_EV_WRITE,  /* p: kernel; a: offset | size << 16; b: value — a host
                            write reaches the control block */
    CORUN_SIM_EV_NOTIFY, /* b: cookie; a: status — the host learns a launch ended */
    CORUN_SIM_EV_REPORT  /* p: kernel; a: corun__bev_kind; b: done << 32 | live —
                            the host reads a direct kernel's report */
} corun__sim_ev;

#define CORUN_SIM_NO_BLOCK UINT32_MAX

/* One grid from its launch call until its last block has left. */
typedef struct corun__sim_launch {
    struct corun__sim_launch *prev, *next; /* dispatch queue, while blocks wait */
    struct corun__sim_launch *all;         /* every record, for destroy */
    corun__exec *k;
    uint64_t cookie;
    uint64_t blocks;   /* thread blocks in the grid */
    uint64_t placed;   /* blocks dispatched so far */
    uint64_t gone;     /* blocks that have left the GPU */
    corun_worker_arg wa; /* the launch's parameters (workers; ctl, report unused) */
    int32_t priority;  /* stream priority, larger first */
    uint32_t gate;     /* > 0: waits for the block's resume to reach it */
    bool workers;      /* persistent workers, else one block per task */
    bool queued;       /* in the dispatch queue */
    bool held;         /* a direct kernel's grid waiting for its stream */
    uint8_t part;      /* 0: any SM; 1, 2: only that static partition's SMs
                          (sim_partition), with a dispatcher of its own */
    /* Bit j clear: one more block of this grid is known not to fit on SM j.
     * Set again whenever SM j releases resources, so a waiting grid only
     * re-examines SMs that changed (dispatch is O(1) per released block,
     * not O(SMs)). */
    uint64_t *may_fit;
} corun__sim_launch;

/* A thread block resident on an SM. */
typedef struct corun__sim_block {
    corun__sim_launch *l; /* NULL while the pool slot is free */
    uint32_t sm;
    uint32_t sm_prev, sm_next; /* its SM's blocks, oldest placed first */
    uint32_t hpos;        /* its running task's place in the kernel's heap, or
                             CORUN_SIM_NO_BLOCK while it runs none */
    double speed;         /* of its task, against its kernel alone at full
                             occupancy (sim_share.c); 0 = stalled */
    double rem;           /* a stalled task's remaining solo time, ns */
    uint32_t worker;      /* worker id (workers) */
    uint32_t next_free;   /* pool free list */
    uint32_t count;       /* tasks in the current chunk (plain: 1) */
    uint32_t cur;         /* tasks of the chunk already finished */
    uint32_t claim_count; /* result of the claim in progress */
    uint32_t mean_ns;     /* the worker's measured task time (corun_chunk_ewma) */
    uint64_t first;       /* first task of the current chunk (plain: its task) */
    uint64_t claim_first;
    uint64_t next_hint;   /* counter value after this worker's last claim */
    uint64_t t_chunk;     /* when the current chunk started */
    /* the ahead entry (corun_worker_loop_ahead) */
    uint64_t ahead_next;  /* task claimed at the running task's start */
    uint32_t pend;        /* tasks run, not yet added to done */
    bool go;              /* claims ahead at the next task's start */
    bool claimed;         /* the running task's start claimed ahead_next */
    bool stay;            /* the signals as copied at the running task's start */
    bool holding;         /* out of tasks, holding its slot (corun_worker_arg.hold) */
    bool ran;             /* it ran a task (a holder moved off its SM stays then) */
} corun__sim_block;

/* A running block-task in its kernel's heap, ordered by virtual end time. */
typedef struct corun__sim_task {
    double vend;   /* end, on the kernel's virtual clock; INFINITY while stalled */
    uint64_t seq;  /* insertion order: equal ends come out first-in first-out */
    uint32_t block;
} corun__sim_task;

/* Resources in use on one SM (registers are in sim->part_free), and its
 * blocks in the order they were placed (sim_share.c). */
typedef struct corun__sim_sm {
    uint32_t blocks;
    uint32_t warps;
    uint32_t smem;
    uint32_t head, tail; /* oldest and newest block, or CORUN_SIM_NO_BLOCK */
    bool dirty;          /* its running tasks changed: shares to recompute */
} corun__sim_sm;

struct corun__exec {
    corun__exec *prev, *next; /* sim->kernels */
    corun__kspec spec;           /* copy; user code and args are not kept */
    uint64_t tasks;
    uint32_t per_sm;             /* occupancy: max resident blocks per SM */
    uint32_t warps;              /* per block */
    uint32_t regs_per_warp;
    uint32_t smem;               /* per block, the driver's reserve included */
    double bw;                   /* DRAM demand of one running task, share of peak */
    /* SMs shared between blocks (sim_share.c) */
    double compute;              /* share of a task's solo time bound by issue */
    double issue;                /* SM issue rate one block's tasks use alone at full
                                    occupancy */
    double issue_max;            /* most issue rate one block can use, as a multiple of
                                    `issue` (>= 1) */
    corun_ctl ctl;               /* the device-visible control block */
    uint64_t range_at;           /* when the last SM-range write lands: later
                                    launches arrive no earlier (as the cuda
                                    backend orders them after it) */
    uint32_t *hits;              /* per-task execution count */

    /* DRAM model: the virtual clock advances at `rate` since `vtime`. */
    double vclock;
    double rate;
    uint64_t vtime;
    corun__sim_task *run;        /* min-heap of running tasks, capacity per_sm * SMs */
    uint32_t nrun;
    uint32_t nres;               /* resident blocks, counted if bw > 0 */
    uint64_t task_seq;
    uint64_t version;            /* TASK events carrying another version are stale */
    uint64_t wake_time;          /* time of the valid TASK event, if wake_set */
    bool wake_set;

    bool ahead;                  /* workers run the ahead entry (spec.ahead) */
    corun__ctl_host ch;          /* the host's protocol state (src/core/ctl.h) */
    /* direct kernels (corun_ctl.h) */
    bool direct;
    const void *stream;          /* the program's stream */
    struct corun__exec *snext;/* the next direct kernel of that stream */
    corun__sim_launch *primary;  /* its grid in the stream (until it starts) */
    bool over;                   /* finished or released on the device */
    bool owned;                  /* plain: the simulator frees it when over */
    uint32_t anchor;             /* block holding the stream, or CORUN_SIM_NO_BLOCK */
    uint32_t holders;            /* its workers holding their slots (corun__hold) */
    uint32_t rep_task_ns;        /* task time in the last report */
    uint64_t t_primary;          /* when the primary grid's worker 0 started */
    uint32_t rep_run_ns;         /* FINISHED by the primary grid alone: its run
                                    (corun_report's t_end - t_start), else 0 */
    uint64_t cookie;             /* bind's */
    uint32_t worker_calls;       /* worker launches made */
    uint32_t launches;           /* launches not over (all their blocks gone) */
    uint32_t worker_launches;    /* of which worker launches */
    uint32_t relay_launches;     /* of which with a relay (corun_ctl.h): its
                                    signal words land relay_ns after the write */
    bool fault_armed;            /* faults.signal_kernel names this kernel */
    bool closed;                 /* closed with launches in flight: freed when over */
};

typedef struct corun__sim {
    corun__backend base; /* first: the scheduler holds a corun__backend * */
    corun__sim_opts opts;
    uint64_t signal_ns, relay_ns, launch_ns, notify_ns, claim_ns, wake_ns;
    uint64_t idle_launch_ns, idle_after_ns;
    double jitter_ns;       /* mean launch noise */
    uint64_t last_arrival;  /* of the last launch made (launch_arrival) */
    corun__rng rng;
    corun__rng jitter;      /* the launch noise's draws */
    corun__heap events;
    uint64_t now;
    int broken;          /* sticky error of an allocation inside an event */
    corun__sim_stats stats;
    uint64_t launch_calls;

    /* SMs */
    uint32_t nsm;
    uint32_t part_sms;   /* SMs [0, part_sms) are partition 1, the rest
                            partition 2; 0 = not split */
    uint32_t nparts;        /* register-file partitions per SM */
    uint32_t max_warps;     /* warps per SM */
    uint32_t words;         /* uint64 words of an SM bitmap */
    corun__sim_sm *sm;
    uint32_t *part_free;    /* free registers, [sm * nparts + partition] */
    uint32_t rr;            /* round-robin cursor of the dispatcher */
    uint32_t resident;      /* blocks on SMs */
    uint64_t idle_since;    /* when resident last fell to 0 (UINT64_MAX: never busy) */
    uint32_t *dirty;        /* SMs whose shares are to be recomputed */
    uint32_t ndirty;

    /* block pool */
    corun__sim_block *blocks;
    uint32_t *blk_parts;    /* warps a block holds per partition, [block * nparts + p] */
    uint32_t nblocks, cap_blocks, max_blocks, free_block;

    /* dispatcher */
    corun__sim_launch *q_head, *q_tail;
    corun__sim_launch *free_launches, *all_launches;
    bool need_dispatch;

    /* kernels and the DRAM model */
    corun__exec *kernels;
    uint32_t closing;       /* closed kernels waiting for their launches */
    double slow;            /* current DRAM slowdown, >= 1 */
    bool demand_dirty;      /* blocks of a kernel with bw > 0 came or went */

    /* streams of direct kernels: the last kernel launched on each */
    struct sim_stream {
        const void *id;
        corun__exec *tail;
    } *streams;
    uint32_t nstreams, cap_streams;
    uint64_t stream_gap_ns;

    corun__sim_claim_fn claim_fn;
    void *claim_ctx;
} corun__sim;

/* --- sim.c ------------------------------------------------------------- */

/* Pushes an event; on failure marks the simulator broken (CORUN_ENOMEM). */
void corun__sim_push(corun__sim *s, uint64_t time, corun__sim_ev kind, uint32_t a, uint64_t b,
                     void *p);
/* Writes control-block words of k as the device sees them, now. */
void corun__sim_apply_writes(corun__sim *s, corun__exec *k, const corun__ctl_write *w,
                             size_t n);
/* A direct kernel's device side reports (HELD, FINISHED, RELEASED); the
 * host reads it notify_ns later. A FINISHED or RELEASED kernel's stream
 * goes on. */
void corun__sim_report(corun__sim *s, corun__exec *k, corun__bev_kind kind, uint32_t live);
/* A block of l has left the GPU (its resources are already released); ends
 * the launch when it was the last. */
void corun__sim_launch_block_gone(corun__sim *s, corun__sim_launch *l);

/* --- sim_dispatch.c ---------------------------------------------------- */

int corun__sim_sms_init(corun__sim *s);
void corun__sim_sms_free(corun__sim *s);
/* A grid reaches the dispatcher (in arrival order, or by priority). */
void corun__sim_enqueue(corun__sim *s, corun__sim_launch *l);
/* Places waiting blocks while any fits; starts each placed block through
 * corun__sim_block_start. Runs only if something changed since the last
 * time (need_dispatch). */
void corun__sim_dispatch_run(corun__sim *s);
/* Frees block b's SM resources and pool slot; marks the dispatcher dirty. */
void corun__sim_block_release(corun__sim *s, uint32_t b);

/* --- sim_share.c -------------------------------------------------------- */

/* Sets k's issue share and speed limit from its occupancy. */
void corun__sim_share_kernel(const corun__sim *s, corun__exec *k);
/* Appends block b to its SM's placement order / takes it out. */
void corun__sim_share_link(corun__sim *s, uint32_t b);
void corun__sim_share_unlink(corun__sim *s, uint32_t b);
/* SM j's running tasks changed: its shares are recomputed before the clock
 * moves. */
void corun__sim_share_dirty(corun__sim *s, uint32_t j);
/* Recomputes the shares of every marked SM and re-times the tasks whose
 * speed changed. Must run before the clock moves past an instant in which
 * tasks started or ended. */
void corun__sim_share_update(corun__sim *s);

/* --- sim_exec.c -------------------------------------------------------- */

/* Prepares k's DRAM-model state; its running-task heap needs per_sm * SMs
 * entries. Returns CORUN_ENOMEM. */
int corun__sim_kernel_exec_init(corun__sim *s, corun__exec *k);
void corun__sim_kernel_exec_free(corun__exec *k);
/* A block has just been placed on an SM: a plain block starts its task, a
 * worker checks its signals and claims. */
void corun__sim_block_start(corun__sim *s, uint32_t b);
/* CORUN_SIM_EV_TASK and CORUN_SIM_EV_CLAIM. */
void corun__sim_on_task_event(corun__sim *s, corun__exec *k, uint64_t version);
void corun__sim_on_claim_event(corun__sim *s, uint32_t b);
/* Signals reached k's control block: its holders the signals no longer
 * allow leave (corun__hold). */
void corun__sim_holders_signalled(corun__sim *s, corun__exec *k);
/* Applies a pending change of DRAM demand to every kernel's rate. Must run
 * before the clock moves past an instant in which blocks came or went. */
void corun__sim_update_rates(corun__sim *s);
/* Block b's running task goes on at `speed` from now (0: stalled). */
void corun__sim_task_speed(corun__sim *s, uint32_t b, double speed);

#endif
