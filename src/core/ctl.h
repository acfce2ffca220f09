/*
 * ctl.h — the host side of the control-block protocol (corun_ctl.h), in one
 * place: what a launch's parameters hold, which words a scheduler intent
 * (halt, evict, SM range, task limit, rewind) becomes, and what a control
 * block or a report read back says. Backends only write the words this
 * module returns, in its order, and hand it the blocks they read; the
 * simulator applies the same words to its model of the device.
 *
 * Pure C, no CUDA. One corun__ctl_host per control block, owned by the
 * backend; not thread-safe (the backend serialises its use).
 */
#ifndef CORUN_CORE_CTL_H
#define CORUN_CORE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"
#include "corun/corun.h"
#include "corun/corun_chunk.h"
#include "corun/corun_ctl.h"

/* What the host knows of one control block's protocol state. */
typedef struct corun__ctl_host {
    uint64_t tasks;
    uint32_t grid_x, grid_y, grid_z;
    corun_divisor div_x, div_y; /* division by grid_x, grid_y (every grid's argument) */
    uint32_t per_sm;        /* workers per CapSM */
    uint32_t budget_ns, chunk_max;
    uint32_t preset;        /* fixed by the first launch (corun__ctl_launch) */
    uint32_t sm_count;
    bool ahead;             /* its workers run the ahead entry */
    bool direct;            /* a direct kernel: never voided (corun_ctl.h) */
    bool launched;          /* a launch was made */
    bool signalled;         /* a word other than nworkers was written */
    bool voided;            /* next holds the void until the rewind */
} corun__ctl_host;

/* One word to write, at byte offset off of the control block. */
typedef struct corun__ctl_write {
    uint32_t off;
    uint32_t size;          /* 4 or 8 */
    uint64_t value;
} corun__ctl_write;

#define CORUN_CTL_MAX_WRITES 4

/* A fresh block's host state. */
void corun__ctl_init(corun__ctl_host *h, const corun__kspec *spec, uint32_t per_sm,
                     const corun_gpu_desc *gpu, uint32_t budget_ns, uint32_t chunk_max,
                     bool direct);

/* The parameters of one worker launch. A direct kernel's launch and one of
 * a kernel running the ahead entry may start without claims: the kernel's
 * first launch, with base 0 and generation 0, on every SM and before any
 * signal, fixes preset to its worker count and its workers start with their
 * own tasks (the chunk loop does not: docs/decisions/0016). Later launches
 * keep that preset (an offset of every claim). sm_lo..sm_hi: the launch's
 * own SMs. req->hold becomes wa->hold where the kernel has no preset. */
void corun__ctl_launch(corun__ctl_host *h, const corun__launch_req *req, uint32_t sm_lo,
                       uint32_t sm_hi, corun_worker_arg *wa);

/* The words a signal becomes, in order. CORUN_ERANGE for a value the block
 * cannot hold. */
int corun__ctl_signal(corun__ctl_host *h, corun__signal sig, uint64_t value,
                      corun__ctl_write *w, size_t *n);

/* The words of a rewind (only while no worker runs): tasks [0, next) are
 * taken as run, and the limit is `limit`. */
int corun__ctl_rewind(corun__ctl_host *h, uint64_t next, uint64_t limit, corun__ctl_write *w,
                      size_t *n);

/* The word that lets a direct kernel's anchor leave with tasks left
 * (teardown only; corun_ctl.h). */
void corun__ctl_release(corun__ctl_write *w, size_t *n);

/* Progress from a block read back (its progress line and next suffice). */
void corun__ctl_progress(const corun__ctl_host *h, const corun_ctl *blk, corun_progress *out);

/* One consistent reading of a report, or false if it is being written
 * (read again later). */
typedef struct corun__report_view {
    uint32_t seq, state, count;
    uint32_t done, live, task_ns;
    uint32_t run_ns; /* FINISHED: t_end - t_start, the primary grid's run
                        (a hint; 0 = none) */
} corun__report_view;
bool corun__ctl_report_read(const volatile corun_report *r, corun__report_view *out);
/* corun__ctl_report_read, and true only if the report is of use seq of its
 * control block (a tag keeps 24 bits of it): another use's says nothing. */
bool corun__ctl_report_of(const volatile corun_report *r, uint32_t seq, corun__report_view *out);

