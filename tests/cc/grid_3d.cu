// 3D grid: the linear block id uses all of blockIdx and gridDim.
__global__ void fill3d(unsigned *out)
{
    const unsigned b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    const unsigned t = b * blockDim.x + threadIdx.x;
    out[t] = b;
}

void run(unsigned *out)
{
    const dim3 grid(8, 4, 2);
    fill3d<<<grid, 128>>>(out);
}
