/*
 * completion.c — how the host learns what happened on the GPU, without a
 * spinning core and without a driver call on the scheduler's thread:
 * launches on corun's streams are waited for by waiter threads (events),
 * direct kernels by reading their reports in host memory. poll() gathers
 * both. See cuda_int.h.
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/cuda/cuda_int.h"

/* A completion event from the free list, or a new one. Under b->mu. */
int corun__cuda_take_event(cuda_backend *b, CUevent *ev)
{
    if (b->nfree_events > 0) {
        *ev = b->free_events[--b->nfree_events];
        return CORUN_OK;
    }
    return b->d->cu->cuEventCreate(ev, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING) ==
                   CUDA_SUCCESS
               ? CORUN_OK
               : CORUN_ECUDA;
}

/* Returns a completion event to the free list. Under b->mu. */
void corun__cuda_give_event(cuda_backend *b, CUevent ev)
{
    if (b->nfree_events < MAX_WAITERS) {
        b->free_events[b->nfree_events++] = ev;
    } else {
        (void)b->d->cu->cuEventDestroy(ev);
    }
}

/*
 * Completion without host functions: a host function (cuLaunchHostFunc) in
 * one stream serialises kernels of other streams (NVIDIA/nccl#1742; measured
 * by gpu-check's hostfunc mode), which would make every kernel wait for the
 * one before it. Instead each launch records a blocking-sync event, and a
 * pool of waiter threads, one launch each, polls it for COMPLETION_SPIN_US,
 * then sleeps in cuEventSynchronize, then queues the launch and wakes the
 * eventfd that poll() sleeps on.
 */
static void wait_done(cuda_backend *b, const launch_rec *r)
{
    const corun__cu *cu = b->d->cu;
    const uint64_t until = corun__mono_ns() + (uint64_t)(b->set.completion_spin_us * 1e3);
    CUresult st;

    /* A blocking-sync wait wakes some tens of microseconds after the event
     * completes; a closed loop of launches pays that each launch. Polling
     * sees it at once, for a busy core while the launch runs. */
    while ((st = cu->cuEventQuery(r->done)) == CUDA_ERROR_NOT_READY && corun__mono_ns() < until) {
    }
    if (st == CUDA_ERROR_NOT_READY) {
        (void)cu->cuEventSynchronize(r->done);
    }
}

