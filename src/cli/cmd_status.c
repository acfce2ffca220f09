/*
 * cmd_status.c — `corun status`: what corund is doing, as tables (one per
 * GPU: its clients, and their jobs under each) or as the daemon's JSON;
 * once, or redrawn every few seconds. Also the observer request that status
 * and trace share (corun__cli_observe).
 *
 * The JSON comes from a daemon that may be of another version, or broken:
 * the table is drawn from whatever is there, and a field missing or of the
 * wrong type shows as "?".
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "corun/corun.h"
#include "wire/proto.h"

#define WHO "corun status"

/* How long a message of an answer may take after the first. */
#define LATER_WAIT_MS 30000
/* How long corund may take to answer STATUS. */
#define STATUS_WAIT_MS 10000
/* The most JSON text a status may have (a daemon is not trusted with memory). */
#define STATUS_MAX_BYTES (64u << 20)
/* Longest text of one table cell, with its NUL. */
#define CELL 64

/* --- the observer request ------------------------------------------------- */

int corun__cli_observe(const char *who, const char *socket_path, unsigned type, uint32_t trace_ms,
                       const char *sent_note, int first_wait_ms, corun__cli_piece_fn piece,
                       void *ctx)
{
    corun__proto_rx *rx;
    corun__msg req, m;
    char why[CORUN_PROTO_WHY + 256] = "";
    int fd, rc, ret = -1, wait_ms = first_wait_ms;

    rc = corun__proto_connect(socket_path, &fd, why, sizeof(why));
    if (rc == CORUN_ENOENT) {
        fprintf(stderr, "%s: no corund at %s (start one with `corun daemon`)\n", who, socket_path);
        return -1;
    }
    if (rc != CORUN_OK) {
        fprintf(stderr, "%s: %s\n", who, why[0] != '\0' ? why : corun_strerror(rc));
        return -1;
    }
    if ((rx = calloc(1, sizeof(*rx))) == NULL) {
        fprintf(stderr, "%s: out of memory\n", who);
        goto out_close;
    }
    memset(&req, 0, sizeof(req));
    req.type = (uint16_t)type;
    req.seq = 1;
    if (type == CORUN_MSG_TRACE) {
        req.u.trace.ms = trace_ms;
    }
    if ((rc = corun__proto_send(fd, &req)) != CORUN_OK) {
        fprintf(stderr, "%s: cannot send %s to corund at %s: %s\n", who,
                corun__proto_type_name(type), socket_path, corun_strerror(rc));
        goto out_free_rx;
    }
    if (sent_note != NULL) {
        fprintf(stderr, "%s: %s\n", who, sent_note);
    }
    for (;;) {
        why[0] = '\0';
        rc = corun__proto_recv(fd, rx, &m, wait_ms, why, sizeof(why));
        if (rc == CORUN_ETIMEDOUT) {
            fprintf(stderr, "%s: corund at %s did not answer in %d s\n", who, socket_path,
                    wait_ms / 1000);
            break;
        }
        if (rc == CORUN_EIO) {
            fprintf(stderr, "%s: corund at %s closed the connection before its answer ended\n",
                    who, socket_path);
            break;
        }
        if (rc != CORUN_OK) {
            fprintf(stderr, "%s: corund at %s sent a malformed message: %s\n", who, socket_path,
                    why[0] != '\0' ? why : corun_strerror(rc));
            break;
        }
        wait_ms = LATER_WAIT_MS;
        if (m.seq == req.seq && m.type == CORUN_MSG_DATA) {
            if (piece(ctx, m.u.data.data, m.u.data.len) != 0) {
                break;
            }
            continue;
        }
        if (m.seq == req.seq && m.type == CORUN_MSG_REPLY) {
            if (m.u.reply.status == CORUN_OK) {
                ret = 0;
            } else {
                fprintf(stderr, "%s: corund: %s\n", who,
                        m.u.reply.why[0] != '\0' ? m.u.reply.why
                                                 : corun_strerror(m.u.reply.status));
            }
            break;
        }
        fprintf(stderr, "%s: corund at %s sent %s (seq %u) out of turn\n", who, socket_path,
                corun__proto_type_name(m.type), (unsigned)m.seq);
        break;
    }
out_free_rx:
    free(rx);
out_close:
    close(fd);
    return ret;
}

/* --- the table ------------------------------------------------------------ */

