// A second file that includes the kernel header: launches one of its
// kernels from a host function that main.cu calls.
#include "kernels.cuh"

void scale_all(unsigned *x, int n, unsigned a)
{
    scale<<<64, 128>>>(x, a, n);
}
