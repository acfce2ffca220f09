/*
 * scenario_plan.c — what a run of a scenario will do, estimated before it
 * runs (scenario.h): whether every application arrives at all and the
 * policy would run it, and how much a simulator has to step through.
 *
 * The estimate counts steps: the block-tasks of every launch plus the
 * workers its worker form starts (every worker claims at least once, so a
 * launch of a few tasks on the whole GPU costs its workers, not its tasks).
 * The simulator makes some ten million steps a second on one core. A loop
 * application's launches assume its kernel runs alone on the whole GPU, so
 * the estimate is an upper bound when applications share it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/policy.h"
#include "scenario/scenario.h"

/* Steps a second the simulator makes (the refusal says it in words). */
#define STEPS_PER_S 1e7

double corun__dist_mean(const corun__dist *d)
{
    /* const, exp: a; normal: a (truncation at 0.05 a moves the mean negligibly) */
    return d->kind == CORUN_DIST_UNIFORM ? 0.5 * (d->a + d->b) : d->a;
}

/* Workers per SM of k's worker form on the scenario's GPU (at least 1: a
 * shape that cannot run is refused by the run itself, with its reason). */
static double per_sm(const corun__scenario *sc, const corun__kspec *k)
{
    corun_kernel_shape shape = k->shape;
    corun_occupancy occ;
    char why[128];

    shape.threads_per_block = k->block.x * k->block.y * k->block.z;
    shape.smem_dynamic = k->smem_dynamic;
    if (corun_occupancy_calc(&sc->gpu, &shape, &occ, why, sizeof(why)) != CORUN_OK ||
        occ.blocks_per_sm == 0) {
        return 1;
    }
    return occ.blocks_per_sm;
}

static double kernel_tasks(const corun__kspec *k)
{
    return (double)k->grid.x * k->grid.y * k->grid.z;
}

uint32_t corun__scenario_ls_need(const corun__scenario *sc, const corun__settings *set)
{
    const uint32_t total = sc->gpu.sm_count;
    double need = 0, cap = set->smguard_ls_cap * total;
    size_t i;

    for (i = 0; i < sc->napps; i++) {
        const corun__app *a = &sc->apps[i];
        size_t j;
        for (j = 0; corun__attr_ls(&a->attr) && j < corun__app_nkernels(a); j++) {
            const corun__kspec *k = corun__app_kernel(a, j);
            const double n = ceil(kernel_tasks(k) / per_sm(sc, k));
            need = n > need ? n : need;
        }
    }
    if (need == 0) {
        return 0;
    }
    if (cap > 0 && need > cap) {
        need = floor(cap);
    }
    if (need < set->reserve_capsm) {
        need = set->reserve_capsm;
    }
    return need < total ? (uint32_t)need : total - 1;
}

/* Steps of one launch of k with `tasks` block-tasks. */
static double launch_steps(const corun__scenario *sc, const corun__kspec *k, double tasks)
{
    return tasks + per_sm(sc, k) * sc->gpu.sm_count;
}

/* Steps of one request of app: each of its kernels launched once. */
static double request_steps(const corun__scenario *sc, const corun__app *app)
{
    double n = 0;
    size_t j;

    for (j = 0; j < corun__app_nkernels(app); j++) {
        const corun__kspec *k = corun__app_kernel(app, j);
        n += launch_steps(sc, k, kernel_tasks(k));
    }
    return n;
}

/* When app's first launch arrives, ns from the start. */
static double first_arrival_ns(const corun__app *app)
{
    const corun__arrival *ar = &app->arrival;

    return ar->kind == CORUN_ARRIVAL_AT ? ar->at_ns[0] : ar->start_ns;
}

/* Expected launches of app in a window of window_ns, before caps. */
static double launches_in(const corun__scenario *sc, const corun__app *app,
                          const corun__settings *set, double window_ns)
{
    const corun__arrival *ar = &app->arrival;
    double left = window_ns - first_arrival_ns(app), each = 0;
    size_t i, n = 0;

    if (left <= 0) {
        return 0;
    }
    switch (ar->kind) {
    case CORUN_ARRIVAL_AT:
        for (i = 0; i < ar->nat; i++) {
            n += ar->at_ns[i] < window_ns;
        }
        return (double)n;
    case CORUN_ARRIVAL_LOOP:
        /* alone on the whole GPU: waves of tasks, plus each launch's delays */
        for (i = 0; i < corun__app_nkernels(app); i++) {
            const corun__kspec *k = corun__app_kernel(app, i);
            each += ceil(kernel_tasks(k) / (per_sm(sc, k) * sc->gpu.sm_count)) *
                        corun__dist_mean(&k->task_ns) +
                    (set->sim_launch_us + set->sim_notify_us) * 1e3;
        }
        each += ar->think_ns;
        break;
    case CORUN_ARRIVAL_RANDOM:
    case CORUN_ARRIVAL_PERIODIC:
    default:
        each = corun__dist_mean(&ar->interval);
        break;
    }
    return ceil(left / fmax(each, 1.0));
}

