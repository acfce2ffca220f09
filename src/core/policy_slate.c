/*
 * policy_slate.c — Slate's workload-aware scheduling (Slate §III-B, §III-C,
 * §IV-C): co-run two kernels only when their profiles say they are
 * complementary, and resize running kernels as kernels arrive and finish.
 *
 * Kernels wait in one queue, in arrival order. When the GPU has no kernel,
 * the head of the queue starts on the whole GPU (all the CapSMs it can
 * use). While one kernel J_k runs, Slate looks through the queue in order
 * for the first kernel J that Table I allows to co-run with J_k
 * (intensity.h; the row is J_k's class, the column J's). If there is one,
 * J_k shrinks and J starts on the CapSMs J_k gave up; if there is none, J_k
 * runs solo. When one of two co-runners finishes, the same search finds the
 * survivor a new partner; without one, the survivor grows to the whole GPU.
 *
 * Classes come from the kernels' profiles in the profile store (achieved
 * FLOP/s and DRAM bandwidth over the device's peaks, recorded by `corun
 * profile`); a kernel without a profile is never co-run, as Slate runs a
 * kernel solo the first time to profile it.
 *
 * The split: each of two co-runners gets half of the CapSMs, except that a
 * kernel whose grid needs fewer (ceil(tasks / workers per SM)) gets just
 * those and its partner the rest.
 *
 * Where this departs from the paper, and why:
 *  - Resizing keeps the running workers: a shrinking kernel's lowest CapSMs
 *    are evicted (their workers finish their chunk and leave) and a growing
 *    kernel gets new workers on the same task counter, where
 *    Slate's dispatch kernel terminates every worker and relaunches the
 *    kernel on the new SM range. Less work is interrupted; progress carries
 *    over the same way (Slate's slateIdx is corun's task counter).
 *  - Co-runners share the GPU by CapSMs (worker slots) rather than by
 *    disjoint SM ranges [sm_low, sm_high]: on hardware, binding by SM id
 *    needs a full GPU of workers launched so that those on the wrong SMs
 *    can exit, and how many stay depends on where the hardware places
 *    them; CapSMs give each kernel an exact number of slots. corun's SM
 *    range signal (corun__sched_bind) remains for disjoint placement.
 *  - Slate decides when a kernel arrives or completes; here a completion's
 *    decision waits until launches made at that same instant have arrived
 *    (a zero-delay timer), so the survivor is not grown and shrunk again
 *    when a program launches its next kernel at once.
 *  - Queues per process and stream are one queue in arrival order.
 */
#include <stdlib.h>

#include "core/intensity.h"
#include "core/policy.h"
#include "core/profile_store.h"

typedef struct slate_kernel {
    corun__kclass cls;
    uint32_t need;      /* CapSMs its grid can use */
} slate_kernel;

typedef struct slate {
    corun__pstore profiles;
} slate;

static slate_kernel *sk(const corun__job *k)
{
    return (slate_kernel *)k->pdata;
}

static int slate_create(corun__sched *s, void **state)
{
    slate *p = calloc(1, sizeof(*p));

    if (p == NULL) {
        return CORUN_ENOMEM;
    }
    /* Without a readable store every kernel is unknown and runs solo. */
    if (corun__pstore_load_setting(corun__sched_settings(s)->profile_path, &p->profiles, NULL, 0) !=
        CORUN_OK) {
        corun__pstore_init(&p->profiles);
    }
    *state = p;
    return CORUN_OK;
}

static void slate_destroy(void *state)
{
    slate *p = state;

    corun__pstore_free(&p->profiles);
    free(p);
}

static bool queued(const corun__job *k)
{
    return k->pdata != NULL && (k->state == CORUN_JS_WAITING || k->state == CORUN_JS_PAUSED);
}

