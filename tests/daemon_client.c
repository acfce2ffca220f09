/*
 * daemon_client.c — a program that uses corun on a simulated GPU, as a
 * client of corund would (tests/daemon_e2e.sh runs several at once).
 *
 *   daemon_client [--kernel-us T] [--grid N] [--block N] [--count K]
 *                 [--gap-ms G] [--class ls|batch] [--priority P]
 *                 [--name NAME] [--wait-ms W] [--stream 1]
 *     K launches, one after the other, each waited for (up to W ms, default
 *     no limit), G ms apart; one JSON line per launch: its index, the
 *     wait's status, the wall time from launch to end (ms), where it ran
 *     ("corund" or "in-process"), on a coordinated GPU the SMs corund gave
 *     it when it launched ("lo-hi"), and its progress.
 *     With --stream 1 the K launches are stream-ordered instead, as a
 *     transformed program makes them: the first waited for (it measures the
 *     kernel), the others fire-and-forget, G ms apart, then one more waited
 *     for; one line at the end: the launches and how many ran plain.
 *   daemon_client --raw SOCKET preempt ID | garbage
 *     speaks the protocol itself: HELLO, then a PREEMPT of job ID (not its
 *     own) or bytes that are no message; prints the daemon's answer.
 *   daemon_client --raw SOCKET mirror
 *     HELLO, then MIRROR four times (wire/mirror.h): with no file, with an
 *     unsealed memfd, with a sealed one too small, with a good one; a line
 *     per answer, the connection kept throughout.
 *   daemon_client --raw SOCKET ring MS
 *     to a coordinated daemon: HELLO, then into the page's event ring (as
 *     a program's scheduler writes it): job 7 of kernel "ringk" launched,
 *     run on 100 CapSMs, resized to 60, halted, then an event of no known
 *     kind; "paused" on stdout and MS ms of sleep (the test looks at
 *     `corun status` meanwhile); then the job resumed and ended.
 *
 * The first line says where the context runs (corun_ctx_describe). Exit 0
 * when every launch was made (a wait may fail: the line says how).
 */
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>

#include "corun/corun.h"
#include "corun/corun_sim.h"
#include "wire/channel.h"
#include "wire/mirror.h"
#include "wire/proto.h"

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Pushes one event of job 7 of kernel "ringk" into the ring. */
static void ring_push(corun__channel *ch, uint32_t kind, uint32_t capsm)
{
    corun__chan_event e;
    struct timespec ts;

    memset(&e, 0, sizeof(e));
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e.t_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    e.kind = kind;
    e.job = 7;
    e.capsm = capsm;
    e.run_ns = e.turnaround_ns = 1000000;
    e.tasks = 1320;
    snprintf(e.kernel, sizeof(e.kernel), "ringk");
    (void)corun__channel_push(ch, &e);
}

