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
 * Defaults, where a kernel names no CapSMs: an LS kernel reserves what it
 * needs (below); a batch kernel's quota is the rest of the GPU (sm_count -
 * the LS floor, at least reserve_capsm), so the reserved CapSMs stay free
 * for LS arrivals (§6.2.2).
 *
 * Where this departs from the paper, and why:
 *  - Size by need (setting SMGUARD_LS_CAP, default half the GPU; 0 = the
 *    paper's fixed reservation). An LS kernel's R_request is the CapSMs its
 *    grid fills in one wave, ceil(tasks / MaxActivePBlock), at least the
 *    reservation and at most that share of the GPU. SMGuard reserves a fixed
 *    R_reserve: an LS kernel larger than it runs in several waves (the
 *    demo's 132 blocks on 8 reserved CapSMs of 8 slots: three waves where it
 *    ran in one alone), a floor no preemption can beat. The CapSMs it lacks
 *    are taken by onlineResourceAdjust as in the paper, and what it took
 *    beyond the floor is given back when it completes.
 *  - The floor follows the need. Evicting a batch CapSM takes effect when
 *    its running block-task ends (up to 2.5 ms in the demo), longer than
 *    the LS kernel itself, so an LS kernel that must evict runs on what was
 *    free anyway. So while LS work goes on (an LS kernel arrived within
 *    LS_WINDOW_NS) the largest R_request seen stays free, as the
 *    reservation does: batch quotas, the SMs batch kernels are bound to and
 *    their growth keep off it. The first LS kernel of a burst pays the
 *    eviction; the next ones find their CapSMs free. After the window the
 *    floor is the reservation again.
 *  - BlockTasksPerPBlock (line 13) is not computed: workers claim tasks from
 *    a shared counter instead of owning static ranges, so evicted work needs
 *    no remapping (see corun_device.cuh).
 *  - An LS kernel that arrives while other LS kernels run (SMGUARD_BIND=1)
 *    queues for the CapSMs they hold rather than evicting batch CapSMs for
 *    them: it is launched at once on its full R_request, over the GPU's
 *    count, and its blocks take the floor's slots as the running LS
 *    kernel's blocks end (tens of microseconds), where an evicted batch
 *    CapSM is free only when its running block-task ends (milliseconds) and
 *    the blocks that found its first slots ran beside the rest of that
 *    SM's batch tasks. Only what the running LS kernels do not hold is
 *    evicted.
 *  - (SMGUARD_BIND=1) CapSMs just evicted are draining: the batch tasks
 *    running there end up to one task later, and an LS block the hardware
 *    put in a slot one of them left would run beside the rest. A bound
 *    batch kernel's workers that ran tasks on such an SM hold their slots
 *    until the kernel ends (corun__hold), so the SM frees whole then. An LS
 *    kernel does not count draining CapSMs (the first eviction stays off
 *    its critical path: it runs on the reservation and what is clean); the
 *    LS kernels after it do, once the batch kernel has ended (one measured
 *    batch task later for a kernel that does not hold).
 *  - (SMGUARD_BIND=1) A bound batch kernel that arrives while LS kernels
 *    run waits for those to end (tens to hundreds of microseconds) before
 *    it starts: an LS kernel launched in the gap between two batch kernels
 *    has blocks on the batch SMs, the next batch kernel would fill every
 *    other slot there, and the slots that LS kernel leaves would take the
 *    next LS kernel beside running batch tasks (ls_started_before).
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
 *    [0, sm_count - floor - 1] (Slate's and FLEP's spatial mechanism) and
 *    launched so they fill those SMs; the top `floor` SMs stay empty for LS
 *    kernels. LS kernels are not bound: they go where slots are free,
 *    which is the floor's SMs. A bound batch kernel's workers hold their
 *    slots through its tail (corun_worker_arg.hold): a worker that finds no
 *    task left stays, idle, until the kernel's last task ends, so the slots
 *    its tail frees on batch SMs never take an LS block beside a running
 *    batch task (such a block runs far slower than alone: the LS tail,
 *    docs/decisions/0036, 0038). Those slots would be idle anyway: the next
 *    kernel of a batch stream starts only after this one ends. So do the
 *    workers the floor's growth narrows off SMs where they ran tasks (the
 *    first batch kernel, launched before any LS work, fills every SM): the
 *    SMs the floor grows to free whole at that kernel's end, where the LS
 *    kernels meanwhile took their freed slots one by one beside its tasks
 *    (docs/decisions/0041). Binding LS
 *    kernels as well (to the SMs above the batch kernels', with a worker
 *    for every slot of the GPU so that the range fills) was measured on the
 *    H100 and gave no better LS latency (docs/decisions/0012, 0022): the
 *    surplus workers of such a grid wait for slots that batch blocks hold.
 *    SMGUARD_BIND=2 splits the GPU once instead, as the `green` baseline
 *    does (CUDA green contexts; backend.h, partition): an LS partition of
 *    GREEN_LS_SMS SMs (rounded up by the hardware) and the rest. LS kernels
 *    launch into the first and batch kernels into the second, always: the
 *    hardware places no LS block beside a batch block, and no batch kernel
 *    is ever in the LS partition when an LS kernel arrives (with long
 *    batch tasks that is what costs the LS tail). The floor is at least
 *    the LS partition (docs/decisions/0024).
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

