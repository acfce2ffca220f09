// Explicit instantiations of a kernel template that uses shared memory and a
// barrier (CORUN_SHARED): the worker and its ahead entry are instantiated
// with it.
template <typename T>
__global__ void tile_sum(const T *in, T *out)
{
    __shared__ T s[64];
    s[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        T acc = 0;
        for (int i = 0; i < 64; i++) {
            acc += s[i];
        }
        out[blockIdx.x] = acc;
    }
}

template __global__ void tile_sum<float>(const float *, float *);

void run(const float *in, float *out, int n)
{
    tile_sum<<<n / 64, 64>>>(in, out);
}