/* `ring MS` after the WELCOME (see the top). */
static int ring(int fd, corun__proto_rx *rx, long ms)
{
    int cfd = corun__proto_take_fd(rx);
    corun__channel *ch;

    if (cfd < 0) {
        printf("{\"ring\": \"no page (not a coordinated daemon?)\"}\n");
        return 1;
    }
    ch = mmap(NULL, CORUN_CHANNEL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
    close(cfd);
    if (ch == MAP_FAILED) {
        printf("{\"ring\": \"mmap failed\"}\n");
        return 1;
    }
    atomic_fetch_add(&ch->launches, 1);
    ring_push(ch, CORUN_CHAN_LAUNCH, 0);
    ring_push(ch, CORUN_CHAN_RUN, 100);
    ring_push(ch, CORUN_CHAN_RESIZE, 60);
    ring_push(ch, CORUN_CHAN_HALT, 0);
    ring_push(ch, CORUN_CHAN_PAUSED, 0);
    ring_push(ch, 99, 0); /* no kind the daemon knows */
    printf("{\"ring\": \"paused\"}\n");
    fflush(stdout);
    sleep_ms(ms);
    ring_push(ch, CORUN_CHAN_RUN, 100);
    sleep_ms(20);
    ring_push(ch, CORUN_CHAN_END, 0);
    atomic_fetch_add(&ch->finished, 1);
    sleep_ms(50); /* the daemon reads the ring every turn (1 ms) */
    printf("{\"ring\": \"ended\"}\n");
    munmap(ch, CORUN_CHANNEL_SIZE);
    close(fd);
    free(rx);
    return 0;
}

/* A memfd of n bytes, sealed against shrinking if sealed; -1 if none. */
static int mirror_file(size_t n, int sealed)
{
    int fd = memfd_create("daemon-client-mirror", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd >= 0 && (ftruncate(fd, (off_t)n) != 0 ||
                    (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* `mirror` after the WELCOME (see the top). */
static int mirror(int fd, corun__proto_rx *rx)
{
    const char *names[] = {"no file", "unsealed", "too small", "good"};
    int cfd = corun__proto_take_fd(rx), i;

    if (cfd >= 0) {
        close(cfd); /* the page: not needed here */
    }
    for (i = 0; i < 4; i++) {
        const int mfd = i == 0 ? -1 : mirror_file(i == 2 ? 4096 : CORUN_MIRROR_BYTES, i != 1);
        corun__msg m;
        char why[256] = "";
        int rc;

        memset(&m, 0, sizeof(m));
        m.type = CORUN_MSG_MIRROR;
        m.seq = (uint32_t)(10 + i);
        rc = mfd >= 0 ? corun__proto_send_fd(fd, &m, mfd) : corun__proto_send(fd, &m);
        if (mfd >= 0) {
            close(mfd);
        }
        if (rc == CORUN_OK) {
            rc = corun__proto_recv(fd, rx, &m, 5000, why, sizeof(why));
        }
        if (rc == CORUN_OK && m.type == CORUN_MSG_REPLY) {
            printf("{\"mirror\": \"%s\", \"reply\": \"%s\", \"why\": \"%s\"}\n", names[i],
                   corun_status_name(m.u.reply.status), m.u.reply.why);
        } else {
            printf("{\"mirror\": \"%s\", \"reply\": \"%s\"}\n", names[i],
                   rc == CORUN_OK ? corun__proto_type_name(m.type) : corun_status_name(rc));
        }
    }
    close(fd);
    free(rx);
    return 0;
}

static void sleep_gap(double gap_ms)
{
    if (gap_ms > 0) {
        struct timespec ts = {(time_t)(gap_ms / 1e3),
                              (long)((gap_ms - 1e3 * (double)(time_t)(gap_ms / 1e3)) * 1e6)};
        nanosleep(&ts, NULL);
    }
}

/* --stream 1: count stream-ordered launches on one stream (the first and
 * a last one waited for), and the plain ones among them. */
static int stream_launches(corun_ctx *ctx, corun_kernel *k, unsigned grid, unsigned block,
                           const corun_launch_attr *attr, unsigned count, double gap_ms)
{
    static int token; /* the stream: the sim backend orders by this address */
    unsigned i;
    int rc = CORUN_OK;

    for (i = 0; i <= count && rc == CORUN_OK; i++) {
        const bool wait = i == 0 || i == count;
        corun_job *j = NULL;
        rc = corun_launch_stream(ctx, k, (corun_dim3){grid, 1, 1}, (corun_dim3){block, 1, 1}, 0,
                                 NULL, attr, &token, wait ? &j : NULL);
        if (rc == CORUN_OK && wait) {
            rc = corun_job_wait(j, -1);
            corun_job_release(j);
        }
        if (i + 1 < count) {
            sleep_gap(gap_ms);
        }
    }
    printf("{\"stream_launches\": %u, \"rc\": \"%s\", \"plain\": %llu}\n", i,
           corun_status_name(rc), (unsigned long long)corun_ctx_plain_launches(ctx));
    corun_ctx_destroy(ctx);
    return rc == CORUN_OK ? 0 : 1;
}

static int raw(const char *path, const char *what, const char *arg)
{
    corun__proto_rx *rx = calloc(1, sizeof(*rx));
    corun__msg m;
    char why[256] = "";
    int fd, rc;

    rc = corun__proto_connect(path, &fd, why, sizeof(why));
    if (rc != CORUN_OK || rx == NULL) {
        printf("{\"connect\": \"%s\"}\n", why);
        return 1;
    }
    memset(&m, 0, sizeof(m));
    m.type = CORUN_MSG_HELLO;
    m.seq = 1;
    m.u.hello.pid = (uint32_t)getpid();
    corun__proto_str(m.u.hello.command, sizeof(m.u.hello.command), "raw");
    corun__proto_send(fd, &m);
    rc = corun__proto_recv(fd, rx, &m, 5000, why, sizeof(why));
    printf("{\"hello\": \"%s\"}\n", rc == CORUN_OK ? corun__proto_type_name(m.type) : why);
    if (strcmp(what, "ring") == 0) {
        return ring(fd, rx, strtol(arg, NULL, 10));
    }
    if (strcmp(what, "mirror") == 0) {
        return mirror(fd, rx);
    }
    if (strcmp(what, "preempt") == 0) {
        memset(&m, 0, sizeof(m));
        m.type = CORUN_MSG_PREEMPT;
        m.seq = 2;
        m.u.job.job = (uint32_t)strtoul(arg, NULL, 10);
        corun__proto_send(fd, &m);
    } else {
        static const char junk[] = "GET / HTTP/1.0\r\n\r\nthis is no corund message at all";
        (void)!write(fd, junk, sizeof(junk));
    }
    rc = corun__proto_recv(fd, rx, &m, 5000, why, sizeof(why));
    if (rc == CORUN_OK && m.type == CORUN_MSG_REPLY) {
        printf("{\"reply\": \"%s\", \"why\": \"%s\"}\n", corun_status_name(m.u.reply.status),
               m.u.reply.why);
    } else {
        printf("{\"reply\": \"%s\"}\n", rc == CORUN_OK ? corun__proto_type_name(m.type)
                                                       : corun_status_name(rc));
    }
    close(fd);
    free(rx);
    return 0;
}

int main(int argc, char **argv)
{
    double kernel_us = 100, gap_ms = 0;
    unsigned grid = 132, block = 256, count = 1;
    long wait_ms = -1;
    int stream = 0;
    const char *name = "k";
    corun_launch_attr attr;
    corun_sim_kernel_desc kd;
    corun_ctx *ctx;
    corun_kernel *k;
    char where[512];
    unsigned i;
    int a;

    if (argc >= 4 && strcmp(argv[1], "--raw") == 0) {
        return raw(argv[2], argv[3], argc > 4 ? argv[4] : "0");
    }
    memset(&attr, 0, sizeof(attr));
    for (a = 1; a + 1 < argc; a += 2) {
        const char *o = argv[a], *v = argv[a + 1];
        if (strcmp(o, "--kernel-us") == 0) {
            kernel_us = atof(v);
        } else if (strcmp(o, "--grid") == 0) {
            grid = (unsigned)atoi(v);
        } else if (strcmp(o, "--block") == 0) {
            block = (unsigned)atoi(v);
        } else if (strcmp(o, "--count") == 0) {
            count = (unsigned)atoi(v);
        } else if (strcmp(o, "--gap-ms") == 0) {
            gap_ms = atof(v);
        } else if (strcmp(o, "--class") == 0) {
            attr.cls = strcmp(v, "ls") == 0 ? CORUN_CLASS_LS : CORUN_CLASS_BATCH;
        } else if (strcmp(o, "--priority") == 0) {
            attr.priority = atoi(v);
        } else if (strcmp(o, "--name") == 0) {
            name = v;
        } else if (strcmp(o, "--wait-ms") == 0) {
            wait_ms = atol(v);
        } else if (strcmp(o, "--stream") == 0) {
            stream = atoi(v);
        } else {
            fprintf(stderr, "daemon_client: unknown option %s\n", o);
            return 2;
        }
    }
    if (corun_ctx_create(&(corun_ctx_opts){.backend = "sim"}, &ctx) != CORUN_OK) {
        fprintf(stderr, "daemon_client: %s\n", corun_last_error());
        return 1;
    }
    corun_ctx_describe(ctx, where, sizeof(where));
    printf("{\"pid\": %d, \"context\": \"%s\"}\n", (int)getpid(), where);
    fflush(stdout);
    memset(&kd, 0, sizeof(kd));
    kd.name = name;
    kd.task_us = kernel_us;
    if (corun_sim_kernel_register(ctx, &kd, &k) != CORUN_OK) {
        fprintf(stderr, "daemon_client: %s\n", corun_last_error());
        return 1;
    }
    if (stream) {
        return stream_launches(ctx, k, grid, block, &attr, count, gap_ms);
    }
    for (i = 0; i < count; i++) {
        corun_job *j;
        corun_progress p;
        double t0;
        int rc;
        memset(&p, 0, sizeof(p));
        corun_ctx_describe(ctx, where, sizeof(where));
        t0 = now_ms();
        rc = corun_launch(ctx, k, (corun_dim3){grid, 1, 1}, (corun_dim3){block, 1, 1}, 0, NULL,
                          &attr, &j);
        if (rc != CORUN_OK) {
            printf("{\"launch\": %u, \"rc\": \"%s\", \"why\": \"%s\"}\n", i,
                   corun_status_name(rc), corun_last_error());
            return 1;
        }
        rc = corun_job_wait(j, wait_ms);
        (void)corun_job_progress(j, &p);
        {
            const char *sms = strstr(where, "coordinated: SMs ");
            char win[32] = "";
            if (sms != NULL) {
                snprintf(win, sizeof(win), "%s", sms + 17);
                win[strcspn(win, ")")] = '\0';
            }
            printf("{\"launch\": %u, \"rc\": \"%s\", \"ms\": %.3f, \"where\": \"%s\", "
                   "\"sms\": \"%s\", \"done\": %llu, \"tasks\": %llu}\n",
                   i, corun_status_name(rc), now_ms() - t0,
                   strncmp(where, "corund at", 9) == 0 && strstr(where, " away") == NULL
                       ? "corund" : "in-process",
                   win, (unsigned long long)p.done, (unsigned long long)p.tasks);
        }
        fflush(stdout);
        corun_job_release(j);
        sleep_gap(gap_ms);
    }
    corun_ctx_destroy(ctx);
    return 0;
}
