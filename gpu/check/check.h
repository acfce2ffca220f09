/*
 * check.h — what gpu-check's files share: error checks, timing helpers, the
 * JSON record writer, and the modes of the launch path (path.cu).
 */
#ifndef CORUN_GPU_CHECK_H
#define CORUN_GPU_CHECK_H

#include <cstdio>
#include <vector>

#include <cuda.h>

#include <cuda_runtime.h>

#include "corun/corun.h"

#define CK(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,               \
                    cudaGetErrorName(e_), cudaGetErrorString(e_));                           \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

#define CR(call)                                                                            \
    do {                                                                                    \
        int r_ = (call);                                                                    \
        if (r_ != CORUN_OK) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,               \
                    corun_status_name(r_), corun_last_error());                             \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

#define CU(call)                                                                            \
    do {                                                                                    \
        CUresult r_ = (call);                                                               \
        if (r_ != CUDA_SUCCESS) {                                                           \
            const char *n_ = "?";                                                           \
            cuGetErrorName(r_, &n_);                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, n_);              \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

extern FILE *json;
extern int json_first;
double now_us();
void sleep_us(double us);
double median(std::vector<double> v);
double pct(std::vector<double> v, double p);
__attribute__((format(printf, 1, 2))) void jrec(const char *fmt, ...);
int sm_count();
int per_sm_of(const void *fn, unsigned threads, size_t smem);

/* path.cu: the stream-ordered launch path (corun_launch_stream) */
int mode_chain(int launches, int rounds);
int mode_hostcost(int rounds);
int mode_lsalone(int trials);
int mode_queued(int reps);
int mode_threads(int launches);
int mode_capture(void);

#endif
