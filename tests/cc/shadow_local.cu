// A body that declares its own blockIdx (nvcc accepts the shadowing): the
// body is wrapped in one more block so the declaration still shadows the
// body's blockIdx parameter as it shadowed the built-in.
__global__ void permuted(int *out, const uint3 *order, int w)
{
    const unsigned task = blockIdx.x;
    const uint3 blockIdx = order[task];
    out[(blockIdx.y * w + blockIdx.x) * blockDim.x + threadIdx.x] = task;
}

void run(int *out, const uint3 *order)
{
    permuted<<<16, 32>>>(out, order, 4);
}
