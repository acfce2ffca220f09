// Kernels kept in a project header, as real projects do: included by
// main.cu and by scale.cu, linked into one program. Templates and static
// kernels, so that each file's copy links.
#ifndef CC_PROJECTS_KERNELS_CUH
#define CC_PROJECTS_KERNELS_CUH

template <typename T>
__global__ void fill(T *x, int n, int mod)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = (T)(i % mod);
    }
}

template <typename T>
__global__ void scale(T *x, T a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        x[i] = a * x[i] + (T)blockIdx.x;
    }
}

// One sum per block, through shared memory (a worker with barriers).
static __global__ void block_sum(const unsigned *x, unsigned long long *out, int n)
{
    __shared__ unsigned long long s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) {
            s[threadIdx.x] += s[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s[0];
    }
}

#endif
