// A pointer expression with side effects: the pointer, the configuration
// and the arguments are each evaluated once, in nvcc's order
// (configuration, pointer, arguments).
__global__ void ka(float *p, int n) { p[blockIdx.x] = (float)n; }
__global__ void kb(float *p, int n) { p[blockIdx.x] = (float)-n; }

typedef void (*kernel_fn)(float *, int);

static kernel_fn next_kernel(int *calls)
{
    static const kernel_fn order[] = {ka, kb};
    return order[(*calls)++ % 2];
}

void run(float *p, int n, int *calls)
{
    static kernel_fn table[] = {ka, kb, ka};
    int i = 0;
    table[i++]<<<n, 1>>>(p, n);
    next_kernel(calls)<<<n + (*calls)++, 1>>>(p, (*calls)++);
    (i > 0 ? table[--i] : kb)<<<n, 1>>>(p + i, n);
}
