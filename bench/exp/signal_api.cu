// Experiment: which driver call gets a 4-byte signal to device memory soonest?
// (not built by default; nvcc -O3 -arch=sm_90 -I include -I gpu/check bench/exp/signal_api.cu -lcuda)
//
// bench/exp/halt_warm.cu found that cuStreamWriteValue32 itself takes 4.3-9
// us of host time, about half of a flag-poll halt. Every way the rules allow
// (a write on a high-priority control stream, the GPU never polling host
// memory) is tried on the same target: a grid of 8 blocks per SM polling a
// device flag (flagspin), halted by writing the flag. Trials interleaved,
// each preceded by a 2 ms sleep and a synced 4-byte copy on the control
// stream (the "copy" prelude of halt_warm.cu). Per method: median host time
// of the call, median / p90 of signal -> kernel end seen by the host.
//   wv32        cuStreamWriteValue32, default flags (what corun uses)
//   wv64        cuStreamWriteValue64
//   batch       cuStreamBatchMemOp, one 32-bit write
//   h2d_pinned  cuMemcpyHtoDAsync from page-locked memory
//   h2d_pageable cuMemcpyHtoDAsync from pageable memory
//   memset      cuMemsetD32Async
//   graph_memset a graph of one memset node, cuGraphLaunch
//   wv32_idle   cuStreamWriteValue32 to a spare word with no kernel running:
//               the call's host time alone
// Then, for wv32: the host waits for the grid's end by cudaStreamSynchronize
// (sync) or by spinning on cuStreamQuery (query). memset and graph_memset
// are waited for by spinning on cuStreamQuery too, for at most 50 ms: should
// the driver do them with a kernel, it could not start while the grid holds
// every SM (such a trial counts as 1e9 us).
#include <chrono>
#include <thread>
#include "exp_util.cuh"
#include "kernels.cuh"

enum { M_WV32, M_WV64, M_BATCH, M_H2D_PIN, M_H2D_PAGE, M_MEMSET, M_GRAPH, M_WV32_QUERY, M_IDLE, NM };
static const char *mname[NM] = {"wv32",   "wv64",         "batch", "h2d_pinned", "h2d_pageable",
                                "memset", "graph_memset", "wv32 query", "wv32_idle"};

int main(int argc, char **argv)
{
    const int trials = argc > 1 ? atoi(argv[1]) : 60;
    int lo, hi, nsm;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t ks, hs, xs;
    CK(cudaStreamCreateWithPriority(&ks, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&xs, cudaStreamNonBlocking, hi));
    CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
    unsigned long long *flag; /* 8-byte aligned; flagspin reads the low word */
    unsigned *spare, *pinned, *scratch;
    CK(cudaMalloc(&flag, 8));
    CK(cudaMalloc(&spare, 4));
    CK(cudaMallocHost(&pinned, 4));
    CK(cudaMallocHost(&scratch, 4));
    *pinned = 1;
    unsigned pageable = 1;

    CUgraph g;
    CUgraphExec ge;
    CU(cuGraphCreate(&g, 0));
    CUDA_MEMSET_NODE_PARAMS mp;
    memset(&mp, 0, sizeof(mp));
    mp.dst = (CUdeviceptr)flag;
    mp.value = 1;
    mp.elementSize = 4;
    mp.width = 1;
    mp.height = 1;
    mp.pitch = 4;
    CUgraphNode node;
    CUcontext cx;
    CU(cuCtxGetCurrent(&cx));
    CU(cuGraphAddMemsetNode(&node, g, nullptr, 0, &mp, cx));
    CU(cuGraphInstantiate(&ge, g, 0));

    {
        CUresult r = cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)spare, 1,
                                          CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER);
        printf("CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER: CUresult %d\n", (int)r);
        CK(cudaDeviceSynchronize());
    }

    std::vector<double> halt[NM], call[NM];
    for (int t = 0; t < trials; t++) {
        for (int m = 0; m < NM; m++) {
            if (m != M_IDLE) {
                CK(cudaMemset(flag, 0, 8));
                flagspin<<<8 * nsm, 256, 0, ks>>>((const unsigned *)flag);
                CK(cudaGetLastError());
            }
            std::this_thread::sleep_for(std::chrono::microseconds(2000));
            CK(cudaMemcpyAsync(scratch, spare, 4, cudaMemcpyDeviceToHost, hs));
            CK(cudaStreamSynchronize(hs));
            const CUdeviceptr f = (CUdeviceptr)flag;
            const double t0 = now_us();
            switch (m) {
            case M_WV32:
            case M_WV32_QUERY:
                CU(cuStreamWriteValue32((CUstream)hs, f, 1, 0));
                break;
            case M_WV64:
                CU(cuStreamWriteValue64((CUstream)hs, f, 1, 0));
                break;
            case M_BATCH: {
                CUstreamBatchMemOpParams op;
                memset(&op, 0, sizeof(op));
                op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
                op.writeValue.address = f;
                op.writeValue.value = 1;
                CU(cuStreamBatchMemOp((CUstream)hs, 1, &op, 0));
                break;
            }
            case M_H2D_PIN:
                CU(cuMemcpyHtoDAsync(f, pinned, 4, (CUstream)hs));
                break;
            case M_H2D_PAGE:
                CU(cuMemcpyHtoDAsync(f, &pageable, 4, (CUstream)hs));
                break;
            case M_MEMSET:
                CU(cuMemsetD32Async(f, 1, 1, (CUstream)hs));
                break;
            case M_GRAPH:
                CU(cuGraphLaunch(ge, (CUstream)hs));
                break;
            case M_IDLE:
                CU(cuStreamWriteValue32((CUstream)hs, (CUdeviceptr)spare, 1, 0));
                break;
            }
            const double t1 = now_us();
            bool stuck = false;
            if (m == M_WV32_QUERY || m == M_MEMSET || m == M_GRAPH) {
                /* a memset done by a kernel could not start while the grid
                 * holds every SM: give up after 50 ms and free the grid */
                while (cudaStreamQuery(ks) == cudaErrorNotReady) {
                    if (now_us() - t0 > 50000) {
                        stuck = true;
                        CU(cuStreamWriteValue32((CUstream)xs, f, 1, 0));
                        CK(cudaStreamSynchronize(ks));
                        break;
                    }
                }
            } else if (m == M_IDLE) {
                CK(cudaStreamSynchronize(hs));
            } else {
                CK(cudaStreamSynchronize(ks));
            }
            const double t2 = now_us();
            CK(cudaStreamSynchronize(hs));
            halt[m].push_back(stuck ? 1e9 : t2 - t0);
            call[m].push_back(t1 - t0);
        }
    }
    printf("%-14s %11s %9s %9s\n", "method", "call_med_us", "halt_med", "halt_p90");
    for (int m = 0; m < NM; m++) {
        printf("%-14s %11.2f %9.1f %9.1f\n", mname[m], pct(call[m], 50), pct(halt[m], 50),
               pct(halt[m], 90));
    }
    return 0;
}
