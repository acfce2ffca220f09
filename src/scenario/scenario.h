/*
 * scenario.h — workloads as data: applications that submit kernels to the
 * scheduler over time, and the measurements a run yields.
 *
 * A scenario is a set of applications; each repeatedly submits a request
 * (one kernel, or a chain of kernels run one after another, each described
 * by its shape and block-task durations, see docs/scenarios.md) following
 * an arrival process:
 *   loop      closed loop: the next launch follows the previous completion
 *             (plus think time) — a batch job's kernel loop;
 *   random    open loop: interarrival times drawn from exp or uniform;
 *   periodic  open loop: a fixed period;
 *   at        open loop: a list of times.
 * Arrivals stop at duration_ms; kernels in flight then finish (drain).
 */
#ifndef CORUN_SCENARIO_H
#define CORUN_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"
#include "core/profile_store.h"
#include "core/settings.h"

#define CORUN_SCENARIO_MAX_APPS 16

struct corun__policy_ops;
#define CORUN_SCENARIO_MAX_AT 64

typedef enum corun__arrival_kind {
    CORUN_ARRIVAL_LOOP,
    CORUN_ARRIVAL_RANDOM,
    CORUN_ARRIVAL_PERIODIC,
    CORUN_ARRIVAL_AT
} corun__arrival_kind;

typedef struct corun__arrival {
    corun__arrival_kind kind;
    double start_ns;          /* first arrival (loop, random, periodic) */
    double think_ns;          /* loop: pause between completion and next launch */
    corun__dist interval;     /* random: EXP (mean a) or UNIFORM [a, b); periodic: CONST a */
    uint32_t count;           /* most launches, 0 = no limit */
    double at_ns[CORUN_SCENARIO_MAX_AT];
    size_t nat;
} corun__arrival;

/* Most kernels one request of an application may launch ("kernels"). */
#define CORUN_SCENARIO_MAX_CHAIN 8

typedef struct corun__app {
    char name[64];
    corun__kspec kernel;      /* what it launches; with "kernels", the first of a request */
    /* "kernels": the rest of a request, in order, each submitted when the
     * one before has finished; the request's turnaround is from its arrival
     * to its last kernel's end (corun__app_kernel names them all) */
    corun__kspec then[CORUN_SCENARIO_MAX_CHAIN - 1];
    size_t nthen;
    corun_launch_attr attr;
    corun__arrival arrival;
    /* Share of the device's peak FLOP rate one block-task achieves alone on
     * a fully occupied GPU when DRAM does not hold it back (kernel key
     * "compute"). The sim does not need it to run a kernel; profiling turns
     * it into an achieved FLOP rate (Slate's compute intensity). */
    double compute;
} corun__app;

/* The kernels of one request of app: 1 + app->nthen. */
static inline size_t corun__app_nkernels(const corun__app *app)
{
    return 1 + app->nthen;
}

/* Kernel i of a request of app, i < corun__app_nkernels(app). */
static inline const corun__kspec *corun__app_kernel(const corun__app *app, size_t i)
{
    return i == 0 ? &app->kernel : &app->then[i - 1];
}

typedef struct corun__scenario {
    char name[64];
    char description[256];
    corun_gpu_desc gpu;
    double duration_ns;
    uint64_t seed;
    int has_seed;
    uint32_t reserve_capsm;
    int has_reserve;
    corun__app apps[CORUN_SCENARIO_MAX_APPS];
    size_t napps;
} corun__scenario;

/* Loads a scenario file. On error returns CORUN_EPARSE (or CORUN_EIO) and
 * writes "file:line:col: what" or "file: apps[1].kernel.block: what" to why. */
int corun__scenario_load(const char *path, corun__scenario *out, char *why, size_t why_len);
/* The same from text; `origin` names it in messages. */
int corun__scenario_parse(const char *text, const char *origin, corun__scenario *out, char *why,
                          size_t why_len);
/* The LS+batch scenario of SMGuard §6.2 that `corun demo` runs by default
 * (bench/scenarios/ls-batch.json holds the same text). */
const char *corun__scenario_default_text(void);

