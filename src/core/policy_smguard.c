/*
 * policy_smguard.c — SMGuard's resource decision (Algorithm 1, §5.1) with
 * online resource adjustment (§5.2).
 *
 * Batch kernels are submitted by quota, latency-sensitive (LS) kernels by
 * reservation, both in CapSMs. On arrival, with R_request the kernel's quota
 * or reservation and R_remain the free CapSMs:
 *
 *   if R_request <= R_remain:       run it on R_request CapSMs
 *   else if it is a reservation:    R_gap = R_request - R_remain;
 *                                   onlineResourceAdjust(R_gap);
 *                                   run it on R_request CapSMs
 *   else (a quota):                 run it on R_quota = R_remain CapSMs
 *
 * and PBWorkerNumber = R x MaxActivePBlock (the scheduler launches R x
 * per_sm workers). onlineResourceAdjust evicts CapSMs from running batch
 * kernels; they are given back when the LS kernel completes.
 *
 * Defaults, where a kernel names no CapSMs: an LS kernel reserves
 * reserve_capsm; a batch kernel's quota is the rest of the GPU
 * (sm_count - reserve_capsm), so the reserved CapSMs stay free for LS
 * arrivals (§6.2.2).
 *
 * Where this departs from the paper, and why:
 *  - BlockTasksPerPBlock (line 13) is not computed: workers claim tasks from
 *    a shared counter instead of owning static ranges, so evicted work needs
 *    no remapping (see corun_device.cuh).
 *  - A quota request that arrives when R_remain = 0 would get zero workers
 *    under line 9; it waits instead, and starts when CapSMs are released.
 *  - A reservation of the whole GPU leaves a batch kernel that names no
 *    CapSMs no quota: it could never start, so it is refused at submission
 *    (smguard_admit) rather than left waiting.
 *  - The paper does not say which batch kernels onlineResourceAdjust takes
 *    from; corun takes from the batch kernel holding the most CapSMs first
 *    (lowest priority first among equals), so the smallest number of
 *    kernels is disturbed.
 *  - A batch kernel that got less than its quota grows back towards it
 *    when CapSMs are released.
 *  - Physical reservation (setting SMGUARD_BIND, default 1). The paper's
 *    CapSMs are logical: MaxActivePBlock consecutive workers "may be
 *    dispatched across several different SMs". On a real GPU that leaves the
 *    reservation as free slots scattered over SMs still running batch
 *    blocks, where an LS block runs several times slower than alone. With
 *    binding, batch kernels are bound by %smid to SMs
 *    [0, sm_count - reserve_capsm - 1] (Slate's and FLEP's spatial
 *    mechanism) and launched so they fill those SMs; the last reserve_capsm
 *    SMs stay empty for LS kernels. LS kernels are not bound: they go where
 *    slots are free, which is the reserved SMs — except in a batch kernel's
 *    tail, when slots free up on batch SMs too and some LS blocks share an
 *    SM with batch blocks. Bound LS kernels would run on the few workers the
 *    hardware places inside their range, and over-launching them would hold
 *    the launch open until every surplus block has found a slot
 *    (docs/decisions/0012-physical-reservation.md).
 *  - Stream-ordered launches (corun_launch_stream) start at once in the
 *    program's thread on the allotment this policy publishes (allot): an LS
 *    launch on every SM (its reservation is a floor kept free for it, not a
 *    cap; a launch that names CapSMs gets those); a batch launch on its
 *    quota, bound
 *    outside the reservation -- but only while the context has LS work (an
 *    LS kernel arrived within LS_WINDOW_NS). SMGuard keeps the reservation
 *    free at all times; a process with no LS work would then leave those
 *    SMs idle under every batch kernel, which no batch program accepts. The
 *    policy hears of such a launch afterwards (direct) and, for an LS one,
 *    evicts batch CapSMs as onlineResourceAdjust does on arrival.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/policy.h"

/* CapSMs an LS kernel took from a batch kernel, owed back on completion. */
typedef struct loan {
    corun__job *lender;
    uint32_t lender_id;  /* the record may be reused: check the id too */
    uint32_t n;
    struct loan *next;
} loan;

/* How long after an LS arrival batch launches keep off the reservation. */
#define LS_WINDOW_NS 1000000000ull

typedef struct smguard_state {
    uint64_t last_ls;    /* clock of the last LS arrival, 0 = none */
} smguard_state;

typedef struct smguard_kernel {
    uint32_t request;    /* R_request */
    loan *loans;         /* LS kernels: what they took */
} smguard_kernel;

static uint32_t default_request(corun__sched *s, const corun__job *k)
{
    uint32_t total = corun__sched_gpu(s)->sm_count;
    uint32_t reserve = (uint32_t)corun__sched_settings(s)->reserve_capsm;

    if (reserve > total) {
        reserve = total;
    }
    if (k->attr.capsm != 0) {
        return k->attr.capsm;
    }
    if (k->attr.cls == CORUN_CLASS_LS) {
        return reserve > 0 ? reserve : 1;
    }
    return total - reserve; /* not 0: smguard_admit refused the kernel */
}

