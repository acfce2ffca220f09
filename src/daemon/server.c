/*
 * server.c — corund's socket and event loop (corund.h).
 *
 * One thread: poll() on the listening socket, the signal pipe and every
 * connection; read what arrived and hand whole messages to session.c; move
 * each simulated GPU's clock to the wall clock (times the sim speed); let
 * session.c answer what became due. The loop sleeps at most 1 ms while jobs
 * run or answers wait, else until something arrives.
 */
#define _GNU_SOURCE /* accept4, pipe2, struct ucred */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/dirs.h"
#include "common/log.h"
#include "backends/create.h"
#include "core/backend.h"
#include "daemon/daemon_int.h"

#define SUB "server"

/* ---- signals ------------------------------------------------------------------ */

static int sig_fd = -1;

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;

    if (sig_fd >= 0) {
        (void)!write(sig_fd, &b, 1);
    }
    errno = saved;
}

static int signals_init(corun__daemon *d)
{
    struct sigaction sa;
    int p[2];

    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        return -1;
    }
    d->sig_r = p[0];
    d->sig_w = p[1];
    sig_fd = p[1];
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    return 0;
}

/* ---- the socket --------------------------------------------------------------- */

/* mkdir -p of path's folder (0755 for what it makes). */
static int make_dirs(const char *path, char *why, size_t why_len)
{
    char dir[CORUN_SETTING_STR_MAX], failed[CORUN_SETTING_STR_MAX];
    char *p;

    snprintf(dir, sizeof(dir), "%s", path);
    p = strrchr(dir, '/');
    if (p == NULL || p == dir) {
        return 0;
    }
    *p = '\0';
    if (corun__mkdir_p(dir, failed, sizeof(failed)) != 0) {
        snprintf(why, why_len, "cannot make %s: %s", failed, strerror(errno));
        return -1;
    }
    return 0;
}

/* Takes PATH.lock (one daemon per socket), removes a stale socket, binds
 * PATH with mode 0660 and the group, and listens. */
