/* cuda_api.c — dlopen of libcuda and the entry-point table. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_api.h"

static corun__cu table;
static const corun__cu *loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

/* The CUDA version whose ABI of `name` cuda.h declares under that name.
 * cuGetProcAddress hands out the newest version up to the one asked for, and
 * for most names that is the ABI cuda.h maps the name to. Not for
 * cuCtxSynchronize and cuCtxGetDevice: CUDA 13.0 added versions taking the
 * context (cuCtxSynchronize_v2, cuCtxGetDevice_v2) while cuda.h keeps the
 * old names with the old arguments, so asked for by CUDA_VERSION they came
 * back taking an argument they were never passed (cuCtxSynchronize returned
 * CUDA_ERROR_CONTEXT_IS_DESTROYED without waiting; cuCtxGetDevice crashed;
 * H100, driver 580). */
static int abi_version(const char *name)
{
    return strcmp(name, "cuCtxSynchronize") == 0 || strcmp(name, "cuCtxGetDevice") == 0
               ? 2000
               : CUDA_VERSION;
}

static void load(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    get_proc_fn get_proc;
    CUresult r;

    if (lib == NULL) {
        snprintf(load_error, sizeof(load_error), "no NVIDIA driver (dlopen libcuda.so.1: %s)",
                 dlerror());
        return;
    }
    get_proc = (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2");
    if (get_proc == NULL) {
        snprintf(load_error, sizeof(load_error),
                 "the NVIDIA driver is too old (no cuGetProcAddress_v2; CUDA 12 or later needed)");
        return;
    }
#define CORUN__CU_LOAD(name)                                                                   \
    {                                                                                          \
        CUdriverProcAddressQueryResult st;                                                     \
        void *p = NULL;                                                                        \
        r = get_proc(#name, &p, abi_version(#name), CU_GET_PROC_ADDRESS_DEFAULT, &st);         \
        if (r != CUDA_SUCCESS || p == NULL) {                                                  \
            snprintf(load_error, sizeof(load_error), "the NVIDIA driver lacks %s (needed: "   \
                     "driver for CUDA %d)", #name, CUDA_VERSION);                              \
            return;                                                                            \
        }                                                                                      \
        memcpy(&table.name, &p, sizeof(p));                                                    \
    }
    CORUN_CU_FUNCS(CORUN__CU_LOAD)
#undef CORUN__CU_LOAD
    r = table.cuInit(0);
    if (r != CUDA_SUCCESS) {
        char buf[128];
        snprintf(load_error, sizeof(load_error), "cuInit failed: %s",
                 corun__cu_describe(&table, r, buf, sizeof(buf)));
        return;
    }
    (void)table.cuDriverGetVersion(&table.driver_version);
    loaded = &table;
}

const corun__cu *corun__cu_load(char *why, size_t why_len)
{
    pthread_once(&once, load);
    if (loaded == NULL && why != NULL && why_len > 0) {
        snprintf(why, why_len, "%s", load_error);
    }
    return loaded;
}

const char *corun__cu_describe(const corun__cu *cu, CUresult r, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;

    if (cu != NULL) {
        (void)cu->cuGetErrorName(r, &name);
        (void)cu->cuGetErrorString(r, &text);
    }
    snprintf(buf, len, "%s: %s", name ? name : "CUDA_ERROR_UNKNOWN", text ? text : "?");
    return buf;
}
