/*
 * cuda_int.h — the CUDA backend's internal state, shared by its files:
 *
 *   device.c      the process-wide device state: driver, context, limits,
 *                 the synthetic kernel's module (once per process);
 *   synth.c       the synthetic kernel of scenario workloads: calibration,
 *                 peaks, memory traffic, Slate's rates (with the CUPTI glue);
 *   code.c        kernels a program registers: their functions, parameter
 *                 layout and per-shape occupancy, cached; argument packing;
 *   slots.c       the control blocks and their reports: a pool of zeroed
 *                 blocks and the thread that zeroes finished ones;
 *   completion.c  how the host learns that launches finished (waiter
 *                 threads on events) and what direct kernels reported
 *                 (host memory), and poll;
 *   direct.c      direct launches: the program's thread launches the
 *                 primary grid in its own stream;
 *   launcher.c    the later grids of direct kernels (a halt's resume grid,
 *                 growth), launched by a thread of their own;
 *   cuda_backend.c the backend operations and the backend's life.
 *
 * Nothing declared here is visible outside src/backends/cuda/.
 *
 * Threads. The scheduler's thread calls the operations; any program thread
 * may call direct_launch meanwhile. What both touch has its own lock:
 * code->mu (per-shape cache), b->pool_mu (free blocks), b->mu (launch
 * queues, in-flight counts, the direct list), b->lq_mu (the launcher's
 * queue). The scheduler's thread issues only stream memory operations and
 * host-memory reads for direct kernels (corun_ctl.h says why); calls that
 * may wait on the driver run on the waiter, zeroing and launcher threads.
 */
#ifndef CORUN_BACKENDS_CUDA_INT_H
#define CORUN_BACKENDS_CUDA_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cuda/cuda_api.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/synth.h"
#include "core/ctl.h"
#include "corun/corun_ctl.h"

#define NSTREAMS 32            /* per priority level */
#define NGREEN 4               /* per green-context partition (policy green) */
#define GREEN_STREAM0 (2 * NSTREAMS)
#define NALLSTREAMS (2 * NSTREAMS + 2 * NGREEN)
#define CTL_SLOTS CORUN_MIRROR_SLOTS /* control blocks in the slab */
#define MAX_PARAMS 64
#define MAX_PARAM_BYTES 4096   /* the parameter space of a launch */
#define SYNTH_CAL_CACHE 32
#define SHAPE_CACHE 8          /* launch shapes remembered per registered kernel */
#define MAX_WAITERS 256

/* ---- device.c ----------------------------------------------------------- */

typedef struct synth_cal {
    uint32_t threads, smem;
    double it_per_ns;          /* iterations per ns of one block at full occupancy */
} synth_cal;

/* Devices the backend can run on: the first of a host's. */
#define CORUN_CUDA_MAX_DEVICES 16

/* Most device buffers a builtin kernel takes (blackscholes: five). */
#define BUILTIN_MAX_BUFS 5

typedef struct device_state {
    const corun__cu *cu;
    int ordinal;
    uint32_t gpu_id;            /* corun__gpu_id_pci of its PCI location */
    CUdevice dev;
    CUcontext ctx;
    CUmodule synth_mod;
    CUfunction synth_plain, synth_worker;
    corun_gpu_desc desc;
    char name[128];
    int prio_lo, prio_hi;       /* least and greatest stream priority */
    pthread_mutex_t cal_mu;     /* everything below up to error */
    synth_cal cal[SYNTH_CAL_CACHE];
    size_t ncal;
    /* The synthetic kernels' DRAM buffer and the device's peaks, measured
     * once: FMA and streaming probes, timed with events (counted) and, where
     * the hardware counters can be read, with CUPTI (meter). */
    CUdeviceptr synth_mem;
    CUstream probe;             /* calibrations, probes, meter */
    int peaks_ok;
    double peak_flop_ns, peak_byte_ns; /* counted, per ns */
    int meter_ok, meter_tried;  /* the counters can be read */
    char meter_why[256];        /* why they cannot */
    double meter_flop_ns, meter_byte_ns; /* peaks through the meter */
    /* The real kernels scenarios name (builtin.c), under builtin_mu: their
     * functions in synth_mod and their buffers, grown to the largest grid. */
    pthread_mutex_t builtin_mu;
    CUfunction builtin_fn[CORUN_BUILTIN_COUNT][3]; /* plain, worker, ahead (or NULL) */
    CUmodule builtin_mod[CORUN_BUILTIN_COUNT];     /* a gpu/apps kernel's own module */
    CUdeviceptr builtin_buf[CORUN_BUILTIN_COUNT][BUILTIN_MAX_BUFS];
    size_t builtin_bytes[CORUN_BUILTIN_COUNT][BUILTIN_MAX_BUFS];
    char error[256];
    int ok;
} device_state;

