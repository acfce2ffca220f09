/*
 * kernels.cuh — the kernels gpu-check runs, each written once as a body so
 * its plain form (NAME) and worker form (NAME__corun) run the same code.
 *
 *   vadd        1D, memory-bound, 256 threads
 *   matmul      2D tiled, 32x32 shared-memory tiles, 1024 threads
 *   stencil3d   3D grid, 7-point stencil, 8x8x4 blocks
 *   reduce      shared-memory tree, then an integer atomicAdd per block
 *   blackscholes 1D, float math (expf, logf, sqrtf)
 *   transpose   shared-memory tile with padding, 32x8 threads
 *   ragged      bounds-checked: threads and whole blocks past n return early
 *   longtask    integer mixing loop: each block-task takes >= 1 ms
 * plus, for the latency benchmarks:
 *   spin        each task spins on the GPU clock for a given time
 *   spinvar     spin whose time each task reads from device memory, so the
 *               host can slow a running kernel's tasks down; its loop sleeps
 *               100 ns per turn. A pure spin, at 8 workers per SM, keeps a
 *               chunk's last warp from being scheduled, so its worker tasks
 *               last longer than they name; one that gives its issue slot
 *               away, as a task waiting on memory does, stretches far less
 *               (docs/decisions/0015)
 *   flagspin    the naive baseline: every block polls a flag continuously
 *
 * Pins, as corun-nvcc sets them: only where the worker form would fit fewer
 * blocks per SM than the plain kernel (libcorun refuses such a worker).
 * matmul and blackscholes need one in every build; the 256-thread kernels
 * only in the CORUN_TASK_HITS build, whose per-task counting adds registers
 * (CHECK_PIN256). An unneeded pin is not free (docs/decisions/0014), so the
 * benchmark build has none.
 */
#ifndef CORUN_GPU_CHECK_KERNELS_CUH
#define CORUN_GPU_CHECK_KERNELS_CUH

#include "corun/corun_device.cuh"

#ifdef CORUN_TASK_HITS
#define CHECK_PIN256 __launch_bounds__(256, 8)
#else
#define CHECK_PIN256
#endif

/* ---- vadd ---------------------------------------------------------------- */
CORUN_BODY(vadd, (const float *a, const float *b, float *c, int n))
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
CORUN_KERNELS_EX(vadd, (const float *a, const float *b, float *c, int n), (a, b, c, n), CORUN_PLAIN,
                 CHECK_PIN256)

/* ---- matmul -------------------------------------------------------------- */
#define MM_TILE 32
CORUN_BODY(matmul, (const float *A, const float *B, float *C, int n))
{
    __shared__ float As[MM_TILE][MM_TILE];
    __shared__ float Bs[MM_TILE][MM_TILE];
    const int row = blockIdx.y * MM_TILE + threadIdx.y;
    const int col = blockIdx.x * MM_TILE + threadIdx.x;
    float acc = 0.0f;

    for (int t = 0; t < n; t += MM_TILE) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < MM_TILE; ++k) {
            acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        }
        __syncthreads();
    }
    C[row * n + col] = acc;
}
/* Pinned: without __maxnreg__ the worker needs more registers and would fit
 * one 1024-thread block per SM instead of two. */
CORUN_KERNELS_EX(matmul, (const float *A, const float *B, float *C, int n), (A, B, C, n),
                 CORUN_SHARED, __launch_bounds__(1024, 2))

/* ---- stencil3d ----------------------------------------------------------- */
CORUN_BODY(stencil3d, (const float *in, float *out, int nx, int ny, int nz))
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x <= 0 || y <= 0 || z <= 0 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1) {
        return;
    }
    const long i = ((long)z * ny + y) * nx + x;
    out[i] = 0.5f * in[i] + 0.0833333f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] +
                                          in[i - (long)nx * ny] + in[i + (long)nx * ny]);
}
CORUN_KERNELS_EX(stencil3d, (const float *in, float *out, int nx, int ny, int nz),
                 (in, out, nx, ny, nz), CORUN_PLAIN, CHECK_PIN256)

