/*
 * remote.c — the connection of remote.h.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/remote.h"
#include "core/backend.h"
#include "core/sched.h"

struct corun__remote {
    pthread_mutex_t mu;
    int fd;                 /* -1 while disconnected */
    uint32_t gen;           /* connections made; the live one's number while fd >= 0 */
    uint32_t seq;
    uint32_t ids;
    uint64_t last_try_ns;   /* CLOCK_MONOTONIC of the last connection attempt */
    char path[CORUN_SETTING_STR_MAX];
    char backend[CORUN_PROTO_WORD];
    corun__msg_hello hello;
    corun__msg_welcome welcome;
    corun__proto_rx rx;
    /* a coordinated GPU: the page shared with the daemon (channel.h); an
     * earlier connection's stays mapped (a launching thread may still hold
     * it) until close */
    _Atomic(corun__channel *) chan;
    bool coordinated;
    corun__channel *shared;  /* the page this process's control blocks were given in */
};

__attribute__((format(printf, 3, 4))) static void say(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (why == NULL || len == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void drop(corun__remote *r)
{
    int passed = corun__proto_take_fd(&r->rx);

    if (passed >= 0) {
        close(passed);
    }
    if (r->fd >= 0) {
        close(r->fd);
        r->fd = -1;
    }
    r->rx.len = r->rx.hold = 0;
}

/* Under r->mu: connects and exchanges HELLO / WELCOME. */
static int attach(corun__remote *r, char *why, size_t why_len)
{
    corun__msg m;
    int fd, rc;

    r->last_try_ns = mono_ns();
    rc = corun__proto_connect(r->path, &fd, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    r->fd = fd;
    r->rx.len = r->rx.hold = 0;
    memset(&m, 0, sizeof(m));
    m.type = CORUN_MSG_HELLO;
    m.seq = ++r->seq;
    m.u.hello = r->hello;
    rc = corun__proto_send(fd, &m);
    if (rc == CORUN_OK) {
        rc = corun__proto_recv(fd, &r->rx, &m, 5000, why, why_len);
    }
    if (rc != CORUN_OK) {
        say(why, why_len, "corund at %s did not answer: %s", r->path, corun_strerror(rc));
        drop(r);
        return CORUN_EIO;
    }
    if (m.type == CORUN_MSG_REPLY) {
        say(why, why_len, "corund at %s refused this program: %s", r->path, m.u.reply.why);
        drop(r);
        return m.u.reply.status != CORUN_OK ? m.u.reply.status : CORUN_EIO;
    }
    if (m.type != CORUN_MSG_WELCOME) {
        say(why, why_len, "corund at %s answered HELLO with %s", r->path,
            corun__proto_type_name(m.type));
        drop(r);
        return CORUN_EIO;
    }
    if (strcmp(m.u.welcome.backend, r->backend) != 0) {
        say(why, why_len, "corund at %s serves %s GPUs; this context is %s", r->path,
            m.u.welcome.backend, r->backend);
        int cfd = corun__proto_take_fd(&r->rx);
        if (cfd >= 0) {
            close(cfd);
        }
        drop(r);
        return CORUN_ENOTSUP;
    }
    if (strcmp(m.u.welcome.mode, "coordinate") == 0) {
        int cfd = corun__proto_take_fd(&r->rx);
        corun__channel *ch = MAP_FAILED;
        if (cfd >= 0) {
            ch = mmap(NULL, CORUN_CHANNEL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
            close(cfd);
        }
        if (ch == MAP_FAILED || ch->magic != CORUN_CHANNEL_MAGIC ||
            ch->version != CORUN_CHANNEL_VERSION) {
            if (ch != MAP_FAILED) {
                munmap(ch, CORUN_CHANNEL_SIZE);
            }
            say(why, why_len, "corund at %s coordinates the GPU but passed no usable page",
                r->path);
            drop(r);
            return CORUN_EIO;
        }
        atomic_store(&r->chan, ch);
        r->coordinated = true;
    } else {
        int cfd = corun__proto_take_fd(&r->rx);
        if (cfd >= 0) {
            close(cfd);
        }
    }
    r->welcome = m.u.welcome;
    r->gen++;
    return CORUN_OK;
}

static void fill_hello(corun__remote *r, const corun__settings *set)
{
    char comm[CORUN_PROTO_NAME] = "?";
    FILE *f = fopen("/proc/self/comm", "re");

    if (f != NULL) {
        if (fgets(comm, sizeof(comm), f) != NULL) {
            comm[strcspn(comm, "\n")] = '\0';
        }
        fclose(f);
    }
    memset(&r->hello, 0, sizeof(r->hello));
    r->hello.pid = (uint32_t)getpid();
    r->hello.cls = strcmp(set->launch_class, "ls") == 0 ? CORUN_CLASS_LS : CORUN_CLASS_BATCH;
    r->hello.priority = (int32_t)set->launch_priority;
    r->hello.weight = set->launch_weight;
    r->hello.capsm = set->launch_capsm;
    corun__proto_str(r->hello.command, sizeof(r->hello.command), comm);
}

corun__daemon_mode corun__daemon_mode_of(const char *value)
{
    static const char *const words[] = {"auto", "off"};
    size_t i;

    for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (strcmp(value, words[i]) == 0) {
            return (corun__daemon_mode)i;
        }
    }
    return value[0] == '/' ? CORUN__DAEMON_PATH : CORUN__DAEMON_BAD;
}

int corun__remote_open(const corun__settings *set, const char *backend, uint32_t gpu,
                       corun__remote **out, char *why, size_t why_len)
{
    const char *want = set->daemon;
    const corun__daemon_mode mode = corun__daemon_mode_of(want);
    const bool automatic = mode == CORUN__DAEMON_AUTO;
    corun__remote *r;
    int rc;

    if (mode == CORUN__DAEMON_OFF) {
        say(why, why_len, "DAEMON=off");
        return CORUN_ENOENT;
    }
    if (mode == CORUN__DAEMON_BAD) {
        say(why, why_len, "DAEMON='%s': auto, off or an absolute socket path", want);
        return CORUN_EINVAL;
    }
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return CORUN_ENOMEM;
    }
    pthread_mutex_init(&r->mu, NULL);
    r->fd = -1;
    snprintf(r->path, sizeof(r->path), "%s", automatic ? set->daemon_socket : want);
    corun__proto_str(r->backend, sizeof(r->backend), backend);
    fill_hello(r, set);
    r->hello.gpu = gpu;
    rc = attach(r, why, why_len);
    if (rc != CORUN_OK) {
        pthread_mutex_destroy(&r->mu);
        free(r);
        /* auto: a daemon this program cannot reach (or use) is no daemon */
        return automatic && rc != CORUN_ENOMEM ? CORUN_ENOENT : rc == CORUN_ENOENT ? CORUN_EIO : rc;
    }
    *out = r;
    return CORUN_OK;
}

void corun__remote_close(corun__remote *r)
{
    if (r == NULL) {
        return;
    }
    if (r->fd >= 0) {
        corun__msg m;
        memset(&m, 0, sizeof(m));
        m.type = CORUN_MSG_BYE;
        m.seq = ++r->seq;
        (void)corun__proto_send(r->fd, &m);
    }
    drop(r);
    if (atomic_load(&r->chan) != NULL) {
        munmap(atomic_load(&r->chan), CORUN_CHANNEL_SIZE);
    }
    pthread_mutex_destroy(&r->mu);
    free(r);
}

bool corun__remote_coordinated(const corun__remote *r)
{
    return r->coordinated;
}

/* Under r->mu: the daemon closed the connection (or it broke). */
static bool gone(corun__remote *r)
{
    struct pollfd pf = {.fd = r->fd, .events = POLLIN};
    char b;

    if (r->fd < 0) {
        return true;
    }
    if (poll(&pf, 1, 0) <= 0) {
        return false;
    }
    return recv(r->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0 || (pf.revents & (POLLHUP | POLLERR));
}

bool corun__remote_window(corun__remote *r, uint32_t sm_count, uint32_t *lo, uint32_t *hi)
{
    corun__channel *ch;
    uint64_t w;

    *lo = 0;
    *hi = sm_count - 1;
    if (!r->coordinated) {
        return false;
    }
    pthread_mutex_lock(&r->mu);
    if (gone(r)) {
        drop(r);
        if (mono_ns() - r->last_try_ns >= CORUN__REMOTE_RETRY_MS * 1000000ull) {
            (void)attach(r, NULL, 0);
        }
    }
    ch = r->fd >= 0 ? atomic_load(&r->chan) : NULL;
    pthread_mutex_unlock(&r->mu);
    if (ch == NULL) {
        return true; /* the daemon is away: the whole GPU */
    }
    w = atomic_load(&ch->window);
    if ((uint32_t)w <= (uint32_t)(w >> 32) && (uint32_t)(w >> 32) < sm_count) {
        *lo = (uint32_t)w;
        *hi = (uint32_t)(w >> 32);
    }
    return true;
}

bool corun__remote_ls_elsewhere(corun__remote *r, uint64_t window_ns)
{
    corun__channel *ch = r != NULL && r->coordinated ? atomic_load(&r->chan) : NULL;
    uint64_t t;

    if (ch == NULL) {
        return false;
    }
    t = atomic_load_explicit(&ch->ls_elsewhere_ns, memory_order_relaxed);
    return t != 0 && mono_ns() - t < window_ns;
}

bool corun__remote_follow(corun__remote *r, corun__sched *s, uint64_t *applied)
{
    uint32_t lo, hi;
    uint64_t w;

    if (r == NULL || !corun__remote_window(r, corun__sched_gpu(s)->sm_count, &lo, &hi)) {
        return false;
    }
    w = (uint64_t)lo | ((uint64_t)hi << 32);
    if (w == *applied || corun__sched_window(s, lo, hi) != CORUN_OK) {
        return false;
    }
    *applied = w;
    return true;
}

void corun__remote_count_launch(corun__remote *r, bool ls, const char *kernel)
{
    corun__channel *ch = atomic_load(&r->chan);
    corun__chan_event ev;

    if (ch == NULL) {
        return;
    }
    memset(&ev, 0, sizeof(ev));
    ev.kind = CORUN_CHAN_LAUNCH;
    ev.t_ns = mono_ns();
    ev.ls = ls;
    snprintf(ev.kernel, sizeof(ev.kernel), "%s", kernel);
    atomic_fetch_add(&ch->launches, 1);
    if (ls) {
        atomic_store(&ch->last_ls_ns, ev.t_ns);
    }
    (void)corun__channel_push(ch, &ev);
}

void corun__remote_count_job(corun__remote *r, const corun__job *k)
{
    corun__channel *ch = r != NULL ? atomic_load(&r->chan) : NULL;
    corun__chan_event ev;
    uint64_t need;

    if (ch == NULL) {
        return;
    }
    memset(&ev, 0, sizeof(ev));
    ev.kind = CORUN_CHAN_END;
    ev.t_ns = mono_ns();
    ev.run_ns = k->t_end > k->t_start ? k->t_end - k->t_start : 0;
    ev.turnaround_ns = k->t_end > k->t_submit ? k->t_end - k->t_submit : 0;
    ev.tasks = k->state == CORUN_JS_DONE ? k->tasks : k->done_tasks;
    ev.ls = corun__attr_ls(&k->attr);
    ev.preemptions = k->preemptions;
    ev.status = k->state == CORUN_JS_DONE ? CORUN_OK : k->status != CORUN_OK ? k->status
                                                                             : CORUN_ELAUNCH;
    ev.job = k->id;
    snprintf(ev.kernel, sizeof(ev.kernel), "%s", k->name);
    (void)corun__channel_push(ch, &ev);
    atomic_fetch_add(&ch->finished, 1);
    if (k->state == CORUN_JS_DONE) {
        atomic_fetch_add(&ch->tasks_done, k->tasks);
    }
    /* the SMs one wave of an LS kernel fills */
    need = corun__attr_ls(&k->attr) && k->per_sm != 0 ? (k->tasks + k->per_sm - 1) / k->per_sm : 0;
    if (need > r->welcome.sm_count) {
        need = r->welcome.sm_count;
    }
    if (need > atomic_load(&ch->ls_need)) {
        atomic_store(&ch->ls_need, (uint32_t)need);
    }
}

/* Under r->mu: passes the file of the backend's signal mirrors to the
 * daemon (MIRROR), which writes them before it narrows a kernel here. True
 * where it took them, or where the backend has none (no relays to undo the
 * daemon's writes to the blocks themselves). The library does not log: a
 * refusal is in the daemon's log; a daemon gone is dropped, as any call
 * does. */
static bool share_mirror(corun__remote *r, corun__backend *be)
{
    const int mfd = be->ops->mirror_fd != NULL ? be->ops->mirror_fd(be) : -1;
    corun__msg m;
    char why[256] = "";
    int rc;

    if (mfd < 0) {
        return true;
    }
    memset(&m, 0, sizeof(m));
    m.type = CORUN_MSG_MIRROR;
    m.seq = ++r->seq;
    rc = corun__proto_send_fd(r->fd, &m, mfd);
    if (rc == CORUN_OK) {
        rc = corun__proto_recv(r->fd, &r->rx, &m, 5000, why, sizeof(why));
    }
    if (rc != CORUN_OK || m.type != CORUN_MSG_REPLY) {
        drop(r);
        return false;
    }
    return m.u.reply.status == CORUN_OK;
}

void corun__remote_share_ctl(corun__remote *r, corun__backend *be)
{
    corun__channel *ch;
    char why[256];

    if (r == NULL || !r->coordinated || be->ops->ctl_share == NULL) {
        return;
    }
    pthread_mutex_lock(&r->mu);
    ch = atomic_load(&r->chan);
    if (ch != NULL && ch != r->shared && r->fd >= 0) {
        r->shared = ch; /* tried once per page */
        /* not shared (ctl_ok stays 0): the daemon's windows then reach
         * this process's kernels when it looks at its window, as before */
        if (share_mirror(r, be) &&
            be->ops->ctl_share(be, ch->ctl_handle, &ch->ctl_slots, ch->ctl_live,
                               CORUN_CHANNEL_LIVE, why, sizeof(why)) == CORUN_OK) {
            atomic_store(&ch->ctl_ok, 1);
        }
    }
    pthread_mutex_unlock(&r->mu);
}

void corun__remote_unshare_ctl(corun__remote *r, corun__backend *be)
{
    uint32_t n;

    if (r != NULL && r->shared != NULL && be->ops->ctl_share != NULL) {
        (void)be->ops->ctl_share(be, NULL, &n, NULL, 0, NULL, 0);
        r->shared = NULL;
    }
}

void corun__remote_count_change(void *rv, const corun__job *k, int what)
{
    static const uint32_t kinds[] = {
        [CORUN_JC_RUN] = CORUN_CHAN_RUN,
        [CORUN_JC_STOP] = CORUN_CHAN_HALT,
        [CORUN_JC_PAUSED] = CORUN_CHAN_PAUSED,
        [CORUN_JC_RESIZE] = CORUN_CHAN_RESIZE,
    };
    corun__remote *r = rv;
    corun__channel *ch = r != NULL ? atomic_load(&r->chan) : NULL;
    corun__chan_event ev;

    if (ch == NULL || what < 0 || (size_t)what >= sizeof(kinds) / sizeof(kinds[0])) {
        return;
    }
    memset(&ev, 0, sizeof(ev));
    ev.kind = kinds[what];
    ev.t_ns = mono_ns();
    ev.job = k->id;
    ev.capsm = corun__job_capsm(k);
    ev.ls = corun__attr_ls(&k->attr);
    snprintf(ev.kernel, sizeof(ev.kernel), "%s", k->name);
    (void)corun__channel_push(ch, &ev);
}

uint32_t corun__remote_gen(corun__remote *r)
{
    uint32_t gen;

    pthread_mutex_lock(&r->mu);
    if (r->fd < 0 && mono_ns() - r->last_try_ns >= CORUN__REMOTE_RETRY_MS * 1000000ull) {
        (void)attach(r, NULL, 0);
    }
    gen = r->fd >= 0 ? r->gen : 0;
    pthread_mutex_unlock(&r->mu);
    return gen;
}

const corun__msg_welcome *corun__remote_welcome(const corun__remote *r)
{
    return &r->welcome;
}

const char *corun__remote_path(const corun__remote *r)
{
    return r->path;
}

uint32_t corun__remote_next_id(corun__remote *r)
{
    uint32_t id;

    pthread_mutex_lock(&r->mu);
    id = ++r->ids;
    pthread_mutex_unlock(&r->mu);
    return id;
}

int corun__remote_call(corun__remote *r, uint32_t gen, corun__msg *m, corun__msg_reply *reply,
                       char *why, size_t why_len)
{
    corun__msg in;
    int rc;

    pthread_mutex_lock(&r->mu);
    if (gen == 0 || r->fd < 0 || gen != r->gen) {
        pthread_mutex_unlock(&r->mu);
        say(why, why_len, "corund at %s went away, and what this program ran there with it",
            r->path);
        return CORUN_EIO;
    }
    m->seq = ++r->seq;
    rc = corun__proto_send(r->fd, m);
    if (rc == CORUN_EINVAL) {
        /* nothing was sent: the connection stays */
        pthread_mutex_unlock(&r->mu);
        say(why, why_len, "a value is outside what corund takes (%s)",
            corun__proto_type_name(m->type));
        return CORUN_ERANGE;
    }
    while (rc == CORUN_OK) {
        rc = corun__proto_recv(r->fd, &r->rx, &in, -1, why, why_len);
        if (rc == CORUN_OK && in.type == CORUN_MSG_REPLY && in.seq == m->seq) {
            *reply = in.u.reply;
            pthread_mutex_unlock(&r->mu);
            return CORUN_OK;
        }
        if (rc == CORUN_OK) {
            rc = CORUN_EPARSE; /* the daemon speaks only when asked, in order */
        }
    }
    drop(r);
    pthread_mutex_unlock(&r->mu);
    say(why, why_len, "corund at %s went away (%s), and what this program ran there with it",
        r->path, corun_strerror(rc));
    return CORUN_EIO;
}