static int listen_on(corun__daemon *d, int *lock_fd, char *why, size_t why_len)
{
    const char *path = d->o->socket_path;
    char lock[CORUN_SETTING_STR_MAX + 8];
    struct sockaddr_un sa;
    mode_t old;
    int fd, rc;

    if (strlen(path) == 0 || strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(why, why_len, "socket path '%s': a Unix socket's path holds 1 to %zu bytes", path,
                 sizeof(sa.sun_path) - 1);
        return -1;
    }
    if (make_dirs(path, why, why_len) != 0) {
        return -1;
    }
    snprintf(lock, sizeof(lock), "%s.lock", path);
    *lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*lock_fd < 0) {
        snprintf(why, why_len, "cannot open %s: %s", lock, strerror(errno));
        return -1;
    }
    if (flock(*lock_fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "?";
        ssize_t n = pread(*lock_fd, pid, sizeof(pid) - 1, 0);
        pid[n > 0 ? n : 1] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        snprintf(why, why_len, "another corund (pid %s) serves %s", pid, path);
        return -1;
    }
    if (ftruncate(*lock_fd, 0) == 0) {
        char pid[32];
        int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
        (void)!pwrite(*lock_fd, pid, (size_t)n, 0);
    }
    (void)unlink(path); /* stale: the lock says no daemon owns it */
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(why, why_len, "socket: %s", strerror(errno));
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    old = umask(0117);
    rc = bind(fd, (const struct sockaddr *)&sa, sizeof(sa));
    umask(old);
    if (rc != 0) {
        snprintf(why, why_len, "cannot bind %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (chmod(path, 0660) != 0) {
        snprintf(why, why_len, "chmod 0660 %s: %s", path, strerror(errno));
        goto out_unlink;
    }
    if (d->o->group != NULL && d->o->group[0] != '\0') {
        struct group *g = getgrnam(d->o->group);
        if (g == NULL) {
            snprintf(why, why_len, "no group '%s' (setting CORUN_DAEMON_GROUP)", d->o->group);
            goto out_unlink;
        }
        if (chown(path, (uid_t)-1, g->gr_gid) != 0) {
            snprintf(why, why_len, "cannot give %s to group %s: %s", path, d->o->group,
                     strerror(errno));
            goto out_unlink;
        }
    }
    if (listen(fd, 64) != 0) {
        snprintf(why, why_len, "listen on %s: %s", path, strerror(errno));
        goto out_unlink;
    }
    d->lfd = fd;
    return 0;

out_unlink:
    unlink(path);
    close(fd);
    return -1;
}

/* ---- connections -------------------------------------------------------------- */

static void accept_clients(corun__daemon *d)
{
    for (;;) {
        struct ucred cred;
        socklen_t len = sizeof(cred);
        corun__dclient *c;
        struct passwd *pw;
        int fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                CORUN_LOG(CORUN_LOG_WARN, SUB, "accept: %s", strerror(errno));
            }
            return;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
            CORUN_LOG(CORUN_LOG_WARN, SUB, "SO_PEERCRED: %s; connection closed", strerror(errno));
            close(fd);
            continue;
        }
        if (d->nclients >= CORUN__DAEMON_MAX_CLIENTS) {
            CORUN_LOG(CORUN_LOG_WARN, SUB, "pid %d refused: %u connections already", (int)cred.pid,
                      d->nclients);
            close(fd);
            continue;
        }
        c = calloc(1, sizeof(*c));
        if (c != NULL) {
            c->rx = calloc(1, sizeof(*c->rx));
            c->lat_ms = calloc(CORUN__DAEMON_LATENCIES, sizeof(double));
        }
        if (c == NULL || c->rx == NULL || c->lat_ms == NULL) {
            CORUN_LOG(CORUN_LOG_ERROR, SUB, "out of memory: pid %d refused", (int)cred.pid);
            if (c != NULL) {
                free(c->rx);
                free(c->lat_ms);
                free(c);
            }
            close(fd);
            continue;
        }
        c->fd = fd;
        c->id = ++d->next_client;
        c->pid = cred.pid;
        c->uid = cred.uid;
        c->gid = cred.gid;
        pw = getpwuid(cred.uid);
        snprintf(c->user, sizeof(c->user), "%s", pw != NULL ? pw->pw_name : "?");
        if (pw == NULL) {
            snprintf(c->user, sizeof(c->user), "%u", (unsigned)cred.uid);
        }
        c->next = d->clients;
        d->clients = c;
        d->nclients++;
        CORUN_LOG(CORUN_LOG_DEBUG, SUB, "connection %u: pid %d, uid %u", c->id, (int)c->pid,
                  (unsigned)c->uid);
    }
}

