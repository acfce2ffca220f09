/*
 * status.c — the daemon's state as JSON (STATUS; the schema `corun status`
 * reads, docs/daemon.md). A peer sees every client if it is root or the
 * daemon's own user, else its own clients and a count of the others.
 */
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common/json_num.h"
#include "core/metrics.h"
#include "daemon/daemon_int.h"

/* p50 and p99 of a client's latencies, or null. */
static json_t *latency(const corun__dclient *c)
{
    size_t n = c->nlat < CORUN__DAEMON_LATENCIES ? c->nlat : CORUN__DAEMON_LATENCIES;
    double *v;
    json_t *o;

    if (n == 0 || (v = malloc(n * sizeof(*v))) == NULL) {
        return json_null();
    }
    memcpy(v, c->lat_ms, n * sizeof(*v)); /* corun__percentile sorts */
    o = json_pack("{s:o, s:o}", "p50", corun__json_num(corun__percentile(v, n, 50)), "p99",
                  corun__json_num(corun__percentile(v, n, 99)));
    free(v);
    return o;
}

static json_t *client_json(corun__daemon *d, const corun__dclient *c)
{
    json_t *jobs = json_array();
    uint32_t capsm = 0;
    const corun__djob *j;

    for (j = d->jobs; j != NULL; j = j->next) {
        if (j->owner != c) {
            continue;
        }
        capsm += j->seen.capsm;
        json_array_append_new(jobs, json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:I}", "job",
                                              (json_int_t)j->id, "kernel", j->kernel, "state",
                                              j->seen.state, "capsm", (json_int_t)j->seen.capsm,
                                              "tasks", (json_int_t)j->seen.tasks, "done",
                                              (json_int_t)j->seen.done_tasks, "preemptions",
                                              (json_int_t)j->seen.preemptions));
    }
    json_t *o;
    uint64_t launches = c->launches, finished = c->finished, tasks = c->tasks_done;
    size_t i;

    if (c->chan != NULL) {
        /* a coordinated GPU: its jobs as its ring told of them, what the
         * client counts, and where it may run */
        static const char *const states[] = {"?", "running", "stopping", "paused"};
        for (i = 0; i < CORUN__CHAN_JOBS; i++) {
            const struct corun__dcjob *cj = &c->cjobs[i];
            if (!cj->used) {
                continue;
            }
            capsm += cj->capsm;
            json_array_append_new(jobs, json_pack("{s:I, s:s, s:s, s:I}", "job",
                                                  (json_int_t)cj->id, "kernel", cj->kernel,
                                                  "state", states[cj->state <= 3 ? cj->state : 0],
                                                  "capsm", (json_int_t)cj->capsm));
        }
        launches = atomic_load(&c->chan->launches);
        finished = atomic_load(&c->chan->finished);
        tasks = atomic_load(&c->chan->tasks_done);
    }
    o = json_pack("{s:I, s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
                  "client", (json_int_t)c->id, "pid", (json_int_t)c->pid, "uid",
                  (json_int_t)c->uid, "user", c->user, "command", c->hello.command, "class",
                  c->hello.cls == CORUN_CLASS_LS ? "ls" : "batch", "priority",
                  (json_int_t)c->hello.priority, "weight", (json_int_t)c->hello.weight, "capsm",
                  (json_int_t)capsm, "launches", (json_int_t)launches, "finished",
                  (json_int_t)finished, "tasks_done", (json_int_t)tasks, "preemptions",
                  (json_int_t)c->preemptions, "latency_ms", latency(c), "jobs", jobs);
    if (o != NULL && c->chan != NULL) {
        /* and its kernels running by name, and the events its ring lost */
        json_t *kr = json_array();
        for (i = 0; i < CORUN__CHAN_KERNELS; i++) {
            if (c->krun[i].name[0] != '\0' && c->krun[i].running > 0) {
                json_array_append_new(kr, json_pack("{s:s, s:I}", "kernel", c->krun[i].name,
                                                    "running", (json_int_t)c->krun[i].running));
            }
        }
        if (c->krun_other > 0) {
            json_array_append_new(kr, json_pack("{s:s, s:I}", "kernel", "(others)", "running",
                                                (json_int_t)c->krun_other));
        }
        json_object_set_new(o, "sm_window",
                            json_pack("[I, I]", (json_int_t)(c->window & 0xffffffffu),
                                      (json_int_t)(c->window >> 32)));
        json_object_set_new(o, "kernels_running", kr);
        json_object_set_new(o, "events_dropped",
                            json_integer((json_int_t)atomic_load(&c->chan->dropped)));
        json_object_set_new(o, "events_malformed", json_integer((json_int_t)c->chan_bad));
        json_object_set_new(o, "jobs_untracked", json_integer((json_int_t)c->cjobs_untracked));
        json_object_set_new(o, "shares_ctl", json_boolean(atomic_load(&c->chan->ctl_ok) != 0));
        json_object_set_new(o, "narrowed", json_integer((json_int_t)c->narrowed));
    }
    return o;
}

json_t *corun__dstatus(corun__daemon *d, uid_t uid)
{
    const bool all = uid == 0 || uid == getuid();
    json_t *gpus = json_array();
    unsigned i;

    for (i = 0; i < d->ngpus; i++) {
        const corun__dgpu *g = &d->gpus[i];
        json_t *clients = json_array();
        json_int_t others = 0;
        const corun__dclient *c;
        for (c = d->clients; c != NULL; c = c->next) {
            if (c->role != CORUN_DR_CLIENT || c->gpu != i) {
                continue;
            }
            if (!all && c->uid != uid) {
                others++;
                continue;
            }
            json_array_append_new(clients, client_json(d, c));
        }
        json_array_append_new(
            gpus, json_pack("{s:I, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:o}", "index",
                            (json_int_t)g->index, "name", g->name, "backend",
                            corun_ctx_backend(g->ctx), "mode", g->mode, "policy",
                            corun__ctx_policy(g->ctx), "sms",
                            (json_int_t)corun__ctx_sm_count(g->ctx), "capsm_free",
                            (json_int_t)corun__ctx_free_capsm(g->ctx), "others", others,
                            "clients", clients));
    }
    return json_pack("{s:{s:I, s:s, s:o}, s:o}", "daemon", "pid", (json_int_t)getpid(), "socket",
                     d->o->socket_path, "uptime_s",
                     corun__json_num((double)(corun__dnow() - d->t0) / 1e9), "gpus", gpus);
}
