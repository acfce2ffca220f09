// Which start of a one-wave clock-spinning block makes a chain of launches
// take two task times: 1000 dependent launches of 1056 blocks x 256, every
// thread spinning T us on %globaltimer after a variant-specific start.
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
struct Big { unsigned long long ns; unsigned pad[60]; };
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
__device__ __forceinline__ unsigned long long gt(void) { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ void spin(unsigned long long ns) { unsigned long long t0 = gt(); while (gt() - t0 < ns) {} }
__global__ void k_native(unsigned long long ns) { spin(ns); }
__global__ void k_sync(unsigned long long ns) { __syncthreads(); spin(ns); }
__global__ void k_alu(unsigned long long ns, unsigned x) {
  // 128 dependent ALU steps the compiler cannot fold
  #pragma unroll
  for (int i = 0; i < 128; i++) asm volatile("add.u32 %0, %0, %1;" : "+r"(x) : "r"(i));
  if (x == 12345u) ns = 0;
  spin(ns);
}
__global__ void k_leader_atomic(unsigned long long ns, unsigned *c) {
  __shared__ unsigned t;
  if (threadIdx.x == 0) t = atomicAdd(c, 1u);
  __syncthreads();
  if (t == 0xffffffffu) return;
  spin(ns);
}
__global__ void k_bigparam(Big b) { spin(b.ns + b.pad[59]); }
__global__ void k_leader_red(unsigned long long ns, unsigned *c) {
  __shared__ unsigned long long t;
  if (threadIdx.x == 0) { atomicAdd(c, 1u); t = gt(); }
  __syncthreads();
  spin(ns);
}
int main() {
  int nsm; cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0);
  unsigned nb = nsm * 8, *c; cudaMalloc(&c, 4);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  const char *names[] = {"native", "syncthreads first", "128 dependent ALU first", "leader atomic+sync first", "264-byte params", "leader RED+clock+sync first"};
  printf("%-30s %8s %8s %8s %8s  (us per launch, 1000 launches, %u blocks x 256)\n", "start", "2us", "5us", "20us", "100us", nb);
  for (int v = 0; v < 6; v++) {
    printf("%-30s", names[v]);
    for (double tu : {2.0, 5.0, 20.0, 100.0}) {
      unsigned long long ns = (unsigned long long)(tu * 1e3);
      Big b = {}; b.ns = ns;
      double r = 0;
      for (int w = 0; w < 2; w++) {
        double t0 = now_us();
        int n = tu >= 100 ? 250 : 1000;
        for (int i = 0; i < n; i++) {
          switch (v) {
          case 0: k_native<<<nb, 256, 0, s>>>(ns); break;
          case 1: k_sync<<<nb, 256, 0, s>>>(ns); break;
          case 2: k_alu<<<nb, 256, 0, s>>>(ns, 7u); break;
          case 3: k_leader_atomic<<<nb, 256, 0, s>>>(ns, c); break;
          case 4: k_bigparam<<<nb, 256, 0, s>>>(b); break;
          case 5: k_leader_red<<<nb, 256, 0, s>>>(ns, c); break;
          }
        }
        cudaStreamSynchronize(s);
        r = (now_us() - t0) / n;
      }
      printf(" %8.2f", r);
    }
    printf("\n");
  }
  cudaError_t e = cudaGetLastError();
  printf("%s\n", cudaGetErrorString(e));
  return 0;
}
