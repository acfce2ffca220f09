/*
 * cmd_run.c — the commands that run scenarios: `corun demo` (the LS+batch
 * comparison of SMGuard §6.2) and `corun sim` (one scenario, one policy).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "backends/create.h"
#include "cli/cli.h"
#include "cli/log.h"
#include "core/policy.h"
#include "scenario/scenario.h"

#define MAX_SYSTEMS 8

typedef struct run_opts {
    const char *scenario;     /* file, or NULL for the default */
    const char *apps;         /* --apps: the applications to keep, or NULL for all */
    char systems[MAX_SYSTEMS][32];
    size_t nsystems;
    int json;
    int quiet;
    int no_train;             /* do not record missing kernel profiles first */
    double duration_ms;       /* 0 = the scenario's */
} run_opts;

/* Progress on a terminal: one line rewritten in place. */
static void progress(void *ctx, double f)
{
    const char *label = ctx;
    fprintf(stderr, "\r  %-10s %3.0f%%", label, f * 100);
    fflush(stderr);
}

/* Progress elsewhere (a log): one line per run. */
static void progress_log(const char *label)
{
    fprintf(stderr, "  running %s\n", label);
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

/* Loads the scenario and applies the command-line overrides. */
static int load_scenario(const corun__cli *cli, const run_opts *o, corun__scenario *sc)
{
    char why[512];
    int rc;

    if (o->scenario != NULL) {
        rc = corun__scenario_load(o->scenario, sc, why, sizeof(why));
    } else {
        rc = corun__scenario_parse(corun__scenario_default_text(), "(built-in ls-batch)", sc, why,
                                   sizeof(why));
    }
    if (rc != CORUN_OK) {
        fprintf(stderr, "corun: %s\n", why);
        return -1;
    }
    if (o->apps != NULL && select_apps(sc, o->apps) != 0) {
        return -1;
    }
    if (o->duration_ms > 0) {
        sc->duration_ns = o->duration_ms * 1e6;
    }
    if (cli->reserve_set) {
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

/* Common options of demo and sim; returns -1 on a bad command line. */
static int parse_opts(corun__cli *cli, const char *cmd, int argc, char **argv, run_opts *o,
                      int allow_systems)
{
    unsigned long long v;
    int i;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
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
        if (strcmp(a, "--scenario") != 0 && strcmp(a, "--reserve") != 0 &&
            strcmp(a, "--seed") != 0 && strcmp(a, "--duration-ms") != 0 &&
            strcmp(a, "--apps") != 0 &&
            strcmp(a, allow_systems ? "--systems" : "--policy") != 0) {
            fprintf(stderr, "corun %s: unknown option '%s' (corun %s --help lists them)\n", cmd, a,
                    cmd);
            return -1;
        }
        if (val == NULL) {
            fprintf(stderr, "corun %s: '%s' needs a value\n", cmd, a);
            return -1;
        }
        if (strcmp(a, "--scenario") == 0) {
            o->scenario = val;
        } else if (strcmp(a, "--apps") == 0) {
            o->apps = val;
        } else if (strcmp(a, "--reserve") == 0) {
            char set[64];
            if (corun__parse_u64(val, 4096, &v) != 0) {
                fprintf(stderr, "corun %s: --reserve needs a whole number of CapSMs (got '%s')\n",
                        cmd, val);
                return -1;
            }
            snprintf(set, sizeof(set), "reserve_capsm=%llu", v);
            if (corun__cli_set(cli, set) != 0) {
                return -1;
            }
        } else if (strcmp(a, "--seed") == 0) {
            char set[64];
            snprintf(set, sizeof(set), "seed=%s", val);
            if (corun__cli_set(cli, set) != 0) {
                return -1;
            }
        } else if (strcmp(a, "--duration-ms") == 0) {
            char *end = NULL;
            o->duration_ms = strtod(val, &end);
            if (end == val || *end != '\0' || !(o->duration_ms > 0) || o->duration_ms > 1e7) {
                fprintf(stderr, "corun %s: --duration-ms needs a number in (0, 1e7] (got '%s')\n",
                        cmd, val);
                return -1;
            }
        } else if ((strcmp(a, "--systems") == 0 && allow_systems) ||
                   (strcmp(a, "--policy") == 0 && !allow_systems)) {
            const char *p = val;
            o->nsystems = 0;
            while (*p) {
                const char *e = strchr(p, ',');
                size_t n = e ? (size_t)(e - p) : strlen(p);
                if (n == 0 || n >= sizeof(o->systems[0]) || o->nsystems == MAX_SYSTEMS) {
                    fprintf(stderr, "corun %s: bad list '%s'\n", cmd, val);
                    return -1;
                }
                memcpy(o->systems[o->nsystems], p, n);
                o->systems[o->nsystems][n] = '\0';
                if (corun__policy_find(o->systems[o->nsystems]) == NULL) {
                    fprintf(stderr, "corun %s: unknown policy '%s' (corun policies lists them)\n",
                            cmd, o->systems[o->nsystems]);
                    return -1;
                }
                o->nsystems++;
                if (!e) {
                    break;
                }
                p = e + 1;
            }
            if (!allow_systems && o->nsystems != 1) {
                fprintf(stderr, "corun %s: --policy takes one name\n", cmd);
                return -1;
            }
        } else {
            fprintf(stderr, "corun %s: unknown option '%s' (corun %s --help lists them)\n", cmd, a,
                    cmd);
            return -1;
        }
        i++;
    }
    return 0;
}

/* --backend NAME is parsed before the others so the setting applies. */
static int take_backend(corun__cli *cli, const char *cmd, int *argc, char **argv)
{
    int i, j = 0;

    for (i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--backend") == 0) {
            char set[96];
            if (i + 1 >= *argc) {
                fprintf(stderr, "corun %s: --backend needs auto, cuda or sim\n", cmd);
                return -1;
            }
            snprintf(set, sizeof(set), "backend=%s", argv[++i]);
            if (corun__cli_set(cli, set) != 0) {
                return -1;
            }
            continue;
        }
        argv[j++] = argv[i];
    }
    *argc = j;
    return 0;
}

/* Resolves "auto" once, so every run of a command uses the same backend. */
static int resolve_backend(const corun__cli *cli, const corun__scenario *sc, char *name,
                           size_t len)
{
    corun__backend *be = NULL;
    char why[512] = "";
    int rc = corun__backend_create(cli->settings.backend, &cli->settings, &sc->gpu, 1, &be, why,
                                   sizeof(why));

    if (rc != CORUN_OK) {
        fprintf(stderr, "corun: %s\n", why);
        return -1;
    }
    snprintf(name, len, "%s", be->ops->name);
    if (strcmp(cli->settings.backend, "auto") == 0 && strcmp(name, "sim") == 0) {
        CORUN_LOG(CORUN_LOG_INFO, "backend", "no usable GPU (%s); using the simulator",
                  why[0] ? why : "built without CUDA");
    }
    be->ops->destroy(be);
    return 0;
}

static void print_row_json(json_t *arr, const corun__demo_row *r)
{
    json_t *o = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "system", r->system,
                          "ls_p50_norm", r->ls_p50_norm, "ls_p99_norm", r->ls_p99_norm,
                          "batch_norm", r->batch_norm, "antt", r->antt, "stp", r->stp, "fairness",
                          r->fairness, "ls_count", (json_int_t)r->ls_count, "batch_count",
                          (json_int_t)r->batch_count);
    json_array_append_new(arr, o);
}

