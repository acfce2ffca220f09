/*
 * cmd_trace.c — `corun trace`: records what corund schedules for a few
 * seconds as a Chrome trace (chrome://tracing, Perfetto) in a file.
 *
 * Durability, as output.h says for every output: the trace goes to
 * FILE.tmp.<pid> beside FILE, is synced, checked to be a trace, and only
 * then renamed over FILE; a failure or a signal removes the temporary
 * file, so FILE is the old one or the whole new trace, never a part. A
 * device, a FIFO or standard output (-o -) is written once the trace is
 * whole and checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "common/output.h"
#include "wire/proto.h"

#define WHO "corun trace"

/* How long corund may take past the recording to start its answer. */
#define ANSWER_WAIT_MS 30000

void corun__usage_trace(FILE *out)
{
    fprintf(out,
            "usage: corun trace --seconds S -o FILE [--socket PATH]\n"
            "\n"
            "Records what corund schedules for S seconds and writes it to FILE as a\n"
            "Chrome trace ({\"traceEvents\": [...]}, for chrome://tracing or Perfetto);\n"
            "says how many events it holds. FILE is replaced only by a whole trace.\n"
            "\n"
            "options:\n"
            "  --seconds S        how long to record, a decimal number in (0, 3600] (required)\n"
            "  -o FILE            the trace file, - for standard output (required)\n"
            "  --socket PATH      the daemon's socket (default: the DAEMON_SOCKET setting)\n"
            "\n"
            "Exit status: 0; 1 when no daemon answers, it reports an error, its trace\n"
            "is not one, or FILE cannot be written; 2 for a bad command line.\n");
}

/* The temporary file a signal must not leave behind; set before it is
 * created, cleared once it is renamed or removed. */
static char tmp_path[PATH_MAX + 32];
static volatile sig_atomic_t tmp_live;

