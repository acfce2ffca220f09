// Experiment: why corun's loop falls off a cliff at one task per claim
// (b5: transpose +12 %, stencil3d +25 %, blackscholes +39 % on the H100),
// when a bare persistent loop at one task per claim costs ~3.5 %. Is it the
// claim's round trips, or many workers hammering the same lines of L2?
// (not built by default; nvcc -O3 -arch=sm_90 bench/exp/claim_lines.cu)
// Persistent transposes (8 workers/SM), C tiles per claim, the claim made by
// the leader after its chunk as in corun's loop, then one barrier:
//   a    atomicAdd on the counter only
//   s    + two 16-byte volatile loads of one signal line before it (corun's
//        claim: the atomic waits for them)
//   sd   s + a fire-and-forget atomicAdd on a done counter (another line)
//   r    s with the signal line replicated: each SM reads its own copy
//   rd   sd with the signal line replicated
//   p    s with a private signal line per worker (the round trip without
//        any sharing)
#include <algorithm>
#include <vector>
#include "transpose_tile.cuh"

struct Lines {
    unsigned long long *next;   // own line
    unsigned long long *done;   // own line
    const uint4 *sig;           // 128-byte lines; [0] shared, [1 + smid] replicas, [1 + 1024 + w] private
};

__device__ __forceinline__ uint4 ldv(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
    return v;
}

enum { A, S, SD, R, RD, P };

template <int kMode>
__global__ void k_w(const float *in, float *out, int w, int h, int C, Lines L)
{
    __shared__ float tile[32][33];
    __shared__ int first;
    const int gx = w / 32, total = gx * (h / 32);
    const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
    unsigned smid;
    asm("mov.u32 %0, %%smid;" : "=r"(smid));
    const uint4 *line = kMode == R || kMode == RD ? L.sig + 8 * (1 + smid)
                      : kMode == P ? L.sig + 8 * (1 + 1024 + blockIdx.x) : L.sig;
    auto claim = [&]() {
        unsigned c = (unsigned)C;
        if (kMode != A) {
            const uint4 a = ldv(line), b = ldv(line + 1);
            c = a.x == 0 && b.x == 0 ? c : 0; // both words 0: go on (they stay 0)
        }
        first = (int)atomicAdd(L.next, (unsigned long long)c);
    };
    if (leader) claim();
    __syncthreads();
    for (;;) {
        const int f = first;
        if (f >= total) break;
        run_tiles(in, out, w, h, f, C, tile);
        if (leader) claim();
        __syncthreads();
        if ((kMode == SD || kMode == RD) && leader) atomicAdd(L.done, (unsigned long long)C);
    }
}

int main()
{
    const int w = 8192, h = 8192, reps = 15;
    float *in, *out;
    CK(cudaMalloc(&in, (size_t)w * h * 4)); CK(cudaMalloc(&out, (size_t)w * h * 4));
    CK(cudaMemset(in, 1, (size_t)w * h * 4));
    Lines L;
    CK(cudaMalloc(&L.next, 256)); CK(cudaMalloc(&L.done, 256));
    void *sig; CK(cudaMalloc(&sig, 128 * (1 + 1024 + 4096))); CK(cudaMemset(sig, 0, 128 * (1 + 1024 + 4096)));
    L.sig = (const uint4 *)sig;
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int per = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k_w<RD>, 256, 0));
    const int W = sms * per;
    const dim3 grid(w / 32, h / 32), blk(32, 8);
    auto time = [&](auto launch) {
        return median_ms(reps, [&] { CK(cudaMemset(L.next, 0, 8)); }, launch);
    };
    printf("workers %d (%d/SM); %% against the plain kernel of the same round\n", W, per);
    for (int round = 0; round < 3; ++round) {
        const float p = time([&] { k_plain<<<grid, blk>>>(in, out, w, h); });
        printf("round %d plain %.4f ms |", round, p);
        for (int C : {1, 3}) {
            const float ta = time([&] { k_w<A><<<W, blk>>>(in, out, w, h, C, L); });
            const float ts = time([&] { k_w<S><<<W, blk>>>(in, out, w, h, C, L); });
            const float tsd = time([&] { k_w<SD><<<W, blk>>>(in, out, w, h, C, L); });
            const float tr = time([&] { k_w<R><<<W, blk>>>(in, out, w, h, C, L); });
            const float trd = time([&] { k_w<RD><<<W, blk>>>(in, out, w, h, C, L); });
            const float tp = time([&] { k_w<P><<<W, blk>>>(in, out, w, h, C, L); });
            auto pc = [&](float t) { return 100 * (t / p - 1); };
            printf(" C=%d a %+5.1f s %+5.1f sd %+5.1f r %+5.1f rd %+5.1f p %+5.1f |", C, pc(ta), pc(ts),
                   pc(tsd), pc(tr), pc(trd), pc(tp));
        }
        printf("\n");
    }
    return 0;
}
