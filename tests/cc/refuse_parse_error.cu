// A syntax error: the file is refused, never half-transformed.
__global__ void broken(int *p)
{
    p[blockIdx.x] = 1 +;
}
