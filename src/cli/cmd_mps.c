/*
 * cmd_mps.c — `corun mps start|stop|status`: the NVIDIA MPS server that lets
 * several processes' kernels run side by side on one GPU (corund's
 * coordinated mode needs it for spatial sharing; docs/daemon.md).
 *
 * A thin front to the driver's nvidia-cuda-mps-control, found on PATH: its
 * pipe folder is CUDA_MPS_PIPE_DIRECTORY (NVIDIA's variable; default
 * /tmp/nvidia-mps), its log folder CUDA_MPS_LOG_DIRECTORY (default
 * /var/log/nvidia-mps), both as every CUDA program reads them. The server
 * runs where its control pipe answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

#define WHO "corun mps"
#define CONTROL "nvidia-cuda-mps-control"

void corun__usage_mps(FILE *out)
{
    fprintf(out,
            "usage: corun mps start | stop | status [--json]\n"
            "\n"
            "The NVIDIA MPS server, which lets the kernels of several processes run side by\n"
            "side on a GPU (without it their contexts take turns): corund coordinates\n"
            "programs through it (docs/daemon.md). A front to the driver's " CONTROL "\n"
            "(on PATH; starting it needs the rights the driver asks, usually root).\n"
            "\n"
            "  start    start the server's control daemon, unless it answers already\n"
            "  stop     tell it to quit (running clients keep it until they exit)\n"
            "  status   whether it answers, its pipe folder and its servers' pids\n"
            "\n"
            "Folders: CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) and\n"
            "CUDA_MPS_LOG_DIRECTORY (default /var/log/nvidia-mps), NVIDIA's variables, read\n"
            "the same way by every CUDA program: set them alike for the server and its\n"
            "clients. Exit status: 0 done (status: 0 running, 3 not running); 1 failed; 2 a\n"
            "bad command line.\n");
}

static const char *pipe_dir(void)
{
    const char *d = getenv("CUDA_MPS_PIPE_DIRECTORY");
    return d != NULL && d[0] != '\0' ? d : "/tmp/nvidia-mps";
}

/* How long one call of nvidia-cuda-mps-control may take. */
#define CONTROL_TIMEOUT_MS 10000

/* Runs nvidia-cuda-mps-control with args, input on its stdin (NULL: none),
 * its stdout into out (len bytes, NUL-terminated; out NULL: its stdin and
 * stdout are /dev/null, as `-d` needs: the control daemon it leaves behind
 * must hold no pipe of ours, or reading to the end would wait for it).
 * Returns its exit status; 127 when it cannot be run, 124 when it took
 * longer than CONTROL_TIMEOUT_MS (it is killed). */
static int control(char *const args[], const char *input, char *out, size_t len)
{
    int in[2] = {-1, -1}, res[2] = {-1, -1}, status = 0, null;
    const bool talk = out != NULL || input != NULL;
    struct pollfd pf;
    int waited = 0;
    pid_t pid;
    size_t got = 0;

    if (talk && (pipe(in) != 0 || pipe(res) != 0)) {
        return 127;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        return 127;
    }
    if (pid == 0) {
        if (talk) {
            /* a query: its answer is ours to word ("Cannot find MPS control
             * daemon process" when the pipe outlived the server) */
            dup2(in[0], STDIN_FILENO);
            dup2(res[1], STDOUT_FILENO);
            if ((null = open("/dev/null", O_WRONLY)) >= 0) {
                dup2(null, STDERR_FILENO);
            }
            close(in[1]);
            close(res[0]);
        } else if ((null = open("/dev/null", O_RDWR)) >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
        }
        execvp(CONTROL, args);
        _exit(127);
    }
    if (talk) {
        close(in[0]);
        close(res[1]);
        if (input != NULL) {
            (void)!write(in[1], input, strlen(input));
        }
        close(in[1]);
        pf.fd = res[0];
        pf.events = POLLIN;
        while (waited < CONTROL_TIMEOUT_MS && poll(&pf, 1, 100) >= 0) {
            char sink[256];
            ssize_t n;
            if (pf.revents == 0) {
                waited += 100;
                continue;
            }
            n = out != NULL && got + 1 < len ? read(res[0], out + got, len - 1 - got)
                                             : read(res[0], sink, sizeof(sink));
            if (n <= 0) {
                break;
            }
            if (out != NULL && got + 1 < len) {
                got += (size_t)n;
            }
        }
        close(res[0]);
    }
    if (out != NULL && len > 0) {
        out[got] = '\0';
    }
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            break;
        }
        if (w < 0 && errno != EINTR) {
            return 1;
        }
        if (waited >= CONTROL_TIMEOUT_MS) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return 124;
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
        waited += 10;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* The server answers: its control pipe is there and takes a query. */
