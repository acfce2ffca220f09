// Early returns: a whole block leaves before its barriers (uniform), and a
// thread leaves after the last barrier.
#define TILE 128

__global__ void block_sum(const float *in, float *out, int nblocks, int n)
{
    const int b = blockIdx.y * gridDim.x + blockIdx.x;
    if (b >= nblocks)
        return; // the whole block leaves
    __shared__ float s[TILE];
    const int i = b * TILE + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = TILE / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k)
            s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x != 0)
        return; // after the last barrier: fine
    out[b] = s[0];
}

void run(const float *in, float *out, int n)
{
    const int nb = (n + TILE - 1) / TILE;
    block_sum<<<dim3(64, (nb + 63) / 64), TILE>>>(in, out, nb, n);
}
