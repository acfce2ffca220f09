/*
 * ctx.c — the in-process host API (corun.h, corun_sim.h): a scheduler and a
 * backend behind a mutex, and, where the backend's clock is real time, a
 * thread that runs the scheduler's event loop while the program does other
 * things.
 *
 * Two launch paths. corun_launch hands the kernel to the scheduler, whose
 * policy decides when and where it runs. corun_launch_stream launches in
 * the calling thread (backend direct_launch) on the allotment the scheduler
 * last published, without taking the scheduler's lock; the scheduler adopts
 * the kernel afterwards from a queue (adopt_pending), on its thread or in
 * the next API call that needs the job.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/ctx_int.h"
#include "api/remote.h"
#include "backends/create.h"
#include "core/ctl.h"
#include "core/entry.h"
#include "core/policy.h"
#include "core/sched.h"
#include "corun/corun.h"
#include "corun/corun_sim.h"

/* An allotment as one word, so a launching thread reads it in one load:
 * plain (bit 63), hold (62), capsm (bits 32..47), sm_lo (16..31), sm_hi (0..15). */
typedef _Atomic uint64_t packed_allot;

struct corun_ctx {
    pthread_mutex_t reg_mu;     /* corun_kernel_get: look-up and registration */
    pthread_mutex_t mu;         /* the scheduler and the backend (but direct_launch) */
    pthread_cond_t cv;          /* a job finished or changed state */
    corun__backend *be;
    unsigned caps;
    corun__sched *s;
    corun__settings set;
    char policy[32];
    corun_launch_attr launch_attr; /* CORUN_LAUNCH_CLASS, _CAPSM: read once, not per launch */
    int threaded;
    int stop;
    int loop_error;
    pthread_t thread;
    struct corun_kernel *kernels; /* registered, freed with the context */
    packed_allot allot[2];      /* per class, published by the scheduler's side */
    _Atomic uint64_t plain;     /* direct launches run plain */
    _Atomic uint64_t grid;      /* direct launches run in the grid form */
    _Atomic uint64_t urgent_ns; /* 1 + the backend's clock at the last LS-class
                                   or priority > 0 launch; 0 = none yet */
    pthread_mutex_t q_mu;       /* direct launches not yet adopted */
    struct corun_job *q_head, *q_tail;
    corun__remote *remote;      /* corund, or NULL (remote.h): a simulated context's jobs
                                   run on the daemon's GPU; on a coordinated GPU the
                                   daemon sets the SMs this context's kernels use */
    uint64_t window;            /* coordinated: the window applied, lo | hi << 32 */
};

struct corun_kernel {
    corun_ctx *ctx;
    char name[64];
    uint32_t flags;
    const void *code;  /* the backend's (code_register), or NULL (sim) */
    const void *plain; /* corun_kernel_desc.plain: what corun_kernel_get looks up */
    double sim_task_us;
    uint32_t sim_regs;
    bool has_ahead;    /* the kernel has an ahead entry */
    uint64_t task_hits;
    /* What its finished launches measured, for the next launch's entry
     * (corun__entry_decide) and for running it plain (plain_predicted):
     * written by the scheduler's side, read by launching threads. */
    pthread_mutex_t mu;
    corun__entry_memo memo;
    uint64_t last_tasks;
    uint32_t last_task_ns, last_workers;
    uint32_t last_run_ns; /* its primary grid's run on the device, 0 = none */
    uint32_t plain_run;   /* launches run plain since the last measured one */
    uint32_t rid, rgen;   /* its id on corund's connection rgen (0: not registered there) */
    struct corun_kernel *next;
};

struct corun_job {
    corun_ctx *ctx;
    corun_kernel *kern;
    corun__job *k;    /* the scheduler's record; NULL until adopted */
    int done;
    int status;
    int released;
    uint32_t capsm_asked;
    /* a direct launch until adopted */
    bool direct;
    corun__kspec spec;
    corun_launch_attr attr;
    corun__exec *ex;
    corun__direct_info info;
    uint32_t workers;    /* of its primary grid */
    struct corun_job *qnext;
    /* a job on corund's simulated GPU (remote.h): its id on connection rgen */
    bool remote;
    uint32_t rjob, rgen;
};

static _Thread_local char last_error[512];

__attribute__((format(printf, 2, 3))) static int fail(int rc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    return rc;
}

CORUN_API const char *corun_last_error(void)
{
    return last_error;
}

static void lock(void *p)
{
    pthread_mutex_lock(&((corun_ctx *)p)->mu);
}

static void unlock(void *p)
{
    pthread_mutex_unlock(&((corun_ctx *)p)->mu);
}

static void wake(corun_ctx *c)
{
    if (c->be->ops->wake != NULL) {
        c->be->ops->wake(c->be);
    }
}

/* ---- allotments ----------------------------------------------------------- */

static uint64_t pack_allot(const corun__allotment *a)
{
    return ((uint64_t)(a->plain ? 1 : 0) << 63) | ((uint64_t)(a->hold ? 1 : 0) << 62) |
           ((uint64_t)(a->capsm & 0xffff) << 32) |
           ((uint64_t)(a->sm_lo & 0xffff) << 16) | (uint64_t)(a->sm_hi & 0xffff);
}

static void unpack_allot(uint64_t v, corun__allotment *a)
{
    a->plain = (v >> 63) != 0;
    a->hold = ((v >> 62) & 1) != 0;
    a->capsm = (uint32_t)(v >> 32) & 0xffff;
    a->sm_lo = (uint32_t)(v >> 16) & 0xffff;
    a->sm_hi = (uint32_t)v & 0xffff;
}

/* Under c->mu: what a direct launch of each class gets from now on. */
static void publish_allot(corun_ctx *c)
{
    int cls;

    for (cls = 0; cls < 2; cls++) {
        corun__allotment a;
        corun__sched_allot(c->s, (corun_class)cls, &a);
        atomic_store_explicit(&c->allot[cls], pack_allot(&a), memory_order_relaxed);
    }
}

/* ---- corund --------------------------------------------------------------------- */

/* The context's jobs run on corund's (simulated) GPU. */
static bool owned(const corun_ctx *c)
{
    return c->remote != NULL && !corun__remote_coordinated(c->remote);
}

/* How often a coordinated context's scheduler thread looks at its window. */
#define WINDOW_POLL_NS 5000000ull

/* The scheduler's observer: on a GPU a daemon coordinates, the daemon
 * hears of each job's runs, halts and resizes (c->remote is set once, at
 * creation, before any job). */
static void observe_job(void *p, const corun__job *k, corun__job_change what)
{
    const corun_ctx *c = p;

    if (c->remote != NULL && corun__remote_coordinated(c->remote)) {
        corun__remote_count_change(c->remote, k, (int)what);
    }
}

/* Under c->mu: a coordinated context's kernels move to the SMs the daemon
 * gives it now (the whole GPU while the daemon is away). */
static void follow_window(corun_ctx *c)
{
    if (corun__remote_follow(c->remote, c->s, &c->window)) {
        publish_allot(c);
    }
    corun__remote_share_ctl(c->remote, c->be);
}