/* How long after an LS arrival batch kernels keep off the LS floor, and
 * the floor keeps the size LS kernels needed. */
#define LS_WINDOW_NS 1000000000ull

/* SMGUARD_BIND=1: CapSMs evicted from a batch kernel whose running
 * block-tasks may still occupy them (see resource_decision). */
#define DRAINS 8
typedef struct drain {
    corun__job *victim;  /* NULL: unused */
    uint32_t victim_id;  /* the record may be reused: check the id too */
    uint32_t n;
    uint64_t until;      /* when its tasks have surely ended, or UINT64_MAX:
                            when the victim stops running */
} drain;

typedef struct smguard_state {
    uint64_t last_ls;    /* clock of the last LS arrival, 0 = none */
    uint32_t need;       /* largest LS R_request since LS work began */
    uint32_t part_sms;   /* SMGUARD_BIND=2: SMs of the LS partition, else 0 */
    drain drains[DRAINS];
} smguard_state;

typedef struct smguard_kernel {
    uint32_t request;    /* R_request */
    loan *loans;         /* LS kernels: what they took */
    uint64_t arrived;    /* when it arrived (never 0) */
    uint64_t started;    /* LS: when it was started (never 0), else 0 */
} smguard_kernel;

static uint32_t reserve_of(corun__sched *s)
{
    const uint32_t total = corun__sched_gpu(s)->sm_count;
    const uint64_t reserve = corun__sched_settings(s)->reserve_capsm;

    return reserve < total ? (uint32_t)reserve : total;
}

/* Whether LS work goes on: an LS kernel arrived within LS_WINDOW_NS. */
static bool ls_active(corun__sched *s, const smguard_state *st)
{
    return st != NULL && st->last_ls != 0 && corun__sched_now(s) - st->last_ls <= LS_WINDOW_NS;
}

/* CapSMs kept free for LS kernels now: the reservation, or the largest
 * need of the LS kernels while LS work goes on (size by need). */
static uint32_t ls_floor(corun__sched *s, const smguard_state *st)
{
    const uint32_t reserve = reserve_of(s);
    uint32_t fl = ls_active(s, st) && st->need > reserve ? st->need : reserve;

    if (st != NULL && st->part_sms > fl) {
        fl = st->part_sms; /* batch kernels keep to the other partition */
    }
    return fl;
}

/* R_request of an LS kernel that names no CapSMs: one wave of its grid,
 * within [reservation, SMGUARD_LS_CAP of the GPU]; batch keeps an SM. */
static uint32_t ls_request(corun__sched *s, const corun__job *k)
{
    const uint32_t total = corun__sched_gpu(s)->sm_count, reserve = reserve_of(s);
    const double share = corun__sched_settings(s)->smguard_ls_cap;
    uint64_t need, cap;

    if (share <= 0 || k->per_sm == 0) {
        return reserve > 0 ? reserve : 1;
    }
    need = (k->tasks + k->per_sm - 1) / k->per_sm;
    cap = (uint64_t)(share * total);
    if (cap >= total && reserve < total) {
        cap = total - 1;
    }
    if (need > cap) {
        need = cap;
    }
    if (need < reserve) {
        need = reserve;
    }
    return need > 0 ? (uint32_t)need : 1;
}