static int running(char *servers, size_t len)
{
    char ctl[4200];
    char *const q[] = {CONTROL, NULL};

    snprintf(ctl, sizeof(ctl), "%s/control", pipe_dir());
    if (access(ctl, F_OK) != 0) {
        return 0;
    }
    return control(q, "get_server_list\n", servers, len) == 0;
}

int corun__cmd_mps(corun__cli *cli, int argc, char **argv)
{
    char servers[1024] = "";
    bool json = false;
    const char *verb;
    int i;

    (void)cli;
    if (argc < 1) {
        fprintf(stderr, WHO ": start, stop or status? (" WHO " --help)\n");
        return CORUN_EXIT_USAGE;
    }
    verb = argv[0];
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && strcmp(verb, "status") == 0) {
            json = true;
        } else {
            fprintf(stderr, WHO " %s: unknown option '%s' (" WHO " --help)\n", verb, argv[i]);
            return CORUN_EXIT_USAGE;
        }
    }
    if (strcmp(verb, "status") == 0) {
        int on = running(servers, sizeof(servers));
        for (char *p = servers; *p != '\0'; p++) {
            if (*p == '\n') {
                *p = p[1] != '\0' ? ' ' : '\0';
            }
        }
        if (json) {
            printf("{\"running\": %s, \"pipe_directory\": \"%s\", \"servers\": \"%s\"}\n",
                   on ? "true" : "false", pipe_dir(), on ? servers : "");
        } else if (on) {
            printf("MPS: running (pipes in %s); servers: %s\n", pipe_dir(),
                   servers[0] != '\0' ? servers : "none yet (one starts with the first client)");
        } else {
            printf("MPS: not running (no control pipe answers in %s)\n", pipe_dir());
        }
        return on ? CORUN_EXIT_OK : 3;
    }
    if (strcmp(verb, "start") == 0) {
        char *const d[] = {CONTROL, "-d", NULL};
        if (running(NULL, 0)) {
            printf("MPS: already running (pipes in %s)\n", pipe_dir());
            return CORUN_EXIT_OK;
        }
        if (mkdir(pipe_dir(), 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, WHO " start: cannot make %s: %s\n", pipe_dir(), strerror(errno));
            return CORUN_EXIT_FAIL;
        }
        int rc = control(d, NULL, NULL, 0);
        if (rc == 127) {
            fprintf(stderr, WHO " start: cannot run " CONTROL " (not on PATH: it comes with the "
                            "NVIDIA driver)\n");
            return CORUN_EXIT_FAIL;
        }
        if (rc == 124) {
            fprintf(stderr, WHO " start: " CONTROL " -d did not return within %d s\n",
                    CONTROL_TIMEOUT_MS / 1000);
            return CORUN_EXIT_FAIL;
        }
        if (rc != 0) {
            fprintf(stderr, WHO " start: " CONTROL " -d failed (exit %d; it needs the driver's "
                            "rights, usually root)\n", rc);
            return CORUN_EXIT_FAIL;
        }
        printf("MPS: started (pipes in %s)\n", pipe_dir());
        return CORUN_EXIT_OK;
    }
    if (strcmp(verb, "stop") == 0) {
        char *const q[] = {CONTROL, NULL};
        if (!running(NULL, 0)) {
            printf("MPS: not running (pipes in %s)\n", pipe_dir());
            return CORUN_EXIT_OK;
        }
        if (control(q, "quit\n", NULL, 0) != 0) {
            fprintf(stderr, WHO " stop: " CONTROL " did not take quit\n");
            return CORUN_EXIT_FAIL;
        }
        printf("MPS: told to quit (pipes in %s)\n", pipe_dir());
        return CORUN_EXIT_OK;
    }
    fprintf(stderr, WHO ": '%s' is not start, stop or status (" WHO " --help)\n", verb);
    return CORUN_EXIT_USAGE;
}