void corun__scenario_plan(const corun__scenario *sc, const corun__settings *set, int only_app,
                          uint32_t max_launches, corun__plan *out)
{
    size_t i;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < sc->napps; i++) {
        const corun__app *app = &sc->apps[i];
        double n;
        if (only_app >= 0 && (int)i != only_app) {
            continue;
        }
        n = launches_in(sc, app, set, sc->duration_ns);
        if (app->arrival.count > 0) {
            n = fmin(n, app->arrival.count);
        }
        if (max_launches > 0) {
            n = fmin(n, max_launches);
        }
        out->launches[i] = n;
        out->steps += n * request_steps(sc, app);
    }
}

/* A refusal for `steps` over the limit; `what` says of what. */
static int too_many_steps(double steps, const corun__settings *set, const char *what,
                          char *why, size_t why_len)
{
    snprintf(why, why_len,
             "%s would simulate about %.2g steps (block-tasks plus workers started): some %.0f "
             "min at ten million a second, more than CORUN_SIM_MAX_STEPS (%llu) allows; make it "
             "smaller (duration_ms, grid) or raise the limit (--set sim_max_steps=N, 0 = none)",
             what, steps, ceil(steps / STEPS_PER_S / 60), (unsigned long long)set->sim_max_steps);
    return CORUN_ERANGE;
}

int corun__scenario_check(const corun__scenario *sc, const corun__settings *set,
                          const corun__policy_ops *pol, int only_app, uint32_t max_launches,
                          int simulated, char *why, size_t why_len)
{
    corun__settings run_set = *set;
    corun__plan plan;
    char what[128], refusal[384];
    size_t i;

    if (sc->has_reserve) {
        run_set.reserve_capsm = sc->reserve_capsm; /* as corun__scenario_run sets it */
    }
    corun__scenario_plan(sc, set, only_app, max_launches, &plan);
    for (i = 0; i < sc->napps; i++) {
        const corun__app *app = &sc->apps[i];
        if (only_app >= 0 && (int)i != only_app) {
            continue;
        }
        if (plan.launches[i] == 0) {
            snprintf(why, why_len,
                     "app '%s' never arrives: its first launch (at %.0f us) is at or after the "
                     "end of arrivals (duration_ms %g)",
                     app->name, first_arrival_ns(app) * 1e-3, sc->duration_ns * 1e-6);
            return CORUN_EINVAL;
        }
        if (pol != NULL && pol->admit != NULL &&
            pol->admit(&run_set, &sc->gpu, &app->attr, refusal, sizeof(refusal)) != CORUN_OK) {
            snprintf(why, why_len, "app '%s': %s", app->name, refusal);
            return CORUN_ERANGE;
        }
    }
    if (simulated && set->sim_max_steps > 0 && plan.steps > (double)set->sim_max_steps) {
        snprintf(what, sizeof(what), "a run of scenario '%s'", sc->name);
        return too_many_steps(plan.steps, set, what, why, why_len);
    }
    return CORUN_OK;
}

int corun__scenario_check_train(const corun__scenario *sc, const corun__settings *set,
                                const corun__train_opts *o, int only_app, int simulated,
                                char *why, size_t why_len)
{
    double steps = 0;
    char what[128];
    size_t i;

    if (!simulated || set->sim_max_steps == 0) {
        return CORUN_OK;
    }
    for (i = 0; i < sc->napps; i++) {
        size_t j;
        if (only_app >= 0 && (int)i != only_app) {
            continue;
        }
        for (j = 0; j < corun__app_nkernels(&sc->apps[i]); j++) {
            const corun__kspec *k = corun__app_kernel(&sc->apps[i], j);
            double tasks = kernel_tasks(k);
            steps += o->runs * launch_steps(sc, k, tasks * 0.5 * (o->min_scale + o->max_scale)) +
                     o->profile_runs * launch_steps(sc, k, tasks);
        }
    }
    if (steps > (double)set->sim_max_steps) {
        snprintf(what, sizeof(what), "profiling scenario '%s'", sc->name);
        return too_many_steps(steps, set, what, why, why_len);
    }
    return CORUN_OK;
}
