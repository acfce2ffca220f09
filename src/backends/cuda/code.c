/*
 * code.c — the kernels a program registers with the CUDA backend: their
 * plain, worker and ahead functions, the layout of their parameters and
 * the occupancy of each launch shape, each read from the driver once and
 * kept (a launch must not pay for them again), and a launch's arguments
 * packed by that layout. See cuda_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_int.h"

int corun__cuda_code_register(cuda_backend *b, const corun_kernel_desc *d, const void **out,
                              char *why, size_t why_len)
{
    cuda_code *c;

    if (d->plain == NULL || d->worker == NULL) {
        snprintf(why, why_len, "kernel '%s': null kernel function", d->name ? d->name : "?");
        return CORUN_EINVAL;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return CORUN_ENOMEM;
    }
    snprintf(c->name, sizeof(c->name), "%s", d->name ? d->name : "kernel");
    c->plain = (CUfunction)d->plain;
    c->worker = (CUfunction)d->worker;
    c->ahead = (CUfunction)d->ahead;
    c->grid = (CUfunction)d->grid;
    c->allow_occupancy_loss = (d->flags & CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS) != 0;
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_lock(&b->codes_mu);
    c->next = b->codes;
    b->codes = c;
    pthread_mutex_unlock(&b->codes_mu);
    *out = c;
    return CORUN_OK;
}

void corun__cuda_code_free_all(cuda_backend *b)
{
    while (b->codes != NULL) {
        cuda_code *c = b->codes;
        b->codes = c->next;
        pthread_mutex_destroy(&c->mu);
        free(c);
    }
}

/* Checks one shape with the driver: the worker must fit as many blocks per
 * SM as the plain kernel (unless allowed to lose some); the ahead entry is
 * used only where it fits as many as the worker. Under c->mu. */
static int shape_occupancy(cuda_backend *b, const cuda_code *c, code_shape *sh, char *why,
                           size_t why_len);

static void shape_check(cuda_backend *b, cuda_code *c, code_shape *sh)
{
    char why[sizeof(sh->why)] = "";

    sh->rc = shape_occupancy(b, c, sh, why, sizeof(why));
    memcpy(sh->why, why, sizeof(why));
}


static int shape_occupancy(cuda_backend *b, const cuda_code *c, code_shape *sh, char *why,
                           size_t why_len)
{
    const corun__cu *cu = b->d->cu;
    const corun_gpu_desc *g = &b->d->desc;
    const uint32_t threads = sh->bx * sh->by * sh->bz;
    int occ_plain = 0, occ_worker = 0, occ_ahead = 0, occ_grid = 0;

    if (sh->smem > g->smem_per_block) {
        if (sh->smem > g->smem_per_block_optin) {
            snprintf(why, why_len,
                     "kernel '%s': %u bytes of shared memory exceeds the limit of %u", c->name,
                     sh->smem, g->smem_per_block_optin);
            return CORUN_ERANGE;
        }
        (void)cu->cuFuncSetAttribute(c->plain, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     (int)sh->smem);
        (void)cu->cuFuncSetAttribute(c->worker, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     (int)sh->smem);
        if (c->ahead != NULL) {
            (void)cu->cuFuncSetAttribute(c->ahead, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         (int)sh->smem);
        }
        if (c->grid != NULL) {
            (void)cu->cuFuncSetAttribute(c->grid, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         (int)sh->smem);
        }
    }
    if (!CU_OK(cu, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ_plain, c->plain,
                                                                    (int)threads, sh->smem),
               why, why_len) ||
        !CU_OK(cu, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ_worker, c->worker,
                                                                    (int)threads, sh->smem),
               why, why_len)) {
        return CORUN_ECUDA;
    }
    if (occ_plain == 0 || occ_worker == 0) {
        snprintf(why, why_len,
                 "kernel '%s': a block of %u threads with %u bytes of shared memory does not "
                 "fit on an SM", c->name, threads, sh->smem);
        return CORUN_ERANGE;
    }
    if (occ_worker < occ_plain && !c->allow_occupancy_loss) {
        int regs_p = 0, regs_w = 0;
        (void)cu->cuFuncGetAttribute(&regs_p, CU_FUNC_ATTRIBUTE_NUM_REGS, c->plain);
        (void)cu->cuFuncGetAttribute(&regs_w, CU_FUNC_ATTRIBUTE_NUM_REGS, c->worker);
        snprintf(why, why_len,
                 "kernel '%s': the worker form fits %d blocks per SM where the plain kernel fits "
                 "%d (%d vs %d registers); pin it with __maxnreg__(%d) or __launch_bounds__, or "
                 "register it with CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS",
                 c->name, occ_worker, occ_plain, regs_w, regs_p, regs_p);
        return CORUN_ERANGE;
    }
    sh->per_sm = (uint32_t)occ_worker;
    /* The ahead entry only where it keeps the worker's occupancy (its loop
     * differs; corun-gpucheck occupancy checks gpu-check's own). */
    sh->ahead_ok = c->ahead != NULL &&
                   cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ_ahead, c->ahead,
                                                                   (int)threads, sh->smem) ==
                       CUDA_SUCCESS &&
                   occ_ahead == occ_worker;
    /* The grid form only where it keeps the plain kernel's: it stands in
     * for the plain kernel's grid, block for block. */
    sh->grid_ok = c->grid != NULL &&
                  cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ_grid, c->grid,
                                                                  (int)threads, sh->smem) ==
                      CUDA_SUCCESS &&
                  occ_grid == occ_plain;
    return CORUN_OK;
}