/* CapSMs for two co-runners with needs a (running) and b (candidate). */
static void split(uint32_t sms, uint32_t a, uint32_t b, uint32_t *ra, uint32_t *rb)
{
    uint32_t half = sms / 2;

    if (a + b <= sms) {
        *ra = a;
        *rb = b;
    } else if (a <= half) {
        *ra = a;
        *rb = sms - a;
    } else if (b <= half) {
        *rb = b;
        *ra = sms - b;
    } else {
        *rb = half;
        *ra = sms - half;
    }
}

static void start(corun__sched *s, corun__job *k, uint32_t want)
{
    uint32_t free_now = corun__sched_free_capsm(s);

    if (want > free_now) {
        want = free_now;
    }
    if (want > 0) {
        (void)corun__sched_run(s, k, want);
    }
}

static void decide(corun__sched *s)
{
    const uint32_t sms = corun__sched_gpu(s)->sm_count;
    corun__job *k, *run[2] = {NULL, NULL}, *cand = NULL;
    size_t nrun = 0;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (k->pdata != NULL && corun__job_active(k) && nrun < 2) {
            run[nrun++] = k;
        }
    }
    if (nrun == 0) {
        for (k = corun__sched_first(s); k != NULL && !queued(k); k = k->next) {
        }
        if (k == NULL) {
            return;
        }
        start(s, k, sk(k)->need);
        if (k->state != CORUN_JS_RUNNING) {
            return;
        }
        run[nrun++] = k;
    }
    if (nrun == 2) {
        /* A pair runs; if one is stopping (preempted from outside), the
         * other keeps what it has. */
        return;
    }
    if (run[0]->state != CORUN_JS_RUNNING) {
        return;
    }
    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (queued(k) && corun__slate_complementary(sk(run[0])->cls, sk(k)->cls)) {
            cand = k;
            break;
        }
    }
    if (cand == NULL) {
        corun__policy_resize(s, run[0], sk(run[0])->need);
        return;
    }
    {
        uint32_t ra, rb;
        split(sms, sk(run[0])->need, sk(cand)->need, &ra, &rb);
        corun__policy_resize(s, run[0], ra);
        start(s, cand, rb);
    }
}

static void slate_arrive(corun__sched *s, void *state, corun__job *k)
{
    slate *p = state;
    const uint32_t sms = corun__sched_gpu(s)->sm_count;
    const corun__pprof *prof;
    slate_kernel *q = calloc(1, sizeof(*q));

    if (q == NULL) {
        corun__policy_run_on_free(s, k);
        return;
    }
    q->need = sms;
    if (k->per_sm > 0 && k->tasks < (uint64_t)sms * k->per_sm) {
        q->need = (uint32_t)((k->tasks + k->per_sm - 1) / k->per_sm);
    }
    prof = corun__pstore_find_prof(&p->profiles, corun__sched_backend(s), k->name);
    q->cls = prof != NULL
                 ? corun__kclass_of(prof->flop_frac, prof->bw_frac, corun__sched_settings(s))
                 : CORUN_KCLASS_UNKNOWN;
    k->pdata = q;
    decide(s);
}

static void slate_paused(corun__sched *s, void *state, corun__job *k)
{
    decide(s);
}

static void slate_complete(corun__sched *s, void *state, corun__job *k)
{
    corun__policy_forget_pdata(s, state, k);
    corun__sched_timer(s, corun__sched_now(s));
}

static void slate_timer(corun__sched *s, void *state, uint64_t now)
{
    decide(s);
}

const corun__policy_ops corun__policy_slate = {
    .name = "slate",
    .help = "Slate: co-run kernel pairs that Table I calls complementary, resize on arrival and "
            "completion",
    .needs = CORUN_POLICY_NEEDS_PROFILES,
    .create = slate_create,
    .destroy = slate_destroy,
    .arrive = slate_arrive,
    .paused = slate_paused,
    .complete = slate_complete,
    .timer = slate_timer,
    .forget = corun__policy_forget_pdata,
};
