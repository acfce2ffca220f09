/*
 * cmd_sim.c — `corun sim`: one scenario under one policy, after each
 * application alone for its solo reference; results per application and
 * over the run, as a table or JSON (definitions in docs/scenarios.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "common/json_num.h"
#include "scenario/scenario.h"

void corun__usage_sim(FILE *out)
{
    fprintf(out,
            "usage: corun sim --scenario FILE --policy NAME [--apps LIST] [--backend B] [--reserve N]\n"
            "                 [--seed N] [--duration-ms MS] [--train | --no-train] [--json] [--quiet]\n"
            "\n"
            "Runs one scenario under one policy, after running each application alone\n"
            "under plain dispatch for its solo reference, and reports per application:\n"
            "kernels completed, turnaround (mean, p50, p99), NTT, mean waiting time and\n"
            "GPU share; over all applications: ANTT, STP, fairness and throughput.\n"
            "Definitions: docs/scenarios.md.\n"
            "\n"
            "options:\n"
            "  --scenario FILE   a scenario file, or a name (required; see below)\n"
            "  --policy NAME     the scheduling policy (required; corun policies lists them)\n"
            "  --apps LIST       run only these applications, comma-separated, in this order\n"
            "  --backend B       sim (the default, also for CORUN_BACKEND=auto), cuda, or auto\n"
            "                    (cuda where a GPU is usable, else sim)\n"
            "  --reserve N       smguard: CapSMs reserved for LS kernels (default: the scenario's)\n"
            "  --seed N          random seed (default: the scenario's, else CORUN_SEED)\n"
            "  --duration-ms MS  how long applications keep submitting kernels, in (0, 1e7]\n"
            "  --train           first record the kernel profiles a FLEP or Slate policy lacks (default)\n"
            "  --no-train        do not\n"
            "  --json            one JSON object instead of the table (see below)\n"
            "  -q, --quiet       no progress on stderr (errors still print)\n"
            "\n"
            "--scenario takes a file, or a name (ls-batch, bench/scenarios/ls-batch.json) looked\n"
            "up, when no such file is here, in CORUN_SCENARIOS, then the installed\n"
            "scenarios (PREFIX/share/corun/scenarios), then the source tree's\n"
            "bench/scenarios/.\n"
            "--apps may name an application twice to run two copies, e.g. one pair of a\n"
            "bench/scenarios/*-pairs.json file. Policies that need kernel profiles (flep-hpf:\n"
            "duration models; slate: intensity classes) get what the profile store lacks\n"
            "recorded first (see corun profile) unless --no-train. --json prints one\n"
            "object: scenario, policy, backend, span_us, antt, stp, fairness, throughput,\n"
            "and apps[] with per-application results and kernels[], one record per\n"
            "completed kernel (submit_us, start_us, end_us, turnaround_us, waiting_us,\n"
            "run_us, ntt, gpu_share, preemptions).\n");
}

/* A finished run with what it is compared to. */
typedef struct sim_report {
    const corun__scenario *sc;
    const char *policy, *backend;
    const corun__solo *solo;
    const corun__run_result *r;
    const corun__demo_row *row;   /* ANTT, STP, fairness */
    double throughput;            /* sum of the applications' work rates */
} sim_report;

/* Per-application and whole-run results derived from a run and its solo
 * references; definitions in docs/scenarios.md. */
typedef struct app_view {
    double waiting_mean_ns;  /* mean of turnaround - time on the GPU */
    double gpu_share;        /* CapSM-time over the GPU's, in the arrival window */
    double work_rate;        /* block-tasks per second in the arrival window / alone */
} app_view;

static void view_app(const sim_report *rep, size_t i, app_view *v)
{
    const corun__run_result *r = rep->r;
    const corun__app_result *a = &r->apps[i];
    const corun_dim3 *g = &rep->sc->apps[i].kernel.grid;
    double wait = 0, solo_tasks_per_ns;
    size_t j;

    memset(v, 0, sizeof(*v));
    for (j = 0; j < a->completed; j++) {
        wait += a->turnaround_ns[j] - a->kernels[j].run_ns;
    }
    v->waiting_mean_ns = a->completed ? wait / (double)a->completed : 0;
    v->gpu_share = r->window_ns > 0 ? a->window_capsm_ns / ((double)r->sm_count * r->window_ns) : 0;
    solo_tasks_per_ns = rep->solo->rate_per_s[i] * 1e-9 * (double)g->x * g->y * g->z;
    v->work_rate = solo_tasks_per_ns > 0 && r->window_ns > 0
                       ? a->window_tasks / r->window_ns / solo_tasks_per_ns
                       : 0;
}

