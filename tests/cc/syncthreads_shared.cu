// Static shared memory and __syncthreads: the worker is CORUN_SHARED.
#define T 16

__global__ void transpose(const float *in, float *out, int w, int h)
{
    __shared__ float tile[T][T + 1];
    int x = blockIdx.x * T + threadIdx.x;
    int y = blockIdx.y * T + threadIdx.y;
    if (x < w && y < h)
        tile[threadIdx.y][threadIdx.x] = in[y * w + x];
    __syncthreads();
    x = blockIdx.y * T + threadIdx.x;
    y = blockIdx.x * T + threadIdx.y;
    if (x < h && y < w)
        out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}

void run(const float *in, float *out, int w, int h)
{
    transpose<<<dim3((w + T - 1) / T, (h + T - 1) / T), dim3(T, T)>>>(in, out, w, h);
}
