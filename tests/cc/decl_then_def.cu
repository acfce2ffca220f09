// A kernel declared first, launched, and defined later.
__global__ void later(float *p, float v = 1.0f);

void run(float *p)
{
    later<<<1, 64>>>(p);
    later<<<1, 64>>>(p, 2.0f);
}

__global__ void later(float *p, float v)
{
    p[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
