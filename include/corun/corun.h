/*
 * corun.h — the public interface of libcorun.
 *
 * corun lets several programs share one NVIDIA GPU with guarantees: CapSM
 * reservations and quotas, preemption of running kernels that loses no work,
 * priorities, and fair shares. A kernel given to corun runs as persistent
 * workers (see corun_device.cuh) that pull the original thread blocks
 * ("block-tasks") from a control block, so corun can stop, shrink, grow and
 * resume it while it runs.
 *
 * Conventions: every function returns a corun_status (0 on success, a
 * negative CORUN_E* code otherwise) unless it says otherwise. Out-parameters
 * are written only on success. The library never prints.
 */
#ifndef CORUN_H
#define CORUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CORUN_BUILDING_LIBRARY) && defined(__GNUC__)
#define CORUN_API __attribute__((visibility("default")))
#else
#define CORUN_API
#endif

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* X(name, value, message) */
#define CORUN_STATUS_MAP(X)                                                 \
    X(OK, 0, "success")                                                     \
    X(EINVAL, -1, "invalid argument")                                       \
    X(ENOMEM, -2, "out of memory")                                          \
    X(ERANGE, -3, "value out of range")                                     \
    X(ENOTSUP, -4, "operation not supported by this backend")               \
    X(EBUSY, -5, "resource busy")                                           \
    X(ENODEV, -6, "no usable GPU")                                          \
    X(ECUDA, -7, "CUDA driver call failed")                                 \
    X(ELAUNCH, -8, "kernel launch failed")                                  \
    X(EPARSE, -9, "malformed input")                                        \
    X(EIO, -10, "input/output error")                                       \
    X(ESTATE, -11, "operation not valid in the current state")              \
    X(ENOENT, -12, "no such item")                                          \
    X(ETIMEDOUT, -13, "timed out")                                          \
    X(EFAULT, -14, "injected fault")                                        \
    X(ECANCELED, -15, "cancelled")

typedef enum corun_status {
#define CORUN__STATUS_ENUM(name, value, msg) CORUN_##name = (value),
    CORUN_STATUS_MAP(CORUN__STATUS_ENUM)
#undef CORUN__STATUS_ENUM
} corun_status;

/* A static, human-readable message for a status ("invalid argument"). */
CORUN_API const char *corun_strerror(int status);
/* The symbolic name of a status ("CORUN_EINVAL"). */
CORUN_API const char *corun_status_name(int status);

/* ------------------------------------------------------------------------ */
/* GPU description and occupancy                                            */
/* ------------------------------------------------------------------------ */

/* What corun needs to know of a GPU to reason about capacity. The limits and
 * allocation granularities follow CUDA's occupancy calculator
 * (cuda_occupancy.h) for compute capability 9.0. */
typedef struct corun_gpu_desc {
    uint32_t sm_count;                /* multiprocessors (H100 SXM: 132) */
    uint32_t max_threads_per_sm;      /* 2048 */
    uint32_t max_blocks_per_sm;       /* 32 */
    uint32_t regs_per_sm;             /* 65536 */
    uint32_t smem_per_sm;             /* bytes usable as shared memory: 233472 */
    uint32_t max_threads_per_block;   /* 1024 */
    uint32_t regs_per_block;          /* 65536 */
    uint32_t smem_per_block;          /* default per-block limit: 49152 */
    uint32_t smem_per_block_optin;    /* opt-in per-block limit: 232448 */
    uint32_t smem_reserved_per_block; /* driver-reserved per block: 1024 */
    uint32_t warp_size;               /* 32 */
    uint32_t reg_alloc_unit;          /* registers per warp are rounded up to this: 256 */
    uint32_t smem_alloc_unit;         /* shared memory per block rounded up to this: 128 */
    uint32_t max_regs_per_thread;     /* 255 */
    uint32_t reg_sub_partitions;      /* register file partitions per SM: 4 */
} corun_gpu_desc;

/* Fill *d with an H100 SXM (132 SMs, compute capability 9.0). */
CORUN_API void corun_gpu_desc_h100(corun_gpu_desc *d);

/* Check a description for impossible values. On failure returns CORUN_EINVAL
 * and, if why is not NULL, writes a sentence naming the bad field. */
CORUN_API int corun_gpu_desc_check(const corun_gpu_desc *d, char *why, size_t why_len);

