/*
 * cuda_backend.h — the real GPU behind the backend interface (driver API).
 *
 *  - One control block (corun_ctl.h) per kernel, in device memory, taken
 *    zeroed from a pool; a launch's constants travel in its parameters, so
 *    nothing is written to the block before a launch.
 *  - Direct launches (corun_launch_stream): the program's thread launches
 *    the primary grid in its own stream; the grid's last worker marks the
 *    kernel finished in host memory, or holds the stream while tasks remain
 *    (a halted kernel), so no host thread stands between a program and its
 *    GPU work.
 *  - Signals are stream writes (cuStreamWriteValue32/64) on a control stream
 *    of the highest priority: workers see them within ~10 us; nothing polls
 *    host memory on the GPU. A direct kernel's halt enqueues its resume grid
 *    behind a gate first, so a resume is a write too.
 *  - Launches on corun's own streams (the scheduler's: scenarios, growth,
 *    resume grids) are followed by a blocking-sync event a pooled waiter
 *    thread sleeps on (not cuLaunchHostFunc: a host function serialises the
 *    kernels of other streams).
 *  - The primary context of device 0 is used, so programs that use the
 *    runtime API share memory with corun.
 */
#ifndef CORUN_BACKENDS_CUDA_BACKEND_H
#define CORUN_BACKENDS_CUDA_BACKEND_H

#include <stddef.h>

#include "core/backend.h"
#include "core/settings.h"

/* The backend's name (its ops, profile store keys) and what it can do. */
#define CORUN_CUDA_NAME "cuda"
#define CORUN_CUDA_CAPS (CORUN_BE_USER_CODE | CORUN_BE_DIRECT)
/* Setting DEVICE's value for the GPU of the calling thread's current context
 * (a GPU's choice, not a backend's). */
#define CORUN_CUDA_DEVICE_AUTO "auto"

/* 1 if the GPU `device` names (setting DEVICE: "auto", the GPU of the
 * calling thread's current CUDA context, else 0; or an ordinal) passes the
 * check corun__cuda_create makes first (a driver, a GPU of compute
 * capability 7.0+, its primary context, corun's synthetic kernel loaded);
 * else 0 with the reason in why. The check runs once per process and GPU
 * and keeps what it set up for the backends made later. */
int corun__cuda_usable(const char *device, char *why, size_t why_len);

int corun__cuda_create(const corun__settings *set, corun__backend **out, char *why,
                       size_t why_len);

/* The GPUs the driver sees, at most the backend's limit; 0 without a driver. */
unsigned corun__cuda_count(void);

/* Wakes a poll() in progress (from another thread). */
void corun__cuda_wake(corun__backend *be);

#endif