/* The folders a scenario name is looked up in, in this order: CORUN_SCENARIOS
 * (when set), the installed scenarios beside the running program
 * (BINDIR/../share/corun/scenarios, relative to /proc/self/exe, so an
 * installed tree may be moved), the source tree's bench/scenarios/ (for the
 * programs of the build folder). Writes folder i, which need not exist, to
 * buf; returns 0, or -1 past the last one. (scenario_find.c) */
int corun__scenario_dir(const corun__settings *s, size_t i, char *buf, size_t len);
/* Where the scenario `name` is: the path as given when it exists or is
 * absolute; else the first regular file among, in each folder of
 * corun__scenario_dir, the name less a leading "bench/scenarios/" or
 * "scenarios/" (the installed folder's name), as is and with ".json" added
 * ("ls-batch", "bench/scenarios/ls-batch.json"). Returns CORUN_OK
 * with the path, or CORUN_ENOENT with why naming every folder looked in. */
int corun__scenario_find(const char *name, const corun__settings *s, char *path, size_t len,
                         char *why, size_t why_len);
/* The first folder of corun__scenario_dir that exists (where `corun
 * experiment` reads its scenario files); CORUN_ENOENT if none does. */
int corun__scenario_default_dir(const corun__settings *s, char *buf, size_t len);

/* ------------------------------------------------------------------------ */

/* Makes a fresh backend for one run. */
typedef int (*corun__backend_maker)(void *ctx, const corun__scenario *sc, uint64_t seed,
                                    corun__backend **out, char *why, size_t why_len);

typedef struct corun__run_env {
    corun__backend_maker make_backend;
    void *make_ctx;
    corun__settings settings;
    /* Called now and then with the share done of a run (by the backend clock)
     * or of one app's training runs, for progress output; may be NULL. */
    void (*progress)(void *ctx, double done_fraction);
    void *progress_ctx;
} corun__run_env;

/* One completed kernel of an application. Times are ns from the start of
 * the run. */
typedef struct corun__job_rec {
    double submit_ns;         /* arrival */
    double start_ns;          /* first launch */
    double end_ns;            /* completion seen by the host */
    double run_ns;            /* time it had workers (or its grid) on the GPU */
    double capsm_ns;          /* CapSMs held x time; plain kernels count the whole GPU
                                 while their grid runs */
    uint32_t preemptions;
} corun__job_rec;

typedef struct corun__app_result {
    char name[64];
    corun_class cls;
    size_t submitted, completed, failed;
    double *turnaround_ns;    /* per completed kernel, in completion order */
    corun__job_rec *kernels; /* per completed kernel, same order */
    double mean_ns, p50_ns, p99_ns, max_ns;
    double span_ns;           /* first arrival to last completion */
    double rate_per_s;        /* completed / span */
    double tasks_done;        /* block-tasks of completed kernels */
    uint32_t preemptions;
    double capsm_ns;          /* sum over its kernels (see corun__job_rec) */
    double window_capsm_ns;   /* the part of it inside the arrival window */
    double window_tasks;      /* block-tasks done inside the arrival window */
    bool plain;               /* ran plain grids: CapSM-time is then launch to end
                                 times the whole GPU, not what it held */
} corun__app_result;

typedef struct corun__run_result {
    char policy[32];
    char backend[16];
    size_t napps;
    corun__app_result apps[CORUN_SCENARIO_MAX_APPS];
    double clock_ns;          /* backend time at the end of the run */
    double span_ns;           /* first arrival to last completion, all applications */
    double window_ns;         /* the arrival window: from the start until arrivals stop
                                 (duration_ms), or the whole run if it ended before;
                                 GPU shares are measured over it, while every
                                 application still submits */
    uint32_t sm_count;        /* of the GPU it ran on */
    int status;               /* CORUN_OK or the first failure */
} corun__run_result;

/* Runs the scenario under one policy. `only_app` >= 0 runs just that
 * application (for solo references); `max_launches` > 0 caps the launches
 * of every app. Frees nothing the caller owns; free *out with
 * corun__run_result_free. */
int corun__scenario_run(const corun__scenario *sc, const corun__run_env *env, const char *policy,
                        int only_app, uint32_t max_launches, corun__run_result *out, char *why,
                        size_t why_len);
void corun__run_result_free(corun__run_result *r);

