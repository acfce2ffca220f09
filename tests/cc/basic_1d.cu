// 1D grid, int launch configuration, early thread-level return.
#include <cstdio>

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    c[i] = a[i] + b[i];
}

int main()
{
    const int n = 1 << 20;
    float *a, *b, *c;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(float));
    vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    cudaError_t e = cudaGetLastError();
    printf("%s\n", cudaGetErrorString(e));
    return cudaDeviceSynchronize() != cudaSuccess;
}
