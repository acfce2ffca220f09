/*
 * cmd_demo.c — `corun demo`: an LS+batch scenario (default: SMGuard §6.2)
 * under several policies, each application alone for reference, and one
 * row of normalised latency, throughput, ANTT and STP per policy.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/json_num.h"
#include "core/backend.h"
#include "cli/progress.h"
#include "scenario/scenario.h"

void corun__usage_demo(FILE *out)
{
    fprintf(out,
            "usage: corun demo [--scenario FILE] [--apps LIST] [--systems LIST] [--reserve N]\n"
            "                  [--backend B] [--seed N] [--duration-ms MS] [--train | --no-train]\n"
            "                  [--json] [--quiet] [--processes [--ls-sms N] [--keep DIR]]\n"
            "\n"
            "Runs an LS+batch scenario (default: SMGuard 6.2 — a batch kernel with long\n"
            "block-tasks in a loop, an LS kernel arriving at random intervals) once per\n"
            "system, plus each application alone, and prints LS latency p50/p99 and\n"
            "batch throughput normalised to solo, ANTT and STP. The row 'alone' is the LS\n"
            "application by itself: its own p99 over its p50, its tail with nothing beside\n"
            "it (requests alone vary: on a GPU, and on the simulator by its launch noise,\n"
            "CORUN_SIM_LAUNCH_JITTER_US). The row 'floor'\n"
            "is the LS application alone under smguard: what smguard costs it (its\n"
            "kernels as preemptible workers, their sizing and launch) with nothing beside\n"
            "it, the part of smguard's row that batch work does not add (shown when\n"
            "smguard is among the systems and the scenario has one LS application).\n"
            "\n"
            "options:\n"
            "  --scenario FILE   scenario file or name, found as corun sim finds it (default: ls-batch)\n"
            "  --apps LIST       run only these applications of the scenario, comma-separated\n"
            "  --systems LIST    comma-separated policies (default mps,priority,smguard,flep-hpf,green)\n"
            "  --reserve N       smguard: CapSMs reserved for LS kernels (default: the scenario's)\n"
            "  --backend B       auto (default: the GPU if usable, else the simulator), cuda or sim;\n"
            "                    a GPU that is usable but cannot be set up is an error\n"
            "  --seed N          random seed (default: the scenario's, else CORUN_SEED)\n"
            "  --duration-ms MS  how long applications keep submitting kernels, in (0, 1e7]\n"
            "  --train           first record the kernel profiles a FLEP or Slate policy lacks in the\n"
            "                    profile store (as corun sim does); without it the demo writes\n"
            "                    nothing, and flep-hpf decides by priority alone (enough here:\n"
            "                    the LS application has the higher one)\n"
            "  --no-train        record nothing (the default)\n"
            "  --json            an array of objects with keys system, ls_p50_norm, ls_p99_norm,\n"
            "                    batch_norm, antt, stp, fairness, ls_count, batch_count and\n"
            "                    ls_alone_p99_norm (the LS application's p99 alone over its p50,\n"
            "                    the same in every row), ls_floor_p50_norm and\n"
            "                    ls_floor_p99_norm (the row floor, the same in every row); a\n"
            "                    figure there is none of (no LS or no batch application, no\n"
            "                    floor row) is null\n"
            "  -q, --quiet       no progress on stderr (errors still print)\n"
            "  --processes       two processes instead of one (below; a GPU only; with\n"
            "                    --scenario, --backend, --duration-ms, --json and --quiet)\n"
            "  --ls-sms N        --processes: the SMs corund keeps for the LS process\n"
            "  --keep DIR        --processes: keep each process's report and corund's log in DIR\n"
            "\n"
            "--processes runs the scenario's applications ls and batch as two processes\n"
            "started together (each `corun sim --apps APP`), once per system: under MPS with\n"
            "the LS process's kernels on a high-priority stream; with CUDA_MPS_CLIENT_PRIORITY\n"
            "0 and 1; and coordinated by a corund started for the run (smguard in\n"
            "each process; the daemon keeps --ls-sms SMs, default the SMs one wave of the LS\n"
            "kernel fills, for the LS process while its work goes on). Each application\n"
            "alone in a process of its own is the reference: the LS application's median\n"
            "turnaround under plain dispatch, the batch loop's rate. An MPS server is\n"
            "started for the run where none answers (corun mps), and stopped after. A GPU\n"
            "only (on the simulator each process would simulate a GPU of its own). Its\n"
            "--json: an array of objects with keys system (prio, clientprio, corund),\n"
            "ls_p50_norm, ls_p99_norm, batch_norm and ls_count.\n"
            "\n"
            "Without --reserve, a scenario that sets no reservation gets CORUN_RESERVE_CAPSM\n"
            "(8). smguard gives an LS kernel the SMs one wave of its grid fills, at least\n"
            "the reservation and at most CORUN_SMGUARD_LS_CAP of the GPU (0.5), and keeps\n"
            "that many free while LS kernels keep arriving; batch kernels run on the other\n"
            "SMs and hold them through their tails (CORUN_SMGUARD_BIND=1), and an LS kernel\n"
            "arriving while another runs waits for its SMs. flep-hpf preempts lower-priority\n"
            "kernels for the LS application (priority 1 in the ls-batch scenarios). green\n"
            "splits the SMs once (CUDA green contexts on the GPU): the LS application's plain\n"
            "kernels get as many SMs as smguard gives an LS kernel (CORUN_GREEN_LS_SMS to set\n"
            "it), rounded up to the hardware's granularity (8 on the H100), the batch\n"
            "application the rest.\n");
}

/* What smguard gives the LS application with nothing beside it: ls_floor
 * (p50 and p99 over the solo p50, the application alone under plain
 * dispatch; NAN unless smguard is among the systems and the scenario has
 * exactly one LS application). It tells what smguard itself costs an LS
 * request from what batch work adds. Returns an exit code; prints why on
 * failure. */
