/*
 * cuda_backend.h — the real GPU behind the backend interface (driver API).
 *
 *  - One control block (corun_ctl.h) per kernel, in device memory, taken
 *    from a slab allocated once.
 *  - Signals are 32-bit (64-bit for the task limit) stream writes
 *    (cuStreamWriteValue32/64) on a control stream of the highest priority:
 *    workers see them within ~10 us; nothing polls host memory.
 *  - Workers are launched with n x per_sm blocks, per_sm from the occupancy
 *    API for the worker function; growing launches more workers on the same
 *    control block; a paused kernel is resumed the same way.
 *  - Every launch is followed by a blocking-sync event that a pooled waiter
 *    thread sleeps on (cuEventSynchronize); it then queues the launch and
 *    wakes an eventfd that poll() sleeps on, so completion costs no spinning
 *    core. (Not cuLaunchHostFunc: a host function serialises the kernels of
 *    other streams.)
 *  - The primary context of device 0 (or CORUN_DEVICE) is used, so programs
 *    that use the runtime API share memory with corun.
 */
#ifndef CORUN_BACKENDS_CUDA_BACKEND_H
#define CORUN_BACKENDS_CUDA_BACKEND_H

#include <stddef.h>

#include "core/backend.h"
#include "core/settings.h"

/* Code registered by a user program: the plain and worker functions
 * (CUfunction, as void * so this header needs no cuda.h). */
typedef struct corun__cuda_code {
    void *plain;
    void *worker;
    void *ahead;   /* NAME__corun_ahead, or NULL */
    char name[64];
    int allow_occupancy_loss;
} corun__cuda_code;

int corun__cuda_create(const corun__settings *set, corun__backend **out, char *why,
                       size_t why_len);

/* Wakes a poll() in progress (from another thread). */
void corun__cuda_wake(corun__backend *be);

/* Device address of k's control block (for tests and benchmarks). */
unsigned long long corun__cuda_ctl_addr(corun__backend *be, corun__bkernel *k);
/* Sets the per-task execution counter array (device address) of k; only
 * counted by kernels built with CORUN_TASK_HITS. Call before any launch. */
int corun__cuda_set_task_hits(corun__backend *be, corun__bkernel *k, unsigned long long dptr);
/* Human-readable device name and driver version, e.g. for result files. */
void corun__cuda_describe(corun__backend *be, char *name, size_t len, int *driver_version);

#endif
