/*
 * channel.h — the page corund and a client share on a real GPU (the
 * daemon coordinates; each process keeps its own context and launches its
 * own kernels). The daemon makes it (a memfd sealed at its size), passes it
 * with its WELCOME (SCM_RIGHTS) and both map it. Neither side ever waits on
 * the other: the daemon writes the client's window, the client writes what
 * it does, each side reads the other's words when it likes.
 *
 * window: the SMs the client's kernels may use, lo | hi << 32 (its
 * scheduler keeps every kernel there: corun__sched_window). ls_elsewhere:
 * when the daemon last saw LS work going on in another program on this GPU
 * (the client then draws its plain line as for its own LS work). The counters
 * are the client's, for the daemon's policy and `corun status`; the ring
 * carries each launch, and each job's runs, halts, pauses, resizes and end,
 * for status, latencies and traces; ctl_* give
 * the daemon the client's control blocks (CUDA IPC), so it can narrow the
 * client's running kernels itself when it takes SMs away. The client's
 * threads push into the ring (a bounded multi-producer queue after Vyukov:
 * a slot is claimed by compare-and-swap on head once its sequence says it
 * is free, and published by storing its sequence); a full ring drops the
 * event and counts it, so a launch never waits for the daemon. The daemon
 * alone pops. Everything in the page is the client's to scribble on: the
 * daemon bounds what it reads (corun__channel_pop) and trusts no number.
 */
#ifndef CORUN_WIRE_CHANNEL_H
#define CORUN_WIRE_CHANNEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CORUN_CHANNEL_MAGIC 0x4c4e4843u /* "CHNL" */
#define CORUN_CHANNEL_VERSION 3u
#define CORUN_CHANNEL_SIZE (130u * 4096u)
#define CORUN_CHANNEL_RING 4096u /* events (a power of two): some 3 ms of a loop of 2 us
                                    kernels, three events each, the daemon reading every 1 ms */
#define CORUN_CHANNEL_LIVE 64u  /* words of the map of control blocks in use: 4096 blocks */

typedef enum corun__chan_kind {
    CORUN_CHAN_LAUNCH = 1, /* a kernel launched: t_ns, kernel, ls */
    CORUN_CHAN_END = 2,    /* a kernel ended: all fields */
    CORUN_CHAN_RUN = 3,    /* job `job` runs (started, resumed): t_ns, kernel, capsm */
    CORUN_CHAN_HALT = 4,   /* it was told to stop */
    CORUN_CHAN_PAUSED = 5, /* it is halted: its workers are gone */
    CORUN_CHAN_RESIZE = 6  /* its CapSMs are now capsm */
} corun__chan_kind;

typedef struct corun__chan_event {
    _Atomic uint64_t seq;  /* i for the free slot of event i, i + 1 once event i is in */
    uint64_t t_ns;         /* CLOCK_MONOTONIC when the client wrote it */
    uint64_t run_ns;       /* END: first launch to end, the client's clock */
    uint64_t turnaround_ns; /* END: submission to end */
    uint64_t tasks;        /* END: block-tasks it ran */
    uint32_t kind;         /* corun__chan_kind */
    uint32_t ls;           /* LS class or priority > 0 */
    uint32_t preemptions;  /* END */
    int32_t status;        /* END: CORUN_OK, or why it failed */
    uint32_t job;          /* the client's id of the job (all but LAUNCH) */
    uint32_t capsm;        /* RUN, RESIZE: CapSMs it holds */
    char kernel[64];       /* its name, NUL-terminated (the daemon checks) */
} corun__chan_event;

typedef struct corun__channel {
    uint32_t magic, version;
    /* the daemon writes */
    _Atomic uint64_t window;
    _Atomic uint64_t ls_elsewhere_ns; /* CLOCK_MONOTONIC when LS work went on in another
                                         program on this GPU, rewritten every turn while it
                                         does; 0 = never */
    /* the client writes */
    _Atomic uint64_t launches;       /* kernels launched */
    _Atomic uint64_t finished;       /* of those, finished */
    _Atomic uint64_t tasks_done;     /* block-tasks of the finished ones */
    _Atomic uint64_t last_ls_ns;     /* CLOCK_MONOTONIC of its last LS-class or
                                        priority > 0 launch; 0 = none */
    _Atomic uint32_t ls_need;        /* SMs one wave of its largest LS kernel fills */
    _Atomic uint64_t dropped;        /* events the full ring had no slot for */
    /* its control blocks, for the daemon to narrow its kernels itself (a
     * GPU backend's ctl_share, backend.h): the CUDA IPC handle and their
     * number, written before ctl_ok is set, and the map of those holding a
     * kernel (bit s: block s), kept up to date by the backend */
    _Atomic uint32_t ctl_ok;
    uint32_t ctl_slots;
    uint8_t ctl_handle[64];
    uint64_t ctl_live[CORUN_CHANNEL_LIVE]; /* __atomic builtins (the backend's C++-safe map) */
    _Atomic uint64_t head;           /* the next event's index (clients) */
    uint64_t tail;                   /* the next to pop (the daemon's own copy rules) */
    corun__chan_event ring[CORUN_CHANNEL_RING];
} corun__channel;

