/*
 * builtin.c — the repo's real kernels a scenario names (kernel key "code":
 * gpu-check's matmul, reduce and vadd, compiled into the synthetic kernel's
 * module), launched as a program's registered kernels are, on buffers of
 * the device's own whose size follows from the grid. Their contents are
 * set once (ones) and not checked: a scenario measures time, gpu-check
 * checks the kernels' results.
 */
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_int.h"

static const struct builtin_def {
    const char *name;
    bool ahead;       /* CORUN_SHARED: has NAME__corun_ahead */
    unsigned nbufs;
} defs[CORUN_BUILTIN_COUNT] = {
    [CORUN_BUILTIN_MATMUL] = {"matmul", true, 3}, /* A, B, C: n x n floats */
    [CORUN_BUILTIN_REDUCE] = {"reduce", true, 2}, /* n integers, their 64-bit sum */
    [CORUN_BUILTIN_VADD] = {"vadd", false, 3},    /* a, b, c: n floats */
};

/* Most bytes one buffer may take. */
#define BUF_MAX (4ull << 30)

/* The problem size and buffer sizes of a launch of grid g; false if too big. */
static bool sizes(corun__builtin id, corun_dim3 g, int *n, size_t bytes[3])
{
    unsigned long long m;

    switch (id) {
    case CORUN_BUILTIN_MATMUL:
        m = 32ull * (g.x > g.y ? g.x : g.y);
        bytes[0] = bytes[1] = bytes[2] = m * m * sizeof(float);
        break;
    case CORUN_BUILTIN_REDUCE:
        m = 1024ull * g.x; /* 256 threads, 4 integers each */
        bytes[0] = m * sizeof(unsigned);
        bytes[1] = sizeof(unsigned long long);
        bytes[2] = 0;
        break;
    case CORUN_BUILTIN_VADD:
    default:
        m = 256ull * g.x;
        bytes[0] = bytes[1] = bytes[2] = m * sizeof(float);
        break;
    }
    *n = (int)m;
    return m <= 0x7fffffffull && bytes[0] <= BUF_MAX;
}

/* The kernel's functions in the module, looked up once. Under builtin_mu. */
static int functions(device_state *d, const struct builtin_def *def, corun__builtin id,
                     char *why, size_t why_len)
{
    const corun__cu *cu = d->cu;
    char name[64];

    if (d->builtin_fn[id][0] != NULL) {
        return CORUN_OK;
    }
    snprintf(name, sizeof(name), "%s__corun", def->name);
    if (!CU_OK(cu, cu->cuModuleGetFunction(&d->builtin_fn[id][1], d->synth_mod, name), why,
               why_len)) {
        return CORUN_ECUDA;
    }
    snprintf(name, sizeof(name), "%s__corun_ahead", def->name);
    if (def->ahead &&
        !CU_OK(cu, cu->cuModuleGetFunction(&d->builtin_fn[id][2], d->synth_mod, name), why,
               why_len)) {
        return CORUN_ECUDA;
    }
    if (!CU_OK(cu, cu->cuModuleGetFunction(&d->builtin_fn[id][0], d->synth_mod, def->name), why,
               why_len)) {
        return CORUN_ECUDA;
    }
    return CORUN_OK;
}

/* Buffers of at least bytes[], filled with ones (floats 1.0f for matmul and
 * vadd, integers 1 for reduce). Under builtin_mu. */
static int buffers(device_state *d, const struct builtin_def *def, corun__builtin id,
                   const size_t bytes[3], char *why, size_t why_len)
{
    const corun__cu *cu = d->cu;
    const unsigned one = id == CORUN_BUILTIN_REDUCE ? 1u : 0x3f800000u;
    unsigned i;

    for (i = 0; i < def->nbufs; i++) {
        if (d->builtin_bytes[id][i] >= bytes[i]) {
            continue;
        }
        if (d->builtin_buf[id][i] != 0) {
            (void)cu->cuMemFree(d->builtin_buf[id][i]);
            d->builtin_buf[id][i] = 0;
            d->builtin_bytes[id][i] = 0;
        }
        if (!CU_OK(cu, cu->cuMemAlloc(&d->builtin_buf[id][i], bytes[i]), why, why_len) ||
            !CU_OK(cu, cu->cuMemsetD32Async(d->builtin_buf[id][i], one, bytes[i] / 4, d->probe),
                   why, why_len) ||
            !CU_OK(cu, cu->cuStreamSynchronize(d->probe), why, why_len)) {
            return CORUN_ECUDA;
        }
        d->builtin_bytes[id][i] = bytes[i];
    }
    return CORUN_OK;
}

int corun__cuda_builtin_bind(cuda_backend *b, corun__kspec *spec, builtin_args *a, char *why,
                             size_t why_len)
{
    device_state *d = b->d;
    const corun__builtin id = spec->builtin;
    const struct builtin_def *def;
    size_t bytes[3];
    int rc;

    if (id <= CORUN_BUILTIN_NONE || id >= CORUN_BUILTIN_COUNT) {
        snprintf(why, why_len, "kernel '%s': no such real kernel (%d)", spec->name, (int)id);
        return CORUN_EINVAL;
    }
    def = &defs[id];
    if (!sizes(id, spec->grid, &a->n, bytes)) {
        snprintf(why, why_len, "kernel '%s': a %s grid of [%u, %u, %u] needs buffers of more "
                 "than %llu GiB", spec->name, def->name, spec->grid.x, spec->grid.y,
                 spec->grid.z, BUF_MAX >> 30);
        return CORUN_ERANGE;
    }
    pthread_mutex_lock(&d->builtin_mu);
    rc = functions(d, def, id, why, why_len);
    if (rc == CORUN_OK) {
        rc = buffers(d, def, id, bytes, why, why_len);
    }
    if (rc == CORUN_OK && b->builtin_code[id] == NULL) {
        corun_kernel_desc desc = {def->name, d->builtin_fn[id][0], d->builtin_fn[id][1], 0,
                                  d->builtin_fn[id][2]};
        rc = corun__cuda_code_register(b, &desc, &b->builtin_code[id], why, why_len);
    }
    memcpy(a->p, d->builtin_buf[id], sizeof(a->p));
    pthread_mutex_unlock(&d->builtin_mu);
    if (rc != CORUN_OK) {
        return rc;
    }
    /* every kernel's parameters: its buffers in order, then n */
    for (unsigned i = 0; i < def->nbufs; i++) {
        a->argv[i] = &a->p[i];
    }
    a->argv[def->nbufs] = &a->n;
    spec->code = CORUN_CODE_USER;
    spec->user = b->builtin_code[id];
    spec->args = (const void *)a->argv;
    return CORUN_OK;
}
