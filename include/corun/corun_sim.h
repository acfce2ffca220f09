/*
 * corun_sim.h — libcorun on the simulated GPU, and the hooks tests use.
 *
 * A context created with backend "sim" (corun_ctx_opts) runs kernels that
 * are described by their timing instead of CUDA functions, on a
 * discrete-event model of the GPU with the same scheduler; its clock moves
 * only inside corun calls that wait. Not for production programs: these
 * functions exist for tests, benchmarks and what-if runs.
 */
#ifndef CORUN_SIM_H
#define CORUN_SIM_H

#include "corun/corun.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct corun_sim_kernel_desc {
    const char *name;
    double task_us;     /* mean duration of one block-task alone on the GPU */
    uint32_t regs;      /* registers per thread (occupancy); 0 = 32 */
    int ahead;          /* nonzero: the kernel has an ahead entry (CORUN_SHARED) */
    uint32_t flags;     /* CORUN_KERNEL_* */
} corun_sim_kernel_desc;

/* Registers a simulated kernel (contexts where !corun_ctx_runs_cuda). */
CORUN_API int corun_sim_kernel_register(corun_ctx *ctx, const corun_sim_kernel_desc *d,
                                        corun_kernel **out);

/* Testing: corun_ctx_create with settings over the CORUN_* variables, each
 * "name=value" as `corun --set` takes it, the list ending with NULL (a test
 * that needs one setting changed, without touching the environment other
 * threads read). A bad one fails the call, corun_last_error says which. */
CORUN_API int corun_test_ctx_create(const corun_ctx_opts *opts, const char *const *settings,
                                    corun_ctx **out);

/* Testing: every later launch of k counts each block-task its workers run
 * in one uint32 per task at device address dptr (0 = off); only kernels
 * built with CORUN_TASK_HITS count. */
CORUN_API int corun_test_count_tasks(corun_kernel *k, uint64_t dptr);

#ifdef __cplusplus
}
#endif

#endif /* CORUN_SIM_H */