static json_t *kernels_json(const corun__run_result *r, const corun__app_result *a,
                            double solo_mean_ns)
{
    json_t *arr = json_array();
    size_t j;

    for (j = 0; j < a->completed; j++) {
        const corun__job_rec *k = &a->kernels[j];
        double turn = a->turnaround_ns[j];
        json_array_append_new(
            arr,
            json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I}", "submit_us",
                      corun__json_num(k->submit_ns * 1e-3), "start_us",
                      corun__json_num(k->start_ns * 1e-3), "end_us",
                      corun__json_num(k->end_ns * 1e-3), "turnaround_us",
                      corun__json_num(turn * 1e-3), "waiting_us",
                      corun__json_num((turn - k->run_ns) * 1e-3), "run_us",
                      corun__json_num(k->run_ns * 1e-3), "ntt",
                      corun__json_num(turn / solo_mean_ns), "gpu_share",
                      corun__json_num(turn > 0 ? k->capsm_ns / ((double)r->sm_count * turn) : 0.0),
                      "preemptions", (json_int_t)k->preemptions));
        if (a->plain) {
            json_object_set_new(json_array_get(arr, j), "gpu_share", json_null());
        }
    }
    return arr;
}

static json_t *app_json(const sim_report *rep, size_t i)
{
    const corun__app_result *a = &rep->r->apps[i];
    const corun__app *app = &rep->sc->apps[i];
    double solo_mean_ns = rep->solo->mean_ns[i];
    app_view v;
    json_t *ao;

    view_app(rep, i, &v);
    ao = json_pack(
        "{s:s, s:s, s:i, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
        "s:o, s:o, s:I}",
        "name", a->name, "class", a->cls == CORUN_CLASS_LS ? "ls" : "batch", "priority",
        (int)app->attr.priority, "submitted", (json_int_t)a->submitted, "completed",
        (json_int_t)a->completed, "failed", (json_int_t)a->failed, "turnaround_mean_us",
        corun__json_num(a->mean_ns * 1e-3), "turnaround_p50_us", corun__json_num(a->p50_ns * 1e-3),
        "turnaround_p99_us", corun__json_num(a->p99_ns * 1e-3), "ntt",
        corun__json_num(a->mean_ns / solo_mean_ns), "solo_mean_us",
        corun__json_num(solo_mean_ns * 1e-3), "solo_p50_us",
        corun__json_num(rep->solo->p50_ns[i] * 1e-3), "waiting_mean_us",
        corun__json_num(v.waiting_mean_ns * 1e-3), "gpu_share", corun__json_num(v.gpu_share),
        "rate_per_s", corun__json_num(a->rate_per_s), "work_rate", corun__json_num(v.work_rate),
        "preemptions", (json_int_t)a->preemptions);
    json_object_set_new(ao, "weight", json_integer((json_int_t)app->attr.weight));
    if (a->plain) {
        /* Plain grids hold no CapSMs; the hardware decides what they get. */
        json_object_set_new(ao, "gpu_share", json_null());
    }
    json_object_set_new(ao, "kernels", kernels_json(rep->r, a, solo_mean_ns));
    return ao;
}

static void print_json(const sim_report *rep)
{
    json_t *root = json_object(), *apps = json_array();
    size_t i;

    for (i = 0; i < rep->r->napps; i++) {
        json_array_append_new(apps, app_json(rep, i));
    }
    json_object_set_new(root, "scenario", json_string(rep->sc->name));
    json_object_set_new(root, "policy", json_string(rep->policy));
    json_object_set_new(root, "backend", json_string(rep->backend));
    json_object_set_new(root, "span_us", corun__json_num(rep->r->span_ns * 1e-3));
    json_object_set_new(root, "window_us", corun__json_num(rep->r->window_ns * 1e-3));
    json_object_set_new(root, "apps", apps);
    json_object_set_new(root, "antt", corun__json_num(rep->row->antt));
    json_object_set_new(root, "stp", corun__json_num(rep->row->stp));
    json_object_set_new(root, "fairness", corun__json_num(rep->row->fairness));
    json_object_set_new(root, "throughput", corun__json_num(rep->throughput));
    corun__cli_print_json(root);
}