/* The state of the device `device` names (setting DEVICE: "auto" or an
 * ordinal), made once per process and device; NULL with the reason. */
device_state *corun__cuda_device(const char *device, char *why, size_t why_len);

/* True if r is success; otherwise writes "CALL failed: NAME: text" to why. */
bool corun__cu_ok(const corun__cu *cu, CUresult r, const char *call, char *why, size_t why_len);
#define CU_OK(cu, call, why, why_len) corun__cu_ok((cu), (call), #call, (why), (why_len))

uint64_t corun__mono_ns(void);

/* ---- builtin.c ---------------------------------------------------------- */

/* A real kernel's arguments, as builtin_bind makes them. */
typedef struct builtin_args {
    CUdeviceptr p[BUILTIN_MAX_BUFS];
    int n[3];      /* the kernel's integer sizes, in its parameters' order */
    float f[2];    /* blackscholes: R, V */
    unsigned u4[4]; /* md5search: the digest it looks for */
    void *argv[BUILTIN_MAX_BUFS + 5];
} builtin_args;

struct cuda_backend;

/* Makes spec (CORUN_CODE_BUILTIN) a registered kernel's launch: spec->code
 * becomes CORUN_CODE_USER, spec->user the kernel, spec->args point into a
 * (the caller keeps it until the arguments are packed). Buffers are the
 * device's, allocated or grown on first use. */
int corun__cuda_builtin_bind(struct cuda_backend *b, corun__kspec *spec, builtin_args *a,
                             char *why, size_t why_len);

/* ---- share.c ------------------------------------------------------------ */

/* Marks slot s taken or free in the maps of blocks in use. Under pool_mu. */
void corun__cuda_live_mark(struct cuda_backend *b, uint32_t s, bool taken);
int corun__cuda_ctl_share(corun__backend *be, void *handle, uint32_t *nslots,
                          uint64_t *live, uint32_t nwords, char *why, size_t why_len);
void *corun__cuda_peer_open(corun__backend *be, const void *handle, uint32_t nslots, char *why,
                            size_t why_len);
int corun__cuda_peer_range(corun__backend *be, void *peer, uint32_t slot, uint32_t lo,
                           uint32_t hi);
void corun__cuda_peer_close(corun__backend *be, void *peer);
int corun__cuda_mirror_fd(corun__backend *be);

/* ---- code.c ------------------------------------------------------------- */

/* One launch shape of a registered kernel: its occupancy, checked once. */
typedef struct code_shape {
    uint32_t bx, by, bz, smem;
    int rc;                     /* CORUN_OK, or why it cannot run as workers */
    uint32_t per_sm;            /* worker blocks per SM */
    bool ahead_ok;              /* the ahead entry keeps that occupancy */
    bool grid_ok;               /* the grid form fits as many blocks per SM
                                   as the plain kernel */
    char why[320];
} code_shape;

/* A kernel a program registered (code_register). */
typedef struct cuda_code {
    char name[64];
    CUfunction plain, worker, ahead, grid; /* ahead, grid: NULL where none */
    bool allow_occupancy_loss;
    pthread_mutex_t mu;         /* the caches below */
    bool layout_ok;             /* parameter layout read */
    size_t nparams, total;      /* parameters, bytes they take */
    size_t off[MAX_PARAMS], size[MAX_PARAMS];
    code_shape shapes[SHAPE_CACHE];
    unsigned nshapes;           /* filled; the oldest is replaced beyond SHAPE_CACHE */
    struct cuda_code *next;     /* the backend's list */
} cuda_code;

struct cuda_backend;
int corun__cuda_code_register(struct cuda_backend *b, const corun_kernel_desc *d,
                              const void **out, char *why, size_t why_len);
