/*
 * cli_util.c — the helpers the commands share: numbers and --set, the
 * options, scenario, backend and missing kernel profiles of a scenario
 * run (demo, sim), and JSON output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/create.h"
#include "cli/cli.h"
#include "common/log.h"
#include "core/policy.h"
#include "core/profile_store.h"
#include "scenario/scenario.h"

int corun__parse_u64(const char *s, unsigned long long max, unsigned long long *out)
{
    uint64_t v;

    if (corun__parse_whole(s, &v) != 0 || v > max) {
        return -1;
    }
    *out = v;
    return 0;
}

int corun__parse_ms(const char *s, double *out)
{
    double v;

    if (corun__parse_decimal(s, &v) != 0 || !(v > 0) || v > 1e7) {
        return -1;
    }
    *out = v;
    return 0;
}

int corun__cli_set(corun__cli *cli, const char *assignment)
{
    char why[256];

    if (corun__settings_assign(&cli->settings, assignment, why, sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "corun: %s\n", why);
        return -1;
    }
    return 0;
}

const char *corun__cli_value(const char *who, int argc, char **argv, int *i)
{
    const char *opt = argv[*i];

    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: option %s needs a value\n", who, opt);
        return NULL;
    }
    if (argv[*i + 1][0] == '\0') {
        fprintf(stderr, "%s: option %s needs a value, not an empty one\n", who, opt);
        return NULL;
    }
    return argv[++*i];
}

int corun__cli_set_option(corun__cli *cli, const char *who, const char *opt, const char *setting,
                          const char *value)
{
    char why[256];
    const char *at;

    if (corun__settings_set(&cli->settings, setting, value, why, sizeof(why)) == CORUN_OK) {
        return 0;
    }
    /* "CORUN_SEED: 'x' is not ..." said of the option, naming the setting */
    at = strstr(why, ": ");
    if (at == NULL) {
        fprintf(stderr, "%s: option %s: %s\n", who, opt, why);
    } else {
        fprintf(stderr, "%s: option %s: %s (setting %.*s)\n", who, opt, at + 2, (int)(at - why),
                why);
    }
    return -1;
}

double corun__cli_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- the options of demo and sim ------------------------------------------- */

int corun__cli_set_backend(corun__cli *cli, const char *cmd, const char *val)
{
    char why[256];

    if (corun__settings_set(&cli->settings, "backend", val, why, sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "corun %s: --backend: %s\n", cmd, why);
        return -1;
    }
    return 0;
}

void corun__cli_auto_means_sim(corun__cli *cli)
{
    if (corun__backend_is_auto(cli->settings.backend)) {
        (void)corun__cli_set(cli, "backend=sim");
    }
}

/* Takes --backend B out of argv (shifting the rest down) and sets it.
 * Returns -1 on a bad value. */
static int take_backend(corun__cli *cli, const char *who, int *argc, char **argv)
{
    int i, j = 0;

    for (i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--backend") == 0) {
            const char *v = corun__cli_value(who, *argc, argv, &i);
            if (v == NULL || corun__cli_set_backend(cli, who, v) != 0) {
                return -1;
            }
            continue;
        }
        argv[j++] = argv[i];
    }
    *argc = j;
    return 0;
}

/* --systems LIST or --policy NAME: known policy names, one for --policy. */
static int parse_systems(const char *who, const char *val, int allow_systems, corun__run_opts *o)
{
    const char *p = val;

    o->nsystems = 0;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || n >= sizeof(o->systems[0]) || o->nsystems == CORUN_CLI_MAX_SYSTEMS) {
            fprintf(stderr, "%s: bad list '%s'\n", who, val);
            return -1;
        }
        memcpy(o->systems[o->nsystems], p, n);
        o->systems[o->nsystems][n] = '\0';
        if (corun__policy_find(o->systems[o->nsystems]) == NULL) {
            fprintf(stderr, "%s: unknown policy '%s' (corun policies lists them)\n", who,
                    o->systems[o->nsystems]);
            return -1;
        }
        o->nsystems++;
        if (!e) {
            break;
        }
        p = e + 1;
    }
    if (!allow_systems && o->nsystems != 1) {
        fprintf(stderr, "%s: --policy takes one name\n", who);
        return -1;
    }
    return 0;
}

/* One option a that takes the value val; returns -1 on a bad value. */
static int parse_valued(corun__cli *cli, const char *who, const char *a, const char *val,
                        corun__run_opts *o, int allow_systems)
{
    if (strcmp(a, "--scenario") == 0) {
        o->scenario = val;
    } else if (strcmp(a, "--apps") == 0) {
        o->apps = val;
    } else if (strcmp(a, "--reserve") == 0) {
        return corun__cli_set_option(cli, who, a, "reserve_capsm", val);
    } else if (strcmp(a, "--seed") == 0) {
        return corun__cli_set_option(cli, who, a, "seed", val);
    } else if (strcmp(a, "--duration-ms") == 0) {
        if (corun__parse_ms(val, &o->duration_ms) != 0) {
            fprintf(stderr, "%s: option --duration-ms: '%s' is not a decimal number in (0, 1e7]\n",
                    who, val);
            return -1;
        }
    } else {
        return parse_systems(who, val, allow_systems, o);
    }
    return 0;
}

