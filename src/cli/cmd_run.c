/*
 * cmd_run.c — `corun run`: starts a program with its scheduling attributes
 * (class, CapSMs, priority, weight, QoS goal, which daemon) in its environment, where
 * libcorun reads them as the LAUNCH_* and DAEMON settings.
 *
 * The program replaces corun (execvp): its signals and exit status are its
 * own. Every value is checked against the settings table before the program
 * starts, so a bad one never reaches it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/remote.h"
#include "cli/cli.h"

#define WHO "corun run"

/* Exit codes of a program that could not be started, as a shell gives them. */
enum { EXIT_NOT_RUNNABLE = 126, EXIT_NOT_FOUND = 127 };

void corun__usage_run(FILE *out)
{
    fprintf(out,
            "usage: corun run [--class ls|batch] [--reserve N | --quota N] [--priority P]\n"
            "                 [--weight W] [--qos G] [--daemon auto|off|PATH] -- PROG [ARGS...]\n"
            "\n"
            "Runs PROG with the scheduling attributes of its kernel launches in its\n"
            "environment (CORUN_LAUNCH_CLASS, CORUN_LAUNCH_CAPSM, CORUN_LAUNCH_PRIORITY,\n"
            "CORUN_LAUNCH_WEIGHT, CORUN_LAUNCH_QOS, CORUN_DAEMON), checked against the settings table first.\n"
            "PROG replaces corun: its signals and exit status are its own. An attribute\n"
            "not given keeps its setting's value (CORUN_* variable, --set, or default).\n"
            "\n"
            "options:\n"
            "  --class ls|batch   latency-sensitive or batch launches (default: the setting,\n"
            "                     batch; ls with --reserve, batch with --quota)\n"
            "  --reserve N        CapSMs reserved for its launches (class ls)\n"
            "  --quota N          most CapSMs its launches use (class batch)\n"
            "  --priority P       priority of its launches, larger is more urgent\n"
            "  --weight W         fair-share weight of its launches (0 = 1)\n"
            "  --qos G            QoS goal of its launches under policy fgqos: a fraction\n"
            "                     of each kernel's isolated rate, in [0, 1] (0 = none)\n"
            "  --daemon auto|off|PATH\n"
            "                     auto: corund if its socket answers, else in-process;\n"
            "                     off: in-process; PATH: that daemon's socket (absolute)\n"
            "\n"
            "Exit status: PROG's; 2 for a bad command line; 126 if PROG cannot be\n"
            "started, 127 if it is not found.\n");
}

/* The options given; NULL where not. */
typedef struct run_opts {
    const char *cls, *reserve, *quota, *priority, *weight, *qos, *daemon;
} run_opts;

/* Reads the options before `--` into *o; *prog receives the index of PROG.
 * Returns -1 after printing why on a bad command line. */
static int parse(int argc, char **argv, run_opts *o, int *prog)
{
    int i;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i], **dst;
        if (strcmp(a, "--") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, WHO ": no program after --\n");
                return -1;
            }
            *prog = i + 1;
            return 0;
        }
        if (strcmp(a, "--class") == 0) {
            dst = &o->cls;
        } else if (strcmp(a, "--reserve") == 0) {
            dst = &o->reserve;
        } else if (strcmp(a, "--quota") == 0) {
            dst = &o->quota;
        } else if (strcmp(a, "--priority") == 0) {
            dst = &o->priority;
        } else if (strcmp(a, "--weight") == 0) {
            dst = &o->weight;
        } else if (strcmp(a, "--qos") == 0) {
            dst = &o->qos;
        } else if (strcmp(a, "--daemon") == 0) {
            dst = &o->daemon;
        } else if (a[0] == '-') {
            fprintf(stderr, WHO ": unknown option '%s' (" WHO " --help lists them)\n", a);
            return -1;
        } else {
            fprintf(stderr, WHO ": '%s' before --: the program follows -- (" WHO
                            " [OPTIONS] -- PROG [ARGS...])\n", a);
            return -1;
        }
        if ((*dst = corun__cli_value(WHO, argc, argv, &i)) == NULL) {
            return -1;
        }
    }
    fprintf(stderr, WHO ": no program: it follows -- (" WHO " [OPTIONS] -- PROG [ARGS...])\n");
    return -1;
}