static uint32_t default_request(corun__sched *s, const smguard_state *st, const corun__job *k)
{
    if (k->attr.capsm != 0) {
        return k->attr.capsm;
    }
    if (k->attr.cls == CORUN_CLASS_LS) {
        return ls_request(s, k);
    }
    /* not 0: the floor is below the GPU unless the reservation is all of
     * it, and then smguard_admit refused the kernel */
    return corun__sched_gpu(s)->sm_count - ls_floor(s, st);
}

/* CapSMs that running (or stopping) kernels of class cls hold, `except`
 * not counted. */
static uint32_t held_by(corun__sched *s, corun_class cls, const corun__job *except)
{
    uint32_t held = 0;
    corun__job *k;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (k != except && k->attr.cls == cls && !k->plain &&
            (k->state == CORUN_JS_RUNNING || k->state == CORUN_JS_STOPPING)) {
            held += corun__job_capsm(k);
        }
    }
    return held;
}

/* CapSMs batch kernels may still take while LS work goes on: all but the
 * LS floor, less what they hold. */
static uint32_t batch_room(corun__sched *s, const smguard_state *st)
{
    const uint32_t total = corun__sched_gpu(s)->sm_count, fl = ls_floor(s, st);
    uint32_t held;

    if (!ls_active(s, st)) {
        return UINT32_MAX;
    }
    held = held_by(s, CORUN_CLASS_BATCH, NULL);
    return held + fl >= total ? 0 : total - fl - held;
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

/* SMGUARD_BIND=1: n CapSMs were just evicted from v. They are free in the
 * scheduler's count at once, but the block-tasks running on them end up to
 * one task later: until then they are draining. Bounded by v's measured
 * task time where it is known (x1.5: tasks vary), else by v's end; where v
 * holds (corun_worker_arg.hold), by v's end: its workers keep those SMs'
 * slots until then (corun__hold). Where every entry is taken the one that
 * ends first makes room (its CapSMs count as clean). */
static void note_drain(corun__sched *s, smguard_state *st, corun__job *v, uint32_t n)
{
    drain *d;
    size_t i;

    if (st == NULL || corun__sched_settings(s)->smguard_bind != 1) {
        return;
    }
    d = &st->drains[0];
    for (i = 0; i < DRAINS; i++) {
        if (st->drains[i].victim == NULL) {
            d = &st->drains[i];
            break;
        }
        if (st->drains[i].until < d->until) {
            d = &st->drains[i];
        }
    }
    d->victim = v;
    d->victim_id = v->id;
    d->n = n;
    d->until = v->task_ns != 0 && !v->hold ? corun__sched_now(s) + (uint64_t)v->task_ns * 3 / 2
                                           : UINT64_MAX;
}

/* CapSMs still draining now (note_drain); forgets the entries that are over. */
static uint32_t draining(corun__sched *s, smguard_state *st)
{
    const uint64_t now = corun__sched_now(s);
    uint32_t n = 0;
    size_t i;

    if (st == NULL) {
        return 0;
    }
    for (i = 0; i < DRAINS; i++) {
        drain *d = &st->drains[i];
        if (d->victim == NULL) {
            continue;
        }
        if (d->victim->id != d->victim_id || now >= d->until ||
            (d->victim->state != CORUN_JS_RUNNING && d->victim->state != CORUN_JS_STOPPING)) {
            d->victim = NULL;
            continue;
        }
        n += d->n;
    }
    return n;
}

/* onlineResourceAdjust(R_gap): evict up to gap CapSMs from batch kernels on
 * behalf of the LS kernel `ls`. Returns how many were freed. */
static uint32_t online_resource_adjust(corun__sched *s, smguard_state *st, corun__job *ls,
                                       uint32_t gap)
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
        note_drain(s, st, v, take);
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

/* SMGUARD_BIND=1: CapSMs that running LS kernels other than `except` hold.
 * Bound batch kernels hold their slots through their tails, so the slots
 * these free as their blocks end (in an LS kernel's run) are the only ones
 * an LS kernel launched now can get sooner than by evicting a batch CapSM,
 * which takes effect only when its running block-task ends. */
static uint32_t ls_queue(corun__sched *s, const corun__job *except)
{
    return corun__sched_settings(s)->smguard_bind == 1 ? held_by(s, CORUN_CLASS_LS, except) : 0;
}

/* SMGUARD_BIND=1: whether an LS kernel started before `before` still runs.
 * A bound batch kernel started now would fill every free slot of its SMs,
 * around that LS kernel's blocks where the hardware put some there (in the
 * gap between two batch kernels, when those SMs were free); once the LS
 * kernel ends, the slots it leaves are the only free ones on those SMs, and
 * an LS kernel after it (the next of a chain) lands in them, younger than
 * the batch blocks beside it, and waits for that batch kernel's end
 * (docs/decisions/0045). So such a batch kernel waits for the LS kernels
 * running when it arrived, tens to hundreds of microseconds; not for later
 * ones, so that LS kernels arriving one after another cannot hold batch
 * work back. */
static bool ls_started_before(corun__sched *s, uint64_t before)
{
    corun__job *k;

    for (k = corun__sched_first(s); k != NULL; k = k->next) {
        if (k->attr.cls == CORUN_CLASS_LS && !k->plain && pk(k) != NULL &&
            pk(k)->started != 0 && pk(k)->started <= before &&
            (k->state == CORUN_JS_RUNNING || k->state == CORUN_JS_STOPPING)) {
            return true;
        }
    }
    return false;
}

/* Algorithm 1 for one kernel. Returns true if it was started. */
static bool resource_decision(corun__sched *s, smguard_state *st, corun__job *k)
{
    uint32_t request = pk(k)->request;
    uint32_t remain = corun__sched_free_capsm(s);
    uint32_t n;

    if (k->attr.cls == CORUN_CLASS_LS) {
        /* What running LS kernels hold it queues for, and CapSMs still
         * draining it does not take (departures: above); only the rest is
         * evicted from batch kernels, for the LS kernels after it. */
        const uint32_t queue = ls_queue(s, k);
        uint32_t drained;
        if (request > remain && request - remain > queue) {
            remain += online_resource_adjust(s, st, k, request - remain - queue);
        }
        drained = draining(s, st);
        if (remain > drained || queue > 0) {
            /* else nothing clean to start on: better beside batch tasks
             * than waiting for them */
            remain = remain > drained ? remain - drained : 0;
        }
        n = request <= remain + queue ? request : remain + queue;
    } else if (request <= remain) {
        n = request;
    } else {
        n = remain;
    }
    if (n == 0) {
        return false; /* waits for CapSMs (departure: see above) */
    }
    if (corun__sched_settings(s)->smguard_bind == 1 && pk(k) != NULL) {
        if (k->attr.cls == CORUN_CLASS_LS) {
            pk(k)->started = corun__sched_now(s) + 1;
        } else if (k->hold && ls_started_before(s, pk(k)->arrived)) {
            return false; /* until those LS kernels end (redistribute) */
        }
    }
    return corun__sched_run(s, k, n) == CORUN_OK || k->state == CORUN_JS_FAILED;
}

/* CapSMs were released: start waiting kernels in arrival order (LS first),
 * then let batch kernels below their quota grow back, off the LS floor. */
static void redistribute(corun__sched *s, smguard_state *st)
{
    uint32_t room;
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
                (void)resource_decision(s, st, k);
            }
        }
    }
    room = batch_room(s, st);
    for (k = corun__sched_first(s); k != NULL && room > 0; k = k->next) {
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
        if (want > room) {
            want = room;
        }
        if (want > 0 && corun__sched_grow(s, k, want) == CORUN_OK) {
            room -= room == UINT32_MAX ? 0 : want;
        }
    }
}

