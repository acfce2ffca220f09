/*
 * builtin.c — the repo's real kernels a scenario names (kernel key "code":
 * gpu-check's kernels, compiled into the synthetic kernel's module, and two
 * gpu/apps programs' kernels, each in a module of its own built from the
 * program as corun-cc transforms it), launched as a program's registered
 * kernels are, on buffers of the device's own whose size follows from the
 * grid. Their contents are set once (ones) and not checked: a scenario
 * measures time, gpu-check and gpu-apps check the kernels' results.
 */
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_int.h"

/* The gpu/apps modules (kernels/app_*.cu, linked into the command line where
 * the build had the transformed programs); NULL where they are not. */
__attribute__((weak)) const unsigned char *corun__app_md5search_fatbin(size_t *len);
__attribute__((weak)) const unsigned char *corun__app_backprop_fatbin(size_t *len);

static const struct builtin_def {
    const char *name;
    bool ahead;       /* CORUN_SHARED: has NAME__corun_ahead */
    unsigned nbufs;   /* its first parameters; then nints integers */
    unsigned nints;
    bool ones_int;    /* buffers of integers 1 (else floats 1.0f) */
    const char *order; /* the parameters in order where they are not buffers then
                          integers: P a buffer, I an integer, U a uint4 (zeros) */
    const unsigned char *(*fatbin)(size_t *len); /* its own module, or NULL: synth's */
    bool own_module;  /* in a module of its own (fatbin, if the build has it) */
} defs[CORUN_BUILTIN_COUNT] = {
    [CORUN_BUILTIN_MATMUL] = {"matmul", true, 3, 1, false},   /* A, B, C: n x n floats */
    [CORUN_BUILTIN_REDUCE] = {"reduce", true, 2, 1, true},    /* n integers, a 64-bit sum */
    [CORUN_BUILTIN_VADD] = {"vadd", false, 3, 1, false},      /* a, b, c: n floats */
    [CORUN_BUILTIN_STENCIL3D] = {"stencil3d", false, 2, 3, false}, /* in, out; nx, ny, nz */
    /* call, put, S, X, T: n floats; R and V (floats) come before n */
    [CORUN_BUILTIN_BLACKSCHOLES] = {"blackscholes", false, 5, 1, false},
    [CORUN_BUILTIN_TRANSPOSE] = {"transpose", true, 2, 2, false}, /* in, out; w, h */
    [CORUN_BUILTIN_RAGGED] = {"ragged", false, 2, 1, true},       /* out, in; n */
    [CORUN_BUILTIN_LONGTASK] = {"longtask", false, 1, 1, true},   /* out; rounds */
    /* target; keyspace; foundIndex, partialIndex, partialCount, blockSignature */
    [CORUN_BUILTIN_MD5SEARCH] = {"app_md5search", true, 4, 1, true, "UIPPPP",
                                 corun__app_md5search_fatbin, true},
    /* delta; hid; ly; num_blocks; w, oldw */
    [CORUN_BUILTIN_BACKPROP] = {"app_backprop", true, 4, 2, false, "PIPIPP",
                                corun__app_backprop_fatbin, true},
};

/* Most bytes one buffer may take. */
#define BUF_MAX (4ull << 30)

/* The integer parameters and buffer sizes of a launch of grid g; false if
 * too big. */
static bool sizes(corun__builtin id, corun_dim3 g, int n[3], size_t bytes[BUILTIN_MAX_BUFS])
{
    unsigned long long m[3] = {0, 0, 0}, elems = 0, big = 0;
    size_t i, nb = defs[id].nbufs, elem = 4;

    switch (id) {
    case CORUN_BUILTIN_MATMUL:
        m[0] = 32ull * (g.x > g.y ? g.x : g.y);
        elems = m[0] * m[0];
        break;
    case CORUN_BUILTIN_REDUCE:
        m[0] = 1024ull * g.x; /* 256 threads, 4 integers each */
        elems = m[0];
        break;
    case CORUN_BUILTIN_STENCIL3D:
        m[0] = 8ull * g.x;
        m[1] = 8ull * g.y;
        m[2] = 4ull * g.z;
        elems = m[0] * m[1] * m[2];
        break;
    case CORUN_BUILTIN_BLACKSCHOLES:
        m[0] = 128ull * g.x;
        elems = m[0];
        break;
    case CORUN_BUILTIN_TRANSPOSE:
        m[0] = 32ull * g.x;
        m[1] = 32ull * g.y;
        elems = m[0] * m[1];
        break;
    case CORUN_BUILTIN_RAGGED:
        m[0] = 256ull * g.x - 17;
        elems = 256ull * g.x;
        break;
    case CORUN_BUILTIN_LONGTASK:
        m[0] = CORUN_BUILTIN_LONGTASK_ROUNDS;
        elems = 256ull * g.x;
        break;
    case CORUN_BUILTIN_MD5SEARCH:
        m[0] = 2048ull * g.x; /* keys: 256 threads, 8 each */
        elems = g.x;          /* a signature per block; the other three use one */
        break;
    case CORUN_BUILTIN_BACKPROP:
        m[0] = 16;                        /* hidden units */
        m[1] = (unsigned long long)g.x * g.y; /* blocks of 16 inputs */
        elems = 17ull * (16ull * m[1] + 2); /* w, oldw; delta and ly use less */
        break;
    case CORUN_BUILTIN_VADD:
    default:
        m[0] = 256ull * g.x;
        elems = m[0];
        break;
    }
    for (i = 0; i < BUILTIN_MAX_BUFS; i++) {
        bytes[i] = i < nb ? elems * elem : 0;
    }
    if (id == CORUN_BUILTIN_REDUCE) {
        bytes[1] = sizeof(unsigned long long);
    }
    for (i = 0; i < 3; i++) {
        n[i] = (int)m[i];
        big = m[i] > big ? m[i] : big;
    }
    return big <= 0x7fffffffull && elems <= 0x7fffffffull && bytes[0] <= BUF_MAX;
}

