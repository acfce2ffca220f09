// A grid-stride loop: gridDim must be the original grid's.
__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

int launch(int n, float a, const float *x, float *y)
{
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    saxpy<<<32 * sms, 256>>>(n, a, x, y);
    return cudaGetLastError() == cudaSuccess;
}