void corun__usage_demo(FILE *out)
{
    fprintf(out,
            "usage: corun demo [--scenario FILE] [--systems LIST] [--reserve N] [--backend B]\n"
            "                  [--seed N] [--duration-ms MS] [--json] [--quiet]\n"
            "\n"
            "Runs an LS+batch scenario (default: SMGuard 6.2 — a batch kernel with long\n"
            "block-tasks in a loop, an LS kernel arriving at random intervals) once per\n"
            "system, plus each application alone, and prints LS latency p50/p99 and\n"
            "batch throughput normalised to solo, ANTT and STP.\n"
            "\n"
            "  --scenario FILE   scenario file (docs/scenarios.md); default: built-in\n"
            "                    scenarios/ls-batch.json\n"
            "  --apps LIST       run only these applications of the scenario\n"
            "  --systems LIST    comma-separated policies (default mps,priority,smguard)\n"
            "  --reserve N       smguard: CapSMs reserved for LS kernels (default: the\n"
            "                    scenario's, else CORUN_RESERVE_CAPSM = 8); batch\n"
            "                    kernels run on the other SMs (CORUN_SMGUARD_BIND=1)\n"
            "  --backend B       auto (GPU if usable, else simulator), cuda or sim\n"
            "  --seed N          random seed (default: the scenario's, else CORUN_SEED)\n"
            "  --duration-ms MS  how long applications keep submitting kernels\n"
            "  --json            print an array of objects with keys system, ls_p50_norm,\n"
            "                    ls_p99_norm, batch_norm, antt, stp (and fairness,\n"
            "                    ls_count, batch_count)\n"
            "  --no-train        do not record the kernel profiles a FLEP or Slate policy\n"
            "                    lacks (see corun profile) before the runs\n"
            "  --quiet           no progress on stderr\n");
}

