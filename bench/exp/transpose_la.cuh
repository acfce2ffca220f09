// The bare look-ahead transpose loop of transpose_ladder.cu (k_la: one tile
// per claim, the next claim's atomicAdd issued before the tile), shared with
// transpose_lac.cu. kSig: load the signal and limit words with the claim and
// check them after the tile; kDone: 1 = add to done after every tile, 2 = every
// four; kBody: run gpu-check's bounds-checked body instead of the bare tile.
// (It drops its looked-ahead tile when told to leave: it measures cost only.)
#ifndef CORUN_EXP_TRANSPOSE_LA_CUH
#define CORUN_EXP_TRANSPOSE_LA_CUH
#include "corun/corun_device.cuh"
#include "kernels.cuh"
#include "transpose_tile.cuh"

template <int kSig, int kDone, int kBody = 0>
__global__ void __launch_bounds__(256, 8) k_la(const float *in, float *out, int w, int h, corun_ctl *ctl)
{
    __shared__ float tile[32][33];
    __shared__ int slot[2];
    __shared__ uint32_t capsm, smid, pend;
    const int gx = w / 32, total = gx * (h / 32);
    const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
    unsigned long long *const next = (unsigned long long *)&ctl->next;
    if (leader) {
        capsm = blockIdx.x / 8;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        pend = 0;
        slot[0] = (int)atomicAdd(next, 1ull);
    }
    __syncthreads();
    for (int k = 0;; ++k) {
        const int f = slot[k & 1];
        if (f >= total) break;
        unsigned long long nx = 0;
        uint4 sig = make_uint4(0, 0, 0, 0xffffffffu), lim = make_uint4((unsigned)total, 0, 0, 0);
        if (leader) {
            if (kSig) {
                asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(sig.x), "=r"(sig.y), "=r"(sig.z), "=r"(sig.w) : "l"(&ctl->halt_gen) : "memory");
                asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(lim.x), "=r"(lim.y), "=r"(lim.z), "=r"(lim.w) : "l"(&ctl->task_limit) : "memory");
            }
            nx = atomicAdd(next, 1ull);
        }
        if (kBody) {
            transpose__corun_body(in, out, w, h, make_uint3(f % gx, f / gx, 0), dim3(gx, h / 32, 1));
        } else {
            tile_body(in, out, w, h, f % gx, f / gx, tile);
        }
        if (leader) {
            const bool stay = sig.x == 0 && capsm >= sig.y && smid >= sig.z && smid <= sig.w;
            slot[(k + 1) & 1] = stay && nx < lim.x ? (int)nx : total;
            if (kDone == 1) {
                atomicAdd((unsigned long long *)&ctl->done, 1ull);
            } else if (kDone == 2 && ++pend == 4) {
                atomicAdd((unsigned long long *)&ctl->done, 4ull);
                pend = 0;
            }
        }
        __syncthreads();
    }
    if (kDone == 2 && leader && pend) atomicAdd((unsigned long long *)&ctl->done, (unsigned long long)pend);
}

#endif
