/*
 * scenario_run.c — drives a scheduler with a scenario's applications and
 * measures what each application saw.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "core/metrics.h"
#include "core/policy.h"
#include "api/remote.h"
#include "core/sched.h"
#include "scenario/scenario.h"

#define NEVER UINT64_MAX

/* One arrival of an application: its kernels (one, or a "kernels" chain),
 * each submitted when the one before has finished. */
typedef struct request {
    struct app_state *a;
    struct request *next;     /* in its application's ready or free list */
    struct request *all;      /* every request of the run, to free them */
    uint32_t step;            /* its kernel in flight (or, ready, to submit) */
    uint64_t t_submit;        /* arrival */
    uint64_t t_start;         /* its first kernel's first launch */
    double run_ns, capsm_ns;  /* over its kernels */
    uint32_t preemptions;
    bool plain;
} request;

typedef struct app_state {
    const corun__app *app;
    corun__app_result *res;
    size_t cap;
    uint64_t next_arrival;
    uint32_t launched;        /* requests */
    uint32_t inflight;        /* requests not ended */
    request *ready;           /* requests whose next kernel is due, oldest first */
    request *ready_tail;
    request *free;
    size_t at_idx;
    uint64_t first_arrival;   /* valid once launched > 0 (the sim clock starts at 0) */
    uint64_t last_completion;
    corun__rng rng;
    struct run_ctx *run;
} app_state;

typedef struct run_ctx {
    corun__sched *s;
    app_state apps[CORUN_SCENARIO_MAX_APPS];
    size_t napps;
    uint64_t t0;
    uint64_t stop_arrivals;
    uint32_t max_launches;
    uint32_t sm_count;
    bool window_closed;       /* the arrival window's GPU shares are taken */
    int status;
    corun__remote *remote;    /* a GPU corund coordinates: the SMs it gives this run */
    corun__backend *be;       /* the run's (its control blocks go to corund) */
    request *requests;        /* every request made (request.all) */
    uint64_t window;          /* the window applied, lo | hi << 32 */
} run_ctx;

/* How often a coordinated run looks at its window. */
#define WINDOW_POLL_NS 5000000ull

/* The scheduler's observer: a coordinated run's daemon hears of each job's
 * runs, halts and resizes (rc->remote is set before any job). */
static void observe_job(void *p, const corun__job *k, corun__job_change what)
{
    const run_ctx *rc = p;

    if (rc->remote != NULL) {
        corun__remote_count_change(rc->remote, k, (int)what);
    }
}

/* A coordinated run's kernels move to the SMs corund gives it now. */
static void follow_window(run_ctx *rc)
{
    (void)corun__remote_follow(rc->remote, rc->s, &rc->window);
    corun__remote_share_ctl(rc->remote, rc->be);
}

static uint64_t draw_ns(corun__rng *r, const corun__dist *d)
{
    double v;

    switch (d->kind) {
    case CORUN_DIST_UNIFORM:
        v = corun__rng_uniform(r, d->a, d->b);
        break;
    case CORUN_DIST_EXP:
        v = corun__rng_exp(r, d->a);
        break;
    case CORUN_DIST_NORMAL:
        v = corun__rng_normal(r, d->a, d->b);
        if (v < 0.05 * d->a) {
            v = 0.05 * d->a;
        }
        break;
    case CORUN_DIST_CONST:
    default:
        v = d->a;
        break;
    }
    return v < 1 ? 1 : (uint64_t)v;
}

static uint32_t launch_cap(const app_state *a)
{
    uint32_t cap = a->app->arrival.count;

    if (a->app->arrival.kind == CORUN_ARRIVAL_AT && (cap == 0 || cap > a->app->arrival.nat)) {
        cap = (uint32_t)a->app->arrival.nat;
    }
    if (a->run->max_launches > 0 && (cap == 0 || cap > a->run->max_launches)) {
        cap = a->run->max_launches;
    }
    return cap;
}

