// 2D grid with dim3 configuration; the body reads blockIdx.y and gridDim.
__global__ void scale2d(float *m, int w, int h, float s)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int stride = gridDim.x * blockDim.x;
    if (x < w && y < h)
        m[y * stride + x] *= s;
}

void run(float *m, int w, int h)
{
    dim3 block(16, 16);
    dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    scale2d<<<grid, block>>>(m, w, h, 2.0f);
    scale2d<<<dim3(4, 4), dim3(16, 16, 1)>>>(m, 64, 64, 0.5f);
}
