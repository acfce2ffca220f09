// Experiment: where the ~10 us of a signal to a spinning grid go, host-observed.
// (not built by default; nvcc -O3 -arch=sm_90 -I include bench/exp/signal_path.cu -lcuda)
// A grid of 8 blocks per SM polls a device flag (check.cu's flagspin); the host
// writes the flag on a high-priority stream and waits. Per trial, interleaved:
//   sync      cuStreamWriteValue32, then cudaStreamSynchronize on the grid's
//             stream (what `corun-gpucheck latency` does)
//   nobar     the same with CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER
//   seen      the host spins on a mapped host word that the first block to see
//             the flag writes: the signal's way in plus one PCIe write back
//   gone      ... on a word the last block to leave writes (after its
//             atomicAdd on a device counter): the grid's exit, seen at once
//   gone+sync the same trial's cudaStreamSynchronize after `gone`: what the
//             end of the kernel adds to its last block leaving
//   waitval   a second high-priority stream waits (cuStreamWaitValue32) for
//             the device exit counter, the host synchronises that stream
//             (what the evict measurement does)
//   empty     an empty kernel launched and synchronised (launch + completion)
#include <unistd.h>
#include "exp_util.cuh"

// flag[0]: the signal; flag[1]: blocks gone; flag[2]: first seen (device).
// host[0] <- 1 by the first block to see the signal, host[1] <- 1 by the last to leave.
__global__ void flagspin(unsigned *flag, volatile unsigned *host)
{
    __shared__ unsigned stop;
    for (;;) {
        if (threadIdx.x == 0) stop = *(const volatile unsigned *)flag;
        __syncthreads();
        if (stop) break;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (host != nullptr && atomicExch(&flag[2], 1u) == 0) host[0] = 1;
        __threadfence();
        const unsigned n = atomicAdd(&flag[1], 1u) + 1;
        if (host != nullptr && n == gridDim.x) host[1] = 1;
    }
}

__global__ void empty() {}

static double med(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
static double p90(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() * 9 / 10];
}

int main(int argc, char **argv)
{
    const int trials = argc > 1 ? atoi(argv[1]) : 100;
    int lo, hi, nsm;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t ks, hs, ws;
    CK(cudaStreamCreateWithPriority(&ks, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
    CK(cudaStreamCreateWithPriority(&ws, cudaStreamNonBlocking, hi));
    unsigned *flag;
    CK(cudaMalloc(&flag, 16));
    volatile unsigned *host;
    CK(cudaHostAlloc((void **)&host, 64, cudaHostAllocMapped));
    unsigned *host_d;
    CK(cudaHostGetDevicePointer((void **)&host_d, (void *)host, 0));
    const int nb = 8 * nsm;
    bool nobar_ok = true;
    std::vector<double> sync, nobar, seen, gone, gonesync, waitval, empt;
    auto start = [&](bool mapped) {
        CK(cudaMemsetAsync(flag, 0, 16, ks));
        host[0] = host[1] = 0;
        flagspin<<<nb, 256, 0, ks>>>(flag, mapped ? host_d : nullptr);
        CK(cudaGetLastError());
        usleep(1000);
    };
    for (int i = 0; i < trials + 3; ++i) {
        const bool keep = i >= 3; // warm-up
        double t0, t1, t2;
        start(false);
        t0 = now_us();
        CU(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)flag, 1, 0));
        CK(cudaStreamSynchronize(ks));
        if (keep) sync.push_back(now_us() - t0);

        start(false);
        t0 = now_us();
        if (cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)flag, 1,
                                 CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER) != CUDA_SUCCESS) {
            nobar_ok = false; /* refused (CUDA_ERROR_INVALID_VALUE on the H100, driver 580) */
            CU(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)flag, 1, 0));
        }
        CK(cudaStreamSynchronize(ks));
        if (keep) nobar.push_back(now_us() - t0);

        start(true);
        t0 = now_us();
        CU(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)flag, 1, 0));
        while (host[0] == 0) {}
        t1 = now_us();
        while (host[1] == 0) {}
        t2 = now_us();
        CK(cudaStreamSynchronize(ks));
        if (keep) {
            seen.push_back(t1 - t0);
            gone.push_back(t2 - t0);
            gonesync.push_back(now_us() - t0);
        }

        start(false);
        t0 = now_us();
        CU(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)flag, 1, 0));
        CU(cuStreamWaitValue32((CUstream)ws, (CUdeviceptr)(flag + 1), (cuuint32_t)nb, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cudaStreamSynchronize(ws));
        if (keep) waitval.push_back(now_us() - t0);
        CK(cudaStreamSynchronize(ks));

        t0 = now_us();
        empty<<<1, 32, 0, ks>>>();
        CK(cudaStreamSynchronize(ks));
        if (keep) empt.push_back(now_us() - t0);
    }
    printf("signal path, %d blocks (8/SM), %d trials, host-observed us\n", nb, trials);
    printf("%-10s %8s %8s\n", "what", "median", "p90");
    auto row = [](const char *n, const std::vector<double> &v) { printf("%-10s %8.2f %8.2f\n", n, med(v), p90(v)); };
    row("sync", sync);
    if (nobar_ok) row("nobar", nobar); else printf("%-10s refused by the driver\n", "nobar");
    row("seen", seen);
    row("gone", gone);
    row("gone+sync", gonesync);
    row("waitval", waitval);
    row("empty", empt);
    return 0;
}
