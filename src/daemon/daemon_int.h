/*
 * daemon_int.h — corund's pieces, one file each:
 *   server.c   the socket, the event loop, connections, signals, the clock
 *   conn.c     sending to one connection
 *   session.c  one client's requests: its kernels and jobs on a GPU
 *   status.c   the daemon's state as JSON (STATUS)
 *   trace.c    Chrome trace recording (TRACE)
 * Everything runs on the daemon's one thread.
 */
#ifndef CORUN_DAEMON_INT_H
#define CORUN_DAEMON_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "api/ctx_int.h"
#include "corun/corun.h"
#include "corun/corun_sim.h"
#include "wire/channel.h"
#include "daemon/corund.h"
#include "wire/proto.h"

#define CORUN__DAEMON_MAX_GPUS CORUN_DAEMON_MAX_GPUS
#define CORUN__DAEMON_MAX_CLIENTS 1024
#define CORUN__DAEMON_MAX_KERNELS 4096 /* per client */
#define CORUN__DAEMON_MAX_JOBS 65536   /* live, per client */
#define CORUN__DAEMON_LATENCIES 65536  /* per client, the most recent */
#define CORUN__CHAN_LANES 16           /* trace tracks of a coordinated client's kernels */
#define CORUN__CHAN_KERNELS 32         /* kernel names a coordinated client's status lists */
#define CORUN__CHAN_JOBS 64            /* a coordinated client's jobs the daemon follows */

typedef struct corun__dtrace corun__dtrace;
typedef struct corun__dclient corun__dclient;

/* One GPU and its scheduler. */
typedef struct corun__dgpu {
    unsigned index;
    uint32_t id;               /* its backend's gpu_id: what a client's HELLO names */
    corun_ctx *ctx;
    char name[CORUN_PROTO_NAME];
    char mode[CORUN_PROTO_WORD]; /* "sim", "mps", "time-sliced" */
    bool coordinate;           /* clients keep their own contexts; the daemon sets
                                  their SM windows (channel.h) */
    uint32_t sms;
    uint64_t sim_at;           /* simulated ns the scheduler has been advanced to */
} corun__dgpu;

/* A client's job on a GPU. */
typedef struct corun__djob {
    uint32_t id;               /* the client's id for it */
    corun_job *j;
    unsigned gpu;
    char kernel[CORUN_PROTO_NAME];
    corun__dclient *owner;     /* NULL once its client went away */
    uint32_t pid;              /* its client's, for traces after it left */
    bool released;             /* its client let go: freed once finished */
    bool ended;                /* its end was counted and traced */
    uint32_t lane;             /* trace track within its process */
    corun__job_view seen;      /* at the daemon's last look */
    uint64_t run_from;         /* start of its running stretch (GPU clock, ns); 0 = none */
    uint64_t orphaned;         /* monotonic ns its client went away; 0 = not yet, or its
                                  CapSMs' return was logged */
    struct corun__djob *next;  /* in the daemon's list */
} corun__djob;

enum { CORUN__CJ_RUNNING = 1, CORUN__CJ_STOPPING, CORUN__CJ_HALTED };

typedef enum corun__drole { CORUN_DR_NEW, CORUN_DR_CLIENT, CORUN_DR_OBSERVER } corun__drole;

