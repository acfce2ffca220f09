/*
 * sched.h — the event-driven scheduler: it owns the kernels and the
 * decisions, and drives a GPU only through a backend (backend.h).
 *
 * One thread runs a scheduler. Work enters by corun__sched_submit; the
 * scheduler then calls its policy (policy.h) on four events — a kernel
 * arrives, a kernel pauses (its workers all left with tasks remaining), a
 * kernel completes, a policy timer fires — and the policy answers with the
 * actions below. corun__sched_step waits for the backend once and handles
 * what it reports.
 *
 * CapSMs (SMGuard §4). The GPU has sm_count CapSMs. A kernel running on n
 * CapSMs has n x per_sm workers; the scheduler numbers a kernel's CapSMs
 * with ever-growing ids and keeps the live ones as a window [capsm_lo,
 * capsm_hi): growing launches workers for new ids at the top, shrinking
 * evicts ids at the bottom (workers with id < capsm_lo leave). The CapSMs a
 * kernel holds are capsm_hi - capsm_lo; the free ones are sm_count minus the
 * sum over kernels. CapSMs are capacity, not places: a kernel's workers may
 * sit on any SMs.
 */
#ifndef CORUN_CORE_SCHED_H
#define CORUN_CORE_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/backend.h"
#include "core/settings.h"

typedef struct corun__sched corun__sched;
typedef struct corun__policy_ops corun__policy_ops;

typedef enum corun__jstate {
    CORUN_JS_WAITING,  /* submitted, never started */
    CORUN_JS_RUNNING,  /* has (or is launching) workers or a plain grid */
    CORUN_JS_STOPPING, /* told to halt; workers still leaving */
    CORUN_JS_PAUSED,   /* no worker left, tasks remain */
    CORUN_JS_DONE,     /* every task ran */
    CORUN_JS_FAILED    /* a launch failed; see status */
} corun__jstate;

typedef struct corun__job corun__job;

/* Called when a kernel reaches DONE or FAILED. The kernel record stays valid
 * until corun__sched_release. */
typedef void (*corun__job_done_fn)(corun__sched *s, corun__job *k, void *user);

struct corun__job {
    uint32_t id;               /* unique while the record lives */
    char name[64];
    corun_launch_attr attr;
    corun__exec *ex;
    uint64_t tasks;
    uint32_t per_sm;           /* max active workers per SM (SMGuard's MaxActivePBlock) */
    uint32_t block_threads;    /* threads per block, as launched (duration models) */
    uint32_t smem_bytes;       /* shared memory per block, static + dynamic */
    corun__jstate state;
    bool plain;                /* runs as an ordinary grid (baselines) */
    int status;                /* CORUN_OK, or why it failed */

    uint32_t capsm_lo, capsm_hi; /* live CapSM window, see above */
    uint32_t sm_lo, sm_hi;     /* SMs its workers may run on now */
    uint32_t sm_top;           /* sm_hi as bound (corun__sched_bind); a bound kernel
                                  shrinks by lowering sm_hi, grows back up to this */
    uint8_t part;              /* its launches go to this SM partition (0: none;
                                  corun__sched_place) */
    bool hold;                 /* its launches hold their slots through its tail
                                  (corun_worker_arg.hold); set by a policy */
    uint32_t gen;              /* generation of new launches */
    uint32_t inflight;         /* launches not yet reported finished */
    uint32_t launches;         /* launches made, all kinds */
    uint32_t preemptions;      /* times halted */

