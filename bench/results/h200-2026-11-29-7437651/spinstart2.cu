// Which single operation before a clock spin makes a chain of one-wave launches slow:
// 1000 dependent launches (250 at 100 us) of 1056 blocks x 256, every thread spinning.
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
__device__ __forceinline__ unsigned long long gt(void) { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ void spin(unsigned long long ns) { unsigned long long t0 = gt(); while (gt() - t0 < ns) {} }
struct P { unsigned long long ns; unsigned *g; unsigned x; };
__global__ void k0(P p) { spin(p.ns); }                                               // native
__global__ void k1(P p) { if (threadIdx.x == 1000u + p.x) return; spin(p.ns); }      // S2R tid
__global__ void k2(P p) { if (blockIdx.x == 100000u + p.x) return; spin(p.ns); }     // S2R ctaid
__global__ void k3(P p) { if (*(volatile unsigned *)p.g == 12345u) return; spin(p.ns); }   // a global load, every thread
__global__ void k4(P p) { __shared__ unsigned s[256]; s[(p.x * 7) & 255] = p.x; __syncthreads(); if (s[(p.x * 3) & 255] == 12345u) return; spin(p.ns); } // shared store, barrier, load
__global__ void k5(P p) { unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm)); if (sm == 100000u + p.x) return; spin(p.ns); } // S2R smid
__global__ void k6(P p) { if (atomicAdd(p.g + 1, 0u) == 12345u) return; spin(p.ns); }  // an atomic, every thread (same word)
__global__ void k7(P p) { if (p.x == 0u && threadIdx.x == 0) atomicAdd(p.g + 2, 1u); spin(p.ns); }  // thread 0's red, no wait
__global__ void k8(P p) { if (threadIdx.x == 1000u + p.x) return; __syncthreads(); spin(p.ns); } // S2R tid, then a barrier
int main() {
  int nsm; cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0);
  unsigned nb = nsm * 8, *g; cudaMalloc(&g, 64); cudaMemset(g, 0, 64);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  void (*ks[])(P) = {k0, k1, k2, k3, k4, k5, k6, k7, k8};
  const char *names[] = {"native", "threadIdx test first", "blockIdx test first", "a global load first (all threads)",
                         "shared store+barrier+load first", "%smid test first", "atomicAdd(g,0) first (all threads)",
                         "thread 0 red.add first, no wait", "threadIdx test, barrier first"};
  printf("%-36s %8s %8s %8s %8s  (us per launch, %u blocks x 256)\n", "before the spin", "2us", "5us", "20us", "100us", nb);
  for (int v = 0; v < 9; v++) {
    printf("%-36s", names[v]);
    for (double tu : {2.0, 5.0, 20.0, 100.0}) {
      P p; p.ns = (unsigned long long)(tu * 1e3); p.g = g; p.x = 0;
      double r = 0;
      for (int w = 0; w < 2; w++) {
        int n = tu >= 100 ? 250 : 1000;
        double t0 = now_us();
        for (int i = 0; i < n; i++) ks[v]<<<nb, 256, 0, s>>>(p);
        cudaStreamSynchronize(s);
        r = (now_us() - t0) / n;
      }
      printf(" %8.2f", r);
    }
    printf("\n");
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
