/* create.c — backends by name. */
#include <stdio.h>
#include <string.h>

#include "backends/create.h"
#include "backends/sim/sim.h"
#ifdef CORUN_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

int corun__backend_have_cuda(void)
{
#ifdef CORUN_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

static int make_sim(const corun__settings *set, const corun_gpu_desc *gpu, uint64_t seed,
                    corun__backend **out)
{
    corun__sim_opts o;

    corun__sim_opts_from(&o, set);
    if (gpu != NULL) {
        o.desc = *gpu;
    }
    o.seed = seed;
    o.dispatch = CORUN_SIM_DISPATCH_PRIORITY;
    return corun__sim_create(&o, out);
}

int corun__backend_create(const char *name, const corun__settings *set,
                          const corun_gpu_desc *sim_gpu, uint64_t seed, corun__backend **out,
                          char *why, size_t why_len)
{
    int rc;

    if (strcmp(name, "sim") == 0) {
        rc = make_sim(set, sim_gpu, seed, out);
        if (rc != CORUN_OK) {
            snprintf(why, why_len, "cannot create the simulator: %s", corun_strerror(rc));
        }
        return rc;
    }
    if (strcmp(name, "cuda") == 0 || strcmp(name, "auto") == 0) {
#ifdef CORUN_HAVE_CUDA
        rc = corun__cuda_create(set, out, why, why_len);
        if (rc == CORUN_OK || strcmp(name, "cuda") == 0) {
            return rc;
        }
#else
        if (strcmp(name, "cuda") == 0) {
            snprintf(why, why_len, "this corun was built without CUDA (no nvcc at build time)");
            return CORUN_ENODEV;
        }
#endif
        rc = make_sim(set, sim_gpu, seed, out);
        if (rc != CORUN_OK) {
            snprintf(why, why_len, "cannot create the simulator: %s", corun_strerror(rc));
        }
        return rc;
    }
    snprintf(why, why_len, "unknown backend '%s' (known: auto, cuda, sim)", name);
    return CORUN_EINVAL;
}