    uint64_t t_submit;         /* ns, backend clock */
    uint64_t t_start;          /* first launch */
    uint64_t t_end;            /* DONE or FAILED */
    uint64_t t_run_since;      /* start of the current running stretch (while RUNNING/STOPPING) */
    uint64_t run_ns;           /* time spent RUNNING/STOPPING, all stretches */
    double capsm_ns;           /* CapSMs held, integrated over time (CapSM x ns): the
                                  kernel's share of the GPU; 0 for plain kernels. While
                                  more CapSMs are held than the GPU has SMs (manual
                                  oversubscribes), each counts sm_count / held of one, so
                                  the kernels together never hold more than the GPU.
                                  Up to date at the last change of its CapSMs:
                                  corun__sched_capsm_ns reads it up to now */
    double capsm_mark;         /* the scheduler's share clock at that change */
    uint64_t done_tasks;       /* from the last progress read */
    uint32_t task_ns;          /* block-task time its workers measured (progress), 0 = none */
    bool ran_ahead;            /* its workers ran the ahead entry (progress) */
    uint32_t dev_run_ns;       /* direct, never preempted: its run on the device
                                  (worker 0's start to the last leave), 0 = none */

    /* direct kernels (corun__sched_adopt): launched by the program's thread
     * in its stream; their device side holds the stream while halted */
    bool direct;
    bool grid;                 /* its primary grid is the grid form and runs yet
                                  (corun_ctl.h): halted and resumed as workers
                                  before an eviction or narrowing (degrid) */
    uint32_t gates;            /* resume gates enqueued (their grids wait for them) */
    uint32_t gates_open;       /* gates opened (CORUN_SIG_RESUME) */
    uint32_t gate_base;        /* CapSM id of the last gated grid's first workers */

    corun__job_done_fn on_done;
    void *user;
    void *pdata;               /* policy-private */

    corun__job *prev, *next; /* in the scheduler's list of live kernels */
};

/* What changed of a job, for an observer (corun__sched_opts.observe). */
typedef enum corun__job_change {
    CORUN_JC_RUN,     /* it runs: started, resumed or taken in (its CapSMs now) */
    CORUN_JC_STOP,    /* it was told to stop (a halt: its workers leave) */
    CORUN_JC_PAUSED,  /* it is halted: its workers are gone */
    CORUN_JC_RESIZE   /* its CapSMs changed while it runs */
} corun__job_change;

typedef struct corun__sched_opts {
    corun__backend *backend;          /* not owned */
    const corun__policy_ops *policy;
    corun__settings settings;
    /* Optional: hears each job's changes as the scheduler makes them, on
     * the thread that makes them, under whatever lock it holds (so it must
     * not call back into the scheduler); a job's end is on_done's. */
    void (*observe)(void *ctx, const corun__job *k, corun__job_change what);
    void *observe_ctx;
    char *why;                        /* optional: why creation failed */
    size_t why_len;
} corun__sched_opts;

int corun__sched_create(const corun__sched_opts *o, corun__sched **out);
/* Frees the scheduler and every kernel record; kernels still on the GPU are
 * halted first (their launches are waited for, at most a second). */
void corun__sched_destroy(corun__sched *s);

/* Submits one kernel launch. The spec is copied. Returns CORUN_ERANGE or
 * CORUN_EINVAL (with why) for shapes that cannot run; nothing is then
 * launched. *out stays owned by the scheduler (release it after on_done). */
int corun__sched_submit(corun__sched *s, const corun__kspec *spec, const corun_launch_attr *attr,
                        corun__job_done_fn on_done, void *user, corun__job **out, char *why,
                        size_t why_len);
/* Forgets a DONE or FAILED kernel (once its last launch has ended). */
void corun__sched_release(corun__sched *s, corun__job *k);

/* What a direct launch did (backend direct_launch), for corun__sched_adopt. */
typedef struct corun__direct_info {
    uint32_t per_sm;           /* worker occupancy */
    uint32_t capsm;            /* CapSMs it runs on (0: the plain kernel) */
    uint32_t sm_lo, sm_hi;     /* its SMs */
    uint64_t t_launch;         /* backend clock at the launch */
    bool ahead;                /* its workers run the ahead entry */
    bool grid;                 /* its primary grid is the grid form */
} corun__direct_info;