int corun__cmd_demo(corun__cli *cli, int argc, char **argv)
{
    run_opts o;
    corun__scenario *sc;
    corun__run_env env;
    corun__solo solo;
    corun__demo_row rows[MAX_SYSTEMS];
    corun__cli_maker mk;
    char backend[16], why[512] = "";
    size_t i;
    int rc = CORUN_EXIT_FAIL;
    double t;

    memset(&o, 0, sizeof(o));
    snprintf(o.systems[0], sizeof(o.systems[0]), "mps");
    snprintf(o.systems[1], sizeof(o.systems[1]), "priority");
    snprintf(o.systems[2], sizeof(o.systems[2]), "smguard");
    o.nsystems = 3;
    if (take_backend(cli, "demo", &argc, argv) != 0 || parse_opts(cli, "demo", argc, argv, &o, 1) != 0) {
        return CORUN_EXIT_USAGE;
    }
    sc = malloc(sizeof(*sc));
    if (sc == NULL) {
        return CORUN_EXIT_FAIL;
    }
    if (load_scenario(cli, &o, sc) != 0) {
        rc = CORUN_EXIT_USAGE;
        goto out_free_sc;
    }
    if (resolve_backend(cli, sc, backend, sizeof(backend)) != 0) {
        goto out_free_sc;
    }
    if (!o.no_train) {
        unsigned needs = 0;
        for (i = 0; i < o.nsystems; i++) {
            needs |= corun__policy_find(o.systems[i])->needs;
        }
        if (corun__cli_ensure_profiles(cli, sc, backend, needs, o.quiet) != 0) {
            goto out_free_sc;
        }
    }
    mk.cli = cli;
    mk.backend = backend;
    memset(&env, 0, sizeof(env));
    env.make_backend = corun__cli_make_backend;
    env.make_ctx = &mk;
    env.settings = cli->settings;
    int tty = isatty(STDERR_FILENO);
    if (!o.quiet) {
        fprintf(stderr, "corun demo: scenario '%s' on %s, %.0f ms per run\n", sc->name, backend,
                sc->duration_ns * 1e-6);
        if (tty) {
            env.progress = progress;
        } else {
            progress_log("each application alone");
        }
    }
    t = wall_s();
    env.progress_ctx = (void *)"solo";
    if (corun__scenario_solo(sc, &env, &solo, why, sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "%scorun demo: %s\n", o.quiet ? "" : "\n", why);
        rc = strstr(why, "threads") || strstr(why, "registers") || strstr(why, "shared")
                 ? CORUN_EXIT_USAGE
                 : CORUN_EXIT_FAIL;
        goto out_free_sc;
    }
    for (i = 0; i < o.nsystems; i++) {
        corun__run_result r;
        env.progress_ctx = o.systems[i];
        if (!o.quiet && !tty) {
            progress_log(o.systems[i]);
        }
        if (corun__scenario_run(sc, &env, o.systems[i], -1, 0, &r, why, sizeof(why)) != CORUN_OK) {
            fprintf(stderr, "%scorun demo: %s: %s\n", o.quiet ? "" : "\n", o.systems[i], why);
            goto out_free_sc;
        }
        if (corun__demo_row_calc(sc, &solo, &r, &rows[i]) != CORUN_OK) {
            fprintf(stderr, "corun demo: %s: an application completed no kernel\n", o.systems[i]);
            corun__run_result_free(&r);
            goto out_free_sc;
        }
        corun__run_result_free(&r);
    }
    if (!o.quiet) {
        fprintf(stderr, "%s  done in %.1f s%20s\n", tty ? "\r" : "", wall_s() - t, "");
    }
    if (o.json) {
        json_t *arr = json_array();
        char *text;
        for (i = 0; i < o.nsystems; i++) {
            print_row_json(arr, &rows[i]);
        }
        text = json_dumps(arr, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        printf("%s\n", text);
        free(text);
        json_decref(arr);
    } else {
        printf("scenario %s, backend %s, reserve %u CapSMs (smguard)\n", sc->name, backend,
               sc->has_reserve ? sc->reserve_capsm : (unsigned)cli->settings.reserve_capsm);
        printf("%-10s %12s %12s %11s %7s %7s %6s %6s\n", "system", "ls_p50_norm", "ls_p99_norm",
               "batch_norm", "antt", "stp", "ls_n", "bat_n");
        for (i = 0; i < o.nsystems; i++) {
            printf("%-10s %12.2f %12.2f %11.3f %7.2f %7.3f %6zu %6zu\n", rows[i].system,
                   rows[i].ls_p50_norm, rows[i].ls_p99_norm, rows[i].batch_norm, rows[i].antt,
                   rows[i].stp, rows[i].ls_count, rows[i].batch_count);
        }
        printf("(LS latency normalised to the LS kernel alone; batch throughput to the batch\n"
               " loop alone; ANTT lower is better, STP higher is better)\n");
    }
    rc = CORUN_EXIT_OK;
out_free_sc:
    free(sc);
    return rc;
}

void corun__usage_sim(FILE *out)
{
    fprintf(out,
            "usage: corun sim --scenario FILE --policy NAME [--apps LIST] [--backend B]\n"
            "                 [--reserve N] [--seed N] [--duration-ms MS] [--no-train]\n"
            "                 [--json] [--quiet]\n"
            "\n"
            "Runs one scenario under one policy (default backend: sim), after running each\n"
            "application alone under plain dispatch for its solo reference, and reports\n"
            "per application: kernels completed, turnaround (mean, p50, p99), NTT, mean\n"
            "waiting time and GPU share; over all applications: ANTT, STP, fairness and\n"
            "throughput. Definitions: docs/scenarios.md. Policies that need kernel\n"
            "profiles (flep-hpf: duration models; slate: intensity classes) get what the\n"
            "profile store lacks recorded first (see corun profile) unless --no-train.\n"
            "\n"
            "  --apps LIST  run only these applications of the scenario (comma-separated,\n"
            "           in this order; a name twice runs two copies), e.g. one pair of a\n"
            "           scenarios/*-pairs.json file\n"
            "  --json   one object: scenario, policy, backend, span_us, antt, stp,\n"
            "           fairness, throughput, and apps[] with per-application results and\n"
            "           kernels[], one record per completed kernel (submit_us, start_us,\n"
            "           end_us, turnaround_us, waiting_us, run_us, ntt, gpu_share,\n"
            "           preemptions)\n");
}

/* Per-application and whole-run results derived from a run and its solo
 * references; definitions in docs/scenarios.md. */
typedef struct app_view {
    double waiting_mean_ns;  /* mean of turnaround - time on the GPU */
    double gpu_share;        /* CapSM-time over the GPU's, in the arrival window */
    double work_rate;        /* block-tasks per second in the arrival window / alone */
} app_view;

static void view_app(const corun__scenario *sc, const corun__run_result *r, size_t i,
                     const corun__solo *solo, app_view *v)
{
    const corun__app_result *a = &r->apps[i];
    size_t j;
    double wait = 0;

    memset(v, 0, sizeof(*v));
    for (j = 0; j < a->completed; j++) {
        wait += a->turnaround_ns[j] - a->kernels[j].run_ns;
    }
    v->waiting_mean_ns = a->completed ? wait / (double)a->completed : 0;
    v->gpu_share = r->window_ns > 0 ? a->window_capsm_ns / ((double)r->sm_count * r->window_ns) : 0;
    {
        const corun_dim3 *g = &sc->apps[i].kernel.grid;
        double solo_tasks_per_ns = solo->rate_per_s[i] * 1e-9 * (double)g->x * g->y * g->z;
        v->work_rate = solo_tasks_per_ns > 0 && r->window_ns > 0
                           ? a->window_tasks / r->window_ns / solo_tasks_per_ns
                           : 0;
    }
}

static json_t *kernels_json(const corun__run_result *r, const corun__app_result *a,
                            double solo_mean_ns)
{
    json_t *arr = json_array();
    size_t j;

    for (j = 0; j < a->completed; j++) {
        const corun__kernel_rec *k = &a->kernels[j];
        double turn = a->turnaround_ns[j];
        json_array_append_new(
            arr, json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I}", "submit_us",
                           k->submit_ns * 1e-3, "start_us", k->start_ns * 1e-3, "end_us",
                           k->end_ns * 1e-3, "turnaround_us", turn * 1e-3, "waiting_us",
                           (turn - k->run_ns) * 1e-3, "run_us", k->run_ns * 1e-3, "ntt",
                           turn / solo_mean_ns, "gpu_share",
                           turn > 0 ? k->capsm_ns / ((double)r->sm_count * turn) : 0.0,
                           "preemptions", (json_int_t)k->preemptions));
        if (a->plain) {
            json_object_set_new(json_array_get(arr, j), "gpu_share", json_null());
        }
    }
    return arr;
}

