/*
 * session.c — one client's requests (daemon_int.h): its kernels and jobs on
 * a GPU's scheduler, the answers that wait (WAIT, TRACE), and what is left
 * when a client goes away.
 *
 * A job is named by the id its client gave it and looked up among that
 * client's jobs only: no message can reach another client's job.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/json_num.h"
#include "common/log.h"
#include "core/backend.h"
#include "daemon/daemon_int.h"
#include "wire/mirror.h"

#define SUB "session"

static corun__djob *find_job(corun__daemon *d, const corun__dclient *c, uint32_t id)
{
    corun__djob *j;

    for (j = d->jobs; j != NULL; j = j->next) {
        if (j->owner == c && j->id == id && !j->released) {
            return j;
        }
    }
    return NULL;
}

/* c's kernel of that id, or NULL. */
static const struct corun__dkernel *find_kernel(const corun__dclient *c, uint32_t id)
{
    size_t i;

    for (i = 0; i < c->nkernels; i++) {
        if (c->kernels[i].id == id) {
            return &c->kernels[i];
        }
    }
    return NULL;
}

static corun_ctx *gpu_of(corun__daemon *d, const corun__dclient *c)
{
    return d->gpus[c->gpu].ctx;
}

/* ---- traces ------------------------------------------------------------------- */

/* Every trace being recorded gets the event (args copied for each). */
static void trace(corun__daemon *d, const char *ph, const char *name, uint32_t pid, uint32_t tid,
                  uint64_t ts, uint64_t dur, json_t *args)
{
    corun__dclient *c;

    for (c = d->clients; c != NULL; c = c->next) {
        if (c->tr != NULL && !c->closing) {
            corun__dtrace_event(c->tr, ph, name, pid, tid, ts, dur,
                                args != NULL ? json_deep_copy(args) : NULL);
        }
    }
    json_decref(args);
}

static bool tracing(const corun__daemon *d)
{
    const corun__dclient *c;

    for (c = d->clients; c != NULL; c = c->next) {
        if (c->tr != NULL) {
            return true;
        }
    }
    return false;
}

static json_t *job_args(const corun__djob *j, const corun__job_view *v)
{
    return json_pack("{s:I, s:I, s:I, s:I}", "job", (json_int_t)j->id, "capsm",
                     (json_int_t)v->capsm, "done", (json_int_t)v->done_tasks, "tasks",
                     (json_int_t)v->tasks);
}

/* Compares what a job is now with what it was at the last look: running
 * stretches become "X" events, halts, resumes, resizes and the end instants. */
static void trace_job(corun__daemon *d, corun__djob *j, const corun__job_view *v)
{
    const corun__job_view *s = &j->seen;
    const uint64_t now = corun__ctx_now(d->gpus[j->gpu].ctx);
    const bool was_running = strcmp(s->state, "running") == 0;
    const bool running = strcmp(v->state, "running") == 0;

    if (!tracing(d)) {
        j->run_from = running ? (j->run_from != 0 ? j->run_from : now) : 0;
        return;
    }
    if (!was_running && running) {
        j->run_from = v->t_start != 0 && strcmp(s->state, "waiting") == 0 ? v->t_start : now;
        if (strcmp(s->state, "paused") == 0 || strcmp(s->state, "stopping") == 0) {
            trace(d, "i", "resume", j->pid, j->lane + 1, j->run_from, 0, job_args(j, v));
        }
    } else if (was_running && running && s->capsm != v->capsm) {
        json_t *a = job_args(j, v);
        json_object_set_new(a, "from", json_integer(s->capsm));
        trace(d, "i", "resize", j->pid, j->lane + 1, now, 0, a);
    }
    if (was_running && !running) {
        const uint64_t end = v->done && v->t_end != 0 ? v->t_end : now;
        /* a stretch begun within the daemon's turn that launched it: from its start */
        const uint64_t from = j->run_from != 0 ? j->run_from : v->t_start != 0 ? v->t_start : end;
        json_t *a = job_args(j, v);
        json_object_set_new(a, "capsm", json_integer(s->capsm)); /* what it ran on */
        trace(d, "X", j->kernel, j->pid, j->lane + 1, from, end - from, a);
        if (!v->done) {
            trace(d, "i", "halt", j->pid, j->lane + 1, end, 0, job_args(j, v));
        }
        j->run_from = 0;
    }
    if (v->done && !s->done) {
        trace(d, "i", v->status == CORUN_OK ? "end" : v->status == CORUN_ECANCELED ? "cancelled" : "failed", j->pid, j->lane + 1,
              v->t_end != 0 ? v->t_end : now, 0, job_args(j, v));
    }
}

/* ---- a coordinated client's ring (channel.h) ---------------------------------- */