/* Takes in a kernel the program's thread launched itself (spec as given to
 * direct_launch, ex what it returned): RUNNING on info->capsm CapSMs, or,
 * launched plain, DONE at once (counted in corun__sched_direct_plain). The
 * policy's `direct` callback hears of it; bind is called with the kernel. */
int corun__sched_adopt(corun__sched *s, const corun__kspec *spec, const corun_launch_attr *attr,
                       corun__exec *ex, const corun__direct_info *info,
                       corun__job_done_fn on_done, void *user, corun__job **out);
/* Direct launches that ran as plain kernels. */
uint64_t corun__sched_direct_plain(const corun__sched *s);
/* Kernels in the grid form halted and resumed as workers before an eviction
 * or a narrowing (corun_ctl.h). */
uint64_t corun__sched_degrids(const corun__sched *s);
/* The policy's allotment of class cls now (policy.h). */
struct corun__allotment;
void corun__sched_allot(corun__sched *s, corun_class cls, struct corun__allotment *out);

/* Waits (or simulates) until the backend reports something or the clock
 * reaches deadline_ns, and handles it: policy timers whose time has come,
 * finished launches, completions. Returns CORUN_OK or a backend error. */
int corun__sched_step(corun__sched *s, uint64_t deadline_ns);
/* As corun__sched_step, but calls unlock(arg) before waiting on the backend
 * and lock(arg) after, so other threads holding that lock may act on the
 * scheduler meanwhile. */
int corun__sched_step_unlocked(corun__sched *s, uint64_t deadline_ns, void (*unlock)(void *),
                               void (*lock)(void *), void *arg);
uint64_t corun__sched_now(const corun__sched *s);

/* ---- actions, for policies (and the host API) ---------------------------- */

/* Start or resume k on n CapSMs (n x per_sm workers). A paused kernel
 * continues from its counter. */
int corun__sched_run(corun__sched *s, corun__job *k, uint32_t n);
/* Launch k as one ordinary grid on a stream of the given priority. */
int corun__sched_run_plain(corun__sched *s, corun__job *k, int32_t priority);
/* From a policy's create: split the GPU into two static SM partitions
 * (backend.h, partition), the first for LS kernels, of at least GREEN_LS_SMS
 * SMs (0: RESERVE_CAPSM; *got: how many it has), the second the rest. On
 * failure (CORUN_ENOTSUP where the backend cannot) the reason goes to the
 * opts' why, and create returns the code. */
int corun__sched_split_ls(corun__sched *s, uint32_t *got);
/* As corun__sched_run_plain, in partition part (1 or 2) of that split. */
int corun__sched_run_plain_part(corun__sched *s, corun__job *k, int32_t priority, unsigned part);
/* Add n CapSMs to a running kernel (new workers on the same control block).
 * A bound kernel that was shrunk first widens its SM range by n again, up to
 * the range it was bound to. */
int corun__sched_grow(corun__sched *s, corun__job *k, uint32_t n);
/* Take n CapSMs from a running kernel by evicting its lowest ones; their
 * workers finish their chunk and leave. The CapSMs count as free at once.
 * A kernel bound to an SM range (corun__sched_bind) gives up whole SMs
 * instead: its range loses its top n SMs, and the workers there leave. */
int corun__sched_shrink(corun__sched *s, corun__job *k, uint32_t n);
/* Moves a running bound kernel (corun__sched_bind) to SMs [lo, hi] without
 * stopping it: its workers on SMs it leaves go after their chunk (a CapSM
 * each), workers are launched for the SMs it enters (a CapSM each), and it
 * keeps at least one CapSM. What corun__sched_shrink and _grow do at the top
 * of a range, at either end (HSM's repartitions move the low end of the
 * kernel above a boundary). */