/* ---- jobs and their adoption ----------------------------------------------- */

static void job_done(corun__sched *s, corun__job *k, void *user)
{
    corun_job *j = user;
    corun_kernel *kern = j->kern;

    if (k->state == CORUN_JS_DONE && !k->plain) {
        uint32_t task_ns = k->task_ns;
        pthread_mutex_lock(&kern->mu);
        if (j->info.grid && k->dev_run_ns != 0 && k->tasks != 0) {
            /* A grid-form run alone: its mean task, as each of its first
             * wave's slots ran tasks one after another (the report's is block
             * 0's, one task among many); not the entries' measure. */
            const uint64_t ns = (uint64_t)k->dev_run_ns * j->workers / k->tasks;
            task_ns = ns < UINT32_MAX ? (uint32_t)ns : UINT32_MAX;
        } else if (!j->info.grid) {
            corun__entry_learn(&kern->memo, k->task_ns, k->ran_ahead,
                               corun__budget_ns(&j->ctx->set));
            corun__entry_measured(&kern->memo, k->ran_ahead, k->dev_run_ns, k->tasks);
        }
        if (task_ns != 0 && j->direct) {
            kern->last_tasks = k->tasks;
            kern->last_task_ns = task_ns;
            kern->last_workers = j->workers;
            kern->last_run_ns = k->dev_run_ns;
        }
        pthread_mutex_unlock(&kern->mu);
    }
    corun__remote_count_job(j->ctx->remote, k);
    j->done = 1;
    j->status = k->status;
    pthread_cond_broadcast(&j->ctx->cv);
    if (j->released) {
        corun__sched_release(s, k);
        free(j);
    }
}

/* Under c->mu: the scheduler takes in the direct launches made since. */
static void adopt_pending(corun_ctx *c)
{
    corun_job *j;

    pthread_mutex_lock(&c->q_mu);
    j = c->q_head;
    c->q_head = c->q_tail = NULL;
    pthread_mutex_unlock(&c->q_mu);
    while (j != NULL) {
        corun_job *next = j->qnext;
        int rc = corun__sched_adopt(c->s, &j->spec, &j->attr, j->ex, &j->info, job_done, j, &j->k);
        if (rc != CORUN_OK) {
            /* No record for it (out of memory): it runs on, unscheduled. */
            j->done = 1;
            j->status = rc;
            if (j->released) {
                free(j);
            }
        }
        j = next;
    }
}

