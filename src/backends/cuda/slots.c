/*
 * slots.c — the control blocks and their reports. A slab of CTL_SLOTS
 * control blocks in device memory, zero when free (a zero block is a fresh
 * one, corun_ctl.h), and beside each a report in mapped host memory. A
 * launch takes a zeroed slot from a FIFO ring: no write before the launch.
 * A finished slot goes to the zeroing thread, which clears the finished
 * ones in runs of neighbours (one memset each, on a stream of its own,
 * waited for there) and gives them back to the ring. The thread may wait
 * on the driver; nothing else ever waits for it, so the pool only runs
 * low meanwhile and a launch then runs plain (direct_launch's CORUN_EBUSY).
 * Beside each block, its signal words' mirror (the relay, corun_ctl.h) in
 * a shared memory file registered with the driver, zeroed with the block.
 * See cuda_int.h.
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backends/cuda/cuda_int.h"

_Static_assert(sizeof(corun_ctl) == 3 * CORUN_CTL_LINE, "control block layout");
_Static_assert(offsetof(corun_ctl, next) == CORUN_CTL_LINE, "control block layout");
_Static_assert(sizeof(corun_report) == 32, "report layout");

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Zeroes the slots v[0..n) (sorted), in runs of neighbours, and waits. */
static void zero_runs(cuda_backend *b, const uint32_t *v, uint32_t n)
{
    const corun__cu *cu = b->d->cu;
    uint32_t i = 0;

    while (i < n) {
        uint32_t j = i + 1;
        while (j < n && v[j] == v[j - 1] + 1) {
            j++;
        }
        (void)cu->cuMemsetD8Async(b->slab + (CUdeviceptr)v[i] * sizeof(corun_ctl), 0,
                                  (size_t)(j - i) * sizeof(corun_ctl), b->zero_stream);
        i = j;
    }
    (void)cu->cuStreamSynchronize(b->zero_stream);
}

static void *zero_main(void *p)
{
    cuda_backend *b = p;
    uint32_t batch[CTL_SLOTS];

    (void)b->d->cu->cuCtxSetCurrent(b->d->ctx);
    pthread_mutex_lock(&b->pool_mu);
    for (;;) {
        uint32_t n, i;
        while (b->ndirty == 0 && !b->zero_stop) {
            pthread_cond_wait(&b->pool_cv, &b->pool_mu);
        }
        if (b->ndirty == 0) {
            break;
        }
        n = b->ndirty;
        memcpy(batch, b->dirty, n * sizeof(*batch));
        b->ndirty = 0;
        pthread_mutex_unlock(&b->pool_mu);
        qsort(batch, n, sizeof(*batch), cmp_u32);
        zero_runs(b, batch, n);
        /* the signal words only: `over` stays for a relay yet to read it */
        for (i = 0; b->mirror != NULL && i < n; i++) {
            memset(b->mirror + (size_t)batch[i] * CORUN_MIRROR_STRIDE, 0, CORUN_MIRROR_SIGNALS);
        }
        pthread_mutex_lock(&b->pool_mu);
        for (i = 0; i < n; i++) {
            b->free_ring[(b->free_head + b->free_n++) % CTL_SLOTS] = batch[i];
        }
    }
    pthread_mutex_unlock(&b->pool_mu);
    return NULL;
}

/* The mirrors: a memfd (corund maps it too), registered with the driver.
 * Where that fails there are none, and no grid gets a relay. */
