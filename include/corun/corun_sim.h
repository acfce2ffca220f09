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

/* Testing: every later launch of k counts each block-task its workers run
 * in one uint32 per task at device address dptr (0 = off); only kernels
 * built with CORUN_TASK_HITS count. */
CORUN_API int corun_test_count_tasks(corun_kernel *k, uint64_t dptr);

#ifdef __cplusplus
}
#endif

#endif /* CORUN_SIM_H */