int corun__cli_parse_run_opts(corun__cli *cli, const char *cmd, int argc, char **argv,
                              corun__run_opts *o, int allow_systems)
{
    char who[32];
    int i;

    snprintf(who, sizeof(who), "corun %s", cmd);
    if (take_backend(cli, who, &argc, argv) != 0) {
        return -1;
    }
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *val;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->quiet = 1;
            continue;
        }
        if (strcmp(a, "--no-train") == 0) {
            o->no_train = 1;
            continue;
        }
        if (strcmp(a, "--train") == 0) {
            o->no_train = 0;
            continue;
        }
        if (strcmp(a, "--scenario") != 0 && strcmp(a, "--reserve") != 0 &&
            strcmp(a, "--seed") != 0 && strcmp(a, "--duration-ms") != 0 &&
            strcmp(a, "--apps") != 0 &&
            strcmp(a, allow_systems ? "--systems" : "--policy") != 0) {
            fprintf(stderr, "%s: unknown option '%s' (%s --help lists them)\n", who, a, who);
            return -1;
        }
        if ((val = corun__cli_value(who, argc, argv, &i)) == NULL ||
            parse_valued(cli, who, a, val, o, allow_systems) != 0) {
            return -1;
        }
    }
    return 0;
}

/* --- the scenario and backend of a run ------------------------------------- */

/* Keeps only the applications named in the comma-separated list, in its
 * order; a name given twice runs two copies of the application (the second
 * named NAME#2), for pairs of a kernel with itself. */
static int select_apps(corun__scenario *sc, const char *list)
{
    corun__app *picked = malloc(sizeof(sc->apps));
    const char *p = list;
    size_t n = 0, i, j;

    if (picked == NULL) {
        return -1;
    }
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        for (i = 0; i < sc->napps; i++) {
            if (strlen(sc->apps[i].name) == len && strncmp(sc->apps[i].name, p, len) == 0) {
                break;
            }
        }
        if (i == sc->napps || n == CORUN_SCENARIO_MAX_APPS) {
            fprintf(stderr, "corun: --apps: %s '%.*s' in scenario '%s'\n",
                    i == sc->napps ? "no application" : "too many applications", (int)len, p,
                    sc->name);
            free(picked);
            return -1;
        }
        picked[n] = sc->apps[i];
        for (j = 0; j < n; j++) {
            if (strcmp(picked[j].name, picked[n].name) == 0) {
                char name[64];
                snprintf(name, sizeof(name), "%.60s#%zu", sc->apps[i].name, n + 1);
                snprintf(picked[n].name, sizeof(picked[n].name), "%s", name);
                break;
            }
        }
        n++;
        if (!e) {
            break;
        }
        p = e + 1;
    }
    if (n == 0) {
        fprintf(stderr, "corun: --apps needs at least one application\n");
        free(picked);
        return -1;
    }
    memcpy(sc->apps, picked, n * sizeof(*picked));
    sc->napps = n;
    free(picked);
    return 0;
}

int corun__cli_scenario_load(const corun__cli *cli, const char *who, const char *name,
                             corun__scenario *sc)
{
    char path[4096], why[1024];

    if (corun__scenario_find(name, &cli->settings, path, sizeof(path), why, sizeof(why)) !=
            CORUN_OK ||
        corun__scenario_load(path, sc, why, sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "%s: %s\n", who, why);
        return -1;
    }
    CORUN_LOG(CORUN_LOG_INFO, "scenario", "'%s' is %s", name, path);
    return 0;
}

int corun__cli_load_run_scenario(const corun__cli *cli, const corun__run_opts *o,
                                 corun__scenario *sc)
{
    char why[512];

    if (o->scenario != NULL) {
        if (corun__cli_scenario_load(cli, "corun", o->scenario, sc) != 0) {
            return -1;
        }
    } else if (corun__scenario_parse(corun__scenario_default_text(), "(built-in ls-batch)", sc,
                                     why, sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "corun: %s\n", why);
        return -1;
    }
    if (o->apps != NULL && select_apps(sc, o->apps) != 0) {
        return -1;
    }
    if (o->duration_ms > 0) {
        sc->duration_ns = o->duration_ms * 1e6;
    }
    if (corun__settings_given(&cli->settings, "reserve_capsm")) {
        sc->reserve_capsm = (uint32_t)cli->settings.reserve_capsm;
        sc->has_reserve = 1;
    }
    if (sc->has_reserve && sc->reserve_capsm > sc->gpu.sm_count) {
        fprintf(stderr, "corun: a reservation of %u CapSMs is larger than the GPU (%u SMs)\n",
                sc->reserve_capsm, sc->gpu.sm_count);
        return -1;
    }
    return 0;
}

