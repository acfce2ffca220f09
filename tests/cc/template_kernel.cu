// A kernel template launched with explicit arguments, with deduced
// arguments, and from a host function template.
template <typename T, int BLOCK = 128>
__global__ void axpy(T alpha, const T *x, T *y, int n)
{
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i] + y[i];
}

template <typename T>
void launch_axpy(T alpha, const T *x, T *y, int n, cudaStream_t s)
{
    axpy<T, 256><<<(n + 255) / 256, 256, 0, s>>>(alpha, x, y, n);
}

void run(float *x, float *y, double *dx, double *dy, int n)
{
    launch_axpy<float>(2.0f, x, y, n, 0);
    launch_axpy(3.0, dx, dy, n, 0);
    axpy<<<(n + 127) / 128, 128>>>(1.5f, x, y, n);
}