void corun__cuda_code_free_all(struct cuda_backend *b);
/* The shape's occupancy (cached): CORUN_ERANGE with why when a block does
 * not fit or the worker would lose occupancy. *grid_ok (grid_ok may be
 * NULL): whether the kernel has a grid form of the plain kernel's. */
int corun__cuda_code_shape(struct cuda_backend *b, cuda_code *c, corun_dim3 block, uint32_t smem,
                           uint32_t *per_sm, bool *ahead_ok, bool *grid_ok, char *why,
                           size_t why_len);
/* The parameter layout (cached), or CORUN_EINVAL when it cannot be read. */
int corun__cuda_code_layout(struct cuda_backend *b, cuda_code *c, char *why, size_t why_len);
/* Packs the values of k->spec.args into k (the layout of code c). */
int corun__cuda_pack_args(struct cuda_backend *b, struct corun__exec *k, const cuda_code *c,
                          char *why, size_t why_len);

/* ---- the backend and its kernels ---------------------------------------- */

typedef struct launch_rec {
    struct corun__exec *k;
    uint64_t cookie;
    int stream;                 /* index into streams[] */
    CUevent done;               /* recorded after the kernel (blocking sync); NULL
                                   when the launch failed (launcher.c) */
    int status;                 /* CORUN_OK, or why the launch failed */
    struct launch_rec *next;    /* in the pending, polled or finished queue */
    uint64_t since;             /* polled by poll() since (mono ns) */
} launch_rec;

typedef struct cuda_backend {
    corun__backend be;
    device_state *d;
    corun__settings set;
    CUstream ctl;                       /* signals, highest priority */
    CUstream streams[NALLSTREAMS];      /* [0, NSTREAMS) normal, then high priority,
                                           then NGREEN per green partition (NULL
                                           until cuda_partition) */
    uint32_t load[NALLSTREAMS];         /* launches in flight per stream */
    CUgreenCtx green[2];                /* the static partitions, or NULL */
    cuda_code *codes;                   /* registered kernels (code_register) */
    pthread_mutex_t codes_mu;
    const void *builtin_code[CORUN_BUILTIN_COUNT]; /* registered on first use, under
                                                      the device's builtin_mu */

    /* slots.c */
    CUdeviceptr slab;                   /* CTL_SLOTS control blocks, zero when free */
    corun_report *reports;              /* host-mapped, one per slot */
    CUdeviceptr reports_dev;            /* their device address */
    uint32_t slot_seq[CTL_SLOTS];       /* uses of each slot, for report tags */
    pthread_mutex_t pool_mu;            /* the free ring and the dirty list */
    pthread_cond_t pool_cv;             /* dirty slots to zero, or stopping */
    uint32_t free_ring[CTL_SLOTS];      /* free slots, FIFO */
    uint32_t free_head, free_n;
    uint32_t dirty[CTL_SLOTS];          /* finished slots waiting to be zeroed */
    uint32_t ndirty;
    bool zero_stop;
    bool zero_started;
    /* share.c: the blocks in use (bit s: slot s taken), here and, once
     * ctl_share has been called, in the map shared with corund too */
    uint64_t live[CTL_SLOTS / 64];
    uint64_t *live_map;                 /* written with __atomic builtins */
    uint32_t live_words;
    pthread_t zero_thread;
    CUstream zero_stream;
    corun_ctl *readback;                /* pinned, for progress reads */
    /* the signal words' mirrors (corun_ctl.h, the relay), CORUN_MIRROR_STRIDE
     * bytes apart, one per slot: a memfd mapped shared and registered with
     * the driver, so corund can map it too (ctl_share); NULL: no relays */
    uint8_t *mirror;
    CUdeviceptr mirror_dev;
    int mirror_fd;

    /* completion.c */
    pthread_mutex_t mu;                 /* queues, loads, inflight counts, direct list */
    launch_rec *done_head, *done_tail;  /* finished, not yet reported by poll */
    launch_rec *pend_head, *pend_tail;  /* launched, no waiter has taken it yet */
    pthread_cond_t work;                /* a launch is pending, or stopping */
    pthread_t waiters[MAX_WAITERS];
    int nwaiters, idle, stopping;
    /* Launches made on the polling thread itself, whose events poll()
     * queries for their first COMPLETION_SPIN_US before a waiter takes
     * them (corun__cuda_await); npolled counts them. */
    launch_rec *polled;
    _Atomic uint32_t npolled;
    _Atomic pthread_t poller;           /* the thread that last called poll() */
    _Atomic bool polling;               /* poller is set */
    _Atomic uint32_t wakes;             /* corun__cuda_wake calls, ever */
    CUevent free_events[MAX_WAITERS];   /* recycled completion events */
    int nfree_events;
    int efd;
    /* Direct kernels not yet over: pushed by launching threads onto
     * direct_new (lock-free), moved by poll -- the scheduler's thread, which
     * alone uses direct_head -- into its own list, which it scans. */
    struct corun__exec *_Atomic direct_new;
    struct corun__exec *direct_head;
    _Atomic uint32_t ndirect;

    /* launcher.c */
    pthread_mutex_t lq_mu;              /* the queue below */
    pthread_cond_t lq_cv;               /* an op is queued, or stopping */
    struct launch_op *lq_head, *lq_tail;
    bool lq_started, lq_stop;
    pthread_t lq_thread;
} cuda_backend;

