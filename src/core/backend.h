/*
 * backend.h — the one interface through which the scheduler drives a GPU.
 *
 * Two implementations sit behind it: `cuda` (a real GPU, driver API) and
 * `sim` (a discrete-event GPU). The scheduler never knows which one it has;
 * where they differ, it asks for a capability (caps).
 *
 * Words. A *kernel* is what a program registers (corun_kernel); a *job* is
 * one launch of it, as the scheduler tracks it (corun__job, the public
 * corun_job); an *exec* (corun__exec) is a backend's handle of one job; a
 * *declaration* is a kernel's source text as corun-cc finds it.
 *
 * Model. An exec is one launch of a kernel as the user wrote it: a virtual grid of block-tasks plus, for corun-managed
 * kernels, a control block (corun_ctl.h; the words to write come from
 * src/core/ctl.h). The scheduler may then
 *  - launch_workers: start `nworkers` persistent workers on it (any number
 *    of times: that is how a kernel grows or resumes), or enqueue them
 *    behind the kernel's resume gate (they start once CORUN_SIG_RESUME
 *    reaches their number);
 *  - launch_plain:   run it the ordinary way, one thread block per task, for
 *    the baselines (`mps`, `priority`; `green` in one of the two static SM
 *    partitions that `partition` made),
 *  - signal:         write one control-block intent (stop, evict, SM range,
 *    task limit, workers hint, resume); it reaches the workers a little later,
 *  - progress:       read the counters,
 *  - poll:           wait for launches to finish and direct kernels to report.
 * Each launch carries a cookie chosen by the scheduler; poll reports the
 * cookie once every worker (or block) of that launch has left the GPU.
 *
 * Direct kernels (caps & CORUN_BE_DIRECT). direct_launch, called by the
 * program's own thread, opens a kernel and launches its primary grid in the
 * program's stream in one go, with no lock the scheduler holds: the
 * scheduler hears of it later (corun__sched_adopt, then bind). Its device
 * side marks it finished, or holds the stream when its workers leave with
 * tasks remaining (corun_ctl.h); poll reports that as HELD, FINISHED or
 * RELEASED events with the cookie given to bind, never before bind.
 *
 * Time. now_ns() is the backend's clock: virtual for sim, CLOCK_MONOTONIC for
 * cuda. poll(deadline) returns when at least one event is there or when the
 * clock reached the deadline; sim advances its clock to exactly the event or
 * the deadline, cuda sleeps (never spins) until then.
 *
 * Threads. Backends without CORUN_BE_VIRTUAL_TIME are called from the
 * scheduler's thread and, for direct_launch only, from any thread at the
 * same time; wake may be called from any thread. A backend with it is called
 * by one thread at a time.
 *
 * Ownership. Specs are copied by exec_open; the backend owns the exec
 * until exec_close. The scheduler closes a kernel once no launch of it is
 * in flight, except when it is destroyed: then the backend must wait for
 * (cuda) or cancel (sim) what is still in flight before freeing.
 */
#ifndef CORUN_CORE_BACKEND_H
#define CORUN_CORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corun/corun.h"

/* How long one block-task of a synthetic kernel takes alone on the GPU. */
typedef enum corun__dist_kind {
    CORUN_DIST_CONST,   /* a */
    CORUN_DIST_UNIFORM, /* uniform in [a, b) */
    CORUN_DIST_NORMAL,  /* mean a, sd b, truncated at 0.05 a */
    CORUN_DIST_EXP      /* exponential, mean a */
} corun__dist_kind;

typedef struct corun__dist {
    corun__dist_kind kind;
    double a, b; /* nanoseconds */
} corun__dist;

/* Where a kernel's code comes from. */
typedef enum corun__code_kind {
    CORUN_CODE_SYNTHETIC, /* described by duration and memory behaviour */
    CORUN_CODE_USER,      /* registered CUDA functions (caps & CORUN_BE_USER_CODE) */
    CORUN_CODE_BUILTIN    /* one of the repo's real kernels (corun__builtin): a GPU
                             backend runs its code on buffers of its own, a simulator
                             the declared behaviour as for a synthetic kernel */
} corun__code_kind;

