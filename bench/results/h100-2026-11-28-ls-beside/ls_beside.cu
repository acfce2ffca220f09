// ls_beside.cu: how fast an LS grid runs beside a batch grid of k blocks per SM (H100).
// A batch grid of k x SMs blocks (256 threads, an FMA chain, 20 ms each) is meant to fill k
// of the 8 slots of every SM (where the block scheduler puts them is not read); 1 ms later
// an LS grid of one 256-thread block per SM (a fixed FMA chain, ~60 us alone) is launched on
// a high-priority stream and timed by events there, against the same grid just before alone.
// Build: nvcc -O3 -arch=sm_90 -o ls_beside ls_beside.cu
#include <cstdio>
#include <cuda_runtime.h>
#include <time.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void batch(float *out, long long cycles)
{
    float a = threadIdx.x, b = 1.0000001f;
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
#pragma unroll 16
        for (int i = 0; i < 64; i++) a = fmaf(a, b, 0.5f);
    }
    if (a == 12345.f) out[blockIdx.x] = a;
}

__global__ void ls(float *out, int n)
{
    float a = threadIdx.x, b = 1.0000001f;
#pragma unroll 16
    for (int i = 0; i < n; i++) a = fmaf(a, b, 0.5f);
    if (a == 12345.f) out[blockIdx.x] = a;
}

int main()
{
    int sms, lo, hi, clk;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0)); /* kHz */
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t sb, sl;
    CK(cudaStreamCreateWithPriority(&sb, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&sl, cudaStreamNonBlocking, hi));
    float *out;
    CK(cudaMalloc(&out, 8 * sms * sizeof(float)));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const long long cycles = (long long)clk * 20; /* 20 ms */
    int n = 1 << 16;
    float ms;
    /* calibrate the LS chain to ~60 us alone, a block per SM */
    for (int it = 0; it < 8; it++) {
        ls<<<sms, 256, 0, sl>>>(out, n);
        CK(cudaEventRecord(e0, sl));
        ls<<<sms, 256, 0, sl>>>(out, n);
        CK(cudaEventRecord(e1, sl));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        n = (int)(n * (0.060 / ms));
    }
    printf("# %d SMs, SM clock %d MHz, LS chain %d FMAs a thread\n", sms, clk / 1000, n);
    printf("k\trep\tls_us\tls_alone_us\n");
    for (int k = 0; k <= 8; k++) {
        for (int rep = 0; rep < 5; rep++) {
            float alone;
            CK(cudaDeviceSynchronize());
            CK(cudaEventRecord(e0, sl));
            ls<<<sms, 256, 0, sl>>>(out, n);
            CK(cudaEventRecord(e1, sl));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&alone, e0, e1));
            if (k > 0) batch<<<k * sms, 256, 0, sb>>>(out, cycles);
            /* 1 ms for the batch blocks to be placed and running */
            ls<<<1, 32, 0, sl>>>(out, 1 << 10);
            CK(cudaStreamSynchronize(sl));
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            CK(cudaEventRecord(e0, sl));
            ls<<<sms, 256, 0, sl>>>(out, n);
            CK(cudaEventRecord(e1, sl));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&ms, e0, e1));
            printf("%d\t%d\t%.1f\t%.1f\n", k, rep, ms * 1000, alone * 1000);
            CK(cudaDeviceSynchronize());
        }
    }
    return 0;
}
