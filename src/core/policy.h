/*
 * policy.h — a scheduling policy: the decisions, separate from the
 * mechanism (sched.h). A policy reacts to four events and answers with
 * scheduler actions; it never talks to the backend itself.
 *
 * Callbacks run on the scheduler's thread, one at a time, and may call any
 * corun__sched_* action. `complete` is called for DONE and FAILED kernels,
 * before the kernel's owner hears of it.
 */
#ifndef CORUN_CORE_POLICY_H
#define CORUN_CORE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "core/duration_model.h"
#include "core/profile_store.h"
#include "core/sched.h"

/* What a policy reads from the profile store (profile_store.h), so that the
 * command line can record what is missing before a run. */
#define CORUN_POLICY_NEEDS_DURATIONS 1u /* solo runs: duration models (FLEP) */
#define CORUN_POLICY_NEEDS_PROFILES 2u  /* intensity profiles (Slate) */
#define CORUN_POLICY_NEEDS_RATES 4u     /* solo runs at each kernel's own size: its
                                           isolated rate (fgqos) */

/* What a direct launch gets at once (corun__sched_allot): decided in the
 * program's thread from the allotment the scheduler last published, never
 * by waiting for the scheduler. */
typedef struct corun__allotment {
    bool plain;             /* the plain kernel: the policy does not preempt */
    uint32_t capsm;         /* CapSMs, unless the launch asks for fewer */
    uint32_t sm_lo, sm_hi;  /* the SMs it may use */
    bool hold;              /* its workers hold their slots through its tail
                               (corun_worker_arg.hold) */
} corun__allotment;

struct corun__policy_ops {
    const char *name;
    const char *help;
    unsigned needs;  /* CORUN_POLICY_NEEDS_* */
    int (*create)(corun__sched *s, void **state);
    void (*destroy)(void *state);
    void (*arrive)(corun__sched *s, void *state, corun__job *k);
    void (*paused)(corun__sched *s, void *state, corun__job *k);
    void (*complete)(corun__sched *s, void *state, corun__job *k);
    void (*timer)(corun__sched *s, void *state, uint64_t now);
    /* Optional: the allotment of a class (default: workers on every SM). */
    void (*allot)(corun__sched *s, void *state, corun_class cls, corun__allotment *out);
    /* Optional: a direct kernel was adopted (corun__sched_adopt): RUNNING on
     * what the allotment gave it, or DONE if it ran plain. */
    void (*direct)(corun__sched *s, void *state, corun__job *k);
    /* Optional: the scheduler is destroyed while k (with pdata) is live. */
    void (*forget)(corun__sched *s, void *state, corun__job *k);
    /* Optional: whether a kernel with attr could ever run under the policy
     * with these settings on this GPU; if not, CORUN_ERANGE with why, and
     * corun__sched_submit refuses it rather than let it wait for ever. Reads
     * nothing else, so a run can be checked before it starts. */
    int (*admit)(const corun__settings *set, const corun_gpu_desc *gpu,
                 const corun_launch_attr *attr, char *why, size_t why_len);
};

/* The policy of that name, or NULL. */
const corun__policy_ops *corun__policy_find(const char *name);
/* A policy's forget when its per-kernel record (k->pdata) is one malloc'd
 * block: frees it. Inline, so that the policies do not call back into the
 * registry (policy.c), which names them. */
static inline void corun__policy_forget_pdata(corun__sched *s, void *state, corun__job *k)
{
    (void)s;
    (void)state;
    free(k->pdata);
    k->pdata = NULL;
}
/* A policy that cannot keep its record of k (out of memory) still runs it,
 * on the CapSMs that are free. Inline, for the same reason. */
static inline void corun__policy_run_on_free(corun__sched *s, corun__job *k)
{
    uint32_t n = corun__sched_free_capsm(s);

    if (n > 0) {
        (void)corun__sched_run(s, k, n);
    }
}

/* Sets a running kernel's CapSMs to `want`: shrinking at once, growing as
 * far as free CapSMs allow. */
static inline void corun__policy_resize(corun__sched *s, corun__job *k, uint32_t want)
{
    uint32_t held = corun__job_capsm(k), free_now;

    if (held > want) {
        (void)corun__sched_shrink(s, k, held - want);
        return;
    }
    free_now = corun__sched_free_capsm(s);
    if (want - held > free_now) {
        want = held + free_now;
    }
    if (want > held) {
        (void)corun__sched_grow(s, k, want - held);
    }
}

