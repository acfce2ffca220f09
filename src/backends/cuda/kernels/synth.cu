/*
 * synth.cu — the synthetic kernel (plain and worker forms) behind scenario
 * workloads on a real GPU. See synth.h.
 */
#include "backends/cuda/synth.h"
#include "corun/corun_device.cuh"

__device__ __forceinline__ uint32_t corun__hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__device__ __forceinline__ float corun__unit(uint32_t h)
{
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}

/* Iterations of task `task`, drawn like corun__dist (kinds: 0 const, 1
 * uniform, 2 normal truncated at 0.05 mean, 3 exponential). */
__device__ __forceinline__ uint32_t corun__synth_iters(const corun_synth_args &a, uint32_t task)
{
    const float u = corun__unit(corun__hash32(task * 2u + a.seed));
    float v;

    switch (a.dist) {
    case 1:
        v = a.a_it + u * (a.b_it - a.a_it);
        break;
    case 2: {
        const float u2 = corun__unit(corun__hash32(task * 2u + 1u + a.seed));
        v = a.a_it + a.b_it * sqrtf(-2.0f * logf(1.0f - u)) * cospif(2.0f * u2);
        v = fmaxf(v, 0.05f * a.a_it);
        break;
    }
    case 3:
        v = -a.a_it * logf(1.0f - u);
        break;
    default:
        v = a.a_it;
        break;
    }
    return v < 1.0f ? 1u : (uint32_t)v;
}

CORUN_BODY(corun_synth, (const corun_synth_args a))
{
    const uint32_t task = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const uint32_t iters = corun__synth_iters(a, task);
    const uint32_t nfma = a.fma_share >= 1.0f ? iters : (uint32_t)(iters * a.fma_share);
    const uint32_t nld = (uint32_t)(iters * a.loads_per_it);
    float x = (float)threadIdx.x, y = 1.0f;

    for (uint32_t i = 0; i < nfma; ++i) {
        x = fmaf(x, 0.9999999f, 1e-7f);
        y = fmaf(y, 1.0000001f, -1e-7f);
    }
    if (nld > 0) {
        /* Coalesced streaming reads from a task-dependent place in the
         * buffer; the buffer is far larger than L2, so they reach DRAM. */
        const uint32_t threads = blockDim.x * blockDim.y * blockDim.z;
        const uint32_t tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        const float4 *m = (const float4 *)a.mem;
        uint32_t w = corun__hash32(task ^ a.seed) * threads + tid;
        for (uint32_t j = 0; j < nld; ++j, w += threads) {
            const float4 v = __ldcs(m + (w & a.mem_mask));
            x += v.x;
            y += v.w;
        }
    }
    if (a.spin_share > 0.0f) {
        const uint64_t end = corun_globaltimer() + (uint64_t)(iters * a.spin_share * a.ns_per_it);
        while (corun_globaltimer() < end) {
        }
    }
    if (x + y == -12345.0f) {
        a.sink[threadIdx.x] = x;
    }
}
CORUN_KERNELS(corun_synth, (const corun_synth_args a), (a), CORUN_PLAIN)

/* The real kernels a scenario may name (kernel key "code"; builtin.c binds
 * their buffers): gpu-check's, so the scenarios run the same code the
 * checks measure. */
#include "kernels.cuh"