/* ---- reduce -------------------------------------------------------------- */
CORUN_BODY(reduce, (const unsigned *in, unsigned long long *sum, int n))
{
    __shared__ unsigned long long part[256];
    const int i = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    unsigned long long v = 0;

    for (int k = 0; k < 4; ++k) {
        const int j = i + k * blockDim.x;
        if (j < n) {
            v += in[j];
        }
    }
    part[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            part[threadIdx.x] += part[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(sum, part[0]);
    }
}
CORUN_KERNELS_EX(reduce, (const unsigned *in, unsigned long long *sum, int n), (in, sum, n),
                 CORUN_SHARED, CHECK_PIN256)

/* ---- blackscholes -------------------------------------------------------- */
__device__ __forceinline__ float bs_cnd(float d)
{
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
                A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
    const float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = RSQRT2PI * expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0f - c : c;
}

CORUN_BODY(blackscholes, (float *call, float *put, const float *S, const float *X, const float *T,
                          float R, float V, int n))
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const float sqrtT = sqrtf(T[i]);
    const float d1 = (logf(S[i] / X[i]) + (R + 0.5f * V * V) * T[i]) / (V * sqrtT);
    const float d2 = d1 - V * sqrtT;
    const float expRT = expf(-R * T[i]);
    call[i] = S[i] * bs_cnd(d1) - X[i] * expRT * bs_cnd(d2);
    put[i] = X[i] * expRT * (1.0f - bs_cnd(d2)) - S[i] * (1.0f - bs_cnd(d1));
}
/* Pinned: unpinned, the worker needs 35 registers against the plain
 * kernel's 26 and fits 12 blocks of 128 threads per SM instead of 16. */
CORUN_KERNELS_EX(blackscholes,
                 (float *call, float *put, const float *S, const float *X, const float *T, float R,
                  float V, int n),
                 (call, put, S, X, T, R, V, n), CORUN_PLAIN, __launch_bounds__(128, 16))