static void mirror_init(cuda_backend *b)
{
    const corun__cu *cu = b->d->cu;
    void *p = MAP_FAILED;
    CUdeviceptr dev = 0;
    int fd = memfd_create("corun-mirror", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    b->mirror = NULL;
    b->mirror_fd = -1;
    /* sealed at its size: corund, which maps it too, is never cut short */
    if (fd >= 0 && ftruncate(fd, (off_t)CORUN_MIRROR_BYTES) == 0 &&
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0) {
        p = mmap(NULL, CORUN_MIRROR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    if (p != MAP_FAILED) {
        if (cu->cuMemHostRegister(p, CORUN_MIRROR_BYTES, CU_MEMHOSTREGISTER_DEVICEMAP |
                                                       CU_MEMHOSTREGISTER_PORTABLE) ==
            CUDA_SUCCESS) {
            if (cu->cuMemHostGetDevicePointer(&dev, p, 0) == CUDA_SUCCESS) {
                b->mirror = p;
                b->mirror_dev = dev;
                b->mirror_fd = fd;
                return;
            }
            (void)cu->cuMemHostUnregister(p);
        }
        munmap(p, CORUN_MIRROR_BYTES);
    }
    if (fd >= 0) {
        close(fd);
    }
}

int corun__cuda_slots_init(cuda_backend *b, char *why, size_t why_len)
{
    const corun__cu *cu = b->d->cu;
    uint32_t i;

    pthread_mutex_init(&b->pool_mu, NULL);
    pthread_cond_init(&b->pool_cv, NULL);
    if (!CU_OK(cu, cu->cuMemAlloc(&b->slab, CTL_SLOTS * sizeof(corun_ctl)), why, why_len) ||
        !CU_OK(cu, cu->cuMemsetD8(b->slab, 0, CTL_SLOTS * sizeof(corun_ctl)), why, why_len) ||
        !CU_OK(cu, cu->cuMemHostAlloc((void **)&b->reports, CTL_SLOTS * sizeof(corun_report),
                                      CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
               why, why_len) ||
        !CU_OK(cu, cu->cuMemHostGetDevicePointer(&b->reports_dev, b->reports, 0), why,
               why_len) ||
        !CU_OK(cu, cu->cuMemAllocHost((void **)&b->readback, sizeof(corun_ctl)), why, why_len) ||
        !CU_OK(cu, cu->cuStreamCreateWithPriority(&b->zero_stream, CU_STREAM_NON_BLOCKING,
                                                  b->d->prio_lo),
               why, why_len)) {
        return CORUN_ECUDA;
    }
    memset(b->reports, 0, CTL_SLOTS * sizeof(corun_report));
    mirror_init(b);
    for (i = 0; i < CTL_SLOTS; i++) {
        b->free_ring[i] = i;
    }
    b->free_head = 0;
    b->free_n = CTL_SLOTS;
    if (pthread_create(&b->zero_thread, NULL, zero_main, b) != 0) {
        snprintf(why, why_len, "cannot start the thread that zeroes control blocks");
        return CORUN_ENOMEM;
    }
    b->zero_started = true;
    return CORUN_OK;
}

void corun__cuda_slots_free(cuda_backend *b)
{
    const corun__cu *cu = b->d->cu;

    if (b->zero_started) {
        pthread_mutex_lock(&b->pool_mu);
        b->zero_stop = true;
        pthread_cond_signal(&b->pool_cv);
        pthread_mutex_unlock(&b->pool_mu);
        pthread_join(b->zero_thread, NULL);
        b->zero_started = false;
    }
    if (b->zero_stream) {
        (void)cu->cuStreamDestroy(b->zero_stream);
    }
    if (b->slab) {
        (void)cu->cuMemFree(b->slab);
    }
    if (b->reports) {
        (void)cu->cuMemFreeHost(b->reports);
    }
    if (b->readback) {
        (void)cu->cuMemFreeHost(b->readback);
    }
    if (b->mirror != NULL) {
        (void)cu->cuMemHostUnregister(b->mirror);
        munmap(b->mirror, CORUN_MIRROR_BYTES);
        close(b->mirror_fd);
        b->mirror = NULL;
    }
    pthread_mutex_destroy(&b->pool_mu);
    pthread_cond_destroy(&b->pool_cv);
}

int corun__cuda_slot_take(cuda_backend *b, uint32_t *slot)
{
    int rc = CORUN_EBUSY;

    pthread_mutex_lock(&b->pool_mu);
    if (b->free_n > 0) {
        *slot = b->free_ring[b->free_head];
        b->free_head = (b->free_head + 1) % CTL_SLOTS;
        b->free_n--;
        b->slot_seq[*slot]++;
        corun__cuda_live_mark(b, *slot, true);
        rc = CORUN_OK;
    }
    pthread_mutex_unlock(&b->pool_mu);
    return rc;
}

uint32_t corun__cuda_relay_plan(const cuda_backend *b, corun__exec *k, uint32_t w,
                                uint32_t sm_lo, uint32_t sm_hi)
{
    bool on = false;

    k->wa.relay = 0;
    k->wa.relay_block = 0;
    if (b->mirror == NULL || b->set.relay == 0) {
        return w;
    }
    w = corun__relay_plan(w, k->per_sm, sm_lo, sm_hi, b->d->desc.sm_count, k->ch.tasks, &on);
    k->wa.relay = b->mirror_dev + (CUdeviceptr)k->slot * CORUN_MIRROR_STRIDE;
    k->wa.relay_block = on;
    return w;
}

void corun__cuda_slot_give(cuda_backend *b, uint32_t slot, bool clean)
{
    pthread_mutex_lock(&b->pool_mu);
    corun__cuda_live_mark(b, slot, false);
    if (clean) {
        b->free_ring[(b->free_head + b->free_n++) % CTL_SLOTS] = slot;
    } else {
        b->dirty[b->ndirty++] = slot;
        pthread_cond_signal(&b->pool_cv);
    }
    pthread_mutex_unlock(&b->pool_mu);
}
