/* occupancy.h — internal helpers of the occupancy calculator, shared with the
 * simulator so it allocates SM resources by the same rules. */
#ifndef CORUN_CORE_OCCUPANCY_H
#define CORUN_CORE_OCCUPANCY_H

#include "corun/corun.h"

/* Registers one warp of a kernel is allocated (regs/thread x warp, rounded up). */
uint32_t corun__regs_per_warp(const corun_gpu_desc *d, uint32_t regs_per_thread);
/* Shared memory one block is allocated, the driver's reserve included. */
uint32_t corun__smem_per_block(const corun_gpu_desc *d, uint32_t smem_static, uint32_t smem_dynamic);

#endif
