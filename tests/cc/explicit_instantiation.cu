// Explicit instantiations of a kernel template (for launches from other
// files): the worker is instantiated with it.
template <typename T>
__global__ void fill(T *p, T v)
{
    p[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

template __global__ void fill<float>(float *, float);
template __global__ void fill<int>(int *p, int v);

void run(float *p)
{
    fill<<<2, 32>>>(p, 1.0f);
}