static int run_floor(const corun__scenario *sc, corun__run_env *env, const corun__run_opts *o,
                     const corun__solo *solo, corun__progress *pr, double ls_floor[2])
{
    corun__run_result r;
    char why[512] = "";
    int ls = -1, rc;
    size_t i, n;

    ls_floor[0] = ls_floor[1] = NAN;
    for (i = 0; i < o->nsystems && strcmp(o->systems[i], "smguard") != 0; i++) {
    }
    if (i == o->nsystems) {
        return CORUN_EXIT_OK;
    }
    for (i = 0; i < sc->napps; i++) {
        if (sc->apps[i].attr.cls == CORUN_CLASS_LS) {
            if (ls >= 0) {
                return CORUN_EXIT_OK;
            }
            ls = (int)i;
        }
    }
    if (ls < 0) {
        return CORUN_EXIT_OK;
    }
    corun__progress_step(pr, "smguard, the LS application alone");
    if (corun__scenario_run(sc, env, "smguard", ls, 0, &r, why, sizeof(why)) != CORUN_OK) {
        corun__progress_break(pr);
        fprintf(stderr, "corun demo: smguard, the LS application alone: %s\n", why);
        return CORUN_EXIT_FAIL;
    }
    rc = corun__demo_ls_norms(solo, &r, &ls_floor[0], &ls_floor[1], &n);
    corun__run_result_free(&r);
    if (rc != CORUN_OK) {
        corun__progress_break(pr);
        fprintf(stderr, "corun demo: smguard, the LS application alone: %s\n",
                corun_strerror(rc));
        return CORUN_EXIT_FAIL;
    }
    return CORUN_EXIT_OK;
}

/* Each application alone, then one run per system, each turned into a row;
 * *alone_p99: the LS application's own p99 alone over its p50
 * (corun__solo_ls_p99_norm); ls_floor: run_floor's. Returns an exit code;
 * prints why on failure. */
