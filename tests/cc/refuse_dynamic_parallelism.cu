// A kernel launched from device code (dynamic parallelism).
__global__ void child(int *p) { p[threadIdx.x] = 1; }

__global__ void parent(int *p)
{
    if (threadIdx.x == 0)
        child<<<1, 32>>>(p + blockIdx.x * 32);
}

void run(int *p) { parent<<<4, 32>>>(p); }
