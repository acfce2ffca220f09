#include "corun/corun_launch.cuh"
#line 1 "./header_k.cuh"
static __device__ __forceinline__ void k__corun_body(int *p, const uint3 blockIdx, const dim3 gridDim) { p[blockIdx.x] = 1; }
#line 1 "./header_k.cuh"
__global__ void k(int *p) {
    k__corun_body(p, blockIdx, gridDim);
}
#line 1 "./header_k.cuh"
__global__ void k__corun(const corun_worker_arg corun_wa, int *p) {
    corun_worker_loop<CORUN_PLAIN>(corun_wa, [&](const uint3 corun_b, const dim3 corun_g) {
        k__corun_body(p, corun_b, corun_g);
    });
}
#line 1 "./header_k.cuh"
__global__ void k__corun_grid(const corun_worker_arg corun_wa, int *p) {
    corun_grid_block(corun_wa, [&](const uint3 corun_b, const dim3 corun_g) {
        k__corun_body(p, corun_b, corun_g);
    });
}
#line 1 "./header_k.cuh"
static __host__ inline void k__corun_launch(const ::corun::config &corun_cfg, int *p)
{
    static ::corun::kernel_slot corun_slot;
    ::corun::launch<decltype(p)>(corun_slot, corun_cfg, "k", k, k__corun, nullptr, k__corun_grid, p);
}
#line 1 "./header_k.cuh"

