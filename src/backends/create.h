/* create.h — making a backend by name ("sim", "cuda", "auto"). */
#ifndef CORUN_BACKENDS_CREATE_H
#define CORUN_BACKENDS_CREATE_H

#include "core/backend.h"
#include "core/settings.h"

/* name: "sim", "cuda" or "auto" (cuda if a GPU is usable, else sim).
 * sim_gpu: the GPU the simulator models; seed: its random seed. The cuda
 * backend describes the real GPU. On failure returns the error with why. */
int corun__backend_create(const char *name, const corun__settings *set,
                          const corun_gpu_desc *sim_gpu, uint64_t seed, corun__backend **out,
                          char *why, size_t why_len);

/* True if this build has the CUDA backend. */
int corun__backend_have_cuda(void);

#endif
