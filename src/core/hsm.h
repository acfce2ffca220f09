/*
 * hsm.h — HSM's normalized-progress model (../shared/papers/hsm.md, §2), as
 * the hsm-fair and hsm-qos policies (policy_hsm.c) and `corun experiment
 * hsm` apply it: one definition for what the policies decide on and what
 * the experiment checks.
 */
#ifndef CORUN_CORE_HSM_H
#define CORUN_CORE_HSM_H

#include <stdbool.h>

#include "core/profile_store.h"
#include "core/settings.h"

/* The classifier: memory-bound where the kernel's memory intensity alone is
 * Medium or High (Slate's classes from its intensity profile); false
 * without a profile. */
bool corun__hsm_memory_bound(const corun__pprof *prof, const corun__settings *set);

/* Predicted NP of a kernel over a stretch: compute-bound, its share of the
 * GPU's SMs (eq. 4); memory-bound, its block-tasks per ns over its isolated
 * rate (eq. 5 with DRAM bytes attributed by progress); a memory-bound kernel
 * without an isolated rate (iso <= 0) is predicted as compute-bound. */
double corun__hsm_np(bool memory, double sm_share, double tasks_per_ns, double iso);

#endif
