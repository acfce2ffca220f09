/*
 * experiments_int.h — what the experiments (experiments.c, exp_fgqos.c,
 * exp_hsm.c) share: their context, the scenario file they run, each app's
 * references alone, and the profile store. Not part of experiments.h.
 */
#ifndef CORUN_SCENARIO_EXPERIMENTS_INT_H
#define CORUN_SCENARIO_EXPERIMENTS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/profile_store.h"
#include "scenario/experiments.h"
#include "scenario/scenario.h"

/* fgqos's and hsm's kernels: the ten apps of fgqos-kernels[-BACKEND].json */
#define CORUN_EXP_TEN 10

typedef struct corun__exp_ctx {
    const corun__exp_opts *o;
    corun__scenario *sc;            /* the experiment's scenario file */
    bool solo_done[CORUN_SCENARIO_MAX_APPS];
    double solo_mean[CORUN_SCENARIO_MAX_APPS];   /* turnaround alone, ns */
    double solo_rate[CORUN_SCENARIO_MAX_APPS];   /* kernels per second alone */
    bool wsolo_done[CORUN_SCENARIO_MAX_APPS];
    double wsolo_rate[CORUN_SCENARIO_MAX_APPS];  /* the same as corun's workers */
    corun__pstore store;            /* fgqos: the profile store its goals are fractions of */
    /* fgqos: a QoS kernel's rate alone measured right after the last set of
     * cases (fresh: no case ran since), kernels per second */
    bool adj_fresh[CORUN_SCENARIO_MAX_APPS];
    double adj_rate[CORUN_SCENARIO_MAX_APPS];
    double adj_lo[CORUN_SCENARIO_MAX_APPS], adj_hi[CORUN_SCENARIO_MAX_APPS]; /* over the run */
    /* hsm: every measurement alone is recorded in the profile store, where
     * the policies run next take it as the kernel's isolated rate */
    bool record_alone;
    char *why;
    size_t why_len;
} corun__exp_ctx;
typedef corun__exp_ctx ectx;

/* One line of progress through o->log, if any. */
__attribute__((format(printf, 2, 3))) void corun__exp_progress(const corun__exp_opts *o,
                                                               const char *fmt, ...);
/* Frees e->sc. */
void corun__exp_unload(ectx *e);
/* A scenario of the file's apps idx[0..n), in that order (--duration-ms
 * applied); NULL out of memory. The caller frees it. */
corun__scenario *corun__exp_pick(const ectx *e, const int *idx, size_t n);
/* The file's app i alone under plain dispatch (mps), once per experiment:
 * e->solo_rate[i], e->solo_mean[i]. */
int corun__exp_solo(ectx *e, int i);
/* App i alone as corun's workers on the whole GPU, in kernels per second:
 * the median of three windows of a loop of launches (fgqos's isolated rate,
 * measured as `corun profile` measures it); with e->record_alone the
 * windows are recorded in the profile store as `corun profile` records
 * them. */
int corun__exp_rate_alone(ectx *e, int i, double *per_s);
/* corun__exp_rate_alone of app i once per experiment, into e->wsolo_rate[i]. */
int corun__exp_solo_workers(ectx *e, int i);
/* Records in the profile store what `needs` (CORUN_POLICY_NEEDS_*) asks for
 * of the apps of sets[0..n) (up to three each, -1 ends a set). */
int corun__exp_ensure(ectx *e, int (*sets)[3], size_t n, unsigned needs);
/* App k's rate alone next to a set of cases (kernels per second): the last
 * measurement where no case ran since (e->adj_fresh[k]), else a new one;
 * e->adj_lo/hi keep its range over the run as a fraction of its rate at the
 * start. The caller clears e->adj_fresh when a case runs. */
int corun__exp_adjacent_rate(ectx *e, int k, double *per_s);
/* Loads the ten kernels' file into e->sc (the backend's own where there is
 * one, else the simulator's). */
int corun__exp_load_ten(ectx *e);
/* The ten kernels' pairs (ordered: (a, b) for every a != b; else a < b) as
 * --max-sets allows into pairs (*np), each kernel alone into all; then the
 * profiles `needs` asks for, and the store into e->store. */
int corun__exp_ten_pairs(ectx *e, bool ordered, unsigned needs, int (*pairs)[3], size_t *np,
                         int (*all)[3]);

/* The experiments of their own files. */
json_t *corun__exp_fgqos(ectx *e);
json_t *corun__exp_hsm(ectx *e);

#endif
