// Code on both sides of #ifdef __CUDA_ARCH__: the device side of the body
// is analysed, the host side's launches are rewritten.
__global__ void arch_kernel(int *out)
{
#ifdef __CUDA_ARCH__
#if __CUDA_ARCH__ >= 800
    out[blockIdx.x] = __CUDA_ARCH__;
#else
    out[blockIdx.x] = -1;
#endif
#else
    out[0] = 0; // never compiled for the GPU
#endif
}

__host__ __device__ int twice(int v)
{
#ifdef __CUDA_ARCH__
    return v * 2;
#else
    return v + v;
#endif
}

void run(int *out)
{
#ifndef __CUDA_ARCH__
    arch_kernel<<<twice(2), 1>>>(out);
#endif
}
