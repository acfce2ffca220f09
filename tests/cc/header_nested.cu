// A header that includes a kernel header is copied too (its #include must
// name the copy), and its own launch goes through corun.
#include "header_nested.cuh"
int main() {
    int *p;
    cudaMalloc(&p, 4 * sizeof(int));
    fill(p, 4);
    k<<<4, 1>>>(p);
    return cudaDeviceSynchronize() != cudaSuccess;
}
