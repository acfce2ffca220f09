// fastwalsh.cu - CUDA SDK-style fastWalshTransform (dyadic convolution).
//
// The data (2^log2N floats) and a 128-tap kernel are each transformed with a
// fast Walsh-Hadamard transform, multiplied point-wise, and transformed back.
// The transform is done by
//   fwtBatch2Kernel  radix-4 butterflies in global memory, launched in a host
//                    loop over a 2D grid (x: butterflies, y: batch), one
//                    launch per two bits above ELEMENTARY_LOG2SIZE;
//   fwtBatch1Kernel  the remaining <= 11 bits in shared memory, dynamic shared
//                    memory (`extern __shared__`), k<<<M, N/4, N*4>>>;
//   modulateKernel   point-wise product, grid-stride loop.
//
// Output: float32 convolution result (2^log2N elements).  No atomics:
// bitwise deterministic.

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CUDA_CHECK(call)                                                         \
  do {                                                                           \
    cudaError_t err_ = (call);                                                   \
    if (err_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d: CUDA error %s: %s (in %s)\n", __FILE__, __LINE__,  \
              cudaGetErrorName(err_), cudaGetErrorString(err_), #call);          \
      exit(EXIT_FAILURE);                                                        \
    }                                                                            \
  } while (0)
#define CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

///////////////////////////////////////////////////////////////////////////////
// Elementary(for vectors less than elementary size) in-shared memory
// combined radix-2 + radix-4 Fast Walsh Transform
///////////////////////////////////////////////////////////////////////////////
#define ELEMENTARY_LOG2SIZE 11

__global__ void fwtBatch1Kernel(float *d_Output, const float *d_Input, int log2N) {
  const int N = 1 << log2N;
  const int base = blockIdx.x << log2N;

  //(2 ** 11) * 4 bytes == 8KB -- maximum s_data[] size for G80
  extern __shared__ float s_data[];
  const float *d_Src = d_Input + base;
  float *d_Dst = d_Output + base;

  for (int pos = threadIdx.x; pos < N; pos += blockDim.x) {
    s_data[pos] = d_Src[pos];
  }

  // Main radix-4 stages
  const int pos = threadIdx.x;

  for (int stride = N >> 2; stride > 0; stride >>= 2) {
    int lo = pos & (stride - 1);
    int i0 = ((pos - lo) << 2) + lo;
    int i1 = i0 + stride;
    int i2 = i1 + stride;
    int i3 = i2 + stride;

    __syncthreads();
    float D0 = s_data[i0];
    float D1 = s_data[i1];
    float D2 = s_data[i2];
    float D3 = s_data[i3];

    float T;
    T = D0;
    D0 = D0 + D2;
    D2 = T - D2;
    T = D1;
    D1 = D1 + D3;
    D3 = T - D3;
    T = D0;
    s_data[i0] = D0 + D1;
    s_data[i1] = T - D1;
    T = D2;
    s_data[i2] = D2 + D3;
    s_data[i3] = T - D3;
  }

  // Do single radix-2 stage for odd power of two
  if (log2N & 1) {
    __syncthreads();

    for (int pos = threadIdx.x; pos < N / 2; pos += blockDim.x) {
      int i0 = pos << 1;
      int i1 = i0 + 1;

      float D0 = s_data[i0];
      float D1 = s_data[i1];
      s_data[i0] = D0 + D1;
      s_data[i1] = D0 - D1;
    }
  }

  __syncthreads();

  for (int pos = threadIdx.x; pos < N; pos += blockDim.x) {
    d_Dst[pos] = s_data[pos];
  }
}

////////////////////////////////////////////////////////////////////////////////
// Single in-global memory radix-4 Fast Walsh Transform pass
// (for strides exceeding elementary vector size)
////////////////////////////////////////////////////////////////////////////////
__global__ void fwtBatch2Kernel(float *d_Output, const float *d_Input, int stride) {
  const int pos = blockIdx.x * blockDim.x + threadIdx.x;
  const int N = blockDim.x * gridDim.x * 4;

  const float *d_Src = d_Input + blockIdx.y * N;
  float *d_Dst = d_Output + blockIdx.y * N;

  int lo = pos & (stride - 1);
  int i0 = ((pos - lo) << 2) + lo;
  int i1 = i0 + stride;
  int i2 = i1 + stride;
  int i3 = i2 + stride;

  float D0 = d_Src[i0];
  float D1 = d_Src[i1];
  float D2 = d_Src[i2];
  float D3 = d_Src[i3];

  float T;
  T = D0;
  D0 = D0 + D2;
  D2 = T - D2;
  T = D1;
  D1 = D1 + D3;
  D3 = T - D3;
  T = D0;
  d_Dst[i0] = D0 + D1;
  d_Dst[i1] = T - D1;
  T = D2;
  d_Dst[i2] = D2 + D3;
  d_Dst[i3] = T - D3;
}

////////////////////////////////////////////////////////////////////////////////
// Put everything together: batched Fast Walsh Transform CPU front-end
////////////////////////////////////////////////////////////////////////////////
static void fwtBatchGPU(float *d_Data, int M, int log2N) {
  const int THREAD_N = 256;

  int N = 1 << log2N;
  dim3 grid((1 << log2N) / (4 * THREAD_N), M, 1);

  for (; log2N > ELEMENTARY_LOG2SIZE; log2N -= 2, N >>= 2, M <<= 2) {
    fwtBatch2Kernel<<<grid, THREAD_N>>>(d_Data, d_Data, N / 4);
    CHECK_LAUNCH();
  }

  fwtBatch1Kernel<<<M, N / 4, N * sizeof(float)>>>(d_Data, d_Data, log2N);
  CHECK_LAUNCH();
}

////////////////////////////////////////////////////////////////////////////////
// Modulate two arrays
////////////////////////////////////////////////////////////////////////////////
__global__ void modulateKernel(float *d_A, const float *d_B, int N) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  int numThreads = blockDim.x * gridDim.x;
  float rcpN = 1.0f / (float)N;

  for (int pos = tid; pos < N; pos += numThreads) {
    d_A[pos] *= d_B[pos] * rcpN;
  }
}

// Interface to modulateKernel()
static void modulateGPU(float *d_A, const float *d_B, int N) {
  modulateKernel<<<128, 256>>>(d_A, d_B, N);
  CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------
// CPU reference: straightforward in-place Walsh-Hadamard transform in double
// ---------------------------------------------------------------------------
static void fwtCPU(std::vector<double> &h, int log2N) {
  const size_t N = (size_t)1 << log2N;
  for (size_t stride = N / 2; stride >= 1; stride >>= 1)
    for (size_t base = 0; base < N; base += 2 * stride)
      for (size_t j = 0; j < stride; ++j) {
        const double a = h[base + j], b = h[base + j + stride];
        h[base + j] = a + b;
        h[base + j + stride] = a - b;
      }
}

// ---------------------------------------------------------------------------
// Host utilities
// ---------------------------------------------------------------------------
struct Lcg {
  uint32_t s;
  explicit Lcg(uint32_t seed) : s(seed) {}
  uint32_t next() {
    s = s * 1664525u + 1013904223u;
    return s;
  }
  float uniform() { return (float)(next() >> 8) * (1.0f / 16777216.0f); }
};

static long parse_long(const char *opt, const char *s, long lo, long hi) {
  char *end = nullptr;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "fastwalsh: invalid value '%s' for %s (expected an integer in [%ld, %ld])\n",
            s, opt, lo, hi);
    exit(2);
  }
  return v;
}

