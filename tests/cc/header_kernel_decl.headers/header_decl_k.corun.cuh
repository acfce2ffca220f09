#include "corun/corun_launch.cuh"
#line 1 "./header_decl_k.cuh"
// Declares a kernel that a .cu file defines.
#ifndef HEADER_DECL_K_CUH
#define HEADER_DECL_K_CUH
__global__ void scale(float *x, float a, int n);
#line 4 "./header_decl_k.cuh"
__global__ void scale__corun(const corun_worker_arg corun_wa, float *x, float a, int n);
#line 4 "./header_decl_k.cuh"
__global__ void scale__corun_grid(const corun_worker_arg corun_wa, float *x, float a, int n);
#line 4 "./header_decl_k.cuh"
static __host__ inline void scale__corun_launch(const ::corun::config &corun_cfg, float *x, float a, int n)
{
    static ::corun::kernel_slot corun_slot;
    ::corun::launch<decltype(x), decltype(a), decltype(n)>(corun_slot, corun_cfg, "scale", scale, scale__corun, nullptr, scale__corun_grid, x, a, n);
}
#line 4 "./header_decl_k.cuh"

#endif
