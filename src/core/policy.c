/* policy.c — the registry of scheduling policies, by name. */
#include <string.h>

#include "core/policy.h"

static const corun__policy_ops *const policies[] = {
    &corun__policy_mps,
    &corun__policy_priority,
    &corun__policy_smguard,
    &corun__policy_manual,
    &corun__policy_flep_hpf,
    &corun__policy_flep_ffs,
    &corun__policy_slate,
    &corun__policy_green,
    &corun__policy_fgqos,
    &corun__policy_hsm_fair,
    &corun__policy_hsm_qos,
};

#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

const corun__policy_ops *corun__policy_find(const char *name)
{
    size_t i;

    for (i = 0; i < NPOLICIES; i++) {
        if (strcmp(policies[i]->name, name) == 0) {
            return policies[i];
        }
    }
    return NULL;
}

size_t corun__policy_count(void)
{
    return NPOLICIES;
}

const corun__policy_ops *corun__policy_at(size_t i)
{
    return i < NPOLICIES ? policies[i] : NULL;
}
