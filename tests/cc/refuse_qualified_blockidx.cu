// ::blockIdx reaches the hardware index past the body's parameter.
__global__ void remap(int *out, int w)
{
    const uint3 blockIdx = make_uint3(::blockIdx.x % w, ::blockIdx.x / w, 0);
    out[blockIdx.y * w + blockIdx.x] = threadIdx.x;
}
