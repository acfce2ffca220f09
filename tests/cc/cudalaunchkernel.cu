// cudaLaunchKernel and cudaFuncSetAttribute naming a kernel of this file.
__global__ void big_smem(float *p, int n)
{
    extern __shared__ float buf[];
    buf[threadIdx.x] = p[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    p[blockIdx.x * blockDim.x + threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x] * n;
}

cudaError_t run(float *p, int n, cudaStream_t s)
{
    cudaFuncSetAttribute(big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    void *args[] = {&p, &n};
    return cudaLaunchKernel((const void *)big_smem, dim3(n / 256), dim3(256), args,
                            256 * sizeof(float), s);
}
