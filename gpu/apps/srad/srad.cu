// srad.cu - Rodinia-style SRAD (Speckle Reducing Anisotropic Diffusion).
//
// Per iteration:
//   1. srad_reduce_partial / srad_reduce_final: sum and sum of squares of the
//      region of interest (ROI) -> q0sqr, in two deterministic passes
//      (fixed grid, shared-memory tree reduction, dynamic shared memory).
//   2. srad_cuda_1: directional derivatives and diffusion coefficient
//      (2D grid of 16x16 blocks, shared-memory tile with a 1-cell halo).
//   3. srad_cuda_2: divergence and image update (2D grid, shared tile).
// Before the loop the image is mapped with exp(I/255), after it with
// log(J)*255 (srad_extract / srad_compress, 1D grids).  Every kernel is
// launched on one non-default stream, `k<<<g, b, smem, stream>>>`.
//
// Output: float32 image (rows*cols).  No atomics: bitwise deterministic.

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

#define BLOCK_SIZE 16
#define RED_THREADS 256
#define RED_BLOCKS 120
#define EW_THREADS 256

// ---------------------------------------------------------------------------
// Device code
// ---------------------------------------------------------------------------

// Diffusion coefficient of one pixel from its centre value and the four
// directional differences (shared by the kernel and the CPU reference).
__host__ __device__ inline float srad_coefficient(float Jc, float dN, float dS, float dW, float dE,
                                                  float q0sqr) {
  float G2 = (dN * dN + dS * dS + dW * dW + dE * dE) / (Jc * Jc);
  float L = (dN + dS + dW + dE) / Jc;
  float num = (0.5f * G2) - ((1.0f / 16.0f) * (L * L));
  float den = 1.0f + (0.25f * L);
  float qsqr = num / (den * den);
  den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
  float c = 1.0f / (1.0f + den);
  if (c < 0.0f)
    c = 0.0f;
  else if (c > 1.0f)
    c = 1.0f;
  return c;
}

__global__ void srad_extract(float *J, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  J[i] = expf(J[i] / 255.0f);
}

__global__ void srad_compress(float *J, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  J[i] = logf(J[i]) * 255.0f;
}

// Pass 1: each block reduces a fixed, strided share of the ROI.
__global__ void srad_reduce_partial(const float *J, int cols, int r1, int c1, int roi_rows,
                                    int roi_cols, float *partial) {
  extern __shared__ float s_red[];  // 2 * blockDim.x floats
  float *s_sum = s_red;
  float *s_sq = s_red + blockDim.x;
  const int tid = threadIdx.x;
  const int n = roi_rows * roi_cols;

  float sum = 0.0f, sq = 0.0f;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
    const int r = r1 + i / roi_cols;
    const int c = c1 + i % roi_cols;
    const float v = J[r * cols + c];
    sum += v;
    sq += v * v;
  }
  s_sum[tid] = sum;
  s_sq[tid] = sq;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      s_sum[tid] += s_sum[tid + s];
      s_sq[tid] += s_sq[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    partial[2 * blockIdx.x] = s_sum[0];
    partial[2 * blockIdx.x + 1] = s_sq[0];
  }
}

// Pass 2: one block combines the partial sums and derives q0sqr.
__global__ void srad_reduce_final(const float *partial, int nparts, float size_R, float *stats) {
  extern __shared__ float s_red[];
  float *s_sum = s_red;
  float *s_sq = s_red + blockDim.x;
  const int tid = threadIdx.x;
  float sum = 0.0f, sq = 0.0f;
  for (int k = tid; k < nparts; k += blockDim.x) {
    sum += partial[2 * k];
    sq += partial[2 * k + 1];
  }
  s_sum[tid] = sum;
  s_sq[tid] = sq;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      s_sum[tid] += s_sum[tid + s];
      s_sq[tid] += s_sq[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    const float meanROI = s_sum[0] / size_R;
    const float varROI = (s_sq[0] / size_R) - meanROI * meanROI;
    stats[0] = s_sum[0];
    stats[1] = s_sq[0];
    stats[2] = varROI / (meanROI * meanROI);
  }
}

