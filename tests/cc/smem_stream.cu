// <<<g, b, smem>>> and <<<g, b, smem, stream>>> with dynamic shared memory.
__global__ void reverse_block(int *d, int n)
{
    extern __shared__ int tile[];
    const int t = threadIdx.x;
    const int base = blockIdx.x * blockDim.x;
    tile[t] = d[base + t];
    __syncthreads();
    d[base + t] = tile[blockDim.x - 1 - t];
}

void run(int *d, int n, cudaStream_t stream)
{
    const int threads = 256;
    reverse_block<<<n / threads, threads, threads * sizeof(int)>>>(d, n);
    reverse_block<<<n / threads, threads, threads * sizeof(int), stream>>>(d, n);
}