static void free_client(corun__daemon *d, corun__dclient *c)
{
    corun__dclient **p;

    for (p = &d->clients; *p != NULL; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    d->nclients--;
    corun__dsession_drop(d, c);
    if (c->role == CORUN_DR_CLIENT) {
        CORUN_LOG(CORUN_LOG_INFO, SUB, "client %u (pid %d, %s) left", c->id, (int)c->pid,
                  c->hello.command);
    }
    close(c->fd);
    if (c->chan != NULL) {
        const uint64_t lost = atomic_load(&c->chan->dropped);
        if (lost != 0 || c->chan_bad != 0 || c->cjobs_untracked != 0) {
            CORUN_LOG(CORUN_LOG_INFO, SUB, "client %u (pid %d): its ring lost %llu events (full), "
                      "%llu were malformed, %llu jobs were not followed", c->id, (int)c->pid,
                      (unsigned long long)lost, (unsigned long long)c->chan_bad,
                      (unsigned long long)c->cjobs_untracked);
        }
        munmap(c->chan, CORUN_CHANNEL_SIZE);
    }
    corun__dtrace_free(c->tr);
    free(c->kernels);
    free(c->lat_ms);
    free(c->rx);
    free(c);
}

/* Reads what c sent and handles each whole message, in order; stops at a
 * request that waits for its answer (the rest stay in c->rx). */
static void serve(corun__daemon *d, corun__dclient *c, bool readable)
{
    char why[256];

    if (readable && !c->closing) {
        int rc = corun__proto_fill(c->fd, c->rx);
        if (rc == CORUN_EIO) {
            c->closing = true;
        }
    }
    while (!c->closing && !c->pending) {
        corun__msg m;
        int rc = corun__proto_take(c->rx, &m, why, sizeof(why));
        if (rc == CORUN_EBUSY) {
            break;
        }
        if (rc != CORUN_OK) {
            CORUN_LOG(CORUN_LOG_WARN, SUB, "client %u (pid %d): malformed message, connection "
                      "closed: %s", c->id, (int)c->pid, why);
            c->closing = true;
            break;
        }
        corun__dsession_handle(d, c, &m);
    }
}

/* ---- GPUs and the clock ------------------------------------------------------- */

/* One context (a scheduler) per GPU served: the host's first --gpus GPUs
 * (default all), each the context of setting DEVICE = its ordinal, or
 * --gpus simulated ones (default 1), DEVICE = their index. */
static int gpus_init(corun__daemon *d, char *why, size_t why_len)
{
    const unsigned host = corun__backend_gpus(d->o->backend);
    unsigned want = d->o->gpus, i;
    corun_ctx_opts co;

    memset(&co, 0, sizeof(co));
    co.backend = d->o->backend;
    for (i = 0; i == 0 || i < want; i++) {
        corun__settings set = d->o->settings;
        corun__dgpu *g = &d->gpus[i];
        snprintf(set.device, sizeof(set.device), "%u", i);
        if (corun__ctx_create_with(&set, &co, &g->ctx) != CORUN_OK) {
            snprintf(why, why_len, "GPU %u: %s", i, corun_last_error());
            return -1;
        }
        d->ngpus = i + 1;
        g->index = i;
        g->id = corun__ctx_backend(g->ctx)->gpu_id;
        g->sms = corun__ctx_sm_count(g->ctx);
        g->coordinate = corun_ctx_runs_cuda(g->ctx) || d->o->coordinate;
        if (corun_ctx_runs_cuda(g->ctx)) {
            /* MPS is on where its control pipe answers; without it the
             * processes' contexts take turns on the GPU */
            const char *pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
            char ctl[300];
            if (i == 0 && want > host) {
                snprintf(why, why_len, "--gpus %u: the host has %u GPU%s", want, host,
                         host == 1 ? "" : "s");
                return -1;
            }
            want = i == 0 && want == 0 ? (host < CORUN__DAEMON_MAX_GPUS ? host
                                                                        : CORUN__DAEMON_MAX_GPUS)
                                       : want;
            snprintf(ctl, sizeof(ctl), "%s/control", pipe != NULL ? pipe : "/tmp/nvidia-mps");
            snprintf(g->name, sizeof(g->name), "GPU %u (%u SMs)", i, g->sms);
            snprintf(g->mode, sizeof(g->mode), "%s",
                     access(ctl, F_OK) == 0 ? "mps" : "time-sliced");
        } else {
            snprintf(g->name, sizeof(g->name), "simulated H100 %u (%u SMs)", i, g->sms);
            snprintf(g->mode, sizeof(g->mode), "sim");
        }
    }
    return 0;
}

/* A simulated GPU is advanced to the wall clock (times sim_speed) in steps of
 * ADVANCE_STEP_NS simulated, for at most ADVANCE_BUDGET_NS of the loop's
 * time a turn: where the CPU cannot keep up (a loaded machine, a kernel of
 * millions of tasks) the simulation falls behind the wall clock instead of
 * leaving clients unanswered (a HELLO waits 5 s at most). */
#define ADVANCE_STEP_NS 1000000ull
#define ADVANCE_BUDGET_NS 20000000ull

static void advance(corun__daemon *d)
{
    const uint64_t start = corun__dnow();
    const uint64_t t = (uint64_t)((double)(start - d->t0) * d->o->sim_speed);
    unsigned i;

    for (i = 0; i < d->ngpus; i++) {
        corun__dgpu *g = &d->gpus[i];
        int rc = CORUN_OK;
        while (rc == CORUN_OK && g->sim_at < t &&
               corun__dnow() - start < ADVANCE_BUDGET_NS * (i + 1) / d->ngpus) {
            g->sim_at = t - g->sim_at > ADVANCE_STEP_NS ? g->sim_at + ADVANCE_STEP_NS : t;
            rc = corun__ctx_advance(g->ctx, g->sim_at);
        }
        if (rc != CORUN_OK) {
            CORUN_LOG(CORUN_LOG_ERROR, SUB, "GPU %u: the scheduler failed: %s", i,
                      corun_strerror(rc));
        }
    }
}

static bool busy(const corun__daemon *d)
{
    const corun__dclient *c;

    if (corun__dsession_active(d) > 0) {
        return true;
    }
    for (c = d->clients; c != NULL; c = c->next) {
        if (c->pending || c->chan != NULL) {
            return true; /* an answer due, or a coordinated client's window to keep */
        }
    }
    return false;
}

/* ---- the loop ----------------------------------------------------------------- */

static void begin_stop(corun__daemon *d, int sig)
{
    if (d->stopping) {
        return;
    }
    d->stopping = true;
    d->stop_by = corun__dnow() + (uint64_t)(d->o->drain_s * 1e9);
    if (d->lfd >= 0) {
        close(d->lfd);
        d->lfd = -1;
        unlink(d->o->socket_path);
    }
    CORUN_LOG(CORUN_LOG_INFO, SUB, "signal %d: stopping; %u jobs still running may take up to "
              "%g s", sig, corun__dsession_active(d), d->o->drain_s);
}

/* After SIGTERM, once no job runs, clients still holding finished jobs get
 * this long to collect them (wait, progress, release) before corund goes. */
#define STOP_GRACE_NS 1000000000ull

/* Stopping: the drain is over, or nothing is left to finish or collect. */
static bool stop_due(corun__daemon *d)
{
    const uint64_t now = corun__dnow();

    if (d->jobs == NULL) {
        return true;
    }
    if (now >= d->stop_by) {
        unsigned n = corun__dsession_active(d);
        if (n > 0) {
            CORUN_LOG(CORUN_LOG_WARN, SUB, "the drain (%g s) is over: %u jobs still running are "
                      "halted and their clients dropped", d->o->drain_s, n);
        }
        return true;
    }
    if (corun__dsession_active(d) > 0) {
        d->quiet_since = 0;
        return false;
    }
    if (d->quiet_since == 0) {
        d->quiet_since = now;
    }
    return now - d->quiet_since >= STOP_GRACE_NS;
}

static int loop(corun__daemon *d)
{
    struct pollfd *pf = NULL;
    size_t cap = 0;

    for (;;) {
        corun__dclient *c, *next;
        size_t n = 0, i;
        int timeout, rc;

        if (d->stopping && stop_due(d)) {
            break;
        }
        if (cap < d->nclients + 2) {
            struct pollfd *np;
            cap = d->nclients + 16;
            np = realloc(pf, cap * sizeof(*pf));
            if (np == NULL) {
                CORUN_LOG(CORUN_LOG_ERROR, SUB, "out of memory");
                free(pf);
                return 1;
            }
            pf = np;
        }
        pf[n++] = (struct pollfd){.fd = d->sig_r, .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = d->lfd, .events = POLLIN}; /* -1 once stopping: ignored */
        for (c = d->clients; c != NULL; c = c->next) {
            pf[n++] = (struct pollfd){.fd = c->fd, .events = POLLIN};
        }
        timeout = busy(d) || d->stopping ? 1 : 200;
        rc = poll(pf, n, timeout);
        if (rc < 0 && errno != EINTR) {
            CORUN_LOG(CORUN_LOG_ERROR, SUB, "poll: %s", strerror(errno));
            free(pf);
            return 1;
        }
        if (rc > 0 && (pf[0].revents & POLLIN)) {
            unsigned char b[16];
            ssize_t k = read(d->sig_r, b, sizeof(b));
            if (k > 0) {
                begin_stop(d, b[0]);
            }
        }
        if (rc > 0 && d->lfd >= 0 && (pf[1].revents & POLLIN)) {
            accept_clients(d);
        }
        advance(d);
        /* pf[2..] are the clients polled, in list order; new ones are at the head */
        i = 2;
        for (c = d->clients; c != NULL && i < n; c = c->next) {
            if (c->fd == pf[i].fd) {
                serve(d, c, (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0);
                i++;
            }
        }
        corun__dsession_tick(d);
        corun__dsession_coordinate(d);
        for (c = d->clients; c != NULL; c = c->next) {
            if (!c->pending) {
                serve(d, c, false); /* requests left behind an answered one */
            }
        }
        for (c = d->clients; c != NULL; c = next) {
            next = c->next;
            if (c->closing) {
                free_client(d, c);
            }
        }
    }
    free(pf);
    return 0;
}

int corun__daemon_run(const corun__daemon_opts *o)
{
    corun__daemon d;
    char why[512] = "";
    int lock_fd = -1, rc = 1;
    unsigned i;

    memset(&d, 0, sizeof(d));
    d.o = o;
    d.lfd = -1;
    d.sig_r = d.sig_w = -1;
    d.t0 = corun__dnow();
    if (signals_init(&d) != 0) {
        snprintf(why, sizeof(why), "pipe: %s", strerror(errno));
    } else if (gpus_init(&d, why, sizeof(why)) == 0 && listen_on(&d, &lock_fd, why, sizeof(why)) == 0) {
        CORUN_LOG(CORUN_LOG_INFO, SUB, "listening on %s (pid %d); %u GPU%s: %s%s, %s, policy %s",
                  o->socket_path, (int)getpid(), d.ngpus, d.ngpus == 1 ? "" : "s",
                  d.gpus[0].name, d.ngpus > 1 ? " ..." : "",
                  d.gpus[0].coordinate ? "coordinated (programs keep their contexts)"
                                       : "owned (programs run on it through the daemon)",
                  corun__ctx_policy(d.gpus[0].ctx));
        if (o->ready_fd >= 0) {
            (void)!write(o->ready_fd, "ok\n", 3);
        }
        rc = loop(&d);
    }
    if (why[0] != '\0') {
        CORUN_LOG(CORUN_LOG_ERROR, SUB, "%s", why);
        if (o->ready_fd >= 0) {
            char line[600];
            int n = snprintf(line, sizeof(line), "error: %s\n", why);
            (void)!write(o->ready_fd, line, (size_t)n);
        }
    }
    while (d.clients != NULL) {
        free_client(&d, d.clients);
    }
    /* jobs of clients already gone, or cut at the drain's end (halted when
     * their client was dropped above): each waited for off the GPU, then freed */
    while (d.jobs != NULL) {
        corun__djob *j = d.jobs;
        d.jobs = j->next;
        (void)corun_job_wait(j->j, 1000);
        corun_job_release(j->j);
        free(j);
    }
    if (d.lfd >= 0) {
        close(d.lfd);
        unlink(o->socket_path);
    }
    for (i = 0; i < d.ngpus; i++) {
        corun_ctx_destroy(d.gpus[i].ctx);
    }
    if (lock_fd >= 0) {
        close(lock_fd);
    }
    sig_fd = -1;
    if (d.sig_r >= 0) {
        close(d.sig_r);
        close(d.sig_w);
    }
    if (rc == 0) {
        CORUN_LOG(CORUN_LOG_INFO, SUB, "stopped");
    }
    return rc;
}
