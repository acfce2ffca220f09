/*
 * experiments.h — the FLEP, Slate, fine-grained QoS and HSM evaluations (FLEP
 * §6, Slate §V-E, qos-fine-grained.md §4, hsm.md §6) as
 * functions over the scenario files in bench/scenarios/, so that the tests,
 * `corun experiment` and the GPU check run the same code on either backend.
 *
 *   hpf      FLEP 6.3.1: low-priority kernel on its large input, high-priority
 *            kernel on its small input 20 us later; speedup of the high one's
 *            turnaround under flep-hpf over mps, per pair (28 pairs).
 *   srt      FLEP 6.3.1-2: the same with equal priorities (shortest remaining
 *            time) and triplets; ANTT under mps over ANTT under flep-hpf, and
 *            the system throughput lost (28 pairs, 8 triplets).
 *   spatial  FLEP 6.4: a high-priority kernel on a trivial input (5 SMs);
 *            preemption overhead (makespan over mps's) with spatial and with
 *            temporal preemption, and the reduction (28 pairs).
 *   ffs      FLEP 6.3.3: both kernels in loops, weights 2 (small input) and 1
 *            (large input); GPU shares and throughput lost (28 pairs).
 *   model    FLEP 6.2: held-out error of the duration model of each kernel.
 *   slate    Slate V-E: every pairing of its five benchmarks in loops; the
 *            decision (co-run or solo), how much of the time they co-ran,
 *            STP under slate and mps (15 pairings).
 *   fgqos    qos-fine-grained.md §4: ten kernels in loops, 90 ordered pairs
 *            (one QoS kernel) x goals 50-95 % under each quota scheme and
 *            spart, 60 trios with one QoS kernel and 60 with two under
 *            rollover and spart; QoS_reach and the non-QoS throughput of the
 *            cases that met their goals; and each kernel alone as a non-QoS
 *            kernel, what enforcing its quotas costs it (exp_fgqos.c).
 *   hsm      hsm.md §6: the same ten kernels' 45 pairs; HSM's NP prediction
 *            against the NP measured, an even SM split against hsm-fair, and
 *            where one kernel is memory-bound and the other not, hsm-qos
 *            against 80 % of the SMs for the memory-bound one (exp_hsm.c).
 *
 * Definitions of every number: docs/policies.md.
 */
#ifndef CORUN_SCENARIO_EXPERIMENTS_H
#define CORUN_SCENARIO_EXPERIMENTS_H

#include <stddef.h>

#include <jansson.h>

#include "scenario/scenario.h"

typedef struct corun__exp_opts {
    corun__run_env env;     /* backend maker and settings (profile store, seed) */
    const char *backend;    /* the backend env makes ("sim", "cuda") */
    const char *dir;        /* folder of the scenario files */
    double duration_ms;     /* > 0: arrival window of the loop experiments (ffs, slate) */
    size_t max_sets;        /* > 0: only the first N pairs (or triplets) of each */
    /* progress lines (one per set), may be NULL */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
} corun__exp_opts;

/* "hpf", "srt", "spatial", "ffs", "model", "slate", "fgqos", or "all" (an
 * object with one member per experiment of FLEP and Slate: fgqos is not in
 * it). */
extern const char *const corun__exp_names[];

/* Runs one experiment; returns a new JSON object (json_decref it), or NULL
 * with the reason in why. Experiments that need kernel profiles record what
 * the profile store (settings.profile_path) lacks first. */
json_t *corun__exp_run(const char *name, const corun__exp_opts *o, char *why, size_t why_len);

#endif
