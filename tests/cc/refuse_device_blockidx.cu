// A __device__ function that reads blockIdx would see the worker's index.
__device__ int my_block() { return blockIdx.x; }

__global__ void uses_helper(int *p)
{
    p[my_block() * blockDim.x + threadIdx.x] = 1;
}

void run(int *p) { uses_helper<<<4, 32>>>(p); }
