// Host code only: copied unchanged, byte for byte.
#include <cstdio>
#include <cuda_runtime.h>

int main()
{
    int n = 0;
    cudaGetDeviceCount(&n);
    printf("%d devices\n",   n);   
    return 0;
}