int corun__cli_resolve_backend(const corun__cli *cli, char *name, size_t len, unsigned *caps)
{
    corun__backend_pick pick;
    char why[512] = "";

    if (corun__backend_resolve(cli->settings.backend, cli->settings.device, &pick, why,
                               sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "corun: backend %s: %s\n", cli->settings.backend, why);
        return -1;
    }
    snprintf(name, len, "%s", pick.name);
    if (caps != NULL) {
        *caps = pick.caps;
    }
    if (pick.fell_back) {
        CORUN_LOG(CORUN_LOG_INFO, "backend", "no usable GPU (%s); using the simulator", why);
    }
    return 0;
}

int corun__cli_make_backend(void *vctx, const corun__scenario *sc, uint64_t seed,
                            corun__backend **out, char *why, size_t why_len)
{
    const corun__cli_maker *m = vctx;
    return corun__backend_create(m->backend, &m->cli->settings, &sc->gpu, seed, out, why, why_len);
}

void corun__cli_run_env(corun__run_env *env, corun__cli_maker *mk)
{
    memset(env, 0, sizeof(*env));
    env->make_backend = corun__cli_make_backend;
    env->make_ctx = mk;
    env->settings = mk->cli->settings;
}

int corun__cli_store_path(const corun__cli *cli, char *path, size_t len)
{
    char why[512] = "";
    int rc = corun__pstore_path(cli->settings.profile_path, path, len, why, sizeof(why));

    if (rc == CORUN_ENOENT && why[0] == '\0') {
        fprintf(stderr, "corun: no profile store (CORUN_PROFILE_PATH is '%s')\n",
                cli->settings.profile_path);
        return -1;
    }
    if (rc != CORUN_OK) {
        fprintf(stderr, "corun: %s\n", why);
        return -1;
    }
    return 0;
}

/* Training progress, unless *ctx (quiet). */
static void log_line(void *ctx, const char *line)
{
    if (!*(const int *)ctx) {
        fprintf(stderr, "corun: %s\n", line);
    }
}

int corun__cli_ensure_profiles(corun__cli *cli, const corun__scenario *sc, const char *backend,
                               unsigned needs, int quiet)
{
    corun__run_env env;
    corun__cli_maker mk = {cli, backend};
    char path[4096], why[1024] = "";

    if (needs == 0) {
        return 0;
    }
    if (corun__cli_store_path(cli, path, sizeof(path)) != 0) {
        fprintf(stderr, "corun: the policy runs without kernel profiles\n");
        return 0;
    }
    corun__cli_run_env(&env, &mk);
    if (corun__scenario_ensure_profiles(sc, &env, backend, path, needs, log_line, &quiet, why,
                                        sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "corun: profiling failed: %s\n", why);
        return -1;
    }
    return 0;
}

int corun__cli_prepare_run(corun__cli *cli, const corun__run_opts *o, corun__scenario **out,
                           char *backend, size_t len, corun__cli_maker *mk, corun__run_env *env)
{
    corun__scenario *sc = malloc(sizeof(*sc));
    unsigned needs = 0, caps = 0;
    char why[512];
    size_t i;
    int rc = CORUN_EXIT_FAIL;

    *out = NULL;
    if (sc == NULL) {
        return CORUN_EXIT_FAIL;
    }
    if (corun__cli_load_run_scenario(cli, o, sc) != 0) {
        rc = CORUN_EXIT_USAGE;
        goto out_free_sc;
    }
    if (corun__cli_resolve_backend(cli, backend, len, &caps) != 0) {
        goto out_free_sc;
    }
    for (i = 0; i < o->nsystems; i++) {
        const corun__policy_ops *pol = corun__policy_find(o->systems[i]);
        if (corun__scenario_check(sc, &cli->settings, pol, -1, 0,
                                  (caps & CORUN_BE_VIRTUAL_TIME) != 0, why,
                                  sizeof(why)) != CORUN_OK) {
            fprintf(stderr, "corun: %s\n", why); /* before any run (or profiling) starts */
            rc = CORUN_EXIT_USAGE;
            goto out_free_sc;
        }
        needs |= pol->needs;
    }
    if (!o->no_train && corun__cli_ensure_profiles(cli, sc, backend, needs, o->quiet) != 0) {
        goto out_free_sc;
    }
    mk->cli = cli;
    mk->backend = backend;
    corun__cli_run_env(env, mk);
    *out = sc;
    return CORUN_EXIT_OK;
out_free_sc:
    free(sc);
    return rc;
}

/* --- output ---------------------------------------------------------------- */

void corun__cli_print_json(json_t *v)
{
    char *text = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(6));

    if (text != NULL) {
        printf("%s\n", text);
    }
    free(text);
    json_decref(v);
}
