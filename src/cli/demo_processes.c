/*
 * demo_processes.c — `corun demo --processes`: the LS+batch scenario as two
 * processes, an LS one and a batch one started together, each system in the
 * same call (issue 25, point 7): under MPS with the LS process's kernels on
 * a high-priority stream; with CUDA_MPS_CLIENT_PRIORITY 0 and 1; and both
 * coordinated by a corund started for the run (smguard in each process, the
 * daemon keeping the LS process on SMs of its own and the batch one on the
 * rest while LS work goes on). The references are each application alone in
 * a process of its own.
 *
 * Each process is this program's `corun sim --apps APP --json`; its report
 * gives the LS turnaround of every kernel (normalised to the LS application
 * alone: its plain solo phase's median, as the one-process demo's rows) and
 * the batch work rate (block-tasks per second over its plain solo phase's).
 * Not the solo mean: under MPS a few of the LS process's kernels take
 * milliseconds now and then, which put its mean far above its median. MPS is
 * started for the run where no server answers (and stopped after). A real
 * GPU only: on the simulator each process would simulate a GPU of its own,
 * in virtual time, which no daemon coordinates (cmd_demo.c refuses it).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "common/dirs.h"
#include "common/json_num.h"
#include "core/metrics.h"
#include "scenario/scenario.h"

#define WHO "corun demo --processes"
#define MAX_ENV 4

/* One process of the run: its application, policy and environment. */
typedef struct proc_spec {
    const char *app;    /* "ls" or "batch" */
    const char *policy;
    const char *env[MAX_ENV]; /* NAME=VALUE, NULL-terminated */
} proc_spec;

typedef struct proc_run {
    const char *dir, *self, *scenario, *backend;
    double duration_ms;
    double limit_s;     /* how long a process may take before it is killed */
} proc_run;

/* What one process's report says of its application. */
typedef struct app_result {
    double solo_us;     /* its turnaround alone (plain dispatch), the median */
    double p50_us, p99_us;
    double work_rate;   /* batch: block-tasks per second over alone */
    size_t n;           /* kernels completed */
} app_result;

/* SIGINT or SIGTERM came: the processes are stopped, the daemon too, and
 * the demo ends (corun__demo_processes holds the handler while it runs). */
static volatile sig_atomic_t interrupted;

static void on_stop_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Starts r->self with args, its stdin /dev/null, its stdout into out and its
 * stderr into err (the same file may be both; append: add to them, else
 * truncate), env (NAME=VALUE, NULL-terminated, or NULL) added to its
 * environment. Returns its pid, or -1 after printing why. */
static pid_t spawn(const proc_run *r, char *const args[], const char *const *env,
                   const char *out, const char *err, bool append)
{
    const int mode = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, WHO ": cannot start a process: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int fo = open(out, mode, 0644);
        int fe = strcmp(out, err) == 0 ? fo : open(err, mode, 0644);
        if (nul < 0 || fo < 0 || fe < 0 || dup2(nul, STDIN_FILENO) < 0 ||
            dup2(fo, STDOUT_FILENO) < 0 || dup2(fe, STDERR_FILENO) < 0) {
            _exit(127);
        }
        for (int i = 0; env != NULL && i < MAX_ENV && env[i] != NULL; i++) {
            const char *eq = strchr(env[i], '=');
            char name[64];
            if (eq != NULL && (size_t)(eq - env[i]) < sizeof(name)) {
                memcpy(name, env[i], (size_t)(eq - env[i]));
                name[eq - env[i]] = '\0';
                setenv(name, eq + 1, 1);
            }
        }
        execv(r->self, args);
        fprintf(stderr, "cannot run %s: %s\n", r->self, strerror(errno));
        _exit(127);
    }
    return pid;
}

/* Starts `self sim ...` for s, its JSON into DIR/APP-TAG.json and its
 * stderr into DIR/APP-TAG.err. Returns its pid, or -1 after printing why. */
