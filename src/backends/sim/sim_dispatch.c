/*
 * sim_dispatch.c — SMs, their resources, and the hardware block dispatcher.
 *
 * A block fits on an SM when, after adding it, the SM holds no more than
 * max_blocks_per_sm blocks, max_threads_per_sm / warp_size warps and
 * smem_per_sm bytes of shared memory, and each of the block's warps finds
 * corun__regs_per_warp registers in one register-file partition. Warps go
 * greedily to the partition with the most free registers, which for a single
 * kernel packs exactly corun_occupancy_calc's blocks_per_sm blocks per SM.
 *
 * The dispatcher serves grids in queue order (arrival, or priority then
 * arrival) and stops at the first grid whose next block fits nowhere: later
 * grids wait even if their blocks would fit. That is the leftover policy of
 * the hardware dispatcher under MPS, and the reason a latency-sensitive
 * kernel waits behind a big batch grid. A grid confined to one of two static
 * partitions (green contexts on the GPU) goes only to that partition's SMs
 * and waits only behind grids of its own partition (or of the whole GPU):
 * each partition dispatches on its own.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/sim/sim_int.h"
#include "core/occupancy.h"

int corun__sim_sms_init(corun__sim *s)
{
    const corun_gpu_desc *d = &s->opts.desc;
    uint32_t per_sm_max, i;

    s->nsm = d->sm_count;
    s->nparts = d->reg_sub_partitions;
    s->max_warps = d->max_threads_per_sm / d->warp_size;
    s->words = (s->nsm + 63) / 64;
    /* Every block holds at least one warp and one block slot. */
    per_sm_max = d->max_blocks_per_sm < s->max_warps ? d->max_blocks_per_sm : s->max_warps;
    s->max_blocks = per_sm_max * s->nsm;
    s->cap_blocks = s->max_blocks < 4096 ? s->max_blocks : 4096;
    s->nblocks = 0;
    s->free_block = CORUN_SIM_NO_BLOCK;

    s->sm = calloc(s->nsm, sizeof(*s->sm));
    s->part_free = malloc((size_t)s->nsm * s->nparts * sizeof(*s->part_free));
    s->blocks = calloc(s->cap_blocks, sizeof(*s->blocks));
    s->blk_parts = calloc((size_t)s->cap_blocks * s->nparts, sizeof(*s->blk_parts));
    s->dirty = malloc(s->nsm * sizeof(*s->dirty));
    s->ndirty = 0;
    if (s->sm == NULL || s->part_free == NULL || s->blocks == NULL || s->blk_parts == NULL ||
        s->dirty == NULL) {
        corun__sim_sms_free(s);
        return CORUN_ENOMEM;
    }
    for (i = 0; i < s->nsm * s->nparts; i++) {
        s->part_free[i] = d->regs_per_sm / s->nparts;
    }
    for (i = 0; i < s->nsm; i++) {
        s->sm[i].head = s->sm[i].tail = CORUN_SIM_NO_BLOCK;
    }
    return CORUN_OK;
}

void corun__sim_sms_free(corun__sim *s)
{
    free(s->sm);
    free(s->part_free);
    free(s->blocks);
    free(s->blk_parts);
    free(s->dirty);
    s->sm = NULL;
    s->part_free = NULL;
    s->blocks = NULL;
    s->blk_parts = NULL;
    s->dirty = NULL;
}

/* Takes a free pool slot, growing the pool (never beyond what the GPU can
 * hold). Returns CORUN_SIM_NO_BLOCK when memory runs out. */
static uint32_t block_alloc(corun__sim *s)
{
    uint32_t b;

    if (s->free_block != CORUN_SIM_NO_BLOCK) {
        b = s->free_block;
        s->free_block = s->blocks[b].next_free;
        return b;
    }
    if (s->nblocks == s->cap_blocks) {
        uint32_t cap = s->cap_blocks * 2 < s->max_blocks ? s->cap_blocks * 2 : s->max_blocks;
        corun__sim_block *nb;
        uint32_t *np;

        if (cap <= s->cap_blocks) {
            return CORUN_SIM_NO_BLOCK; /* cannot happen: residency is bounded */
        }
        nb = realloc(s->blocks, (size_t)cap * sizeof(*nb));
        if (nb == NULL) {
            return CORUN_SIM_NO_BLOCK;
        }
        s->blocks = nb;
        np = realloc(s->blk_parts, (size_t)cap * s->nparts * sizeof(*np));
        if (np == NULL) {
            return CORUN_SIM_NO_BLOCK;
        }
        s->blk_parts = np;
        s->cap_blocks = cap;
    }
    return s->nblocks++;
}

