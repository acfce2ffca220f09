// blockIdx and gridDim used through user macros: they expand inside the
// body, where the body's parameters named blockIdx and gridDim shadow the
// built-ins, so the macros see the virtual index too.
#define GLOBAL_ID (blockIdx.x * blockDim.x + threadIdx.x)
#define NUM_THREADS (gridDim.x * blockDim.x)
#define BLOCK_OF(v) ((v).blockIdx_x)

struct info {
    unsigned blockIdx_x;
};

__global__ void ids(unsigned *out, info *where, int n)
{
    for (int i = GLOBAL_ID; i < n; i += NUM_THREADS)
        out[i] = i;
    if (threadIdx.x == 0)
        BLOCK_OF(where[blockIdx.x]) = blockIdx.x;
}

void run(unsigned *out, info *where, int n)
{
    ids<<<32, 256>>>(out, where, n);
}