int corun__sched_move(corun__sched *s, corun__job *k, uint32_t sm_lo, uint32_t sm_hi);
/* Temporal preemption: every worker of k leaves after its chunk. k turns
 * PAUSED (policy->paused is called) once the last one has left, or DONE.
 * A direct kernel's resume grid is enqueued first, behind a gate that
 * corun__sched_run opens (corun_ctl.h): resuming it needs no launch. */
int corun__sched_stop(corun__sched *s, corun__job *k);
/* Bind k's workers to SMs [lo, hi] (Slate/FLEP spatial); workers elsewhere
 * leave. Also before k's first launch: its launches then carry enough extra
 * workers to fill the range (see launch_workers in sched.c). */
int corun__sched_bind(corun__sched *s, corun__job *k, uint32_t sm_lo, uint32_t sm_hi);
/* k's later worker launches go to partition part (1 or 2) of the split made
 * by corun__sched_split_ls, or anywhere (0): the hardware places them there,
 * so none is lost to a range. Not for plain or direct kernels. */
int corun__sched_place(corun__sched *s, corun__job *k, unsigned part);
/* Epoch quota: k claims no task at or beyond `limit` (absolute task index).
 * Set at once if k has never been launched; otherwise it takes effect when k
 * is next resumed (a kernel that stops at its limit pauses, and is resumed
 * with the limit then pending). */
int corun__sched_limit(corun__sched *s, corun__job *k, uint64_t limit);
/* Ask the policy to be called back at time t (the earliest request wins). */
/* Keeps every kernel's workers on SMs [lo, hi] (corund's allotment for
 * this process): while it is narrower than the GPU every kernel runs on the
 * whole window, whatever range the policy gave it (kept, for when the window
 * is lifted); running kernels are moved at once, direct launches get it
 * through corun__sched_allot. [0, sm_count - 1] lifts it. CORUN_ERANGE for
 * an empty or out-of-GPU window. */
int corun__sched_window(corun__sched *s, uint32_t lo, uint32_t hi);
/* Ends k without running the tasks it has not run (its owner went away):
 * halted if it runs, then FAILED with CORUN_ECANCELED once none of its
 * launches is in flight, at once if it waits or is paused. A plain or
 * direct kernel cannot be cut: CORUN_ENOTSUP (it runs to its end). */
int corun__sched_cancel(corun__sched *s, corun__job *k);
void corun__sched_timer(corun__sched *s, uint64_t t);
/* Reads k's counters from the backend (also refreshes k->done_tasks). */
int corun__sched_progress(corun__sched *s, corun__job *k, corun_progress *out);

/* ---- what policies may read --------------------------------------------- */

const corun_gpu_desc *corun__sched_gpu(const corun__sched *s);
/* The backend's name ("sim", "cuda"): measurements (profiles) are only
 * comparable within one. */
const char *corun__sched_backend(const corun__sched *s);
/* The backend's capabilities (CORUN_BE_*). */
unsigned corun__sched_caps(const corun__sched *s);
const corun__settings *corun__sched_settings(const corun__sched *s);
/* CapSMs not held by any kernel. */
uint32_t corun__sched_free_capsm(const corun__sched *s);
/* k's CapSM-time (corun__job.capsm_ns) up to now. */
double corun__sched_capsm_ns(const corun__sched *s, const corun__job *k);
/* Live kernels (not yet released), in submission order. */
corun__job *corun__sched_first(const corun__sched *s);
/* Latency-sensitive as the scheduler, its policies and corund treat a
 * launch: class ls, or a priority above 0. */
static inline bool corun__attr_ls(const corun_launch_attr *a)
{
    return a->cls == CORUN_CLASS_LS || a->priority > 0;
}

static inline uint32_t corun__job_capsm(const corun__job *k)
{
    return k->capsm_hi - k->capsm_lo;
}
static inline bool corun__job_active(const corun__job *k)
{
    return k->state == CORUN_JS_RUNNING || k->state == CORUN_JS_STOPPING;
}

#endif