/* When the next launch of a is due after one at time `now`; NEVER if none. */
static uint64_t next_after(app_state *a, uint64_t now)
{
    const corun__arrival *ar = &a->app->arrival;
    uint32_t cap = launch_cap(a);
    uint64_t t;

    if (cap != 0 && a->launched >= cap) {
        return NEVER;
    }
    switch (ar->kind) {
    case CORUN_ARRIVAL_LOOP:
        return NEVER; /* decided at completion */
    case CORUN_ARRIVAL_RANDOM:
    case CORUN_ARRIVAL_PERIODIC:
        t = now + draw_ns(&a->rng, &ar->interval);
        break;
    case CORUN_ARRIVAL_AT:
    default:
        if (a->at_idx >= ar->nat) {
            return NEVER;
        }
        t = a->run->t0 + (uint64_t)ar->at_ns[a->at_idx];
        break;
    }
    return t >= a->run->stop_arrivals ? NEVER : t;
}

static int push_completed(app_state *a, const request *q, const corun__job *k)
{
    corun__app_result *r = a->res;
    const double t0 = (double)a->run->t0;
    corun__job_rec *rec;

    if (r->completed == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        double *v = realloc(r->turnaround_ns, cap * sizeof(*v));
        corun__job_rec *kr;
        if (v == NULL) {
            return CORUN_ENOMEM;
        }
        r->turnaround_ns = v;
        kr = realloc(r->kernels, cap * sizeof(*kr));
        if (kr == NULL) {
            return CORUN_ENOMEM;
        }
        r->kernels = kr;
        a->cap = cap;
    }
    rec = &r->kernels[r->completed];
    rec->submit_ns = (double)q->t_submit - t0;
    rec->start_ns = (double)q->t_start - t0;
    rec->end_ns = (double)k->t_end - t0;
    rec->run_ns = q->run_ns;
    rec->capsm_ns = q->capsm_ns;
    rec->preemptions = q->preemptions;
    r->capsm_ns += rec->capsm_ns;
    r->plain |= q->plain;
    r->turnaround_ns[r->completed++] = (double)(k->t_end - q->t_submit);
    return CORUN_OK;
}

/* A request ends: back to its application's free list. */
static void request_end(app_state *a, request *q)
{
    a->inflight--;
    q->next = a->free;
    a->free = q;
}

/* A kernel of a request has ended: the request goes on to its next kernel
 * (submitted by the driver, not from inside the scheduler's step) or ends. */
static void on_done(corun__sched *s, corun__job *k, void *user)
{
    request *q = user;
    app_state *a = q->a;
    uint64_t now = k->t_end;

    corun__remote_count_job(a->run->remote, k);
    a->res->preemptions += k->preemptions;
    q->run_ns += (double)k->run_ns;
    /* A plain grid holds no CapSMs; while it runs it has the whole GPU to
     * its name (other grids get only what it leaves over). */
    q->capsm_ns += k->plain ? (double)k->run_ns * a->run->sm_count : k->capsm_ns;
    q->preemptions += k->preemptions;
    q->plain |= k->plain;
    if (q->step == 0) {
        q->t_start = k->t_start;
    }
    if (k->state == CORUN_JS_DONE) {
        a->res->tasks_done += (double)k->tasks;
        if (!a->run->window_closed) {
            a->res->window_capsm_ns += k->plain ? (double)k->run_ns * a->run->sm_count
                                                : k->capsm_ns;
            a->res->window_tasks += (double)k->tasks;
        }
        if (++q->step < corun__app_nkernels(a->app)) {
            q->next = NULL;
            if (a->ready_tail != NULL) {
                a->ready_tail->next = q;
            } else {
                a->ready = q;
            }
            a->ready_tail = q;
            corun__sched_release(s, k);
            return;
        }
        if (push_completed(a, q, k) != CORUN_OK &&
            a->run->status == CORUN_OK) {
            a->run->status = CORUN_ENOMEM;
        }
    } else {
        a->res->failed++;
        if (a->run->status == CORUN_OK) {
            a->run->status = k->status != CORUN_OK ? k->status : CORUN_ELAUNCH;
        }
    }
    a->last_completion = now;
    request_end(a, q);
    if (a->app->arrival.kind == CORUN_ARRIVAL_LOOP) {
        uint32_t cap = launch_cap(a);
        uint64_t t = now + (uint64_t)a->app->arrival.think_ns;
        a->next_arrival = (t < a->run->stop_arrivals && (cap == 0 || a->launched < cap)) ? t : NEVER;
    }
    corun__sched_release(s, k);
}

