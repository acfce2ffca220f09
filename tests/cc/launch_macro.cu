// Launches written inside macros: the kernel as a macro argument used once,
// a macro that also stringifies its kernel argument, and a whole launch
// passed as a macro argument.
#include <cstdio>

#define CHECK(call)                                                                \
    do {                                                                           \
        cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess)                                                     \
            printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));     \
    } while (0)

#define LAUNCH(kernel, grid, block, ...)        \
    do {                                        \
        kernel<<<grid, block>>>(__VA_ARGS__);   \
        CHECK(cudaGetLastError());              \
    } while (0)

#define LAUNCH_NAMED(kernel, grid, block, ...)  \
    do {                                        \
        printf("launching %s\n", #kernel);      \
        kernel<<<grid, block>>>(__VA_ARGS__);   \
    } while (0)

#define QUIET(...) do { __VA_ARGS__; } while (0)

__global__ void inc(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] += 1; }
__global__ void dec(int *p, int by) { p[blockIdx.x * blockDim.x + threadIdx.x] -= by; }

void run(int *p)
{
    LAUNCH(inc, 4, 64, p);
    LAUNCH(dec, dim3(4), dim3(64), p, 2);
    LAUNCH_NAMED(inc, 4, 64, p);
    QUIET(dec<<<4, 64>>>(p, 3));
}