/* The per-block resource use of a kernel launch. */
typedef struct corun_kernel_shape {
    uint32_t threads_per_block;  /* blockDim.x * blockDim.y * blockDim.z */
    uint32_t regs_per_thread;    /* as reported by ptxas / cuFuncGetAttribute */
    uint32_t smem_static;        /* bytes of __shared__ declared in the kernel */
    uint32_t smem_dynamic;       /* bytes passed at launch */
    bool smem_optin;             /* kernel opted in to more than smem_per_block */
} corun_kernel_shape;

typedef enum corun_occ_limit {
    CORUN_OCC_LIMIT_WARPS,
    CORUN_OCC_LIMIT_REGS,
    CORUN_OCC_LIMIT_SMEM,
    CORUN_OCC_LIMIT_BLOCKS
} corun_occ_limit;

typedef struct corun_occupancy {
    uint32_t blocks_per_sm;      /* the answer: min of the four limits below */
    corun_occ_limit limiter;     /* which limit decided it (first in enum order on ties) */
    uint32_t by_warps, by_regs, by_smem, by_blocks;
    uint32_t warps_per_block;
    uint32_t regs_per_block;     /* registers allocated per block */
    uint32_t smem_per_block;     /* shared memory allocated per block, reserve included */
} corun_occupancy;

/* Max active blocks per SM for a kernel shape, by the rules of CUDA's
 * occupancy calculator. Returns CORUN_ERANGE when a block cannot run at all
 * (too many threads, registers or shared memory), with the reason in why. */
CORUN_API int corun_occupancy_calc(const corun_gpu_desc *d, const corun_kernel_shape *shape,
                                   corun_occupancy *out, char *why, size_t why_len);

/* ------------------------------------------------------------------------ */
/* Kernels as the scheduler sees them                                        */
/* ------------------------------------------------------------------------ */

typedef struct corun_dim3 {
    uint32_t x, y, z;
} corun_dim3;

/* Latency-sensitive kernels ask for a reservation of CapSMs; batch kernels
 * run under a quota (SMGuard §5.1). */
typedef enum corun_class {
    CORUN_CLASS_BATCH = 0,
    CORUN_CLASS_LS = 1
} corun_class;

/* Scheduling attributes of one kernel launch. */
typedef struct corun_launch_attr {
    corun_class cls;
    uint32_t capsm;     /* reservation (LS) or quota (batch) in CapSMs; 0 = policy default */
    int32_t priority;   /* larger is more urgent; 0 is the default */
    uint32_t weight;    /* fair-share weight, >= 1; 0 means 1 */
    double size_hint;   /* input size, for duration models; 0 if unknown */
    double qos;         /* QoS goal (policy fgqos): a fraction of the kernel's isolated
                           rate of block-tasks, in (0, 1]; 0 = no goal */
} corun_launch_attr;

/* Progress of a kernel, counted in block-tasks by its workers. */
typedef struct corun_progress {
    uint64_t tasks;      /* total block-tasks (grid size) */
    uint64_t claimed;    /* next-task counter (may overshoot tasks); after a
                            halt of a kernel running the ahead entry, until
                            it resumes, = done (its claims were voided) */
    uint64_t done;       /* block-tasks completed */
    uint32_t live;       /* workers currently running */
    uint32_t task_ns;    /* block-task time worker 0 measured, once it has left
                            (0 = not yet) */
    uint32_t ahead;      /* 1: its workers claim a task ahead (the ahead entry) */
} corun_progress;

/* ------------------------------------------------------------------------ */
/* In-process host API                                                      */
/* ------------------------------------------------------------------------ */

/*
 * A context owns a scheduler and a backend. With the cuda backend a
 * scheduler thread reacts to completions while the program runs; with the
 * sim backend the simulated clock advances only inside corun calls that
 * wait (corun_job_wait). All functions are thread-safe. On failure,
 * corun_last_error() tells why in a sentence (thread-local, valid until the
 * next corun call of the thread).
 */
typedef struct corun_ctx corun_ctx;
typedef struct corun_kernel corun_kernel;
typedef struct corun_job corun_job;

typedef struct corun_ctx_opts {
    const char *backend; /* "auto" (cuda where a GPU is usable, else sim), "cuda",
                            "sim"; NULL: CORUN_BACKEND */
    const char *policy;  /* a policy name (corun policies); NULL: CORUN_POLICY */
} corun_ctx_opts;

