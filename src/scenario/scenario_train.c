/*
 * scenario_train.c — profiling runs: each application's kernel alone on the
 * GPU, to record the solo durations FLEP's duration model is trained on and
 * the achieved rates Slate classifies kernels by (scenario.h).
 *
 * FLEP trains on 100 randomly generated inputs per kernel (§4.2). Here an
 * "input" is a launch of the app's kernel whose grid (x dimension) and
 * size hint are scaled by a random factor, so the model sees the same
 * features a scheduled launch will have. Kernels run in their worker form on
 * all CapSMs under the `manual` policy, one launch at a time, so every
 * recorded duration is a solo one.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "core/duration_model.h"
#include "core/policy.h"
#include "core/sched.h"
#include "scenario/scenario.h"

void corun__train_opts_default(corun__train_opts *o, const corun__settings *set)
{
    memset(o, 0, sizeof(*o));
    o->runs = (uint32_t)set->profile_train_runs;
    o->min_scale = 0.1;
    o->max_scale = 1.0;
    o->profile_runs = 3;
    o->rate_windows = 3;
    o->seed = set->seed;
}

typedef struct solo_done {
    int done;
} solo_done;

static void on_solo_done(corun__sched *s, corun__job *k, void *user)
{
    ((solo_done *)user)->done = 1;
}

/* Runs one launch alone and waits for it. *dur_ns is submission to
 * completion as the host sees it; *per_sm the kernel's workers per SM. */
static int run_alone(corun__sched *s, const corun__kspec *spec, const corun_launch_attr *attr,
                     double *dur_ns, uint32_t *per_sm, char *why, size_t why_len)
{
    solo_done d = {0};
    corun__job *k = NULL;
    uint64_t give_up;
    int rc;

    rc = corun__sched_submit(s, spec, attr, on_solo_done, &d, &k, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    /* A solo run that takes a simulated (or real) hour is a bug, not a
     * measurement. */
    give_up = corun__sched_now(s) + 3600ull * 1000000000ull;
    while (!d.done) {
        if (corun__sched_now(s) >= give_up) {
            snprintf(why, why_len, "kernel '%s' did not finish alone within an hour", spec->name);
            return CORUN_ETIMEDOUT;
        }
        rc = corun__sched_step(s, give_up);
        if (rc != CORUN_OK) {
            snprintf(why, why_len, "backend failed while profiling '%s': %s", spec->name,
                     corun_strerror(rc));
            return rc;
        }
        if (!d.done && k->state == CORUN_JS_PAUSED) {
            /* Nothing halted it, and under the manual policy nothing would
             * resume it: its workers left on their own (how a control
             * block that never arrived showed, cuda_backend.c's
             * meter_settle). Waiting would be waiting forever. */
            snprintf(why, why_len,
                     "kernel '%s' stopped alone with %llu of %llu tasks done: its workers "
                     "left without being told to", spec->name,
                     (unsigned long long)k->done_tasks, (unsigned long long)k->tasks);
            return CORUN_ESTATE; /* the scheduler's destruction frees it */
        }
    }
    if (k->state != CORUN_JS_DONE) {
        snprintf(why, why_len, "kernel '%s' failed while profiling: %s", spec->name,
                 corun_strerror(k->status));
        rc = k->status != CORUN_OK ? k->status : CORUN_ELAUNCH;
        corun__sched_release(s, k);
        return rc;
    }
    *dur_ns = (double)(k->t_end - k->t_submit);
    *per_sm = k->per_sm;
    corun__sched_release(s, k);
    return CORUN_OK;
}

void corun__scenario_prun(corun__prun *r, const char *backend, const corun__kspec *k,
                          const corun_launch_attr *attr, double dur_ns)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->backend, sizeof(r->backend), "%s", backend);
    snprintf(r->kernel, sizeof(r->kernel), "%s", k->name);
    r->grid = (double)k->grid.x * k->grid.y * k->grid.z;
    r->block = (double)k->block.x * k->block.y * k->block.z;
    r->size = attr->size_hint;
    r->smem = (double)k->shape.smem_static + k->smem_dynamic;
    r->dur_ns = dur_ns;
}

__attribute__((format(printf, 3, 4))) static void say(void (*log)(void *, const char *), void *ctx,
                                                     const char *fmt, ...)
{
    char line[1200];
    va_list ap;

    if (log == NULL) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    log(ctx, line);
}

/* Slate's rates of kernel k: measured by the backend where it can, else
 * from the declared work over the measured solo duration dur_ns. */