static void *loop(void *p)
{
    corun_ctx *c = p;

    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        int rc;
        adopt_pending(c);
        follow_window(c);
        publish_allot(c);
        rc = corun__sched_step_unlocked(
            c->s, c->remote != NULL ? corun__sched_now(c->s) + WINDOW_POLL_NS : UINT64_MAX, unlock,
            lock, c);
        if (rc != CORUN_OK) {
            c->loop_error = rc;
            pthread_cond_broadcast(&c->cv);
            break;
        }
        pthread_cond_broadcast(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- contexts ---------------------------------------------------------------- */

/* A context's settings: the table's defaults, the CORUN_* variables, then
 * each "name=value" of over (NULL-terminated; over may be NULL). */
static int ctx_settings(corun__settings *set, const char *const *over, char *why, size_t why_len)
{
    int rc;

    corun__settings_default(set);
    rc = corun__settings_load_env(set, why, why_len);
    for (size_t i = 0; rc == CORUN_OK && over != NULL && over[i] != NULL; i++) {
        rc = corun__settings_assign(set, over[i], why, why_len);
    }
    return rc;
}

static int ctx_create(const corun_ctx_opts *opts, const char *const *over,
                      const corun__settings *given, corun_ctx **out)
{
    corun__sched_opts so;
    corun_ctx *c;
    corun_gpu_desc sim_gpu;
    char why[256];
    const char *backend, *policy;
    int rc;

    if (out == NULL) {
        return fail(CORUN_EINVAL, "corun_ctx_create: out is NULL");
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return fail(CORUN_ENOMEM, "out of memory");
    }
    if (given != NULL) {
        c->set = *given;
        rc = CORUN_OK;
    } else {
        rc = ctx_settings(&c->set, over, why, sizeof(why));
    }
    if (rc != CORUN_OK) {
        free(c);
        return fail(rc, "%s", why);
    }
    c->launch_attr.cls =
        strcmp(c->set.launch_class, "ls") == 0 ? CORUN_CLASS_LS : CORUN_CLASS_BATCH;
    c->launch_attr.capsm = c->set.launch_capsm;
    c->launch_attr.priority = (int32_t)c->set.launch_priority;
    c->launch_attr.weight = c->set.launch_weight;
    c->launch_attr.qos = c->set.launch_qos;
    backend = opts != NULL && opts->backend != NULL ? opts->backend : c->set.backend;
    policy = opts != NULL && opts->policy != NULL ? opts->policy : c->set.policy;
    memset(&so, 0, sizeof(so));
    so.policy = corun__policy_find(policy);
    if (so.policy == NULL) {
        free(c);
        return fail(CORUN_ENOENT, "unknown policy '%s'", policy);
    }
    snprintf(c->policy, sizeof(c->policy), "%s", so.policy->name);
    corun_gpu_desc_h100(&sim_gpu);
    rc = corun__backend_create(backend, &c->set, &sim_gpu, c->set.seed, &c->be, why, sizeof(why));
    if (rc != CORUN_OK) {
        free(c);
        return fail(rc, "%s", why);
    }
    c->caps = c->be->ops->caps;
    so.backend = c->be;
    so.settings = c->set;
    so.observe = observe_job; /* a coordinated GPU's daemon hears of it */
    so.observe_ctx = c;
    why[0] = '\0';
    so.why = why;
    so.why_len = sizeof(why);
    rc = corun__sched_create(&so, &c->s);
    if (rc != CORUN_OK) {
        rc = fail(rc, "policy %s: %s", policy, why[0] != '\0' ? why : corun_strerror(rc));
        goto out_destroy_backend;
    }
    pthread_mutex_init(&c->reg_mu, NULL);
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->q_mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    publish_allot(c);
    c->threaded = (c->caps & CORUN_BE_VIRTUAL_TIME) == 0;
    c->window = (uint64_t)(c->be->desc.sm_count - 1) << 32;
    if (given == NULL) {
        /* A simulated context lives on corund's simulated GPU where one
         * serves it; on a GPU corund coordinates, the context keeps its own
         * scheduler, on the SMs the daemon gives it. Its own scheduler stays
         * for when the daemon is away. */
        why[0] = '\0';
        rc = corun__remote_open(&c->set, c->be->ops->name, c->be->gpu_id, &c->remote, why,
                                sizeof(why));
        if (rc == CORUN_ENOENT) {
            c->remote = NULL;
        } else if (rc != CORUN_OK) {
            rc = fail(rc, "DAEMON=%s: %s", c->set.daemon, why);
            goto out_destroy_sched;
        }
    }
    if (c->threaded && pthread_create(&c->thread, NULL, loop, c) != 0) {
        rc = fail(CORUN_ENOMEM, "cannot start the scheduler thread");
        goto out_close_remote;
    }
    *out = c;
    return CORUN_OK;

out_close_remote:
    corun__remote_close(c->remote);

out_destroy_sched:
    corun__sched_destroy(c->s);
    pthread_mutex_destroy(&c->reg_mu);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->q_mu);
    pthread_cond_destroy(&c->cv);
out_destroy_backend:
    c->be->ops->destroy(c->be);
    free(c);
    return rc;
}

CORUN_API int corun_ctx_create(const corun_ctx_opts *opts, corun_ctx **out)
{
    return ctx_create(opts, NULL, NULL, out);
}

CORUN_API int corun_test_ctx_create(const corun_ctx_opts *opts, const char *const *settings,
                                    corun_ctx **out)
{
    return ctx_create(opts, settings, NULL, out);
}

int corun__ctx_create_with(const corun__settings *set, const corun_ctx_opts *opts,
                           corun_ctx **out)
{
    return ctx_create(opts, NULL, set, out);
}

CORUN_API void corun_ctx_launch_attr(const corun_ctx *c, corun_launch_attr *out)
{
    *out = c->launch_attr;
}

CORUN_API void corun_ctx_destroy(corun_ctx *c)
{
    if (c == NULL) {
        return;
    }
    if (c->threaded) {
        pthread_mutex_lock(&c->mu);
        c->stop = 1;
        wake(c);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thread, NULL);
    }
    adopt_pending(c);
    corun__remote_unshare_ctl(c->remote, c->be);
    corun__remote_close(c->remote);
    /* Jobs nobody waits for (fire and forget, or released) still in the
     * scheduler: theirs is freed here, job_done never ran for them. */
    corun_job *orphans = NULL;
    for (corun__job *k = corun__sched_first(c->s); k != NULL; k = k->next) {
        corun_job *j = k->user;
        if (k->on_done == job_done && j != NULL && j->released && !j->done) {
            j->qnext = orphans;
            orphans = j;
        }
    }
    corun__sched_destroy(c->s);
    while (orphans != NULL) {
        corun_job *j = orphans;
        orphans = j->qnext;
        free(j);
    }
    c->be->ops->destroy(c->be);
    while (c->kernels != NULL) {
        corun_kernel *k = c->kernels;
        c->kernels = k->next;
        pthread_mutex_destroy(&k->mu);
        free(k);
    }
    pthread_mutex_destroy(&c->reg_mu);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->q_mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

CORUN_API const char *corun_ctx_backend(const corun_ctx *c)
{
    return c->be->ops->name;
}

CORUN_API int corun_ctx_runs_cuda(const corun_ctx *c)
{
    return c != NULL && (c->caps & CORUN_BE_USER_CODE) != 0;
}

CORUN_API uint64_t corun_ctx_plain_launches(corun_ctx *c)
{
    return atomic_load_explicit(&c->plain, memory_order_relaxed);
}

CORUN_API uint64_t corun_ctx_grid_launches(corun_ctx *c)
{
    return atomic_load_explicit(&c->grid, memory_order_relaxed);
}

CORUN_API void corun_ctx_describe(corun_ctx *c, char *buf, size_t len)
{
    unsigned queued = 0, n[6] = {0, 0, 0, 0, 0, 0};
    char be[200] = "";
    uint64_t degrids = 0;
    corun_job *j;

    pthread_mutex_lock(&c->q_mu);
    for (j = c->q_head; j != NULL; j = j->qnext) {
        queued++;
    }
    pthread_mutex_unlock(&c->q_mu);
    if (pthread_mutex_trylock(&c->mu) == 0) {
        corun__job *k;
        for (k = corun__sched_first(c->s); k != NULL; k = k->next) {
            n[k->state]++;
        }
        degrids = corun__sched_degrids(c->s);
        pthread_mutex_unlock(&c->mu);
    }
    if (c->be->ops->describe != NULL) {
        c->be->ops->describe(c->be, be, sizeof(be));
    }
    size_t at = 0;
    if (c->remote != NULL) {
        uint32_t gen = corun__remote_gen(c->remote);
        const corun__msg_welcome *w = corun__remote_welcome(c->remote);
        uint32_t lo, hi;
        int n0 = gen == 0 ? snprintf(buf, len, "corund at %s away, in-process: ",
                                     corun__remote_path(c->remote))
                 : corun__remote_window(c->remote, c->be->desc.sm_count, &lo, &hi)
                     ? snprintf(buf, len, "corund at %s (client %u, policy %s, coordinated: SMs "
                                "%u-%u); in-process: ", corun__remote_path(c->remote), w->client,
                                w->policy, lo, hi)
                     : snprintf(buf, len, "corund at %s (client %u, policy %s); in-process: ",
                                corun__remote_path(c->remote), w->client, w->policy);
        at = n0 < 0 ? 0 : (size_t)n0 < len ? (size_t)n0 : len;
    }
    buf += at;
    len -= at;
    snprintf(buf, len, "jobs: %u waiting, %u running, %u stopping, %u paused, %u done (not yet "
             "released); %u launches not yet taken in; plain so far %llu; grid form so far "
             "%llu, made workers %llu; %s",
             n[CORUN_JS_WAITING], n[CORUN_JS_RUNNING], n[CORUN_JS_STOPPING], n[CORUN_JS_PAUSED],
             n[CORUN_JS_DONE] + n[CORUN_JS_FAILED], queued,
             (unsigned long long)atomic_load_explicit(&c->plain, memory_order_relaxed),
             (unsigned long long)atomic_load_explicit(&c->grid, memory_order_relaxed),
             (unsigned long long)degrids, be);
}

/* ---- kernels -------------------------------------------------------------- */

static corun_kernel *kernel_new(corun_ctx *c, const char *name, uint32_t flags)
{
    corun_kernel *k = calloc(1, sizeof(*k));

    if (k == NULL) {
        return NULL;
    }
    k->ctx = c;
    snprintf(k->name, sizeof(k->name), "%s", name ? name : "kernel");
    k->flags = flags;
    pthread_mutex_init(&k->mu, NULL);
    return k;
}

static void kernel_add(corun_ctx *c, corun_kernel *k)
{
    pthread_mutex_lock(&c->mu);
    k->next = c->kernels;
    c->kernels = k;
    pthread_mutex_unlock(&c->mu);
}

CORUN_API int corun_kernel_register(corun_ctx *c, const corun_kernel_desc *d, corun_kernel **out)
{
    corun_kernel *k;
    char why[256] = "";
    int rc;

    if (c == NULL || d == NULL || out == NULL) {
        return fail(CORUN_EINVAL, "corun_kernel_register: NULL argument");
    }
    if ((c->caps & CORUN_BE_USER_CODE) == 0) {
        return fail(CORUN_ENOTSUP, "kernel '%s': the %s backend runs no CUDA kernels; register "
                    "a simulated one (corun_sim_kernel_register)",
                    d->name ? d->name : "?", c->be->ops->name);
    }
    k = kernel_new(c, d->name, d->flags);
    if (k == NULL) {
        return fail(CORUN_ENOMEM, "out of memory");
    }
    rc = c->be->ops->code_register(c->be, d, &k->code, why, sizeof(why));
    if (rc != CORUN_OK) {
        pthread_mutex_destroy(&k->mu);
        free(k);
        return fail(rc, "%s", why[0] ? why : corun_strerror(rc));
    }
    k->has_ahead = d->ahead != NULL;
    k->plain = d->plain;
    kernel_add(c, k);
    *out = k;
    return CORUN_OK;
}

CORUN_API int corun_sim_kernel_register(corun_ctx *c, const corun_sim_kernel_desc *d,
                                        corun_kernel **out)
{
    corun_kernel *k;

    if (c == NULL || d == NULL || out == NULL) {
        return fail(CORUN_EINVAL, "corun_sim_kernel_register: NULL argument");
    }
    if ((c->caps & CORUN_BE_USER_CODE) != 0) {
        return fail(CORUN_ENOTSUP, "kernel '%s': the %s backend runs CUDA kernels; register "
                    "them with corun_kernel_register", d->name ? d->name : "?", c->be->ops->name);
    }
    if (!(d->task_us > 0)) {
        return fail(CORUN_EINVAL, "kernel '%s': a simulated kernel needs task_us > 0",
                    d->name ? d->name : "?");
    }
    k = kernel_new(c, d->name, d->flags);
    if (k == NULL) {
        return fail(CORUN_ENOMEM, "out of memory");
    }
    k->sim_task_us = d->task_us;
    k->sim_regs = d->regs ? d->regs : 32;
    k->has_ahead = d->ahead != 0;
    kernel_add(c, k);
    *out = k;
    return CORUN_OK;
}

CORUN_API int corun_test_count_tasks(corun_kernel *k, uint64_t dptr)
{
    if (k == NULL) {
        return fail(CORUN_EINVAL, "corun_test_count_tasks: NULL kernel");
    }
    k->task_hits = dptr;
    return CORUN_OK;
}

/* ---- launches ------------------------------------------------------------- */

/* Checks a launch's shape and fills spec. */
static int launch_spec(corun_ctx *c, corun_kernel *kern, corun_dim3 grid, corun_dim3 block,
                       uint32_t smem, void **args, const corun_launch_attr *attr,
                       corun_launch_attr *a, corun__kspec *spec)
{
    const corun_gpu_desc *g = &c->be->desc;
    uint64_t threads = (uint64_t)block.x * block.y * block.z;

    if ((uint64_t)grid.x * grid.y * grid.z == 0 || threads == 0) {
        return fail(CORUN_EINVAL, "kernel '%s': empty grid or block (%ux%ux%u blocks of %ux%ux%u)",
                    kern->name, grid.x, grid.y, grid.z, block.x, block.y, block.z);
    }
    if (threads > g->max_threads_per_block) {
        return fail(CORUN_ERANGE, "kernel '%s': %llu threads per block; the limit is %u", kern->name,
                    (unsigned long long)threads, g->max_threads_per_block);
    }
    if (smem > g->smem_per_block_optin) {
        return fail(CORUN_ERANGE, "kernel '%s': %u bytes of shared memory; the limit is %u",
                    kern->name, smem, g->smem_per_block_optin);
    }
    memset(a, 0, sizeof(*a));
    if (attr != NULL) {
        *a = *attr;
    }
    if (a->capsm > g->sm_count) {
        return fail(CORUN_ERANGE, "kernel '%s': %u CapSMs asked for; the GPU has %u SMs", kern->name,
                    a->capsm, g->sm_count);
    }
    memset(spec, 0, sizeof(*spec));
    memcpy(spec->name, kern->name, sizeof(spec->name));
    spec->grid = grid;
    spec->block = block;
    spec->smem_dynamic = smem;
    spec->shape.threads_per_block = (uint32_t)threads;
    spec->shape.regs_per_thread = kern->sim_regs;
    spec->shape.smem_optin = smem > g->smem_per_block;
    spec->task_hits = kern->task_hits;
    if (kern->code != NULL) {
        spec->code = CORUN_CODE_USER;
        spec->user = kern->code;
        spec->args = args;
    } else {
        spec->code = CORUN_CODE_SYNTHETIC;
        spec->task_ns = (corun__dist){CORUN_DIST_CONST, kern->sim_task_us * 1e3, 0};
    }
    return CORUN_OK;
}

/* How long after an LS-class or priority > 0 launch the plain line stays
 * CORUN_PLAIN_BELOW_US (the LS work's next request is likely that close). */
#define URGENT_WINDOW_NS 1000000000ull

/* The backend's clock from a launching thread (a virtual clock moves under
 * c->mu). */
static uint64_t launch_now(corun_ctx *c)
{
    uint64_t now;

    if ((c->caps & CORUN_BE_VIRTUAL_TIME) == 0) {
        return c->be->ops->now_ns(c->be);
    }
    pthread_mutex_lock(&c->mu);
    now = c->be->ops->now_ns(c->be);
    pthread_mutex_unlock(&c->mu);
    return now;
}

/* Whether latency-sensitive work runs: an LS-class or priority launch in
 * the last URGENT_WINDOW_NS, here or in another program on a GPU corund
 * coordinates. */
static bool ls_urgent(corun_ctx *c)
{
    const uint64_t urgent = atomic_load_explicit(&c->urgent_ns, memory_order_relaxed);
    return (urgent != 0 && launch_now(c) + 1 - urgent < URGENT_WINDOW_NS) ||
           corun__remote_ls_elsewhere(c->remote, URGENT_WINDOW_NS);
}

/* Whether a launch of `tasks` should run plain: its last measured run,
 * scaled to these tasks, ended within the line, CORUN_PLAIN_BELOW_US while
 * latency-sensitive work runs (ls) and CORUN_PLAIN_BATCH_BELOW_US otherwise
 * (corun.h, docs/decisions/0019), predicted by corun__entry_predict_ns.
 * Under kern->mu. */
#define PLAIN_REMEASURE 32
static bool plain_predicted(corun_ctx *c, corun_kernel *kern, uint64_t tasks, bool ls)
{
    double below = (ls ? c->set.plain_below_us : c->set.plain_batch_below_us) * 1e3, ns;

    if (!(below > 0)) {
        return false;
    }
    ns = corun__entry_predict_ns(kern->last_run_ns, kern->last_task_ns, kern->last_tasks,
                                 kern->last_workers, tasks);
    if (!(ns > 0 && ns < below)) {
        return false;
    }
    /* every PLAIN_REMEASURE-th launch still runs as workers and measures:
     * a plain launch measures nothing, and the kernel's work may grow */
    if (++kern->plain_run >= PLAIN_REMEASURE) {
        kern->plain_run = 0;
        return false;
    }
    return true;
}

/* Whether a launch may take the grid form (corun_ctl.h; the backend checks
 * its shape): its kernel's last measured task, ns, took at least
 * CORUN_GRID_TASK_US. A kernel's first launches run as workers, which
 * measure it. */
static bool grid_predicted(const corun_ctx *c, uint32_t ns)
{
    return c->set.grid != 0 && ns != 0 && ns >= c->set.grid_task_us * 1e3;
}

/* corun_launch: the scheduler's policy decides when and where. */
static int launch_scheduled(corun_ctx *c, corun_kernel *kern, corun__kspec *spec,
                            const corun_launch_attr *a, corun_job **out)
{
    char why[256] = "";
    corun_job *j = calloc(1, sizeof(*j));
    int rc;

    if (j == NULL) {
        return fail(CORUN_ENOMEM, "out of memory");
    }
    j->ctx = c;
    j->kern = kern;
    j->capsm_asked = a->capsm;
    pthread_mutex_lock(&kern->mu);
    spec->ahead = corun__entry_decide(&kern->memo, (unsigned)c->set.ahead, kern->has_ahead,
                                      (uint64_t)spec->grid.x * spec->grid.y * spec->grid.z,
                                      corun__budget_ns(&c->set));
    pthread_mutex_unlock(&kern->mu);
    pthread_mutex_lock(&c->mu);
    rc = corun__sched_submit(c->s, spec, a, job_done, j, &j->k, why, sizeof(why));
    if (rc == CORUN_OK) {
        *out = j;
    }
    wake(c);
    pthread_mutex_unlock(&c->mu);
    if (rc != CORUN_OK) {
        free(j);
        return fail(rc, "%s", why[0] ? why : corun_strerror(rc));
    }
    return CORUN_OK;
}

/* corun_launch_stream: launched by this thread, adopted later. */
static int launch_direct(corun_ctx *c, corun_kernel *kern, corun__kspec *spec,
                         const corun_launch_attr *a, void *stream, corun_job **out)
{
    const uint64_t tasks = (uint64_t)spec->grid.x * spec->grid.y * spec->grid.z;
    const bool vt = (c->caps & CORUN_BE_VIRTUAL_TIME) != 0;
    corun__allotment al;
    corun__direct_req req;
    corun_job *j;
    corun__direct_got got = {0};
    char why[256] = "";
    int rc;

    unpack_allot(atomic_load_explicit(&c->allot[a->cls == CORUN_CLASS_LS], memory_order_relaxed),
                 &al);
    memset(&req, 0, sizeof(req));
    req.stream = stream;
    req.capsm = a->capsm != 0 && a->capsm < al.capsm ? a->capsm : al.capsm;
    req.sm_lo = al.sm_lo;
    req.sm_hi = al.sm_hi;
    req.hold = al.hold;
    req.priority = corun__attr_ls(a) ? 1 : 0;
    const bool urgent = ls_urgent(c), ls = out == NULL && urgent;
    /* what the kernel's launches measured, read under one lock: the plain
     * line, the entry, and (below) the grid form's task time */
    pthread_mutex_lock(&kern->mu);
    const uint32_t measured_ns = kern->last_task_ns;
    if (al.plain || (out == NULL && plain_predicted(c, kern, tasks, ls))) {
        req.capsm = 0;
    }
    if (req.capsm != 0) {
        spec->ahead = corun__entry_decide(&kern->memo, (unsigned)c->set.ahead, kern->has_ahead,
                                          tasks, corun__budget_ns(&c->set));
    }
    pthread_mutex_unlock(&kern->mu);
    /* Batch work alone: a launch that fits in one wave gains nothing from
     * workers (corun__direct_one_wave). Beside LS work, and for an LS,
     * priority or QoS launch, the policy keeps seeing it as workers. */
    req.one_wave_plain = c->set.plain_one_wave != 0 && out == NULL && !ls &&
                         !corun__attr_ls(a) && !(a->qos > 0);
    /* A batch launch of more than one wave on the whole GPU may run a block
     * per task instead (grid_predicted): preemptible at block starts, so a
     * job handle may have it, and halted and resumed as workers before any
     * eviction or narrowing (degrid in sched.c). Not beside LS work, not
     * for an LS or QoS launch (the policies size and meter those as
     * workers), not on a GPU corund coordinates (its narrowing writes the
     * control block directly). */
    req.grid = !urgent && !corun__attr_ls(a) && !(a->qos > 0) &&
               (c->remote == NULL || !corun__remote_coordinated(c->remote)) &&
               grid_predicted(c, measured_ns);
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        return fail(CORUN_ENOMEM, "out of memory");
    }
    j->ctx = c;
    j->kern = kern;
    j->capsm_asked = a->capsm;
    j->released = out == NULL; /* nobody will wait: forget it when it finishes */
    j->direct = true;
    j->attr = *a;
    if (vt) {
        pthread_mutex_lock(&c->mu);
    }
    rc = c->be->ops->direct_launch(c->be, spec, &req, &j->ex, &got, why, sizeof(why));
    if (rc == CORUN_EBUSY && out == NULL) {
        req.capsm = 0; /* no control block free: run it plain rather than wait */
        rc = c->be->ops->direct_launch(c->be, spec, &req, &j->ex, &got, why, sizeof(why));
    }
    if (rc != CORUN_OK) {
        if (vt) {
            pthread_mutex_unlock(&c->mu);
        }
        free(j);
        return fail(rc, "%s", why[0] ? why : corun_strerror(rc));
    }
    if (j->ex == NULL) {
        atomic_fetch_add_explicit(&c->plain, 1, memory_order_relaxed);
    } else if (got.grid) {
        atomic_fetch_add_explicit(&c->grid, 1, memory_order_relaxed);
    }
    j->spec = *spec;
    j->spec.args = NULL;
    j->info.per_sm = got.per_sm;
    j->info.ahead = got.ahead;
    j->info.grid = got.grid;
    j->info.capsm = j->ex != NULL ? req.capsm : 0;
    j->info.sm_lo = req.sm_lo;
    j->info.sm_hi = req.sm_hi;
    j->info.t_launch = c->be->ops->now_ns(c->be);
    j->workers = corun__direct_workers(j->info.capsm, got.per_sm, req.sm_lo, req.sm_hi,
                                       c->be->desc.sm_count, tasks);
    if (out != NULL) {
        *out = j;
    }
    pthread_mutex_lock(&c->q_mu);
    if (c->q_tail != NULL) {
        c->q_tail->qnext = j;
    } else {
        c->q_head = j;
    }
    c->q_tail = j;
    pthread_mutex_unlock(&c->q_mu);
    if (vt) {
        adopt_pending(c);
        pthread_mutex_unlock(&c->mu);
    } else if (a->cls == CORUN_CLASS_LS) {
        wake(c); /* the policy may have to make room for it now */
    } else if (measured_ns == 0 && j->ex != NULL) {
        /* taken in now, so that its measure reaches the kernel's next
         * launches one report poll after its end (the grid form, the
         * plain line and the entry wait for one) */
        wake(c);
    }
    return CORUN_OK;
}

