/*
 * launcher.c — the later grids of a direct kernel (a halt's resume grid
 * behind its gate, a growth) are launched by a thread of their own, never by
 * the thread that asks for them.
 *
 * Why: a program's thread may sit in a synchronous copy (cudaMemcpy on the
 * legacy or per-thread default stream) that waits for a kernel corun holds.
 * A launch made meanwhile waits in the driver for that copy (measured on the
 * H100: gpu-check's sync step hung in the halt of a second job on the legacy
 * default stream and in its growth on the per-thread one). Made from the
 * asking thread, under the context's lock, it blocked every other corun call,
 * the resume of the held kernel among them: a deadlock. Made here, only this
 * queue waits; the resume is a write (corun_ctl.h), so the copy ends and the
 * launch goes through.
 *
 * Order. While a kernel has something queued here, its signals are queued
 * behind it (corun__cuda_write_after): above all the halt, which must not
 * take effect before its resume grid is on the GPU -- if that launch waits
 * for a copy that waits for this kernel, the kernel keeps running, ends, and
 * the copy and then the launch go through. Otherwise signals are written at
 * once; a grid launched later reads the halt, eviction and SM range in force
 * when it starts, and its gate (a wait for `resume` to reach its number)
 * passes at once if the resume was written before it. A grid counts in flight
 * from the moment it is queued (k->inflight, the stream's load), so closing
 * the kernel waits for it; one that cannot be launched is reported like a
 * finished launch with its error, which fails the kernel, and its halted
 * primary grid is released so that the program's stream is not held for
 * ever. A grid whose kernel has reported its end by the time its turn comes
 * is not launched (it would find no task) and counts as finished.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cuda/cuda_int.h"

typedef struct launch_op {
    corun__exec *k;
    size_t nw;                  /* > 0: writes w[0..nw) instead of a launch */
    corun__ctl_write w[CORUN_CTL_MAX_WRITES];
    int stream;                 /* reserved (corun__cuda_launch_reserve) */
    unsigned nworkers;
    uint32_t gate;
    uint64_t cookie;
    corun_worker_arg wa;        /* its own: k->wa is rewritten by later grids */
    struct launch_op *next;
} launch_op;

/* A grid that was not launched, reported like a launch that finished with
 * status (CORUN_OK: skipped), so that the kernel's count of grids in flight
 * comes down; poll hands it to the scheduler. */
static void report_unlaunched(cuda_backend *b, launch_op *op, int status)
{
    launch_rec *r = calloc(1, sizeof(*r));

    pthread_mutex_lock(&b->mu);
    if (r == NULL) {
        /* nothing to report it with: the counts go back here */
        b->load[op->stream]--;
        op->k->inflight--;
        pthread_mutex_unlock(&b->mu);
        return;
    }
    r->k = op->k;
    r->cookie = op->cookie;
    r->stream = op->stream;
    r->status = status;
    corun__cuda_report_done(b, r);
    pthread_mutex_unlock(&b->mu);
}

/* A launch that failed: the kernel's anchor lets its stream go, and poll
 * reports the launch finished with the error. */
static void launch_failed(cuda_backend *b, launch_op *op, int rc)
{
    corun__ctl_write w[CORUN_CTL_MAX_WRITES];
    size_t n = 0;

    corun__ctl_release(w, &n);
    (void)corun__cuda_write(b, op->k, w, n);
    report_unlaunched(b, op, rc);
}

static void run_op(cuda_backend *b, launch_op *op)
{
    void *params[MAX_PARAMS + 1];
    int rc;

    if (op->nw > 0) {
        (void)corun__cuda_write(b, op->k, op->w, op->nw);
        return;
    }
    if (corun__cuda_direct_over(b, op->k)) {
        /* Its tasks are all done: the grid would run nothing, and its launch
         * would be one more driver call racing the program's own (under
         * compute-sanitizer a launch here while the program's thread waited
         * in cuStreamSynchronize hung both). Writes still go: a gate
         * opened for a grid launched before must open. */
        report_unlaunched(b, op, CORUN_OK);
        return;
    }
    params[0] = &op->wa;
    memcpy(&params[1], &op->k->params[1], op->k->nparams * sizeof(void *));
    rc = corun__cuda_launch_issue(b, op->k, op->stream, 1, op->nworkers, op->gate, op->cookie,
                                  params);
    if (rc != CORUN_OK) {
        launch_failed(b, op, rc);
    }
}

