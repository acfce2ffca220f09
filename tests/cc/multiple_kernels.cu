// Several kernels: extern "C", static, in a namespace, with
// __launch_bounds__, overloaded, and a comment inside the parameter list.
extern "C" __global__ void c_kernel(int *p) { p[blockIdx.x] = 1; }

extern "C" {
__global__ void c_block_kernel(int *p) { p[blockIdx.x] = 2; }
}

static __global__ void local_kernel(int *p) { p[blockIdx.x] = 3; }

namespace math {
__global__ void __launch_bounds__(256, 4) bounded(float *p, // output
                                                  int n)    // count
{
    const int i = blockIdx.x * 256 + threadIdx.x;
    if (i < n)
        p[i] = 4.0f;
}
} // namespace math

__global__ void over(float *p) { p[blockIdx.x] = 5.0f; }
__global__ void over(double *p) { p[blockIdx.x] = 6.0; }

void run(int *ip, float *fp, double *dp)
{
    c_kernel<<<1, 1>>>(ip);
    c_block_kernel<<<1, 1>>>(ip);
    local_kernel<<<1, 1>>>(ip);
    math::bounded<<<4, 256>>>(fp, 1024);
    over<<<1, 1>>>(fp);
    over<<<1, 1>>>(dp);
}