/* corun_launch on corund's simulated GPU. CORUN_EIO (and *away) when the
 * daemon is not there: the caller launches in-process instead. */
static int launch_remote(corun_ctx *c, corun_kernel *kern, const corun__kspec *spec,
                         const corun_launch_attr *a, corun_job **out, bool *away)
{
    uint32_t gen = corun__remote_gen(c->remote);
    corun__msg m;
    corun__msg_reply rep;
    char why[CORUN_PROTO_WHY + 64] = "";
    corun_job *j;
    int rc = CORUN_OK;

    *away = gen == 0;
    if (gen == 0) {
        return CORUN_EIO;
    }
    pthread_mutex_lock(&kern->mu);
    if (kern->rgen != gen) {
        memset(&m, 0, sizeof(m));
        m.type = CORUN_MSG_REGISTER;
        m.u.reg.kernel = corun__remote_next_id(c->remote);
        corun__proto_str(m.u.reg.name, sizeof(m.u.reg.name), kern->name);
        m.u.reg.task_us = kern->sim_task_us;
        m.u.reg.regs = kern->sim_regs;
        m.u.reg.ahead = kern->has_ahead ? 1 : 0;
        m.u.reg.flags = kern->flags;
        rc = corun__remote_call(c->remote, gen, &m, &rep, why, sizeof(why));
        if (rc == CORUN_OK && rep.status == CORUN_OK) {
            kern->rid = m.u.reg.kernel;
            kern->rgen = gen;
        } else if (rc == CORUN_OK) {
            rc = rep.status;
            snprintf(why, sizeof(why), "%s", rep.why);
        }
    }
    pthread_mutex_unlock(&kern->mu);
    if (rc != CORUN_OK) {
        *away = rc == CORUN_EIO;
        return fail(rc, "kernel '%s': %s", kern->name, why);
    }
    memset(&m, 0, sizeof(m));
    m.type = CORUN_MSG_LAUNCH;
    m.u.launch.kernel = kern->rid;
    m.u.launch.job = corun__remote_next_id(c->remote);
    m.u.launch.grid[0] = spec->grid.x;
    m.u.launch.grid[1] = spec->grid.y;
    m.u.launch.grid[2] = spec->grid.z;
    m.u.launch.block[0] = spec->block.x;
    m.u.launch.block[1] = spec->block.y;
    m.u.launch.block[2] = spec->block.z;
    m.u.launch.smem = spec->smem_dynamic;
    m.u.launch.cls = (uint8_t)a->cls;
    m.u.launch.capsm = a->capsm;
    m.u.launch.priority = a->priority;
    m.u.launch.weight = a->weight;
    m.u.launch.size_hint = a->size_hint;
    rc = corun__remote_call(c->remote, gen, &m, &rep, why, sizeof(why));
    if (rc != CORUN_OK) {
        *away = rc == CORUN_EIO;
        return fail(rc, "kernel '%s': %s", kern->name, why);
    }
    if (rep.status != CORUN_OK) {
        return fail(rep.status, "%s", rep.why);
    }
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        return fail(CORUN_ENOMEM, "out of memory");
    }
    j->ctx = c;
    j->kern = kern;
    j->capsm_asked = a->capsm;
    j->remote = true;
    j->rjob = m.u.launch.job;
    j->rgen = gen;
    *out = j;
    return CORUN_OK;
}