static void *launcher_main(void *p)
{
    cuda_backend *b = p;

    (void)corun__cuda_set_current(b);
    pthread_mutex_lock(&b->lq_mu);
    for (;;) {
        launch_op *op;
        while (b->lq_head == NULL && !b->lq_stop) {
            pthread_cond_wait(&b->lq_cv, &b->lq_mu);
        }
        op = b->lq_head;
        if (op == NULL) {
            break; /* stopping, nothing left */
        }
        b->lq_head = op->next;
        if (b->lq_head == NULL) {
            b->lq_tail = NULL;
        }
        pthread_mutex_unlock(&b->lq_mu);
        run_op(b, op);
        pthread_mutex_lock(&b->lq_mu);
        op->k->lq_pending--;
        pthread_cond_broadcast(&b->lq_cv); /* corun__cuda_launcher_forget waits on it */
        free(op);
    }
    pthread_mutex_unlock(&b->lq_mu);
    return NULL;
}

/* Queues op (starting the thread the first time). Under b->lq_mu. */
static int push(cuda_backend *b, launch_op *op)
{
    if (!b->lq_started) {
        if (pthread_create(&b->lq_thread, NULL, launcher_main, b) != 0) {
            return CORUN_ENOMEM;
        }
        b->lq_started = true;
    }
    op->next = NULL;
    if (b->lq_tail) {
        b->lq_tail->next = op;
    } else {
        b->lq_head = op;
    }
    b->lq_tail = op;
    op->k->lq_pending++;
    pthread_cond_signal(&b->lq_cv);
    return CORUN_OK;
}

int corun__cuda_launch_later(cuda_backend *b, corun__exec *k, const corun__launch_req *req)
{
    launch_op *op = calloc(1, sizeof(*op));
    int rc;

    if (op == NULL) {
        return CORUN_ENOMEM;
    }
    op->k = k;
    op->nworkers = req->nworkers;
    op->gate = req->gate;
    op->cookie = req->cookie;
    op->wa = k->wa;
    pthread_mutex_lock(&b->lq_mu);
    rc = push(b, op);
    if (rc == CORUN_OK) {
        op->stream = corun__cuda_launch_reserve(b, k, req->priority);
    }
    pthread_mutex_unlock(&b->lq_mu);
    if (rc != CORUN_OK) {
        free(op);
    }
    return rc;
}

int corun__cuda_write_after(cuda_backend *b, corun__exec *k, const corun__ctl_write *w, size_t n)
{
    launch_op *op = NULL;
    int rc = CORUN_OK;

    if (n == 0 || n > CORUN_CTL_MAX_WRITES) {
        return corun__cuda_write(b, k, w, n);
    }
    pthread_mutex_lock(&b->lq_mu);
    if (k->lq_pending > 0) {
        op = calloc(1, sizeof(*op));
        if (op == NULL) {
            rc = CORUN_ENOMEM;
        } else {
            op->k = k;
            op->nw = n;
            memcpy(op->w, w, n * sizeof(*w));
            rc = push(b, op);
        }
    }
    pthread_mutex_unlock(&b->lq_mu);
    if (op == NULL && rc == CORUN_OK) {
        return corun__cuda_write(b, k, w, n); /* nothing queued: at once */
    }
    if (rc != CORUN_OK) {
        free(op);
    }
    return rc;
}

bool corun__cuda_launcher_forget(cuda_backend *b, corun__exec *k)
{
    struct timespec until;
    bool gone;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    pthread_mutex_lock(&b->lq_mu);
    while (k->lq_pending > 0 && pthread_cond_timedwait(&b->lq_cv, &b->lq_mu, &until) == 0) {
    }
    gone = k->lq_pending == 0;
    pthread_mutex_unlock(&b->lq_mu);
    return gone;
}

void corun__cuda_launcher_stop(cuda_backend *b)
{
    pthread_mutex_lock(&b->lq_mu);
    b->lq_stop = true;
    pthread_cond_signal(&b->lq_cv);
    pthread_mutex_unlock(&b->lq_mu);
    if (b->lq_started) {
        pthread_join(b->lq_thread, NULL);
        b->lq_started = false;
    }
}