__global__ void srad_cuda_1(const float *J, float *dN_out, float *dS_out, float *dW_out,
                            float *dE_out, float *C_out, int rows, int cols, const float *stats) {
  __shared__ float tile[BLOCK_SIZE + 2][BLOCK_SIZE + 2];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * BLOCK_SIZE + tx;
  const int row = blockIdx.y * BLOCK_SIZE + ty;
  // clamped coordinates: out-of-image threads load the nearest edge pixel,
  // which is exactly the clamped neighbour an edge pixel needs
  const int rc = min(row, rows - 1);
  const int cc = min(col, cols - 1);

  tile[ty + 1][tx + 1] = J[rc * cols + cc];
  if (ty == 0) tile[0][tx + 1] = J[max(rc - 1, 0) * cols + cc];
  if (ty == BLOCK_SIZE - 1) tile[BLOCK_SIZE + 1][tx + 1] = J[min(rc + 1, rows - 1) * cols + cc];
  if (tx == 0) tile[ty + 1][0] = J[rc * cols + max(cc - 1, 0)];
  if (tx == BLOCK_SIZE - 1) tile[ty + 1][BLOCK_SIZE + 1] = J[rc * cols + min(cc + 1, cols - 1)];
  __syncthreads();

  if (row < rows && col < cols) {
    const float q0sqr = stats[2];
    const float Jc = tile[ty + 1][tx + 1];
    const float dN = tile[ty][tx + 1] - Jc;
    const float dS = tile[ty + 2][tx + 1] - Jc;
    const float dW = tile[ty + 1][tx] - Jc;
    const float dE = tile[ty + 1][tx + 2] - Jc;
    const int idx = row * cols + col;
    dN_out[idx] = dN;
    dS_out[idx] = dS;
    dW_out[idx] = dW;
    dE_out[idx] = dE;
    C_out[idx] = srad_coefficient(Jc, dN, dS, dW, dE, q0sqr);
  }
}

__global__ void srad_cuda_2(float *J, const float *dN, const float *dS, const float *dW,
                            const float *dE, const float *C, int rows, int cols, float lambda) {
  __shared__ float c_tile[BLOCK_SIZE + 1][BLOCK_SIZE + 1];  // own tile + south/east halo

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * BLOCK_SIZE + tx;
  const int row = blockIdx.y * BLOCK_SIZE + ty;
  const int rc = min(row, rows - 1);
  const int cc = min(col, cols - 1);

  c_tile[ty][tx] = C[rc * cols + cc];
  if (ty == BLOCK_SIZE - 1) c_tile[BLOCK_SIZE][tx] = C[min(rc + 1, rows - 1) * cols + cc];
  if (tx == BLOCK_SIZE - 1) c_tile[ty][BLOCK_SIZE] = C[rc * cols + min(cc + 1, cols - 1)];
  __syncthreads();

  if (row < rows && col < cols) {
    const int idx = row * cols + col;
    const float cN = c_tile[ty][tx];
    const float cS = c_tile[ty + 1][tx];
    const float cW = c_tile[ty][tx];
    const float cE = c_tile[ty][tx + 1];
    const float D = cN * dN[idx] + cS * dS[idx] + cW * dW[idx] + cE * dE[idx];
    J[idx] = J[idx] + 0.25f * lambda * D;
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
    fprintf(stderr, "srad: invalid value '%s' for %s (expected an integer in [%ld, %ld])\n", s,
            opt, lo, hi);
    exit(2);
  }
  return v;
}

static const char *need_arg(int &i, int argc, char **argv) {
  if (i + 1 >= argc) {
    fprintf(stderr, "srad: option %s needs a value\n", argv[i]);
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
    fprintf(stderr, "srad: cannot write to %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
  }
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: srad [options]\n"
          "  Rodinia-style SRAD on an N x N image.\n"
          "  --size N       image side (default 2048)\n"
          "  --iters N      diffusion iterations (default 20)\n"
          "  --small        small preset: 256 x 256 image, 10 iterations\n"
          "  --out FILE     write the final image (float32) as a CRUNOUT1 record\n"
          "  --help         show this help\n");
}

// Everything one iteration loop needs, for the GPU driver below.
struct SradBuffers {
  float *J, *dN, *dS, *dW, *dE, *C, *partial, *stats;
};

