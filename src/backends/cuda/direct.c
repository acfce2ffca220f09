/*
 * direct.c — a direct launch (backend.h): the program's own thread launches
 * a kernel's primary grid in its own stream. No hand-off, no host wait, no
 * event and no host-to-device write on the way: a zeroed control block from
 * the pool, the launch's constants in its parameters (corun_ctl.h), the
 * shape's occupancy and the parameter layout from caches, and one
 * cuLaunchKernel, of the workers and, where one fits, a relay block, or of
 * the grid form (a block per task, corun_ctl.h) where the caller asks. The
 * stream passes the kernel when its grid ends, which its last worker delays
 * while tasks remain (the anchor); the host hears of it from the kernel's
 * report (completion.c). See cuda_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "backends/cuda/cuda_int.h"

/* Launches the plain kernel in the program's stream. */
static int launch_plain_direct(cuda_backend *b, const corun__kspec *spec, const cuda_code *c,
                               CUstream s, char *why, size_t why_len)
{
    const corun__cu *cu = b->d->cu;

    if (!CU_OK(cu, cu->cuLaunchKernel(c->plain, spec->grid.x, spec->grid.y, spec->grid.z,
                                      spec->block.x, spec->block.y, spec->block.z,
                                      spec->smem_dynamic, s, (void **)spec->args, NULL),
               why, why_len)) {
        return CORUN_ELAUNCH;
    }
    return CORUN_OK;
}

