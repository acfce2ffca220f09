// cudaLaunchKernel given a typed kernel pointer (cast to const void * or
// not): the kernels of this file of its type go through corun.
__global__ void inc(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i]++;
}

__global__ void dec(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i]--;
}

cudaError_t run(void (*k)(int *, int), int *p, int n, cudaStream_t s)
{
    void *args[] = {&p, &n};
    cudaError_t e = cudaLaunchKernel((const void *)k, dim3(n / 256), dim3(256), args, 0, s);
    if (e != cudaSuccess)
        return e;
    return cudaLaunchKernel(k, dim3(n / 256), dim3(256), args);
}