/* Submits kernel q->step of request q. */
static int submit_step(run_ctx *rc, app_state *a, request *q, char *why, size_t why_len)
{
    corun__job *k = NULL;
    int st;

    if (rc->remote != NULL) {
        corun__remote_count_launch(rc->remote, corun__attr_ls(&a->app->attr),
                                   corun__app_kernel(a->app, q->step)->name);
    }
    st = corun__sched_submit(rc->s, corun__app_kernel(a->app, q->step), &a->app->attr, on_done, q,
                             &k, why, why_len);
    if (st != CORUN_OK && why != NULL && why_len > 0) {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "app '%s': %s", a->app->name, why);
        snprintf(why, why_len, "%s", tmp);
    }
    return st;
}

/* A new request of a (its first kernel submitted). */
static int submit(run_ctx *rc, app_state *a, char *why, size_t why_len)
{
    uint64_t now = corun__sched_now(rc->s);
    request *q = a->free;
    int st;

    if (q != NULL) {
        a->free = q->next;
    } else if ((q = malloc(sizeof(*q))) == NULL) {
        return CORUN_ENOMEM;
    } else {
        q->all = rc->requests;
        rc->requests = q;
    }
    memset(&q->step, 0, sizeof(*q) - offsetof(request, step));
    q->a = a;
    q->t_submit = now;
    a->launched++;
    a->res->submitted++;
    a->inflight++;
    if (a->launched == 1) {
        a->first_arrival = now;
    }
    if (a->app->arrival.kind == CORUN_ARRIVAL_AT) {
        a->at_idx++;
    }
    a->next_arrival = next_after(a, now);
    st = submit_step(rc, a, q, why, why_len);
    if (st != CORUN_OK) {
        a->res->submitted--;
        request_end(a, q);
    }
    return st;
}

/* The arrival window ends: every application's CapSM-time and block-tasks
 * done so far, kernels still running included, are its share of the window
 * and its work in it. (A plain grid's progress cannot be read: its running
 * kernel counts no tasks.) */
static void close_window(run_ctx *rc, corun__run_result *out)
{
    uint64_t now = corun__sched_now(rc->s);
    corun__job *k;

    for (k = corun__sched_first(rc->s); k != NULL; k = k->next) {
        const request *q = k->user;
        app_state *a = q != NULL ? q->a : NULL;
        double part;
        if (k->state == CORUN_JS_DONE || k->state == CORUN_JS_FAILED || a == NULL) {
            continue;
        }
        if (k->plain) {
            part = k->state == CORUN_JS_RUNNING ? (double)(now - k->t_start) * rc->sm_count : 0;
        } else {
            corun_progress p;
            part = corun__sched_capsm_ns(rc->s, k);
            if (k->state != CORUN_JS_WAITING && corun__sched_progress(rc->s, k, &p) == CORUN_OK) {
                a->res->window_tasks += (double)p.done;
            }
        }
        a->res->window_capsm_ns += part;
    }
    out->window_ns = (double)(now - rc->t0);
    rc->window_closed = true;
}

