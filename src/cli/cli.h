/* cli.h — what the command-line's commands share. */
#ifndef CORUN_CLI_H
#define CORUN_CLI_H

#include <stdio.h>

#include "core/settings.h"

typedef struct corun__cli {
    corun__settings settings;
    int reserve_set;   /* --reserve or CORUN_RESERVE_CAPSM given: overrides scenarios */
} corun__cli;

typedef struct corun__command {
    const char *name;
    const char *summary;
    int (*run)(corun__cli *cli, int argc, char **argv);
    void (*usage)(FILE *out);
} corun__command;

/* Exit codes of the command line. */
enum {
    CORUN_EXIT_OK = 0,
    CORUN_EXIT_FAIL = 1,   /* the command ran and failed */
    CORUN_EXIT_USAGE = 2   /* bad command line or bad input file */
};

int corun__cmd_demo(corun__cli *cli, int argc, char **argv);
void corun__usage_demo(FILE *out);
int corun__cmd_sim(corun__cli *cli, int argc, char **argv);
void corun__usage_sim(FILE *out);
int corun__cmd_config(corun__cli *cli, int argc, char **argv);
void corun__usage_config(FILE *out);
int corun__cmd_policies(corun__cli *cli, int argc, char **argv);
void corun__usage_policies(FILE *out);
int corun__cmd_occupancy(corun__cli *cli, int argc, char **argv);
void corun__usage_occupancy(FILE *out);
int corun__cmd_profile(corun__cli *cli, int argc, char **argv);
void corun__usage_profile(FILE *out);
int corun__cmd_experiment(corun__cli *cli, int argc, char **argv);
void corun__usage_experiment(FILE *out);

struct corun__scenario;
/* Records, for every kernel of the scenario, what a policy with these needs
 * (CORUN_POLICY_NEEDS_*) lacks in the profile store on this backend: solo
 * runs for a duration model, an intensity profile. Progress goes to stderr
 * unless quiet. Returns 0, or -1 after printing why. */
int corun__cli_ensure_profiles(corun__cli *cli, const struct corun__scenario *sc,
                               const char *backend, unsigned needs, int quiet);

/* The CLI's backend maker for scenario runs (corun__run_env.make_backend):
 * ctx is a corun__cli_maker naming the backend, made with the CLI's
 * settings. */
typedef struct corun__cli_maker {
    const corun__cli *cli;
    const char *backend;
} corun__cli_maker;
struct corun__backend;
int corun__cli_make_backend(void *ctx, const struct corun__scenario *sc, uint64_t seed,
                            struct corun__backend **out, char *why, size_t why_len);

/* Parses a whole non-negative number; returns 0 on success. */
int corun__parse_u64(const char *s, unsigned long long max, unsigned long long *out);
/* Applies a --set NAME=VALUE argument; prints the error and returns non-zero on failure. */
int corun__cli_set(corun__cli *cli, const char *assignment);

#endif