CORUN_API int corun_ctx_create(const corun_ctx_opts *opts, corun_ctx **out);
/* Halts whatever still runs, waits for it to leave the GPU, frees all. */
CORUN_API void corun_ctx_destroy(corun_ctx *ctx);
/* "cuda" or "sim". */
CORUN_API const char *corun_ctx_backend(const corun_ctx *ctx);
/* 1 if the context runs a program's CUDA kernels (corun_kernel_desc), 0 if
 * it only simulates kernels described by their timing (corun_sim.h). */
CORUN_API int corun_ctx_runs_cuda(const corun_ctx *ctx);
CORUN_API const char *corun_last_error(void);

/* The worker form may use fewer SM slots than the plain one (see below). */
#define CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS 1u

typedef struct corun_kernel_desc {
    const char *name;
    void *plain;         /* CUfunction of the plain kernel (cudaGetFuncBySymbol,
                            cuModuleGetFunction) */
    void *worker;        /* CUfunction of its worker form, NAME__corun */
    uint32_t flags;
    void *ahead;         /* optional: CUfunction of NAME__corun_ahead (CORUN_SHARED
                            kernels have one), the worker that claims a task
                            ahead; corun runs a kernel through it where its
                            measured tasks make chunks of three or fewer
                            (CORUN_AHEAD) */
    void *grid;          /* optional: CUfunction of NAME__corun_grid, a block per
                            task that claims it as it starts; corun runs a kernel's
                            stream-ordered batch launches through it where its
                            tasks are long (CORUN_GRID_TASK_US) */
} corun_kernel_desc;

/* Registers a program's kernel (contexts where corun_ctx_runs_cuda; a
 * simulated one registers through corun_sim.h). A launch shape whose worker
 * form fits fewer blocks per SM than the plain kernel is refused (by
 * corun_launch and corun_launch_stream alike), unless
 * CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS is set: then the worker runs at its own
 * blocks per SM (corun-cc sets it for a kernel whose pin would make the
 * worker spill). */
CORUN_API int corun_kernel_register(corun_ctx *ctx, const corun_kernel_desc *d,
                                    corun_kernel **out);

/* Submits one launch of a registered kernel. args holds one pointer per
 * kernel parameter, as for cuLaunchKernel; the values are copied. The
 * scheduler's policy decides when and on how many CapSMs it runs. Invalid
 * shapes (empty grid, more than 1024 threads per block, too much shared
 * memory, more CapSMs than SMs) and null kernels are refused: nothing is
 * launched. */
CORUN_API int corun_launch(corun_ctx *ctx, corun_kernel *k, corun_dim3 grid, corun_dim3 block,
                           uint32_t smem, void **args, const corun_launch_attr *attr,
                           corun_job **out);

/* Stream-ordered launch, as a transformed program's `k<<<g, b, smem, s>>>`
 * needs it. The calling thread enqueues the kernel's workers in `stream` (a
 * CUstream; NULL = the legacy default stream) itself, on what the policy
 * allots its class now, with no host wait and no other thread on the way:
 * the job starts after the work enqueued on `stream` before, and work
 * enqueued after it waits on the GPU until the job has finished, also when
 * the job is preempted meanwhile (its last worker holds the stream until it
 * is resumed and done). cudaStreamSynchronize, events recorded after it and
 * cudaDeviceSynchronize keep their meaning. The scheduler hears of the job
 * afterwards. With *out NULL (the job is released when it finishes), a
 * kernel whose last run was shorter than the plain line runs as the plain
 * kernel (not preemptible): CORUN_PLAIN_BELOW_US within a second of an
 * LS-class or priority > 0 launch of the context (or of another program
 * that corund saw on a GPU it coordinates), CORUN_PLAIN_BATCH_BELOW_US
 * otherwise. So do launches under the `mps` and
 * `priority` policies. Refused with CORUN_ENOTSUP while `stream` captures a
 * graph (every replay would reuse one control block). */
CORUN_API int corun_launch_stream(corun_ctx *ctx, corun_kernel *k, corun_dim3 grid,
                                  corun_dim3 block, uint32_t smem, void **args,
                                  const corun_launch_attr *attr, void *stream, corun_job **out);
