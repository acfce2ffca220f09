// Launches through a pointer and macros that corun-cc rewrites: the pointer
// from a macro, and the whole launch passed as a macro's argument.
#define SELECT(i) table[i]
#define CHECK(...)                                                                               \
    do {                                                                                         \
        __VA_ARGS__;                                                                             \
        if (cudaGetLastError() != cudaSuccess)                                                   \
            return 1;                                                                            \
    } while (0)

__global__ void k1(int *p) { p[blockIdx.x] = 1; }
__global__ void k2(int *p) { p[blockIdx.x] = 2; }

int run(int *p, int i)
{
    void (*table[])(int *) = {k1, k2};
    SELECT(i)<<<4, 1>>>(p);
    CHECK(table[1 - i]<<<4, 1>>>(p));
    return 0;
}
