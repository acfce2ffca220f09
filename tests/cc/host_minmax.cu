// nvcc's host max/min of integer and floating types, mixed too: clang's
// CUDA headers lack them; corun-cc declares them for the parse only
#include <algorithm>
__global__ void k(int *p) { p[threadIdx.x] = max(1, 2) + min(3u, 4); }
int main()
{
    int a = max(3, 4);
    unsigned b = min(5u, 6);
    float c = min(1.0f, 2.0);
    double d = std::max(1.0, 2.0);
    long long e = max(7ll, 8ll);
    int *p = nullptr;
    k<<<1, 1>>>(p);
    return a + (int)b + (int)c + (int)d + (int)e;
}
