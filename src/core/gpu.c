/*
 * gpu.c — the GPU description: the H100's figures and the check that a
 * description is one the occupancy calculator (occupancy.c) can use.
 */
#include <stdio.h>

#include "corun/corun.h"

CORUN_API void corun_gpu_desc_h100(corun_gpu_desc *d)
{
    d->sm_count = 132;
    d->max_threads_per_sm = 2048;
    d->max_blocks_per_sm = 32;
    d->regs_per_sm = 65536;
    d->smem_per_sm = 228 * 1024;
    d->max_threads_per_block = 1024;
    d->regs_per_block = 65536;
    d->smem_per_block = 48 * 1024;
    d->smem_per_block_optin = 227 * 1024;
    d->smem_reserved_per_block = 1024;
    d->warp_size = 32;
    d->reg_alloc_unit = 256;
    d->smem_alloc_unit = 128;
    d->max_regs_per_thread = 255;
    d->reg_sub_partitions = 4;
}

static int bad_field(char *why, size_t why_len, const char *field, const char *rule,
                     unsigned long v)
{
    if (why != NULL && why_len > 0) {
        snprintf(why, why_len, "GPU description: %s %s %lu", field, rule, v);
    }
    return CORUN_EINVAL;
}

CORUN_API int corun_gpu_desc_check(const corun_gpu_desc *d, char *why, size_t why_len)
{
    const struct {
        const char *name;
        uint32_t value;
        uint32_t max;
    } f[] = {
        {"sm_count", d->sm_count, 4096},
        {"max_threads_per_sm", d->max_threads_per_sm, 1u << 16},
        {"max_blocks_per_sm", d->max_blocks_per_sm, 1024},
        {"regs_per_sm", d->regs_per_sm, 1u << 24},
        {"smem_per_sm", d->smem_per_sm, 1u << 26},
        {"max_threads_per_block", d->max_threads_per_block, 1u << 16},
        {"regs_per_block", d->regs_per_block, 1u << 24},
        {"smem_per_block", d->smem_per_block, 1u << 26},
        {"smem_per_block_optin", d->smem_per_block_optin, 1u << 26},
        {"warp_size", d->warp_size, 1024},
        {"reg_alloc_unit", d->reg_alloc_unit, 1u << 16},
        {"smem_alloc_unit", d->smem_alloc_unit, 1u << 16},
        {"max_regs_per_thread", d->max_regs_per_thread, 1024},
        {"reg_sub_partitions", d->reg_sub_partitions, 64},
    };
    size_t i;

    for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        if (f[i].value == 0 || f[i].value > f[i].max) {
            return bad_field(why, why_len, f[i].name, "must be between 1 and", f[i].max);
        }
    }
    if (d->max_threads_per_block > d->max_threads_per_sm) {
        return bad_field(why, why_len, "max_threads_per_block", "must not exceed max_threads_per_sm =",
                         d->max_threads_per_sm);
    }
    if (d->smem_per_block > d->smem_per_block_optin ||
        d->smem_per_block_optin + d->smem_reserved_per_block > d->smem_per_sm) {
        return bad_field(why, why_len, "smem_per_block/smem_per_block_optin",
                         "must fit (with the reserve) in smem_per_sm =", d->smem_per_sm);
    }
    if (d->regs_per_sm % d->reg_sub_partitions != 0) {
        return bad_field(why, why_len, "reg_sub_partitions", "must divide regs_per_sm =",
                         d->regs_per_sm);
    }
    return CORUN_OK;
}
