/*
 * corund.h — the daemon: one scheduler per GPU for every process on the
 * host (docs/daemon.md). `corun daemon` runs it.
 *
 * Two ways to serve a GPU. A simulated GPU is owned: a client's simulated
 * context (libcorun, api/remote.h) registers its kernels and launches its
 * jobs on the daemon's GPU, where the daemon's policy schedules them beside
 * every other client's; the daemon moves the simulated clock in step with
 * the wall clock (times the sim speed). A real GPU is coordinated: each
 * client keeps its context and launches its own kernels, and the daemon
 * keeps each client's kernels on a window of SMs that it writes into a
 * page they share (channel.h): LS programs on SMs of their own, batch
 * programs on the rest while LS work goes on, on all of them otherwise.
 *
 * Guarantees. The daemon never blocks on a client: sockets are
 * non-blocking, a client's requests are answered in order, a malformed
 * message ends that client only. A client that goes away (BYE, EOF, a
 * kill) has its unfinished jobs halted and cut to the tasks they ran, so
 * their CapSMs are free within one halt. SIGTERM or SIGINT stops accepting,
 * lets the jobs that run finish (up to drain_s), gives clients 1 s more to
 * collect finished jobs, answers what waits, and returns.
 */
#ifndef CORUN_DAEMON_CORUND_H
#define CORUN_DAEMON_CORUND_H

#include "core/settings.h"

/* Most GPUs one daemon serves. */
#define CORUN_DAEMON_MAX_GPUS 8

typedef struct corun__daemon_opts {
    corun__settings settings; /* the GPUs' scheduler settings (policy, ...) */
    const char *backend;      /* what the daemon serves: "sim" */
    const char *socket_path;  /* where it listens */
    const char *group;        /* group the socket belongs to; "" = the daemon's */
    double sim_speed;         /* simulated seconds per wall second, > 0 */
    double drain_s;           /* after SIGTERM, how long running jobs may take */
    int ready_fd;             /* >= 0: gets "ok\n" once listening, or "error: WHY\n" */
    int coordinate;           /* a simulated GPU too is coordinated, not owned (tests) */
    unsigned ls_sms;          /* coordinated: SMs kept for LS programs; 0 = what
                                 they report they need, at least RESERVE_CAPSM */
    unsigned gpus;            /* GPUs served (one scheduler each): a real host's
                                 first ones, or this many simulated ones; 0 = every
                                 GPU of the host, one simulated */
} corun__daemon_opts;

/* Runs the daemon until SIGTERM or SIGINT. Returns 0 after a clean stop, 1
 * if it could not start (logged, and written to ready_fd). */
int corun__daemon_run(const corun__daemon_opts *o);

#endif
