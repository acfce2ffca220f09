// A chained scan: each block waits for the block before it to publish its
// total (a flag polled through a volatile read). Under corun the earlier
// block-task was claimed first and runs to its end, so this is safe; the
// transform says so as a warning (a wait for a later block would deadlock).
__global__ void chained_sum(const int *in, int *partial, volatile int *ready, int n)
{
    __shared__ int total;
    if (threadIdx.x == 0) {
        int v = 0;
        for (int i = 0; i < (int)blockDim.x; i++)
            v += in[blockIdx.x * blockDim.x + i];
        if (blockIdx.x > 0) {
            while (ready[blockIdx.x - 1] == 0) {
            }
            v += partial[blockIdx.x - 1];
        }
        partial[blockIdx.x] = v;
        __threadfence();
        ready[blockIdx.x] = 1;
        total = v;
    }
    __syncthreads();
}

void run(const int *in, int *partial, int *ready, int n) { chained_sum<<<n / 256, 256>>>(in, partial, ready, n); }
