// Experiment: what does a worker launch that does nothing cost, piece by piece?
// corun's empty launch (every worker claims, finds no task, leaves) takes
// ~2.4 us more than an empty kernel (transpose_scale.cu). Each variant below is
// 1,056 blocks of 256 threads (8 per SM on the H100), one leader per block
// doing what the name says, timed with events, median of 101 launches; the
// difference against `nop` is what that piece adds to a launch.
// (not built by default; nvcc -O3 -arch=sm_90 -I include bench/exp/start_cost.cu -lcuda)
//   nop        the empty kernel
//   ld         two 16-byte volatile loads of one shared line (corun's signal read)
//   atom       one atomicAdd on one address, its result used (a claim)
//   atom_sp    one atomicAdd per block on its own 128-byte line (no herd)
//   ld_atom    ld then atom, dependent (corun's claim)
//   ld_atom2   ld_atom twice in a row (a fresh launch's measuring claim and the next)
//   red_rel    red.release.gpu on one address (corun's exit count)
//   corun      ld_atom + a red on `started` at the start + red_rel at the exit
#include "exp_util.cuh"

__device__ unsigned g_line[32 * 1056 + 64];
__device__ unsigned long long g_ctr;

__device__ __forceinline__ unsigned ld2(const unsigned *p)
{
    uint4 a, b;
    asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a.x), "=r"(a.y), "=r"(a.z), "=r"(a.w) : "l"(p) : "memory");
    asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(b.x), "=r"(b.y), "=r"(b.z), "=r"(b.w) : "l"(p + 4) : "memory");
    return a.x + a.y + b.z + b.w;
}

template <int kMode>
__global__ void k(unsigned *out)
{
    __shared__ unsigned s;
    if (threadIdx.x == 0) {
        unsigned v = 0;
        if (kMode == 7) atomicAdd(&g_line[40], 1u);
        if (kMode == 1 || kMode == 4 || kMode == 5 || kMode == 7) v += ld2(g_line);
        if (kMode == 2 || kMode == 4 || kMode == 5 || kMode == 7) v += (unsigned)atomicAdd(&g_ctr, 1ull + (v & 0x80000000u));
        if (kMode == 5) { v += ld2(g_line); v += (unsigned)atomicAdd(&g_ctr, 1ull + (v & 0x80000000u)); }
        if (kMode == 3) v += atomicAdd(&g_line[64 + 32 * blockIdx.x], 1u);
        if (kMode == 6 || kMode == 7) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(&g_line[48]) : "memory");
        s = v;
    }
    __syncthreads();
    if (s == 0xdeadbeefu) out[threadIdx.x] = s; // keeps v alive
}

int main()
{
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int W = 8 * sms, reps = 101;
    unsigned *out;
    CK(cudaMalloc(&out, 4096));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    const char *names[8] = {"nop", "ld", "atom", "atom_sp", "ld_atom", "ld_atom2", "red_rel", "corun"};
    void (*fns[8])(unsigned *) = {k<0>, k<1>, k<2>, k<3>, k<4>, k<5>, k<6>, k<7>};
    for (int round = 0; round < 3; ++round) {
        std::vector<std::vector<double>> t(8);
        for (int r = 0; r < reps; ++r) {
            for (int m = 0; m < 8; ++m) { // interleaved
                CK(cudaEventRecord(a));
                fns[m]<<<W, 256>>>(out);
                CK(cudaEventRecord(b));
                CK(cudaEventSynchronize(b));
                float ms;
                CK(cudaEventElapsedTime(&ms, a, b));
                t[m].push_back(ms * 1e3);
            }
        }
        const double n0 = pct(t[0], 50);
        printf("round %d (%d blocks): nop %.2f us |", round, W, n0);
        for (int m = 1; m < 8; ++m) printf(" %s %+.2f", names[m], pct(t[m], 50) - n0);
        printf("\n");
    }
    return 0;
}
