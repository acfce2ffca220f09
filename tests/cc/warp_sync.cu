// Warp-synchronous code (shuffles) also gets a barrier between block-tasks.
__global__ void warp_sums(const int *in, int *out)
{
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}

void run(const int *in, int *out) { warp_sums<<<8, 128>>>(in, out); }
