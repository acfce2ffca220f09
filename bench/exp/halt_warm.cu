// Experiment: is the host-observed halt latency a property of the kernel, or
// of what the host did just before signalling? (not built by default;
// nvcc -O3 -arch=sm_90 -I include -I gpu/check bench/exp/halt_warm.cu -lcuda)
//
// `corun-gpucheck latency` times its spin halts right after a synchronous
// 8-byte copy on the control stream (it reads `done`), but its flag-poll
// baseline and its "2 us yielding tasks" row right after a 1-2 ms sleep of the
// host thread. The yielding row reads 20.5-32.5 us though its tasks are the
// shorter ones. Here the same three kernels are halted, trials interleaved,
// after each of three host preludes:
//   sleep   the thread sleeps 2 ms (sleep_for), then signals
//   copy    sleeps 2 ms, then an 8-byte D2H copy on the control stream, synced
//   busy    the thread spins 2 ms on the clock, then signals
// Kernels: flagspin (every block polls a flag), spin (pure ALU, 2 us tasks),
// spinvar (sleeps 100 ns per turn, 2 us tasks); workers as corun-gpucheck
// runs them (max active per SM, budget 10 us). Reported per cell: median and
// p90 of signal -> kernel end seen by the host, and the median time the
// cuStreamWriteValue32 call itself took on the host. For spin and spinvar,
// worker 0's measured task time (task_ns_seed, stored when the halt makes it
// leave) is printed too.
#include <chrono>
#include <thread>
#include "exp_util.cuh"
#include "kernels.cuh"

enum { K_FLAG, K_SPIN, K_SPINVAR, NK };
enum { P_SLEEP, P_COPY, P_BUSY, NP };
static const char *kname[NK] = {"flagspin", "spin 2us", "spinvar 2us"};
static const char *pname[NP] = {"sleep", "copy", "busy"};

int main(int argc, char **argv)
{
    const int trials = argc > 1 ? atoi(argv[1]) : 40;
    int lo, hi, nsm, per_spin = 0, per_var = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_spin, spin__corun, 256, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_var, spinvar__corun, 256, 0));
    cudaStream_t ks, hs;
    CK(cudaStreamCreateWithPriority(&ks, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&hs, cudaStreamNonBlocking, hi));
    unsigned *flag, *sink, *task_ns;
    corun_ctl *ctl;
    unsigned long long *host_word;
    CK(cudaMalloc(&flag, 4));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMalloc(&task_ns, 4));
    CK(cudaMalloc(&ctl, sizeof(corun_ctl)));
    CK(cudaMallocHost(&host_word, 8));
    const unsigned two_us = 2000;
    CK(cudaMemcpy(task_ns, &two_us, 4, cudaMemcpyHostToDevice));
    printf("workers/SM: spin %d, spinvar %d; %d SMs; %d trials per cell\n", per_spin, per_var, nsm,
           trials);

    std::vector<double> halt[NK][NP], call[NK][NP], seed[NK];
    for (int t = 0; t < trials; t++) {
        for (int k = 0; k < NK; k++) {
            for (int p = 0; p < NP; p++) {
                const int per = k == K_SPINVAR ? per_var : per_spin;
                const int nw = per * nsm;
                CUdeviceptr sig;
                if (k == K_FLAG) {
                    CK(cudaMemset(flag, 0, 4));
                    flagspin<<<8 * nsm, 256, 0, ks>>>(flag);
                    sig = (CUdeviceptr)flag;
                } else {
                    const corun_ctl h = exp_ctl(nsm, (uint64_t)nw * 20000, nw, per);
                    CK(cudaMemcpy(ctl, &h, sizeof(h), cudaMemcpyHostToDevice));
                    corun_worker_arg wa = {ctl, 0, 0, h.grid_x, 1, 1, h.workers_per_capsm};
                    unsigned long long ns = 2000;
                    void *a_spin[] = {&wa, &ns, &sink};
                    void *a_var[] = {&wa, &task_ns, &sink};
                    CK(cudaLaunchKernel(k == K_SPIN ? (const void *)spin__corun
                                                    : (const void *)spinvar__corun,
                                        dim3(nw), dim3(256), k == K_SPIN ? a_spin : a_var, 0, ks));
                    sig = (CUdeviceptr)&ctl->halt_gen;
                }
                CK(cudaGetLastError());
                if (p == P_BUSY) {
                    const double until = now_us() + 2000;
                    while (now_us() < until) {
                    }
                } else {
                    std::this_thread::sleep_for(std::chrono::microseconds(2000));
                }
                if (p == P_COPY) {
                    CK(cudaMemcpyAsync(host_word, sink, 4, cudaMemcpyDeviceToHost, hs));
                    CK(cudaStreamSynchronize(hs));
                }
                const double t0 = now_us();
                CU(cuStreamWriteValue32((CUstream)hs, sig, 1, 0));
                const double t1 = now_us();
                CK(cudaStreamSynchronize(ks));
                const double t2 = now_us();
                halt[k][p].push_back(t2 - t0);
                call[k][p].push_back(t1 - t0);
                if (k != K_FLAG) {
                    corun_ctl h;
                    CK(cudaMemcpy(&h, ctl, sizeof(h), cudaMemcpyDeviceToHost));
                    if (h.started != h.exited) {
                        printf("workers live after the halt\n");
                        return 1;
                    }
                    seed[k].push_back(h.task_ns_seed / 1e3);
                }
            }
        }
    }
    printf("%-12s %-6s %9s %9s %12s\n", "kernel", "prelude", "halt_med", "halt_p90", "call_med_us");
    for (int k = 0; k < NK; k++) {
        for (int p = 0; p < NP; p++) {
            printf("%-12s %-6s %9.1f %9.1f %12.2f\n", kname[k], pname[p], pct(halt[k][p], 50),
                   pct(halt[k][p], 90), pct(call[k][p], 50));
        }
        if (k != K_FLAG) {
            printf("%-12s worker 0's measured task time: median %.2f us\n", kname[k],
                   pct(seed[k], 50));
        }
    }
    return 0;
}