struct corun__dclient {
    int fd;
    uint32_t id;
    pid_t pid;
    uid_t uid;
    gid_t gid;
    char user[32];
    corun__drole role;
    corun__msg_hello hello;
    unsigned gpu;              /* the index of the GPU its HELLO named */
    corun__proto_rx *rx;
    bool closing;              /* drop it at the end of this turn */
    /* kernels, by the client's id */
    struct corun__dkernel { uint32_t id; corun_kernel *k; char name[CORUN_PROTO_NAME]; } *kernels;
    size_t nkernels, cap_kernels;
    uint32_t live_jobs;
    uint64_t lanes;            /* trace tracks in use (bit i: lane i) */
    /* since it connected */
    uint64_t launches, finished, tasks_done, preemptions;
    double *lat_ms;            /* launch to end of its finished jobs (ring) */
    size_t nlat;
    /* the one request waiting for an answer (requests are answered in order) */
    bool pending;
    uint16_t pend_type;        /* WAIT or TRACE */
    uint32_t pend_seq, pend_job;
    uint64_t pend_until;       /* monotonic ns; UINT64_MAX: no limit */
    corun__dtrace *tr;         /* TRACE: what it records */
    corun__channel *chan;      /* coordinated GPU: the page shared with it */
    int chan_fd;               /* until WELCOME has passed it on */
    uint64_t window;           /* what the daemon last wrote there */
    uint64_t chan_tail;        /* the next event of its ring to read (channel.h) */
    uint64_t chan_bad;         /* events of an unknown kind, skipped */
    uint64_t lane_end[CORUN__CHAN_LANES]; /* trace: when each lane's last stretch ends */
    struct corun__dkrun { char name[CORUN_PROTO_NAME]; uint32_t running; }
        krun[CORUN__CHAN_KERNELS]; /* its kernels launched and not ended, by name */
    uint64_t krun_other;       /* the same for names past the table */
    /* its jobs, as its ring tells of them (RUN to END; a job that ran out
     * of room is traced from its END alone) */
    struct corun__dcjob {
        uint32_t id;
        bool used;
        uint8_t state;         /* CORUN__CJ_RUNNING, _STOPPING, _HALTED */
        uint32_t capsm;
        uint64_t since;        /* its running stretch's start (trace clock) */
        char kernel[CORUN_PROTO_NAME];
    } cjobs[CORUN__CHAN_JOBS];
    uint64_t cjobs_untracked;
    void *peer;                /* its control blocks opened here (backend peer_open) */
    uint8_t *mirror;           /* their signal mirrors, mapped from the file its
                                  MIRROR passed (wire/mirror.h); NULL: none */
    bool peer_tried;           /* opened or failed once: not tried again */
    uint64_t narrowed;         /* its kernels the daemon narrowed itself */
    corun__dclient *next;
};

typedef struct corun__daemon {
    const corun__daemon_opts *o;
    int lfd;                   /* listening socket; -1 once stopping */
    int sig_r, sig_w;          /* self-pipe of SIGTERM / SIGINT */
    corun__dgpu gpus[CORUN__DAEMON_MAX_GPUS];
    unsigned ngpus;
    corun__dclient *clients;
    uint32_t nclients, next_client;
    corun__djob *jobs;
    uint64_t t0;               /* monotonic ns at start */
    bool stopping;
    uint64_t stop_by;          /* monotonic ns: the drain's end */
    uint64_t quiet_since;      /* stopping: monotonic ns since no job runs; 0 = one runs */
} corun__daemon;

/* conn.c */
uint64_t corun__dnow(void); /* CLOCK_MONOTONIC, ns */
/* Sends m to c; a client that cannot take it is marked closing. */
void corun__dsend(corun__dclient *c, corun__msg *m);
/* corun__dsend with descriptor pass sent along. */
void corun__dsend_fd(corun__dclient *c, corun__msg *m, int pass);
void corun__dreply(corun__dclient *c, uint32_t seq, int status, const char *why,
                   const uint64_t v[6]);
/* Sends text as DATA pieces, then REPLY OK. */
void corun__dsend_text(corun__dclient *c, uint32_t seq, const char *text, size_t len);

/* session.c */
/* Handles one decoded message of c. */
void corun__dsession_handle(corun__daemon *d, corun__dclient *c, const corun__msg *m);
/* After the clock moved: jobs' ends counted, waits and traces answered,
 * orphans finished and freed. */
void corun__dsession_tick(corun__daemon *d);
/* c went away: its jobs are cut (corun__job_cancel) and orphaned. */
void corun__dsession_drop(corun__daemon *d, corun__dclient *c);
/* Coordinated GPUs: every client's SM window from the policy (session.c). */
void corun__dsession_coordinate(corun__daemon *d);
/* Jobs still running on any GPU. */
unsigned corun__dsession_active(const corun__daemon *d);

/* status.c: STATUS's JSON as seen by a peer of uid `uid` (root and the
 * daemon's own user see every client; others their own, the rest counted). */
json_t *corun__dstatus(corun__daemon *d, uid_t uid);

/* trace.c */
corun__dtrace *corun__dtrace_new(void);
void corun__dtrace_free(corun__dtrace *t);
/* One event: ph "X" (dur_ns used), "i" (instant) or "M" (metadata, name
 * "process_name"/"thread_name", args {"name": ...}); args is stolen. */
void corun__dtrace_event(corun__dtrace *t, const char *ph, const char *name, uint32_t pid,
                         uint32_t tid, uint64_t ts_ns, uint64_t dur_ns, json_t *args);
/* The trace as {"traceEvents": [...]} text (malloc'd; NULL on failure). */
char *corun__dtrace_dump(corun__dtrace *t, size_t *len);
size_t corun__dtrace_count(const corun__dtrace *t);

#endif