int corun__cuda_code_shape(cuda_backend *b, cuda_code *c, corun_dim3 block, uint32_t smem,
                           uint32_t *per_sm, bool *ahead_ok, bool *grid_ok, char *why,
                           size_t why_len)
{
    code_shape *sh = NULL;
    unsigned i, n;
    int rc;

    pthread_mutex_lock(&c->mu);
    n = c->nshapes < SHAPE_CACHE ? c->nshapes : SHAPE_CACHE;
    for (i = 0; i < n; i++) {
        code_shape *x = &c->shapes[i];
        if (x->bx == block.x && x->by == block.y && x->bz == block.z && x->smem == smem) {
            sh = x;
            break;
        }
    }
    if (sh == NULL) {
        sh = &c->shapes[c->nshapes++ % SHAPE_CACHE];
        sh->bx = block.x;
        sh->by = block.y;
        sh->bz = block.z;
        sh->smem = smem;
        shape_check(b, c, sh);
    }
    rc = sh->rc;
    if (rc == CORUN_OK) {
        *per_sm = sh->per_sm;
        *ahead_ok = sh->ahead_ok;
        if (grid_ok != NULL) {
            *grid_ok = sh->grid_ok;
        }
    } else {
        snprintf(why, why_len, "%s", sh->why);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int corun__cuda_code_layout(cuda_backend *b, cuda_code *c, char *why, size_t why_len)
{
    const corun__cu *cu = b->d->cu;
    size_t i, off, size, total = 0;
    int rc = CORUN_OK;

    pthread_mutex_lock(&c->mu);
    if (!c->layout_ok) {
        for (i = 0; i < MAX_PARAMS; i++) {
            if (cu->cuFuncGetParamInfo(c->plain, i, &off, &size) != CUDA_SUCCESS) {
                break;
            }
            c->off[i] = off;
            c->size[i] = size;
            total = off + size;
        }
        if (total + sizeof(corun_worker_arg) > MAX_PARAM_BYTES) {
            snprintf(why, why_len, "kernel '%s': %zu bytes of parameters; corun takes up to %zu",
                     c->name, total, (size_t)(MAX_PARAM_BYTES - sizeof(corun_worker_arg)));
            rc = CORUN_ERANGE;
        } else {
            c->nparams = i;
            c->total = total;
            c->layout_ok = true;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int corun__cuda_pack_args(cuda_backend *b, corun__exec *k, const cuda_code *c, char *why,
                          size_t why_len)
{
    void *const *user = (void *const *)k->spec.args;
    size_t i;

    (void)b;
    if (k->spec.args == NULL) {
        user = NULL;
    }
    k->nparams = c->nparams;
    if (c->nparams > 0 && user == NULL) {
        snprintf(why, why_len, "kernel '%s' takes %zu parameters but no arguments were given",
                 k->spec.name, c->nparams);
        return CORUN_EINVAL;
    }
    k->args = malloc(c->total ? c->total : 1);
    if (k->args == NULL) {
        return CORUN_ENOMEM;
    }
    for (i = 0; i < c->nparams; i++) {
        if (user[i] == NULL) {
            snprintf(why, why_len, "kernel '%s': argument %zu is NULL", k->spec.name, i);
            return CORUN_EINVAL;
        }
        memcpy((char *)k->args + c->off[i], user[i], c->size[i]);
        k->offset[i] = c->off[i];
    }
    return CORUN_OK;
}