static bool fits(const corun__sim *s, uint32_t j, const corun__exec *k)
{
    const corun__sim_sm *m = &s->sm[j];

    if (m->blocks >= s->opts.desc.max_blocks_per_sm || m->warps + k->warps > s->max_warps ||
        m->smem + k->smem > s->opts.desc.smem_per_sm) {
        return false;
    }
    if (k->regs_per_warp > 0) {
        /* Greedy placement on the fullest-free partition succeeds exactly when
         * the partitions together have room for every warp. */
        const uint32_t *pf = &s->part_free[(size_t)j * s->nparts];
        uint32_t p, room = 0;
        for (p = 0; p < s->nparts && room < k->warps; p++) {
            room += pf[p] / k->regs_per_warp;
        }
        if (room < k->warps) {
            return false;
        }
    }
    return true;
}

/* First set bit of bits in [from, to), or -1. */
static int64_t next_bit(const uint64_t *bits, uint32_t from, uint32_t to)
{
    uint32_t w;

    if (from >= to) {
        return -1;
    }
    w = from / 64;
    {
        uint64_t x = bits[w] & (~0ull << (from % 64));
        for (;;) {
            if (x != 0) {
                uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(x);
                return i < to ? (int64_t)i : -1;
            }
            if (++w * 64 >= to) {
                return -1;
            }
            x = bits[w];
        }
    }
}

/* The first SM, round robin from the cursor, where l's next block fits; -1
 * if none. SMs found full are remembered in l->may_fit. */
static int64_t find_sm(corun__sim *s, corun__sim_launch *l)
{
    const uint32_t start[2] = {s->rr, 0};
    const uint32_t end[2] = {s->nsm, s->rr};
    int pass;

    for (pass = 0; pass < 2; pass++) {
        int64_t j = next_bit(l->may_fit, start[pass], end[pass]);
        while (j >= 0) {
            if (fits(s, (uint32_t)j, l->k)) {
                return j;
            }
            l->may_fit[j / 64] &= ~(1ull << (j % 64));
            j = next_bit(l->may_fit, (uint32_t)j + 1, end[pass]);
        }
    }
    return -1;
}

/* Puts a block of l on SM j (where it fits). Returns the block, or
 * CORUN_SIM_NO_BLOCK when the pool cannot grow. */
static uint32_t place(corun__sim *s, uint32_t j, corun__sim_launch *l)
{
    const corun__exec *k = l->k;
    corun__sim_sm *m = &s->sm[j];
    uint32_t b = block_alloc(s);
    uint32_t *pf, *bp, w;
    corun__sim_block *blk;

    if (b == CORUN_SIM_NO_BLOCK) {
        return b;
    }
    m->blocks++;
    m->warps += k->warps;
    m->smem += k->smem;
    pf = &s->part_free[(size_t)j * s->nparts];
    bp = &s->blk_parts[(size_t)b * s->nparts];
    memset(bp, 0, s->nparts * sizeof(*bp));
    if (k->regs_per_warp > 0) {
        for (w = 0; w < k->warps; w++) {
            uint32_t p, best = 0;
            for (p = 1; p < s->nparts; p++) {
                if (pf[p] > pf[best]) {
                    best = p;
                }
            }
            pf[best] -= k->regs_per_warp;
            bp[best]++;
        }
    }
    blk = &s->blocks[b];
    memset(blk, 0, sizeof(*blk));
    blk->l = l;
    blk->sm = j;
    blk->hpos = CORUN_SIM_NO_BLOCK;
    blk->first = l->placed;
    blk->worker = l->wa.base + (uint32_t)l->placed;
    corun__sim_share_link(s, b);
    s->resident++;
    s->rr = j + 1 == s->nsm ? 0 : j + 1;
    return b;
}

