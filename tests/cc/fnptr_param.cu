// A kernel passed to a host function as a parameter. The kernels of this
// file of the parameter's type are its candidates, wherever they are
// declared (a namespace, an anonymous namespace, extern "C"); an overload
// of another type is not one.
namespace ops {
__global__ void fill(int *p, int v) { p[blockIdx.x * blockDim.x + threadIdx.x] = v; }
__global__ void fill(float *p, int v) { p[blockIdx.x * blockDim.x + threadIdx.x] = (float)v; }
}

namespace {
__global__ void add(int *p, int v) { p[blockIdx.x * blockDim.x + threadIdx.x] += v; }
}

extern "C" __global__ void sub(int *__restrict__ p, const int v)
{
    p[blockIdx.x * blockDim.x + threadIdx.x] -= v;
}

static void apply(void (*op)(int *, int), int *p, int n, int v)
{
    op<<<n / 128, 128>>>(p, v);
}

void run(int *p, int n)
{
    apply(ops::fill, p, n, 1);
    apply(add, p, n, 2);
    apply(sub, p, n, 3);
}