/* ------------------------------------------------------------------------ */
/* What a run will do, estimated before it runs (scenario_plan.c). A step is
 * a block-task, or a worker a launch starts: what the simulator's time goes
 * into. */

typedef struct corun__plan {
    double launches[CORUN_SCENARIO_MAX_APPS]; /* expected launches per application;
                                                 0 = never arrives, or not in the run */
    double steps;                             /* of every launch in the run */
} corun__plan;

/* The mean of a duration distribution, ns. */
double corun__dist_mean(const corun__dist *d);
/* The SMs the scenario's LS kernels (class ls or priority > 0) fill in one
 * wave, the largest of them, within [the reservation, SMGUARD_LS_CAP of the
 * GPU] as smguard sizes them (set's reserve_capsm, smguard_ls_cap); 0 when
 * no application is latency-sensitive. The `green` policy's partition. */
uint32_t corun__scenario_ls_need(const corun__scenario *sc, const corun__settings *set);
/* Estimates a run as corun__scenario_run(sc, .., only_app, max_launches)
 * makes it. A loop application's kernel is taken to run alone on the whole
 * GPU, so its launches are an upper bound. */
void corun__scenario_plan(const corun__scenario *sc, const corun__settings *set, int only_app,
                          uint32_t max_launches, corun__plan *out);
/* What a run under pol (NULL: any) is checked for before it starts:
 * CORUN_EINVAL if an application in it never arrives (its first arrival is
 * at or after duration_ms); CORUN_ERANGE if the policy would never run an
 * application's kernels (its admit), or if `simulated` (a backend with
 * virtual time) and the run would take more steps than set->sim_max_steps
 * (0 = no limit). why says which, with the estimate. */
int corun__scenario_check(const corun__scenario *sc, const corun__settings *set,
                          const struct corun__policy_ops *pol, int only_app,
                          uint32_t max_launches, int simulated, char *why, size_t why_len);

/* ------------------------------------------------------------------------ */

/* The demo's comparison for one system, normalised to solo runs measured in
 * the same process. */
typedef struct corun__demo_row {
    char system[32];
    double ls_p50_norm;   /* LS turnaround p50 / solo LS turnaround p50 */
    double ls_p99_norm;   /* LS turnaround p99 / solo LS turnaround p50 */
    double batch_norm;    /* batch kernels per second / solo batch kernels per second */
    double antt;
    double stp;
    double fairness;
    size_t ls_count;      /* LS kernels measured */
    size_t batch_count;   /* batch kernels completed */
} corun__demo_row;

/* Solo references of every app: runs each alone under plain dispatch. */
typedef struct corun__solo {
    double p50_ns[CORUN_SCENARIO_MAX_APPS];
    double p99_ns[CORUN_SCENARIO_MAX_APPS];
    double mean_ns[CORUN_SCENARIO_MAX_APPS];
    double rate_per_s[CORUN_SCENARIO_MAX_APPS];
} corun__solo;

int corun__scenario_solo(const corun__scenario *sc, const corun__run_env *env, corun__solo *out,
                         char *why, size_t why_len);

/* App 0 of sc (its only one) alone as corun's workers on the whole GPU (the
 * manual policy), as sc runs it: its block-tasks per ns in the arrival
 * window, the running launch's done tasks included. fgqos's isolated rate:
 * corun profile records it and corun experiment fgqos measures its
 * reference so. CORUN_ESTATE if it did no task. */
int corun__scenario_rate_alone(const corun__scenario *sc, const corun__run_env *env,
                               double *tasks_per_ns, char *why, size_t why_len);

/* ------------------------------------------------------------------------ */
/* Profiling: the recorded runs FLEP's duration model learns from and the
 * intensity profiles Slate pairs kernels by (core/profile_store.h). */

typedef struct corun__train_opts {
    uint32_t runs;          /* solo runs per kernel, each with a random input size */
    double min_scale;       /* the grid (and size hint) of a training run is the
                               app's times a factor uniform in [min_scale, max_scale] */
    double max_scale;
    uint32_t profile_runs;  /* solo runs at the app's own size for the intensity
                               profile; 0 = none */
    uint32_t rate_windows;  /* windows of a loop of launches at the app's own
                               size, each kept as a run (its rate alone: fgqos's
                               isolated rate); 0 = none */
    uint64_t seed;
    /* if not NULL, hears each profile's measured rates and how they were
     * measured */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
} corun__train_opts;

