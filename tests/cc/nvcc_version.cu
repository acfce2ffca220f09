// nvcc defines __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__ and
// __CUDA_ARCH_LIST__; clang does not. A kernel kept under them must be seen
// as nvcc sees it (corun-cc defines them from the installation's cuda.h for
// the parse), not skipped unchanged.
#if __CUDACC_VER_MAJOR__ >= 12 && defined(__CUDACC_VER_MINOR__) && defined(__CUDA_ARCH_LIST__)
__global__ void k(float *p) { p[threadIdx.x] = 1.0f; }
#else
#error "written for nvcc 12 or later"
#endif
int main()
{
    float *p;
    cudaMalloc(&p, 32 * sizeof(float));
    k<<<1, 32>>>(p);
    return cudaDeviceSynchronize();
}
