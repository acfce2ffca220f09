/*
 * main.c — `corun`, the command line: subcommands, global options, and the
 * settings read once from the environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/log.h"
#include "common/output.h"
#include "corun/corun.h"

static const corun__command commands[] = {
    {"demo", "run the LS+batch scenario under each system (mps, smguard, ...) and compare",
     corun__cmd_demo, corun__usage_demo},
    {"sim", "run one scenario file under one policy and report per-application results",
     corun__cmd_sim, corun__usage_sim},
    {"config", "list every setting with its variable, bounds, default and current value",
     corun__cmd_config, corun__usage_config},
    {"policies", "list the scheduling policies", corun__cmd_policies, corun__usage_policies},
    {"occupancy", "max active blocks per SM of a kernel shape (CUDA's occupancy rules)",
     corun__cmd_occupancy, corun__usage_occupancy},
    {"profile", "kernel profiles: recorded runs, duration-model error, intensity classes",
     corun__cmd_profile, corun__usage_profile},
    {"experiment", "run one of the papers' evaluations (FLEP, Slate, QoS, HSM) as JSON",
     corun__cmd_experiment, corun__usage_experiment},
    {"daemon", "start corund, one scheduler per GPU of the host for every program",
     corun__cmd_daemon, corun__usage_daemon},
    {"mps", "start, stop or query the NVIDIA MPS server (processes side by side on a GPU)",
     corun__cmd_mps, corun__usage_mps},
    {"run", "start a program with its class, CapSMs, priority and weight", corun__cmd_run,
     corun__usage_run},
    {"status", "what corund is doing: GPUs, clients and their jobs", corun__cmd_status,
     corun__usage_status},
    {"trace", "record what corund schedules as a Chrome trace", corun__cmd_trace,
     corun__usage_trace},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
    size_t i;

    fprintf(out,
            "usage: corun [--set NAME=VALUE]... [--log-level LEVEL] COMMAND [ARGS]\n"
            "       corun --help | --version | help [COMMAND]\n"
            "\n"
            "corun shares one NVIDIA GPU between programs with guarantees: CapSM\n"
            "reservations and quotas, preemption that loses no work, priorities.\n"
            "\n"
            "commands:\n");
    for (i = 0; i < NCOMMANDS; i++) {
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    }
    fprintf(out,
            "\n"
            "options:\n"
            "  --set NAME=VALUE   change a setting for this run (corun config lists them)\n"
            "  --log-level LEVEL  error, warn (default), info or debug\n"
            "  --version          print the version\n"
            "  -h, --help         this help\n"
            "\n"
            "Every setting is also read from its variable, CORUN_<NAME>; --set overrides\n"
            "it. `corun COMMAND --help` (or `corun help COMMAND`) lists a command's options.\n");
}

/* The command named, or NULL. */
static const corun__command *find_command(const char *name)
{
    size_t c;

    for (c = 0; c < NCOMMANDS; c++) {
        if (strcmp(name, commands[c].name) == 0) {
            return &commands[c];
        }
    }
    return NULL;
}

/* A request for help or the version is answered before anything else is
 * read, so that a bad CORUN_* variable or option does not stand in its
 * way: -h, --help or --version among the global options, or -h or --help
 * anywhere after a command's name and before a `--` (after it they are
 * another program's: corun run -- PROG --help). Returns 1 if it was one
 * (and answered). */
static int answer_help(int argc, char **argv)
{
    const corun__command *cmd;
    int i;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("corun 0.1.0\n");
            return 1;
        }
        if (strcmp(argv[i], "--set") == 0 || strcmp(argv[i], "--log-level") == 0) {
            i++; /* its value */
        }
    }
    if (i >= argc || (cmd = find_command(argv[i])) == NULL) {
        return 0;
    }
    for (i++; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            cmd->usage(stdout);
            return 1;
        }
    }
    return 0;
}

/* Reads the global options and runs the command; returns the exit code. */
static int run(int argc, char **argv)
{
    const corun__command *cmd;
    corun__cli cli;
    char why[256];
    int i, at, level;

    if (answer_help(argc, argv)) {
        return CORUN_EXIT_OK;
    }
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--set") != 0 && strcmp(argv[i], "--log-level") != 0) {
            fprintf(stderr, "corun: unknown option '%s' (corun --help lists them)\n", argv[i]);
            return CORUN_EXIT_USAGE;
        }
        if (corun__cli_value("corun", argc, argv, &i) == NULL) {
            return CORUN_EXIT_USAGE;
        }
    }
    at = i; /* the command; before it, options of one value each */
    if (at >= argc) {
        usage(stderr);
        return CORUN_EXIT_USAGE;
    }
    if (strcmp(argv[at], "help") == 0) {
        if (at + 1 >= argc) {
            usage(stdout);
            return CORUN_EXIT_OK;
        }
        if ((cmd = find_command(argv[at + 1])) == NULL) {
            fprintf(stderr, "corun: unknown command '%s'\n", argv[at + 1]);
            return CORUN_EXIT_USAGE;
        }
        cmd->usage(stdout);
        return CORUN_EXIT_OK;
    }
    if ((cmd = find_command(argv[at])) == NULL) {
        fprintf(stderr, "corun: unknown command '%s' (corun --help lists them)\n", argv[at]);
        return CORUN_EXIT_USAGE;
    }
    /* the settings: defaults, then CORUN_* variables, then the options in order */
    memset(&cli, 0, sizeof(cli));
    corun__settings_default(&cli.settings);
    if (corun__settings_load_env(&cli.settings, why, sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "corun: %s\n", why);
        return CORUN_EXIT_USAGE;
    }
    for (i = 1; i < at; i += 2) {
        if ((strcmp(argv[i], "--set") == 0
                 ? corun__cli_set(&cli, argv[i + 1])
                 : corun__cli_set_option(&cli, "corun", argv[i], "log_level", argv[i + 1])) != 0) {
            return CORUN_EXIT_USAGE;
        }
    }
    level = corun__log_parse_level(cli.settings.log_level);
    corun__log_threshold = level < 0 ? CORUN_LOG_WARN : (corun__log_level)level;
    return cmd->run(&cli, argc - at - 1, argv + at + 1);
}

/* Output lost is a failure: stdout is checked once, when it is closed, for
 * every write made to it (a full disk, /dev/full, a closed descriptor). */
int main(int argc, char **argv)
{
    corun__stdio_hold();
    return corun__stdout_finish("corun", run(argc, argv), CORUN_EXIT_FAIL);
}