/* The real kernels a scenario may name (kernel key "code"): gpu-check's
 * (gpu/check/kernels.cuh) and two of gpu/apps' programs' (as corun-cc
 * transforms them), each with the block and grid rank it is written for;
 * the problem size follows from the grid. */
typedef enum corun__builtin {
    CORUN_BUILTIN_NONE,
    CORUN_BUILTIN_MATMUL, /* 32x32 threads, 2D grid: C = A B, n = 32 max(grid.x, grid.y) */
    CORUN_BUILTIN_REDUCE, /* 256 threads, 1D grid: the sum of 1024 grid.x integers */
    CORUN_BUILTIN_VADD,   /* 256 threads, 1D grid: c = a + b over 256 grid.x floats */
    CORUN_BUILTIN_STENCIL3D,    /* 8x8x4 threads, 3D grid: a 7-point stencil over an
                                   8 grid.x x 8 grid.y x 4 grid.z volume */
    CORUN_BUILTIN_BLACKSCHOLES, /* 128 threads, 1D grid: 128 grid.x options */
    CORUN_BUILTIN_TRANSPOSE,    /* 32x8 threads, 2D grid: a 32 grid.x x 32 grid.y matrix */
    CORUN_BUILTIN_RAGGED,       /* 256 threads, 1D grid: 256 grid.x - 17 values mixed, the
                                   last block's last threads past the end */
    CORUN_BUILTIN_LONGTASK,     /* 256 threads, 1D grid: an integer mixing loop of
                                   CORUN_BUILTIN_LONGTASK_ROUNDS rounds per thread */
    CORUN_BUILTIN_MD5SEARCH,    /* gpu/apps/md5search's FindKeyWithDigest_Kernel: 256 threads,
                                   1D grid: MD5 of 2048 grid.x keys (compute-bound) */
    CORUN_BUILTIN_BACKPROP,     /* gpu/apps/backprop's bpnn_adjust_weights_cuda: 16x16
                                   threads, 2D grid: the weights of 16 grid.x grid.y inputs
                                   to 16 hidden units (memory-bound) */
    CORUN_BUILTIN_COUNT
} corun__builtin;

/* longtask's rounds as a scenario runs it: block-tasks of ~125 us on the H100
 * (4,500 rounds took ~570 us there). */
#define CORUN_BUILTIN_LONGTASK_ROUNDS 1000

/* What a backend can do (corun__backend_ops.caps). */
#define CORUN_BE_USER_CODE 1u    /* runs the CUDA kernels a program registers */
#define CORUN_BE_VIRTUAL_TIME 2u /* the clock moves only inside poll: nothing runs
                                    between calls, so no scheduler thread */
#define CORUN_BE_DIRECT 4u       /* direct_launch */

/* A GPU's identity across the processes of a host (a client's HELLO): a
 * real GPU's PCI location, with the top bit set so that it is never a
 * simulated GPU's, which is its index. */
static inline uint32_t corun__gpu_id_pci(uint32_t domain, uint32_t bus, uint32_t device)
{
    return 0x80000000u | (domain & 0x7fffu) << 16 | (bus & 0xffu) << 8 | (device & 0xffu);
}

/* Bytes of a ctl_share handle (a CUipcMemHandle). */
#define CORUN_CTL_HANDLE 64

/* Most DRAM demand a synthetic kernel may declare, in peaks (see mem_bw). */
#define CORUN_MEM_BW_MAX 16.0

