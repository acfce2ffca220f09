/*
 * scenario.h — workloads as data: applications that submit kernels to the
 * scheduler over time, and the measurements a run yields.
 *
 * A scenario is a set of applications; each repeatedly submits one kernel
 * (described by its shape and block-task durations, see docs/scenarios.md)
 * following an arrival process:
 *   loop      closed loop: the next launch follows the previous completion
 *             (plus think time) — a batch job's kernel loop;
 *   random    open loop: interarrival times drawn from exp or uniform;
 *   periodic  open loop: a fixed period;
 *   at        open loop: a list of times.
 * Arrivals stop at duration_ms; kernels in flight then finish (drain).
 */
#ifndef CORUN_SCENARIO_H
#define CORUN_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"
#include "core/settings.h"

#define CORUN_SCENARIO_MAX_APPS 16
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

typedef struct corun__app {
    char name[64];
    corun__kspec kernel;
    corun_launch_attr attr;
    corun__arrival arrival;
} corun__app;

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

/* ------------------------------------------------------------------------ */

/* Makes a fresh backend for one run. */
typedef int (*corun__backend_maker)(void *ctx, const corun__scenario *sc, uint64_t seed,
                                    corun__backend **out, char *why, size_t why_len);

typedef struct corun__run_env {
    corun__backend_maker make_backend;
    void *make_ctx;
    corun__settings settings;
    /* Called now and then with the backend clock, for progress output; may be NULL. */
    void (*progress)(void *ctx, double done_fraction);
    void *progress_ctx;
} corun__run_env;

typedef struct corun__app_result {
    char name[64];
    corun_class cls;
    size_t submitted, completed, failed;
    double *turnaround_ns;    /* per completed kernel, in completion order */
    double mean_ns, p50_ns, p99_ns, max_ns;
    double span_ns;           /* first arrival to last completion */
    double rate_per_s;        /* completed / span */
    double tasks_done;        /* block-tasks of completed kernels */
    uint32_t preemptions;
} corun__app_result;

typedef struct corun__run_result {
    char policy[32];
    char backend[16];
    size_t napps;
    corun__app_result apps[CORUN_SCENARIO_MAX_APPS];
    double clock_ns;          /* backend time at the end of the run */
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
    double mean_ns[CORUN_SCENARIO_MAX_APPS];
    double rate_per_s[CORUN_SCENARIO_MAX_APPS];
} corun__solo;

int corun__scenario_solo(const corun__scenario *sc, const corun__run_env *env, corun__solo *out,
                         char *why, size_t why_len);
/* Folds one run and the solo references into a demo row. */
int corun__demo_row_calc(const corun__scenario *sc, const corun__solo *solo,
                         const corun__run_result *r, corun__demo_row *out);

#endif