/* ---- transpose ----------------------------------------------------------- */
CORUN_BODY(transpose, (const float *in, float *out, int w, int h))
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;

    for (int j = 0; j < 32; j += 8) {
        if (x < w && y + j < h) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        if (x < h && y + j < w) {
            out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
CORUN_KERNELS_EX(transpose, (const float *in, float *out, int w, int h), (in, out, w, h),
                 CORUN_SHARED, CHECK_PIN256)

/* ---- ragged -------------------------------------------------------------- */
__device__ __forceinline__ unsigned mix32(unsigned x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

CORUN_BODY(ragged, (unsigned *out, const unsigned *in, int n))
{
    if (blockIdx.x * blockDim.x >= (unsigned)n) {
        return; /* whole block past the end */
    }
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return; /* this thread past the end */
    }
    unsigned v = in[i];
    for (int k = 0; k < 16; ++k) {
        v = mix32(v + k);
    }
    out[i] = v;
}
CORUN_KERNELS_EX(ragged, (unsigned *out, const unsigned *in, int n), (out, in, n), CORUN_PLAIN,
                 CHECK_PIN256)

/* ---- longtask ------------------------------------------------------------ */
CORUN_BODY(longtask, (unsigned *out, int rounds))
{
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < rounds; ++r) {
        v = mix32(v ^ (unsigned)r);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
CORUN_KERNELS_EX(longtask, (unsigned *out, int rounds), (out, rounds), CORUN_PLAIN,
                 CHECK_PIN256)

/* ---- spin (latency benchmarks) ------------------------------------------- */
CORUN_BODY(spin, (unsigned long long task_ns, unsigned *sink))
{
    const unsigned long long t0 = corun_globaltimer();
    unsigned x = threadIdx.x;
    while (corun_globaltimer() - t0 < task_ns) {
        x = mix32(x);
    }
    if (x == 0x12345678u) {
        sink[0] = x;
    }
}
CORUN_KERNELS(spin, (unsigned long long task_ns, unsigned *sink), (task_ns, sink), CORUN_PLAIN)

CORUN_BODY(spinvar, (const unsigned *task_ns, unsigned *sink))
{
    const unsigned long long ns = *(const volatile unsigned *)task_ns;
    const unsigned long long t0 = corun_globaltimer();
    unsigned x = threadIdx.x;
    while (corun_globaltimer() - t0 < ns) {
        x = mix32(x);
        __nanosleep(100);
    }
    if (x == 0x12345678u) {
        sink[0] = x;
    }
}
CORUN_KERNELS(spinvar, (const unsigned *task_ns, unsigned *sink), (task_ns, sink), CORUN_PLAIN)

/* The naive baseline: every block polls a device flag. */
extern "C" __global__ void flagspin(const unsigned *flag)
{
    __shared__ unsigned stop;
    for (;;) {
        if (threadIdx.x == 0) {
            stop = *(const volatile unsigned *)flag;
        }
        __syncthreads();
        if (stop) {
            return;
        }
        __syncthreads();
    }
}

/* Records when its first block started (GPU clock), for the spatial test. */
/* The latency-sensitive probe: one wave of blocks that each spin task_ns.
 * stamps[0] receives the earliest block start, stamps[1] the latest. */
extern "C" __global__ void ls_probe(unsigned long long *stamps, unsigned long long task_ns)
{
    const unsigned long long t0 = corun_globaltimer();
    if (threadIdx.x == 0) {
        atomicMin(&stamps[0], t0);
        atomicMax(&stamps[1], t0);
    }
    while (corun_globaltimer() - t0 < task_ns) {
    }
}

/* ls_probe that also counts its ended blocks (after a fence), so another
 * stream can wait for them on the GPU instead of for the kernel's end, and
 * stamps its last block's end (stamps[2]) and the worst overrun of a block
 * past task_ns (stamps[3]). */
extern "C" __global__ void ls_probe_count(unsigned long long *stamps, unsigned long long task_ns,
                                          unsigned *ended)
{
    const unsigned long long t0 = corun_globaltimer();
    if (threadIdx.x == 0) {
        atomicMin(&stamps[0], t0);
        atomicMax(&stamps[1], t0);
    }
    unsigned long long t;
    do {
        t = corun_globaltimer();
    } while (t - t0 < task_ns);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMax(&stamps[2], t);                 /* last block's end */
        atomicMax(&stamps[3], t - t0 - task_ns);  /* worst overrun of a block */
        __threadfence();
        atomicAdd(ended, 1u);
    }
}

/* A signal sent from a block that is already resident (launched before the
 * batch kernel, so no dispatch delay and no younger-warp starvation): waits
 * for the host's trigger word, stamps the GPU clock (t[0]), writes
 * evict_below = value, then stamps again when the exit counter reaches gone
 * (t[1]): the signal and the evicted workers' exit on the LS's clock. */
extern "C" __global__ void signaller(const unsigned *trigger, unsigned *evict_below,
                                     unsigned value, const unsigned *exited, unsigned gone,
                                     unsigned long long *t)
{
    if (threadIdx.x != 0) {
        return;
    }
    while (*(const volatile unsigned *)trigger == 0) {
    }
    t[0] = corun_globaltimer();
    *(volatile unsigned *)evict_below = value;
    __threadfence();
    while (*(const volatile unsigned *)exited < gone) {
    }
    t[1] = corun_globaltimer();
}

/* Halts a worker kernel half way, from a block that is already resident
 * (launched before the workers, so the halt costs no dispatch): waits until
 * done >= half, writes halt_gen = 1 and stamps the GPU clock (t[0]) and the
 * done counter (t[1]), then stamps again when every worker has left (t[2],
 * t[3]). The resume benchmark's halt on the workers' own clock. */
/* The 32-bit words of a halt at their offsets in the control block, in
 * order, as the host's protocol module gives them (src/core/ctl.h). */
struct halt_words {
    unsigned n;
    unsigned off[4];
    unsigned value[4];
};

extern "C" __global__ void halfway_signaller(corun_ctl *ctl, unsigned long long half,
                                             halt_words hw, unsigned gone,
                                             unsigned long long *t)
{
    const unsigned long long *done = (const unsigned long long *)&ctl->done;
    const unsigned *exited = &ctl->exited;
    if (threadIdx.x != 0) {
        return;
    }
    while (*(const volatile unsigned long long *)done < half) {
        __nanosleep(100);
    }
    for (unsigned i = 0; i < hw.n; i++) {
        *(volatile unsigned *)((char *)ctl + hw.off[i]) = hw.value[i];
    }
    __threadfence();
    t[0] = corun_globaltimer();
    t[1] = *(const volatile unsigned long long *)done;
    while (*(const volatile unsigned *)exited < gone) {
    }
    t[2] = corun_globaltimer();
    t[3] = *(const volatile unsigned long long *)done;
}

/* Does nothing: as many blocks as a worker launch, the baseline of its fixed
 * cost (dispatch and retirement of the blocks). */
extern "C" __global__ void nop_blocks() {}

/* Writes the GPU clock to *at: ordered in a stream, it timestamps the
 * operations before it on the device's clock. */
extern "C" __global__ void clock_stamp(unsigned long long *at)
{
    *at = corun_globaltimer();
}

#endif
