#include "header_k.cuh"
int main() {
    int *p;
    cudaMalloc(&p, 4 * sizeof(int));
    k<<<4, 1>>>(p);
    return cudaDeviceSynchronize() != cudaSuccess;
}
