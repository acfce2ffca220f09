// A kernel of a project header and one of the file itself, both launched:
// both go through corun, the header's in a transformed copy of it.
#include "header_k.cuh"
__global__ void own(int *p) { p[blockIdx.x] += 1; }
int main() {
    int *p;
    cudaMalloc(&p, 4 * sizeof(int));
    k<<<4, 1>>>(p);
    own<<<4, 1>>>(p);
    return cudaDeviceSynchronize() != cudaSuccess;
}
