// A kernel with shared memory and atomics, and its host function.
#include "ops.h"

__global__ void histogram(const int *x, int n, unsigned *counts, int bins)
{
    extern __shared__ unsigned local[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local[(unsigned)x[i] % bins], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) {
        atomicAdd(&counts[b], local[b]);
    }
}

int ops_histogram(const int *x, int n, unsigned *counts, int bins)
{
    if (cudaMemset(counts, 0, bins * sizeof(unsigned)) != cudaSuccess) {
        return -1;
    }
    histogram<<<32, 256, bins * sizeof(unsigned)>>>(x, n, counts, bins);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
