// Unnamed parameters get names, in the function and in template lists.
__global__ void ignores_second(int *out, int, float)
{
    out[blockIdx.x] = 1;
}

template <typename, int N = 2>
__global__ void tagged(int *out, int[])
{
    out[blockIdx.x] = N;
}

void run(int *out, int *scratch)
{
    ignores_second<<<2, 1>>>(out, 5, 1.0f);
    tagged<char><<<2, 1>>>(out, scratch);
}
