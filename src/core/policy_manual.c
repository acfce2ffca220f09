/*
 * policy_manual.c — no decisions: a kernel starts on the CapSMs it asks for
 * (all SMs if it names none) and changes only when its owner preempts,
 * resizes or resumes it through the host API. CapSMs may be oversubscribed.
 */
#include "core/policy.h"

static void manual_arrive(corun__sched *s, void *state, corun__job *k)
{
    uint32_t n = k->attr.capsm ? k->attr.capsm : corun__sched_gpu(s)->sm_count;

    (void)corun__sched_run(s, k, n);
}

const corun__policy_ops corun__policy_manual = {
    .name = "manual",
    .help = "no automatic decisions: kernels run on the CapSMs they ask for until told otherwise",
    .arrive = manual_arrive,
};
