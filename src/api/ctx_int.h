/*
 * ctx_int.h — what corund and the daemon client need of a context beyond
 * corun.h. corund runs one context per GPU it serves and, for a simulated
 * GPU, moves its clock itself (in step with the wall clock) instead of
 * letting waits move it.
 */
#ifndef CORUN_API_CTX_INT_H
#define CORUN_API_CTX_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/settings.h"
#include "corun/corun.h"

/* corun_ctx_create with these settings as they are (no environment read,
 * no daemon: the context always schedules in-process). */
int corun__ctx_create_with(const corun__settings *set, const corun_ctx_opts *opts,
                           corun_ctx **out);

/* The scheduler's clock (ns): virtual for sim. */
uint64_t corun__ctx_now(corun_ctx *c);

/* A virtual-time context (sim): handles every event up to until_ns and
 * leaves the clock there. A real-time context runs by itself: no-op. */
int corun__ctx_advance(corun_ctx *c, uint64_t until_ns);

/* The context's backend (corund reaches other processes' control blocks
 * through its ctl_share and peer_* operations, backend.h). */
struct corun__backend *corun__ctx_backend(corun_ctx *c);

/* The context's policy name and GPU (SMs, free CapSMs now). */
const char *corun__ctx_policy(const corun_ctx *c);
uint32_t corun__ctx_sm_count(const corun_ctx *c);
uint32_t corun__ctx_free_capsm(corun_ctx *c);

/* A job as the scheduler sees it now (for status and traces). */
typedef struct corun__job_view {
    const char *state;     /* "waiting", "running", "stopping", "paused", "done", "failed" */
    bool done;             /* finished (done or failed) */
    int status;            /* its failure, or CORUN_OK */
    uint32_t capsm;        /* CapSMs held */
    uint64_t tasks, done_tasks;
    uint32_t preemptions;  /* times halted */
    uint64_t t_submit, t_start, t_end; /* scheduler clock (ns); 0 = not yet */
} corun__job_view;

void corun__job_view_get(corun_job *j, corun__job_view *v);

/* Gives up what is left of a job whose owner went away
 * (corun__sched_cancel): halted, it frees its CapSMs within one halt and
 * ends with CORUN_ECANCELED. A job that runs as a plain grid cannot be
 * halted and runs to its end (CORUN_ENOTSUP). */
int corun__job_cancel(corun_job *j);

#endif