_Static_assert(sizeof(corun__channel) <= CORUN_CHANNEL_SIZE, "the channel fits its page");

/* The daemon makes the ring empty: slot i free for event i. */
static inline void corun__channel_ring_init(corun__channel *ch)
{
    uint32_t i;

    for (i = 0; i < CORUN_CHANNEL_RING; i++) {
        atomic_store_explicit(&ch->ring[i].seq, i, memory_order_relaxed);
    }
    atomic_store_explicit(&ch->head, 0, memory_order_relaxed);
    ch->tail = 0;
}

/* A client's thread adds ev (its seq ignored); false, counted in dropped,
 * when the ring is full. Never waits. */
static inline bool corun__channel_push(corun__channel *ch, const corun__chan_event *ev)
{
    uint64_t h = atomic_load_explicit(&ch->head, memory_order_relaxed);
    corun__chan_event *e;

    for (;;) {
        uint64_t q;
        e = &ch->ring[h & (CORUN_CHANNEL_RING - 1)];
        q = atomic_load_explicit(&e->seq, memory_order_acquire);
        if (q == h) {
            if (atomic_compare_exchange_weak_explicit(&ch->head, &h, h + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed)) {
                break;
            }
        } else if (q < h) {
            atomic_fetch_add_explicit(&ch->dropped, 1, memory_order_relaxed);
            return false; /* the slot still holds an event not popped */
        } else {
            h = atomic_load_explicit(&ch->head, memory_order_relaxed);
        }
    }
    e->t_ns = ev->t_ns;
    e->run_ns = ev->run_ns;
    e->turnaround_ns = ev->turnaround_ns;
    e->tasks = ev->tasks;
    e->kind = ev->kind;
    e->ls = ev->ls;
    e->preemptions = ev->preemptions;
    e->status = ev->status;
    e->job = ev->job;
    e->capsm = ev->capsm;
    memcpy(e->kernel, ev->kernel, sizeof(e->kernel));
    atomic_store_explicit(&e->seq, h + 1, memory_order_release);
    return true;
}

/* The daemon takes the oldest event into *out, kept at *tail (its own copy
 * of the tail: the page's is the client's to overwrite); false when none is
 * in. The copy is made safe to use: its name terminated, its kind 0 when
 * it is not a corun__chan_kind (the caller skips it). */
static inline bool corun__channel_pop(corun__channel *ch, uint64_t *tail, corun__chan_event *out)
{
    corun__chan_event *e = &ch->ring[*tail & (CORUN_CHANNEL_RING - 1)];

    if (atomic_load_explicit(&e->seq, memory_order_acquire) != *tail + 1) {
        return false;
    }
    out->t_ns = e->t_ns;
    out->run_ns = e->run_ns;
    out->turnaround_ns = e->turnaround_ns;
    out->tasks = e->tasks;
    out->kind = e->kind;
    out->ls = e->ls != 0;
    out->preemptions = e->preemptions;
    out->status = e->status;
    out->job = e->job;
    out->capsm = e->capsm;
    memcpy(out->kernel, e->kernel, sizeof(out->kernel));
    out->kernel[sizeof(out->kernel) - 1] = '\0';
    atomic_store_explicit(&e->seq, *tail + CORUN_CHANNEL_RING, memory_order_release);
    (*tail)++;
    ch->tail = *tail;
    if (out->kind < CORUN_CHAN_LAUNCH || out->kind > CORUN_CHAN_RESIZE) {
        out->kind = 0;
    }
    return true;
}

static inline uint64_t corun__channel_window(uint32_t lo, uint32_t hi)
{
    return (uint64_t)lo | ((uint64_t)hi << 32);
}

#endif
