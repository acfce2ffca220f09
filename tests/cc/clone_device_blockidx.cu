// __device__ functions that read blockIdx/gridDim, directly or through
// other functions, get clones that take the block-task's values as their
// first parameters; the kernels call the clones. The originals stay for
// other callers.
__device__ int block_base(int width);

__device__ __forceinline__ unsigned my_block() { return blockIdx.x; }

template <int TILE>
__device__ int tile_origin(int extra = 0) { return (int)(blockIdx.y * gridDim.x + blockIdx.x) * TILE + extra; }

__host__ __device__ int plain_math(int v) { return v * 3; } // no block index: not cloned

__device__ int global_id() { return block_base(blockDim.x) + threadIdx.x; }

__global__ void uses_helpers(int *p)
{
    p[my_block() * blockDim.x + threadIdx.x] = plain_math(1);
    p[global_id()] += tile_origin<16>();
    p[tile_origin<16>(2)] = ::global_id();
}

__device__ int block_base(int width) { return (int)blockIdx.x * width; }

__device__ int unused_by_kernels() { return global_id(); }

void run(int *p) { uses_helpers<<<dim3(4, 2), 32>>>(p); }