static void srad_gpu(const SradBuffers &b, int rows, int cols, int r1, int c1, int roi_rows,
                     int roi_cols, int niter, float lambda, cudaStream_t stream) {
  const int n = rows * cols;
  const size_t red_smem = 2 * RED_THREADS * sizeof(float);
  dim3 threads(BLOCK_SIZE, BLOCK_SIZE);
  dim3 grid((cols + BLOCK_SIZE - 1) / BLOCK_SIZE, (rows + BLOCK_SIZE - 1) / BLOCK_SIZE);
  const int ew_blocks = (n + EW_THREADS - 1) / EW_THREADS;

  srad_extract<<<ew_blocks, EW_THREADS, 0, stream>>>(b.J, n);
  CHECK_LAUNCH();
  for (int iter = 0; iter < niter; iter++) {
    srad_reduce_partial<<<RED_BLOCKS, RED_THREADS, red_smem, stream>>>(b.J, cols, r1, c1, roi_rows,
                                                                      roi_cols, b.partial);
    CHECK_LAUNCH();
    srad_reduce_final<<<1, RED_THREADS, red_smem, stream>>>(b.partial, RED_BLOCKS,
                                                           (float)roi_rows * (float)roi_cols,
                                                           b.stats);
    CHECK_LAUNCH();
    srad_cuda_1<<<grid, threads, 0, stream>>>(b.J, b.dN, b.dS, b.dW, b.dE, b.C, rows, cols,
                                              b.stats);
    CHECK_LAUNCH();
    srad_cuda_2<<<grid, threads, 0, stream>>>(b.J, b.dN, b.dS, b.dW, b.dE, b.C, rows, cols,
                                              lambda);
    CHECK_LAUNCH();
  }
  srad_compress<<<ew_blocks, EW_THREADS, 0, stream>>>(b.J, n);
  CHECK_LAUNCH();
}

