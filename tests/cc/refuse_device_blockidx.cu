// A function reading blockIdx that cannot be cloned: its address is taken,
// so a call through the pointer would still reach the original.
__device__ int my_block() { return blockIdx.x; }

__global__ void through_pointer(int *p)
{
    int (*get)() = my_block;
    p[get() * blockDim.x + threadIdx.x] = my_block();
}