static void print_table(const sim_report *rep)
{
    const corun__run_result *r = rep->r;
    size_t i;

    printf("scenario %s, policy %s, backend %s\n", rep->sc->name, rep->policy, rep->backend);
    printf("%-12s %-5s %6s %12s %12s %12s %7s %10s %6s\n", "app", "class", "done", "mean_us",
           "p50_us", "p99_us", "ntt", "wait_us", "share");
    for (i = 0; i < r->napps; i++) {
        const corun__app_result *a = &r->apps[i];
        app_view v;
        char share[16] = "-";
        view_app(rep, i, &v);
        if (!a->plain) {
            snprintf(share, sizeof(share), "%.3f", v.gpu_share);
        }
        printf("%-12s %-5s %6zu %12.1f %12.1f %12.1f %7.2f %10.1f %6s\n", a->name,
               a->cls == CORUN_CLASS_LS ? "ls" : "batch", a->completed, a->mean_ns * 1e-3,
               a->p50_ns * 1e-3, a->p99_ns * 1e-3, a->mean_ns / rep->solo->mean_ns[i],
               v.waiting_mean_ns * 1e-3, share);
    }
    printf("ANTT %.3f  STP %.3f  fairness %.3f  throughput %.3f\n", rep->row->antt,
           rep->row->stp, rep->row->fairness, rep->throughput);
}

/* The solo references, the run, and its report. Returns an exit code;
 * prints why on failure. */
static int run_and_report(const corun__scenario *sc, corun__run_env *env,
                          const corun__run_opts *o, const char *backend)
{
    corun__solo solo;
    corun__run_result r;
    corun__demo_row row;
    corun__progress pr;
    sim_report rep;
    char why[512] = "";
    size_t i;
    int rc;

    corun__progress_begin(&pr, o->quiet, "corun sim: scenario '%s' under %s on %s, %.0f ms",
                          sc->name, o->systems[0], backend, sc->duration_ns * 1e-6);
    env->progress = corun__progress_fraction;
    env->progress_ctx = &pr;
    corun__progress_step(&pr, "each application alone");
    rc = corun__scenario_solo(sc, env, &solo, why, sizeof(why));
    if (rc == CORUN_OK) {
        corun__progress_step(&pr, o->systems[0]);
        rc = corun__scenario_run(sc, env, o->systems[0], -1, 0, &r, why, sizeof(why));
    }
    if (rc != CORUN_OK) {
        corun__progress_break(&pr);
        fprintf(stderr, "corun sim: %s\n", why);
        return CORUN_EXIT_FAIL;
    }
    corun__progress_end(&pr);
    if (corun__demo_row_calc(sc, &solo, &r, &row) != CORUN_OK) {
        fprintf(stderr, "corun sim: an application completed no kernel\n");
        corun__run_result_free(&r);
        return CORUN_EXIT_FAIL;
    }
    rep = (sim_report){sc, o->systems[0], backend, &solo, &r, &row, 0};
    for (i = 0; i < r.napps; i++) {
        app_view v;
        view_app(&rep, i, &v);
        rep.throughput += v.work_rate;
    }
    if (o->json) {
        print_json(&rep);
    } else {
        print_table(&rep);
    }
    corun__run_result_free(&r);
    return CORUN_EXIT_OK;
}

int corun__cmd_sim(corun__cli *cli, int argc, char **argv)
{
    corun__run_opts o;
    corun__scenario *sc;
    corun__run_env env;
    corun__cli_maker mk;
    char backend[16];
    int rc;

    memset(&o, 0, sizeof(o));
    corun__cli_auto_means_sim(cli);
    if (corun__cli_parse_run_opts(cli, "sim", argc, argv, &o, 0) != 0) {
        return CORUN_EXIT_USAGE;
    }
    if (o.scenario == NULL || o.nsystems != 1) {
        fprintf(stderr, "corun sim: --scenario FILE and --policy NAME are required\n");
        return CORUN_EXIT_USAGE;
    }
    rc = corun__cli_prepare_run(cli, &o, &sc, backend, sizeof(backend), &mk, &env);
    if (rc != CORUN_EXIT_OK) {
        return rc;
    }
    rc = run_and_report(sc, &env, &o, backend);
    free(sc);
    return rc;
}