struct corun__exec {
    corun__kspec spec;
    const cuda_code *code;
    CUfunction plain, worker, entry;    /* entry: the worker or the ahead entry */
    uint32_t slot;
    CUdeviceptr ctl;
    corun__ctl_host ch;                 /* protocol state (src/core/ctl.h) */
    uint32_t per_sm;
    uint32_t inflight;                  /* launches on our streams, under b->mu */
    void *args;                         /* packed parameter values */
    size_t nparams;
    corun_worker_arg wa;
    CUevent ready;                      /* control-block writes before launches, or
                                           NULL (made at the first such write) */
    bool signalled;                     /* a write since `ready` was last recorded */
    /* direct kernels */
    bool direct;
    uint32_t seq;                       /* this use of the slot, in its reports */
    _Atomic uint64_t cookie;            /* bind's; 0 = not bound yet (no events) */
    bool listed;                        /* in b->direct_head (else still in direct_new) */
    corun__report_view last;            /* the last report turned into an event */
    bool over;                          /* FINISHED or RELEASED seen */
    uint32_t lq_pending;                /* ops queued in launcher.c, under b->lq_mu */
    struct corun__exec *dprev, *dnext; /* b->direct_head */
    /* last, so a new record zeroes everything before them */
    size_t offset[MAX_PARAMS];
    void *params[MAX_PARAMS + 1];       /* [0] = &wa for the worker, then user params */
};

static inline cuda_backend *cb(corun__backend *be)
{
    return (cuda_backend *)be;
}

/* Makes the device's context current on the calling thread. */
static inline int corun__cuda_set_current(cuda_backend *b)
{
    return b->d->cu->cuCtxSetCurrent(b->d->ctx) == CUDA_SUCCESS ? CORUN_OK : CORUN_ECUDA;
}

/* ---- slots.c ------------------------------------------------------------ */

int corun__cuda_slots_init(cuda_backend *b, char *why, size_t why_len);
void corun__cuda_slots_free(cuda_backend *b);
/* A zeroed slot, or CORUN_EBUSY. Thread-safe. */
int corun__cuda_slot_take(cuda_backend *b, uint32_t *slot);
/* Gives a slot back; it is zeroed before it is taken again (unless `clean`:
 * never launched on). Thread-safe, never waits on the driver. */
void corun__cuda_slot_give(cuda_backend *b, uint32_t slot, bool clean);
/* Slot s's mirror (host address), or NULL where there are none. */
static inline volatile corun_mirror *corun__cuda_mirror(const cuda_backend *b, uint32_t s)
{
    return b->mirror != NULL ? (volatile corun_mirror *)(uintptr_t)(b->mirror + (size_t)s *
                                                                                 CORUN_MIRROR_STRIDE)
                             : NULL;
}
/* The relay of a direct kernel's grid of w workers on SMs [sm_lo, sm_hi]
 * (corun__relay_plan, setting RELAY): sets k->wa.relay (the device address
 * of k's mirror, or 0 where relays are off) and k->wa.relay_block, and
 * returns the workers (corun__ctl_launch clears both fields). */
