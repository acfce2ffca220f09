/*
 * cmd_profile.c — `corun profile`: the kernel profile store (recorded solo
 * runs, duration models and their held-out error, intensity profiles and
 * Slate classes), and the training runs that fill it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "common/json_num.h"
#include "core/duration_model.h"
#include "core/intensity.h"
#include "core/policy.h"
#include "core/profile_store.h"
#include "scenario/scenario.h"

/* Reads the store for listing, changing nothing on disk; prints why it
 * cannot be listed. */
static int read_store(const char *path, corun__pstore *ps)
{
    char note[1024] = "";
    int rc = corun__pstore_read(path, ps, note, sizeof(note));

    if (rc == CORUN_EPARSE) {
        fprintf(stderr,
                "corun: %s: not listed, left as it is; the next run that records profiles "
                "(corun profile --train-scenario) moves it aside and starts a new store\n",
                note);
    } else if (rc != CORUN_OK) {
        fprintf(stderr, "corun: %s\n", note[0] != '\0' ? note : corun_strerror(rc));
    }
    return rc == CORUN_OK ? 0 : -1;
}

/* What training measured (a kernel's rates and how), as progress. */
static void say_line(void *ctx, const char *line)
{
    corun__progress_line(ctx, "%s", line);
}

/* Runs the training runs of the chosen apps and merges them into the store. */
static int train(corun__cli *cli, const corun__scenario *sc, const char *backend, const char *path,
                 const int *apps, size_t napps, uint32_t runs, uint32_t profile_runs, int quiet)
{
    corun__run_env env;
    corun__train_opts o;
    corun__pstore add;
    corun__progress pr;
    corun__cli_maker mk = {cli, backend};
    char why[1024] = "", step[128];
    size_t i;
    int rc = CORUN_OK;

    corun__cli_run_env(&env, &mk);
    corun__train_opts_default(&o, &cli->settings);
    o.runs = runs;
    o.profile_runs = profile_runs;
    o.log = say_line;
    o.log_ctx = &pr;
    corun__progress_begin(&pr, quiet, "corun profile: training %zu kernel%s of '%s' on %s", napps,
                          napps == 1 ? "" : "s", sc->name, backend);
    env.progress = corun__progress_fraction;
    env.progress_ctx = &pr;
    corun__pstore_init(&add);
    for (i = 0; i < napps && rc == CORUN_OK; i++) {
        snprintf(step, sizeof(step),
                 "'%s': %u runs at random sizes, %u and %u loop windows at its own",
                 sc->apps[apps[i]].kernel.name, runs, profile_runs, o.rate_windows);
        corun__progress_step(&pr, step);
        rc = corun__scenario_train(sc, &env, &o, apps[i], &add, why, sizeof(why));
    }
    corun__progress_break(&pr);
    if (rc != CORUN_OK) {
        fprintf(stderr, "corun: profiling failed: %s\n", why[0] ? why : corun_strerror(rc));
        corun__pstore_free(&add);
        return -1;
    }
    rc = corun__pstore_merge(path, &add, why, sizeof(why));
    if (why[0] != '\0') {
        fprintf(stderr, "corun: %s\n", why);
    }
    corun__pstore_free(&add);
    if (rc == CORUN_OK) {
        corun__progress_end(&pr);
    }
    return rc == CORUN_OK ? 0 : -1;
}

typedef struct store_key {
    const char *backend, *kernel;
} store_key;

/* The (backend, kernel) pairs of the store, in order of first appearance. */
static int distinct_keys(const corun__pstore *ps, store_key **out, size_t *n)
{
    store_key *v = malloc((ps->nruns + ps->nprofs + 1) * sizeof(*v));
    size_t i, j, m = 0;

    if (v == NULL) {
        return -1;
    }
    for (i = 0; i < ps->nruns + ps->nprofs; i++) {
        const char *be = i < ps->nruns ? ps->runs[i].backend : ps->profs[i - ps->nruns].backend;
        const char *kn = i < ps->nruns ? ps->runs[i].kernel : ps->profs[i - ps->nruns].kernel;
        for (j = 0; j < m; j++) {
            if (strcmp(v[j].backend, be) == 0 && strcmp(v[j].kernel, kn) == 0) {
                break;
            }
        }
        if (j == m) {
            v[m].backend = be;
            v[m].kernel = kn;
            m++;
        }
    }
    *out = v;
    *n = m;
    return 0;
}