static int launch_common(corun_ctx *c, corun_kernel *kern, corun_dim3 grid, corun_dim3 block,
                         uint32_t smem, void **args, const corun_launch_attr *attr, bool ordered,
                         void *stream, corun_job **out)
{
    corun_launch_attr a;
    corun__kspec spec;
    int rc;

    if (c == NULL) {
        return fail(CORUN_EINVAL, "corun_launch: null context");
    }
    if (kern == NULL) {
        return fail(CORUN_EINVAL, "corun_launch: null kernel");
    }
    if (out == NULL && !ordered) {
        return fail(CORUN_EINVAL, "corun_launch: out is NULL");
    }
    rc = launch_spec(c, kern, grid, block, smem, args, attr, &a, &spec);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (corun__attr_ls(&a)) {
        atomic_store_explicit(&c->urgent_ns, launch_now(c) + 1, memory_order_relaxed);
    }
    if (c->remote != NULL) {
        /* a coordinated GPU: the daemon hears of it; a virtual clock's
         * context looks at its window here (no thread does) */
        corun__remote_count_launch(c->remote, corun__attr_ls(&a), spec.name);
        if (!c->threaded) {
            pthread_mutex_lock(&c->mu);
            follow_window(c);
            pthread_mutex_unlock(&c->mu);
        }
    }
    if (ordered) {
        if ((c->caps & CORUN_BE_DIRECT) == 0) {
            return fail(CORUN_ENOTSUP, "the %s backend has no stream-ordered launches",
                        c->be->ops->name);
        }
        return launch_direct(c, kern, &spec, &a, stream, out);
    }
    if (owned(c) && kern->code == NULL) {
        bool away = false;
        rc = launch_remote(c, kern, &spec, &a, out, &away);
        if (!away) {
            return rc;
        }
        /* corund is away: schedule it here, uncoordinated, until it is back */
    }
    return launch_scheduled(c, kern, &spec, &a, out);
}