uint32_t corun__cuda_relay_plan(const cuda_backend *b, struct corun__exec *k, uint32_t w,
                                uint32_t sm_lo, uint32_t sm_hi);

/* ---- completion.c ------------------------------------------------------- */

int corun__cuda_take_event(cuda_backend *b, CUevent *ev);
void corun__cuda_give_event(cuda_backend *b, CUevent ev);
/* Hands a recorded launch to poll() if the calling thread is the one that
 * polls, else to a waiter. Under b->mu. */
void corun__cuda_await(cuda_backend *b, launch_rec *r);
/* Queues the launches poll() polls that have finished; the polling thread
 * (or teardown). Not under b->mu. */
void corun__cuda_collect(cuda_backend *b);
/* Queues a finished (or failed) launch for poll and wakes it. Under b->mu. */
void corun__cuda_report_done(cuda_backend *b, launch_rec *r);
int corun__cuda_poll(corun__backend *be, uint64_t deadline, corun__bevent *ev, size_t cap,
                     size_t *n);
void corun__cuda_waiters_stop(cuda_backend *b);
/* Adds a direct kernel to the ones poll watches (any thread), removes one
 * (the scheduler's thread). */
void corun__cuda_direct_watch(cuda_backend *b, struct corun__exec *k);
void corun__cuda_direct_unwatch(cuda_backend *b, struct corun__exec *k);
/* Has direct kernel k's primary grid reported its end (every task done, or
 * its stream let go)? Reads its report in host memory: no driver call. */
bool corun__cuda_direct_over(const cuda_backend *b, const struct corun__exec *k);

/* ---- synth.c ------------------------------------------------------------ */

/* The synthetic kernel's parameters for spec (block of `threads`, `smem`
 * bytes of shared memory). */
int corun__cuda_synth_args(cuda_backend *b, const corun__kspec *spec, uint32_t threads,
                           uint32_t smem, corun_synth_args *a, char *why, size_t why_len);
int corun__cuda_rates(corun__backend *be, const corun__kspec *spec, corun__rates *out, char *why,
                      size_t why_len);

/* ---- direct.c ----------------------------------------------------------- */

int corun__cuda_direct_launch(corun__backend *be, const corun__kspec *spec,
                              const corun__direct_req *req, struct corun__exec **out,
                              corun__direct_got *got, char *why, size_t why_len);
void corun__cuda_bind(corun__backend *be, struct corun__exec *k, uint64_t cookie);

/* ---- launcher.c --------------------------------------------------------- */

/* Queues a worker grid of direct kernel k (k->wa as set for it) for the
 * launcher thread, counted in flight at once. CORUN_ENOMEM, or CORUN_OK. */
int corun__cuda_launch_later(cuda_backend *b, struct corun__exec *k,
                             const corun__launch_req *req);
/* Writes w[0..n) for k: behind what is queued for k, or at once if nothing
 * is. */
int corun__cuda_write_after(cuda_backend *b, struct corun__exec *k, const corun__ctl_write *w,
                            size_t n);
/* Waits (a second at most) until nothing is queued for k any more: false
 * if something still is (k must then not be freed). */
bool corun__cuda_launcher_forget(cuda_backend *b, struct corun__exec *k);
/* Launches what is queued, then stops the thread. */
void corun__cuda_launcher_stop(cuda_backend *b);

/* ---- cuda_backend.c ----------------------------------------------------- */

/* One launch on one of our streams, in two steps: reserve counts it in
 * flight on the least loaded stream of its priority and returns that
 * stream; issue makes it (params[0] the worker argument) and hands it to a
 * waiter, or returns an error with the counts left to the caller. */
int corun__cuda_launch_reserve(cuda_backend *b, struct corun__exec *k, int32_t prio);
int corun__cuda_launch_issue(cuda_backend *b, struct corun__exec *k, int si, int worker,
                             unsigned nblocks_x, uint32_t gate, uint64_t cookie, void **params);

/* Writes the control-block words w[0..n) on the control stream, in order. */
int corun__cuda_write(cuda_backend *b, struct corun__exec *k, const corun__ctl_write *w,
                      size_t n);
void corun__cuda_kernel_free(cuda_backend *b, struct corun__exec *k);

#endif