void corun__usage_profile(FILE *out)
{
    fprintf(out,
            "usage: corun profile [--train-scenario FILE [--runs N] [--app NAME] [--backend B]]\n"
            "                     [--json] [--quiet]\n"
            "\n"
            "Lists the kernel profile store (CORUN_PROFILE_PATH): per kernel and backend,\n"
            "its recorded solo runs, the error of its duration model on held-out runs\n"
            "(every 1/CORUN_PROFILE_HOLDOUT-th run, not used to fit it: mean and worst\n"
            "absolute percentage error), its intensity profile (achieved FLOP/s and DRAM\n"
            "bandwidth over the device's peaks) and its Slate class. Listing changes\n"
            "nothing on disk: a corrupt store is reported (exit 1) and left as it is;\n"
            "training moves it aside and starts a new one.\n"
            "\n"
            "options:\n"
            "  --train-scenario FILE  first profile the kernel of every application of the scenario\n"
            "  --runs N               training runs per kernel, in [5, 100000] (CORUN_PROFILE_TRAIN_RUNS)\n"
            "  --app NAME             train only this application's kernel\n"
            "  --backend B            sim (default), cuda, or auto (cuda where a GPU is\n"
            "                         usable, else sim)\n"
            "  --json                 print {\"store\", \"holdout\", \"kernels\": [...], \"mean_mape\"}\n"
            "  -q, --quiet            no training progress on stderr (errors still print)\n"
            "\n"
            "--train-scenario takes a file or a name, as corun sim --scenario does, runs\n"
            "each kernel alone on the GPU N times at random input sizes (a tenth of the\n"
            "application's to the application's) and 3 times at its own size (its\n"
            "intensity profile), then for three windows in a loop of launches at its\n"
            "own size (its rate alone, which fgqos's goals are fractions of), and\n"
            "records the runs and profiles. A run the store holds already (the simulator\n"
            "repeats itself for a seed) is not recorded twice. corun sim records what a\n"
            "FLEP or Slate policy lacks before it runs.\n");
}

typedef struct profile_opts {
    const char *scenario;      /* --train-scenario, or NULL to only list */
    const char *app;           /* --app, or NULL for every application */
    unsigned long long runs;   /* --runs */
    int json;
    int quiet;                 /* --quiet */
} profile_opts;

/* Returns -1 on a bad command line, after printing why. --backend goes to
 * the settings, over an auto backend setting read as sim; --runs is checked
 * against CORUN_PROFILE_TRAIN_RUNS's bounds (it sets it for this run). */
