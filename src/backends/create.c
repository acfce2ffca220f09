/* create.c — backends by name. */
#include <stdio.h>
#include <string.h>

#include "backends/create.h"
#include "backends/cuda/cuda_backend.h" /* declarations only: defined where CORUN_HAVE_CUDA */
#include "backends/sim/sim.h"

int corun__backend_have_cuda(void)
{
#ifdef CORUN_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

/* Whether the CUDA backend can be made here; why says why not. */
static int cuda_usable(const char *device, char *why, size_t why_len)
{
#ifdef CORUN_HAVE_CUDA
    return corun__cuda_usable(device, why, why_len);
#else
    (void)device;
    snprintf(why, why_len, "this corun was built without CUDA (no nvcc at build time)");
    return 0;
#endif
}

unsigned corun__backend_gpus(const char *name)
{
    corun__backend_pick pick;
    char why[256];

    if (corun__backend_resolve(name, NULL, &pick, why, sizeof(why)) != CORUN_OK) {
        return 0;
    }
    if (strcmp(pick.name, CORUN_SIM_NAME) == 0) {
        return 1;
    }
#ifdef CORUN_HAVE_CUDA
    return corun__cuda_count();
#else
    return 0;
#endif
}

int corun__backend_is_auto(const char *name)
{
    return name != NULL && strcmp(name, "auto") == 0;
}

int corun__backend_resolve(const char *name, const char *device, corun__backend_pick *out,
                           char *why, size_t why_len)
{
    const corun__backend_pick sim = {CORUN_SIM_NAME, CORUN_SIM_CAPS, 0};
    int is_auto = corun__backend_is_auto(name);

    if (device != NULL && device[0] != '\0' && strcmp(device, CORUN_CUDA_DEVICE_AUTO) != 0 &&
        strspn(device, "0123456789") != strlen(device)) {
        snprintf(why, why_len, "CORUN_DEVICE = '%s': not auto or a GPU's number", device);
        return CORUN_EINVAL;
    }
    if (name != NULL && strcmp(name, CORUN_SIM_NAME) == 0) {
        *out = sim;
        return CORUN_OK;
    }
    if (name == NULL || (!is_auto && strcmp(name, CORUN_CUDA_NAME) != 0)) {
        snprintf(why, why_len, "unknown backend '%s' (known: auto, cuda, sim)",
                 name != NULL ? name : "(null)");
        return CORUN_EINVAL;
    }
    if (!cuda_usable(device, why, why_len)) {
        if (!is_auto) {
            return CORUN_ENODEV;
        }
        *out = sim;
        out->fell_back = 1;
        return CORUN_OK;
    }
    *out = (corun__backend_pick){CORUN_CUDA_NAME, CORUN_CUDA_CAPS, 0};
    return CORUN_OK;
}

static int make_sim(const corun__settings *set, const corun_gpu_desc *gpu, uint64_t seed,
                    corun__backend **out, char *why, size_t why_len)
{
    corun__sim_opts o;
    int rc;

    corun__sim_opts_from(&o, set);
    if (gpu != NULL) {
        o.desc = *gpu;
    }
    o.seed = seed;
    o.dispatch = CORUN_SIM_DISPATCH_PRIORITY;
    rc = corun__sim_create(&o, out);
    if (rc != CORUN_OK) {
        snprintf(why, why_len, "cannot create the simulator: %s", corun_strerror(rc));
    }
    return rc;
}

int corun__backend_create(const char *name, const corun__settings *set,
                          const corun_gpu_desc *sim_gpu, uint64_t seed, corun__backend **out,
                          char *why, size_t why_len)
{
    corun__backend_pick pick;
    int rc = corun__backend_resolve(name, set->device, &pick, why, why_len);

    if (rc != CORUN_OK) {
        return rc;
    }
    if (strcmp(pick.name, CORUN_SIM_NAME) == 0) {
        return make_sim(set, sim_gpu, seed, out, why, why_len);
    }
#ifdef CORUN_HAVE_CUDA
    return corun__cuda_create(set, out, why, why_len);
#else
    return CORUN_ENODEV; /* resolve picks cuda only where it is built */
#endif
}
