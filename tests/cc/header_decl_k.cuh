// Declares a kernel that a .cu file defines.
#ifndef HEADER_DECL_K_CUH
#define HEADER_DECL_K_CUH
__global__ void scale(float *x, float a, int n);
#endif
