// Kernels from a project header, launched here and from scale.cu.
#include <cstdio>
#include <vector>

#include "kernels.cuh"

void scale_all(unsigned *x, int n, unsigned a);

static int check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

int main()
{
    const int n = 1 << 20, block = 256, blocks = (n + block - 1) / block;
    unsigned *x;
    unsigned long long *sums;
    if (check(cudaMalloc(&x, n * sizeof(unsigned)), "cudaMalloc") ||
        check(cudaMalloc(&sums, blocks * sizeof(unsigned long long)), "cudaMalloc")) {
        return 1;
    }
    fill<<<blocks, block>>>(x, n, 97);
    scale_all(x, n, 3u);
    block_sum<<<blocks, block>>>(x, sums, n);
    std::vector<unsigned long long> h(blocks);
    if (check(cudaMemcpy(h.data(), sums, blocks * sizeof(unsigned long long),
                         cudaMemcpyDeviceToHost), "cudaMemcpy")) {
        return 1;
    }
    unsigned long long c = 0;
    for (int b = 0; b < blocks; b++) {
        c = c * 1000003ull + h[b];
    }
    printf("checksum: %llu\n", c);
    return 0;
}
