/*
 * cmd_daemon.c — `corun daemon`: starts corund (src/daemon/corund.h), in
 * the background by default or in the foreground (systemd, tests).
 *
 * In the background the parent waits until the daemon listens (or says why
 * it cannot) and only then returns, so a script can connect right after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/log.h"
#include "daemon/corund.h"

#define WHO "corun daemon"

void corun__usage_daemon(FILE *out)
{
    fprintf(out,
            "usage: corun daemon [--foreground] [--socket PATH] [--group NAME] [--policy P]\n"
            "                    [--backend B] [--gpus N] [--sim-speed F] [--coordinate]\n"
            "                    [--ls-sms N] [--drain S]\n"
            "                    [--log-level L] [--log-file PATH]\n"
            "\n"
            "Starts corund, the one scheduler of the host's GPUs for every program that uses\n"
            "corun: a program's context connects to it (setting CORUN_DAEMON) and its\n"
            "kernels are scheduled beside every other program's on its GPU, under one\n"
            "policy (a scheduler per GPU; a program is on the GPU CUDA gives it, setting\n"
            "CORUN_DEVICE, CUDA_VISIBLE_DEVICES).\n"
            "On a real GPU (--backend cuda or auto) it coordinates: each program keeps its\n"
            "context and launches its own kernels, corund sets each one's window of SMs (LS\n"
            "programs SMs of their own, batch ones the rest while LS work goes on; MPS makes\n"
            "them run side by side). A simulated GPU (--backend sim) it owns: programs run\n"
            "their jobs on it. docs/daemon.md has the protocol, files and limits.\n"
            "\n"
            "options:\n"
            "  --foreground, -f   stay in the foreground, log to stderr (systemd, tests);\n"
            "                     default: go to the background once listening, log to\n"
            "                     --log-file\n"
            "  --socket PATH      the Unix socket (setting CORUN_DAEMON_SOCKET, default\n"
            "                     /run/corun/corund.sock); its folder is made if missing;\n"
            "                     PATH.lock keeps a second daemon off it\n"
            "  --group NAME       the socket's group: its members may connect (mode 0660;\n"
            "                     setting CORUN_DAEMON_GROUP; default: the daemon's group)\n"
            "  --policy P         the scheduling policy of every GPU (setting CORUN_POLICY;\n"
            "                     `corun policies` lists them)\n"
            "  --backend B        auto, cuda or sim (setting CORUN_BACKEND): what it serves\n"
            "  --gpus N           serve the host's first N GPUs (default: all), or N\n"
            "                     simulated GPUs (default 1; a program picks one with\n"
            "                     CORUN_DEVICE=0..N-1)\n"
            "  --sim-speed F      simulated seconds per wall second (default 1)\n"
            "  --coordinate       coordinate a simulated GPU as a real one is: programs keep\n"
            "                     their own (simulated) GPU, corund only sets their SM\n"
            "                     windows (tests of the mechanism)\n"
            "  --ls-sms N         coordinated GPU: SMs kept for LS programs while batch ones\n"
            "                     share the GPU (default: what the LS programs report their\n"
            "                     kernels need, at least CORUN_RESERVE_CAPSM)\n"
            "  --drain S          on SIGTERM or SIGINT, how long running jobs may still take\n"
            "                     before the daemon cuts them (default 30)\n"
            "  --log-level L      error, warn, info (default) or debug\n"
            "  --log-file PATH    the log in the background (default: corund.log beside the\n"
            "                     socket)\n"
            "\n"
            "Stop it with SIGTERM: it stops accepting, lets running jobs finish (up to\n"
            "--drain), gives clients a second more to collect finished jobs, answers every\n"
            "client and removes its socket. `corun status` shows what it runs.\n"
            "Exit status: 0 once stopped (foreground) or listening (background); 1 if it\n"
            "cannot start; 2 for a bad command line.\n");
}

/* An absolute form of path (relative to the working folder). */
static int absolute(const char *path, char *out, size_t len)
{
    char cwd[4096];

    if (path[0] == '/') {
        return snprintf(out, len, "%s", path) < (int)len ? 0 : -1;
    }
    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        return -1;
    }
    return snprintf(out, len, "%s/%s", cwd, path) < (int)len ? 0 : -1;
}

/* Forks; the child becomes the daemon (new session, stdio to /dev/null
 * and the log) and returns 0; the parent waits for its first word and
 * exits with it. */
static int background(const char *log_path, int *ready_fd)
{
    int p[2], logfd, null;
    pid_t pid;
    char line[700];
    ssize_t n;

    if (pipe(p) != 0) {
        fprintf(stderr, WHO ": pipe: %s\n", strerror(errno));
        return -1;
    }
    logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (logfd < 0) {
        fprintf(stderr, WHO ": cannot open the log %s: %s\n", log_path, strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, WHO ": fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid > 0) {
        close(p[1]);
        close(logfd);
        n = read(p[0], line, sizeof(line) - 1);
        line[n > 0 ? n : 0] = '\0';
        if (strncmp(line, "ok", 2) == 0) {
            printf("corund: running (pid %d), log %s\n", (int)pid, log_path);
            exit(CORUN_EXIT_OK);
        }
        fprintf(stderr, WHO ": corund did not start: %s", n > 0 ? line + 7 : "it exited\n");
        exit(CORUN_EXIT_FAIL);
    }
    close(p[0]);
    setsid();
    null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        close(null);
    }
    dup2(logfd, STDERR_FILENO);
    close(logfd);
    if (chdir("/") != 0) {
        /* the paths are absolute already */
    }
    *ready_fd = p[1];
    return 0;
}