static int parse_profile_opts(corun__cli *cli, int argc, char **argv, profile_opts *o)
{
    const char *who = "corun profile";
    int a;

    memset(o, 0, sizeof(*o));
    corun__cli_auto_means_sim(cli);
    for (a = 0; a < argc; a++) {
        const char *opt = argv[a], *val;
        if (strcmp(opt, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(opt, "--quiet") == 0 || strcmp(opt, "-q") == 0) {
            o->quiet = 1;
            continue;
        }
        if (strcmp(opt, "--train-scenario") != 0 && strcmp(opt, "--app") != 0 &&
            strcmp(opt, "--runs") != 0 && strcmp(opt, "--backend") != 0) {
            fprintf(stderr, "%s: unknown option '%s' (%s --help lists them)\n", who, opt, who);
            return -1;
        }
        if ((val = corun__cli_value(who, argc, argv, &a)) == NULL) {
            return -1;
        }
        if (strcmp(opt, "--train-scenario") == 0) {
            o->scenario = val;
        } else if (strcmp(opt, "--app") == 0) {
            o->app = val;
        } else if (strcmp(opt, "--runs") == 0) {
            if (corun__cli_set_option(cli, who, opt, "profile_train_runs", val) != 0) {
                return -1;
            }
        } else if (corun__cli_set_backend(cli, "profile", val) != 0) {
            return -1;
        }
    }
    if (o->app != NULL && o->scenario == NULL) {
        fprintf(stderr, "%s: --app needs --train-scenario\n", who);
        return -1;
    }
    o->runs = cli->settings.profile_train_runs;
    return 0;
}

/* --train-scenario: trains the chosen applications' kernels into the store
 * at path. Returns an exit code, after printing why on failure. */
static int train_scenario(corun__cli *cli, const profile_opts *o, const char *path)
{
    corun__scenario *sc = malloc(sizeof(*sc));
    int apps[CORUN_SCENARIO_MAX_APPS];
    char backend[16];
    size_t i, n = 0;
    int rc = CORUN_EXIT_FAIL;

    if (sc == NULL) {
        return CORUN_EXIT_FAIL;
    }
    if (corun__cli_scenario_load(cli, "corun profile", o->scenario, sc) != 0) {
        free(sc);
        return CORUN_EXIT_USAGE;
    }
    for (i = 0; i < sc->napps; i++) {
        if (o->app == NULL || strcmp(sc->apps[i].name, o->app) == 0) {
            apps[n++] = (int)i;
        }
    }
    if (n == 0) {
        fprintf(stderr, "corun profile: no application '%s' in %s\n", o->app, o->scenario);
        free(sc);
        return CORUN_EXIT_USAGE;
    }
    if (corun__cli_resolve_backend(cli, backend, sizeof(backend), NULL) == 0 &&
        train(cli, sc, backend, path, apps, n, (uint32_t)o->runs, 3, o->quiet) == 0) {
        rc = CORUN_EXIT_OK;
    }
    free(sc);
    return rc;
}

/* What the store holds for one (backend, kernel) pair. */
typedef struct kernel_row {
    const char *backend, *kernel;
    size_t nruns;
    int have_ev;              /* the duration model could be fitted and tested */
    corun__dm_eval ev;
    const corun__pprof *prof; /* intensity profile, or NULL */
} kernel_row;

static int kernel_row_of(const corun__cli *cli, const corun__pstore *ps, const store_key *key,
                         kernel_row *row)
{
    const corun__prun **runs_of;

    memset(row, 0, sizeof(*row));
    row->backend = key->backend;
    row->kernel = key->kernel;
    if (corun__dm_runs_of(ps, key->backend, key->kernel, &runs_of, &row->nruns) != CORUN_OK) {
        return -1;
    }
    row->have_ev = row->nruns > 0 &&
                   corun__dm_evaluate(runs_of, row->nruns, cli->settings.profile_holdout,
                                      cli->settings.ridge_lambda, &row->ev) == CORUN_OK;
    free(runs_of);
    row->prof = corun__pstore_find_prof(ps, key->backend, key->kernel);
    return 0;
}

static json_t *kernel_row_json(const corun__cli *cli, const kernel_row *row)
{
    json_t *o = json_pack("{s:s, s:s, s:I}", "backend", row->backend, "kernel", row->kernel,
                          "runs", (json_int_t)row->nruns);
    const corun__pprof *prof = row->prof;

    if (row->have_ev) {
        json_object_set_new(o, "train", json_integer((json_int_t)row->ev.ntrain));
        json_object_set_new(o, "test", json_integer((json_int_t)row->ev.ntest));
        json_object_set_new(o, "mape", corun__json_num(row->ev.mape));
        json_object_set_new(o, "max_ape", corun__json_num(row->ev.max_ape));
    }
    if (prof != NULL) {
        json_object_set_new(o, "flop_frac", corun__json_num(prof->flop_frac));
        json_object_set_new(o, "bw_frac", corun__json_num(prof->bw_frac));
        json_object_set_new(o, "class", json_string(corun__kclass_name(corun__kclass_of(
                                            prof->flop_frac, prof->bw_frac, &cli->settings))));
    }
    return o;
}

static void kernel_row_print(const corun__cli *cli, const kernel_row *row)
{
    char mape[16] = "-", worst[16] = "-", fl[16] = "-", bw[16] = "-";
    const corun__pprof *prof = row->prof;

    if (row->have_ev) {
        snprintf(mape, sizeof(mape), "%.2f", row->ev.mape * 100);
        snprintf(worst, sizeof(worst), "%.2f", row->ev.max_ape * 100);
    }
    if (prof != NULL) {
        snprintf(fl, sizeof(fl), "%.4f", prof->flop_frac);
        snprintf(bw, sizeof(bw), "%.4f", prof->bw_frac);
    }
    printf("%-7s %-24s %6zu %8s %8s %10s %10s %-6s\n", row->backend, row->kernel, row->nruns,
           mape, worst, fl, bw,
           prof != NULL ? corun__kclass_name(
                              corun__kclass_of(prof->flop_frac, prof->bw_frac, &cli->settings))
                        : "-");
}

/* Lists the store at path: one line (or JSON object) per kernel and
 * backend, with runs or a profile or both, in the order they first appear,
 * and the mean held-out error of the duration models. Returns an exit code. */
static int list_store(const corun__cli *cli, const char *path, int json)
{
    corun__pstore ps;
    store_key *keys = NULL;
    json_t *kernels = NULL;
    double mape_sum = 0;
    size_t i, nmape = 0, nkeys = 0;
    int rc = CORUN_EXIT_FAIL;

    if (read_store(path, &ps) != 0) {
        return CORUN_EXIT_FAIL;
    }
    if (json) {
        kernels = json_array();
    } else {
        printf("store %s: %zu runs, %zu profiles\n", path, ps.nruns, ps.nprofs);
        printf("%-7s %-24s %6s %8s %8s %10s %10s %-6s\n", "backend", "kernel", "runs", "mape%",
               "worst%", "flop/peak", "bw/peak", "class");
    }
    if (distinct_keys(&ps, &keys, &nkeys) != 0) {
        goto out_free_store;
    }
    for (i = 0; i < nkeys; i++) {
        kernel_row row;
        if (kernel_row_of(cli, &ps, &keys[i], &row) != 0) {
            goto out_free_keys;
        }
        if (row.have_ev) {
            mape_sum += row.ev.mape;
            nmape++;
        }
        if (json) {
            json_array_append_new(kernels, kernel_row_json(cli, &row));
        } else {
            kernel_row_print(cli, &row);
        }
    }
    if (json) {
        json_t *root = json_object();
        json_object_set_new(root, "store", json_string(path));
        json_object_set_new(root, "holdout", corun__json_num(cli->settings.profile_holdout));
        json_object_set_new(root, "kernels", kernels);
        json_object_set_new(root, "mean_mape",
                            nmape ? corun__json_num(mape_sum / nmape) : json_null());
        corun__cli_print_json(root);
        kernels = NULL;
    } else if (nmape > 0) {
        printf("duration model: mean held-out error %.2f%% over %zu kernels (FLEP reports 6.9%%)\n",
               mape_sum / nmape * 100, nmape);
    }
    rc = CORUN_EXIT_OK;
out_free_keys:
    free(keys);
out_free_store:
    json_decref(kernels);
    corun__pstore_free(&ps);
    return rc;
}

int corun__cmd_profile(corun__cli *cli, int argc, char **argv)
{
    profile_opts o;
    char path[4096];
    int rc;

    if (parse_profile_opts(cli, argc, argv, &o) != 0) {
        return CORUN_EXIT_USAGE;
    }
    if (corun__cli_store_path(cli, path, sizeof(path)) != 0) {
        return CORUN_EXIT_USAGE;
    }
    if (o.scenario != NULL && (rc = train_scenario(cli, &o, path)) != CORUN_EXIT_OK) {
        return rc;
    }
    return list_store(cli, path, o.json);
}