typedef struct corun__kspec {
    char name[64];
    corun_dim3 grid;
    corun_dim3 block;
    uint32_t smem_dynamic;
    corun_kernel_shape shape;   /* per-block resources (sim: as given; cuda: measured) */
    corun__code_kind code;
    /* synthetic behaviour */
    corun__dist task_ns;        /* duration of one block-task alone on the GPU */
    double mem_frac;            /* share of a task's solo time bound by DRAM, 0..1 */
    double mem_bw;              /* DRAM bandwidth the kernel demands alone at full
                                   occupancy, as a share of the peak, 0..CORUN_MEM_BW_MAX.
                                   Above 1 the kernel is bandwidth-bound even alone: its
                                   tasks then take longer than task_ns, and it loses
                                   little when it runs on fewer SMs (Slate, Fig. 1) */
    double compute;             /* FLOP rate a block-task achieves alone at full
                                   occupancy, as a share of the peak, 0..1; 0 = not
                                   declared (cuda: FMAs fill the task's compute time) */
    corun__builtin builtin;     /* CORUN_CODE_BUILTIN: which */
    /* user code (CORUN_BE_USER_CODE) */
    const void *user;           /* what code_register returned */
    bool ahead;                 /* launch its workers through the ahead entry
                                   (corun__entry_decide checked that it has one) */
    const void *args;           /* one pointer per parameter value, as for
                                   cuLaunchKernel; the values are copied */
    uint64_t task_hits;         /* device address of a uint32 per task counted by
                                   CORUN_TASK_HITS builds; 0 = none */
} corun__kspec;

typedef enum corun__signal {
    CORUN_SIG_HALT_GEN,    /* workers with launch generation < value leave */
    CORUN_SIG_EVICT_BELOW, /* workers with CapSM id < value leave */
    CORUN_SIG_SM_RANGE,    /* value = lo | hi << 32: workers outside leave */
    CORUN_SIG_TASK_LIMIT,  /* claim nothing at or beyond value; only while no launch of
                              the kernel is in flight (else CORUN_EBUSY) */
    CORUN_SIG_NWORKERS,    /* hint: workers asked to run (tail shrink) */
    CORUN_SIG_RESUME       /* gated launches with a gate <= value start */
} corun__signal;

typedef struct corun__launch_req {
    uint32_t nworkers;      /* thread blocks to launch */
    uint32_t base;          /* worker id of the first (CapSM id = worker id / per_sm) */
    uint32_t gen;           /* launch generation (see CORUN_SIG_HALT_GEN) */
    int32_t priority;       /* > 0: high-priority stream */
    uint32_t gate;          /* > 0: start only once CORUN_SIG_RESUME reaches it */
    uint64_t cookie;        /* reported by poll when the launch is over */
    uint8_t part;           /* 0: any SM; 1, 2: only that partition's SMs
                               (partition; not for direct kernels) */
    bool hold;              /* its workers hold their slots through the
                               kernel's tail (corun_worker_arg.hold) */
} corun__launch_req;

/* A direct launch (direct_launch): the primary grid in the program's stream. */
typedef struct corun__direct_req {
    void *stream;           /* cuda: the CUstream (NULL: the legacy default
                               stream); sim: any pointer naming a stream */
    uint32_t capsm;         /* CapSMs it runs on (corun__workers_for with the
                               shape's occupancy); 0: the plain kernel, not
                               preemptible */
    uint32_t sm_lo, sm_hi;  /* the SMs it may use */
    int32_t priority;       /* > 0: LS (the sim dispatches it first) */
    bool hold;              /* as corun__launch_req.hold */
    bool one_wave_plain;    /* the plain kernel where every task would be
                               preset (corun__direct_one_wave) */
    bool grid;              /* the grid form where it applies
                               (corun__direct_grid; corun_ctl.h) */
} corun__direct_req;

/* What a direct launch got (direct_launch). */
typedef struct corun__direct_got {
    uint32_t per_sm;        /* the shape's worker occupancy (also for plain) */
    bool ahead;             /* its workers run the ahead entry (spec->ahead
                               where it may) */
    bool grid;              /* its primary grid is the grid form */
} corun__direct_got;

