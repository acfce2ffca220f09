/*
 * synth.h — parameters of the synthetic kernel the CUDA backend runs for
 * scenario workloads (shared by host and device code; plain C).
 *
 * Each block-task spins an FMA chain for a number of iterations drawn from
 * the scenario's duration distribution (converted to iterations with a
 * calibration made on the device), using a hash of the task index, so a
 * task's length does not depend on which worker runs it or when.
 *
 * A kernel that declares DRAM traffic (mem_bw > 0) or a FLOP rate (compute
 * > 0) splits a task: fma_share of its iterations in the FMA chain, then
 * loads_per_it 16-byte words per thread per iteration streamed from a buffer
 * much larger than L2, then spin_share of its time waiting on the clock
 * (work that neither computes nor moves bytes: latency-bound code). So it
 * really performs the FLOPs and moves the bytes it declares: the rates a
 * profile measures, and the interference co-runners see, are the
 * hardware's, not a model's.
 */
#ifndef CORUN_BACKENDS_CUDA_SYNTH_H
#define CORUN_BACKENDS_CUDA_SYNTH_H

#include <stdint.h>

typedef struct corun_synth_args {
    uint32_t dist;     /* corun__dist_kind */
    float a_it;        /* distribution parameters, in iterations */
    float b_it;
    uint32_t seed;
    float fma_share;     /* share of a task's iterations spent in the FMA chain */
    float loads_per_it;  /* 16-byte loads per thread per iteration (memory phase) */
    float spin_share;    /* share of a task's time spent waiting on the clock */
    float ns_per_it;     /* the calibration: ns of one iteration at full occupancy */
    const void *mem;     /* device buffer of mem_mask + 1 16-byte words, or NULL */
    uint32_t mem_mask;   /* a power of two minus one */
    float *sink;       /* never written in practice; keeps the loop alive */
} corun_synth_args;

#endif