static pid_t start_proc(const proc_run *r, const proc_spec *s, const char *tag)
{
    char out[PATH_MAX], err[PATH_MAX], ms[32];
    const char *env[MAX_ENV + 1] = {"CORUN_PROFILE_PATH=off"};
    int n = 1;

    snprintf(out, sizeof(out), "%s/%s-%s.json", r->dir, s->app, tag);
    snprintf(err, sizeof(err), "%s/%s-%s.err", r->dir, s->app, tag);
    snprintf(ms, sizeof(ms), "%.17g", r->duration_ms);
    for (int i = 0; i < MAX_ENV - 1 && s->env[i] != NULL; i++) {
        env[n++] = s->env[i];
    }
    char *const args[] = {(char *)r->self, "sim", "--backend", (char *)r->backend,
                          "--scenario", (char *)r->scenario, "--no-train", "--json", "--quiet",
                          "--apps", (char *)s->app, "--policy", (char *)s->policy,
                          "--duration-ms", ms, NULL};
    return spawn(r, args, env, out, err, false);
}

/* Waits for the processes pids[0..n) at most limit_s; kills what is left
 * then. Returns 0 when each exited 0, else -1 after printing which did
 * not (its stderr is in the run's folder). */
static int wait_procs(const proc_run *r, pid_t *pids, const char *const *names, int n)
{
    const double end = mono_s() + r->limit_s;
    int left = n, rc = 0;

    while (left > 0) {
        for (int i = 0; i < n; i++) {
            int st;
            if (pids[i] <= 0 || waitpid(pids[i], &st, WNOHANG) != pids[i]) {
                continue;
            }
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, WHO ": %s failed (%s %d; its messages: %s/%s.err)\n", names[i],
                        WIFEXITED(st) ? "exit" : "signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), r->dir, names[i]);
                rc = -1;
            }
            pids[i] = 0;
            left--;
        }
        if (left > 0 && interrupted) {
            for (int i = 0; i < n; i++) {
                if (pids[i] > 0) {
                    kill(pids[i], SIGKILL);
                    waitpid(pids[i], NULL, 0);
                }
            }
            fprintf(stderr, WHO ": interrupted\n");
            return -1;
        }
        if (left > 0 && mono_s() > end) {
            for (int i = 0; i < n; i++) {
                if (pids[i] > 0) {
                    kill(pids[i], SIGKILL);
                    waitpid(pids[i], NULL, 0);
                    fprintf(stderr, WHO ": %s took longer than %.0f s: killed\n", names[i],
                            r->limit_s);
                }
            }
            return -1;
        }
        if (left > 0) {
            nap_ms(20);
        }
    }
    return rc;
}

/* Runs the processes of specs[0..n) together, their reports tagged tag. */
static int run_together(const proc_run *r, const proc_spec *specs, int n, const char *tag)
{
    pid_t pids[2] = {0, 0};
    char names[2][96];
    const char *np[2] = {names[0], names[1]};

    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "%s-%s", specs[i].app, tag);
        pids[i] = start_proc(r, &specs[i], tag);
        if (pids[i] < 0) {
            for (int j = 0; j < i; j++) {
                kill(pids[j], SIGKILL);
                waitpid(pids[j], NULL, 0);
            }
            return -1;
        }
    }
    return wait_procs(r, pids, np, n);
}