static void summarize(corun__app_result *r, const app_state *a)
{
    double *tmp;

    r->span_ns = a->last_completion > a->first_arrival
                     ? (double)(a->last_completion - a->first_arrival)
                     : 0;
    r->rate_per_s = r->span_ns > 0 ? (double)r->completed / (r->span_ns * 1e-9) : 0;
    if (r->completed == 0) {
        return;
    }
    tmp = malloc(r->completed * sizeof(*tmp));
    if (tmp == NULL) {
        return;
    }
    memcpy(tmp, r->turnaround_ns, r->completed * sizeof(*tmp));
    r->mean_ns = corun__mean(tmp, r->completed);
    r->p50_ns = corun__percentile(tmp, r->completed, 50);
    r->p99_ns = corun__percentile(tmp, r->completed, 99);
    r->max_ns = tmp[r->completed - 1];
    free(tmp);
}

/* Each application's state and first arrival; only_app >= 0 keeps the
 * others from arriving at all. */
static void init_apps(run_ctx *rc, const corun__scenario *sc, int only_app, uint64_t seed,
                      corun__run_result *out)
{
    size_t i;

    out->napps = sc->napps;
    for (i = 0; i < sc->napps; i++) {
        app_state *a = &rc->apps[i];
        const corun__arrival *ar = &sc->apps[i].arrival;
        a->app = &sc->apps[i];
        a->res = &out->apps[i];
        a->run = rc;
        snprintf(a->res->name, sizeof(a->res->name), "%s", a->app->name);
        a->res->cls = a->app->attr.cls;
        corun__rng_seed(&a->rng, seed * 1000003u + i);
        if (only_app >= 0 && (int)i != only_app) {
            a->next_arrival = NEVER;
        } else if (ar->kind == CORUN_ARRIVAL_AT) {
            a->next_arrival = next_after(a, rc->t0);
        } else if (ar->start_ns >= sc->duration_ns) {
            a->next_arrival = NEVER; /* nothing arrives at or after duration_ms */
        } else {
            a->next_arrival = rc->t0 + (uint64_t)ar->start_ns;
        }
    }
    rc->napps = sc->napps;
}

/* Submits every launch due by now. The earliest arrival still to come goes
 * to *deadline and the kernels in flight to *inflight. Returns the run's
 * status (a failed submission sets it). */
static int submit_due(run_ctx *rc, uint64_t now, uint64_t *deadline, uint32_t *inflight,
                      char *why, size_t why_len)
{
    size_t i;
    int st;

    for (i = 0; i < rc->napps; i++) {
        app_state *a = &rc->apps[i];
        while (a->ready != NULL && rc->status == CORUN_OK) {
            request *q = a->ready;
            a->ready = q->next;
            if (a->ready == NULL) {
                a->ready_tail = NULL;
            }
            st = submit_step(rc, a, q, why, why_len);
            if (st != CORUN_OK) {
                request_end(a, q);
                rc->status = st;
                return st;
            }
        }
        while (a->next_arrival <= now && rc->status == CORUN_OK) {
            st = submit(rc, a, why, why_len);
            if (st != CORUN_OK) {
                rc->status = st;
                return st;
            }
        }
        if (a->next_arrival < *deadline) {
            *deadline = a->next_arrival;
        }
        *inflight += a->inflight;
    }
    return rc->status;
}

/* Submits kernels as they arrive and steps the scheduler until every
 * application is done, the run fails (rc->status, why) or kernels outlive
 * the drain period. Kernels still in flight after the arrivals stop get a
 * long grace period to finish; past it the run is reported as timed out. */