/* An LS kernel asking for `request` CapSMs arrived: the floor grows to it. */
static void note_ls(corun__sched *s, smguard_state *st, const corun__job *k, uint32_t request)
{
    uint64_t now;

    if (k->attr.cls != CORUN_CLASS_LS || st == NULL) {
        return;
    }
    if (corun__sched_settings(s)->smguard_ls_cap <= 0) {
        request = 0; /* the paper's fixed reservation: the floor stays there */
    }
    if (!ls_active(s, st)) {
        st->need = 0;
    }
    if (request > st->need) {
        st->need = request;
    }
    now = corun__sched_now(s);
    st->last_ls = now > 0 ? now : 1;
}

static void smguard_arrive(corun__sched *s, void *state, corun__job *k)
{
    smguard_state *st = state;
    smguard_kernel *g = calloc(1, sizeof(*g));

    if (g == NULL) {
        note_ls(s, st, k, reserve_of(s));
        corun__policy_run_on_free(s, k);
        return;
    }
    g->request = default_request(s, st, k);
    g->arrived = corun__sched_now(s) + 1;
    note_ls(s, st, k, g->request);
    k->pdata = g;
    if (st != NULL && st->part_sms != 0 && !k->plain) {
        (void)corun__sched_place(s, k, k->attr.cls == CORUN_CLASS_LS ? 1u : 2u);
        g->request = default_request(s, st, k); /* the floor may have grown */
    } else if (k->attr.cls == CORUN_CLASS_BATCH && !k->plain &&
               corun__sched_settings(s)->smguard_bind) {
        uint32_t total = corun__sched_gpu(s)->sm_count;
        uint32_t fl = ls_floor(s, st);
        if (fl > 0 && fl < total) {
            /* Before its first launch; if the backend refuses, the kernel
             * still runs, unbound (logical CapSMs, as in the paper). Bound,
             * it holds its SMs through its tail (see above). */
            k->hold = corun__sched_bind(s, k, 0, total - fl - 1) == CORUN_OK;
        }
    }
    (void)resource_decision(s, st, k);
}