static int run_systems(const corun__scenario *sc, corun__run_env *env, const corun__run_opts *o,
                       corun__progress *pr, corun__demo_row *rows, double *alone_p99,
                       double ls_floor[2])
{
    corun__solo solo;
    char why[512] = "";
    size_t i;

    corun__progress_step(pr, "each application alone");
    if (corun__scenario_solo(sc, env, &solo, why, sizeof(why)) != CORUN_OK) {
        corun__progress_break(pr);
        fprintf(stderr, "corun demo: %s\n", why);
        return strstr(why, "threads") || strstr(why, "registers") || strstr(why, "shared")
                   ? CORUN_EXIT_USAGE
                   : CORUN_EXIT_FAIL;
    }
    *alone_p99 = corun__solo_ls_p99_norm(sc, &solo);
    for (i = 0; i < o->nsystems; i++) {
        corun__run_result r;
        corun__progress_step(pr, o->systems[i]);
        if (corun__scenario_run(sc, env, o->systems[i], -1, 0, &r, why, sizeof(why)) !=
            CORUN_OK) {
            corun__progress_break(pr);
            fprintf(stderr, "corun demo: %s: %s\n", o->systems[i], why);
            return CORUN_EXIT_FAIL;
        }
        if (corun__demo_row_calc(sc, &solo, &r, &rows[i]) != CORUN_OK) {
            corun__progress_break(pr);
            fprintf(stderr, "corun demo: %s: an application completed no kernel\n", o->systems[i]);
            corun__run_result_free(&r);
            return CORUN_EXIT_FAIL;
        }
        corun__run_result_free(&r);
    }
    return run_floor(sc, env, o, &solo, pr, ls_floor);
}

static void print_rows_json(const corun__demo_row *rows, size_t n, double alone_p99,
                            const double ls_floor[2])
{
    json_t *arr = json_array();
    size_t i;

    for (i = 0; i < n; i++) {
        const corun__demo_row *r = &rows[i];
        json_t *o = json_object();
        json_object_set_new(o, "system", json_string(r->system));
        json_object_set_new(o, "ls_p50_norm", corun__json_num(r->ls_p50_norm));
        json_object_set_new(o, "ls_p99_norm", corun__json_num(r->ls_p99_norm));
        json_object_set_new(o, "batch_norm", corun__json_num(r->batch_norm));
        json_object_set_new(o, "antt", corun__json_num(r->antt));
        json_object_set_new(o, "stp", corun__json_num(r->stp));
        json_object_set_new(o, "fairness", corun__json_num(r->fairness));
        json_object_set_new(o, "ls_count", json_integer((json_int_t)r->ls_count));
        json_object_set_new(o, "batch_count", json_integer((json_int_t)r->batch_count));
        json_object_set_new(o, "ls_alone_p99_norm", corun__json_num(alone_p99));
        json_object_set_new(o, "ls_floor_p50_norm", corun__json_num(ls_floor[0]));
        json_object_set_new(o, "ls_floor_p99_norm", corun__json_num(ls_floor[1]));
        json_array_append_new(arr, o);
    }
    corun__cli_print_json(arr);
}