static void drive(run_ctx *rc, const corun__scenario *sc, const corun__run_env *env,
                  corun__run_result *out, char *why, size_t why_len)
{
    uint64_t drain_until = rc->stop_arrivals + (uint64_t)fmax(10 * sc->duration_ns, 10e9);
    uint64_t report_step = (uint64_t)(sc->duration_ns / 20) + 1;
    uint64_t next_report = rc->t0 + report_step;
    int st;

    for (;;) {
        uint64_t now = corun__sched_now(rc->s), deadline = NEVER;
        uint32_t inflight = 0;

        if (submit_due(rc, now, &deadline, &inflight, why, why_len) != CORUN_OK) {
            return;
        }
        if (deadline == NEVER && inflight == 0) {
            return;
        }
        if (now >= drain_until) {
            snprintf(why, why_len, "kernels still running %.1f s after the last arrival",
                     (double)(now - rc->stop_arrivals) * 1e-9);
            rc->status = CORUN_ETIMEDOUT;
            return;
        }
        if (!rc->window_closed && now >= rc->stop_arrivals) {
            close_window(rc, out);
        }
        if (!rc->window_closed && deadline > rc->stop_arrivals) {
            deadline = rc->stop_arrivals;
        }
        if (deadline > drain_until) {
            deadline = drain_until;
        }
        if (rc->remote != NULL) {
            follow_window(rc);
            if (deadline > now + WINDOW_POLL_NS) {
                deadline = now + WINDOW_POLL_NS;
            }
        }
        st = corun__sched_step(rc->s, deadline);
        if (st != CORUN_OK) {
            snprintf(why, why_len, "backend '%s' failed: %s", out->backend, corun_strerror(st));
            rc->status = st;
            return;
        }
        if (env->progress != NULL && now >= next_report) {
            next_report = now + report_step;
            env->progress(env->progress_ctx, fmin(1.0, (double)(now - rc->t0) / sc->duration_ns));
        }
    }
}

/* The run is over: per-application summaries, its span (first arrival to
 * last completion) and, if it ended inside the arrival window, the window. */
static void finish(run_ctx *rc, corun__run_result *out)
{
    uint64_t first = NEVER, last = 0;
    size_t i;

    out->clock_ns = (double)(corun__sched_now(rc->s) - rc->t0);
    for (i = 0; i < rc->napps; i++) {
        summarize(&out->apps[i], &rc->apps[i]);
        if (rc->apps[i].launched > 0 && rc->apps[i].first_arrival < first) {
            first = rc->apps[i].first_arrival;
        }
        if (rc->apps[i].last_completion > last) {
            last = rc->apps[i].last_completion;
        }
    }
    out->span_ns = first != NEVER && last > first ? (double)(last - first) : 0;
    if (!rc->window_closed) {
        /* Everything ended inside the window: it is the whole run. */
        out->window_ns = out->clock_ns;
    }
    out->status = rc->status;
}

