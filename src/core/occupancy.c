/*
 * occupancy.c — the occupancy calculator: how many blocks of a kernel fit on
 * one SM.
 *
 * The rules are those of CUDA's cuda_occupancy.h for compute capability 9.0
 * with the default shared-memory carveout: warps, registers (allocated per
 * warp in units, per register-file partition), shared memory (allocated per
 * block in units, plus the driver's per-block reserve) and the block limit.
 */
#include <stdio.h>

#include "core/occupancy.h"

static uint32_t div_up(uint32_t x, uint32_t y)
{
    return (x + y - 1) / y;
}

static uint32_t round_up(uint32_t x, uint32_t y)
{
    return div_up(x, y) * y;
}

static int too_big(char *why, size_t why_len, const char *what, unsigned long got, unsigned long max)
{
    if (why != NULL && why_len > 0) {
        snprintf(why, why_len, "%s: %lu exceeds the limit of %lu", what, got, max);
    }
    return CORUN_ERANGE;
}

uint32_t corun__regs_per_warp(const corun_gpu_desc *d, uint32_t regs_per_thread)
{
    return round_up(regs_per_thread * d->warp_size, d->reg_alloc_unit);
}

uint32_t corun__smem_per_block(const corun_gpu_desc *d, uint32_t smem_static, uint32_t smem_dynamic)
{
    return round_up(smem_static + smem_dynamic + d->smem_reserved_per_block, d->smem_alloc_unit);
}

CORUN_API int corun_occupancy_calc(const corun_gpu_desc *d, const corun_kernel_shape *s,
                                   corun_occupancy *out, char *why, size_t why_len)
{
    corun_occupancy o;
    uint32_t regs_per_warp, regs_per_part, warps_per_part, smem_limit;
    uint64_t smem_total;

    if (s->threads_per_block == 0) {
        if (why != NULL && why_len > 0) {
            snprintf(why, why_len, "threads per block must be at least 1");
        }
        return CORUN_ERANGE;
    }
    if (s->threads_per_block > d->max_threads_per_block) {
        return too_big(why, why_len, "threads per block", s->threads_per_block,
                       d->max_threads_per_block);
    }
    if (s->regs_per_thread > d->max_regs_per_thread) {
        return too_big(why, why_len, "registers per thread", s->regs_per_thread,
                       d->max_regs_per_thread);
    }
    smem_total = (uint64_t)s->smem_static + s->smem_dynamic;
    smem_limit = s->smem_optin ? d->smem_per_block_optin : d->smem_per_block;
    if (smem_total > smem_limit) {
        return too_big(why, why_len,
                       s->smem_optin ? "shared memory per block (opt-in limit)"
                                     : "shared memory per block (without opt-in)",
                       (unsigned long)smem_total, smem_limit);
    }

    o.warps_per_block = div_up(s->threads_per_block, d->warp_size);
    o.by_warps = (d->max_threads_per_sm / d->warp_size) / o.warps_per_block;
    o.by_blocks = d->max_blocks_per_sm;

    /* Registers are allocated per warp, in each register-file partition; the
     * hardware's per-block check rounds the warps up to the partitions. */
    regs_per_warp = corun__regs_per_warp(d, s->regs_per_thread);
    o.regs_per_block = regs_per_warp * o.warps_per_block;
    if (regs_per_warp == 0) {
        o.by_regs = UINT32_MAX;
    } else {
        uint64_t assumed = (uint64_t)regs_per_warp * round_up(o.warps_per_block, d->reg_sub_partitions);
        if (assumed > d->regs_per_block || o.regs_per_block > d->regs_per_block) {
            return too_big(why, why_len, "registers per block", (unsigned long)assumed,
                           d->regs_per_block);
        }
        regs_per_part = d->regs_per_sm / d->reg_sub_partitions;
        warps_per_part = regs_per_part / regs_per_warp;
        o.by_regs = warps_per_part * d->reg_sub_partitions / o.warps_per_block;
    }

    o.smem_per_block = corun__smem_per_block(d, s->smem_static, s->smem_dynamic);
    o.by_smem = d->smem_per_sm / o.smem_per_block;

    o.blocks_per_sm = o.by_warps;
    o.limiter = CORUN_OCC_LIMIT_WARPS;
    if (o.by_regs < o.blocks_per_sm) {
        o.blocks_per_sm = o.by_regs;
        o.limiter = CORUN_OCC_LIMIT_REGS;
    }
    if (o.by_smem < o.blocks_per_sm) {
        o.blocks_per_sm = o.by_smem;
        o.limiter = CORUN_OCC_LIMIT_SMEM;
    }
    if (o.by_blocks < o.blocks_per_sm) {
        o.blocks_per_sm = o.by_blocks;
        o.limiter = CORUN_OCC_LIMIT_BLOCKS;
    }
    if (o.blocks_per_sm == 0) {
        if (why != NULL && why_len > 0) {
            snprintf(why, why_len, "a block of %u threads, %u registers/thread, %u bytes of shared "
                     "memory does not fit on one SM", s->threads_per_block, s->regs_per_thread,
                     (unsigned)smem_total);
        }
        return CORUN_ERANGE;
    }
    *out = o;
    return CORUN_OK;
}