/* The progress of a kernel of use seq none of whose launches is in flight,
 * from its report: true with every task done if a scheduled launch's worker
 * wrote FINISHED for this use (corun_ctl.h), false if not (halted, evicted,
 * limited, or another use's report): read the control block then. */
bool corun__ctl_progress_reported(const corun__ctl_host *h, const volatile corun_report *r,
                                  uint32_t seq, corun_progress *out);

/* Workers for n CapSMs of per_sm each on SMs [sm_lo, sm_hi] of sm_count.
 * A launch bound to fewer SMs than the GPU has carries more workers: the
 * hardware places workers on every SM with a free slot, and those outside
 * the range leave at their first claim without running a task; n CapSMs'
 * worth stay if n * per_sm * sm_count / bound are launched, capped at one
 * per slot of the GPU (more would only wait for slots). 0 if the count does
 * not fit 32 bits. */
uint32_t corun__workers_for(uint32_t n, uint32_t per_sm, uint32_t sm_lo, uint32_t sm_hi,
                            uint32_t sm_count);
/* w workers, but on the whole GPU no more than tasks: more would only start,
 * find nothing and leave, and on an idle GPU the hardware puts them on SMs
 * that already have one, where the first to start claim tasks beside each
 * other. Scheduled launches and direct kernels' primary grids alike. */
uint64_t corun__workers_capped(uint64_t w, uint32_t sm_lo, uint32_t sm_hi, uint32_t sm_count,
                               uint64_t tasks);
/* A direct kernel's primary grid: corun__workers_for, capped
 * (corun__workers_capped; each worker runs its preset task). */
uint32_t corun__direct_workers(uint32_t n, uint32_t per_sm, uint32_t sm_lo, uint32_t sm_hi,
                               uint32_t sm_count, uint64_t tasks);
/* Whether a direct kernel of `tasks` on n CapSMs of per_sm each, SMs
 * [sm_lo, sm_hi] of sm_count, would preset every task (corun_ctl.h): the
 * whole GPU, and a worker for each task. Then no halt, eviction or
 * narrowing can take a task from it, and the plain kernel does the same. */
bool corun__direct_one_wave(uint32_t n, uint32_t per_sm, uint32_t sm_lo, uint32_t sm_hi,
                            uint32_t sm_count, uint64_t tasks);
/* Whether a direct kernel's primary grid may take the grid form (corun_ctl.h):
 * n CapSMs, as many as the GPU has SMs, and all its SMs (its blocks go
 * wherever a slot frees); no hold; more tasks than its w workers (so not one
 * wave) and no more than a grid of one dimension holds. */
bool corun__direct_grid(uint32_t n, uint32_t w, uint32_t sm_lo, uint32_t sm_hi,
                        uint32_t sm_count, uint64_t tasks, bool hold);

/* The relay (corun_ctl.h): stores the writes among w[0..n) that are signal
 * words (halt_gen, evict_below, sm_lo, sm_hi_inv: the block's first
 * CORUN_MIRROR_SIGNALS bytes) into the block's mirror m, each as one 32-bit
 * store. A writer does this before it issues the writes on its stream. */
void corun__ctl_mirror(volatile corun_mirror *m, const corun__ctl_write *w, size_t n);

/* The grid of a direct kernel's launch of w workers (per_sm per SM, on SMs
 * [sm_lo, sm_hi] of sm_count) for a kernel of `tasks`: where it has more
 * tasks than workers, a relay block comes first where a slot is free for it
 * (fewer workers than slots on the GPU, or a launch bound to some SMs, whose
 * workers elsewhere leave at once) or where the kernel runs 64 waves or
 * more, which then gives one worker up for it (its preset shrinks with it);
 * none otherwise (a relay in a grid that fills the GPU would leave its last
 * worker waiting for a slot until the tasks run out; with no more tasks than
 * workers each runs its preset task, whatever the signals say). Returns the
 * workers; *relay: a relay block comes before them. */
uint32_t corun__relay_plan(uint32_t w, uint32_t per_sm, uint32_t sm_lo, uint32_t sm_hi,
                           uint32_t sm_count, uint64_t tasks, bool *relay);
#define CORUN_RELAY_MIN_WAVES 64

/* Applies writes to a block in memory, as the device sees them (the
 * simulator's device, and tests). */
void corun__ctl_apply(corun_ctl *blk, const corun__ctl_write *w, size_t n);

#endif