int corun__scenario_run(const corun__scenario *sc, const corun__run_env *env, const char *policy,
                        int only_app, uint32_t max_launches, corun__run_result *out, char *why,
                        size_t why_len)
{
    const corun__policy_ops *pol = corun__policy_find(policy);
    corun__sched_opts so;
    corun__backend *be = NULL;
    run_ctx *rc;
    uint64_t seed;
    int st;

    memset(out, 0, sizeof(*out));
    if (pol == NULL) {
        snprintf(why, why_len, "unknown policy '%s' (corun policies lists them)", policy);
        return CORUN_ENOENT;
    }
    if (only_app >= (int)sc->napps) {
        return CORUN_EINVAL;
    }
    rc = calloc(1, sizeof(*rc));
    if (rc == NULL) {
        return CORUN_ENOMEM;
    }
    seed = sc->has_seed ? sc->seed : env->settings.seed;
    st = env->make_backend(env->make_ctx, sc, seed, &be, why, why_len);
    if (st != CORUN_OK) {
        goto out_free_rc;
    }
    st = corun__scenario_check(sc, &env->settings, pol, only_app, max_launches,
                               (be->ops->caps & CORUN_BE_VIRTUAL_TIME) != 0, why, why_len);
    if (st != CORUN_OK) {
        goto out_destroy_backend;
    }
    memset(&so, 0, sizeof(so));
    so.backend = be;
    so.policy = pol;
    so.observe = observe_job;
    so.observe_ctx = rc;
    so.settings = env->settings;
    so.why = why;
    so.why_len = why_len;
    if (sc->has_reserve) {
        so.settings.reserve_capsm = sc->reserve_capsm;
    }
    if (so.settings.green_ls_sms == 0) {
        so.settings.green_ls_sms = corun__scenario_ls_need(sc, &so.settings);
    }
    st = corun__sched_create(&so, &rc->s);
    if (st != CORUN_OK) {
        goto out_destroy_backend;
    }
    snprintf(out->policy, sizeof(out->policy), "%s", policy);
    snprintf(out->backend, sizeof(out->backend), "%s", be->ops->name);
    rc->be = be;
    rc->t0 = corun__sched_now(rc->s);
    rc->sm_count = corun__sched_gpu(rc->s)->sm_count;
    out->sm_count = rc->sm_count;
    rc->stop_arrivals = rc->t0 + (uint64_t)sc->duration_ns;
    rc->max_launches = max_launches;
    rc->window = (uint64_t)(rc->sm_count - 1) << 32;
    if ((be->ops->caps & CORUN_BE_VIRTUAL_TIME) == 0) {
        /* on a real GPU that corund coordinates, this run is one of its
         * programs, of its only application's class */
        corun__settings set = env->settings;
        char w2[256];
        if (only_app >= 0) {
            snprintf(set.launch_class, sizeof(set.launch_class), "%s",
                     sc->apps[only_app].attr.cls == CORUN_CLASS_LS ? "ls" : "batch");
            set.launch_priority = sc->apps[only_app].attr.priority > 0
                                      ? (uint64_t)sc->apps[only_app].attr.priority : 0;
        }
        if (corun__remote_open(&set, be->ops->name, be->gpu_id, &rc->remote, w2, sizeof(w2)) !=
            CORUN_OK) {
            rc->remote = NULL;
        } else if (!corun__remote_coordinated(rc->remote)) {
            corun__remote_close(rc->remote);
            rc->remote = NULL;
        }
    }
    init_apps(rc, sc, only_app, seed, out);
    drive(rc, sc, env, out, why, why_len);
    finish(rc, out);
    st = rc->status;
    if (st != CORUN_OK && why[0] == '\0') {
        snprintf(why, why_len, "run failed: %s", corun_strerror(st));
    }
    corun__sched_destroy(rc->s);
    corun__remote_unshare_ctl(rc->remote, be);
    corun__remote_close(rc->remote);
    while (rc->requests != NULL) {
        request *q = rc->requests;
        rc->requests = q->all;
        free(q);
    }
out_destroy_backend:
    be->ops->destroy(be);
out_free_rc:
    free(rc);
    if (st != CORUN_OK) {
        corun__run_result_free(out);
    }
    return st;
}

void corun__run_result_free(corun__run_result *r)
{
    size_t i;

    for (i = 0; i < CORUN_SCENARIO_MAX_APPS; i++) {
        free(r->apps[i].turnaround_ns);
        r->apps[i].turnaround_ns = NULL;
        free(r->apps[i].kernels);
        r->apps[i].kernels = NULL;
    }
}

int corun__scenario_solo(const corun__scenario *sc, const corun__run_env *env, corun__solo *out,
                         char *why, size_t why_len)
{
    size_t i;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < sc->napps; i++) {
        corun__run_result r;
        int st = corun__scenario_run(sc, env, "mps", (int)i, 0, &r, why, why_len);
        if (st != CORUN_OK) {
            return st;
        }
        if (r.apps[i].completed == 0) {
            snprintf(why, why_len, "app '%s' completed no kernel when run alone", sc->apps[i].name);
            corun__run_result_free(&r);
            return CORUN_ESTATE;
        }
        out->p50_ns[i] = r.apps[i].p50_ns;
        out->p99_ns[i] = r.apps[i].p99_ns;
        out->mean_ns[i] = r.apps[i].mean_ns;
        out->rate_per_s[i] = r.apps[i].rate_per_s;
        corun__run_result_free(&r);
    }
    return CORUN_OK;
}