/* Applies the options to the settings, each checked against the table
 * (corun__cli_set_option names the setting on a bad value), and the rules
 * between them: --reserve is class ls's, --quota class batch's. Returns -1
 * after printing why. */
static int apply(corun__cli *cli, const run_opts *o)
{
    const char *capsm = o->reserve != NULL ? o->reserve : o->quota;
    const char *copt = o->reserve != NULL ? "--reserve" : "--quota";
    const char *d = o->daemon;

    if (o->reserve != NULL && o->quota != NULL) {
        fprintf(stderr, WHO ": --reserve and --quota exclude each other (a reservation is class "
                        "ls's, a quota class batch's)\n");
        return -1;
    }
    if (o->cls != NULL && corun__cli_set_option(cli, WHO, "--class", "launch_class", o->cls) != 0) {
        return -1;
    }
    if (o->cls != NULL && o->reserve != NULL && strcmp(o->cls, "ls") != 0) {
        fprintf(stderr, WHO ": --reserve is for class ls; class %s takes --quota N\n", o->cls);
        return -1;
    }
    if (o->cls != NULL && o->quota != NULL && strcmp(o->cls, "batch") != 0) {
        fprintf(stderr, WHO ": --quota is for class batch; class %s takes --reserve N\n", o->cls);
        return -1;
    }
    if (o->cls == NULL && capsm != NULL &&
        corun__cli_set_option(cli, WHO, "--class", "launch_class",
                              o->reserve != NULL ? "ls" : "batch") != 0) {
        return -1;
    }
    if ((capsm != NULL && corun__cli_set_option(cli, WHO, copt, "launch_capsm", capsm) != 0) ||
        (o->priority != NULL &&
         corun__cli_set_option(cli, WHO, "--priority", "launch_priority", o->priority) != 0) ||
        (o->weight != NULL &&
         corun__cli_set_option(cli, WHO, "--weight", "launch_weight", o->weight) != 0) ||
        (o->qos != NULL && corun__cli_set_option(cli, WHO, "--qos", "launch_qos", o->qos) != 0) ||
        (d != NULL && corun__cli_set_option(cli, WHO, "--daemon", "daemon", d) != 0)) {
        return -1;
    }
    /* the table takes any text; the library takes these three forms */
    if (d != NULL && corun__daemon_mode_of(d) == CORUN__DAEMON_BAD) {
        fprintf(stderr, WHO ": option --daemon: '%s' is not auto, off or an absolute path "
                        "(setting %s)\n", d, corun__settings_find("daemon")->env);
        return -1;
    }
    return 0;
}

/* Puts setting `name`'s value into the environment under its variable. */
static int export_setting(const corun__settings *s, const char *name)
{
    char value[CORUN_SETTING_STR_MAX];
    size_t i;

    for (i = 0; i < corun__settings_count(); i++) {
        const corun__setting_info *in = corun__settings_info(i);
        if (strcmp(in->name, name) == 0) {
            corun__settings_format(s, i, value, sizeof(value));
            if (setenv(in->env, value, 1) != 0) {
                fprintf(stderr, WHO ": cannot set %s: %s\n", in->env, strerror(errno));
                return -1;
            }
            return 0;
        }
    }
    fprintf(stderr, WHO ": no setting '%s'\n", name);
    return -1;
}

int corun__cmd_run(corun__cli *cli, int argc, char **argv)
{
    static const char *const exported[] = {"launch_class", "launch_capsm", "launch_priority",
                                            "launch_weight", "launch_qos", "daemon"};
    run_opts o = {0};
    size_t i;
    int prog = 0, err;

    if (parse(argc, argv, &o, &prog) != 0 || apply(cli, &o) != 0) {
        return CORUN_EXIT_USAGE;
    }
    for (i = 0; i < sizeof(exported) / sizeof(exported[0]); i++) {
        if (export_setting(&cli->settings, exported[i]) != 0) {
            return CORUN_EXIT_FAIL;
        }
    }
    fflush(stdout);
    fflush(stderr);
    execvp(argv[prog], argv + prog);
    err = errno;
    fprintf(stderr, WHO ": %s: %s\n", argv[prog], strerror(err));
    return err == ENOENT || err == ENOTDIR ? EXIT_NOT_FOUND : EXIT_NOT_RUNNABLE;
}