CORUN_API int corun_launch(corun_ctx *c, corun_kernel *kern, corun_dim3 grid, corun_dim3 block,
                           uint32_t smem, void **args, const corun_launch_attr *attr,
                           corun_job **out)
{
    return launch_common(c, kern, grid, block, smem, args, attr, false, NULL, out);
}

CORUN_API int corun_launch_stream(corun_ctx *c, corun_kernel *kern, corun_dim3 grid,
                                  corun_dim3 block, uint32_t smem, void **args,
                                  const corun_launch_attr *attr, void *stream, corun_job **out)
{
    return launch_common(c, kern, grid, block, smem, args, attr, true, stream, out);
}

/* ---- the process-wide context of transformed programs ------------------ */

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static corun_ctx *default_ctx;
static char default_error[512];

static void default_init(void)
{
    if (corun_ctx_create(NULL, &default_ctx) != CORUN_OK) {
        default_ctx = NULL;
        snprintf(default_error, sizeof(default_error), "%s", last_error);
    }
}

/* Not destroyed at exit on purpose: CUDA's own teardown may already have
 * run by then; the kernels a program waits for have finished before it
 * returns from main, and the process exit frees the rest. */
CORUN_API corun_ctx *corun_default_ctx(void)
{
    pthread_once(&default_once, default_init);
    if (default_ctx == NULL) {
        fail(CORUN_ENODEV, "%s", default_error);
    }
    return default_ctx;
}