int corun__cmd_daemon(corun__cli *cli, int argc, char **argv)
{
    corun__daemon_opts o;
    const char *log_file = NULL, *level = "info";
    char sock[CORUN_SETTING_STR_MAX], logp[CORUN_SETTING_STR_MAX + 16];
    bool fg = false;
    int i;

    memset(&o, 0, sizeof(o));
    o.sim_speed = 1.0;
    o.drain_s = 30.0;
    o.ready_fd = -1;
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--foreground") == 0 || strcmp(a, "-f") == 0) {
            fg = true;
            continue;
        }
        if (strcmp(a, "--coordinate") == 0) {
            o.coordinate = 1;
            continue;
        }
        if (strcmp(a, "--socket") != 0 && strcmp(a, "--group") != 0 &&
            strcmp(a, "--policy") != 0 && strcmp(a, "--backend") != 0 &&
            strcmp(a, "--sim-speed") != 0 && strcmp(a, "--drain") != 0 &&
            strcmp(a, "--log-level") != 0 && strcmp(a, "--log-file") != 0 &&
            strcmp(a, "--ls-sms") != 0 && strcmp(a, "--gpus") != 0) {
            fprintf(stderr, WHO ": unknown option '%s' (" WHO " --help lists them)\n", a);
            return CORUN_EXIT_USAGE;
        }
        if ((v = corun__cli_value(WHO, argc, argv, &i)) == NULL) {
            return CORUN_EXIT_USAGE;
        }
        if (strcmp(a, "--socket") == 0) {
            if (corun__cli_set_option(cli, WHO, a, "daemon_socket", v) != 0) {
                return CORUN_EXIT_USAGE;
            }
        } else if (strcmp(a, "--group") == 0) {
            if (corun__cli_set_option(cli, WHO, a, "daemon_group", v) != 0) {
                return CORUN_EXIT_USAGE;
            }
        } else if (strcmp(a, "--policy") == 0) {
            if (corun__cli_set_option(cli, WHO, a, "policy", v) != 0) {
                return CORUN_EXIT_USAGE;
            }
        } else if (strcmp(a, "--backend") == 0) {
            /* the daemon refuses a real GPU at start (by capability) */
            if (corun__cli_set_option(cli, WHO, a, "backend", v) != 0) {
                return CORUN_EXIT_USAGE;
            }
        } else if (strcmp(a, "--sim-speed") == 0 || strcmp(a, "--drain") == 0) {
            char *end;
            double x = strtod(v, &end);
            bool speed = strcmp(a, "--sim-speed") == 0;
            if (end == v || *end != '\0' || !(x > 0 || (!speed && x == 0)) || x > 1e6) {
                fprintf(stderr, WHO ": option %s: '%s' is not a number in %s\n", a, v,
                        speed ? "(0, 1e6]" : "[0, 1e6]");
                return CORUN_EXIT_USAGE;
            }
            *(speed ? &o.sim_speed : &o.drain_s) = x;
        } else if (strcmp(a, "--gpus") == 0) {
            unsigned long long n;
            if (corun__parse_u64(v, CORUN_DAEMON_MAX_GPUS, &n) != 0 || n == 0) {
                fprintf(stderr, WHO ": option --gpus: '%s' is not a whole number in [1, %d]\n", v,
                        CORUN_DAEMON_MAX_GPUS);
                return CORUN_EXIT_USAGE;
            }
            o.gpus = (unsigned)n;
        } else if (strcmp(a, "--ls-sms") == 0) {
            unsigned long long n;
            if (corun__parse_u64(v, 4096, &n) != 0 || n == 0) {
                fprintf(stderr, WHO ": option --ls-sms: '%s' is not a whole number in [1, 4096]\n",
                        v);
                return CORUN_EXIT_USAGE;
            }
            o.ls_sms = (unsigned)n;
        } else if (strcmp(a, "--log-level") == 0) {
            if (corun__log_parse_level(v) < 0) {
                fprintf(stderr, WHO ": option --log-level: '%s' is not error, warn, info or "
                                "debug\n", v);
                return CORUN_EXIT_USAGE;
            }
            level = v;
        } else {
            log_file = v;
        }
    }
    if (absolute(cli->settings.daemon_socket, sock, sizeof(sock)) != 0) {
        fprintf(stderr, WHO ": socket path too long\n");
        return CORUN_EXIT_USAGE;
    }
    if (log_file == NULL) {
        snprintf(logp, sizeof(logp), "%s", sock);
        char *slash = strrchr(logp, '/');
        snprintf(slash + 1, sizeof(logp) - (size_t)(slash + 1 - logp), "corund.log");
    } else if (absolute(log_file, logp, sizeof(logp)) != 0) {
        fprintf(stderr, WHO ": log path too long\n");
        return CORUN_EXIT_USAGE;
    }
    o.settings = cli->settings;
    o.backend = cli->settings.backend;
    o.socket_path = sock;
    o.group = cli->settings.daemon_group;
    corun__log_threshold = (corun__log_level)corun__log_parse_level(level);
    corun__log_identity("corund", 1);
    if (!fg) {
        struct stat st;
        char dir[sizeof(logp)];
        snprintf(dir, sizeof(dir), "%s", logp);
        *strrchr(dir, '/') = '\0';
        if (dir[0] != '\0' && stat(dir, &st) != 0 && mkdir(dir, 0755) != 0) {
            fprintf(stderr, WHO ": cannot make %s: %s\n", dir, strerror(errno));
            return CORUN_EXIT_FAIL;
        }
        if (background(logp, &o.ready_fd) != 0) {
            return CORUN_EXIT_FAIL;
        }
    }
    return corun__daemon_run(&o) == 0 ? CORUN_EXIT_OK : CORUN_EXIT_FAIL;
}