/* Counts a launch (+1) or an end (-1) of kernel `name` of c. */
static void kernel_running(corun__dclient *c, const char *name, int by)
{
    struct corun__dkrun *free_slot = NULL;
    size_t i;

    for (i = 0; i < CORUN__CHAN_KERNELS; i++) {
        struct corun__dkrun *k = &c->krun[i];
        if (k->name[0] != '\0' && strcmp(k->name, name) == 0) {
            if (by > 0 || k->running > 0) {
                k->running += (uint32_t)by;
            }
            return;
        }
        if (k->name[0] == '\0' && free_slot == NULL) {
            free_slot = k;
        }
    }
    if (by > 0 && free_slot != NULL) {
        snprintf(free_slot->name, sizeof(free_slot->name), "%s", name);
        free_slot->running = 1;
    } else if (by > 0 || c->krun_other > 0) {
        c->krun_other += (uint64_t)(int64_t)by;
    }
}

/* A trace lane for a stretch [from, to) of c's kernels: the first whose
 * last stretch has ended by `from` (else the last lane). */
static uint32_t chan_lane(corun__dclient *c, uint64_t from, uint64_t to)
{
    uint32_t i;

    for (i = 0; i + 1 < CORUN__CHAN_LANES && c->lane_end[i] > from; i++) {
    }
    c->lane_end[i] = to;
    return i;
}

/* c's job `id` as its ring told of it; with add, a free entry made its own
 * (NULL when none is left: the job is traced from its END alone). */
static struct corun__dcjob *cjob(corun__dclient *c, uint32_t id, bool add)
{
    struct corun__dcjob *free_e = NULL;
    size_t i;

    for (i = 0; i < CORUN__CHAN_JOBS; i++) {
        if (c->cjobs[i].used && c->cjobs[i].id == id) {
            return &c->cjobs[i];
        }
        if (!c->cjobs[i].used && free_e == NULL) {
            free_e = &c->cjobs[i];
        }
    }
    if (!add) {
        return NULL;
    }
    if (free_e == NULL) {
        c->cjobs_untracked++;
        return NULL;
    }
    memset(free_e, 0, sizeof(*free_e));
    free_e->used = true;
    free_e->id = id;
    return free_e;
}

/* A running stretch of job j of c, from its start to t, as a trace slice. */
static void cjob_stretch(corun__daemon *d, corun__dclient *c, const struct corun__dcjob *j,
                         uint64_t t, bool tr)
{
    const uint64_t from = j->since < t ? j->since : t;

    if (tr) {
        trace(d, "X", j->kernel, (uint32_t)c->pid, 2 + chan_lane(c, from, t), from, t - from,
              json_pack("{s:I, s:I}", "job", (json_int_t)j->id, "capsm", (json_int_t)j->capsm));
    }
}

/* One event of c's ring: counted for status, traced when tr (a trace records).
 * Times are CLOCK_MONOTONIC since the daemon started (the client's clock
 * for how long a kernel ran: a simulated client's own). */
static void chan_event(corun__daemon *d, corun__dclient *c, const corun__chan_event *e, bool tr)
{
    const uint64_t t = e->t_ns > d->t0 ? e->t_ns - d->t0 : 0;
    struct corun__dcjob *j;

    switch (e->kind) {
    case CORUN_CHAN_LAUNCH:
        kernel_running(c, e->kernel, 1);
        if (tr) {
            trace(d, "i", "launch", (uint32_t)c->pid, 1, t, 0,
                  json_pack("{s:s, s:b}", "kernel", e->kernel, "ls", e->ls != 0));
        }
        return;
    case CORUN_CHAN_RUN:
        if ((j = cjob(c, e->job, true)) == NULL) {
            return;
        }
        if (j->state == CORUN__CJ_HALTED && tr) {
            trace(d, "i", "resume", (uint32_t)c->pid, 1, t, 0,
                  json_pack("{s:s, s:I}", "kernel", e->kernel, "job", (json_int_t)e->job));
        }
        if (j->state != CORUN__CJ_RUNNING) {
            j->since = t;
        }
        j->state = CORUN__CJ_RUNNING;
        j->capsm = e->capsm;
        snprintf(j->kernel, sizeof(j->kernel), "%s", e->kernel);
        return;
    case CORUN_CHAN_HALT:
    case CORUN_CHAN_RESIZE:
        if ((j = cjob(c, e->job, false)) == NULL) {
            return;
        }
        if (tr) {
            trace(d, "i", e->kind == CORUN_CHAN_HALT ? "halt" : "resize", (uint32_t)c->pid, 1, t,
                  0, json_pack("{s:s, s:I, s:I, s:I}", "kernel", j->kernel, "job",
                               (json_int_t)j->id, "from", (json_int_t)j->capsm, "capsm",
                               (json_int_t)e->capsm));
        }
        if (e->kind == CORUN_CHAN_HALT) {
            j->state = CORUN__CJ_STOPPING;
        } else {
            j->capsm = e->capsm;
        }
        return;
    case CORUN_CHAN_PAUSED:
        if ((j = cjob(c, e->job, false)) == NULL) {
            return;
        }
        if (j->state != CORUN__CJ_HALTED) {
            cjob_stretch(d, c, j, t, tr);
        }
        j->state = CORUN__CJ_HALTED;
        j->capsm = 0;
        return;
    case CORUN_CHAN_END:
    default:
        break;
    }
    kernel_running(c, e->kernel, -1);
    c->preemptions += e->preemptions;
    c->lat_ms[c->nlat % CORUN__DAEMON_LATENCIES] = (double)e->turnaround_ns / 1e6;
    c->nlat++;
    j = cjob(c, e->job, false);
    if (j != NULL) {
        if (j->state != CORUN__CJ_HALTED) {
            cjob_stretch(d, c, j, t, tr);
        }
        j->used = false;
    } else if (tr) {
        /* not followed from its start: its run as its END tells it */
        const uint64_t from = t > e->run_ns ? t - e->run_ns : 0;
        trace(d, "X", e->kernel, (uint32_t)c->pid, 2 + chan_lane(c, from, t), from, t - from,
              json_pack("{s:I}", "job", (json_int_t)e->job));
    }
    if (tr) {
        trace(d, "i", e->status == CORUN_OK ? "end" : "failed", (uint32_t)c->pid, 1, t, 0,
              json_pack("{s:s, s:I, s:I, s:I, s:o}", "kernel", e->kernel, "job", (json_int_t)e->job,
                        "tasks", (json_int_t)e->tasks, "preemptions", (json_int_t)e->preemptions,
                        "turnaround_us", corun__json_num((double)e->turnaround_ns / 1e3)));
    }
}