/* The module the kernel is in: synth's, or its own, loaded on first use.
 * Under builtin_mu. */
static int module_of(device_state *d, const struct builtin_def *def, corun__builtin id,
                     CUmodule *mod, char *why, size_t why_len)
{
    const unsigned char *fat;
    size_t len;

    if (!def->own_module) {
        *mod = d->synth_mod;
        return CORUN_OK;
    }
    if (d->builtin_mod[id] == NULL) {
        if (def->fatbin == NULL) {
            snprintf(why, why_len, "kernel '%s': this build of corun has no gpu/apps kernels: "
                     "build it where corun-cc is built (libclang-19), or with "
                     "-DCORUN_APPS_SRC=DIR naming what scripts/gpu-apps.sh --prepare wrote",
                     def->name);
            return CORUN_ENOTSUP;
        }
        fat = def->fatbin(&len);
        if (!CU_OK(d->cu, d->cu->cuModuleLoadData(&d->builtin_mod[id], fat), why, why_len)) {
            return CORUN_ECUDA;
        }
    }
    *mod = d->builtin_mod[id];
    return CORUN_OK;
}

/* The kernel's functions in its module, looked up once. Under builtin_mu. */
static int functions(device_state *d, const struct builtin_def *def, corun__builtin id,
                     char *why, size_t why_len)
{
    const corun__cu *cu = d->cu;
    CUmodule mod;
    char name[64];
    int rc;

    if (d->builtin_fn[id][0] != NULL) {
        return CORUN_OK;
    }
    if ((rc = module_of(d, def, id, &mod, why, why_len)) != CORUN_OK) {
        return rc;
    }
    snprintf(name, sizeof(name), "%s__corun", def->name);
    if (!CU_OK(cu, cu->cuModuleGetFunction(&d->builtin_fn[id][1], mod, name), why, why_len)) {
        return CORUN_ECUDA;
    }
    snprintf(name, sizeof(name), "%s__corun_ahead", def->name);
    if (def->ahead &&
        !CU_OK(cu, cu->cuModuleGetFunction(&d->builtin_fn[id][2], mod, name), why, why_len)) {
        return CORUN_ECUDA;
    }
    if (!CU_OK(cu, cu->cuModuleGetFunction(&d->builtin_fn[id][0], mod, def->name), why,
               why_len)) {
        return CORUN_ECUDA;
    }
    return CORUN_OK;
}

/* Buffers of at least bytes[], filled with ones (floats 1.0f, or integers
 * 1 where the kernel reads integers). Under builtin_mu. */
static int buffers(device_state *d, const struct builtin_def *def, corun__builtin id,
                   const size_t bytes[BUILTIN_MAX_BUFS], char *why, size_t why_len)
{
    const corun__cu *cu = d->cu;
    const unsigned one = def->ones_int ? 1u : 0x3f800000u;
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
    size_t bytes[BUILTIN_MAX_BUFS];
    unsigned i, k = 0;
    int rc;

    if (id <= CORUN_BUILTIN_NONE || id >= CORUN_BUILTIN_COUNT) {
        snprintf(why, why_len, "kernel '%s': no such real kernel (%d)", spec->name, (int)id);
        return CORUN_EINVAL;
    }
    def = &defs[id];
    if (!sizes(id, spec->grid, a->n, bytes)) {
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
                                  d->builtin_fn[id][2], NULL};
        rc = corun__cuda_code_register(b, &desc, &b->builtin_code[id], why, why_len);
    }
    memcpy(a->p, d->builtin_buf[id], sizeof(a->p));
    pthread_mutex_unlock(&d->builtin_mu);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (def->order != NULL) {
        /* parameters in the order the kernel declares them */
        unsigned np = 0, ni = 0;
        memset(a->u4, 0, sizeof(a->u4));
        for (i = 0; def->order[i] != '\0'; i++) {
            a->argv[k++] = def->order[i] == 'P'   ? (void *)&a->p[np++]
                           : def->order[i] == 'I' ? (void *)&a->n[ni++]
                                                  : (void *)a->u4;
        }
    } else {
        /* its buffers in order, then its integers (blackscholes: R and V
         * before n) */
        for (i = 0; i < def->nbufs; i++) {
            a->argv[k++] = &a->p[i];
        }
        if (id == CORUN_BUILTIN_BLACKSCHOLES) {
            a->f[0] = 0.02f; /* R */
            a->f[1] = 0.30f; /* V */
            a->argv[k++] = &a->f[0];
            a->argv[k++] = &a->f[1];
        }
        for (i = 0; i < def->nints; i++) {
            a->argv[k++] = &a->n[i];
        }
    }
    spec->code = CORUN_CODE_USER;
    spec->user = b->builtin_code[id];
    spec->args = (const void *)a->argv;
    return CORUN_OK;
}