static void on_signal(int sig)
{
    if (tmp_live) {
        unlink(tmp_path);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Removes the temporary file, if there is one. */
static void drop_tmp(void)
{
    if (tmp_live) {
        unlink(tmp_path);
        tmp_live = 0;
    }
}

/* Where the trace goes while it arrives: the temporary file beside FILE
 * (replace), else an anonymous one, copied out once the trace is whole. */
typedef struct spool {
    FILE *f;
    const char *name; /* for errors */
    int replace;
} spool;

static int spool_piece(void *ctx, const char *data, size_t len)
{
    spool *s = ctx;

    if (fwrite(data, 1, len, s->f) != len) {
        fprintf(stderr, WHO ": cannot write %s: %s\n", s->name, strerror(errno));
        return -1;
    }
    return 0;
}

/* Opens the spool for path ("-": standard output); real (PATH_MAX bytes)
 * receives the file to write in place. Returns -1 after printing why. */
static int spool_open(spool *s, const char *path, char *real)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    char why[PATH_MAX + 128];
    size_t i;
    int fd;

    memset(s, 0, sizeof(*s));
    if (strcmp(path, "-") != 0) {
        corun__output_how how = corun__output_resolve(path, real, PATH_MAX, why, sizeof(why));
        if (how == CORUN_OUTPUT_REFUSE) {
            fprintf(stderr, WHO ": %s\n", why);
            return -1;
        }
        s->replace = how == CORUN_OUTPUT_REPLACE;
    }
    if (!s->replace) {
        s->name = "a temporary file";
        if ((s->f = tmpfile()) == NULL) {
            fprintf(stderr, WHO ": cannot make a temporary file: %s\n", strerror(errno));
            return -1;
        }
        return 0;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        sigaction(sigs[i], &sa, NULL);
    }
    snprintf(tmp_path, sizeof(tmp_path), "%s.tmp.%ld", real, (long)getpid());
    s->name = tmp_path;
    unlink(tmp_path); /* left by a writer that died with the same process id */
    tmp_live = 1;
    fd = open(tmp_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || (s->f = fdopen(fd, "w+")) == NULL) {
        fprintf(stderr, WHO ": cannot write %s: %s\n", tmp_path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        drop_tmp();
        return -1;
    }
    return 0;
}

/* Syncs the spool and counts the events of the trace in it; -1 after
 * printing why when it cannot be read back or is not a Chrome trace. */
static int spool_check(spool *s, size_t *events)
{
    json_error_t err;
    json_t *root, *ev;

    if (fflush(s->f) != 0 || (s->replace && fsync(fileno(s->f)) != 0)) {
        fprintf(stderr, WHO ": cannot write %s: %s\n", s->name, strerror(errno));
        return -1;
    }
    rewind(s->f);
    if ((root = json_loadf(s->f, 0, &err)) == NULL) {
        fprintf(stderr, WHO ": corund's trace is not JSON: %d:%d: %s\n", err.line, err.column,
                err.text);
        return -1;
    }
    ev = json_object_get(root, "traceEvents");
    if (!json_is_array(ev)) {
        fprintf(stderr, WHO ": corund's trace is not a Chrome trace (no traceEvents array)\n");
        json_decref(root);
        return -1;
    }
    *events = json_array_size(ev);
    json_decref(root);
    return 0;
}

/* Copies the whole spool to out (named path); -1 after printing why. */
static int spool_copy(spool *s, FILE *out, const char *path)
{
    char buf[65536];
    size_t n;

    rewind(s->f);
    while ((n = fread(buf, 1, sizeof(buf), s->f)) > 0) {
        if (fwrite(buf, 1, n, out) != n) {
            fprintf(stderr, WHO ": cannot write %s: %s\n", path, strerror(errno));
            return -1;
        }
    }
    if (ferror(s->f)) {
        fprintf(stderr, WHO ": cannot read back %s: %s\n", s->name, strerror(errno));
        return -1;
    }
    return 0;
}

/* Puts the checked trace at path: renamed over it, or copied to standard
 * output or into the device. Closes the spool. -1 after printing why. */
static int spool_finish(spool *s, const char *path, const char *real)
{
    char why[PATH_MAX * 2 + 64];
    FILE *out;
    int rc;

    if (s->replace) {
        rc = fclose(s->f);
        s->f = NULL;
        if (rc != 0) {
            fprintf(stderr, WHO ": cannot write %s: %s\n", tmp_path, strerror(errno));
            return -1;
        }
        rc = corun__output_commit(tmp_path, path, why, sizeof(why));
        tmp_live = 0; /* renamed, or removed by commit */
        if (rc != 0) {
            fprintf(stderr, WHO ": %s\n", why);
        }
        return rc;
    }
    if (strcmp(path, "-") == 0) {
        return spool_copy(s, stdout, "standard output"); /* main checks stdout at exit */
    }
    if ((out = fopen(real, "w")) == NULL) {
        fprintf(stderr, WHO ": cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    rc = spool_copy(s, out, path);
    if (fclose(out) != 0 && rc == 0) {
        fprintf(stderr, WHO ": cannot write %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    return rc;
}

int corun__cmd_trace(corun__cli *cli, int argc, char **argv)
{
    const char *path = NULL, *sock = cli->settings.daemon_socket, *secs = NULL;
    char real[PATH_MAX], note[64];
    double s = 0;
    size_t events = 0;
    uint32_t ms;
    spool sp;
    int i, ok;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--seconds") != 0 && strcmp(a, "-o") != 0 && strcmp(a, "--socket") != 0) {
            fprintf(stderr, WHO ": %s '%s' (" WHO " --help lists them)\n",
                    a[0] == '-' ? "unknown option" : "unexpected argument", a);
            return CORUN_EXIT_USAGE;
        }
        if ((v = corun__cli_value(WHO, argc, argv, &i)) == NULL) {
            return CORUN_EXIT_USAGE;
        }
        if (strcmp(a, "-o") == 0) {
            path = v;
        } else if (strcmp(a, "--socket") == 0) {
            sock = v;
        } else if (corun__parse_decimal(v, &s) != 0 || !(s > 0) || s > 3600) {
            fprintf(stderr, WHO ": option --seconds: '%s' is not a decimal number in (0, 3600]\n",
                    v);
            return CORUN_EXIT_USAGE;
        } else {
            secs = v;
        }
    }
    if (secs == NULL || path == NULL) {
        fprintf(stderr, WHO ": %s required (" WHO " --seconds S -o FILE)\n",
                secs == NULL && path == NULL ? "--seconds S and -o FILE are"
                : secs == NULL               ? "--seconds S is"
                                             : "-o FILE is");
        return CORUN_EXIT_USAGE;
    }
    ms = (uint32_t)(s * 1000.0 + 0.5);
    ms = ms < 1 ? 1 : ms;
    if (spool_open(&sp, path, real) != 0) {
        return CORUN_EXIT_FAIL;
    }
    snprintf(note, sizeof(note), "recording %s s ...", secs);
    ok = corun__cli_observe(WHO, sock, CORUN_MSG_TRACE, ms, note, (int)ms + ANSWER_WAIT_MS,
                            spool_piece, &sp) == 0 &&
         spool_check(&sp, &events) == 0 && spool_finish(&sp, path, real) == 0;
    if (sp.f != NULL) {
        fclose(sp.f);
    }
    drop_tmp();
    if (!ok) {
        return CORUN_EXIT_FAIL;
    }
    fprintf(stderr, WHO ": wrote %zu event%s to %s\n", events, events == 1 ? "" : "s",
            strcmp(path, "-") == 0 ? "standard output" : path);
    return CORUN_EXIT_OK;
}
