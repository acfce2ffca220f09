/*
 * device.c — the process-wide device state of the CUDA backend: the driver,
 * device 0's primary context (so programs that use the runtime API share
 * memory with corun), its limits, and the synthetic kernel's module. Made
 * once per process; see cuda_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cuda/cuda_int.h"
#include "core/occupancy.h"

/*
 * Eager module loading, unless the user chose otherwise. With lazy loading
 * (CUDA's default since 12.2) the first use of a kernel loads it, and that
 * load waits for the context to be idle (CUDA Programming Guide, Lazy
 * Loading, "Potential hazards"). A halted direct kernel holds its stream
 * until corun resumes it; if the program meanwhile touches a kernel for the
 * first time, the load waits for that stream, and corun's first launch of a
 * resume grid would wait for the load. Setting the variable before the
 * runtime starts, from a constructor of libcorun, loads every kernel at
 * start-up instead. CUDA_MODULE_LOADING=LAZY set by the user is kept.
 */
__attribute__((constructor)) static void eager_loading(void)
{
    (void)setenv("CUDA_MODULE_LOADING", "EAGER", 0);
}

extern const unsigned char *corun__synth_fatbin(size_t *len);

static device_state dstate = {.cal_mu = PTHREAD_MUTEX_INITIALIZER,
                              .builtin_mu = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t dstate_once = PTHREAD_ONCE_INIT;

bool corun__cu_ok(const corun__cu *cu, CUresult r, const char *call, char *why, size_t why_len)
{
    if (r != CUDA_SUCCESS) {
        char buf[160];
        snprintf(why, why_len, "%s failed: %s", call, corun__cu_describe(cu, r, buf, sizeof(buf)));
        return false;
    }
    return true;
}

uint64_t corun__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void device_init(void)
{
    device_state *d = &dstate;
    const corun__cu *cu = corun__cu_load(d->error, sizeof(d->error));
    int count = 0, v;
    size_t fat_len;
    const unsigned char *fat = corun__synth_fatbin(&fat_len);

    if (cu == NULL) {
        return;
    }
    d->cu = cu;
    if (!CU_OK(cu, cu->cuDeviceGetCount(&count), d->error, sizeof(d->error))) {
        return;
    }
    if (count == 0) {
        snprintf(d->error, sizeof(d->error), "the NVIDIA driver sees no GPU");
        return;
    }
    if (!CU_OK(cu, cu->cuDeviceGet(&d->dev, 0), d->error, sizeof(d->error)) ||
        !CU_OK(cu, cu->cuDevicePrimaryCtxRetain(&d->ctx, d->dev), d->error, sizeof(d->error)) ||
        !CU_OK(cu, cu->cuCtxSetCurrent(d->ctx), d->error, sizeof(d->error))) {
        return;
    }
    (void)cu->cuDeviceGetName(d->name, sizeof(d->name), d->dev);
    (void)cu->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
    if (v < 7) {
        snprintf(d->error, sizeof(d->error), "%.100s has compute capability %d.x; corun needs 7.0+",
                 d->name, v);
        return;
    }
    corun_gpu_desc_h100(&d->desc);
#define ATTR(field, attr) \
    if (cu->cuDeviceGetAttribute(&v, attr, d->dev) == CUDA_SUCCESS) d->desc.field = (uint32_t)v
    ATTR(sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    ATTR(max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    ATTR(max_blocks_per_sm, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    ATTR(regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    ATTR(smem_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    ATTR(max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    ATTR(regs_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    ATTR(smem_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    ATTR(smem_per_block_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    ATTR(smem_reserved_per_block, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
#undef ATTR
    (void)cu->cuCtxGetStreamPriorityRange(&d->prio_lo, &d->prio_hi);
    if (!CU_OK(cu, cu->cuModuleLoadData(&d->synth_mod, fat), d->error, sizeof(d->error)) ||
        !CU_OK(cu, cu->cuModuleGetFunction(&d->synth_plain, d->synth_mod, "corun_synth"), d->error,
               sizeof(d->error)) ||
        !CU_OK(cu, cu->cuModuleGetFunction(&d->synth_worker, d->synth_mod, "corun_synth__corun"),
               d->error, sizeof(d->error))) {
        return;
    }
    if (!CU_OK(cu, cu->cuStreamCreateWithPriority(&d->probe, CU_STREAM_NON_BLOCKING, d->prio_lo),
               d->error, sizeof(d->error))) {
        return;
    }
    (void)fat_len;
    d->ok = 1;
}

device_state *corun__cuda_device(char *why, size_t why_len)
{
    pthread_once(&dstate_once, device_init);
    if (!dstate.ok) {
        snprintf(why, why_len, "%s", dstate.error);
        return NULL;
    }
    return &dstate;
}

int corun__cuda_usable(char *why, size_t why_len)
{
    return corun__cuda_device(why, why_len) != NULL;
}