static void print_rows_table(const corun__cli *cli, const corun__scenario *sc,
                             const char *backend, const corun__demo_row *rows, size_t n,
                             double alone_p99, const double ls_floor[2])
{
    size_t i;

    corun__settings set = cli->settings;
    if (sc->has_reserve) {
        set.reserve_capsm = sc->reserve_capsm;
    }
    const uint32_t green = set.green_ls_sms != 0 ? set.green_ls_sms
                                                 : corun__scenario_ls_need(sc, &set);
    printf("scenario %s, backend %s, reserve %u CapSMs (smguard), LS partition of %u SMs "
           "rounded up (green)\n",
           sc->name, backend, (unsigned)set.reserve_capsm,
           green != 0 ? green : (unsigned)set.reserve_capsm);
    printf("%-10s %12s %12s %11s %7s %7s %6s %6s\n", "system", "ls_p50_norm", "ls_p99_norm",
           "batch_norm", "antt", "stp", "ls_n", "bat_n");
    if (!isnan(alone_p99)) {
        printf("%-10s %12.2f %12.2f %11.3f %7s %7s %6s %6s\n", "alone", 1.0, alone_p99, 1.0, "-",
               "-", "-", "-");
    }
    if (!isnan(ls_floor[0])) {
        printf("%-10s %12.2f %12.2f %11s %7s %7s %6s %6s\n", "floor", ls_floor[0], ls_floor[1], "-",
               "-", "-", "-", "-");
    }
    for (i = 0; i < n; i++) {
        printf("%-10s %12.2f %12.2f %11.3f %7.2f %7.3f %6zu %6zu\n", rows[i].system,
               rows[i].ls_p50_norm, rows[i].ls_p99_norm, rows[i].batch_norm, rows[i].antt,
               rows[i].stp, rows[i].ls_count, rows[i].batch_count);
    }
    printf("(LS latency normalised to an LS request alone, whose own tail is the row\n"
           " alone; floor: the LS application alone under smguard, what smguard costs\n"
           " it with nothing beside it; batch throughput to the batch loop alone; ANTT\n"
           " lower is better, STP higher is better)\n");
}

/* Takes --processes, --ls-sms N and --keep DIR out of argv (the rest is
 * demo's usual options). Returns -1 after printing why on a bad value. */
static int take_processes(int *argc, char **argv, int *processes, uint32_t *ls_sms,
                          const char **keep)
{
    int i, n = 0;

    for (i = 0; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--processes") == 0) {
            *processes = 1;
            continue;
        }
        if (strcmp(a, "--ls-sms") == 0 || strcmp(a, "--keep") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "corun demo: %s needs a value\n", a);
                return -1;
            }
            const char *v = argv[++i];
            if (a[2] == 'k') {
                *keep = v;
            } else {
                char *end;
                errno = 0;
                unsigned long x = strtoul(v, &end, 10);
                if (errno != 0 || end == v || *end != '\0' || v[0] == '-' || x == 0 ||
                    x > 4096) {
                    fprintf(stderr, "corun demo: --ls-sms: '%s' is not a number of SMs in "
                                    "[1, 4096]\n", v);
                    return -1;
                }
                *ls_sms = (uint32_t)x;
            }
            continue;
        }
        argv[n++] = argv[i];
    }
    *argc = n;
    return 0;
}

/* demo --processes: the scenario checked (applications ls and batch), the
 * backend resolved, then demo_processes.c. */
