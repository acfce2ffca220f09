/*
 * synth.h — parameters of the synthetic kernel the CUDA backend runs for
 * scenario workloads (shared by host and device code; plain C).
 *
 * Each block-task spins an FMA chain for a number of iterations drawn from
 * the scenario's duration distribution (converted to iterations with a
 * calibration made on the device), using a hash of the task index, so a
 * task's length does not depend on which worker runs it or when.
 */
#ifndef CORUN_BACKENDS_CUDA_SYNTH_H
#define CORUN_BACKENDS_CUDA_SYNTH_H

#include <stdint.h>

typedef struct corun_synth_args {
    uint32_t dist;     /* corun__dist_kind */
    float a_it;        /* distribution parameters, in iterations */
    float b_it;
    uint32_t seed;
    float *sink;       /* never written in practice; keeps the loop alive */
} corun_synth_args;

#endif