int corun__cmd_sim(corun__cli *cli, int argc, char **argv)
{
    run_opts o;
    corun__scenario *sc;
    corun__run_env env;
    corun__solo solo;
    corun__run_result r;
    corun__demo_row row;
    corun__cli_maker mk;
    char backend[16], why[512] = "";
    double throughput = 0;
    size_t i;
    int rc = CORUN_EXIT_FAIL;

    memset(&o, 0, sizeof(o));
    if (strcmp(cli->settings.backend, "auto") == 0) {
        (void)corun__cli_set(cli, "backend=sim");
    }
    if (take_backend(cli, "sim", &argc, argv) != 0 || parse_opts(cli, "sim", argc, argv, &o, 0) != 0) {
        return CORUN_EXIT_USAGE;
    }
    if (o.scenario == NULL || o.nsystems != 1) {
        fprintf(stderr, "corun sim: --scenario FILE and --policy NAME are required\n");
        return CORUN_EXIT_USAGE;
    }
    sc = malloc(sizeof(*sc));
    if (sc == NULL) {
        return CORUN_EXIT_FAIL;
    }
    if (load_scenario(cli, &o, sc) != 0) {
        rc = CORUN_EXIT_USAGE;
        goto out_free_sc;
    }
    if (resolve_backend(cli, sc, backend, sizeof(backend)) != 0) {
        goto out_free_sc;
    }
    if (!o.no_train &&
        corun__cli_ensure_profiles(cli, sc, backend, corun__policy_find(o.systems[0])->needs,
                                   o.quiet) != 0) {
        goto out_free_sc;
    }
    mk.cli = cli;
    mk.backend = backend;
    memset(&env, 0, sizeof(env));
    env.make_backend = corun__cli_make_backend;
    env.make_ctx = &mk;
    env.settings = cli->settings;
    if (corun__scenario_solo(sc, &env, &solo, why, sizeof(why)) != CORUN_OK ||
        corun__scenario_run(sc, &env, o.systems[0], -1, 0, &r, why, sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "corun sim: %s\n", why);
        goto out_free_sc;
    }
    if (corun__demo_row_calc(sc, &solo, &r, &row) != CORUN_OK) {
        fprintf(stderr, "corun sim: an application completed no kernel\n");
        corun__run_result_free(&r);
        goto out_free_sc;
    }
    for (i = 0; i < r.napps; i++) {
        app_view v;
        view_app(sc, &r, i, &solo, &v);
        throughput += v.work_rate;
    }
    if (o.json) {
        json_t *root = json_object(), *apps = json_array();
        char *text;
        for (i = 0; i < r.napps; i++) {
            const corun__app_result *a = &r.apps[i];
            json_t *ao;
            app_view v;
            view_app(sc, &r, i, &solo, &v);
            ao = json_pack("{s:s, s:s, s:i, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, "
                           "s:f, s:I}",
                           "name", a->name, "class", a->cls == CORUN_CLASS_LS ? "ls" : "batch",
                           "priority", (int)sc->apps[i].attr.priority, "submitted",
                           (json_int_t)a->submitted, "completed", (json_int_t)a->completed,
                           "failed", (json_int_t)a->failed, "turnaround_mean_us",
                           a->mean_ns * 1e-3, "turnaround_p50_us", a->p50_ns * 1e-3,
                           "turnaround_p99_us", a->p99_ns * 1e-3, "ntt",
                           a->mean_ns / solo.mean_ns[i], "solo_mean_us", solo.mean_ns[i] * 1e-3,
                           "waiting_mean_us", v.waiting_mean_ns * 1e-3, "gpu_share", v.gpu_share,
                           "rate_per_s", a->rate_per_s, "work_rate", v.work_rate, "preemptions",
                           (json_int_t)a->preemptions);
            json_object_set_new(ao, "weight", json_integer((json_int_t)sc->apps[i].attr.weight));
            if (a->plain) {
                /* Plain grids hold no CapSMs; the hardware decides what they get. */
                json_object_set_new(ao, "gpu_share", json_null());
            }
            json_object_set_new(ao, "kernels", kernels_json(&r, a, solo.mean_ns[i]));
            json_array_append_new(apps, ao);
        }
        json_object_set_new(root, "scenario", json_string(sc->name));
        json_object_set_new(root, "policy", json_string(o.systems[0]));
        json_object_set_new(root, "backend", json_string(backend));
        json_object_set_new(root, "span_us", json_real(r.span_ns * 1e-3));
        json_object_set_new(root, "window_us", json_real(r.window_ns * 1e-3));
        json_object_set_new(root, "apps", apps);
        json_object_set_new(root, "antt", json_real(row.antt));
        json_object_set_new(root, "stp", json_real(row.stp));
        json_object_set_new(root, "fairness", json_real(row.fairness));
        json_object_set_new(root, "throughput", json_real(throughput));
        text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        printf("%s\n", text);
        free(text);
        json_decref(root);
    } else {
        printf("scenario %s, policy %s, backend %s\n", sc->name, o.systems[0], backend);
        printf("%-12s %-5s %6s %12s %12s %12s %7s %10s %6s\n", "app", "class", "done", "mean_us",
               "p50_us", "p99_us", "ntt", "wait_us", "share");
        for (i = 0; i < r.napps; i++) {
            const corun__app_result *a = &r.apps[i];
            app_view v;
            char share[16] = "-";
            view_app(sc, &r, i, &solo, &v);
            if (!a->plain) {
                snprintf(share, sizeof(share), "%.3f", v.gpu_share);
            }
            printf("%-12s %-5s %6zu %12.1f %12.1f %12.1f %7.2f %10.1f %6s\n", a->name,
                   a->cls == CORUN_CLASS_LS ? "ls" : "batch", a->completed, a->mean_ns * 1e-3,
                   a->p50_ns * 1e-3, a->p99_ns * 1e-3, a->mean_ns / solo.mean_ns[i],
                   v.waiting_mean_ns * 1e-3, share);
        }
        printf("ANTT %.3f  STP %.3f  fairness %.3f  throughput %.3f\n", row.antt, row.stp,
               row.fairness, throughput);
    }
    corun__run_result_free(&r);
    rc = CORUN_EXIT_OK;
out_free_sc:
    free(sc);
    return rc;
}