/* What a coordinated client wrote into its ring since the last turn. */
static void drain_channel(corun__daemon *d, corun__dclient *c)
{
    const bool tr = tracing(d); /* once a turn: a turn may read thousands of events */
    corun__chan_event e;
    unsigned n;

    for (n = 0; n < CORUN_CHANNEL_RING && corun__channel_pop(c->chan, &c->chan_tail, &e); n++) {
        if (e.kind == 0) {
            c->chan_bad++;
        } else {
            chan_event(d, c, &e, tr);
        }
    }
}

/* ---- replies ------------------------------------------------------------------- */

static void reply_err(corun__dclient *c, uint32_t seq, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void reply_err(corun__dclient *c, uint32_t seq, int status, const char *fmt, ...)
{
    char why[CORUN_PROTO_WHY];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    corun__dreply(c, seq, status, why, NULL);
}

/* The API call's outcome, with corun_last_error as the reason. */
static void reply_rc(corun__dclient *c, uint32_t seq, int rc)
{
    corun__dreply(c, seq, rc, rc == CORUN_OK ? "" : corun_last_error(), NULL);
}

/* ---- requests ------------------------------------------------------------------ */

/* The page shared with c on a coordinated GPU (channel.h): its window is
 * the whole GPU until the policy says otherwise. */
static int open_channel(corun__dclient *c, const corun__dgpu *g)
{
    int fd = memfd_create("corund-channel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    void *p;

    if (fd < 0) {
        return -1;
    }
    /* sealed at its size: a client cannot shrink the page under the
     * daemon's mapping (a read past its end would be SIGBUS) */
    if (ftruncate(fd, CORUN_CHANNEL_SIZE) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
        (p = mmap(NULL, CORUN_CHANNEL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
            MAP_FAILED) {
        close(fd);
        return -1;
    }
    c->chan = p;
    c->chan_fd = fd;
    c->chan->magic = CORUN_CHANNEL_MAGIC;
    c->chan->version = CORUN_CHANNEL_VERSION;
    corun__channel_ring_init(c->chan);
    c->window = corun__channel_window(0, g->sms - 1);
    atomic_store(&c->chan->window, c->window);
    return 0;
}

/* A GPU's id (corun__gpu_id_pci, or a simulated GPU's index) in words. */
static const char *gpu_words(uint32_t id, char *buf, size_t len)
{
    if (id & 0x80000000u) {
        snprintf(buf, len, "at PCI %04x:%02x:%02x", (id >> 16) & 0x7fffu, (id >> 8) & 0xffu,
                 id & 0xffu);
    } else {
        snprintf(buf, len, "%u (simulated)", id);
    }
    return buf;
}

static void hello(corun__daemon *d, corun__dclient *c, const corun__msg *m)
{
    const corun__msg_hello *h = &m->u.hello;
    corun__msg w;
    corun__dgpu *g;
    char gw[48];
    unsigned i;

    if (h->pid != (uint32_t)c->pid) {
        reply_err(c, m->seq, CORUN_EINVAL, "HELLO says pid %u; the socket says %d", h->pid,
                  (int)c->pid);
        c->closing = true;
        return;
    }
    for (i = 0; i < d->ngpus && d->gpus[i].id != h->gpu; i++) {
    }
    if (i == d->ngpus) {
        CORUN_LOG(CORUN_LOG_INFO, SUB, "connection %u (pid %d, %s): on GPU %s, which corund "
                  "does not serve: refused", c->id, (int)c->pid, h->command,
                  gpu_words(h->gpu, gw, sizeof(gw)));
        reply_err(c, m->seq, CORUN_ENODEV, "GPU %s: corund does not serve it (it serves %u: "
                  "corun status lists them)", gpu_words(h->gpu, gw, sizeof(gw)), d->ngpus);
        c->closing = true;
        return;
    }
    if (d->stopping) {
        reply_err(c, m->seq, CORUN_ESTATE, "corund is stopping");
        c->closing = true;
        return;
    }
    g = &d->gpus[i];
    c->gpu = i;
    if (g->coordinate && open_channel(c, g) != 0) {
        reply_err(c, m->seq, CORUN_ENOMEM, "cannot make the shared page: %s", strerror(errno));
        c->closing = true;
        return;
    }
    c->role = CORUN_DR_CLIENT;
    c->hello = *h;
    memset(&w, 0, sizeof(w));
    w.type = CORUN_MSG_WELCOME;
    w.seq = m->seq;
    w.u.welcome.client = c->id;
    w.u.welcome.sm_count = corun__ctx_sm_count(g->ctx);
    corun__proto_str(w.u.welcome.backend, sizeof(w.u.welcome.backend), corun_ctx_backend(g->ctx));
    corun__proto_str(w.u.welcome.policy, sizeof(w.u.welcome.policy), corun__ctx_policy(g->ctx));
    corun__proto_str(w.u.welcome.mode, sizeof(w.u.welcome.mode),
                     g->coordinate ? "coordinate" : g->mode);
    corun__proto_str(w.u.welcome.gpu_name, sizeof(w.u.welcome.gpu_name), g->name);
    if (c->chan != NULL) {
        corun__dsend_fd(c, &w, c->chan_fd);
        close(c->chan_fd); /* both keep it mapped */
        c->chan_fd = -1;
    } else {
        corun__dsend(c, &w);
    }
    if (tracing(d)) {
        char name[CORUN_PROTO_NAME + 32];
        snprintf(name, sizeof(name), "%s (pid %d)", h->command, (int)c->pid);
        trace(d, "M", "process_name", (uint32_t)c->pid, 0, 0, 0, json_pack("{s:s}", "name", name));
    }
    CORUN_LOG(CORUN_LOG_INFO, SUB, "client %u: pid %d (%s, uid %u), GPU %u (%s), class %s",
              c->id, (int)c->pid, h->command, (unsigned)c->uid, i,
              gpu_words(h->gpu, gw, sizeof(gw)), h->cls == CORUN_CLASS_LS ? "ls" : "batch");
}

static void reg(corun__daemon *d, corun__dclient *c, const corun__msg *m)
{
    const corun__msg_register *r = &m->u.reg;
    corun_sim_kernel_desc sd;
    corun_kernel *k;
    int rc;

    if (find_kernel(c, r->kernel) != NULL) {
        reply_err(c, m->seq, CORUN_EINVAL, "kernel id %u is taken", r->kernel);
        return;
    }
    if (c->nkernels >= CORUN__DAEMON_MAX_KERNELS) {
        reply_err(c, m->seq, CORUN_ERANGE, "%u kernels registered: the most a client may have",
                  CORUN__DAEMON_MAX_KERNELS);
        return;
    }
    if (c->nkernels == c->cap_kernels) {
        size_t cap = c->cap_kernels ? c->cap_kernels * 2 : 16;
        void *p = realloc(c->kernels, cap * sizeof(*c->kernels));
        if (p == NULL) {
            reply_err(c, m->seq, CORUN_ENOMEM, "out of memory");
            return;
        }
        c->kernels = p;
        c->cap_kernels = cap;
    }
    memset(&sd, 0, sizeof(sd));
    sd.name = r->name;
    sd.task_us = r->task_us;
    sd.regs = r->regs;
    sd.ahead = r->ahead;
    sd.flags = r->flags;
    rc = corun_sim_kernel_register(gpu_of(d, c), &sd, &k);
    if (rc == CORUN_OK) {
        c->kernels[c->nkernels].id = r->kernel;
        c->kernels[c->nkernels].k = k;
        snprintf(c->kernels[c->nkernels].name, sizeof(c->kernels[c->nkernels].name), "%s",
                 r->name);
        c->nkernels++;
    }
    reply_rc(c, m->seq, rc);
}

static void launch(corun__daemon *d, corun__dclient *c, const corun__msg *m)
{
    const corun__msg_launch *l = &m->u.launch;
    const struct corun__dkernel *dk = find_kernel(c, l->kernel);
    corun_launch_attr a;
    corun__djob *j;
    int rc, lane;

    if (d->stopping) {
        reply_err(c, m->seq, CORUN_ESTATE, "corund is stopping: no new launches");
        return;
    }
    if (dk == NULL) {
        reply_err(c, m->seq, CORUN_ENOENT, "no kernel %u registered by this client", l->kernel);
        return;
    }
    if (find_job(d, c, l->job) != NULL) {
        reply_err(c, m->seq, CORUN_EINVAL, "job id %u is in use", l->job);
        return;
    }
    if (c->live_jobs >= CORUN__DAEMON_MAX_JOBS) {
        reply_err(c, m->seq, CORUN_ERANGE, "%u jobs live: the most a client may have",
                  CORUN__DAEMON_MAX_JOBS);
        return;
    }
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        reply_err(c, m->seq, CORUN_ENOMEM, "out of memory");
        return;
    }
    memset(&a, 0, sizeof(a));
    a.cls = (corun_class)l->cls;
    a.capsm = l->capsm;
    a.priority = l->priority;
    a.weight = l->weight;
    a.size_hint = l->size_hint;
    rc = corun_launch(gpu_of(d, c), dk->k, (corun_dim3){l->grid[0], l->grid[1], l->grid[2]},
                      (corun_dim3){l->block[0], l->block[1], l->block[2]}, l->smem, NULL, &a,
                      &j->j);
    if (rc != CORUN_OK) {
        free(j);
        reply_rc(c, m->seq, rc);
        return;
    }
    j->id = l->job;
    j->gpu = c->gpu;
    j->owner = c;
    j->pid = (uint32_t)c->pid;
    for (lane = 0; lane < 63 && (c->lanes & (1ull << lane)) != 0; lane++) {
    }
    j->lane = (uint32_t)lane;
    c->lanes |= 1ull << lane;
    corun__job_view_get(j->j, &j->seen);
    snprintf(j->kernel, sizeof(j->kernel), "%s", dk->name);
    j->next = d->jobs;
    d->jobs = j;
    c->live_jobs++;
    c->launches++;
    /* what status shows of the client: its latest launch's attributes */
    c->hello.cls = l->cls;
    c->hello.priority = l->priority;
    c->hello.weight = l->weight;
    reply_rc(c, m->seq, CORUN_OK);
    if (tracing(d)) {
        trace(d, "i", "launch", j->pid, j->lane + 1, j->seen.t_submit, 0, job_args(j, &j->seen));
    }
}

/* The answer to a WAIT, if it is due: the job finished, or it can never
 * finish by itself (paused under `manual`), or the time is up. */
static bool answer_wait(corun__daemon *d, corun__dclient *c, bool at_deadline)
{
    corun__djob *j = find_job(d, c, c->pend_job);
    corun__job_view v;

    if (j == NULL) {
        reply_err(c, c->pend_seq, CORUN_ENOENT, "no job %u of this client", c->pend_job);
        return true;
    }
    corun__job_view_get(j->j, &v);
    if (v.done) {
        if (v.status == CORUN_OK) {
            corun__dreply(c, c->pend_seq, CORUN_OK, "", NULL);
        } else {
            reply_err(c, c->pend_seq, v.status, "job '%s' failed: %s", j->kernel,
                      corun_strerror(v.status));
        }
        return true;
    }
    if (strcmp(v.state, "paused") == 0 && strcmp(corun__ctx_policy(gpu_of(d, c)), "manual") == 0) {
        reply_err(c, c->pend_seq, CORUN_ESTATE, "job '%s' is paused: resume it first", j->kernel);
        return true;
    }
    if (at_deadline) {
        corun__dreply(c, c->pend_seq, CORUN_ETIMEDOUT, "", NULL);
        return true;
    }
    return false;
}

static void job_request(corun__daemon *d, corun__dclient *c, const corun__msg *m)
{
    const corun__msg_job *q = &m->u.job;
    corun__djob *j = find_job(d, c, q->job);
    uint64_t v[6] = {0, 0, 0, 0, 0, 0};
    corun_progress p;
    int rc;

    if (j == NULL) {
        reply_err(c, m->seq, CORUN_ENOENT, "no job %u of this client", q->job);
        return;
    }
    switch (m->type) {
    case CORUN_MSG_WAIT:
        c->pending = true;
        c->pend_type = CORUN_MSG_WAIT;
        c->pend_seq = m->seq;
        c->pend_job = q->job;
        c->pend_until = q->timeout_ms < 0 ? UINT64_MAX
                                          : corun__dnow() + (uint64_t)q->timeout_ms * 1000000ull;
        if (answer_wait(d, c, false)) {
            c->pending = false;
        }
        return;
    case CORUN_MSG_PREEMPT:
        reply_rc(c, m->seq, corun_job_preempt(j->j));
        return;
    case CORUN_MSG_RESUME:
        reply_rc(c, m->seq, corun_job_resume(j->j, q->capsm));
        return;
    case CORUN_MSG_RESIZE:
        reply_rc(c, m->seq, corun_job_resize(j->j, q->capsm));
        return;
    case CORUN_MSG_PROGRESS:
        rc = corun_job_progress(j->j, &p);
        if (rc == CORUN_OK) {
            v[0] = p.tasks;
            v[1] = p.claimed;
            v[2] = p.done;
            v[3] = p.live;
            v[4] = p.task_ns;
            v[5] = corun_job_capsm(j->j);
            corun__dreply(c, m->seq, CORUN_OK, "", v);
        } else {
            reply_rc(c, m->seq, rc);
        }
        return;
    case CORUN_MSG_RELEASE:
        j->released = true; /* freed by the tick once finished */
        corun__dreply(c, m->seq, CORUN_OK, "", NULL);
        return;
    default:
        return;
    }
}

static void status(corun__daemon *d, corun__dclient *c, const corun__msg *m)
{
    json_t *root = corun__dstatus(d, c->uid);
    char *text = root != NULL ? json_dumps(root, JSON_COMPACT) : NULL;

    if (text == NULL) {
        reply_err(c, m->seq, CORUN_ENOMEM, "out of memory");
    } else {
        corun__dsend_text(c, m->seq, text, strlen(text));
    }
    free(text);
    json_decref(root);
}

static void start_trace(corun__daemon *d, corun__dclient *c, const corun__msg *m)
{
    char name[CORUN_PROTO_NAME + 32];
    corun__dclient *o;

    c->tr = corun__dtrace_new();
    if (c->tr == NULL) {
        reply_err(c, m->seq, CORUN_ENOMEM, "out of memory");
        return;
    }
    c->pending = true;
    c->pend_type = CORUN_MSG_TRACE;
    c->pend_seq = m->seq;
    c->pend_until = corun__dnow() + (uint64_t)m->u.trace.ms * 1000000ull;
    /* the processes already there, named; jobs already running start a stretch now */
    for (o = d->clients; o != NULL; o = o->next) {
        if (o->role == CORUN_DR_CLIENT) {
            snprintf(name, sizeof(name), "%s (pid %d)", o->hello.command, (int)o->pid);
            corun__dtrace_event(c->tr, "M", "process_name", (uint32_t)o->pid, 0, 0, 0,
                                json_pack("{s:s}", "name", name));
            if (o->chan != NULL) {
                /* a coordinated client's tracks: its launches, then its kernels' lanes */
                corun__dtrace_event(c->tr, "M", "thread_name", (uint32_t)o->pid, 1, 0, 0,
                                    json_pack("{s:s}", "name", "launches"));
            }
        }
    }
    CORUN_LOG(CORUN_LOG_INFO, SUB, "connection %u (pid %d): tracing %u ms", c->id, (int)c->pid,
              m->u.trace.ms);
}

/* MIRROR: a coordinated client's signal mirrors, the file passed along.
 * Mapped once checked (wire/mirror.h); a bad one is refused with why and
 * the connection kept: the client then keeps its control blocks to itself
 * (its relays would undo a write to them that skipped the mirror), and its
 * kernels follow its window when it looks. */
static void mirror(corun__dclient *c, const corun__msg *m)
{
    const int fd = corun__proto_take_fd(c->rx);
    uint8_t *base = NULL;
    char why[256] = "";
    int rc;

    if (fd < 0) {
        reply_err(c, m->seq, CORUN_EINVAL, "MIRROR came without its file");
        return;
    }
    if (c->chan == NULL) {
        close(fd);
        reply_err(c, m->seq, CORUN_EINVAL, "MIRROR from a client the daemon does not coordinate");
        return;
    }
    rc = corun__mirror_open(fd, &base, why, sizeof(why));
    close(fd);
    if (rc != CORUN_OK) {
        CORUN_LOG(CORUN_LOG_WARN, SUB, "client %u (pid %d): its signal mirrors refused (%s): "
                  "its kernels follow its window when it looks", c->id, (int)c->pid, why);
        reply_err(c, m->seq, rc, "%s", why);
        return;
    }
    corun__mirror_close(c->mirror);
    c->mirror = base;
    CORUN_LOG(CORUN_LOG_DEBUG, SUB, "client %u (pid %d): its signal mirrors are mapped", c->id,
              (int)c->pid);
    corun__dreply(c, m->seq, CORUN_OK, "", NULL);
}

void corun__dsession_handle(corun__daemon *d, corun__dclient *c, const corun__msg *m)
{
    if (c->role == CORUN_DR_NEW) {
        if (m->type == CORUN_MSG_HELLO) {
            hello(d, c, m);
            return;
        }
        if (m->type == CORUN_MSG_STATUS || m->type == CORUN_MSG_TRACE) {
            c->role = CORUN_DR_OBSERVER;
        } else {
            reply_err(c, m->seq, CORUN_EINVAL, "%s before HELLO", corun__proto_type_name(m->type));
            c->closing = true;
            return;
        }
    }
    if (c->role == CORUN_DR_OBSERVER && m->type != CORUN_MSG_STATUS &&
        m->type != CORUN_MSG_TRACE) {
        reply_err(c, m->seq, CORUN_EINVAL, "%s from a connection that sent no HELLO",
                  corun__proto_type_name(m->type));
        c->closing = true;
        return;
    }
    if (c->chan != NULL && m->type != CORUN_MSG_STATUS && m->type != CORUN_MSG_TRACE &&
        m->type != CORUN_MSG_BYE && m->type != CORUN_MSG_HELLO && m->type != CORUN_MSG_MIRROR) {
        reply_err(c, m->seq, CORUN_ENOTSUP, "corund coordinates this GPU: a program launches "
                  "its own kernels there (%s)", corun__proto_type_name(m->type));
        return;
    }
    switch (m->type) {
    case CORUN_MSG_HELLO:
        reply_err(c, m->seq, CORUN_EINVAL, "a second HELLO");
        c->closing = true;
        return;
    case CORUN_MSG_REGISTER:
        reg(d, c, m);
        return;
    case CORUN_MSG_LAUNCH:
        launch(d, c, m);
        return;
    case CORUN_MSG_WAIT:
    case CORUN_MSG_PREEMPT:
    case CORUN_MSG_RESUME:
    case CORUN_MSG_RESIZE:
    case CORUN_MSG_PROGRESS:
    case CORUN_MSG_RELEASE:
        job_request(d, c, m);
        return;
    case CORUN_MSG_STATUS:
        status(d, c, m);
        return;
    case CORUN_MSG_TRACE:
        start_trace(d, c, m);
        return;
    case CORUN_MSG_BYE:
        c->closing = true;
        return;
    case CORUN_MSG_MIRROR:
        mirror(c, m);
        return;
    default:
        reply_err(c, m->seq, CORUN_EINVAL, "%s is not a request", corun__proto_type_name(m->type));
        c->closing = true;
        return;
    }
}

/* A job's end, counted once: its client's figures, its trace lane free. */
static void end_job(corun__djob *j, const corun__job_view *v)
{
    corun__dclient *c = j->owner;

    j->ended = true;
    if (c == NULL) {
        return;
    }
    c->finished++;
    c->tasks_done += v->done_tasks;
    c->preemptions += v->preemptions;
    c->lat_ms[c->nlat % CORUN__DAEMON_LATENCIES] = (double)(v->t_end - v->t_submit) / 1e6;
    c->nlat++;
    c->lanes &= ~(1ull << j->lane);
}

static void free_job(corun__daemon *d, corun__djob *j)
{
    corun__djob **p;

    for (p = &d->jobs; *p != NULL; p = &(*p)->next) {
        if (*p == j) {
            *p = j->next;
            break;
        }
    }
    if (j->owner != NULL) {
        j->owner->live_jobs--;
    }
    corun_job_release(j->j);
    free(j);
}

void corun__dsession_tick(corun__daemon *d)
{
    const uint64_t now = corun__dnow();
    corun__djob *j, *next;
    corun__dclient *c;

    for (c = d->clients; c != NULL; c = c->next) {
        if (c->chan != NULL) {
            drain_channel(d, c);
        }
    }

    for (j = d->jobs; j != NULL; j = next) {
        corun__job_view v;
        next = j->next;
        corun__job_view_get(j->j, &v);
        trace_job(d, j, &v);
        if (v.done && !j->ended) {
            end_job(j, &v);
        }
        if (j->orphaned != 0 && v.done) {
            /* cancelled jobs end once their last worker has left the GPU */
            CORUN_LOG(CORUN_LOG_INFO, SUB, "job %u of pid %u, which went away: its CapSMs free "
                      "(its workers gone) %.1f ms after", j->id, j->pid,
                      (double)(now - j->orphaned) / 1e6);
            j->orphaned = 0;
        }
        j->seen = v;
        if (v.done && (j->released || j->owner == NULL)) {
            free_job(d, j);
        }
    }
    for (c = d->clients; c != NULL; c = c->next) {
        if (!c->pending || c->closing) {
            continue;
        }
        if (c->pend_type == CORUN_MSG_WAIT) {
            if (answer_wait(d, c, now >= c->pend_until)) {
                c->pending = false;
            }
        } else if (c->pend_type == CORUN_MSG_TRACE && (now >= c->pend_until || d->stopping)) {
            size_t len = 0;
            char *text = corun__dtrace_dump(c->tr, &len);
            if (text == NULL) {
                reply_err(c, c->pend_seq, CORUN_ENOMEM, "out of memory");
            } else {
                CORUN_LOG(CORUN_LOG_INFO, SUB, "connection %u: trace of %zu events sent", c->id,
                          corun__dtrace_count(c->tr));
                corun__dsend_text(c, c->pend_seq, text, len);
            }
            free(text);
            corun__dtrace_free(c->tr);
            c->tr = NULL;
            c->pending = false;
        }
    }
}

void corun__dsession_drop(corun__daemon *d, corun__dclient *c)
{
    corun__djob *j, *next;
    unsigned cut = 0;

    if (c->peer != NULL) {
        corun__backend *be = corun__ctx_backend(d->gpus[c->gpu].ctx);
        be->ops->peer_close(be, c->peer);
        c->peer = NULL;
    }
    corun__mirror_close(c->mirror);
    c->mirror = NULL;
    for (j = d->jobs; j != NULL; j = next) {
        next = j->next;
        if (j->owner != c) {
            continue;
        }
        if (!j->seen.done && corun__job_cancel(j->j) == CORUN_OK) {
            cut++;
            j->orphaned = corun__dnow();
        }
        c->live_jobs--;
        j->owner = NULL;
    }
    if (cut > 0) {
        CORUN_LOG(CORUN_LOG_INFO, SUB, "client %u (pid %d) left %u jobs running: halted, their "
                  "tasks not run dropped", c->id, (int)c->pid, cut);
    }
}

unsigned corun__dsession_active(const corun__daemon *d)
{
    const corun__djob *j;
    unsigned n = 0;

    for (j = d->jobs; j != NULL; j = j->next) {
        n += !j->seen.done;
    }
    return n;
}

/* An LS program: its class or a priority above 0 (what HELLO said), or one
 * that has made such a launch (channel.h). */
static bool ls_client(const corun__dclient *c)
{
    return c->hello.cls == CORUN_CLASS_LS || c->hello.priority > 0 ||
           (c->chan != NULL && atomic_load(&c->chan->last_ls_ns) != 0);
}

/* c's window narrows to w: its running kernels are narrowed now, by the
 * daemon writing their control blocks (the backend's peer_range), where
 * the client shared them; it follows the window itself in any case when
 * it next looks (every 5 ms). Returns the kernels narrowed. */
static unsigned narrow(corun__daemon *d, corun__dclient *c, uint64_t w)
{
    corun__backend *be = corun__ctx_backend(d->gpus[c->gpu].ctx);
    const uint32_t lo = (uint32_t)w, hi = (uint32_t)(w >> 32);
    uint64_t t0;
    unsigned n = 0, i;
    char why[256] = "";

    if (be->ops->peer_open == NULL || atomic_load(&c->chan->ctl_ok) == 0) {
        return 0;
    }
    if (!c->peer_tried) {
        c->peer_tried = true;
        c->peer = be->ops->peer_open(be, c->chan->ctl_handle, c->chan->ctl_slots, why,
                                     sizeof(why));
        if (c->peer == NULL) {
            CORUN_LOG(CORUN_LOG_WARN, SUB, "client %u (pid %d): its control blocks cannot be "
                      "opened (%s): its kernels follow its window when it looks", c->id,
                      (int)c->pid, why);
        }
    }
    if (c->peer == NULL) {
        return 0;
    }
    t0 = corun__dnow();
    for (i = 0; i < CORUN_CHANNEL_LIVE; i++) {
        uint64_t m = __atomic_load_n(&c->chan->ctl_live[i], __ATOMIC_ACQUIRE);
        while (m != 0) {
            const uint32_t slot = i * 64 + (uint32_t)__builtin_ctzll(m);
            m &= m - 1;
            /* the mirror first: the kernel's relay copies it at once */
            corun__mirror_range(c->mirror, slot, lo, hi);
            if (be->ops->peer_range(be, c->peer, slot, lo, hi) == CORUN_OK) {
                n++;
            }
        }
    }
    c->narrowed += n;
    CORUN_LOG(CORUN_LOG_INFO, SUB, "client %u (pid %d): %u kernels narrowed to SMs %u-%u "
              "(%.1f us to write)", c->id, (int)c->pid, n, lo, hi,
              (double)(corun__dnow() - t0) / 1e3);
    return n;
}

/* LS work goes on: a launch in the last second, or one not finished. */
#define LS_ACTIVE_NS 1000000000ull

void corun__dsession_coordinate(corun__daemon *d)
{
    const uint64_t now = corun__dnow();
    unsigned g;

    for (g = 0; g < d->ngpus; g++) {
        const corun__dgpu *gpu = &d->gpus[g];
        const uint32_t n = gpu->sms;
        uint32_t need = 0, floor_sms, nactive = 0;
        const corun__dclient *active_one = NULL; /* one with LS work going on */
        bool batch = false;
        corun__dclient *c;

        if (!gpu->coordinate) {
            continue;
        }
        for (c = d->clients; c != NULL; c = c->next) {
            if (c->chan == NULL || c->gpu != g) {
                continue;
            }
            if (ls_client(c)) {
                uint64_t t = atomic_load(&c->chan->last_ls_ns);
                uint32_t k = atomic_load(&c->chan->ls_need);
                if (atomic_load(&c->chan->launches) > atomic_load(&c->chan->finished) ||
                    (t != 0 && now - t < LS_ACTIVE_NS)) {
                    nactive++;
                    active_one = c;
                }
                need = k > need ? k : need;
            } else {
                batch = true;
            }
        }
        floor_sms = d->o->ls_sms != 0 ? d->o->ls_sms
                    : need > d->o->settings.reserve_capsm ? need
                                                          : d->o->settings.reserve_capsm;
        if (floor_sms == 0 || floor_sms >= n) {
            floor_sms = n > 1 ? n / 2 : 1;
        }
        for (c = d->clients; c != NULL; c = c->next) {
            uint64_t w;
            if (c->chan == NULL || c->gpu != g) {
                continue;
            }
            /* LS work in another program: this one's short kernels should not
             * run plain for as long as they may beside batch work alone
             * (docs/decisions/0019) */
            if (nactive > 1 || (nactive == 1 && active_one != c)) {
                atomic_store(&c->chan->ls_elsewhere_ns, now);
            }
            /* the LS SMs first, the batch ones after them */
            if (ls_client(c)) {
                w = corun__channel_window(0, batch ? floor_sms - 1 : n - 1);
            } else {
                w = corun__channel_window(nactive > 0 ? floor_sms : 0, n - 1);
            }
            if (w != c->window) {
                const bool narrower = (uint32_t)w > (uint32_t)c->window ||
                                      (uint32_t)(w >> 32) < (uint32_t)(c->window >> 32);
                CORUN_LOG(CORUN_LOG_DEBUG, SUB, "client %u (pid %d, %s): SMs %u-%u", c->id,
                          (int)c->pid, ls_client(c) ? "ls" : "batch", (unsigned)(w & 0xffffffffu),
                          (unsigned)(w >> 32));
                c->window = w;
                atomic_store(&c->chan->window, w);
                if (narrower) {
                    (void)narrow(d, c, w);
                }
            }
        }
    }
}
