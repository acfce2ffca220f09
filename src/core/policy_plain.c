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
 *  green     the hardware's own spatial split: the GPU's SMs are split once,
 *            when the scheduler starts, into two static partitions (CUDA
 *            green contexts on the GPU; backend.h, partition): LS kernels
 *            (class ls, or priority > 0) run in the first, of GREEN_LS_SMS
 *            SMs rounded up to what the hardware splits, every other kernel
 *            in the second. Neither partition lends its idle SMs to the other.
 *
 * Stream-ordered launches (corun_launch_stream) run plain under all three,
 * on the whole GPU: the program's own stream belongs to no partition.
 */
#include "core/policy.h"

static void mps_arrive(corun__sched *s, void *state, corun__job *k)
{
    (void)corun__sched_run_plain(s, k, 0);
}

static void priority_arrive(corun__sched *s, void *state, corun__job *k)
{
    int32_t prio = corun__attr_ls(&k->attr) ? 1 : 0;

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

static int green_create(corun__sched *s, void **state)
{
    uint32_t got = 0;

    (void)state;
    return corun__sched_split_ls(s, &got);
}

static void green_arrive(corun__sched *s, void *state, corun__job *k)
{
    const bool ls = corun__attr_ls(&k->attr);

    (void)state;
    (void)corun__sched_run_plain_part(s, k, ls ? 1 : 0, ls ? 1u : 2u);
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

const corun__policy_ops corun__policy_green = {
    .name = "green",
    .help = "baseline: a static SM split (CUDA green contexts), LS kernels in one partition "
            "and the rest in the other, plain kernels (no preemption)",
    .create = green_create,
    .arrive = green_arrive,
    .allot = plain_allot,
};