int corun__cuda_direct_launch(corun__backend *be, const corun__kspec *spec,
                              const corun__direct_req *req, corun__exec **out,
                              corun__direct_got *got, char *why, size_t why_len)
{
    cuda_backend *b = cb(be);
    const corun__cu *cu = b->d->cu;
    cuda_code *c = (cuda_code *)spec->user;
    CUstream s = (CUstream)req->stream;
    CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
    CUcontext cur = NULL;
    CUdevice dev;
    corun__exec *k;
    corun__launch_req lr;
    uint32_t *const per_sm = &got->per_sm;
    const uint64_t tasks = (uint64_t)spec->grid.x * spec->grid.y * spec->grid.z;
    bool ahead_ok = false, grid_ok = false, grid;
    uint32_t nworkers, nblocks;
    size_t i;
    int rc;

    *out = NULL;
    got->ahead = false;
    got->grid = false;
    if (c == NULL || spec->code != CORUN_CODE_USER) {
        return CORUN_EINVAL;
    }
    /* A program on several GPUs: its launches on another one than corun's
     * run plain (their functions, stream and memory are that GPU's). */
    if (cu->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != NULL && cur != b->d->ctx &&
        cu->cuCtxGetDevice(&dev) == CUDA_SUCCESS && dev != b->d->dev) {
        snprintf(why, why_len, "kernel '%s': launched on another GPU than corun's (GPU %d; "
                 "CORUN_DEVICE)", c->name, b->d->ordinal);
        return CORUN_ENOTSUP;
    }
    if (cu->cuStreamIsCapturing(s, &cap) == CUDA_SUCCESS && cap != CU_STREAM_CAPTURE_STATUS_NONE) {
        snprintf(why, why_len,
                 "kernel '%s': the stream is capturing a graph; a corun launch cannot be "
                 "captured (every replay would reuse one control block)", c->name);
        return CORUN_ENOTSUP;
    }
    rc = corun__cuda_code_shape(b, c, spec->block, spec->smem_dynamic, per_sm, &ahead_ok,
                                &grid_ok, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (req->capsm == 0 ||
        (req->one_wave_plain &&
         corun__direct_one_wave(req->capsm, *per_sm, req->sm_lo, req->sm_hi,
                                b->d->desc.sm_count, tasks))) {
        return launch_plain_direct(b, spec, c, s, why, why_len);
    }
    nworkers = corun__direct_workers(req->capsm, *per_sm, req->sm_lo, req->sm_hi,
                                     b->d->desc.sm_count, tasks);
    if (nworkers == 0) {
        return CORUN_ERANGE;
    }
    grid = req->grid && grid_ok &&
           corun__direct_grid(req->capsm, nworkers, req->sm_lo, req->sm_hi, b->d->desc.sm_count,
                              tasks, req->hold);
    rc = corun__cuda_code_layout(b, c, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    k = malloc(sizeof(*k));
    if (k == NULL) {
        return CORUN_ENOMEM;
    }
    memset(k, 0, offsetof(corun__exec, offset)); /* not the two arrays */
    rc = corun__cuda_slot_take(b, &k->slot);
    if (rc != CORUN_OK) {
        snprintf(why, why_len, "all %d control blocks are in use", CTL_SLOTS);
        free(k);
        return rc;
    }
    k->spec = *spec;
    k->code = c;
    k->plain = c->plain;
    k->worker = c->worker;
    k->entry = spec->ahead && ahead_ok ? c->ahead : c->worker;
    k->spec.ahead = k->entry == c->ahead;
    k->per_sm = *per_sm;
    k->ctl = b->slab + (CUdeviceptr)k->slot * sizeof(corun_ctl);
    k->direct = true;
    k->seq = b->slot_seq[k->slot];
    corun__ctl_init(&k->ch, &k->spec, k->per_sm, &b->d->desc, corun__budget_ns(&b->set),
                    (uint32_t)b->set.chunk_max, true);
    rc = corun__cuda_pack_args(b, k, c, why, why_len);
    k->spec.args = NULL;
    if (rc != CORUN_OK) {
        corun__cuda_slot_give(b, k->slot, true);
        free(k->args);
        free(k);
        return rc;
    }
    /* planned before the launch's words: a relay that takes a worker's slot
     * takes its preset task too. The grid form has none (each block reads
     * halt_gen as it starts), but its mirror still tells the relays of later
     * grids that the kernel is over. */
    if (grid) {
        (void)corun__cuda_relay_plan(b, k, 0, req->sm_lo, req->sm_hi);
    } else {
        nworkers = corun__cuda_relay_plan(b, k, nworkers, req->sm_lo, req->sm_hi);
    }
    const uint64_t relay = k->wa.relay;
    const uint32_t relay_block = k->wa.relay_block;
    memset(&lr, 0, sizeof(lr));
    lr.nworkers = nworkers;
    lr.hold = req->hold;
    corun__ctl_launch(&k->ch, &lr, req->sm_lo, req->sm_hi, &k->wa);
    k->wa.relay = relay;
    k->wa.relay_block = relay_block;
    k->wa.ctl = (corun_ctl *)(uintptr_t)k->ctl;
    k->wa.report = (corun_report *)(uintptr_t)(b->reports_dev + k->slot * sizeof(corun_report));
    grid = grid && k->wa.own; /* its first blocks run their own tasks */
    nblocks = grid ? (uint32_t)tasks : nworkers;
    k->wa.primary = nblocks;
    k->wa.grid = grid;
    k->wa.seq = k->seq;
    k->wa.task_hits = spec->task_hits;
    /* the caller's argument pointers: no copy needed for this launch */
    k->params[0] = &k->wa;
    for (i = 0; i < k->nparams; i++) {
        k->params[i + 1] = ((void **)spec->args)[i];
    }
    if (!CU_OK(cu, cu->cuLaunchKernel(grid ? c->grid : k->entry, nblocks + k->wa.relay_block,
                                      1, 1, spec->block.x,
                                      spec->block.y, spec->block.z, spec->smem_dynamic, s,
                                      k->params, NULL),
               why, why_len)) {
        corun__cuda_slot_give(b, k->slot, true);
        free(k->args);
        free(k);
        return CORUN_ELAUNCH;
    }
    /* later launches (resume, growth) read the packed copy */
    for (i = 0; i < k->nparams; i++) {
        k->params[i + 1] = (char *)k->args + k->offset[i];
    }
    /* later grids are workers */
    k->wa.grid = 0;
    corun__cuda_direct_watch(b, k);
    got->ahead = k->spec.ahead;
    got->grid = grid;
    *out = k;
    return CORUN_OK;
}

void corun__cuda_bind(corun__backend *be, corun__exec *k, uint64_t cookie)
{
    (void)be;
    if (k != NULL) {
        atomic_store_explicit(&k->cookie, cookie, memory_order_release);
    }
}