/* FLEP's 100 random inputs, sizes from a tenth of the app's to the app's;
 * 3 profile runs and 3 loop windows at its own size. */
void corun__train_opts_default(corun__train_opts *o, const corun__settings *set);

/* Runs the kernel of every application (only `only_app` if >= 0) alone on
 * the whole GPU, one launch at a time, in its worker form on CapSMs (as the
 * policies run it): o->runs times at random sizes, recording each duration
 * as a run, and o->profile_runs times at its own size, recording its
 * achieved rates as a profile. A backend that can measure rates (cuda:
 * hardware counters through CUPTI, else counted operations, both against
 * peaks measured on the device) gives them; for the others (sim) work per
 * block-task is the app's "compute" and "mem_bw" (shares of the peaks on a
 * fully occupied GPU), so achieved = share x (solo time of the tasks spread
 * over all workers) / measured duration; DRAM saturation shows as a lower
 * achieved share; a kernel whose rates the backend cannot measure (the
 * GPU's real kernels) gets no profile, with a log line. Then, o->rate_windows
 * times, it runs alone in a closed loop of launches at its own size for a
 * window (the scenario's duration within [10, 50] ms, else 20 ms) under the
 * manual policy, as corun experiment measures a kernel alone, each window
 * kept as a run whose duration is its time per launch (fgqos's isolated rate,
 * corun__pstore_own_rate). The records are added to *out (not written to any
 * file). */
int corun__scenario_train(const corun__scenario *sc, const corun__run_env *env,
                          const corun__train_opts *o, int only_app, corun__pstore *out, char *why,
                          size_t why_len);
/* The profile store's record of kernel k's launch on a backend (its grid,
 * block, size hint and shared memory) that took dur_ns alone. */
void corun__scenario_prun(corun__prun *r, const char *backend, const corun__kspec *k,
                          const corun_launch_attr *attr, double dur_ns);
/* corun__scenario_check's step limit for corun__scenario_train(sc, .., o,
 * only_app): CORUN_ERANGE with why when it would take more steps. */
int corun__scenario_check_train(const corun__scenario *sc, const corun__settings *set,
                                const corun__train_opts *o, int only_app, int simulated,
                                char *why, size_t why_len);

/* Records in the store at store_path what a policy with these needs
 * (CORUN_POLICY_NEEDS_*) lacks there for the scenario's kernels on backend
 * `backend` (which env makes): solo runs at random sizes (PROFILE_TRAIN_RUNS)
 * for a kernel with too few for a duration model, an intensity profile for
 * a kernel without one. log(ctx, line), if not NULL, hears what is done,
 * including a corrupt store set aside. Returns CORUN_OK or the failure, with
 * why. */
int corun__scenario_ensure_profiles(const corun__scenario *sc, const corun__run_env *env,
                                    const char *backend, const char *store_path, unsigned needs,
                                    void (*log)(void *ctx, const char *line), void *log_ctx,
                                    char *why, size_t why_len);
/* The LS applications' own tail alone: the largest over them of the solo
 * p99 over the solo p50, the ls_p99_norm an LS application run by itself
 * would get (the floor of that column on a GPU whose runs alone vary); NAN
 * without an LS application. */
double corun__solo_ls_p99_norm(const corun__scenario *sc, const corun__solo *solo);

/* The LS applications' turnaround p50 and p99 over their solo p50 in run r
 * (NAN for both without LS kernels) and how many LS kernels that is: a demo
 * row's LS figures, and the row floor's (a run of the LS application alone,
 * corun__scenario_run with only_app). CORUN_ENOMEM if out of memory. */
int corun__demo_ls_norms(const corun__solo *solo, const corun__run_result *r, double *p50_norm,
                         double *p99_norm, size_t *count);

/* Folds one run and the solo references into a demo row. */
int corun__demo_row_calc(const corun__scenario *sc, const corun__solo *solo,
                         const corun__run_result *r, corun__demo_row *out);

#endif