static int run_processes(corun__cli *cli, const corun__run_opts *o, uint32_t ls_sms,
                         const char *keep)
{
    corun__scenario *sc = malloc(sizeof(*sc));
    char backend[16];
    unsigned caps = 0;
    int have_ls = 0, have_batch = 0, rc;
    size_t i;

    if (sc == NULL) {
        fprintf(stderr, "corun demo: out of memory\n");
        return CORUN_EXIT_FAIL;
    }
    if (o->apps != NULL || o->nsystems != 5) {
        fprintf(stderr, "corun demo: --apps and --systems do not go with --processes (its "
                        "systems are fixed)\n");
        free(sc);
        return CORUN_EXIT_USAGE;
    }
    if (corun__cli_load_run_scenario(cli, o, sc) != 0) {
        free(sc);
        return CORUN_EXIT_USAGE;
    }
    for (i = 0; i < sc->napps; i++) {
        have_ls |= strcmp(sc->apps[i].name, "ls") == 0;
        have_batch |= strcmp(sc->apps[i].name, "batch") == 0;
    }
    if (!have_ls || !have_batch) {
        fprintf(stderr, "corun demo: --processes needs a scenario with applications named ls "
                        "and batch (%s has %s)\n", sc->name, have_ls ? "no batch" : "no ls");
        free(sc);
        return CORUN_EXIT_USAGE;
    }
    if (ls_sms == 0) {
        corun__settings set = cli->settings;
        if (sc->has_reserve) {
            set.reserve_capsm = sc->reserve_capsm;
        }
        ls_sms = corun__scenario_ls_need(sc, &set);
        if (ls_sms == 0) {
            ls_sms = (uint32_t)set.reserve_capsm;
        }
    }
    if (corun__cli_resolve_backend(cli, backend, sizeof(backend), &caps) != 0) {
        free(sc);
        return CORUN_EXIT_FAIL;
    }
    if ((caps & CORUN_BE_VIRTUAL_TIME) != 0) {
        fprintf(stderr, "corun demo: --processes needs a GPU (backend %s): on the simulator each "
                        "process would simulate a GPU of its own, in virtual time, which corund "
                        "cannot coordinate\n", backend);
        free(sc);
        return CORUN_EXIT_USAGE;
    }
    rc = corun__demo_processes(cli, o, backend, sc->duration_ns * 1e-6, ls_sms, keep);
    free(sc);
    return rc;
}

int corun__cmd_demo(corun__cli *cli, int argc, char **argv)
{
    corun__run_opts o;
    corun__scenario *sc;
    corun__run_env env;
    corun__demo_row rows[CORUN_CLI_MAX_SYSTEMS];
    double alone_p99 = NAN, ls_floor[2] = {NAN, NAN};
    corun__cli_maker mk;
    corun__progress pr;
    char backend[16];
    const char *keep = NULL;
    uint32_t ls_sms = 0;
    int rc, processes = 0;

    memset(&o, 0, sizeof(o));
    o.no_train = 1;
    if (take_processes(&argc, argv, &processes, &ls_sms, &keep) != 0) {
        return CORUN_EXIT_USAGE;
    }
    snprintf(o.systems[0], sizeof(o.systems[0]), "mps");
    snprintf(o.systems[1], sizeof(o.systems[1]), "priority");
    snprintf(o.systems[2], sizeof(o.systems[2]), "smguard");
    snprintf(o.systems[3], sizeof(o.systems[3]), "flep-hpf");
    snprintf(o.systems[4], sizeof(o.systems[4]), "green");
    o.nsystems = 5;
    if (corun__cli_parse_run_opts(cli, "demo", argc, argv, &o, 1) != 0) {
        return CORUN_EXIT_USAGE;
    }
    if (processes) {
        return run_processes(cli, &o, ls_sms, keep);
    }
    if (ls_sms != 0 || keep != NULL) {
        fprintf(stderr, "corun demo: --ls-sms and --keep go with --processes\n");
        return CORUN_EXIT_USAGE;
    }
    rc = corun__cli_prepare_run(cli, &o, &sc, backend, sizeof(backend), &mk, &env);
    if (rc != CORUN_EXIT_OK) {
        return rc;
    }
    corun__progress_begin(&pr, o.quiet, "corun demo: scenario '%s' on %s, %.0f ms per run",
                          sc->name, backend, sc->duration_ns * 1e-6);
    env.progress = corun__progress_fraction;
    env.progress_ctx = &pr;
    rc = run_systems(sc, &env, &o, &pr, rows, &alone_p99, ls_floor);
    if (rc != CORUN_EXIT_OK) {
        goto out_free_sc;
    }
    corun__progress_end(&pr);
    if (o.json) {
        print_rows_json(rows, o.nsystems, alone_p99, ls_floor);
    } else {
        print_rows_table(cli, sc, backend, rows, o.nsystems, alone_p99, ls_floor);
    }
out_free_sc:
    free(sc);
    return rc;
}
