/*
 * policy_plain.c — the baselines: kernels run as ordinary grids and the
 * GPU's own block dispatcher decides.
 *
 *  mps       every kernel on a normal-priority stream: the hardware runs
 *            grids first come, first served, and a later grid gets only
 *            what an earlier one leaves over (the papers' MPS baseline).
 *  priority  latency-sensitive kernels (and kernels with priority > 0) on a
 *            high-priority stream: their pending blocks dispatch first, but
 *            running blocks are never preempted.
 */
#include "core/policy.h"

static void mps_arrive(corun__sched *s, void *state, corun__job *k)
{
    (void)corun__sched_run_plain(s, k, 0);
}

static void priority_arrive(corun__sched *s, void *state, corun__job *k)
{
    int32_t prio = (k->attr.cls == CORUN_CLASS_LS || k->attr.priority > 0) ? 1 : 0;

    (void)corun__sched_run_plain(s, k, prio);
}

/* Stream-ordered launches run plain too (policy.h). */
static void plain_allot(corun__sched *s, void *state, corun_class cls, corun__allotment *out)
{
    (void)s;
    (void)state;
    (void)cls;
    out->plain = true;
}

const corun__policy_ops corun__policy_mps = {
    .name = "mps",
    .help = "baseline: plain kernels, hardware FIFO dispatch (leftover policy)",
    .arrive = mps_arrive,
    .allot = plain_allot,
};

const corun__policy_ops corun__policy_priority = {
    .name = "priority",
    .help = "baseline: plain kernels, LS kernels on high-priority streams (no preemption)",
    .arrive = priority_arrive,
    .allot = plain_allot,
};