static void *waiter_main(void *p)
{
    cuda_backend *b = p;
    const corun__cu *cu = b->d->cu;

    (void)cu->cuCtxSetCurrent(b->d->ctx);
    pthread_mutex_lock(&b->mu);
    for (;;) {
        launch_rec *r;
        while (b->pend_head == NULL && !b->stopping) {
            b->idle++;
            pthread_cond_wait(&b->work, &b->mu);
            b->idle--;
        }
        if (b->pend_head == NULL) {
            break; /* stopping, nothing left */
        }
        r = b->pend_head;
        b->pend_head = r->next;
        if (b->pend_head == NULL) {
            b->pend_tail = NULL;
        }
        pthread_mutex_unlock(&b->mu);
        wait_done(b, r);
        pthread_mutex_lock(&b->mu);
        corun__cuda_report_done(b, r);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

void corun__cuda_report_done(cuda_backend *b, launch_rec *r)
{
    uint64_t one = 1;

    r->next = NULL;
    if (b->done_tail) {
        b->done_tail->next = r;
    } else {
        b->done_head = r;
    }
    b->done_tail = r;
    if (write(b->efd, &one, sizeof(one)) < 0) {
        /* the counter cannot overflow in practice */
    }
}

/* Hands a launch to a waiter, starting one if none is idle. Under b->mu. */
static void to_waiter(cuda_backend *b, launch_rec *r)
{
    r->next = NULL;
    if (b->pend_tail) {
        b->pend_tail->next = r;
    } else {
        b->pend_head = r;
    }
    b->pend_tail = r;
    if (b->idle == 0 && b->nwaiters < MAX_WAITERS &&
        pthread_create(&b->waiters[b->nwaiters], NULL, waiter_main, b) == 0) {
        b->nwaiters++;
    }
    pthread_cond_signal(&b->work);
}

/*
 * A launch made on the thread that polls (the scheduler's, which launches
 * what its policy decides) is polled there: a waiter asleep in
 * pthread_cond_wait, and poll() asleep in ppoll, each wake tens of
 * microseconds after they are signalled and, on a virtual machine's idle
 * cores, up to ~0.5 ms now and then; an LS kernel's end would pay both.
 * poll() queries its event instead while it waits, and hands it to a waiter
 * once it has run COMPLETION_SPIN_US (a waiter would sleep by then too).
 */
void corun__cuda_await(cuda_backend *b, launch_rec *r)
{
    if (b->set.completion_spin_us > 0 &&
        atomic_load_explicit(&b->polling, memory_order_relaxed) &&
        pthread_equal(atomic_load_explicit(&b->poller, memory_order_relaxed), pthread_self())) {
        r->since = corun__mono_ns();
        r->next = b->polled;
        b->polled = r;
        atomic_fetch_add_explicit(&b->npolled, 1, memory_order_relaxed);
        return;
    }
    to_waiter(b, r);
}

void corun__cuda_collect(cuda_backend *b)
{
    const uint64_t window = (uint64_t)(b->set.completion_spin_us * 1e3);
    launch_rec *mine, *keep = NULL, *r;
    uint64_t now;

    if (atomic_load_explicit(&b->npolled, memory_order_relaxed) == 0) {
        return;
    }
    pthread_mutex_lock(&b->mu);
    mine = b->polled;
    b->polled = NULL;
    pthread_mutex_unlock(&b->mu);
    now = corun__mono_ns();
    while ((r = mine) != NULL) {
        const CUresult st = b->d->cu->cuEventQuery(r->done);
        mine = r->next;
        if (st == CUDA_ERROR_NOT_READY && now - r->since < window) {
            r->next = keep;
            keep = r;
            continue;
        }
        pthread_mutex_lock(&b->mu);
        atomic_fetch_sub_explicit(&b->npolled, 1, memory_order_relaxed);
        if (st == CUDA_ERROR_NOT_READY) {
            to_waiter(b, r);
        } else {
            corun__cuda_report_done(b, r);
        }
        pthread_mutex_unlock(&b->mu);
    }
    if (keep != NULL) {
        pthread_mutex_lock(&b->mu);
        for (r = keep; r->next != NULL; r = r->next) {
        }
        r->next = b->polled;
        b->polled = keep;
        pthread_mutex_unlock(&b->mu);
    }
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Drains finished launches into ev. Under nothing; takes b->mu. */
static void drain(cuda_backend *b, corun__bevent *ev, size_t cap, size_t *n)
{
    pthread_mutex_lock(&b->mu);
    while (b->done_head != NULL && *n < cap) {
        launch_rec *r = b->done_head;
        b->done_head = r->next;
        if (b->done_head == NULL) {
            b->done_tail = NULL;
        }
        b->load[r->stream]--;
        r->k->inflight--;
        if (r->done != NULL) {
            corun__cuda_give_event(b, r->done);
        }
        memset(&ev[*n], 0, sizeof(ev[*n]));
        ev[*n].cookie = r->cookie;
        ev[*n].time_ns = corun__mono_ns();
        ev[*n].status = r->status;
        ev[*n].kind = CORUN_BEV_LAUNCH;
        (*n)++;
        free(r);
    }
    pthread_mutex_unlock(&b->mu);
}

/* Moves the direct kernels launched since into our own list. */
static void take_new(cuda_backend *b)
{
    corun__exec *k = atomic_exchange(&b->direct_new, NULL);

    while (k != NULL) {
        corun__exec *next = k->dnext;
        k->dprev = NULL;
        k->dnext = b->direct_head;
        if (b->direct_head != NULL) {
            b->direct_head->dprev = k;
        }
        b->direct_head = k;
        k->listed = true;
        k = next;
    }
}

bool corun__cuda_direct_over(const cuda_backend *b, const corun__exec *k)
{
    corun__report_view v;

    return corun__ctl_report_of(&b->reports[k->slot], k->seq, &v) &&
           (v.state == CORUN_REPORT_FINISHED || v.state == CORUN_REPORT_RELEASED);
}

/* Turns what direct kernels reported since the last scan into events.
 * Reads host memory only, takes no lock; the scheduler's thread. */
static void scan_direct(cuda_backend *b, corun__bevent *ev, size_t cap, size_t *n)
{
    corun__exec *k, *next;

    take_new(b);
    for (k = b->direct_head; k != NULL && *n < cap; k = next) {
        corun__report_view v;
        uint64_t cookie = atomic_load_explicit(&k->cookie, memory_order_acquire);
        next = k->dnext;
        if (cookie == 0 || k->over || !corun__ctl_report_of(&b->reports[k->slot], k->seq, &v) ||
            v.state == CORUN_REPORT_NONE) {
            continue;
        }
        /* by what it says: a report's count wraps, and the one read last
         * may be the 32nd after the one before */
        if (v.state == k->last.state && v.done == k->last.done && v.live == k->last.live) {
            continue;
        }
        k->last = v;
        memset(&ev[*n], 0, sizeof(ev[*n]));
        ev[*n].cookie = cookie;
        ev[*n].time_ns = corun__mono_ns();
        ev[*n].status = CORUN_OK;
        ev[*n].kind = v.state == CORUN_REPORT_HELD       ? CORUN_BEV_HELD
                      : v.state == CORUN_REPORT_FINISHED ? CORUN_BEV_FINISHED
                                                         : CORUN_BEV_RELEASED;
        ev[*n].done = v.done;
        ev[*n].live = v.live;
        ev[*n].task_ns = v.task_ns;
        ev[*n].run_ns = v.state == CORUN_REPORT_FINISHED ? v.run_ns : 0;
        (*n)++;
        if (v.state != CORUN_REPORT_HELD) {
            k->over = true;
        }
    }
}

/* Returns when launches finished, a direct kernel reported, the deadline
 * passed, or someone called wake (then possibly with no event: callers
 * loop). Polls while it polls launches (corun__cuda_await), else sleeps in
 * ppoll; while direct kernels are watched, at most the
 * report interval at a time (their device side cannot wake us). */
int corun__cuda_poll(corun__backend *be, uint64_t deadline, corun__bevent *ev, size_t cap,
                     size_t *n)
{
    cuda_backend *b = cb(be);
    struct pollfd pfd = {b->efd, POLLIN, 0};
    struct timespec ts;
    uint64_t now, wait, cnt, scan_ns = (uint64_t)(b->set.report_poll_us * 1e3);
    uint32_t wakes;

    *n = 0;
    wakes = atomic_load_explicit(&b->wakes, memory_order_acquire);
    atomic_store_explicit(&b->poller, pthread_self(), memory_order_relaxed);
    atomic_store_explicit(&b->polling, true, memory_order_relaxed);
    for (;;) {
        corun__cuda_collect(b);
        drain(b, ev, cap, n);
        scan_direct(b, ev, cap, n);
        if (*n > 0) {
            return CORUN_OK;
        }
        now = corun__mono_ns();
        if (atomic_load_explicit(&b->npolled, memory_order_relaxed) == 0 || now >= deadline ||
            atomic_load_explicit(&b->wakes, memory_order_acquire) != wakes) {
            break;
        }
        relax();
    }
    if (atomic_load_explicit(&b->wakes, memory_order_acquire) != wakes) {
        return CORUN_OK; /* woken: the caller looks at what changed */
    }
    if (now >= deadline) {
        return CORUN_OK;
    }
    /* At most a second at a time, so a lost wake-up costs little. */
    wait = deadline - now;
    if (wait > 1000000000ull) {
        wait = 1000000000ull;
    }
    if (atomic_load_explicit(&b->ndirect, memory_order_relaxed) > 0 && wait > scan_ns) {
        wait = scan_ns;
    }
    ts.tv_sec = (time_t)(wait / 1000000000ull);
    ts.tv_nsec = (long)(wait % 1000000000ull);
    if (ppoll(&pfd, 1, &ts, NULL) > 0 && read(b->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN) {
        return CORUN_EIO;
    }
    drain(b, ev, cap, n);
    scan_direct(b, ev, cap, n);
    return CORUN_OK;
}

void corun__cuda_direct_watch(cuda_backend *b, corun__exec *k)
{
    corun__exec *head = atomic_load_explicit(&b->direct_new, memory_order_relaxed);

    k->listed = false;
    do {
        k->dnext = head;
    } while (!atomic_compare_exchange_weak_explicit(&b->direct_new, &head, k,
                                                    memory_order_release, memory_order_relaxed));
    if (atomic_fetch_add_explicit(&b->ndirect, 1, memory_order_relaxed) == 0) {
        /* poll may be asleep for long: it reads reports only while some
         * direct kernel is watched */
        corun__cuda_wake(&b->be);
    }
}

void corun__cuda_direct_unwatch(cuda_backend *b, corun__exec *k)
{
    if (!k->listed) {
        take_new(b);
    }
    if (k->dprev != NULL) {
        k->dprev->dnext = k->dnext;
    } else if (b->direct_head == k) {
        b->direct_head = k->dnext;
    }
    if (k->dnext != NULL) {
        k->dnext->dprev = k->dprev;
    }
    k->dprev = k->dnext = NULL;
    atomic_fetch_sub_explicit(&b->ndirect, 1, memory_order_relaxed);
}

void corun__cuda_wake(corun__backend *be)
{
    uint64_t one = 1;

    atomic_fetch_add_explicit(&cb(be)->wakes, 1, memory_order_release);
    if (write(cb(be)->efd, &one, sizeof(one)) < 0) {
        /* the counter cannot overflow in practice */
    }
}

void corun__cuda_waiters_stop(cuda_backend *b)
{
    int i;

    pthread_mutex_lock(&b->mu);
    b->stopping = 1;
    pthread_cond_broadcast(&b->work);
    pthread_mutex_unlock(&b->mu);
    for (i = 0; i < b->nwaiters; i++) {
        pthread_join(b->waiters[i], NULL);
    }
    while (b->polled) {
        launch_rec *r = b->polled;
        b->polled = r->next;
        corun__cuda_give_event(b, r->done);
        free(r);
    }
    while (b->done_head) {
        launch_rec *r = b->done_head;
        b->done_head = r->next;
        if (r->done != NULL) {
            corun__cuda_give_event(b, r->done);
        }
        free(r);
    }
    for (i = 0; i < b->nfree_events; i++) {
        (void)b->d->cu->cuEventDestroy(b->free_events[i]);
    }
    b->nfree_events = 0;
}
