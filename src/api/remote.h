/*
 * remote.h — libcorun's side of corund: one connection per context, over
 * which a simulated context's kernels and jobs live on the daemon's GPU.
 *
 * Requests are answered in order; one at a time per connection (a mutex),
 * so a thread waiting for a job waits in slices and lets others in between.
 * When the daemon goes away every call on what it held fails with
 * CORUN_EIO and says so; the connection is tried again, at most every
 * CORUN__REMOTE_RETRY_MS, by the next call that would use it. Kernel and
 * job ids are per connection: a kernel is registered again on each new
 * connection, a job lives only on the connection that launched it.
 *
 * Nothing here prints.
 */
#ifndef CORUN_API_REMOTE_H
#define CORUN_API_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/settings.h"
#include "corun/corun.h"
#include "corun/corun_sim.h"
#include "wire/channel.h"
#include "wire/proto.h"

#define CORUN__REMOTE_RETRY_MS 200

typedef struct corun__remote corun__remote;

/* The DAEMON setting's three forms. */
typedef enum corun__daemon_mode {
    CORUN__DAEMON_AUTO, /* "auto" */
    CORUN__DAEMON_OFF,  /* "off" */
    CORUN__DAEMON_PATH, /* an absolute path */
    CORUN__DAEMON_BAD   /* anything else */
} corun__daemon_mode;

corun__daemon_mode corun__daemon_mode_of(const char *value);

/* Connects as the DAEMON setting says: "off" gives CORUN_ENOENT; "auto"
 * tries DAEMON_SOCKET and gives CORUN_ENOENT when it cannot use a daemon
 * there (none listens, no permission, it refuses, it serves another kind
 * of GPU); an absolute path must answer (else CORUN_EIO or CORUN_ENOENT,
 * or CORUN_ENOTSUP for a daemon that does not serve `backend`; why says
 * why); anything else is CORUN_EINVAL. On success the daemon has welcomed
 * the client (HELLO sent from set's LAUNCH_* defaults, on GPU `gpu`: the
 * backend's gpu_id, which the daemon finds among its GPUs). */
int corun__remote_open(const corun__settings *set, const char *backend, uint32_t gpu,
                       corun__remote **out, char *why, size_t why_len);

/* Says goodbye (the daemon halts what the client left running) and frees. */
void corun__remote_close(corun__remote *r);

/* The connection's number now, connecting again first if it is down and
 * the last try is CORUN__REMOTE_RETRY_MS old; 0 while there is none. */
uint32_t corun__remote_gen(corun__remote *r);

/* A coordinated GPU (the daemon's WELCOME said "coordinate"): this
 * program keeps its context and launches its own kernels; the daemon only
 * sets the SMs they may use, through a page both map (wire/channel.h). */
bool corun__remote_coordinated(const corun__remote *r);
/* Coordinated: the SM window the daemon gives this program now; the whole
 * GPU while the daemon is away (noticed here, and tried again every
 * CORUN__REMOTE_RETRY_MS). Returns false on an owned GPU. */
bool corun__remote_window(corun__remote *r, uint32_t sm_count, uint32_t *lo, uint32_t *hi);
/* Coordinated: whether the daemon saw LS work going on in another program
 * on this GPU within the last window_ns (channel.h's ls_elsewhere). False
 * otherwise, and while the daemon is away. Never waits. */
bool corun__remote_ls_elsewhere(corun__remote *r, uint64_t window_ns);
/* Coordinated: moves scheduler s's kernels to the window the daemon gives
 * now (corun__sched_window), if it differs from *applied (lo | hi << 32,
 * updated). Returns true when it moved them; false on an owned GPU, with
 * no daemon (r NULL), or when nothing changed. */
struct corun__sched;
struct corun__job;
bool corun__remote_follow(corun__remote *r, struct corun__sched *s, uint64_t *applied);
/* Coordinated: what the program did, for the daemon's policy, status and
 * traces (channel.h: counters, and an event in the ring, dropped when it
 * is full): a launch of kernel `kernel` (ls: corun__attr_ls), a finished job
 * k (its times, tasks, preemptions, and for an LS kernel the SMs one wave
 * of it fills). Never wait. No-ops otherwise (r may be NULL for count_job). */
void corun__remote_count_launch(corun__remote *r, bool ls, const char *kernel);
void corun__remote_count_job(corun__remote *r, const struct corun__job *k);
/* Coordinated: job k runs, was told to stop, is halted or was resized
 * (what: a corun__job_change), into the ring; a no-op otherwise. A
 * scheduler observer (corun__sched_opts.observe): never waits. */
void corun__remote_count_change(void *r, const struct corun__job *k, int what);

/* Coordinated, with a backend that shares its control blocks (ctl_share):
 * gives the daemon this process's blocks through the page of the current
 * connection, once per page (call it where the window is followed). Before
 * r is closed, unshare_ctl makes be stop writing into r's pages. */
struct corun__backend;
void corun__remote_share_ctl(corun__remote *r, struct corun__backend *be);
void corun__remote_unshare_ctl(corun__remote *r, struct corun__backend *be);

/* What the daemon said of itself when it welcomed this connection. */
const corun__msg_welcome *corun__remote_welcome(const corun__remote *r);
const char *corun__remote_path(const corun__remote *r);

/* One request on connection gen (0: fails). m's type and payload are the
 * caller's; the seq is set here. The REPLY comes back in *reply (its
 * status is the request's outcome). CORUN_EIO when gen is gone or the
 * daemon goes away meanwhile (why says so): the connection is closed. */
int corun__remote_call(corun__remote *r, uint32_t gen, corun__msg *m, corun__msg_reply *reply,
                       char *why, size_t why_len);

/* A new kernel or job id on connection gen. */
uint32_t corun__remote_next_id(corun__remote *r);

#endif
