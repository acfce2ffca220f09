#include "corun/corun_launch.cuh"
#line 1 "./header_refused_k.cuh"
// One kernel corun can take and one it cannot (::blockIdx names the
// hardware's index).
static __device__ __forceinline__ void good__corun_body(int *p, const uint3 blockIdx, const dim3 gridDim) { p[blockIdx.x] = 1; }
#line 3 "./header_refused_k.cuh"
__global__ void good(int *p) {
    good__corun_body(p, blockIdx, gridDim);
}
#line 3 "./header_refused_k.cuh"
__global__ void good__corun(const corun_worker_arg corun_wa, int *p) {
    corun_worker_loop<CORUN_PLAIN>(corun_wa, [&](const uint3 corun_b, const dim3 corun_g) {
        good__corun_body(p, corun_b, corun_g);
    });
}
#line 3 "./header_refused_k.cuh"
__global__ void good__corun_grid(const corun_worker_arg corun_wa, int *p) {
    corun_grid_block(corun_wa, [&](const uint3 corun_b, const dim3 corun_g) {
        good__corun_body(p, corun_b, corun_g);
    });
}
#line 3 "./header_refused_k.cuh"
static __host__ inline void good__corun_launch(const ::corun::config &corun_cfg, int *p)
{
    static ::corun::kernel_slot corun_slot;
    ::corun::launch<decltype(p)>(corun_slot, corun_cfg, "good", good, good__corun, nullptr, good__corun_grid, p);
}
#line 3 "./header_refused_k.cuh"

__global__ void bad(int *p) { p[::blockIdx.x] = 2; }