/* Reads app's result from DIR/APP-TAG.json. Returns -1 after printing why. */
static int read_result(const proc_run *r, const char *app, const char *tag, app_result *res)
{
    char path[PATH_MAX];
    json_error_t e;
    json_t *root, *apps, *a = NULL, *k, *kernels;
    size_t i;
    double *t = NULL;

    memset(res, 0, sizeof(*res));
    snprintf(path, sizeof(path), "%s/%s-%s.json", r->dir, app, tag);
    root = json_load_file(path, 0, &e);
    if (root == NULL) {
        fprintf(stderr, WHO ": %s: %s\n", path, e.text);
        return -1;
    }
    apps = json_object_get(root, "apps");
    for (i = 0; i < json_array_size(apps); i++) {
        json_t *x = json_array_get(apps, i);
        const char *name = json_string_value(json_object_get(x, "name"));
        if (name != NULL && strcmp(name, app) == 0) {
            a = x;
            break;
        }
    }
    if (a == NULL) {
        fprintf(stderr, WHO ": %s: no application '%s'\n", path, app);
        json_decref(root);
        return -1;
    }
    res->solo_us = json_number_value(json_object_get(a, "solo_p50_us"));
    res->work_rate = json_number_value(json_object_get(a, "work_rate"));
    kernels = json_object_get(a, "kernels");
    res->n = json_array_size(kernels);
    if (res->n > 0 && (t = malloc(res->n * sizeof(*t))) == NULL) {
        fprintf(stderr, WHO ": out of memory\n");
        json_decref(root);
        return -1;
    }
    json_array_foreach(kernels, i, k) {
        t[i] = json_number_value(json_object_get(k, "turnaround_us"));
    }
    if (res->n > 0) {
        res->p50_us = corun__percentile(t, res->n, 50.0);
        res->p99_us = corun__percentile(t, res->n, 99.0);
    }
    free(t);
    json_decref(root);
    return 0;
}

/* Runs `self ARGS...` (daemon, mps), its output to DIR/LOG; its exit status,
 * or -1 when it could not run. */