/* src as a cell: printable ASCII kept, anything else '?', cut to fit. */
static void cell_text(char *dst, const char *src)
{
    size_t i;

    for (i = 0; i + 1 < CELL && src[i] != '\0'; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    dst[i] = '\0';
}

static void cell_str(char *dst, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    cell_text(dst, json_is_string(v) ? json_string_value(v) : "?");
}

static void cell_int(char *dst, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    if (json_is_integer(v)) {
        snprintf(dst, CELL, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else {
        snprintf(dst, CELL, "?");
    }
}

static void cell_num(char *dst, const json_t *o, const char *key, int decimals)
{
    const json_t *v = json_object_get(o, key);

    if (json_is_number(v)) {
        snprintf(dst, CELL, "%.*f", decimals, json_number_value(v));
    } else {
        snprintf(dst, CELL, "?");
    }
}

/* An integer field that is there, or -1. */
static json_int_t field_int(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* The client table's columns. */
enum { C_PID, C_USER, C_COMMAND, C_CLASS, C_PRIO, C_WEIGHT, C_CAPSM, C_JOBS, C_TASKS, C_PREEMPT,
       C_P50, C_P99, NCLIENT_COLS };
static const char *const client_head[NCLIENT_COLS] = {
    "PID", "USER", "COMMAND", "CLASS", "PRIO", "WEIGHT", "CAPSM", "JOBS", "TASKS", "PREEMPT",
    "p50 ms", "p99 ms"};
/* 1: right-aligned (numbers) */
static const int client_right[NCLIENT_COLS] = {1, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1};

/* The job lines' columns. */
enum { J_ID, J_KERNEL, J_STATE, J_CAPSM, J_DONE, NJOB_COLS };

typedef char client_row[NCLIENT_COLS][CELL];
typedef char job_row[NJOB_COLS][CELL];

/* "2 run 1 halt": the client's jobs running (or stopping) and halted. */
static void cell_jobs(char *dst, const json_t *jobs)
{
    size_t i, run = 0, halt = 0, wait = 0;

    if (!json_is_array(jobs)) {
        snprintf(dst, CELL, "?");
        return;
    }
    for (i = 0; i < json_array_size(jobs); i++) {
        const json_t *s = json_object_get(json_array_get(jobs, i), "state");
        const char *st = json_is_string(s) ? json_string_value(s) : "";
        run += strcmp(st, "running") == 0 || strcmp(st, "stopping") == 0;
        halt += strcmp(st, "paused") == 0;
        wait += strcmp(st, "waiting") == 0;
    }
    if (wait > 0) {
        snprintf(dst, CELL, "%zu run %zu halt %zu wait", run, halt, wait);
    } else {
        snprintf(dst, CELL, "%zu run %zu halt", run, halt);
    }
}

static void client_row_of(const json_t *c, client_row r)
{
    const json_t *lat = json_object_get(c, "latency_ms");

    cell_int(r[C_PID], c, "pid");
    cell_str(r[C_USER], c, "user");
    cell_str(r[C_COMMAND], c, "command");
    cell_str(r[C_CLASS], c, "class");
    cell_int(r[C_PRIO], c, "priority");
    cell_int(r[C_WEIGHT], c, "weight");
    cell_int(r[C_CAPSM], c, "capsm");
    cell_jobs(r[C_JOBS], json_object_get(c, "jobs"));
    cell_int(r[C_TASKS], c, "tasks_done");
    cell_int(r[C_PREEMPT], c, "preemptions");
    if (json_is_null(lat)) {
        snprintf(r[C_P50], CELL, "-");
        snprintf(r[C_P99], CELL, "-");
    } else {
        cell_num(r[C_P50], lat, "p50", 3);
        cell_num(r[C_P99], lat, "p99", 3);
    }
}

static void job_row_of(const json_t *j, job_row r)
{
    char a[CELL], b[CELL];

    cell_int(a, j, "job");
    snprintf(r[J_ID], CELL, "job %.*s", CELL - 5, a);
    cell_str(r[J_KERNEL], j, "kernel");
    cell_str(r[J_STATE], j, "state");
    cell_int(a, j, "capsm");
    snprintf(r[J_CAPSM], CELL, "capsm %.*s", CELL - 7, a);
    cell_int(a, j, "done");
    cell_int(b, j, "tasks");
    snprintf(r[J_DONE], CELL, "%.*s/%.*s", CELL / 2 - 1, a, CELL / 2 - 1, b);
}

static void widen(int *w, const char *cell)
{
    if ((int)strlen(cell) > *w) {
        *w = (int)strlen(cell);
    }
}

/* Prints one row of n cells, two blanks apart, after indent blanks; no
 * blanks after the last cell. */
static void print_row(FILE *out, int indent, const char (*cells)[CELL], const int *w,
                      const int *right, int n)
{
    int c;

    fprintf(out, "%*s", indent, "");
    for (c = 0; c < n; c++) {
        const char *sep = c + 1 < n ? "  " : "\n";
        if (right != NULL && right[c]) {
            fprintf(out, "%*s%s", w[c], cells[c], sep);
        } else if (c + 1 < n) {
            fprintf(out, "%-*s%s", w[c], cells[c], sep);
        } else {
            fprintf(out, "%s%s", cells[c], sep);
        }
    }
}

/* The clients of one GPU (an array, not empty), each with its jobs under it. */
static void print_clients(FILE *out, const json_t *clients)
{
    size_t n = json_array_size(clients), i, k, njobs = 0;
    client_row *rows = calloc(n + 1, sizeof(*rows));
    job_row jr;
    int cw[NCLIENT_COLS] = {0}, jw[NJOB_COLS] = {0}, c;

    if (rows == NULL) {
        fprintf(out, "  (out of memory)\n");
        return;
    }
    /* columns as wide as their widest cell, headers included */
    for (c = 0; c < NCLIENT_COLS; c++) {
        cell_text(rows[0][c], client_head[c]);
    }
    for (i = 0; i < n; i++) {
        const json_t *cl = json_array_get(clients, i), *jobs = json_object_get(cl, "jobs");
        client_row_of(cl, rows[i + 1]);
        for (k = 0; k < json_array_size(jobs); k++, njobs++) {
            job_row_of(json_array_get(jobs, k), jr);
            for (c = 0; c < NJOB_COLS; c++) {
                widen(&jw[c], jr[c]);
            }
        }
    }
    for (i = 0; i <= n; i++) {
        for (c = 0; c < NCLIENT_COLS; c++) {
            widen(&cw[c], rows[i][c]);
        }
    }
    print_row(out, 2, (const char(*)[CELL])rows[0], cw, client_right, NCLIENT_COLS);
    for (i = 0; i < n; i++) {
        const json_t *jobs = json_object_get(json_array_get(clients, i), "jobs");
        print_row(out, 2, (const char(*)[CELL])rows[i + 1], cw, client_right, NCLIENT_COLS);
        for (k = 0; k < json_array_size(jobs); k++) {
            job_row_of(json_array_get(jobs, k), jr);
            print_row(out, 6, (const char(*)[CELL])jr, jw, NULL, NJOB_COLS);
        }
    }
    free(rows);
}

/* "3h 02m 05s" */
static void cell_uptime(char *dst, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    double s = json_is_number(v) ? json_number_value(v) : -1;

    if (!(s >= 0) || s > 1e12) {
        snprintf(dst, CELL, "?");
    } else if (s < 60) {
        snprintf(dst, CELL, "%.0fs", s);
    } else if (s < 3600) {
        snprintf(dst, CELL, "%dm %02ds", (int)(s / 60), (int)s % 60);
    } else {
        long long t = (long long)s;
        snprintf(dst, CELL, "%lldh %02lldm %02llds", t / 3600, t / 60 % 60, t % 60);
    }
}

static void print_gpu(FILE *out, const json_t *g)
{
    char idx[CELL], name[CELL], be[CELL], mode[CELL], pol[CELL], sms[CELL], freec[CELL];
    const json_t *clients = json_object_get(g, "clients");
    json_int_t others = field_int(g, "others");

    cell_int(idx, g, "index");
    cell_str(name, g, "name");
    cell_str(be, g, "backend");
    cell_str(mode, g, "mode");
    cell_str(pol, g, "policy");
    cell_int(sms, g, "sms");
    cell_int(freec, g, "capsm_free");
    fprintf(out, "GPU %s  %s  backend %s  mode %s  policy %s  SMs %s  CapSMs free %s\n", idx, name,
            be, mode, pol, sms, freec);
    if (!json_is_array(clients)) {
        fprintf(out, "  clients: ?\n");
    } else if (json_array_size(clients) == 0) {
        fprintf(out, "  no clients\n");
    } else {
        print_clients(out, clients);
    }
    if (others == 1) {
        fprintf(out, "  (1 client of another user not shown)\n");
    } else if (others > 1) {
        fprintf(out, "  (%" JSON_INTEGER_FORMAT " clients of other users not shown)\n", others);
    }
}

void corun__cli_status_table(const json_t *root, FILE *out)
{
    const json_t *d = json_object_get(root, "daemon"), *gpus = json_object_get(root, "gpus");
    char pid[CELL], up[CELL], sock[CELL];
    size_t i;

    cell_int(pid, d, "pid");
    cell_uptime(up, d, "uptime_s");
    cell_str(sock, d, "socket");
    fprintf(out, "corund pid %s, up %s, socket %s\n", pid, up, sock);
    if (!json_is_array(gpus)) {
        fprintf(out, "\nGPUs: ?\n");
        return;
    }
    if (json_array_size(gpus) == 0) {
        fprintf(out, "\nno GPUs\n");
    }
    for (i = 0; i < json_array_size(gpus); i++) {
        fputc('\n', out);
        print_gpu(out, json_array_get(gpus, i));
    }
}

/* --- the command ---------------------------------------------------------- */

void corun__usage_status(FILE *out)
{
    fprintf(out,
            "usage: corun status [--json] [--watch SECONDS] [--socket PATH | --from-file FILE]\n"
            "\n"
            "What corund is doing: for each GPU its backend, mode, policy and free\n"
            "CapSMs, then one row per client (PID, USER, COMMAND, CLASS, PRIO, WEIGHT,\n"
            "CAPSM held, JOBS running and halted, TASKS done, PREEMPT, latency p50 and\n"
            "p99 in ms) and, under each, a line per job (id, kernel, state, CapSMs,\n"
            "tasks done/all). Clients of other users are counted, not shown. A field\n"
            "the daemon did not send shows as '?'.\n"
            "\n"
            "options:\n"
            "  --json             print the daemon's JSON (indented) instead of the tables\n"
            "  --watch SECONDS    clear the screen and redraw every SECONDS (a decimal in\n"
            "                     (0, 3600]) until interrupted\n"
            "  --socket PATH      the daemon's socket (default: the DAEMON_SOCKET setting)\n"
            "  --from-file FILE   read the JSON from FILE instead of the daemon (corun\n"
            "                     status --json writes it), for tests and offline reading\n"
            "\n"
            "Exit status: 0; 1 when no daemon answers or it reports an error; 2 for a\n"
            "bad command line or a --from-file FILE that is not JSON.\n");
}

typedef struct status_opts {
    int json;
    double watch_s;           /* 0: once */
    const char *socket;       /* never NULL once parsed */
    const char *from_file;
} status_opts;

/* JSON text of an answer, as it arrives. */
typedef struct text_buf {
    char *p;
    size_t len, cap;
    const char *who;
} text_buf;

static int text_append(void *ctx, const char *data, size_t len)
{
    text_buf *b = ctx;

    if (len > STATUS_MAX_BYTES - b->len) {
        fprintf(stderr, "%s: the status is longer than %u MiB\n", b->who, STATUS_MAX_BYTES >> 20);
        return -1;
    }
    if (b->len + len > b->cap) {
        size_t cap = b->cap > 0 ? b->cap : 4096;
        char *p;
        while (cap < b->len + len) {
            cap *= 2;
        }
        if ((p = realloc(b->p, cap)) == NULL) {
            fprintf(stderr, "%s: out of memory\n", b->who);
            return -1;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
    return 0;
}

/* Reads all of path into b; -1 after printing why. */
static int read_file(const char *path, text_buf *b)
{
    char chunk[65536];
    FILE *f = fopen(path, "rb");
    size_t n;
    int rc = 0;

    if (f == NULL) {
        fprintf(stderr, WHO ": %s: %s\n", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        rc = text_append(b, chunk, n);
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, WHO ": %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    return rc;
}

/* The status as JSON, from the daemon or --from-file; NULL after printing
 * why, with *code the exit code. */
static json_t *fetch(const status_opts *o, int *code)
{
    text_buf b = {NULL, 0, 0, WHO};
    json_error_t err;
    json_t *root = NULL;

    *code = o->from_file != NULL ? CORUN_EXIT_USAGE : CORUN_EXIT_FAIL;
    if (o->from_file != NULL ? read_file(o->from_file, &b) != 0
                             : corun__cli_observe(WHO, o->socket, CORUN_MSG_STATUS, 0, NULL,
                                                  STATUS_WAIT_MS, text_append, &b) != 0) {
        goto out_free;
    }
    root = json_loadb(b.p != NULL ? b.p : "", b.len, 0, &err);
    if (root == NULL) {
        fprintf(stderr, WHO ": %s%s is not JSON: %d:%d: %s\n",
                o->from_file != NULL ? "" : "the answer of corund at ",
                o->from_file != NULL ? o->from_file : o->socket, err.line, err.column, err.text);
    }
out_free:
    free(b.p);
    return root;
}

static void draw(const status_opts *o, const json_t *root, FILE *out)
{
    if (o->json) {
        json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        fputc('\n', out);
    } else {
        corun__cli_status_table(root, out);
    }
}

/* SIGINT and SIGTERM, the signals that end a watch. */
static sigset_t stop_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

/* Waits s seconds; returns 1 if SIGINT or SIGTERM came meanwhile or were
 * held (watch) before. */
static int sleep_or_stop(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    sigset_t set = stop_signals(), old;
    int sig;

    sigprocmask(SIG_BLOCK, &set, &old);
    sig = sigtimedwait(&set, NULL, &ts);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return sig == SIGINT || sig == SIGTERM;
}

/* 1 when path is a regular file (reading it cannot block). */
static int regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Redraws every o->watch_s seconds, each frame made whole before the
 * screen is cleared, until a signal stops it or the status is lost.
 * SIGINT and SIGTERM are held from the start, so one that comes while a
 * frame is made or written ends the watch with 0 at the wait after it;
 * while corund is asked (up to STATUS_WAIT_MS) or a file that is not a
 * regular one is read, they end corun as usual, so nothing holds them
 * long. */
static int watch(const status_opts *o)
{
    char *frame = NULL, when[64];
    size_t len = 0;
    int code = CORUN_EXIT_OK;
    const sigset_t set = stop_signals();
    sigset_t orig;
    const int hold_fetch = o->from_file != NULL && regular_file(o->from_file);

    sigprocmask(SIG_BLOCK, &set, &orig);
    for (;;) {
        if (!hold_fetch) {
            sigprocmask(SIG_SETMASK, &orig, NULL);
        }
        json_t *root = fetch(o, &code);
        FILE *mem;
        time_t now = time(NULL);
        struct tm *tm = localtime(&now);
        if (root == NULL) {
            break;
        }
        sigprocmask(SIG_BLOCK, &set, NULL);
        if ((mem = open_memstream(&frame, &len)) == NULL) {
            fprintf(stderr, WHO ": out of memory\n");
            json_decref(root);
            code = CORUN_EXIT_FAIL;
            break;
        }
        if (tm == NULL || strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", tm) == 0) {
            snprintf(when, sizeof(when), "?");
        }
        fprintf(mem, "\033[H\033[2J" WHO ", every %gs: %s\n\n", o->watch_s, when);
        draw(o, root, mem);
        json_decref(root);
        fclose(mem);
        fwrite(frame, 1, len, stdout);
        free(frame);
        frame = NULL;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            code = CORUN_EXIT_FAIL; /* main says why */
            break;
        }
        if (sleep_or_stop(o->watch_s)) {
            code = CORUN_EXIT_OK;
            break;
        }
    }
    sigprocmask(SIG_SETMASK, &orig, NULL);
    return code;
}

int corun__cmd_status(corun__cli *cli, int argc, char **argv)
{
    status_opts o = {0, 0, NULL, NULL};
    json_t *root;
    int i, code;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--json") == 0) {
            o.json = 1;
            continue;
        }
        if (strcmp(a, "--watch") != 0 && strcmp(a, "--socket") != 0 &&
            strcmp(a, "--from-file") != 0) {
            fprintf(stderr, WHO ": %s '%s' (" WHO " --help lists them)\n",
                    a[0] == '-' ? "unknown option" : "unexpected argument", a);
            return CORUN_EXIT_USAGE;
        }
        if ((v = corun__cli_value(WHO, argc, argv, &i)) == NULL) {
            return CORUN_EXIT_USAGE;
        }
        if (strcmp(a, "--socket") == 0) {
            o.socket = v;
        } else if (strcmp(a, "--from-file") == 0) {
            o.from_file = v;
        } else if (corun__parse_decimal(v, &o.watch_s) != 0 || !(o.watch_s > 0) ||
                   o.watch_s > 3600) {
            fprintf(stderr, WHO ": option --watch: '%s' is not a decimal number in (0, 3600]\n",
                    v);
            return CORUN_EXIT_USAGE;
        }
    }
    if (o.socket != NULL && o.from_file != NULL) {
        fprintf(stderr, WHO ": --socket and --from-file exclude each other\n");
        return CORUN_EXIT_USAGE;
    }
    if (o.socket == NULL) {
        o.socket = cli->settings.daemon_socket;
    }
    if (o.watch_s > 0) {
        return watch(&o);
    }
    if ((root = fetch(&o, &code)) == NULL) {
        return code;
    }
    draw(&o, root, stdout);
    json_decref(root);
    return CORUN_EXIT_OK;
}