/* Stream-ordered launches of the context that ran as plain kernels so far. */
CORUN_API uint64_t corun_ctx_plain_launches(corun_ctx *ctx);
/* Stream-ordered launches of the context that ran in the grid form so far
 * (a block per task, claimed as it starts: CORUN_GRID_TASK_US). */
CORUN_API uint64_t corun_ctx_grid_launches(corun_ctx *ctx);
/* One line on the context's state now (jobs by state, launches not yet
 * taken in by the scheduler, the backend's resources), into buf; for
 * diagnostics. Safe from any thread; never waits for the scheduler. */
CORUN_API void corun_ctx_describe(corun_ctx *ctx, char *buf, size_t len);

/* Setting `name` ("launch_stats" or "CORUN_LAUNCH_STATS"; `corun config`
 * lists them all) as libcorun reads it, into buf as text: its CORUN_*
 * variable if set, checked against the table, else its default (numbers as
 * %llu or %g). Reads the environment at every call; for code compiled into
 * other programs (corun_launch.cuh) that cannot see the table. Returns
 * CORUN_ENOENT for an unknown name, CORUN_EINVAL for a bad value,
 * CORUN_ERANGE if buf cannot hold the value and its NUL; buf is written
 * only on success. */
CORUN_API int corun_setting_get(const char *name, char *buf, size_t len);

/* The process-wide context used by transformed programs: created on first
 * use from the CORUN_* settings (backend CORUN_BACKEND, policy
 * CORUN_POLICY), destroyed at exit. NULL, with corun_last_error(), if it
 * cannot be created. */
CORUN_API corun_ctx *corun_default_ctx(void);

/* The launch attributes a program gives its launches when it names none, from
 * ctx's settings: class CORUN_LAUNCH_CLASS (batch or ls), capsm
 * CORUN_LAUNCH_CAPSM, priority CORUN_LAUNCH_PRIORITY, weight CORUN_LAUNCH_WEIGHT, qos
 * CORUN_LAUNCH_QOS, size_hint 0. Transformed programs launch with these. */
CORUN_API void corun_ctx_launch_attr(const corun_ctx *ctx, corun_launch_attr *out);

/* The kernel registered for these functions in ctx, registering it on first
 * use (thread-safe; keyed by the plain function). */
CORUN_API int corun_kernel_get(corun_ctx *ctx, const corun_kernel_desc *d, corun_kernel **out);

/* Temporal preemption: all workers leave after their current chunk; no work
 * is lost. Under the `manual` policy the job then stays paused until
 * corun_job_resume; other policies may resume it themselves. Preempt, resize
 * and resume return CORUN_ESTATE once the job has finished. */
CORUN_API int corun_job_preempt(corun_job *j);
/* Runs the job on `capsm` CapSMs: grows it with new workers or evicts its
 * lowest CapSMs. A paused job is resumed. */
CORUN_API int corun_job_resize(corun_job *j, uint32_t capsm);
/* Resumes a preempted job on `capsm` CapSMs (0: what it asked for at
 * launch), continuing from its task counter. */
CORUN_API int corun_job_resume(corun_job *j, uint32_t capsm);
/* An epoch's quota: the job's workers claim no block-task at or beyond
 * `limit` (a task index, at most the grid's size), so a job that reaches it
 * pauses. In force at once on a job not yet started, else from its next
 * resume (the limit is written only while no worker runs): to change it
 * under a running job, preempt, set, resume. CORUN_ENOTSUP for a
 * stream-ordered launch (corun_launch_stream) or one run plain, and through
 * a daemon. */
CORUN_API int corun_job_limit(corun_job *j, uint64_t limit);
/* Waits until the job has finished: CORUN_OK, the job's failure, or
 * CORUN_ETIMEDOUT after timeout_ms (< 0: no limit). A paused job under the
 * sim backend cannot finish: CORUN_ESTATE. */
CORUN_API int corun_job_wait(corun_job *j, int64_t timeout_ms);
CORUN_API int corun_job_progress(corun_job *j, corun_progress *out);
/* CapSMs the job holds now. */
CORUN_API uint32_t corun_job_capsm(corun_job *j);
/* Forgets the job (it keeps running if it has not finished). */
CORUN_API void corun_job_release(corun_job *j);

#ifdef __cplusplus
}
#endif

#endif /* CORUN_H */
