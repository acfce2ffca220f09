/*
 * device.c — the process-wide state of each device the CUDA backend runs
 * on: the driver, the device's primary context (so programs that use the
 * runtime API share memory with corun), its limits, and the synthetic
 * kernel's module. Made once per device and process; see cuda_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cuda/cuda_backend.h"
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

/* Each device's state, made on first use under dstates_mu and kept. */
static device_state dstates[CORUN_CUDA_MAX_DEVICES];
static bool dstate_made[CORUN_CUDA_MAX_DEVICES];
static pthread_mutex_t dstates_mu = PTHREAD_MUTEX_INITIALIZER;

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

static void device_setup(device_state *d, const corun__cu *cu, const unsigned char *fat);

/* Sets up device `ordinal` (< the driver's device count) in d. On the
 * calling thread its context is made current only while it works. */
static void device_init(device_state *d, const corun__cu *cu, int ordinal)
{
    int dom = 0, bus = 0, slot = 0;
    size_t fat_len;
    const unsigned char *fat = corun__synth_fatbin(&fat_len);
    CUcontext before = NULL;

    pthread_mutex_init(&d->cal_mu, NULL);
    pthread_mutex_init(&d->builtin_mu, NULL);
    d->cu = cu;
    d->ordinal = ordinal;
    (void)cu->cuCtxGetCurrent(&before);
    if (!CU_OK(cu, cu->cuDeviceGet(&d->dev, ordinal), d->error, sizeof(d->error)) ||
        !CU_OK(cu, cu->cuDevicePrimaryCtxRetain(&d->ctx, d->dev), d->error, sizeof(d->error)) ||
        !CU_OK(cu, cu->cuCtxSetCurrent(d->ctx), d->error, sizeof(d->error))) {
        return;
    }
    (void)cu->cuDeviceGetAttribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d->dev);
    (void)cu->cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d->dev);
    (void)cu->cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d->dev);
    d->gpu_id = corun__gpu_id_pci((uint32_t)dom, (uint32_t)bus, (uint32_t)slot);
    (void)fat_len;
    device_setup(d, cu, fat);
    (void)cu->cuCtxSetCurrent(before != NULL ? before : d->ctx);
}

/* The rest of device_init, in the device's context. */
static void device_setup(device_state *d, const corun__cu *cu, const unsigned char *fat)
{
    int v;

    (void)cu->cuDeviceGetName(d->name, sizeof(d->name), d->dev);
    (void)cu->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
    if (v < 7) {
        char name[sizeof(d->name)];
        memcpy(name, d->name, sizeof(name)); /* (gcc cannot tell the two fields apart) */
        snprintf(d->error, sizeof(d->error), "%.100s has compute capability %d.x; corun needs 7.0+",
                 name, v);
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
    d->ok = 1;
}

/* The ordinal `device` names (setting DEVICE): a number, or "auto", the
 * device of the calling thread's current context (a program's, once it
 * has used the runtime) and else 0. -1 with why when there is none. */
static int pick(const corun__cu *cu, const char *device, char *why, size_t why_len)
{
    CUcontext cur = NULL;
    CUdevice dev;
    int count = 0, ordinal = 0, i;
    char *end;

    if (!CU_OK(cu, cu->cuDeviceGetCount(&count), why, why_len)) {
        return -1;
    }
    if (count == 0) {
        snprintf(why, why_len, "the NVIDIA driver sees no GPU");
        return -1;
    }
    if (device == NULL || device[0] == '\0' || strcmp(device, CORUN_CUDA_DEVICE_AUTO) == 0) {
        if (cu->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != NULL &&
            cu->cuCtxGetDevice(&dev) == CUDA_SUCCESS) {
            for (i = 0; i < count; i++) {
                CUdevice d;
                if (cu->cuDeviceGet(&d, i) == CUDA_SUCCESS && d == dev) {
                    ordinal = i;
                }
            }
        }
    } else {
        long v = strtol(device, &end, 10);
        if (*end != '\0' || end == device || v < 0 || v >= count) {
            snprintf(why, why_len, "CORUN_DEVICE = '%s': not auto or a GPU's ordinal (the driver "
                     "sees %d GPU%s: 0 to %d)", device, count, count == 1 ? "" : "s", count - 1);
            return -1;
        }
        ordinal = (int)v;
    }
    if (ordinal >= CORUN_CUDA_MAX_DEVICES) {
        snprintf(why, why_len, "GPU %d: corun runs on the first %d of a host's GPUs", ordinal,
                 CORUN_CUDA_MAX_DEVICES);
        return -1;
    }
    return ordinal;
}

device_state *corun__cuda_device(const char *device, char *why, size_t why_len)
{
    const corun__cu *cu = corun__cu_load(why, why_len);
    device_state *d;
    int ordinal;

    if (cu == NULL || (ordinal = pick(cu, device, why, why_len)) < 0) {
        return NULL;
    }
    d = &dstates[ordinal];
    pthread_mutex_lock(&dstates_mu);
    if (!dstate_made[ordinal]) {
        dstate_made[ordinal] = true;
        device_init(d, cu, ordinal);
    }
    pthread_mutex_unlock(&dstates_mu);
    if (!d->ok) {
        snprintf(why, why_len, "GPU %d: %s", ordinal, d->error);
        return NULL;
    }
    return d;
}

unsigned corun__cuda_count(void)
{
    const corun__cu *cu = corun__cu_load(NULL, 0);
    int count = 0;

    if (cu == NULL || cu->cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 0) {
        return 0;
    }
    return count < CORUN_CUDA_MAX_DEVICES ? (unsigned)count : CORUN_CUDA_MAX_DEVICES;
}

int corun__cuda_usable(const char *device, char *why, size_t why_len)
{
    return corun__cuda_device(device, why, why_len) != NULL;
}
