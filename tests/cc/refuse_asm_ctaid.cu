// Inline PTX that reads the hardware block index.
__global__ void raw_index(unsigned *out)
{
    unsigned b;
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(b));
    out[b * blockDim.x + threadIdx.x] = b;
}
