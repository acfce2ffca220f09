// Uses the library's host functions only: the kernels live in libops.a.
#include <cstdio>
#include <vector>

#include "ops.h"

int main()
{
    const int n = 1 << 20, bins = 61;
    std::vector<int> hx(n), hy(n);
    for (int i = 0; i < n; i++) {
        hx[i] = i % 1009;
        hy[i] = i % 7;
    }
    int *x, *y;
    unsigned *counts;
    if (cudaMalloc(&x, n * sizeof(int)) != cudaSuccess ||
        cudaMalloc(&y, n * sizeof(int)) != cudaSuccess ||
        cudaMalloc(&counts, bins * sizeof(unsigned)) != cudaSuccess ||
        cudaMemcpy(x, hx.data(), n * sizeof(int), cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(y, hy.data(), n * sizeof(int), cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "no GPU memory: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    if (ops_saxpy(5, x, y, n) != 0 || ops_histogram(y, n, counts, bins) != 0) {
        fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    std::vector<unsigned> hc(bins);
    if (cudaMemcpy(hc.data(), counts, bins * sizeof(unsigned), cudaMemcpyDeviceToHost) !=
        cudaSuccess) {
        fprintf(stderr, "cudaMemcpy: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    unsigned long long c = 0;
    for (int b = 0; b < bins; b++) {
        c = c * 1000003ull + hc[b];
    }
    printf("checksum: %llu\n", c);
    return 0;
}
