/*
 * cli.h — what the command line's commands share: the settings of this run,
 * the command table's entries, and the helpers of cli_util.c (numbers and
 * options, the scenario and backend of a run, JSON output).
 *
 * The commands print; every helper here that can fail prints why to stderr
 * and returns -1, so a command only picks its exit code.
 */
#ifndef CORUN_CLI_H
#define CORUN_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "core/settings.h"

struct corun__scenario;
struct corun__backend;
struct corun__run_env;

typedef struct corun__cli {
    corun__settings settings;  /* defaults, then CORUN_* variables, then --set */
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
    CORUN_EXIT_FAIL = 1,   /* the command ran and failed, or its output was lost (main.c) */
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
int corun__cmd_daemon(corun__cli *cli, int argc, char **argv);
void corun__usage_daemon(FILE *out);
int corun__cmd_mps(corun__cli *cli, int argc, char **argv);
void corun__usage_mps(FILE *out);
int corun__cmd_run(corun__cli *cli, int argc, char **argv);
void corun__usage_run(FILE *out);
int corun__cmd_status(corun__cli *cli, int argc, char **argv);
void corun__usage_status(FILE *out);
int corun__cmd_trace(corun__cli *cli, int argc, char **argv);
void corun__usage_trace(FILE *out);

/* --- numbers and settings (cli_util.c) ------------------------------------ */

/* Parses a whole number in decimal digits no larger than max
 * (corun__parse_whole); returns 0 on success. */
int corun__parse_u64(const char *s, unsigned long long max, unsigned long long *out);
/* Parses a --duration-ms value: a decimal number (corun__parse_decimal) in
 * (0, 1e7]; returns 0 on success. */
int corun__parse_ms(const char *s, double *out);
/* Applies a --set NAME=VALUE argument; prints the error and returns -1 on failure. */
int corun__cli_set(corun__cli *cli, const char *assignment);
/* The value of the option argv[*i]: the next argument, which may not be
 * empty; advances *i to it. Returns NULL after printing "WHO: option X
 * needs a value" when there is none. */
const char *corun__cli_value(const char *who, int argc, char **argv, int *i);
/* Option opt's value given to a setting (by name); on a bad value prints
 * "WHO: option OPT: why (setting CORUN_X)" and returns -1. */
int corun__cli_set_option(corun__cli *cli, const char *who, const char *opt, const char *setting,
                          const char *value);
/* Seconds on the monotonic clock, for progress and elapsed times. */
double corun__cli_now_s(void);

/* --- the options, scenario and backend of demo and sim (cli_util.c) ------- */

#define CORUN_CLI_MAX_SYSTEMS 8

typedef struct corun__run_opts {
    const char *scenario;     /* --scenario: a name or file, NULL for the built-in ls-batch */
    const char *apps;         /* --apps: the applications to keep, or NULL for all */
    char systems[CORUN_CLI_MAX_SYSTEMS][32];  /* --systems (demo) or --policy (sim) */
    size_t nsystems;
    int json;
    int quiet;
    int no_train;             /* do not record missing kernel profiles first */
    double duration_ms;       /* 0 = the scenario's */
} corun__run_opts;

/* Parses the options demo and sim share into *o (which holds the defaults);
 * --systems LIST if allow_systems, else --policy NAME. --backend (taken
 * first, wherever it stands, so it applies to everything), --reserve and
 * --seed go to the settings. May reorder argv. Returns -1 on a bad command
 * line. */
int corun__cli_parse_run_opts(corun__cli *cli, const char *cmd, int argc, char **argv,
                              corun__run_opts *o, int allow_systems);
/* Finds the scenario `name` (a path, or a name looked up as
 * corun__scenario_find says) and loads it into *sc. Returns -1 after
 * printing "who: why" if it is missing or bad. */
int corun__cli_scenario_load(const corun__cli *cli, const char *who, const char *name,
                             struct corun__scenario *sc);
/* Loads o->scenario (or the built-in ls-batch) into *sc and applies --apps,
 * --duration-ms and a reservation given as a setting (which overrides the
 * scenario's). Returns -1 on a missing or bad file or a bad override. */
int corun__cli_load_run_scenario(const corun__cli *cli, const corun__run_opts *o,
                                 struct corun__scenario *sc);
/* Resolves the backend setting ("auto" included) once
 * (corun__backend_resolve), so every run of a command uses the same
 * backend; writes its name ("cuda", "sim") and, unless caps is NULL, its
 * capabilities (CORUN_BE_*). Logs why "auto" fell back to the simulator.
 * Returns -1 after printing why if the backend named cannot be used here
 * (cuda without a usable GPU). */
int corun__cli_resolve_backend(const corun__cli *cli, char *name, size_t len, unsigned *caps);
/* Sets the backend setting from cmd's --backend VAL, checked against the
 * settings table (auto, cuda, sim). Returns -1 after printing why. */
int corun__cli_set_backend(corun__cli *cli, const char *cmd, const char *val);
/* For commands that simulate unless told otherwise (sim, profile): a
 * backend setting of "auto" (the default, or CORUN_BACKEND) becomes sim.
 * Called before the command reads its --backend, so that an explicit
 * --backend auto still picks the GPU where one is usable. */
void corun__cli_auto_means_sim(corun__cli *cli);

/* The CLI's backend maker for scenario runs (corun__run_env.make_backend):
 * ctx is a corun__cli_maker naming the backend, made with the CLI's
 * settings. */
typedef struct corun__cli_maker {
    const corun__cli *cli;
    const char *backend;
} corun__cli_maker;
int corun__cli_make_backend(void *ctx, const struct corun__scenario *sc, uint64_t seed,
                            struct corun__backend **out, char *why, size_t why_len);
/* A run environment that makes mk's backend with the CLI's settings and
 * reports no progress. mk must outlive it. */
void corun__cli_run_env(struct corun__run_env *env, corun__cli_maker *mk);

/* What demo and sim do before their runs: loads the scenario into *sc, a
 * new allocation the caller frees (corun__cli_load_run_scenario), resolves
 * the backend into backend (len bytes), checks the run
 * (corun__scenario_check: an application that never arrives, kernels one
 * of o's policies would never run, a run too large to simulate), records the kernel profiles o's
 * policies lack unless --no-train, and makes *env with *mk, which names that
 * backend. Returns CORUN_EXIT_OK, or the exit code after printing why (*sc
 * is then NULL). */
int corun__cli_prepare_run(corun__cli *cli, const corun__run_opts *o, struct corun__scenario **sc,
                           char *backend, size_t len, corun__cli_maker *mk,
                           struct corun__run_env *env);
/* `corun demo --processes` (demo_processes.c): the scenario's applications
 * "ls" and "batch" as two processes of this program, each system in turn,
 * on backend for duration_ms each; corund keeps ls_sms SMs for the LS one.
 * keep: a folder for the runs' reports and logs, or NULL for a temporary
 * one. Returns an exit code after printing why on failure. */
int corun__demo_processes(corun__cli *cli, const corun__run_opts *o, const char *backend,
                          double duration_ms, uint32_t ls_sms, const char *keep);

/* The profile store's file from the settings (CORUN_PROFILE_PATH) into
 * path; returns -1 after printing why when there is none. */
int corun__cli_store_path(const corun__cli *cli, char *path, size_t len);
/* Records, for every kernel of the scenario, what a policy with these needs
 * (CORUN_POLICY_NEEDS_*) lacks in the profile store on this backend: solo
 * runs for a duration model, an intensity profile. Progress goes to stderr
 * unless quiet. Returns 0, or -1 after printing why. */
int corun__cli_ensure_profiles(corun__cli *cli, const struct corun__scenario *sc,
                               const char *backend, unsigned needs, int quiet);

/* --- corund's observers: status and trace (cmd_status.c) ----------------- */

/* What an observer does with one DATA piece of the answer: 0 to go on, or
 * -1 after printing why, which ends the request. */
typedef int (*corun__cli_piece_fn)(void *ctx, const char *data, size_t len);

/* One observer request to the corund listening at socket_path: connects
 * (corun__proto_connect), sends type (CORUN_MSG_STATUS, or CORUN_MSG_TRACE
 * of trace_ms milliseconds) as seq 1 with no HELLO, prints "WHO: sent_note"
 * to stderr once it is sent (unless sent_note is NULL), hands each DATA
 * piece to piece in order, and returns 0 at the REPLY OK that ends the
 * answer. The first message may take first_wait_ms (a trace records
 * first), each later one 30 s. Returns -1 after printing "WHO: why": no
 * daemon there ("no corund at PATH"), the daemon's error (its REPLY's
 * why), a connection closed or broken, a message out of turn, or piece's
 * failure (which printed its own). */
int corun__cli_observe(const char *who, const char *socket_path, unsigned type, uint32_t trace_ms,
                       const char *sent_note, int first_wait_ms, corun__cli_piece_fn piece,
                       void *ctx);

/* Prints corund's status (the JSON of a STATUS answer) to out
 * as a table per GPU: its clients, and under each its jobs. Trusts nothing
 * in root: a field missing or of the wrong type prints as "?", text is
 * printed with anything but printable ASCII as '?'. Never fails. */
void corun__cli_status_table(const json_t *root, FILE *out);

/* --- output (cli_util.c) -------------------------------------------------- */

/* Prints v on stdout, indented, six significant digits, and drops it. */
void corun__cli_print_json(json_t *v);

#endif