static int kernel_rates(corun__backend *be, const corun__kspec *k, const corun__train_opts *o,
                        uint32_t sms, uint32_t per_sm, double dur_ns, double *flop_frac,
                        double *bw_frac, char *why, size_t why_len)
{
    corun__rates r;
    int rc;

    if (be->ops->rates == NULL) {
        double tasks = (double)k->grid.x * k->grid.y * k->grid.z;
        /* The tasks' solo time spread over every worker slot of the GPU:
         * how long the kernel would take if nothing held it back. */
        double ideal_ns = tasks * corun__dist_mean(&k->task_ns) / ((double)per_sm * sms);
        *flop_frac = k->compute * ideal_ns / dur_ns;
        *bw_frac = k->mem_bw * ideal_ns / dur_ns;
        return CORUN_OK;
    }
    rc = be->ops->rates(be, k, &r, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    say(o->log, o->log_ctx,
        "rates of '%s' alone: %.3g TFLOP/s = %.1f%% of %.3g, DRAM %.3g TB/s = %.1f%% of %.3g "
        "(%s)",
        k->name, r.flops_per_s * 1e-12, 100 * r.flop_frac, r.peak_flops * 1e-12,
        r.bytes_per_s * 1e-12, 100 * r.bw_frac, r.peak_bytes_per_s * 1e-12, r.source);
    *flop_frac = r.flop_frac;
    *bw_frac = r.bw_frac;
    return CORUN_OK;
}

/* Tells env's progress that done of the app's training runs are over. */
static void report(const corun__run_env *env, const corun__train_opts *o, uint32_t done)
{
    const uint32_t all = o->runs + o->profile_runs + o->rate_windows;

    if (env->progress != NULL && all > 0) {
        env->progress(env->progress_ctx, (double)done / (double)all);
    }
}

/* The training runs and the profile of kernel `kernel` of app's requests
 * (each kernel of a chain is trained alone, as its own kernel). */
static int train_kernel(corun__sched *s, corun__backend *be, const corun__app *app,
                        const corun__kspec *kernel, const corun__train_opts *o,
                        const corun__run_env *env, corun__rng *rng, corun__pstore *out, char *why,
                        size_t why_len)
{
    const char *backend = corun__sched_backend(s);
    const uint32_t sms = corun__sched_gpu(s)->sm_count;
    corun_launch_attr attr = app->attr;
    uint32_t i, per_sm = 0;
    double dur, sum = 0;
    int rc;

    /* Alone means alone: no reservation or quota narrows the GPU. */
    attr.capsm = 0;
    for (i = 0; i < o->runs; i++) {
        corun__kspec k = *kernel;
        corun_launch_attr a = attr;
        corun__prun r;
        double f = corun__rng_uniform(rng, o->min_scale, o->max_scale);
        k.grid.x = (uint32_t)fmax(1.0, floor(kernel->grid.x * f + 0.5));
        a.size_hint = app->attr.size_hint * ((double)k.grid.x / kernel->grid.x);
        rc = run_alone(s, &k, &a, &dur, &per_sm, why, why_len);
        if (rc != CORUN_OK) {
            return rc;
        }
        corun__scenario_prun(&r, backend, &k, &a, dur);
        rc = corun__pstore_add_run(out, &r);
        if (rc != CORUN_OK) {
            return rc;
        }
        report(env, o, i + 1);
    }
    for (i = 0; i < o->profile_runs; i++) {
        rc = run_alone(s, kernel, &attr, &dur, &per_sm, why, why_len);
        if (rc != CORUN_OK) {
            return rc;
        }
        sum += dur;
        report(env, o, o->runs + i + 1);
    }
    if (o->profile_runs > 0) {
        corun__pprof p;
        memset(&p, 0, sizeof(p));
        snprintf(p.backend, sizeof(p.backend), "%s", backend);
        snprintf(p.kernel, sizeof(p.kernel), "%s", kernel->name);
        p.dur_ns = sum / o->profile_runs;
        p.samples = o->profile_runs;
        rc = kernel_rates(be, kernel, o, sms, per_sm, p.dur_ns, &p.flop_frac, &p.bw_frac, why,
                          why_len);
        if (rc == CORUN_ENOTSUP) {
            /* a real kernel on the GPU: its solo runs are kept, no profile */
            say(o->log, o->log_ctx, "no intensity profile of '%s' on %s: %s", kernel->name,
                backend, why);
            why[0] = '\0';
            return CORUN_OK;
        }
        if (rc != CORUN_OK) {
            return rc;
        }
        rc = corun__pstore_add_prof(out, &p);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    return CORUN_OK;
}

/* Kernel j of app i's rate alone at its own size, as a program that launches
 * it back to back gets it: o->rate_windows windows of it alone in a closed
 * loop of launches (corun__scenario_rate_alone), each recorded as a run at
 * the kernel's size whose duration is the window's time per launch. */
static int loop_rate(const corun__scenario *sc, const corun__run_env *env,
                     const corun__train_opts *o, const char *backend, size_t i, size_t j,
                     corun__pstore *out, char *why, size_t why_len)
{
    corun__scenario *p = malloc(sizeof(*p));
    corun__run_env quiet = *env;
    corun__app *a;
    uint32_t w;
    int rc = CORUN_OK;

    if (p == NULL) {
        return CORUN_ENOMEM;
    }
    *p = *sc;
    a = &p->apps[0];
    *a = sc->apps[i];
    a->kernel = *corun__app_kernel(&sc->apps[i], j);
    a->nthen = 0;
    a->attr.capsm = 0; /* alone means alone, as in train_kernel */
    memset(&a->arrival, 0, sizeof(a->arrival));
    a->arrival.kind = CORUN_ARRIVAL_LOOP;
    p->napps = 1;
    /* the scenario's own window where it has one, within [10, 50] ms */
    p->duration_ns = sc->duration_ns > 0 ? fmin(fmax(sc->duration_ns, 10e6), 50e6) : 20e6;
    quiet.progress = NULL; /* the training's progress, not the window's */
    for (w = 0; w < o->rate_windows && rc == CORUN_OK; w++) {
        const double tasks = (double)a->kernel.grid.x * a->kernel.grid.y * a->kernel.grid.z;
        double per_ns;
        corun__prun run;
        rc = corun__scenario_rate_alone(p, &quiet, &per_ns, why, why_len);
        if (rc == CORUN_OK) {
            corun__scenario_prun(&run, backend, &a->kernel, &a->attr, tasks / per_ns);
            rc = corun__pstore_add_run(out, &run);
        }
        report(env, o, o->runs + o->profile_runs + w + 1);
    }
    free(p);
    return rc;
}

int corun__scenario_train(const corun__scenario *sc, const corun__run_env *env,
                          const corun__train_opts *o, int only_app, corun__pstore *out, char *why,
                          size_t why_len)
{
    corun__sched_opts so;
    corun__backend *be = NULL;
    corun__sched *s = NULL;
    corun__rng rng;
    char backend[16] = "";
    size_t i, j;
    int rc;

    if (only_app >= (int)sc->napps || !(o->min_scale > 0) || o->max_scale < o->min_scale) {
        return CORUN_EINVAL;
    }
    rc = env->make_backend(env->make_ctx, sc, o->seed, &be, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    rc = corun__scenario_check_train(sc, &env->settings, o, only_app,
                                     (be->ops->caps & CORUN_BE_VIRTUAL_TIME) != 0, why, why_len);
    if (rc != CORUN_OK) {
        goto out_destroy_backend;
    }
    memset(&so, 0, sizeof(so));
    so.backend = be;
    so.policy = corun__policy_find("manual");
    so.settings = env->settings;
    rc = corun__sched_create(&so, &s);
    if (rc != CORUN_OK) {
        goto out_destroy_backend;
    }
    corun__rng_seed(&rng, o->seed * 7919u + 17u);
    for (i = 0; i < sc->napps && rc == CORUN_OK; i++) {
        if (only_app >= 0 && (int)i != only_app) {
            continue;
        }
        for (j = 0; j < corun__app_nkernels(&sc->apps[i]) && rc == CORUN_OK; j++) {
            rc = train_kernel(s, be, &sc->apps[i], corun__app_kernel(&sc->apps[i], j), o, env,
                              &rng, out, why, why_len);
        }
    }
    snprintf(backend, sizeof(backend), "%s", corun__sched_backend(s));
    corun__sched_destroy(s);
out_destroy_backend:
    be->ops->destroy(be);
    for (i = 0; i < sc->napps && rc == CORUN_OK && o->rate_windows > 0; i++) {
        if (only_app < 0 || (int)i == only_app) {
            for (j = 0; j < corun__app_nkernels(&sc->apps[i]) && rc == CORUN_OK; j++) {
                rc = loop_rate(sc, env, o, backend, i, j, out, why, why_len);
            }
        }
    }
    return rc;
}

/* Whether the store holds a rate of kernel k alone at its own size. */
static bool has_own_run(const corun__pstore *ps, const char *backend, const corun__kspec *k)
{
    return corun__pstore_own_rate(ps, backend, k->name,
                                   (double)k->grid.x * k->grid.y * k->grid.z,
                                   (double)k->block.x * k->block.y * k->block.z) > 0;
}

/* What the log calls app a's profiling: its kernel, or the application of a
 * chain. */
static const char *app_what(const corun__app *a)
{
    return a->nthen > 0 ? a->name : a->kernel.name;
}

int corun__scenario_ensure_profiles(const corun__scenario *sc, const corun__run_env *env,
                                    const char *backend, const char *store_path, unsigned needs,
                                    void (*log)(void *ctx, const char *line), void *log_ctx,
                                    char *why, size_t why_len)
{
    corun__pstore ps, add;
    corun__train_opts dur, prof, own;
    char note[1024] = "";
    bool rated[CORUN_SCENARIO_MAX_APPS]; /* its rates alone measured here */
    unsigned rounds, r;
    size_t i, j;
    int rc;

    if (needs == 0) {
        return CORUN_OK;
    }
    rc = corun__pstore_load(store_path, &ps, note, sizeof(note));
    if (note[0] != '\0') {
        say(log, log_ctx, "%s", note);
    }
    if (rc != CORUN_OK) {
        snprintf(why, why_len, "%s", note[0] ? note : corun_strerror(rc));
        return rc;
    }
    corun__train_opts_default(&dur, &env->settings);
    dur.profile_runs = 0;
    dur.rate_windows = 0;
    corun__train_opts_default(&prof, &env->settings);
    prof.runs = 0;
    if (!(needs & CORUN_POLICY_NEEDS_RATES)) {
        prof.rate_windows = 0; /* a profile alone (Slate's) needs no rate */
    }
    prof.log = log;
    prof.log_ctx = log_ctx;
    own = prof; /* the loop windows alone */
    own.profile_runs = 0;
    corun__pstore_init(&add);
    memset(rated, 0, sizeof(rated));
    for (i = 0; i < sc->napps && rc == CORUN_OK; i++) {
        const char *name = sc->apps[i].kernel.name;
        const char *what = app_what(&sc->apps[i]);
        bool lack_runs = false, lack_prof = false, lack_rates = false;
        int dup = 0;
        for (j = 0; j < i; j++) {
            dup |= strcmp(sc->apps[j].kernel.name, name) == 0;
        }
        if (dup) {
            continue; /* one kernel, one model and one profile */
        }
        /* an application is trained whole: every kernel of its requests */
        for (j = 0; j < corun__app_nkernels(&sc->apps[i]) && rc == CORUN_OK; j++) {
            const char *kn = corun__app_kernel(&sc->apps[i], j)->name;
            const corun__prun **runs;
            size_t n = 0;
            if (needs & CORUN_POLICY_NEEDS_DURATIONS) {
                rc = corun__dm_runs_of(&ps, backend, kn, &runs, &n);
                free(runs);
                lack_runs |= rc == CORUN_OK && n < CORUN_DM_MIN_RUNS;
            }
            lack_prof |= (needs & CORUN_POLICY_NEEDS_PROFILES) &&
                         corun__pstore_find_prof(&ps, backend, kn) == NULL;
            lack_rates |= (needs & CORUN_POLICY_NEEDS_RATES) &&
                          !has_own_run(&ps, backend, corun__app_kernel(&sc->apps[i], j));
        }
        if (rc == CORUN_OK && lack_runs) {
            say(log, log_ctx, "profiling '%s' on %s: %u solo runs at random sizes", what,
                backend, dur.runs);
            rc = corun__scenario_train(sc, env, &dur, (int)i, &add, why, why_len);
        }
        if (rc == CORUN_OK && lack_prof) {
            say(log, log_ctx, "profiling '%s' on %s: its intensity", what, backend);
            rc = corun__scenario_train(sc, env, &prof, (int)i, &add, why, why_len);
        } else if (rc == CORUN_OK && lack_rates) {
            say(log, log_ctx, "profiling '%s' on %s: %u windows of a loop at its own size", what,
                backend, own.rate_windows);
            rc = corun__scenario_train(sc, env, &own, (int)i, &add, why, why_len);
        }
        rated[i] = prof.rate_windows > 0 && (lack_prof || lack_rates);
    }
    /* Rates alone measured in rounds, every kernel once a round, until the
     * store holds what corun__pstore_own_rate reads: a slow stretch of the
     * GPU (seconds, on the H100) then slows one round, not all of a
     * kernel's windows. */
    rounds = prof.rate_windows > 0 ? CORUN_PSTORE_OWN_LATEST / prof.rate_windows : 0;
    for (r = 1; r < rounds && rc == CORUN_OK; r++) {
        for (i = 0; i < sc->napps && rc == CORUN_OK; i++) {
            if (!rated[i]) {
                continue;
            }
            say(log, log_ctx, "profiling '%s' on %s: %u windows of a loop at its own size "
                "(round %u of %u)", app_what(&sc->apps[i]), backend, own.rate_windows, r + 1,
                rounds);
            rc = corun__scenario_train(sc, env, &own, (int)i, &add, why, why_len);
        }
    }
    corun__pstore_free(&ps);
    if (rc == CORUN_OK && (add.nruns > 0 || add.nprofs > 0)) {
        note[0] = '\0';
        rc = corun__pstore_merge(store_path, &add, note, sizeof(note));
        if (note[0] != '\0') {
            say(log, log_ctx, "%s", note);
        }
        if (rc != CORUN_OK) {
            snprintf(why, why_len, "%s", note[0] ? note : corun_strerror(rc));
        }
    }
    corun__pstore_free(&add);
    return rc;
}