int corun__scenario_rate_alone(const corun__scenario *sc, const corun__run_env *env,
                               double *tasks_per_ns, char *why, size_t why_len)
{
    corun__run_result r;
    int rc = corun__scenario_run(sc, env, "manual", -1, 0, &r, why, why_len);

    if (rc != CORUN_OK) {
        return rc;
    }
    if (r.apps[0].window_tasks > 0 && r.window_ns > 0) {
        *tasks_per_ns = r.apps[0].window_tasks / r.window_ns;
    } else {
        snprintf(why, why_len, "kernel '%s' did no task in a %.0f ms loop alone",
                 sc->apps[0].kernel.name, sc->duration_ns * 1e-6);
        rc = CORUN_ESTATE;
    }
    corun__run_result_free(&r);
    return rc;
}

double corun__solo_ls_p99_norm(const corun__scenario *sc, const corun__solo *solo)
{
    double worst = NAN;
    size_t i;

    for (i = 0; i < sc->napps; i++) {
        if (sc->apps[i].attr.cls == CORUN_CLASS_LS && solo->p50_ns[i] > 0) {
            const double x = solo->p99_ns[i] / solo->p50_ns[i];
            worst = isnan(worst) || x > worst ? x : worst;
        }
    }
    return worst;
}

int corun__demo_ls_norms(const corun__solo *solo, const corun__run_result *r, double *p50_norm,
                         double *p99_norm, size_t *count)
{
    size_t i, j, n = 0;
    double *ls;

    *p50_norm = *p99_norm = NAN;
    *count = 0;
    for (i = 0; i < r->napps; i++) {
        n += r->apps[i].cls == CORUN_CLASS_LS ? r->apps[i].completed : 0;
    }
    if (n == 0) {
        return CORUN_OK;
    }
    if ((ls = malloc(n * sizeof(*ls))) == NULL) {
        return CORUN_ENOMEM;
    }
    n = 0;
    for (i = 0; i < r->napps; i++) {
        if (r->apps[i].cls == CORUN_CLASS_LS) {
            for (j = 0; j < r->apps[i].completed; j++) {
                ls[n++] = r->apps[i].turnaround_ns[j] / solo->p50_ns[i];
            }
        }
    }
    *p50_norm = corun__percentile(ls, n, 50);
    *p99_norm = corun__percentile(ls, n, 99);
    *count = n;
    free(ls);
    return CORUN_OK;
}

int corun__demo_row_calc(const corun__scenario *sc, const corun__solo *solo,
                         const corun__run_result *r, corun__demo_row *out)
{
    corun__app_times times[CORUN_SCENARIO_MAX_APPS];
    corun__colocation col;
    size_t i, nbatch = 0;
    double batch_sum = 0;
    int st;

    memset(out, 0, sizeof(*out));
    snprintf(out->system, sizeof(out->system), "%s", r->policy);
    for (i = 0; i < r->napps; i++) {
        if (r->apps[i].completed == 0) {
            return CORUN_ESTATE;
        }
    }
    st = corun__demo_ls_norms(solo, r, &out->ls_p50_norm, &out->ls_p99_norm, &out->ls_count);
    if (st != CORUN_OK) {
        return st;
    }
    for (i = 0; i < r->napps; i++) {
        const corun__app_result *a = &r->apps[i];
        times[i].solo_ns = solo->mean_ns[i];
        times[i].shared_ns = a->mean_ns;
        if (a->cls != CORUN_CLASS_LS && solo->rate_per_s[i] > 0) {
            batch_sum += a->rate_per_s / solo->rate_per_s[i];
            nbatch++;
            out->batch_count += a->completed;
        }
    }
    out->batch_norm = nbatch ? batch_sum / (double)nbatch : NAN;
    st = corun__colocation_calc(times, r->napps, &col);
    if (st != CORUN_OK) {
        return st;
    }
    out->antt = col.antt;
    out->stp = col.stp;
    out->fairness = col.fairness;
    (void)sc;
    return CORUN_OK;
}