typedef enum corun__bev_kind {
    CORUN_BEV_LAUNCH,       /* every block of a launch has left the GPU */
    CORUN_BEV_HELD,         /* direct: the primary grid holds the stream; done, live */
    CORUN_BEV_FINISHED,     /* direct: every task ran, the stream goes on */
    CORUN_BEV_RELEASED      /* direct: let go with tasks left (teardown) */
} corun__bev_kind;

typedef struct corun__bevent {
    uint64_t cookie;        /* the launch, or the direct kernel's (bind) */
    uint64_t time_ns;       /* when the backend saw it */
    int status;             /* CORUN_OK, or the launch failed on the device */
    corun__bev_kind kind;
    uint32_t done, live;    /* HELD, FINISHED: tasks done, workers running */
    uint32_t task_ns;       /* HELD, FINISHED: task time the device measured */
    uint32_t run_ns;        /* FINISHED: the launch's run on the device when its
                               first grid ran every task (0 = not known) */
} corun__bevent;

/* What a kernel achieves alone on the whole GPU (Slate's profile, §III-B). */
typedef struct corun__rates {
    double flop_frac;        /* achieved FLOP/s over the device's peak FLOP/s */
    double bw_frac;          /* achieved DRAM bytes/s over the peak bytes/s */
    double flops_per_s, bytes_per_s;     /* achieved */
    double peak_flops, peak_bytes_per_s; /* the device's, measured by the backend */
    char source[320];        /* how: "cupti counters", "counted operations (why)" */
} corun__rates;

typedef struct corun__exec corun__exec;
typedef struct corun__backend corun__backend;

