// matrixmul.cu - CUDA SDK-style tiled matrix multiplication C = A * B.
//
// The kernel is a template on the tile size BLOCK_SIZE and is instantiated
// for 16 and 32.  Both instantiations are launched through the host helper
// function template launch_matmul<BLOCK_SIZE>() on a non-default stream over
// a 2D grid of 2D blocks, each computing its own output matrix.
//
// Output (float32 records): C computed with 16x16 tiles, C computed with
// 32x32 tiles.  No atomics: bitwise deterministic between builds.

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

// ---------------------------------------------------------------------------
// Matrix multiplication kernel called by launch_matmul()
// wA is A's width and wB is B's width
// ---------------------------------------------------------------------------
template <int BLOCK_SIZE>
__global__ void MatrixMulCUDA(float *C, const float *A, const float *B, int wA, int wB) {
  // Block index
  int bx = blockIdx.x;
  int by = blockIdx.y;

  // Thread index
  int tx = threadIdx.x;
  int ty = threadIdx.y;

  // Index of the first sub-matrix of A processed by the block
  int aBegin = wA * BLOCK_SIZE * by;

  // Index of the last sub-matrix of A processed by the block
  int aEnd = aBegin + wA - 1;

  // Step size used to iterate through the sub-matrices of A
  int aStep = BLOCK_SIZE;

  // Index of the first sub-matrix of B processed by the block
  int bBegin = BLOCK_SIZE * bx;

  // Step size used to iterate through the sub-matrices of B
  int bStep = BLOCK_SIZE * wB;

  // Csub is used to store the element of the block sub-matrix
  // that is computed by the thread
  float Csub = 0;

  // Loop over all the sub-matrices of A and B required to compute the block
  // sub-matrix
  for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
    // Shared memory for the sub-matrices of A and B
    __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];

    // Load the matrices from device memory to shared memory; each thread
    // loads one element of each matrix
    As[ty][tx] = A[a + wA * ty + tx];
    Bs[ty][tx] = B[b + wB * ty + tx];

    // Synchronize to make sure the matrices are loaded
    __syncthreads();

    // Multiply the two matrices together; each thread computes one element
    // of the block sub-matrix
#pragma unroll
    for (int k = 0; k < BLOCK_SIZE; ++k) {
      Csub += As[ty][k] * Bs[k][tx];
    }

    // Synchronize to make sure that the preceding computation is done before
    // loading two new sub-matrices of A and B in the next iteration
    __syncthreads();
  }

  // Write the block sub-matrix to device memory; each thread writes one element
  int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
  C[c + wB * ty + tx] = Csub;
}

// Host helper: launches the BLOCK_SIZE instantiation for an hA x wA times
// wA x wB product.
template <int BLOCK_SIZE>
static void launch_matmul(float *d_C, const float *d_A, const float *d_B, int hA, int wA, int wB,
                          cudaStream_t stream) {
  dim3 threads(BLOCK_SIZE, BLOCK_SIZE);
  dim3 grid(wB / threads.x, hA / threads.y);
  MatrixMulCUDA<BLOCK_SIZE><<<grid, threads, 0, stream>>>(d_C, d_A, d_B, wA, wB);
  CHECK_LAUNCH();
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
    fprintf(stderr, "matrixmul: invalid value '%s' for %s (expected an integer in [%ld, %ld])\n",
            s, opt, lo, hi);
    exit(2);
  }
  return v;
}

static const char *need_arg(int &i, int argc, char **argv) {
  if (i + 1 >= argc) {
    fprintf(stderr, "matrixmul: option %s needs a value\n", argv[i]);
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
    fprintf(stderr, "matrixmul: cannot write to %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
  }
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: matrixmul [options]\n"
          "  CUDA SDK-style tiled SGEMM, C = A * B with N x N matrices, computed with\n"
          "  16x16 and with 32x32 tiles.\n"
          "  --size N       matrix side, a multiple of 32 (default 2048)\n"
          "  --small        small preset: N = 256\n"
          "  --out FILE     write C (16x16 tiles) and C (32x32 tiles), float32, as CRUNOUT1 records\n"
          "  --help         show this help\n");
}

