/*
 * channel.h — the page corund and a client share on a real GPU (the
 * daemon coordinates; each process keeps its own context and launches its
 * own kernels). The daemon makes it (memfd), passes it with its WELCOME
 * (SCM_RIGHTS) and both map it. Neither side ever waits on the other: the
 * daemon writes the client's window, the client writes what it does, each
 * side reads the other's words when it likes.
 *
 * window: the SMs the client's kernels may use, lo | hi << 32 (its
 * scheduler keeps every kernel there: corun__sched_window). The rest are
 * the client's counters, for the daemon's policy and `corun status`.
 */
#ifndef CORUN_WIRE_CHANNEL_H
#define CORUN_WIRE_CHANNEL_H

#include <stdatomic.h>
#include <stdint.h>

#define CORUN_CHANNEL_MAGIC 0x4c4e4843u /* "CHNL" */
#define CORUN_CHANNEL_VERSION 1u
#define CORUN_CHANNEL_SIZE 4096u

typedef struct corun__channel {
    uint32_t magic, version;
    /* the daemon writes */
    _Atomic uint64_t window;
    /* the client writes */
    _Atomic uint64_t launches;       /* kernels launched */
    _Atomic uint64_t finished;       /* of those, finished */
    _Atomic uint64_t tasks_done;     /* block-tasks of the finished ones */
    _Atomic uint64_t last_ls_ns;     /* CLOCK_MONOTONIC of its last LS-class or
                                        priority > 0 launch; 0 = none */
    _Atomic uint32_t ls_need;        /* SMs one wave of its largest LS kernel fills */
} corun__channel;

_Static_assert(sizeof(corun__channel) <= CORUN_CHANNEL_SIZE, "the channel fits its page");

static inline uint64_t corun__channel_window(uint32_t lo, uint32_t hi)
{
    return (uint64_t)lo | ((uint64_t)hi << 32);
}

#endif
