// Launches through a pointer that may hold a kernel of this file, written
// in a way corun-cc does not rewrite: the <<<...>>> in a macro definition,
// and a pointer that starts inside a macro's argument and ends outside it.
#define LAUNCH(kernel, grid, block, ...) kernel<<<grid, block>>>(__VA_ARGS__)
#define ID(x) x

__global__ void k1(int *p) { p[blockIdx.x] = 1; }

void run(void (*k)(int *), int *p) { LAUNCH(k, 4, 1, p); }

void run_table(int *p, int i)
{
    void (*table[])(int *) = {k1};
    ID(table)[i]<<<4, 1>>>(p);
}