static void smguard_paused(corun__sched *s, void *state, corun__job *k)
{
    /* Evicted down to nothing, or stopped from outside: it runs again as
     * soon as CapSMs allow, like a new arrival. */
    redistribute(s, state);
}

static void smguard_complete(corun__sched *s, void *state, corun__job *k)
{
    smguard_kernel *g = pk(k);

    if (g == NULL && k->plain) {
        return; /* a plain kernel held no CapSMs: nothing to give out */
    }
    if (g != NULL) {
        /* Give back what this LS kernel took, to the kernels it took from,
         * but not the LS floor. */
        uint32_t room = batch_room(s, state);
        loan *l;
        for (l = g->loans; l != NULL && room > 0; l = l->next) {
            corun__job *v = l->lender;
            uint32_t n = l->n, free_now = corun__sched_free_capsm(s);
            if (v->id != l->lender_id || v->state != CORUN_JS_RUNNING) {
                continue;
            }
            if (n > free_now) {
                n = free_now;
            }
            if (n > room) {
                n = room;
            }
            if (n > 0 && corun__sched_grow(s, v, n) == CORUN_OK) {
                room -= room == UINT32_MAX ? 0 : n;
            }
        }
        free_loans(g);
        free(g);
        k->pdata = NULL;
    }
    redistribute(s, state);
}

/* A kernel the program's thread started on our allotment: recorded like an
 * arrival; an LS one takes what it lacks from batch kernels. */
static void smguard_direct(corun__sched *s, void *state, corun__job *k)
{
    smguard_kernel *g;

    note_ls(s, state, k, k->attr.capsm != 0 ? k->attr.capsm : ls_request(s, k));
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
        const uint32_t total = corun__sched_gpu(s)->sm_count, queue = ls_queue(s, k);
        uint32_t held = 0;
        corun__job *o;
        for (o = corun__sched_first(s); o != NULL; o = o->next) {
            if (o != k && o->state == CORUN_JS_RUNNING && !o->plain) {
                held += corun__job_capsm(o);
            }
        }
        if (held + g->request > total + queue) {
            (void)online_resource_adjust(s, state, k, held + g->request - total - queue);
        }
    }
}

static void smguard_allot(corun__sched *s, void *state, corun_class cls, corun__allotment *out)
{
    const smguard_state *st = state;
    const uint32_t total = corun__sched_gpu(s)->sm_count;
    const uint32_t fl = ls_floor(s, st);

    if (cls == CORUN_CLASS_LS) {
        return; /* what it needs: the floor is kept free for it */
    }
    if (!ls_active(s, st) || fl == 0 || fl == total) {
        return; /* no LS work: the whole GPU */
    }
    out->capsm = total - fl;
    if (corun__sched_settings(s)->smguard_bind == 1) {
        out->sm_hi = total - fl - 1;
        out->hold = true;
    }
}

static int smguard_create(corun__sched *s, void **state)
{
    smguard_state *st = calloc(1, sizeof(*st));
    int rc;

    if (st == NULL) {
        return CORUN_ENOMEM;
    }
    if (corun__sched_settings(s)->smguard_bind == 2) {
        rc = corun__sched_split_ls(s, &st->part_sms);
        if (rc != CORUN_OK) {
            free(st);
            return rc;
        }
    }
    *state = st;
    return CORUN_OK;
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
