// A cooperative launch promises that all blocks are resident at once.
__global__ void coop(int *p) { p[blockIdx.x] = 1; }

cudaError_t run(int *p)
{
    void *args[] = {&p};
    return cudaLaunchCooperativeKernel((const void *)coop, dim3(4), dim3(32), args, 0, 0);
}
