/*
 * ctx.c — the in-process host API (corun.h): a scheduler and a backend
 * behind a mutex, and for the cuda backend a thread that runs the
 * scheduler's event loop while the program does other things.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/create.h"
#include "core/policy.h"
#include "core/sched.h"
#include "corun/corun.h"
#include "corun/corun_chunk.h"
#ifdef CORUN_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

struct corun_ctx {
    pthread_mutex_t reg_mu;     /* corun_kernel_get: look-up and registration */
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* a job finished or changed state */
    corun__backend *be;
    corun__sched *s;
    corun__settings set;
    int threaded;
    int stop;
    int loop_error;
    pthread_t thread;
    struct corun_kernel *kernels; /* registered, freed with the context */
};

struct corun_kernel {
    corun_ctx *ctx;
    char name[64];
    uint32_t flags;
    double sim_task_us;
    uint32_t sim_regs;
    bool has_ahead;    /* the kernel has an ahead entry (corun_kernel_desc.ahead) */
    /* under ctx->mu: what its finished launches measured, for the next
     * launch's choice of entry (corun_ahead_choose) */
    corun_ahead_memo memo;
#ifdef CORUN_HAVE_CUDA
    corun__cuda_code code;
#endif
    struct corun_kernel *next;
};

struct corun_job {
    corun_ctx *ctx;
    corun_kernel *kern;
    corun__kernel *k;
    int done;
    int status;
    int released;
    uint32_t capsm_asked;
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

static void *loop(void *p)
{
    corun_ctx *c = p;

    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        int rc = corun__sched_step_unlocked(c->s, UINT64_MAX, unlock, lock, c);
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

CORUN_API int corun_ctx_create(const corun_ctx_opts *opts, corun_ctx **out)
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
    corun__settings_default(&c->set);
    rc = corun__settings_load_env(&c->set, why, sizeof(why));
    if (rc != CORUN_OK) {
        free(c);
        return fail(rc, "%s", why);
    }
    backend = opts != NULL && opts->backend != NULL ? opts->backend : c->set.backend;
    policy = opts != NULL && opts->policy != NULL ? opts->policy : c->set.policy;
    memset(&so, 0, sizeof(so));
    so.policy = corun__policy_find(policy);
    if (so.policy == NULL) {
        free(c);
        return fail(CORUN_ENOENT, "unknown policy '%s'", policy);
    }
    corun_gpu_desc_h100(&sim_gpu);
    rc = corun__backend_create(backend, &c->set, &sim_gpu, c->set.seed, &c->be, why, sizeof(why));
    if (rc != CORUN_OK) {
        free(c);
        return fail(rc, "%s", why);
    }
    so.backend = c->be;
    so.settings = c->set;
    rc = corun__sched_create(&so, &c->s);
    if (rc != CORUN_OK) {
        goto out_destroy_backend;
    }
    pthread_mutex_init(&c->reg_mu, NULL);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->threaded = strcmp(c->be->ops->name, "sim") != 0;
    if (c->threaded && pthread_create(&c->thread, NULL, loop, c) != 0) {
        rc = fail(CORUN_ENOMEM, "cannot start the scheduler thread");
        goto out_destroy_sched;
    }
    *out = c;
    return CORUN_OK;

out_destroy_sched:
    corun__sched_destroy(c->s);
    pthread_mutex_destroy(&c->reg_mu);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
out_destroy_backend:
    c->be->ops->destroy(c->be);
    free(c);
    return rc;
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
    corun__sched_destroy(c->s);
    c->be->ops->destroy(c->be);
    while (c->kernels != NULL) {
        corun_kernel *k = c->kernels;
        c->kernels = k->next;
        free(k);
    }
    pthread_mutex_destroy(&c->reg_mu);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

CORUN_API const char *corun_ctx_backend(const corun_ctx *c)
{
    return c->be->ops->name;
}

CORUN_API int corun_kernel_register(corun_ctx *c, const corun_kernel_desc *d, corun_kernel **out)
{
    corun_kernel *k;
    int sim = strcmp(c->be->ops->name, "sim") == 0;

    if (d == NULL || out == NULL) {
        return fail(CORUN_EINVAL, "corun_kernel_register: NULL argument");
    }
    if (!sim && (d->plain == NULL || d->worker == NULL)) {
        return fail(CORUN_EINVAL, "kernel '%s': null kernel function", d->name ? d->name : "?");
    }
    if (sim && !(d->sim_task_us > 0)) {
        return fail(CORUN_EINVAL, "kernel '%s': the sim backend needs sim_task_us > 0",
                    d->name ? d->name : "?");
    }
    k = calloc(1, sizeof(*k));
    if (k == NULL) {
        return fail(CORUN_ENOMEM, "out of memory");
    }
    k->ctx = c;
    snprintf(k->name, sizeof(k->name), "%s", d->name ? d->name : "kernel");
    k->flags = d->flags;
    k->sim_task_us = d->sim_task_us;
    k->sim_regs = d->sim_regs ? d->sim_regs : 32;
    k->has_ahead = d->ahead != NULL;
#ifdef CORUN_HAVE_CUDA
    k->code.plain = d->plain;
    k->code.worker = d->worker;
    k->code.ahead = sim ? NULL : d->ahead;
    snprintf(k->code.name, sizeof(k->code.name), "%s", k->name);
    k->code.allow_occupancy_loss = (d->flags & CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS) != 0;
#endif
    pthread_mutex_lock(&c->mu);
    k->next = c->kernels;
    c->kernels = k;
    pthread_mutex_unlock(&c->mu);
    *out = k;
    return CORUN_OK;
}

static void job_done(corun__sched *s, corun__kernel *k, void *user)
{
    corun_job *j = user;

    if (k->state == CORUN_KS_DONE) {
        corun_ahead_learn(&j->kern->memo, k->task_ns, k->ran_ahead, corun__budget_ns(&j->ctx->set));
    }
    j->done = 1;
    j->status = k->status;
    pthread_cond_broadcast(&j->ctx->cv);
    if (j->released) {
        corun__sched_release(s, k);
        free(j);
    }
}

/* corun_launch and corun_launch_stream: ordered = stream-ordered launch. */
static int launch_common(corun_ctx *c, corun_kernel *kern, corun_dim3 grid, corun_dim3 block,
                         uint32_t smem, void **args, const corun_launch_attr *attr, bool ordered,
                         void *stream, corun_job **out)
{
    const corun_gpu_desc *g = &c->be->desc;
    corun_launch_attr a;
    corun__kspec spec;
    corun_job *j;
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    char why[256] = "";
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
    memset(&a, 0, sizeof(a));
    if (attr != NULL) {
        a = *attr;
    }
    if (a.capsm > g->sm_count) {
        return fail(CORUN_ERANGE, "kernel '%s': %u CapSMs asked for; the GPU has %u SMs", kern->name,
                    a.capsm, g->sm_count);
    }
    memset(&spec, 0, sizeof(spec));
    snprintf(spec.name, sizeof(spec.name), "%s", kern->name);
    spec.grid = grid;
    spec.block = block;
    spec.smem_dynamic = smem;
    spec.shape.threads_per_block = (uint32_t)threads;
    spec.shape.regs_per_thread = kern->sim_regs;
    spec.shape.smem_optin = smem > g->smem_per_block;
    spec.task_hits = a.task_hits;
    if (strcmp(c->be->ops->name, "sim") == 0) {
        spec.code = CORUN_CODE_SYNTHETIC;
        spec.task_ns = (corun__dist){CORUN_DIST_CONST, kern->sim_task_us * 1e3, 0};
    } else {
#ifdef CORUN_HAVE_CUDA
        spec.code = CORUN_CODE_USER;
        spec.user = &kern->code;
        spec.args = args;
        spec.ordered = ordered;
        spec.order_stream = stream;
#else
        return fail(CORUN_ENOTSUP, "built without CUDA");
#endif
    }
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        return fail(CORUN_ENOMEM, "out of memory");
    }
    j->ctx = c;
    j->kern = kern;
    j->capsm_asked = a.capsm;
    j->released = out == NULL; /* nobody will wait: forget it when it finishes */
    pthread_mutex_lock(&c->mu);
    /* The entry: CORUN_AHEAD 0 never the ahead one, 1 where the finished
     * runs' task times say (corun_ahead_choose), 2 always (tests). */
    spec.ahead = c->set.ahead != 0 && kern->has_ahead &&
                 (uint64_t)grid.x * grid.y * grid.z <= CORUN_AHEAD_MAX_TASKS &&
                 (c->set.ahead == 2 || corun_ahead_choose(&kern->memo, corun__budget_ns(&c->set)));
    rc = corun__sched_submit(c->s, &spec, &a, job_done, j, &j->k, why, sizeof(why));
    if (rc == CORUN_OK && out != NULL) {
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
     * insertion, so two threads never register the same kernel twice. */
    pthread_mutex_lock(&c->reg_mu);
    pthread_mutex_lock(&c->mu);
    for (k = c->kernels; k != NULL; k = k->next) {
#ifdef CORUN_HAVE_CUDA
        if (d->plain != NULL ? k->code.plain == d->plain
                             : (d->name != NULL && strcmp(k->name, d->name) == 0)) {
            break;
        }
#else
        if (d->name != NULL && strcmp(k->name, d->name) == 0) {
            break;
        }
#endif
    }
    pthread_mutex_unlock(&c->mu);
    rc = k != NULL ? CORUN_OK : corun_kernel_register(c, d, &k);
    pthread_mutex_unlock(&c->reg_mu);
    if (rc == CORUN_OK) {
        *out = k;
    }
    return rc;
}

/* Under c->mu: lets a STOPPING job reach PAUSED (or DONE). */
static int settle(corun_job *j)
{
    corun_ctx *c = j->ctx;

    while (j->k->state == CORUN_KS_STOPPING) {
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
    int rc;

    pthread_mutex_lock(&c->mu);
    if (j->done) {
        rc = fail(CORUN_ESTATE, "job '%s' has already finished", j->k->name);
    } else if (j->k->state != CORUN_KS_RUNNING) {
        rc = CORUN_OK; /* already stopping or paused, or not yet started */
    } else {
        rc = corun__sched_stop(c->s, j->k);
        if (rc != CORUN_OK) {
            fail(rc, "job '%s': preempt: %s", j->k->name, corun_strerror(rc));
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
    pthread_mutex_lock(&c->mu);
    rc = settle(j);
    if (rc == CORUN_OK && j->done) {
        rc = fail(CORUN_ESTATE, "job '%s' has already finished", j->k->name);
    } else if (rc == CORUN_OK) {
        corun__kernel *k = j->k;
        uint32_t held = corun__kernel_capsm(k);
        if (k->state == CORUN_KS_RUNNING) {
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
    pthread_mutex_lock(&c->mu);
    rc = settle(j);
    if (rc == CORUN_OK && j->done) {
        rc = fail(CORUN_ESTATE, "job '%s' has already finished", j->k->name);
    } else if (rc == CORUN_OK &&
               (j->k->state == CORUN_KS_PAUSED || j->k->state == CORUN_KS_WAITING)) {
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

CORUN_API int corun_job_wait(corun_job *j, int64_t timeout_ms)
{
    corun_ctx *c = j->ctx;
    struct timespec until;
    int rc = CORUN_OK;

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
            if (j->k->state == CORUN_KS_PAUSED) {
                rc = fail(CORUN_ESTATE, "job '%s' is paused: resume it first", j->k->name);
                break;
            }
            if (corun__sched_now(c->s) >= limit) {
                rc = CORUN_ETIMEDOUT;
                break;
            }
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
    int rc;

    pthread_mutex_lock(&c->mu);
    if (j->k->state == CORUN_KS_WAITING) {
        memset(out, 0, sizeof(*out));
        out->tasks = j->k->tasks;
        rc = CORUN_OK;
    } else if (j->done) {
        out->tasks = out->claimed = out->done = j->k->tasks;
        out->live = 0;
        out->task_ns = j->k->task_ns;
        out->ahead = j->k->ran_ahead;
        rc = CORUN_OK;
    } else {
        rc = corun__sched_progress(c->s, j->k, out);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

CORUN_API uint32_t corun_job_capsm(corun_job *j)
{
    uint32_t n;

    pthread_mutex_lock(&j->ctx->mu);
    n = corun__kernel_capsm(j->k);
    pthread_mutex_unlock(&j->ctx->mu);
    return n;
}

CORUN_API void corun_job_release(corun_job *j)
{
    corun_ctx *c;

    if (j == NULL) {
        return;
    }
    c = j->ctx;
    pthread_mutex_lock(&c->mu);
    if (j->done) {
        corun__sched_release(c->s, j->k);
        free(j);
    } else {
        j->released = 1;
    }
    pthread_mutex_unlock(&c->mu);
}
