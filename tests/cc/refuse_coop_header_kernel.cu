#include "header_k.cuh"
int main() { int *p; cudaMalloc(&p, 4 * sizeof(int)); void *args[] = {&p}; cudaLaunchCooperativeKernel((void *)k, 4, 1, args); return cudaDeviceSynchronize() != cudaSuccess; }
