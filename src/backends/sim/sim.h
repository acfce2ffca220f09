/*
 * sim.h — a discrete-event GPU behind the backend interface.
 *
 * What it models (and nothing more):
 *  - SMs with the resources CUDA's occupancy calculator counts: warp slots,
 *    registers per register-file partition, shared memory, block slots. A
 *    thread block (plain block or corun worker) is placed on one SM if it
 *    fits there, by the same allocation rules as core/occupancy.c.
 *  - The hardware block dispatcher, with two orders: "fifo" (MPS: grids in
 *    arrival order, leftover policy — a grid's blocks are dispatched only
 *    once every earlier grid has dispatched all of its blocks) and
 *    "priority" (grids of higher stream priority first, then arrival order;
 *    running blocks are never preempted). Blocks go to SMs round-robin.
 *  - Block-tasks whose duration in the kernel alone at full occupancy is
 *    drawn from the kernel's distribution, and a shared DRAM: when the
 *    bandwidth demanded by all running blocks exceeds the peak, the
 *    memory-bound share of every task slows down by demand/peak.
 *  - SMs shared between blocks: a task's compute share runs at the part of
 *    its SM's issue rate its block gets, oldest block first, each block up to
 *    what its warps can use (block_speedup); so a block alone on an SM runs
 *    faster, and a block placed beside older blocks that use the whole issue
 *    rate waits for them (sim_share.c).
 *  - Persistent workers that run the real chunk policy (corun_chunk.h) and
 *    obey every control-block signal of corun_ctl.h at chunk boundaries,
 *    after a signal delay; launches start after a launch delay; the host
 *    learns that a launch finished after a notify delay.
 * Deterministic for a given seed: events at equal times are ordered by
 * insertion.
 */
#ifndef CORUN_BACKENDS_SIM_H
#define CORUN_BACKENDS_SIM_H

#include <stdint.h>

#include "core/backend.h"
#include "core/settings.h"

/* The simulator's name (its ops, profile store keys) and what it can do. */
#define CORUN_SIM_NAME "sim"
#define CORUN_SIM_CAPS (CORUN_BE_VIRTUAL_TIME | CORUN_BE_DIRECT)
/* Most block_speedup (corun__sim_opts): a block can use its whole SM at
 * most, and no GPU holds more than 64 blocks per SM. */
#define CORUN_SIM_SPEEDUP_MAX 64.0

typedef enum corun__sim_dispatch {
    CORUN_SIM_DISPATCH_FIFO,     /* MPS-like leftover policy */
    CORUN_SIM_DISPATCH_PRIORITY  /* stream priorities, no preemption */
} corun__sim_dispatch;

/* Fault injection, for tests. */
typedef struct corun__sim_faults {
    uint32_t fail_launch_n;        /* the Nth launch call (1-based, plain or
                                      workers) fails with CORUN_EFAULT; 0 = never */
    /* When kernel named signal_kernel has completed signal_at_task tasks,
     * apply signal signal_kind = signal_value to it on the device at once, as
     * if the host had written it. Empty name = never. Not
     * CORUN_SIG_TASK_LIMIT (refused): the host writes that only while no
     * worker runs (corun_ctl.h). */
    char signal_kernel[64];
    uint64_t signal_at_task;
    corun__signal signal_kind;
    uint64_t signal_value;
} corun__sim_faults;

typedef struct corun__sim_opts {
    corun_gpu_desc desc;
    uint64_t seed;
    corun__sim_dispatch dispatch;
    double signal_ns;    /* host signal write -> visible to workers */
    double relay_ns;     /* the same, for a kernel with a relayed grid running */
    uint32_t relay;      /* direct kernels' grids get relays (setting RELAY) */
    double launch_ns;    /* launch call -> grid at the dispatcher */
    double launch_jitter_ns; /* mean of an exponential added to each launch's
                            delay (host and driver noise; launches still reach
                            the dispatcher in call order); 0 = none */
    double idle_launch_ns; /* added to a launch that finds the GPU idle (no
                            block resident, none queued) for idle_after_ns */
    double idle_after_ns;
    double notify_ns;    /* last block of a launch leaves -> poll reports it */
    double wake_ns;      /* a poll's deadline -> its return, when nothing happens first */
    double claim_ns;     /* one chunk claim (atomic + barrier) */
    double stream_gap_ns;/* a kernel's end -> the next of its stream at the dispatcher */
    double block_speedup;/* most a block runs faster than in its kernel alone at full
                            occupancy, when its SM has issue to spare (>= 1) */
    uint32_t budget_ns;  /* chunk latency budget (corun_chunk.h) */
    uint32_t chunk_max;  /* most tasks per claim */
    uint32_t gpu_index;  /* which of corund's simulated GPUs it is (setting DEVICE: a
                            number; "auto": 0) */
    corun__sim_faults faults;
} corun__sim_opts;

/* Options from the settings table (sim_* settings, the chunk budget, the
 * seed), on an H100; _default takes the table's defaults. */
void corun__sim_opts_from(corun__sim_opts *o, const corun__settings *set);
void corun__sim_opts_default(corun__sim_opts *o);

/* Creates a sim backend; *out is destroyed with (*out)->ops->destroy. */
int corun__sim_create(const corun__sim_opts *o, corun__backend **out);

/* Counters for tests and reports. */
typedef struct corun__sim_stats {
    uint64_t events;           /* discrete events processed */
    uint64_t tasks_run;        /* block-tasks executed, all kernels */
    uint64_t launches;         /* launch calls accepted */
    uint64_t workers_started;
    uint64_t workers_exited_signal; /* left because of a signal */
    double busy_slot_ns;       /* integral of occupied block slots over time */
} corun__sim_stats;

void corun__sim_get_stats(corun__backend *be, corun__sim_stats *out);

/* Per-task execution counts of a kernel (length = its task count), for
 * exactly-once checks; NULL if the kernel is unknown. Owned by the backend,
 * valid until exec_close. */
const uint32_t *corun__sim_task_hits(corun__backend *be, corun__exec *k);

/* One chunk claim of a simulated worker, as the device loop makes it. */
typedef struct corun__sim_claim {
    uint64_t time_ns;   /* when the worker read its signals and claimed */
    uint32_t worker;    /* worker id (CapSM id = worker / per_sm) */
    uint32_t size;      /* tasks corun_chunk_size asked for */
    uint64_t first;     /* the task counter before the claim */
    uint32_t count;     /* tasks of the claim below the limit, all of which the
                           worker runs; 0 = the worker leaves */
} corun__sim_claim;

typedef void (*corun__sim_claim_fn)(void *ctx, corun__exec *k, const corun__sim_claim *c);

/* Calls fn(ctx, ...) at every claim from now on (fn NULL: no more calls), for
 * tests of the chunk policy and for traces. fn must not call the backend. */
void corun__sim_set_claim_hook(corun__backend *be, corun__sim_claim_fn fn, void *ctx);

/* Thread blocks resident on SM sm now (plain blocks and workers), for tests
 * of the dispatcher; 0 for an SM that does not exist. */
uint32_t corun__sim_sm_resident(corun__backend *be, uint32_t sm);

#endif