int main(int argc, char **argv) {
  long size = -1;
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
      size = parse_long(a, need_arg(i, argc, argv), 32, 16384);
    } else if (!strcmp(a, "--out")) {
      out_path = need_arg(i, argc, argv);
    } else {
      fprintf(stderr, "matrixmul: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (size < 0) size = small ? 256 : 2048;
  if (size % 32 != 0) {
    fprintf(stderr, "matrixmul: --size must be a multiple of 32 (got %ld)\n", size);
    return 2;
  }
  const int hA = (int)size, wA = (int)size, wB = (int)size;
  const size_t nA = (size_t)hA * wA, nB = (size_t)wA * wB, nC = (size_t)hA * wB;

  std::vector<float> A(nA), B(nB);
  Lcg rng(1234u);
  for (size_t i = 0; i < nA; ++i) A[i] = rng.uniform();
  for (size_t i = 0; i < nB; ++i) B[i] = rng.uniform();

  CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *d_A, *d_B, *d_C16, *d_C32;
  CUDA_CHECK(cudaMalloc(&d_A, sizeof(float) * nA));
  CUDA_CHECK(cudaMalloc(&d_B, sizeof(float) * nB));
  CUDA_CHECK(cudaMalloc(&d_C16, sizeof(float) * nC));
  CUDA_CHECK(cudaMalloc(&d_C32, sizeof(float) * nC));
  CUDA_CHECK(cudaMemcpyAsync(d_A, A.data(), sizeof(float) * nA, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(d_B, B.data(), sizeof(float) * nB, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));

  cudaEvent_t evStart, evStop;
  CUDA_CHECK(cudaEventCreate(&evStart));
  CUDA_CHECK(cudaEventCreate(&evStop));

  std::vector<float> times;
  for (int run = 0; run < 6; ++run) {  // warm-up + 5 timed runs
    CUDA_CHECK(cudaMemsetAsync(d_C16, 0, sizeof(float) * nC, stream));
    CUDA_CHECK(cudaMemsetAsync(d_C32, 0, sizeof(float) * nC, stream));
    CUDA_CHECK(cudaEventRecord(evStart, stream));
    launch_matmul<16>(d_C16, d_A, d_B, hA, wA, wB, stream);
    launch_matmul<32>(d_C32, d_A, d_B, hA, wA, wB, stream);
    CUDA_CHECK(cudaEventRecord(evStop, stream));
    CUDA_CHECK(cudaEventSynchronize(evStop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evStart, evStop));
    if (run > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());

  std::vector<float> C16(nC), C32(nC);
  CUDA_CHECK(cudaMemcpy(C16.data(), d_C16, sizeof(float) * nC, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(C32.data(), d_C32, sizeof(float) * nC, cudaMemcpyDeviceToHost));

  // ---- CPU reference (double) on sampled rows (all rows when small) ---------
  std::vector<int> check_rows;
  if (hA <= 256) {
    for (int r = 0; r < hA; ++r) check_rows.push_back(r);
  } else {
    for (int s = 0; s < 16; ++s) check_rows.push_back((int)((long long)s * (hA - 1) / 15));
  }
  long bad = 0;
  double max_rel = 0.0;
  std::vector<double> ref(wB);
  for (int r : check_rows) {
    std::fill(ref.begin(), ref.end(), 0.0);
    for (int k = 0; k < wA; ++k) {
      const double a = A[(size_t)r * wA + k];
      const float *brow = &B[(size_t)k * wB];
      for (int c = 0; c < wB; ++c) ref[c] += a * brow[c];
    }
    for (int c = 0; c < wB; ++c) {
      const float g[2] = {C16[(size_t)r * wB + c], C32[(size_t)r * wB + c]};
      for (int v = 0; v < 2; ++v) {
        const double rel = std::fabs(g[v] - ref[c]) / std::fabs(ref[c]);
        if (rel > max_rel || std::isnan(rel)) max_rel = rel;
        if (!(rel <= 1e-4)) ++bad;
      }
    }
  }
  const bool valid = (bad == 0);
  long same = 0;
  for (size_t i = 0; i < nC; ++i) same += (C16[i] == C32[i]);
  printf("matrixmul: A=%dx%d B=%dx%d checked_rows=%zu max_rel_err=%.3g C16==C32 for %.2f%%\n", hA,
         wA, wA, wB, check_rows.size(), max_rel, 100.0 * (double)same / (double)nC);
  if (!valid) fprintf(stderr, "matrixmul: %ld elements differ from the CPU reference\n", bad);

  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "matrixmul: cannot open %s: %s\n", out_path, strerror(errno));
      return 1;
    }
    write_record(f, out_path, 0u, C16.data(), (uint64_t)nC, sizeof(float));
    write_record(f, out_path, 0u, C32.data(), (uint64_t)nC, sizeof(float));
    if (fclose(f) != 0) {
      fprintf(stderr, "matrixmul: cannot write %s: %s\n", out_path, strerror(errno));
      return 1;
    }
  }

  double checksum = 0.0;
  for (size_t i = 0; i < nC; ++i) checksum += (double)C16[i] + C32[i];
  const double flops = 2.0 * 2.0 * hA * (double)wA * wB;
  printf("matrixmul: %.1f GFLOP/s (both products)\n", flops / (times[times.size() / 2] * 1e6));
  printf("RESULT name=matrixmul time_ms=%.4f checksum=%.9g\n", times[times.size() / 2], checksum);
  printf("VALID %s\n", valid ? "yes" : "no");

  CUDA_CHECK(cudaEventDestroy(evStart));
  CUDA_CHECK(cudaEventDestroy(evStop));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(d_A));
  CUDA_CHECK(cudaFree(d_B));
  CUDA_CHECK(cudaFree(d_C16));
  CUDA_CHECK(cudaFree(d_C32));
  return valid ? 0 : 1;
}
