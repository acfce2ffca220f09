// Probe: a hardware-scheduled preemptible form. One block per task; the
// block's first thread claims a task number (or reads the halt word first).
#pragma once
#include <cstdlib>
#include <cstring>
__device__ unsigned probe_next;
__device__ unsigned probe_halt;
template <int CLAIM, typename Body>
__device__ __forceinline__ void blocks_form(const dim3 g, Body body)
{
    unsigned task;
    if (CLAIM == 2 || CLAIM == 3) {
        __shared__ __align__(16) unsigned t4[4]; unsigned &t = t4[0];
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            t = *(volatile unsigned *)&probe_halt ? 0xffffffffu : atomicAdd(&probe_next, 1u);
        }
        __syncthreads();
        if (t == 0xffffffffu) return;
        const unsigned lin = (blockIdx.z * g.y + blockIdx.y) * g.x + blockIdx.x;
        task = CLAIM == 2 ? lin : g.x * g.y * g.z - 1 - lin;
    } else if (CLAIM == 6) {
        __shared__ __align__(16) unsigned t4[4]; unsigned &t = t4[0];
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            t = *(volatile unsigned *)&probe_halt ? 0xffffffffu : atomicAdd(&probe_next, 1u);
        }
        __syncthreads();
        task = __shfl_sync(0xffffffffu, t, 0);
        if (task == 0xffffffffu) return;
    } else if (CLAIM == 7) {
        struct __align__(16) st_t { unsigned long long a[2]; unsigned t; unsigned pad[19]; };
        __shared__ st_t st;
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            st.t = *(volatile unsigned *)&probe_halt ? 0xffffffffu : atomicAdd(&probe_next, 1u);
        }
        __syncthreads();
        task = st.t;
        if (task == 0xffffffffu) return;
    } else if (CLAIM == 8) {
        __shared__ __align__(16) unsigned t8[4];
        const unsigned a = (unsigned)__cvta_generic_to_shared(t8);
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            const unsigned v = *(volatile unsigned *)&probe_halt ? 0xffffffffu : atomicAdd(&probe_next, 1u);
            asm volatile("st.shared.u32 [%0], %1;" :: "r"(a), "r"(v) : "memory");
        }
        __syncthreads();
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(task) : "r"(a) : "memory");
        if (task == 0xffffffffu) return;
    } else if (CLAIM == 9) {
        const int h = (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) ? (int)*(volatile unsigned *)&probe_halt : 0;
        if (__syncthreads_or(h)) return;
        task = (blockIdx.z * g.y + blockIdx.y) * g.x + blockIdx.x;
    } else if (CLAIM == 4) {
        if (*(volatile unsigned *)&probe_halt) return;
        const unsigned lin = (blockIdx.z * g.y + blockIdx.y) * g.x + blockIdx.x;
        task = g.x * g.y * g.z - 1 - lin;
    } else if (CLAIM) {
        __shared__ __align__(16) unsigned t4[4]; unsigned &t = t4[0];
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            t = *(volatile unsigned *)&probe_halt ? 0xffffffffu : atomicAdd(&probe_next, 1u);
        }
        __syncthreads();
        task = t;
        if (task == 0xffffffffu) return;
    } else {
        if (*(volatile unsigned *)&probe_halt) return;
        task = (blockIdx.z * g.y + blockIdx.y) * g.x + blockIdx.x;
    }
    uint3 b;
    b.x = task % g.x;
    const unsigned r = task / g.x;
    b.y = r % g.y;
    b.z = r / g.y;
    body(b, g);
}
static int probe_form() {
    const char *f = getenv("PROBE_FORM");
    if (!f || !strcmp(f, "corun")) return 0;
    if (!strcmp(f, "plain")) return 1;
    if (!strcmp(f, "blocks")) return 2;
    if (!strcmp(f, "blocksnc")) return 3;
    if (!strcmp(f, "blocksatom")) return 4;
    if (!strcmp(f, "blocksrev")) return 5;
    if (!strcmp(f, "blocksshfl")) return 6;
    if (!strcmp(f, "blocksst")) return 7;
    if (!strcmp(f, "blocksasm")) return 8;
    if (!strcmp(f, "blocksor")) return 9;
    return 0;
}
static void probe_reset(cudaStream_t s) { static void *p = nullptr; if (!p) cudaGetSymbolAddress(&p, probe_next); cudaMemsetAsync(p, 0, 4, s); }
