/*
 * share.c — the control blocks a process shares with corund (backend ops
 * ctl_share and peer_*, backend.h). A client exports its slab of control
 * blocks by CUDA IPC and keeps, in the page it shares with the daemon, a
 * map of the blocks holding a kernel; the daemon opens the slab in its own
 * context and, when it takes SMs from the client, writes the new SM range
 * into those blocks on its highest-priority stream, so the client's
 * workers there leave at their next chunk, as they do for the client's own
 * signal, without waiting for the client to look at its window. Before
 * that it stores the range into the blocks' mirrors (mirror_fd, a file
 * the client passes it), where the kernels' relays pick it up first.
 *
 * A block the map shows as taken may finish, be zeroed and be taken again
 * between the daemon's look and its write landing: the next kernel there
 * then starts inside the range the daemon wrote, narrower than the
 * client's window if that has widened since (it still runs, on the SMs of
 * the range, and the window's next change rewrites it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_int.h"

_Static_assert(sizeof(CUipcMemHandle) == CORUN_CTL_HANDLE, "ctl_share's handle size");

void corun__cuda_live_mark(cuda_backend *b, uint32_t s, bool taken)
{
    const uint64_t bit = 1ull << (s % 64);

    if (taken) {
        b->live[s / 64] |= bit;
    } else {
        b->live[s / 64] &= ~bit;
    }
    if (b->live_map != NULL && s / 64 < b->live_words) {
        if (taken) {
            __atomic_fetch_or(&b->live_map[s / 64], bit, __ATOMIC_RELEASE);
        } else {
            __atomic_fetch_and(&b->live_map[s / 64], ~bit, __ATOMIC_RELEASE);
        }
    }
}

int corun__cuda_ctl_share(corun__backend *be, void *handle, uint32_t *nslots,
                          uint64_t *live, uint32_t nwords, char *why, size_t why_len)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    CUipcMemHandle h;
    uint32_t i;

    if (live == NULL) { /* stop writing into the map */
        pthread_mutex_lock(&b->pool_mu);
        b->live_map = NULL;
        b->live_words = 0;
        pthread_mutex_unlock(&b->pool_mu);
        return CORUN_OK;
    }
    if (corun__cuda_set_current(b) != CORUN_OK) {
        snprintf(why, why_len, "the GPU's context cannot be made current");
        return CORUN_ECUDA;
    }
    if (!CU_OK(cu, cu->cuIpcGetMemHandle(&h, b->slab), why, why_len)) {
        return CORUN_ECUDA;
    }
    memcpy(handle, &h, sizeof(h));
    *nslots = nwords * 64 < CTL_SLOTS ? nwords * 64 : CTL_SLOTS;
    pthread_mutex_lock(&b->pool_mu);
    b->live_map = live;
    b->live_words = nwords < CTL_SLOTS / 64 ? nwords : CTL_SLOTS / 64;
    for (i = 0; i < b->live_words; i++) {
        __atomic_store_n(&live[i], b->live[i], __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&b->pool_mu);
    return CORUN_OK;
}

int corun__cuda_mirror_fd(corun__backend *be)
{
    const cuda_backend *b = cb(be);

    return b->mirror != NULL ? b->mirror_fd : -1;
}

typedef struct peer {
    CUdeviceptr base;
    uint32_t nslots;
} peer;

void *corun__cuda_peer_open(corun__backend *be, const void *handle, uint32_t nslots, char *why,
                            size_t why_len)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    CUipcMemHandle h;
    peer *p;

    if (nslots == 0 || nslots > CTL_SLOTS) {
        snprintf(why, why_len, "%u control blocks: not 1 to %u", nslots, CTL_SLOTS);
        return NULL;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    memcpy(&h, handle, sizeof(h));
    if (corun__cuda_set_current(b) != CORUN_OK ||
        !CU_OK(cu, cu->cuIpcOpenMemHandle(&p->base, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), why,
               why_len)) {
        free(p);
        return NULL;
    }
    p->nslots = nslots;
    return p;
}

int corun__cuda_peer_range(corun__backend *be, void *pv, uint32_t slot, uint32_t lo, uint32_t hi)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    const peer *p = pv;
    CUdeviceptr ctl;

    if (p == NULL || slot >= p->nslots || lo > hi) {
        return CORUN_EINVAL;
    }
    ctl = p->base + (CUdeviceptr)slot * sizeof(corun_ctl);
    if (corun__cuda_set_current(b) != CORUN_OK ||
        cu->cuStreamWriteValue32(b->ctl, ctl + offsetof(corun_ctl, sm_hi_inv), ~hi, 0) !=
            CUDA_SUCCESS ||
        cu->cuStreamWriteValue32(b->ctl, ctl + offsetof(corun_ctl, sm_lo), lo, 0) !=
            CUDA_SUCCESS) {
        return CORUN_ECUDA;
    }
    return CORUN_OK;
}

void corun__cuda_peer_close(corun__backend *be, void *pv)
{
    cuda_backend *b = cb(be);
    peer *p = pv;

    if (p == NULL) {
        return;
    }
    if (corun__cuda_set_current(b) == CORUN_OK) {
        (void)b->d->cu->cuStreamSynchronize(b->ctl); /* its writes land before the unmap */
        (void)b->d->cu->cuIpcCloseMemHandle(p->base);
    }
    free(p);
}
