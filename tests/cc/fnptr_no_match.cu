// Launches through a pointer that no kernel of this file can be: a type
// that no kernel here has (the pointer holds a kernel of another file), a
// kernel of the type declared only after the launch, and a type that
// depends on a template parameter. Each is launched as written, with a
// warning (CORUN_CC_STRICT=1 refuses them).
__global__ void fill(float *p, int n) { p[blockIdx.x] = (float)n; }

void run_other(void (*k)(double *, int), double *p, int n)
{
    k<<<n, 1>>>(p, n);
}

void run_early(void (*k)(int *), int *p)
{
    k<<<1, 1>>>(p);
}

__global__ void later(int *p) { p[blockIdx.x] = 1; }

template <typename K> void run_generic(K k, float *p, int n)
{
    k<<<n, 1>>>(p, n);
}

void run(float *p, int n)
{
    run_generic(fill, p, n);
}