CORUN_API int corun_kernel_get(corun_ctx *c, const corun_kernel_desc *d, corun_kernel **out)
{
    corun_kernel *k;
    int rc;

    if (c == NULL || d == NULL || out == NULL) {
        return fail(CORUN_EINVAL, "corun_kernel_get: NULL argument");
    }
    /* Registration is rare and the list short; one lock covers look-up and
     * insertion, so two threads never register the same kernel twice. The
     * code a kernel was registered with is its identity (keyed by the
     * plain function); a kernel without code by its name. */
    pthread_mutex_lock(&c->reg_mu);
    pthread_mutex_lock(&c->mu);
    for (k = c->kernels; k != NULL; k = k->next) {
        if (d->plain != NULL ? k->plain == d->plain
                             : (d->name != NULL && strcmp(k->name, d->name) == 0)) {
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    rc = k != NULL ? CORUN_OK : corun_kernel_register(c, d, &k);
    pthread_mutex_unlock(&c->reg_mu);
    if (rc == CORUN_OK) {
        *out = k;
    }
    return rc;
}

/* ---- jobs ------------------------------------------------------------------ */

/* Under c->mu: the job's scheduler record exists (adopting what is queued). */
static corun__job *job_rec(corun_job *j)
{
    if (j->k == NULL) {
        adopt_pending(j->ctx);
    }
    return j->k;
}

/* One request about a job on corund: CORUN_OK, the daemon's answer, or
 * CORUN_EIO when the daemon (and with it the job) is gone. */
static int remote_job(corun_job *j, corun__msg_type type, uint32_t capsm, int64_t timeout_ms,
                      corun__msg_reply *rep)
{
    corun__msg m;
    char why[CORUN_PROTO_WHY + 64] = "";
    int rc;

    memset(&m, 0, sizeof(m));
    m.type = type;
    m.u.job.job = j->rjob;
    m.u.job.capsm = capsm;
    m.u.job.timeout_ms = timeout_ms;
    rc = corun__remote_call(j->ctx->remote, j->rgen, &m, rep, why, sizeof(why));
    if (rc != CORUN_OK) {
        return fail(rc, "job '%s': %s", j->kern->name, why);
    }
    if (rep->status != CORUN_OK) {
        return fail(rep->status, "%s", rep->why);
    }
    return CORUN_OK;
}

/* corun_job_wait on corund: in slices, so other threads' requests get in. */
#define REMOTE_WAIT_SLICE_MS 50

static int remote_wait(corun_job *j, int64_t timeout_ms)
{
    struct timespec t0, t;
    corun__msg_reply rep;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int64_t left = REMOTE_WAIT_SLICE_MS;
        int rc;
        if (timeout_ms >= 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            left = timeout_ms - ((int64_t)(t.tv_sec - t0.tv_sec) * 1000 +
                                 (t.tv_nsec - t0.tv_nsec) / 1000000);
            left = left < 0 ? 0 : left > REMOTE_WAIT_SLICE_MS ? REMOTE_WAIT_SLICE_MS : left;
        }
        rc = remote_job(j, CORUN_MSG_WAIT, 0, left, &rep);
        if (rc != CORUN_ETIMEDOUT || (timeout_ms >= 0 && left < REMOTE_WAIT_SLICE_MS)) {
            return rc;
        }
    }
}

/* Under c->mu: lets a STOPPING job reach PAUSED (or DONE). */
static int settle(corun_job *j)
{
    corun_ctx *c = j->ctx;

    while (job_rec(j)->state == CORUN_JS_STOPPING) {
        if (c->threaded) {
            pthread_cond_wait(&c->cv, &c->mu);
        } else {
            int rc = corun__sched_step(c->s, UINT64_MAX);
            if (rc != CORUN_OK) {
                return rc;
            }
        }
    }
    return CORUN_OK;
}

CORUN_API int corun_job_preempt(corun_job *j)
{
    corun_ctx *c = j->ctx;
    corun__job *k;
    int rc;

    if (j->remote) {
        corun__msg_reply rep;
        return remote_job(j, CORUN_MSG_PREEMPT, 0, 0, &rep);
    }
    pthread_mutex_lock(&c->mu);
    k = job_rec(j);
    if (j->done) {
        rc = fail(CORUN_ESTATE, "job '%s' has already finished", k->name);
    } else if (k->state != CORUN_JS_RUNNING) {
        rc = CORUN_OK; /* already stopping or paused, or not yet started */
    } else {
        rc = corun__sched_stop(c->s, k);
        if (rc != CORUN_OK) {
            fail(rc, "job '%s': preempt: %s", k->name, corun_strerror(rc));
        }
    }
    wake(c);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

CORUN_API int corun_job_resize(corun_job *j, uint32_t capsm)
{
    corun_ctx *c = j->ctx;
    int rc;

    if (capsm == 0 || capsm > c->be->desc.sm_count) {
        return fail(CORUN_ERANGE, "resize to %u CapSMs: must be between 1 and %u", capsm,
                    c->be->desc.sm_count);
    }
    if (j->remote) {
        corun__msg_reply rep;
        return remote_job(j, CORUN_MSG_RESIZE, capsm, 0, &rep);
    }
    pthread_mutex_lock(&c->mu);
    rc = settle(j);
    if (rc == CORUN_OK && j->done) {
        rc = fail(CORUN_ESTATE, "job '%s' has already finished", j->k->name);
    } else if (rc == CORUN_OK) {
        corun__job *k = j->k;
        uint32_t held = corun__job_capsm(k);
        if (k->state == CORUN_JS_RUNNING) {
            rc = capsm > held   ? corun__sched_grow(c->s, k, capsm - held)
                 : capsm < held ? corun__sched_shrink(c->s, k, held - capsm)
                                : CORUN_OK;
        } else {
            rc = corun__sched_run(c->s, k, capsm);
        }
        if (rc != CORUN_OK) {
            fail(rc, "job '%s': resize to %u: %s", k->name, capsm, corun_strerror(rc));
        }
    }
    wake(c);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

CORUN_API int corun_job_resume(corun_job *j, uint32_t capsm)
{
    corun_ctx *c = j->ctx;
    int rc;

    if (capsm > c->be->desc.sm_count) {
        return fail(CORUN_ERANGE, "resume on %u CapSMs: the GPU has %u", capsm, c->be->desc.sm_count);
    }
    if (j->remote) {
        corun__msg_reply rep;
        return remote_job(j, CORUN_MSG_RESUME, capsm, 0, &rep);
    }
    pthread_mutex_lock(&c->mu);
    rc = settle(j);
    if (rc == CORUN_OK && j->done) {
        rc = fail(CORUN_ESTATE, "job '%s' has already finished", j->k->name);
    } else if (rc == CORUN_OK &&
               (j->k->state == CORUN_JS_PAUSED || j->k->state == CORUN_JS_WAITING)) {
        uint32_t n = capsm ? capsm : j->capsm_asked ? j->capsm_asked : c->be->desc.sm_count;
        rc = corun__sched_run(c->s, j->k, n);
        if (rc != CORUN_OK) {
            fail(rc, "job '%s': resume: %s", j->k->name, corun_strerror(rc));
        }
    }
    wake(c);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

CORUN_API int corun_job_limit(corun_job *j, uint64_t limit)
{
    corun_ctx *c = j->ctx;
    int rc;

    if (j->remote) {
        return fail(CORUN_ENOTSUP, "job limits are not passed to corund");
    }
    pthread_mutex_lock(&c->mu);
    rc = settle(j);
    if (rc == CORUN_OK && j->done) {
        rc = fail(CORUN_ESTATE, "job '%s' has already finished", j->k->name);
    } else if (rc == CORUN_OK && limit > j->k->tasks) {
        rc = fail(CORUN_ERANGE, "job '%s': limit %llu is past its %llu tasks", j->k->name,
                  (unsigned long long)limit, (unsigned long long)j->k->tasks);
    } else if (rc == CORUN_OK) {
        rc = corun__sched_limit(c->s, j->k, limit);
        if (rc != CORUN_OK) {
            fail(rc, "job '%s': limit: %s", j->k->name,
                 rc == CORUN_ENOTSUP ? "a stream-ordered or plain launch is never rewound"
                                     : corun_strerror(rc));
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

CORUN_API int corun_job_wait(corun_job *j, int64_t timeout_ms)
{
    corun_ctx *c = j->ctx;
    struct timespec until;
    int rc = CORUN_OK;

    if (j->remote) {
        return remote_wait(j, timeout_ms);
    }
    clock_gettime(CLOCK_REALTIME, &until);
    if (timeout_ms >= 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (timeout_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
    }
    pthread_mutex_lock(&c->mu);
    (void)job_rec(j);
    if (c->threaded) {
        while (!j->done && c->loop_error == CORUN_OK) {
            if (timeout_ms < 0) {
                pthread_cond_wait(&c->cv, &c->mu);
            } else if (pthread_cond_timedwait(&c->cv, &c->mu, &until) == ETIMEDOUT) {
                break;
            }
        }
        if (!j->done) {
            rc = c->loop_error != CORUN_OK ? c->loop_error : CORUN_ETIMEDOUT;
        }
    } else {
        uint64_t limit = timeout_ms < 0 ? UINT64_MAX
                                        : corun__sched_now(c->s) + (uint64_t)timeout_ms * 1000000ull;
        while (!j->done && rc == CORUN_OK) {
            if (j->k->state == CORUN_JS_PAUSED) {
                rc = fail(CORUN_ESTATE, "job '%s' is paused: resume it first", j->k->name);
                break;
            }
            if (corun__sched_now(c->s) >= limit) {
                rc = CORUN_ETIMEDOUT;
                break;
            }
            follow_window(c);
            rc = corun__sched_step(c->s, limit);
        }
    }
    if (rc == CORUN_OK && j->status != CORUN_OK) {
        rc = fail(j->status, "job '%s' failed: %s", j->k->name, corun_strerror(j->status));
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

CORUN_API int corun_job_progress(corun_job *j, corun_progress *out)
{
    corun_ctx *c = j->ctx;
    corun__job *k;
    int rc;

    if (j->remote) {
        corun__msg_reply rep;
        rc = remote_job(j, CORUN_MSG_PROGRESS, 0, 0, &rep);
        if (rc == CORUN_OK) {
            memset(out, 0, sizeof(*out));
            out->tasks = rep.v[0];
            out->claimed = rep.v[1];
            out->done = rep.v[2];
            out->live = (uint32_t)rep.v[3];
            out->task_ns = (uint32_t)rep.v[4];
        }
        return rc;
    }
    pthread_mutex_lock(&c->mu);
    k = job_rec(j);
    if (k->state == CORUN_JS_WAITING) {
        memset(out, 0, sizeof(*out));
        out->tasks = k->tasks;
        rc = CORUN_OK;
    } else if (j->done) {
        out->tasks = out->claimed = out->done = k->tasks;
        out->live = 0;
        out->task_ns = k->task_ns;
        out->ahead = k->ran_ahead;
        rc = CORUN_OK;
    } else {
        rc = corun__sched_progress(c->s, k, out);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

CORUN_API uint32_t corun_job_capsm(corun_job *j)
{
    uint32_t n;

    if (j->remote) {
        corun__msg_reply rep;
        return remote_job(j, CORUN_MSG_PROGRESS, 0, 0, &rep) == CORUN_OK ? (uint32_t)rep.v[5] : 0;
    }
    pthread_mutex_lock(&j->ctx->mu);
    n = corun__job_capsm(job_rec(j));
    pthread_mutex_unlock(&j->ctx->mu);
    return n;
}

CORUN_API void corun_job_release(corun_job *j)
{
    corun_ctx *c;

    if (j == NULL) {
        return;
    }
    if (j->remote) {
        corun__msg_reply rep;
        (void)remote_job(j, CORUN_MSG_RELEASE, 0, 0, &rep);
        free(j);
        return;
    }
    c = j->ctx;
    pthread_mutex_lock(&c->mu);
    (void)job_rec(j);
    if (j->done) {
        if (j->k != NULL) {
            corun__sched_release(c->s, j->k);
        }
        free(j);
    } else {
        j->released = 1;
    }
    pthread_mutex_unlock(&c->mu);
}

/* ---- for corund (ctx_int.h) --------------------------------------------------- */

corun__backend *corun__ctx_backend(corun_ctx *c)
{
    return c->be;
}

uint64_t corun__ctx_now(corun_ctx *c)
{
    uint64_t t;

    pthread_mutex_lock(&c->mu);
    t = corun__sched_now(c->s);
    pthread_mutex_unlock(&c->mu);
    return t;
}

int corun__ctx_advance(corun_ctx *c, uint64_t until_ns)
{
    int rc = CORUN_OK;

    if (c->threaded) {
        return CORUN_OK;
    }
    pthread_mutex_lock(&c->mu);
    while (rc == CORUN_OK && corun__sched_now(c->s) < until_ns) {
        rc = corun__sched_step(c->s, until_ns);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

const char *corun__ctx_policy(const corun_ctx *c)
{
    return c->policy;
}

uint32_t corun__ctx_sm_count(const corun_ctx *c)
{
    return c->be->desc.sm_count;
}

uint32_t corun__ctx_free_capsm(corun_ctx *c)
{
    uint32_t n;

    pthread_mutex_lock(&c->mu);
    n = corun__sched_free_capsm(c->s);
    pthread_mutex_unlock(&c->mu);
    return n;
}

void corun__job_view_get(corun_job *j, corun__job_view *v)
{
    static const char *const names[] = {"waiting", "running", "stopping",
                                        "paused",  "done",    "failed"};
    corun_ctx *c = j->ctx;
    corun__job *k;

    memset(v, 0, sizeof(*v));
    pthread_mutex_lock(&c->mu);
    k = job_rec(j);
    v->state = names[k->state];
    v->done = j->done != 0;
    v->status = j->done ? j->status : CORUN_OK;
    v->capsm = corun__job_capsm(k);
    v->tasks = k->tasks;
    v->preemptions = k->preemptions;
    v->t_submit = k->t_submit;
    v->t_start = k->t_start;
    v->t_end = k->t_end;
    if (j->done) {
        v->done_tasks = k->state == CORUN_JS_DONE ? k->tasks : k->done_tasks;
    } else if (k->state != CORUN_JS_WAITING) {
        corun_progress p;
        v->done_tasks = corun__sched_progress(c->s, k, &p) == CORUN_OK ? p.done : k->done_tasks;
    }
    pthread_mutex_unlock(&c->mu);
}

int corun__job_cancel(corun_job *j)
{
    corun_ctx *c = j->ctx;
    corun__job *k;
    int rc = CORUN_OK;

    pthread_mutex_lock(&c->mu);
    k = job_rec(j);
    if (!j->done) {
        rc = corun__sched_cancel(c->s, k);
    }
    wake(c);
    pthread_mutex_unlock(&c->mu);
    return rc;
}