static int run_self(const proc_run *r, const char *log, char *const args[])
{
    char path[PATH_MAX];
    pid_t pid;
    int st;

    if (snprintf(path, sizeof(path), "%s/%s", r->dir, log) >= (int)sizeof(path)) {
        return -1;
    }
    pid = spawn(r, args, NULL, path, path, true);
    if (pid < 0 || waitpid(pid, &st, 0) != pid) {
        return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Stops the corund whose lock file is SOCK.lock: SIGTERM, then waits (at most
 * 10 s) for its socket to go. */
static void stop_daemon(const char *sock)
{
    char lock[PATH_MAX + 32];
    FILE *f;
    long pid = 0;

    snprintf(lock, sizeof(lock), "%s.lock", sock);
    if ((f = fopen(lock, "r")) != NULL) {
        if (fscanf(f, "%ld", &pid) != 1) {
            pid = 0;
        }
        fclose(f);
    }
    if (pid > 1 && kill((pid_t)pid, SIGTERM) == 0) {
        for (int i = 0; i < 500 && access(sock, F_OK) == 0; i++) {
            nap_ms(20);
        }
    }
}

/* nftw's callback that removes what it visits (a folder after its files). */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* One row: LS p50 and p99 over the LS kernel alone, batch throughput. */
static void print_row(const char *what, const app_result *l, const app_result *b, double solo)
{
    printf("  %-40s %7.2f %7.2f %8.3f %6zu\n", what, l->p50_us / solo, l->p99_us / solo,
           b->work_rate, l->n);
}

int corun__demo_processes(corun__cli *cli, const corun__run_opts *o, const char *backend,
                          double duration_ms, uint32_t ls_sms, const char *keep)
{
    static const struct {
        const char *tag, *what, *ls_policy, *batch_policy, *ls_env, *batch_env;
    } pairs[] = {
        {"prio", "LS high-priority stream", "priority", "mps", NULL, NULL},
        {"clientprio", "CUDA_MPS_CLIENT_PRIORITY 0 / 1", "mps", "mps",
         "CUDA_MPS_CLIENT_PRIORITY=0", "CUDA_MPS_CLIENT_PRIORITY=1"},
        {"corund", "corund (smguard, SM windows)", "smguard", "smguard", "CORUN_LAUNCH_CLASS=ls",
         "CORUN_LAUNCH_CLASS=batch"},
    };
    char self[PATH_MAX], dir[PATH_MAX], sock[PATH_MAX + 16] = "", sock_env[PATH_MAX + 32];
    char lssms[16], mps_state[16] = "", builtin[PATH_MAX + 16];
    app_result la, ba, l[3], b[3];
    bool ok[3] = {false, false, false}, started_mps = false;
    proc_run r = {0};
    ssize_t n;
    int rc = CORUN_EXIT_FAIL;
    size_t i;
    struct sigaction sa, old_int, old_term;

    (void)cli;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
        fprintf(stderr, WHO ": cannot find this program (/proc/self/exe): %s\n", strerror(errno));
        return CORUN_EXIT_FAIL;
    }
    self[n] = '\0';
    if (keep != NULL) {
        char failed[PATH_MAX] = "";
        if (strlen(keep) >= sizeof(dir) - 32) {
            fprintf(stderr, WHO ": --keep %s: too long a path\n", keep);
            return CORUN_EXIT_USAGE;
        }
        if (corun__mkdir_p(keep, failed, sizeof(failed)) != 0) {
            fprintf(stderr, WHO ": cannot make %s: %s\n", failed[0] ? failed : keep,
                    strerror(errno));
            return CORUN_EXIT_FAIL;
        }
        snprintf(dir, sizeof(dir), "%s", keep);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/corun-processes-XXXXXX",
                 tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
        if (mkdtemp(dir) == NULL) {
            fprintf(stderr, WHO ": cannot make a folder in %s: %s\n",
                    tmp != NULL ? tmp : "/tmp", strerror(errno));
            return CORUN_EXIT_FAIL;
        }
    }
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    r.dir = dir;
    r.self = self;
    r.scenario = o->scenario;
    if (r.scenario == NULL) { /* the built-in ls-batch, in a file for the processes */
        FILE *f;
        int bad;
        snprintf(builtin, sizeof(builtin), "%s/ls-batch.json", dir);
        f = fopen(builtin, "w");
        bad = f == NULL || fputs(corun__scenario_default_text(), f) == EOF;
        bad |= f != NULL && fclose(f) != 0;
        if (bad) {
            fprintf(stderr, WHO ": cannot write %s: %s\n", builtin, strerror(errno));
            goto out;
        }
        r.scenario = builtin;
    }
    r.backend = backend;
    r.duration_ms = duration_ms;
    r.limit_s = 120.0 + 8.0 * duration_ms * 1e-3;
    snprintf(sock, sizeof(sock), "%s/corund.sock", dir);
    if (strlen(sock) >= 100) { /* a socket's path must fit sun_path */
        snprintf(sock, sizeof(sock), "/tmp/corun-demo-%ld.sock", (long)getpid());
    }
    snprintf(sock_env, sizeof(sock_env), "CORUN_DAEMON=%s", sock);
    snprintf(lssms, sizeof(lssms), "%u", (unsigned)ls_sms);

    {
        char *st[] = {self, "mps", "status", NULL}, *start[] = {self, "mps", "start", NULL};
        int s = run_self(&r, "mps.log", st);
        if (s == 3 && run_self(&r, "mps.log", start) == 0) {
            started_mps = true;
        }
        snprintf(mps_state, sizeof(mps_state), "%s",
                 s == 0 || started_mps ? "under MPS" : "without MPS");
        if (s != 0 && !started_mps && !o->quiet) {
            fprintf(stderr, WHO ": MPS did not start (%s/mps.log): the processes' contexts will "
                            "take turns on the GPU\n", dir);
        }
    }

    /* each application alone, in a process of its own */
    {
        proc_spec ls = {"ls", "smguard", {"CORUN_DAEMON=off", NULL}};
        proc_spec bat = {"batch", "smguard", {"CORUN_DAEMON=off", NULL}};
        if (!o->quiet) {
            fprintf(stderr, WHO ": each application alone\n");
        }
        if (run_together(&r, &ls, 1, "alone") != 0 || run_together(&r, &bat, 1, "alone") != 0 ||
            read_result(&r, "ls", "alone", &la) != 0 ||
            read_result(&r, "batch", "alone", &ba) != 0) {
            goto out;
        }
        if (la.solo_us <= 0 || la.n == 0) {
            fprintf(stderr, WHO ": the LS application alone completed no kernel\n");
            goto out;
        }
    }
    for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        proc_spec s[2] = {{"batch", pairs[i].batch_policy, {NULL}},
                          {"ls", pairs[i].ls_policy, {NULL}}};
        const bool daemon = strcmp(pairs[i].tag, "corund") == 0;
        s[0].env[0] = s[1].env[0] = daemon ? sock_env : "CORUN_DAEMON=off";
        s[0].env[1] = pairs[i].batch_env;
        s[1].env[1] = pairs[i].ls_env;
        if (!o->quiet) {
            fprintf(stderr, WHO ": %s\n", pairs[i].what);
        }
        if (daemon) {
            char logf[PATH_MAX + 16];
            char *args[] = {self, "daemon", "--backend", (char *)backend, "--socket", sock,
                            "--ls-sms", lssms, "--log-file", logf, "--log-level", "info",
                            NULL};
            snprintf(logf, sizeof(logf), "%s/corund.log", dir);
            if (run_self(&r, "corund.out", args) != 0) {
                fprintf(stderr, WHO ": corund did not start (%s/corund.out, corund.log)\n", dir);
                goto out;
            }
        }
        const int prc = run_together(&r, s, 2, pairs[i].tag);
        if (daemon) {
            stop_daemon(sock);
        }
        if (prc != 0 || read_result(&r, "ls", pairs[i].tag, &l[i]) != 0 ||
            read_result(&r, "batch", pairs[i].tag, &b[i]) != 0) {
            goto out;
        }
        ok[i] = true;
    }

    if (o->json) {
        json_t *arr = json_array();
        for (i = 0; i < 3; i++) {
            if (ok[i]) {
                json_array_append_new(
                    arr,
                    json_pack("{s:s, s:o, s:o, s:o, s:I}", "system", pairs[i].tag, "ls_p50_norm",
                              corun__json_num(l[i].p50_us / la.solo_us), "ls_p99_norm",
                              corun__json_num(l[i].p99_us / la.solo_us), "batch_norm",
                              corun__json_num(b[i].work_rate), "ls_count", (json_int_t)l[i].n));
            }
        }
        corun__cli_print_json(arr);
    } else {
        printf("scenario %s, backend %s, %s, two processes started together; LS application "
               "alone (plain) %.1f us at the median\n",
               o->scenario != NULL ? o->scenario : "ls-batch", backend, mps_state, la.solo_us);
        printf("  %-40s %7s %7s %8s %6s\n", "system", "LS p50", "LS p99", "batch", "LS n");
        print_row("each alone (smguard, a process each)", &la, &ba, la.solo_us);
        for (i = 0; i < 3; i++) {
            if (ok[i]) {
                print_row(pairs[i].what, &l[i], &b[i], la.solo_us);
            }
        }
        printf("(LS turnaround p50 / p99 over the LS application's median alone; batch "
               "block-tasks per second over the batch loop alone)\n");
    }
    rc = CORUN_EXIT_OK;
out:
    if (started_mps) {
        char *stop[] = {self, "mps", "stop", NULL};
        (void)run_self(&r, "mps.log", stop);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (sock[0] != '\0' && strncmp(sock, dir, strlen(dir)) != 0) {
        char lock[PATH_MAX + 32]; /* the daemon's lock beside a socket outside dir */
        snprintf(lock, sizeof(lock), "%s.lock", sock);
        (void)unlink(lock);
    }
    if (keep == NULL) {
        (void)nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    } else if (!o->quiet) {
        fprintf(stderr, WHO ": the runs' reports and logs are in %s\n", dir);
    }
    return rc;
}