static int smguard_admit(const corun__settings *set, const corun_gpu_desc *gpu,
                         const corun_launch_attr *attr, char *why, size_t why_len)
{
    if (attr->cls != CORUN_CLASS_BATCH || attr->capsm != 0 || set->reserve_capsm < gpu->sm_count) {
        return CORUN_OK;
    }
    if (why != NULL && why_len > 0) {
        snprintf(why, why_len,
                 "smguard: the LS reservation (%llu CapSMs) is the whole GPU (%u SMs), so batch "
                 "kernels have no quota and would never run; reserve fewer CapSMs, or give the "
                 "kernel its own (capsm)",
                 (unsigned long long)set->reserve_capsm, gpu->sm_count);
    }
    return CORUN_ERANGE;
}

static smguard_kernel *pk(corun__job *k)
{
    return (smguard_kernel *)k->pdata;
}

static void free_loans(smguard_kernel *g)
{
    while (g->loans) {
        loan *l = g->loans;
        g->loans = l->next;
        free(l);
    }
}

/* Picks the running batch kernel to take CapSMs from: most CapSMs, then
 * lowest priority, then latest submitted. */
static corun__job *pick_victim(corun__sched *s, const corun__job *except)
{
    corun__job *k, *best = NULL;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (k == except || k->attr.cls != CORUN_CLASS_BATCH || k->state != CORUN_JS_RUNNING ||
            k->plain || corun__job_capsm(k) == 0) {
            continue;
        }
        if (best == NULL || corun__job_capsm(k) > corun__job_capsm(best) ||
            (corun__job_capsm(k) == corun__job_capsm(best) &&
             k->attr.priority <= best->attr.priority)) {
            best = k;
        }
    }
    return best;
}

/* onlineResourceAdjust(R_gap): evict up to gap CapSMs from batch kernels on
 * behalf of the LS kernel `ls`. Returns how many were freed. */
static uint32_t online_resource_adjust(corun__sched *s, corun__job *ls, uint32_t gap)
{
    uint32_t freed = 0;

    while (freed < gap) {
        corun__job *v = pick_victim(s, ls);
        uint32_t take;
        loan *l;

        if (v == NULL) {
            break;
        }
        take = corun__job_capsm(v);
        if (take > gap - freed) {
            take = gap - freed;
        }
        if (corun__sched_shrink(s, v, take) != CORUN_OK) {
            break;
        }
        freed += take;
        l = malloc(sizeof(*l));
        if (l != NULL) {
            l->lender = v;
            l->lender_id = v->id;
            l->n = take;
            l->next = pk(ls)->loans;
            pk(ls)->loans = l;
        }
    }
    return freed;
}

/* Algorithm 1 for one kernel. Returns true if it was started. */
static bool resource_decision(corun__sched *s, corun__job *k)
{
    uint32_t request = pk(k)->request;
    uint32_t remain = corun__sched_free_capsm(s);
    uint32_t n;

    if (request <= remain) {
        n = request;
    } else if (k->attr.cls == CORUN_CLASS_LS) {
        remain += online_resource_adjust(s, k, request - remain);
        n = request <= remain ? request : remain;
    } else {
        n = remain;
    }
    if (n == 0) {
        return false; /* waits for CapSMs (departure: see above) */
    }
    return corun__sched_run(s, k, n) == CORUN_OK || k->state == CORUN_JS_FAILED;
}

/* CapSMs were released: start waiting kernels in arrival order (LS first),
 * then let batch kernels below their quota grow back. */
static void redistribute(corun__sched *s)
{
    corun__job *k;
    int pass;

    if (corun__sched_free_capsm(s) == 0) {
        return; /* O(1) when nothing is free: thousands of direct kernels may be live */
    }
    for (pass = 0; pass < 2; pass++) {
        corun_class want = pass == 0 ? CORUN_CLASS_LS : CORUN_CLASS_BATCH;
        for (k = corun__sched_first(s); k != NULL; k = k->next) {
            if (k->attr.cls != want || k->pdata == NULL) {
                continue;
            }
            if (k->state == CORUN_JS_WAITING || k->state == CORUN_JS_PAUSED) {
                if (corun__sched_free_capsm(s) == 0) {
                    return;
                }
                (void)resource_decision(s, k);
            }
        }
    }
    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        uint32_t free_now = corun__sched_free_capsm(s);
        uint32_t held, want;
        if (free_now == 0) {
            return;
        }
        if (k->attr.cls != CORUN_CLASS_BATCH || k->state != CORUN_JS_RUNNING || k->plain ||
            k->pdata == NULL) {
            continue;
        }
        held = corun__job_capsm(k);
        want = pk(k)->request > held ? pk(k)->request - held : 0;
        if (want > free_now) {
            want = free_now;
        }
        if (want > 0) {
            (void)corun__sched_grow(s, k, want);
        }
    }
}

static void note_ls(corun__sched *s, void *state, const corun__job *k)
{
    if (k->attr.cls == CORUN_CLASS_LS && state != NULL) {
        uint64_t now = corun__sched_now(s);
        ((smguard_state *)state)->last_ls = now > 0 ? now : 1;
    }
}