/* The SMs [*lo, *hi) l's blocks may go to. */
static void place_range(const corun__sim *s, const corun__sim_launch *l, uint32_t *lo,
                        uint32_t *hi)
{
    *lo = l->part == 2 ? s->part_sms : 0;
    *hi = l->part == 1 ? s->part_sms : s->nsm;
}

void corun__sim_block_release(corun__sim *s, uint32_t b)
{
    corun__sim_block *blk = &s->blocks[b];
    const corun__exec *k = blk->l->k;
    const uint32_t j = blk->sm;
    corun__sim_sm *m = &s->sm[j];
    uint32_t *pf = &s->part_free[(size_t)j * s->nparts];
    const uint32_t *bp = &s->blk_parts[(size_t)b * s->nparts];
    corun__sim_launch *q;
    uint32_t p;

    m->blocks--;
    m->warps -= k->warps;
    m->smem -= k->smem;
    for (p = 0; p < s->nparts; p++) {
        pf[p] += bp[p] * k->regs_per_warp;
    }
    for (q = s->q_head; q != NULL; q = q->next) {
        uint32_t lo, hi;
        place_range(s, q, &lo, &hi);
        if (j >= lo && j < hi) {
            q->may_fit[j / 64] |= 1ull << (j % 64);
        }
    }
    corun__sim_share_unlink(s, b);
    if (--s->resident == 0) {
        s->idle_since = s->now;
    }
    s->need_dispatch = true;
    blk->l = NULL;
    blk->next_free = s->free_block;
    s->free_block = b;
}

void corun__sim_enqueue(corun__sim *s, corun__sim_launch *l)
{
    corun__sim_launch *after = s->q_tail;
    uint32_t i, lo, hi;

    place_range(s, l, &lo, &hi);
    memset(l->may_fit, 0, s->words * sizeof(*l->may_fit));
    for (i = lo; i < hi; i++) {
        l->may_fit[i / 64] |= 1ull << (i % 64);
    }
    if (s->opts.dispatch == CORUN_SIM_DISPATCH_PRIORITY) {
        while (after != NULL && after->priority < l->priority) {
            after = after->prev;
        }
    }
    l->prev = after;
    l->next = after != NULL ? after->next : s->q_head;
    if (l->next != NULL) {
        l->next->prev = l;
    } else {
        s->q_tail = l;
    }
    if (after != NULL) {
        after->next = l;
    } else {
        s->q_head = l;
    }
    l->queued = true;
    s->need_dispatch = true;
}

static void dequeue(corun__sim *s, corun__sim_launch *l)
{
    if (l->prev != NULL) {
        l->prev->next = l->next;
    } else {
        s->q_head = l->next;
    }
    if (l->next != NULL) {
        l->next->prev = l->prev;
    } else {
        s->q_tail = l->prev;
    }
    l->prev = l->next = NULL;
    l->queued = false;
}

void corun__sim_dispatch_run(corun__sim *s)
{
    while (s->need_dispatch && s->broken == CORUN_OK) {
        s->need_dispatch = false;
        /* The head is re-read each time: a started block may leave at once
         * and end its launch, recycling the record. */
        for (;;) {
            corun__sim_launch *l = s->q_head;
            unsigned blocked = 0; /* bit p: a grid of partition p fits nowhere */
            int64_t j = -1;
            uint32_t b;

            /* leftover policy: nobody behind a grid that fits nowhere goes
             * first, except in another partition */
            for (; l != NULL; l = l->next) {
                if ((blocked & (1u << l->part)) != 0) {
                    continue;
                }
                j = find_sm(s, l);
                if (j >= 0) {
                    break;
                }
                if (l->part == 0) {
                    l = NULL; /* the whole GPU's queue stops here */
                    break;
                }
                blocked |= 1u << l->part;
            }
            if (l == NULL) {
                break;
            }
            b = place(s, (uint32_t)j, l);
            if (b == CORUN_SIM_NO_BLOCK) {
                s->broken = CORUN_ENOMEM;
                return;
            }
            if (++l->placed == l->blocks) {
                dequeue(s, l);
            }
            corun__sim_block_start(s, b);
            if (s->broken != CORUN_OK) {
                return;
            }
        }
    }
}
