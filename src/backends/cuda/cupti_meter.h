/*
 * cupti_meter.h — FLOPs and DRAM bytes of kernels from hardware counters
 * (CUPTI range profiler, libcupti loaded at run time).
 *
 * The caller divides by gpu_ns to get achieved FLOP/s and DRAM bytes/s.
 * libcupti is opened with dlopen, never linked, so libcorun still runs where
 * there is no CUPTI; the meter then reports CORUN_ENOTSUP and says why.
 *
 * While a meter is open, CUPTI intercepts every launch in its context (and
 * replays each kernel during a measurement): open it for the measurement
 * only. The caller serialises the use of one meter; a context takes one
 * meter at a time.
 */
#ifndef CORUN_BACKENDS_CUDA_CUPTI_METER_H
#define CORUN_BACKENDS_CUDA_CUPTI_METER_H

#include <stddef.h>

#include <cuda.h>

/* The most kernel launches one measurement can profile (one range each);
 * more make corun__meter_measure fail with CORUN_ERANGE. */
#define CORUN__METER_MAX_KERNELS 64

typedef struct corun__meter corun__meter;

typedef struct corun__meter_sample {
    double flops;      /* FP32 + FP64 operations: 2*FMA + ADD + MUL (thread-level, predicated-on) */
    double dram_bytes; /* DRAM bytes read + written */
    double gpu_ns;     /* gpu__time_duration.sum, summed over the profiled kernels */
    unsigned kernels;  /* kernel launches (ranges) profiled */
} corun__meter_sample;

/* Opens the profiler on ctx (must be current on the calling thread). Returns CORUN_OK,
 * or CORUN_ENOTSUP with the reason in why (no libcupti, counters not permitted
 * (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), chip not supported, built without CUPTI headers);
 * other CUPTI failures are CORUN_ECUDA; also CORUN_ENOMEM, CORUN_ENODEV (no driver) and
 * CORUN_EINVAL. Starts and stops an empty measurement, because CUPTI checks the permission to
 * read counters only then. On success *out is the caller's, to be given back with
 * corun__meter_close. */
int corun__meter_open(CUcontext ctx, corun__meter **out, char *why, size_t why_len);

/* Runs launch(arg) with every kernel it launches profiled (auto range = one range per kernel,
 * kernel replay so multi-pass metrics work); launch must synchronise before returning and returns
 * CORUN_OK or an error that is passed through. Sums the metrics over all ranges into *out.
 * At most CORUN__METER_MAX_KERNELS launches (CORUN_ERANGE beyond). *out is written only on
 * success. Can be called again on the same meter; each call starts from empty counters. */
int corun__meter_measure(corun__meter *m, int (*launch)(void *arg), void *arg,
                         corun__meter_sample *out, char *why, size_t why_len);

/* Stops profiling the context and frees m. NULL is allowed. */
void corun__meter_close(corun__meter *m);

#endif