typedef struct corun__backend_ops {
    const char *name;
    unsigned caps;          /* CORUN_BE_* */
    /* Prepare a kernel. *per_sm receives the max active workers per SM of its
     * worker form (SMGuard's MaxActivePBlock); for plain-only use it is the
     * plain kernel's occupancy. Returns CORUN_ERANGE for shapes that cannot
     * run, with a reason in why. */
    int (*exec_open)(corun__backend *be, const corun__kspec *spec, corun__exec **out,
                       uint32_t *per_sm, char *why, size_t why_len);
    void (*exec_close)(corun__backend *be, corun__exec *k);
    /* CORUN_BE_USER_CODE: takes a program's kernel (plain, worker and ahead
     * entry) and returns what kspec.user names it by; freed by destroy. */
    int (*code_register)(corun__backend *be, const corun_kernel_desc *d, const void **code,
                         char *why, size_t why_len);
    /* CORUN_BE_DIRECT: opens spec's kernel and launches its primary grid in
     * req->stream (or, capsm = 0, the plain kernel). Thread-safe; takes
     * no lock the scheduler holds. *got: what it got (corun__direct_got). Returns
     * CORUN_EBUSY when no control block is free (the caller may launch the
     * plain kernel instead), CORUN_ENOTSUP while the stream is capturing. */
    int (*direct_launch)(corun__backend *be, const corun__kspec *spec,
                         const corun__direct_req *req, corun__exec **out,
                         corun__direct_got *got, char *why, size_t why_len);
    /* CORUN_BE_DIRECT: the cookie poll reports k's direct events with. */
    void (*bind)(corun__backend *be, corun__exec *k, uint64_t cookie);
    int (*launch_workers)(corun__backend *be, corun__exec *k, const corun__launch_req *req);
    /* Plain launch: grid as in the spec, on a stream of the given priority. */
    int (*launch_plain)(corun__backend *be, corun__exec *k, int32_t priority, uint64_t cookie);
    /* Optional: split the GPU's SMs, once, into two static partitions (CUDA
     * green contexts on the GPU): the first of at least `sms` SMs, rounded
     * up to what the hardware can split, or, where that would leave the
     * second none, of the most that leaves it some (*got: its SM count);
     * the second of the rest. CORUN_ENOTSUP with why where the GPU or
     * driver cannot. */
    int (*partition)(corun__backend *be, uint32_t sms, uint32_t *got, char *why,
                     size_t why_len);
    /* Optional, after partition: as launch_plain, confined to partition
     * part (1: the first, 2: the rest). */
    int (*launch_plain_part)(corun__backend *be, corun__exec *k, int32_t priority,
                             unsigned part, uint64_t cookie);
    int (*signal)(corun__backend *be, corun__exec *k, corun__signal sig, uint64_t value);
    /* Only while no launch of k is in flight (else CORUN_EBUSY): set the
     * task counter and the limit at once; the done counter is kept. Raise a
     * limit after a launch this way, not with CORUN_SIG_TASK_LIMIT: the
     * launch's failed claims have moved `next` past the old limit, and the
     * tasks between would otherwise never run. */
    int (*rewind)(corun__backend *be, corun__exec *k, uint64_t next, uint64_t limit);
    int (*progress)(corun__backend *be, corun__exec *k, corun_progress *out);
    uint64_t (*now_ns)(corun__backend *be);
    /* Wait until a launch finishes or the clock reaches deadline_ns. Fills up
     * to cap events; *n = 0 means the deadline passed with nothing finished,
     * or (backends with wake) that the wait was woken: callers loop. */
    int (*poll)(corun__backend *be, uint64_t deadline_ns, corun__bevent *ev, size_t cap,
                size_t *n);
    /* Optional: measure spec's code alone on the whole GPU (one plain launch,
     * no other work in flight). NULL: the caller derives the rates from the
     * declared behaviour (sim). CORUN_ENOTSUP for code it cannot measure. */
    int (*rates)(corun__backend *be, const corun__kspec *spec, corun__rates *out, char *why,
                 size_t why_len);
    /* Optional: make a poll() in progress on another thread return. */
    void (*wake)(corun__backend *be);
    /* Optional: a line on the backend's state now (control blocks in use,
     * launches in flight), for diagnostics; any thread. */
    void (*describe)(corun__backend *be, char *buf, size_t len);

    /* Optional (cuda): the control blocks shared with another process of
     * the host (corund), which narrows this process's kernels itself.
     * ctl_share exports them (a CUDA IPC handle, CORUN_CTL_HANDLE bytes,
     * and the number of blocks) and from then on keeps live[0..nwords)
     * (64-bit words, bit s: block s holds a kernel) up to date with atomic
     * read-modify-writes (__atomic builtins: C++ includes this header),
     * until called again with another map, or with live NULL (then it only
     * stops writing). */
    int (*ctl_share)(corun__backend *be, void *handle, uint32_t *nslots, uint64_t *live,
                     uint32_t nwords, char *why, size_t why_len);
    /* Optional (cuda): the memory file (a memfd sealed at its size) of the
     * blocks' signal mirrors (corun_ctl.h, the relay), CORUN_MIRROR_SLOTS of
     * them CORUN_MIRROR_STRIDE bytes apart, which corund maps and writes
     * before it narrows a kernel; -1 where there are none. The backend keeps
     * it open. */
    int (*mirror_fd)(corun__backend *be);
    /* Another process's shared blocks (its ctl_share handle), opened in
     * this backend's context; NULL with why where they cannot be. */
    void *(*peer_open)(corun__backend *be, const void *handle, uint32_t nslots, char *why,
                       size_t why_len);
    /* Narrows the kernel in the peer's block `slot` to SMs [lo, hi] (its
     * sm_lo and sm_hi_inv, on the highest-priority stream; no wait): its
     * workers elsewhere leave at their next chunk. */
    int (*peer_range)(corun__backend *be, void *peer, uint32_t slot, uint32_t lo, uint32_t hi);
    void (*peer_close)(corun__backend *be, void *peer);
    void (*destroy)(corun__backend *be);
} corun__backend_ops;

struct corun__backend {
    const corun__backend_ops *ops;
    corun_gpu_desc desc;
    uint32_t gpu_id;            /* which GPU of the host: corun__gpu_id_pci of a real
                                   one, a simulated one's index (setting DEVICE) */
};

#endif
