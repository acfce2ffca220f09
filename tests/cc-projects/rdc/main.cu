// Runs the stencil twice and prints a checksum of the result.
#include <cstdio>
#include <vector>

#include "smooth.h"

int main()
{
    const int n = 1 << 20;
    std::vector<int> h(n);
    for (int i = 0; i < n; i++) {
        h[i] = (i * 7) % 101;
    }
    int *x, *y;
    if (cudaMalloc(&x, n * sizeof(int)) != cudaSuccess ||
        cudaMalloc(&y, n * sizeof(int)) != cudaSuccess ||
        cudaMemcpy(x, h.data(), n * sizeof(int), cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "no GPU memory: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    stencil_run(x, y, n);
    stencil_run(y, x, n);
    if (cudaMemcpy(h.data(), x, n * sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) {
        fprintf(stderr, "cudaMemcpy: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    unsigned long long c = 0;
    for (int i = 0; i < n; i++) {
        c = c * 1000003ull + (unsigned)h[i];
    }
    printf("checksum: %llu\n", c);
    return 0;
}
