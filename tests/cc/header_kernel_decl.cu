// The kernel is declared in a project header and defined here: its launcher
// is written at the first declaration, in the header's copy (where other
// files that include the header find it too); the definition here gets
// body, plain kernel and worker only.
#include "header_decl_k.cuh"
__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
void run(float *x, int n) { scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n); }
