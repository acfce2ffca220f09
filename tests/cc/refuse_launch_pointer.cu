// cudaLaunchKernel with a pointer: which kernel runs is decided at run time.
__global__ void k1(int *p) { p[blockIdx.x] = 1; }
__global__ void k2(int *p) { p[blockIdx.x] = 2; }

cudaError_t run(int *p, bool first)
{
    const void *fn = first ? (const void *)k1 : (const void *)k2;
    void *args[] = {&p};
    return cudaLaunchKernel(fn, dim3(4), dim3(1), args, 0, 0);
}
