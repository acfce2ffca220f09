/*
 * create.h — the backend factory: which backend a name gives ("sim",
 * "cuda", "auto") and making it. The only place that knows backends by
 * name; everything else asks a backend (or a pick) for its capabilities
 * (CORUN_BE_* in core/backend.h).
 */
#ifndef CORUN_BACKENDS_CREATE_H
#define CORUN_BACKENDS_CREATE_H

#include "core/backend.h"
#include "core/settings.h"

/* Which backend a name gives, found without making one. */
typedef struct corun__backend_pick {
    const char *name;   /* "cuda" or "sim": the made backend's ops->name */
    unsigned caps;      /* its CORUN_BE_* capabilities */
    int fell_back;      /* "auto" found no usable GPU and gives the simulator */
} corun__backend_pick;

/* Resolves name: "sim"; "cuda" if the CUDA backend's check of the GPU
 * `device` names (setting DEVICE; corun__cuda_usable: once per process and
 * GPU) passes, else CORUN_ENODEV with why; "auto"
 * is cuda where that check passes, else sim with fell_back set and the
 * reason in why. An unknown name: CORUN_EINVAL with why. A GPU that passes
 * the check can still fail corun__backend_create (streams, memory,
 * threads): that is an error, never a fall-back to the simulator. */
int corun__backend_resolve(const char *name, const char *device, corun__backend_pick *out,
                           char *why, size_t why_len);

/* 1 if name leaves the choice to corun__backend_resolve ("auto"): commands
 * that simulate unless told otherwise (corun sim, corun profile) read it as
 * "sim". */
int corun__backend_is_auto(const char *name);

/* Makes the backend corun__backend_resolve(name) picks. sim_gpu: the GPU
 * the simulator models; seed: its random seed. The cuda backend describes
 * the real GPU. On failure returns the error with why. */
int corun__backend_create(const char *name, const corun__settings *set,
                          const corun_gpu_desc *sim_gpu, uint64_t seed, corun__backend **out,
                          char *why, size_t why_len);

/* How many GPUs backend `name` can run on here: the GPUs the driver sees
 * (after CUDA_VISIBLE_DEVICES) for cuda (and auto with a usable GPU), 0
 * where none; 1 for sim (each simulated GPU is its own). */
unsigned corun__backend_gpus(const char *name);

/* True if this build has the CUDA backend. */
int corun__backend_have_cuda(void);

#endif