static void smguard_arrive(corun__sched *s, void *state, corun__job *k)
{
    smguard_kernel *g = calloc(1, sizeof(*g));

    note_ls(s, state, k);

    if (g == NULL) {
        /* Without its record the kernel still runs, on what is free. */
        uint32_t n = corun__sched_free_capsm(s);
        if (n > 0) {
            (void)corun__sched_run(s, k, n);
        }
        return;
    }
    g->request = default_request(s, k);
    k->pdata = g;
    if (k->attr.cls == CORUN_CLASS_BATCH && !k->plain && corun__sched_settings(s)->smguard_bind) {
        uint32_t total = corun__sched_gpu(s)->sm_count;
        uint32_t reserve = (uint32_t)corun__sched_settings(s)->reserve_capsm;
        if (reserve > 0 && reserve < total) {
            /* Before its first launch; if the backend refuses, the kernel
             * still runs, unbound (logical CapSMs, as in the paper). */
            (void)corun__sched_bind(s, k, 0, total - reserve - 1);
        }
    }
    (void)resource_decision(s, k);
}

static void smguard_paused(corun__sched *s, void *state, corun__job *k)
{
    /* Evicted down to nothing, or stopped from outside: it runs again as
     * soon as CapSMs allow, like a new arrival. */
    redistribute(s);
}

static void smguard_complete(corun__sched *s, void *state, corun__job *k)
{
    smguard_kernel *g = pk(k);

    if (g == NULL && k->plain) {
        return; /* a plain kernel held no CapSMs: nothing to give out */
    }
    if (g != NULL) {
        /* Give back what this LS kernel took, to the kernels it took from. */
        loan *l;
        for (l = g->loans; l != NULL; l = l->next) {
            corun__job *v = l->lender;
            uint32_t n = l->n, free_now = corun__sched_free_capsm(s);
            if (v->id != l->lender_id || v->state != CORUN_JS_RUNNING) {
                continue;
            }
            if (n > free_now) {
                n = free_now;
            }
            if (n > 0) {
                (void)corun__sched_grow(s, v, n);
            }
        }
        free_loans(g);
        free(g);
        k->pdata = NULL;
    }
    redistribute(s);
}

/* A kernel the program's thread started on our allotment: recorded like an
 * arrival; an LS one takes what it lacks from batch kernels. */
static void smguard_direct(corun__sched *s, void *state, corun__job *k)
{
    smguard_kernel *g;

    note_ls(s, state, k);
    if (k->state != CORUN_JS_RUNNING) {
        return; /* ran plain */
    }
    g = calloc(1, sizeof(*g));
    if (g == NULL) {
        return;
    }
    g->request = corun__job_capsm(k);
    k->pdata = g;
    if (k->attr.cls == CORUN_CLASS_LS) {
        uint32_t total = corun__sched_gpu(s)->sm_count;
        uint32_t held = 0;
        corun__job *o;
        for (o = corun__sched_first(s); o != NULL; o = o->next) {
            if (o != k && o->state == CORUN_JS_RUNNING && !o->plain) {
                held += corun__job_capsm(o);
            }
        }
        if (held + g->request > total) {
            (void)online_resource_adjust(s, k, held + g->request - total);
        }
    }
}

static void smguard_allot(corun__sched *s, void *state, corun_class cls, corun__allotment *out)
{
    const smguard_state *st = state;
    const corun__settings *set = corun__sched_settings(s);
    uint32_t total = corun__sched_gpu(s)->sm_count;
    uint32_t reserve = set->reserve_capsm < total ? (uint32_t)set->reserve_capsm : total;
    uint64_t now = corun__sched_now(s);

    if (cls == CORUN_CLASS_LS) {
        return; /* what it needs: the reservation is a floor kept free for it */
    }
    if (st == NULL || st->last_ls == 0 || now - st->last_ls > LS_WINDOW_NS || reserve == 0 ||
        reserve == total) {
        return; /* no LS work: the whole GPU */
    }
    out->capsm = total - reserve;
    if (set->smguard_bind) {
        out->sm_hi = total - reserve - 1;
    }
}

static int smguard_create(corun__sched *s, void **state)
{
    (void)s;
    *state = calloc(1, sizeof(smguard_state));
    return *state != NULL ? CORUN_OK : CORUN_ENOMEM;
}

static void smguard_destroy(void *state)
{
    free(state);
}

static void smguard_forget(corun__sched *s, void *state, corun__job *k)
{
    free_loans(pk(k));
    free(k->pdata);
    k->pdata = NULL;
}

const corun__policy_ops corun__policy_smguard = {
    .name = "smguard",
    .help = "SMGuard: CapSM quotas for batch, reservations for LS, eviction and give-back",
    .create = smguard_create,
    .destroy = smguard_destroy,
    .arrive = smguard_arrive,
    .paused = smguard_paused,
    .complete = smguard_complete,
    .allot = smguard_allot,
    .direct = smguard_direct,
    .forget = smguard_forget,
    .admit = smguard_admit,
};