int main(int argc, char **argv) {
  long size = -1, niter = -1;
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
      size = parse_long(a, need_arg(i, argc, argv), 2, 16384);
    } else if (!strcmp(a, "--iters")) {
      niter = parse_long(a, need_arg(i, argc, argv), 1, 100000);
    } else if (!strcmp(a, "--out")) {
      out_path = need_arg(i, argc, argv);
    } else {
      fprintf(stderr, "srad: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (size < 0) size = small ? 256 : 2048;
  if (niter < 0) niter = small ? 10 : 20;

  const int rows = (int)size, cols = (int)size;
  const size_t n = (size_t)rows * cols;
  const float lambda = 0.5f;
  // region of interest: the top-left quarter of the image
  const int r1 = 0, c1 = 0, roi_rows = std::max(1, rows / 2), roi_cols = std::max(1, cols / 2);

  // ---- input: speckled checkerboard image in [0, 255] ----------------------
  std::vector<float> image(n);
  Lcg rng(31337u);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const float base = (((r / 64) + (c / 64)) & 1) ? 160.0f : 80.0f;
      const float speckle = 0.6f + 0.8f * rng.uniform();  // multiplicative noise
      image[(size_t)r * cols + c] = std::min(255.0f, base * speckle);
    }

  // ---- device ---------------------------------------------------------------
  CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  SradBuffers b;
  CUDA_CHECK(cudaMalloc(&b.J, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&b.dN, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&b.dS, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&b.dW, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&b.dE, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&b.C, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&b.partial, sizeof(float) * 2 * RED_BLOCKS));
  CUDA_CHECK(cudaMalloc(&b.stats, sizeof(float) * 4));

  cudaEvent_t evStart, evStop;
  CUDA_CHECK(cudaEventCreate(&evStart));
  CUDA_CHECK(cudaEventCreate(&evStop));

  std::vector<float> times;
  for (int run = 0; run < 6; ++run) {  // warm-up + 5 timed runs
    CUDA_CHECK(cudaMemcpyAsync(b.J, image.data(), sizeof(float) * n, cudaMemcpyHostToDevice,
                               stream));
    CUDA_CHECK(cudaEventRecord(evStart, stream));
    srad_gpu(b, rows, cols, r1, c1, roi_rows, roi_cols, (int)niter, lambda, stream);
    CUDA_CHECK(cudaEventRecord(evStop, stream));
    CUDA_CHECK(cudaEventSynchronize(evStop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evStart, evStop));
    if (run > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());

  std::vector<float> result(n);
  CUDA_CHECK(cudaMemcpy(result.data(), b.J, sizeof(float) * n, cudaMemcpyDeviceToHost));

  // ---- CPU reference (full image) ------------------------------------------
  std::vector<float> J(n), dN(n), dS(n), dW(n), dE(n), C(n);
  for (size_t i = 0; i < n; ++i) J[i] = std::exp(image[i] / 255.0f);
  const double size_R = (double)roi_rows * roi_cols;
  for (long iter = 0; iter < niter; ++iter) {
    double sum = 0.0, sum2 = 0.0;
    for (int r = r1; r < r1 + roi_rows; ++r)
      for (int c = c1; c < c1 + roi_cols; ++c) {
        const double v = J[(size_t)r * cols + c];
        sum += v;
        sum2 += v * v;
      }
    const double meanROI = sum / size_R;
    const double varROI = sum2 / size_R - meanROI * meanROI;
    const float q0sqr = (float)(varROI / (meanROI * meanROI));
    for (int r = 0; r < rows; ++r) {
      const int rn = std::max(r - 1, 0), rs = std::min(r + 1, rows - 1);
      for (int c = 0; c < cols; ++c) {
        const int cw = std::max(c - 1, 0), ce = std::min(c + 1, cols - 1);
        const size_t k = (size_t)r * cols + c;
        const float Jc = J[k];
        dN[k] = J[(size_t)rn * cols + c] - Jc;
        dS[k] = J[(size_t)rs * cols + c] - Jc;
        dW[k] = J[(size_t)r * cols + cw] - Jc;
        dE[k] = J[(size_t)r * cols + ce] - Jc;
        C[k] = srad_coefficient(Jc, dN[k], dS[k], dW[k], dE[k], q0sqr);
      }
    }
    for (int r = 0; r < rows; ++r) {
      const int rs = std::min(r + 1, rows - 1);
      for (int c = 0; c < cols; ++c) {
        const int ce = std::min(c + 1, cols - 1);
        const size_t k = (size_t)r * cols + c;
        const float cN = C[k], cS = C[(size_t)rs * cols + c], cW = C[k], cE = C[(size_t)r * cols + ce];
        const float D = cN * dN[k] + cS * dS[k] + cW * dW[k] + cE * dE[k];
        J[k] = J[k] + 0.25f * lambda * D;
      }
    }
  }
  long bad = 0;
  double max_abs = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double c = std::log(J[i]) * 255.0;
    const double d = std::fabs((double)result[i] - c);
    if (d > max_abs || std::isnan(d)) max_abs = d;
    if (!(d <= 2e-2 + 1e-4 * std::fabs(c))) ++bad;
  }
  const bool valid = (bad == 0);
  printf("srad: image=%dx%d iters=%ld roi=%dx%d max_abs_err=%.3g\n", rows, cols, niter, roi_rows,
         roi_cols, max_abs);
  if (!valid) fprintf(stderr, "srad: %ld pixels differ from the CPU reference\n", bad);

  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "srad: cannot open %s: %s\n", out_path, strerror(errno));
      return 1;
    }
    write_record(f, out_path, 0u, result.data(), (uint64_t)n, sizeof(float));
    if (fclose(f) != 0) {
      fprintf(stderr, "srad: cannot write %s: %s\n", out_path, strerror(errno));
      return 1;
    }
  }

  double checksum = 0.0;
  for (size_t i = 0; i < n; ++i) checksum += result[i];
  printf("RESULT name=srad time_ms=%.4f checksum=%.9g\n", times[times.size() / 2], checksum);
  printf("VALID %s\n", valid ? "yes" : "no");

  CUDA_CHECK(cudaEventDestroy(evStart));
  CUDA_CHECK(cudaEventDestroy(evStop));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(b.J));
  CUDA_CHECK(cudaFree(b.dN));
  CUDA_CHECK(cudaFree(b.dS));
  CUDA_CHECK(cudaFree(b.dW));
  CUDA_CHECK(cudaFree(b.dE));
  CUDA_CHECK(cudaFree(b.C));
  CUDA_CHECK(cudaFree(b.partial));
  CUDA_CHECK(cudaFree(b.stats));
  return valid ? 0 : 1;
}