/* Block-tasks per ns of launch k alone (fgqos's and hsm's isolated rate):
 * the profile store's rate of its kernel at this very size (corun profile
 * times a loop of launches), else the duration model's prediction; 0 if
 * neither is known. */
static inline double corun__policy_isolated_rate(const corun__pstore *store,
                                                 const corun__dm_set *models,
                                                 const char *backend, const corun__job *k)
{
    const corun__dmodel *m;
    double own = corun__pstore_own_rate(store, backend, k->name, (double)k->tasks,
                                        (double)k->block_threads);

    if (own > 0) {
        return own;
    }
    m = corun__dm_set_find(models, k->name);
    if (m != NULL) {
        double x[CORUN_DM_NFEAT] = {(double)k->tasks, (double)k->block_threads,
                                    k->attr.size_hint, (double)k->smem_bytes};
        double d = corun__dm_predict(m, x);
        return d > 0 ? (double)k->tasks / d : 0;
    }
    return 0;
}

/* Flows (flep-ffs, fgqos, hsm): a program's stream of launches of one kernel
 * name, whose shares, quotas and history belong to the flow, not to one
 * launch. A policy keeps its flows in a growing array of records that begin
 * with char name[CORUN_FLOW_NAME], and each kernel's record (k->pdata)
 * begins with its flow's index (size_t). */
#define CORUN_FLOW_NAME 64
#define CORUN_NO_FLOW ((size_t)-1)

/* The index of k's flow in *flows (*n records of elem bytes, *cap
 * allocated), made on first sight: zeroed, named, *fresh set.
 * CORUN_NO_FLOW out of memory. */
static inline size_t corun__policy_flow(void **flows, size_t *n, size_t *cap, size_t elem,
                                        const corun__job *k, bool *fresh)
{
    char *rec;
    size_t i;

    *fresh = false;
    for (i = 0; i < *n; i++) {
        if (strcmp((const char *)*flows + i * elem, k->name) == 0) {
            return i;
        }
    }
    if (corun__grow(flows, cap, *n, elem, 8) != 0) {
        return CORUN_NO_FLOW;
    }
    rec = (char *)*flows + *n * elem;
    memset(rec, 0, elem);
    snprintf(rec, CORUN_FLOW_NAME, "%s", k->name);
    *fresh = true;
    return (*n)++;
}

/* Attaches to k a zeroed record of `size` bytes that begins with `flow`, and
 * returns it; out of memory, or with no flow, returns NULL and runs k on the
 * CapSMs that are free. */
static inline void *corun__policy_attach_flow(corun__sched *s, corun__job *k, size_t size,
                                              size_t flow)
{
    size_t *p = flow != CORUN_NO_FLOW ? calloc(1, size) : NULL;

    if (p == NULL) {
        corun__policy_run_on_free(s, k);
        return NULL;
    }
    *p = flow;
    k->pdata = p;
    return p;
}

/* What a flow counts of its launch k that ended: every task if it is done;
 * a failed launch ran a prefix of its tasks (its last progress read). */
static inline void corun__policy_flow_ended(uint64_t *done_base, uint64_t *last_active,
                                            const corun__sched *s, const corun__job *k)
{
    *done_base += k->state == CORUN_JS_DONE ? k->tasks : k->done_tasks;
    *last_active = corun__sched_now(s);
}

/* The flow's launch that runs, or is next: its oldest live one (the
 * records of every live kernel begin with their flow's index). */
static inline corun__job *corun__policy_flow_head(corun__sched *s, size_t flow)
{
    corun__job *k;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (k->pdata != NULL && *(const size_t *)k->pdata == flow &&
            k->state != CORUN_JS_DONE && k->state != CORUN_JS_FAILED) {
            return k;
        }
    }
    return NULL;
}

size_t corun__policy_count(void);
const corun__policy_ops *corun__policy_at(size_t i);

extern const corun__policy_ops corun__policy_mps;
extern const corun__policy_ops corun__policy_priority;
extern const corun__policy_ops corun__policy_smguard;
extern const corun__policy_ops corun__policy_manual;
extern const corun__policy_ops corun__policy_flep_hpf;
extern const corun__policy_ops corun__policy_flep_ffs;
extern const corun__policy_ops corun__policy_slate;
extern const corun__policy_ops corun__policy_green;
extern const corun__policy_ops corun__policy_fgqos;
extern const corun__policy_ops corun__policy_hsm_fair;
extern const corun__policy_ops corun__policy_hsm_qos;

#endif