static const char *need_arg(int &i, int argc, char **argv) {
  if (i + 1 >= argc) {
    fprintf(stderr, "fastwalsh: option %s needs a value\n", argv[i]);
    exit(2);
  }
  return argv[++i];
}

static void write_record(FILE *f, const char *path, uint32_t type, const void *data,
                         uint64_t count, size_t elem_size) {
  uint32_t hdr[2] = {type, 0u};
  if (fwrite("CRUNOUT1", 1, 8, f) != 8 || fwrite(hdr, sizeof(uint32_t), 2, f) != 2 ||
      fwrite(&count, sizeof(uint64_t), 1, f) != 1 ||
      (count > 0 && fwrite(data, elem_size, count, f) != count)) {
    fprintf(stderr, "fastwalsh: cannot write to %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
  }
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: fastwalsh [options]\n"
          "  CUDA SDK-style fast Walsh transform: dyadic convolution of 2^N data points\n"
          "  with a 128-tap kernel.\n"
          "  --size N       log2 of the data length, 2..26 (default 24)\n"
          "  --small        small preset: 2^16 data points\n"
          "  --out FILE     write the convolution result (float32) as a CRUNOUT1 record\n"
          "  --help         show this help\n");
}

int main(int argc, char **argv) {
  long log2Data = -1;
  bool small = false;
  const char *out_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--small")) {
      small = true;
    } else if (!strcmp(a, "--size")) {
      log2Data = parse_long(a, need_arg(i, argc, argv), 2, 26);
    } else if (!strcmp(a, "--out")) {
      out_path = need_arg(i, argc, argv);
    } else {
      fprintf(stderr, "fastwalsh: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (log2Data < 0) log2Data = small ? 16 : 24;

  const int log2N = (int)log2Data;
  const int dataN = 1 << log2N;
  const int kernelN = std::min(128, dataN);
  const size_t DATA_SIZE = (size_t)dataN * sizeof(float);

  // ---- input ----------------------------------------------------------------
  std::vector<float> h_Data(dataN), h_Kernel(dataN, 0.0f);
  Lcg rng(2009u);
  for (int i = 0; i < kernelN; i++) h_Kernel[i] = rng.uniform();
  for (int i = 0; i < dataN; i++) h_Data[i] = rng.uniform();

  // ---- device ---------------------------------------------------------------
  CUDA_CHECK(cudaSetDevice(0));
  float *d_Data, *d_Kernel, *d_DataInit, *d_KernelInit;
  CUDA_CHECK(cudaMalloc(&d_Data, DATA_SIZE));
  CUDA_CHECK(cudaMalloc(&d_Kernel, DATA_SIZE));
  CUDA_CHECK(cudaMalloc(&d_DataInit, DATA_SIZE));
  CUDA_CHECK(cudaMalloc(&d_KernelInit, DATA_SIZE));
  CUDA_CHECK(cudaMemcpy(d_DataInit, h_Data.data(), DATA_SIZE, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_KernelInit, h_Kernel.data(), DATA_SIZE, cudaMemcpyHostToDevice));

  cudaEvent_t evStart, evStop;
  CUDA_CHECK(cudaEventCreate(&evStart));
  CUDA_CHECK(cudaEventCreate(&evStop));

  std::vector<float> times;
  for (int run = 0; run < 6; ++run) {  // warm-up + 5 timed runs
    CUDA_CHECK(cudaMemcpy(d_Data, d_DataInit, DATA_SIZE, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(d_Kernel, d_KernelInit, DATA_SIZE, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaEventRecord(evStart));
    fwtBatchGPU(d_Data, 1, log2N);
    fwtBatchGPU(d_Kernel, 1, log2N);
    modulateGPU(d_Data, d_Kernel, dataN);
    fwtBatchGPU(d_Data, 1, log2N);
    CUDA_CHECK(cudaEventRecord(evStop));
    CUDA_CHECK(cudaEventSynchronize(evStop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evStart, evStop));
    if (run > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());

  std::vector<float> h_ResultGPU(dataN);
  CUDA_CHECK(cudaMemcpy(h_ResultGPU.data(), d_Data, DATA_SIZE, cudaMemcpyDeviceToHost));

  // ---- CPU reference: the same transform chain in double --------------------
  std::vector<double> rd(h_Data.begin(), h_Data.end()), rk(h_Kernel.begin(), h_Kernel.end());
  fwtCPU(rd, log2N);
  fwtCPU(rk, log2N);
  for (int i = 0; i < dataN; ++i) rd[i] *= rk[i] / (double)dataN;
  fwtCPU(rd, log2N);
  double sum_delta2 = 0.0, sum_ref2 = 0.0;
  for (int i = 0; i < dataN; ++i) {
    const double d = rd[i] - h_ResultGPU[i];
    sum_delta2 += d * d;
    sum_ref2 += rd[i] * rd[i];
  }
  const double L2norm = std::sqrt(sum_delta2 / sum_ref2);
  const bool valid = L2norm < 1e-6;
  printf("fastwalsh: dataN=%d kernelN=%d L2_norm=%.3e\n", dataN, kernelN, L2norm);

  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "fastwalsh: cannot open %s: %s\n", out_path, strerror(errno));
      return 1;
    }
    write_record(f, out_path, 0u, h_ResultGPU.data(), (uint64_t)dataN, sizeof(float));
    if (fclose(f) != 0) {
      fprintf(stderr, "fastwalsh: cannot write %s: %s\n", out_path, strerror(errno));
      return 1;
    }
  }

  double checksum = 0.0;
  for (int i = 0; i < dataN; ++i) checksum += h_ResultGPU[i];
  printf("RESULT name=fastwalsh time_ms=%.4f checksum=%.9g\n", times[times.size() / 2], checksum);
  printf("VALID %s\n", valid ? "yes" : "no");

  CUDA_CHECK(cudaEventDestroy(evStart));
  CUDA_CHECK(cudaEventDestroy(evStop));
  CUDA_CHECK(cudaFree(d_Data));
  CUDA_CHECK(cudaFree(d_Kernel));
  CUDA_CHECK(cudaFree(d_DataInit));
  CUDA_CHECK(cudaFree(d_KernelInit));
  return valid ? 0 : 1;
}
