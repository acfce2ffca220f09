// A kernel template calls its functor argument, resolved only when the
// template is instantiated, and a functor of this file reads blockIdx:
// corun-cc cannot prove the kernel does not reach it.
struct Twice {
    __device__ float operator()(float v) const { return 2.0f * v; }
};
struct AddBlock {
    __device__ float operator()(float v) const { return v + blockIdx.x; }
};

template <typename Op>
__global__ void apply(float *p, Op op)
{
    p[blockIdx.x * blockDim.x + threadIdx.x] = op(p[blockIdx.x * blockDim.x + threadIdx.x]);
}

void run(float *p)
{
    apply<<<4, 32>>>(p, Twice());
    apply<<<4, 32>>>(p, AddBlock());
}
