// convsep.cu - CUDA SDK-style convolutionSeparable.
//
// A 17-tap separable filter (coefficients in __constant__ memory, uploaded
// with cudaMemcpyToSymbol) is applied to an image in two passes:
//   convolutionRowsKernel    16x4 blocks, 2D grid, shared tile with a
//                            16-column apron on each side;
//   convolutionColumnsKernel 16x8 blocks, 2D grid, shared tile with a 8-row
//                            apron above and below.
// The row pass is launched from a plain host function, the column pass
// through the LAUNCH(...) macro.  One timed run applies the filter `--iters`
// times (like the SDK's timing loop); the result is the same every time.
//
// Inputs and coefficients are small integers (as in the SDK sample), so every
// partial sum is an exactly representable integer: the output is exact and
// bitwise deterministic.
//
// Output (float32 records): final image (rows then columns), intermediate
// row-filtered image.

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

// Launch a kernel on the default stream and check the launch.
#define LAUNCH(kernel, grid, block, ...)     \
  do {                                       \
    kernel<<<grid, block>>>(__VA_ARGS__);    \
    CUDA_CHECK(cudaGetLastError());          \
  } while (0)

#define KERNEL_RADIUS 8
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)

__constant__ float c_Kernel[KERNEL_LENGTH];

static void setConvolutionKernel(const float *h_Kernel) {
  CUDA_CHECK(cudaMemcpyToSymbol(c_Kernel, h_Kernel, KERNEL_LENGTH * sizeof(float)));
}

////////////////////////////////////////////////////////////////////////////////
// Row convolution filter
////////////////////////////////////////////////////////////////////////////////
#define ROWS_BLOCKDIM_X 16
#define ROWS_BLOCKDIM_Y 4
#define ROWS_RESULT_STEPS 8
#define ROWS_HALO_STEPS 1

__global__ void convolutionRowsKernel(float *d_Dst, const float *d_Src, int imageW, int imageH,
                                      int pitch) {
  __shared__ float s_Data[ROWS_BLOCKDIM_Y][(ROWS_RESULT_STEPS + 2 * ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X];

  // Offset to the left halo edge
  const int baseX = (blockIdx.x * ROWS_RESULT_STEPS - ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X + threadIdx.x;
  const int baseY = blockIdx.y * ROWS_BLOCKDIM_Y + threadIdx.y;

  d_Src += baseY * pitch + baseX;
  d_Dst += baseY * pitch + baseX;

  // Load main data
#pragma unroll
  for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++) {
    s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] = d_Src[i * ROWS_BLOCKDIM_X];
  }

  // Load left halo
#pragma unroll
  for (int i = 0; i < ROWS_HALO_STEPS; i++) {
    s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] =
        (baseX >= -i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0;
  }

  // Load right halo
#pragma unroll
  for (int i = ROWS_HALO_STEPS + ROWS_RESULT_STEPS;
       i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS + ROWS_HALO_STEPS; i++) {
    s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] =
        (imageW - baseX > i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0;
  }

  // Compute and store results
  __syncthreads();
#pragma unroll
  for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++) {
    float sum = 0;

#pragma unroll
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++) {
      sum += c_Kernel[KERNEL_RADIUS - j] * s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X + j];
    }

    d_Dst[i * ROWS_BLOCKDIM_X] = sum;
  }
  (void)imageH;
}

static void convolutionRowsGPU(float *d_Dst, const float *d_Src, int imageW, int imageH) {
  dim3 blocks(imageW / (ROWS_RESULT_STEPS * ROWS_BLOCKDIM_X), imageH / ROWS_BLOCKDIM_Y);
  dim3 threads(ROWS_BLOCKDIM_X, ROWS_BLOCKDIM_Y);

  convolutionRowsKernel<<<blocks, threads>>>(d_Dst, d_Src, imageW, imageH, imageW);
  CHECK_LAUNCH();
}

////////////////////////////////////////////////////////////////////////////////
// Column convolution filter
////////////////////////////////////////////////////////////////////////////////
#define COLUMNS_BLOCKDIM_X 16
#define COLUMNS_BLOCKDIM_Y 8
#define COLUMNS_RESULT_STEPS 8
#define COLUMNS_HALO_STEPS 1

__global__ void convolutionColumnsKernel(float *d_Dst, const float *d_Src, int imageW, int imageH,
                                         int pitch) {
  __shared__ float s_Data[COLUMNS_BLOCKDIM_X][(COLUMNS_RESULT_STEPS + 2 * COLUMNS_HALO_STEPS) * COLUMNS_BLOCKDIM_Y + 1];

  // Offset to the upper halo edge
  const int baseX = blockIdx.x * COLUMNS_BLOCKDIM_X + threadIdx.x;
  const int baseY = (blockIdx.y * COLUMNS_RESULT_STEPS - COLUMNS_HALO_STEPS) * COLUMNS_BLOCKDIM_Y + threadIdx.y;
  const float *src = d_Src + baseY * pitch + baseX;
  float *dst = d_Dst + baseY * pitch + baseX;

  // Main data
#pragma unroll
  for (int i = COLUMNS_HALO_STEPS; i < COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS; i++) {
    s_Data[threadIdx.x][threadIdx.y + i * COLUMNS_BLOCKDIM_Y] = src[i * COLUMNS_BLOCKDIM_Y * pitch];
  }

  // Upper halo
#pragma unroll
  for (int i = 0; i < COLUMNS_HALO_STEPS; i++) {
    s_Data[threadIdx.x][threadIdx.y + i * COLUMNS_BLOCKDIM_Y] =
        (baseY >= -i * COLUMNS_BLOCKDIM_Y) ? src[i * COLUMNS_BLOCKDIM_Y * pitch] : 0;
  }

  // Lower halo
#pragma unroll
  for (int i = COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS;
       i < COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS + COLUMNS_HALO_STEPS; i++) {
    s_Data[threadIdx.x][threadIdx.y + i * COLUMNS_BLOCKDIM_Y] =
        (imageH - baseY > i * COLUMNS_BLOCKDIM_Y) ? src[i * COLUMNS_BLOCKDIM_Y * pitch] : 0;
  }

  // Compute and store results
  __syncthreads();
#pragma unroll
  for (int i = COLUMNS_HALO_STEPS; i < COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS; i++) {
    float sum = 0;
#pragma unroll
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++) {
      sum += c_Kernel[KERNEL_RADIUS - j] * s_Data[threadIdx.x][threadIdx.y + i * COLUMNS_BLOCKDIM_Y + j];
    }

    dst[i * COLUMNS_BLOCKDIM_Y * pitch] = sum;
  }
  (void)imageW;
}

static void convolutionColumnsGPU(float *d_Dst, const float *d_Src, int imageW, int imageH) {
  dim3 blocks(imageW / COLUMNS_BLOCKDIM_X, imageH / (COLUMNS_RESULT_STEPS * COLUMNS_BLOCKDIM_Y));
  dim3 threads(COLUMNS_BLOCKDIM_X, COLUMNS_BLOCKDIM_Y);

  LAUNCH(convolutionColumnsKernel, blocks, threads, d_Dst, d_Src, imageW, imageH, imageW);
}

// ---------------------------------------------------------------------------
// CPU reference at one pixel (zero padding, same tap order as the GPU)
// ---------------------------------------------------------------------------
static double rowAt(const std::vector<float> &img, const float *k, int W, int H, int x, int y) {
  if (y < 0 || y >= H) return 0.0;
  double sum = 0.0;
  for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++) {
    const int d = x + j;
    if (d >= 0 && d < W) sum += (double)k[KERNEL_RADIUS - j] * img[(size_t)y * W + d];
  }
  return sum;
}

static double convAt(const std::vector<float> &img, const float *k, int W, int H, int x, int y) {
  double sum = 0.0;
  for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)
    sum += (double)k[KERNEL_RADIUS - j] * rowAt(img, k, W, H, x, y + j);
  return sum;
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
  uint32_t below(uint32_t n) { return (next() >> 8) % n; }
};

static long parse_long(const char *opt, const char *s, long lo, long hi) {
  char *end = nullptr;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "convsep: invalid value '%s' for %s (expected an integer in [%ld, %ld])\n", s,
            opt, lo, hi);
    exit(2);
  }
  return v;
}

static const char *need_arg(int &i, int argc, char **argv) {
  if (i + 1 >= argc) {
    fprintf(stderr, "convsep: option %s needs a value\n", argv[i]);
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
    fprintf(stderr, "convsep: cannot write to %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
  }
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: convsep [options]\n"
          "  CUDA SDK-style separable convolution (%d taps) of an N x N image.\n"
          "  --size N       image side, a multiple of 128 (default 4096)\n"
          "  --iters N      filter applications per timed run (default 16)\n"
          "  --small        small preset: 512 x 512 image, 2 applications\n"
          "  --out FILE     write the output and the row-pass images (float32) as CRUNOUT1 records\n"
          "  --help         show this help\n",
          KERNEL_LENGTH);
}

int main(int argc, char **argv) {
  long size = -1, iters = -1;
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
      size = parse_long(a, need_arg(i, argc, argv), 128, 16384);
    } else if (!strcmp(a, "--iters")) {
      iters = parse_long(a, need_arg(i, argc, argv), 1, 10000);
    } else if (!strcmp(a, "--out")) {
      out_path = need_arg(i, argc, argv);
    } else {
      fprintf(stderr, "convsep: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (size < 0) size = small ? 512 : 4096;
  if (iters < 0) iters = small ? 2 : 16;
  // rows pass: W % (8*16) == 0, H % 4 == 0; columns pass: W % 16 == 0, H % (8*8) == 0
  if (size % (ROWS_RESULT_STEPS * ROWS_BLOCKDIM_X) != 0 ||
      size % (COLUMNS_RESULT_STEPS * COLUMNS_BLOCKDIM_Y) != 0) {
    fprintf(stderr, "convsep: --size must be a multiple of 128 (got %ld)\n", size);
    return 2;
  }
  const int imageW = (int)size, imageH = (int)size;
  const size_t n = (size_t)imageW * imageH;

  // ---- input (integers 0..15 as in the SDK sample) --------------------------
  float h_Kernel[KERNEL_LENGTH];
  std::vector<float> h_Input(n);
  Lcg rng(1u);
  for (int i = 0; i < KERNEL_LENGTH; i++) h_Kernel[i] = (float)rng.below(16);
  for (size_t i = 0; i < n; i++) h_Input[i] = (float)rng.below(16);

  // ---- device ---------------------------------------------------------------
  CUDA_CHECK(cudaSetDevice(0));
  float *d_Input, *d_Output, *d_Buffer;
  CUDA_CHECK(cudaMalloc(&d_Input, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_Output, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_Buffer, n * sizeof(float)));
  setConvolutionKernel(h_Kernel);
  CUDA_CHECK(cudaMemcpy(d_Input, h_Input.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  cudaEvent_t evStart, evStop;
  CUDA_CHECK(cudaEventCreate(&evStart));
  CUDA_CHECK(cudaEventCreate(&evStop));

  std::vector<float> times;
  for (int run = 0; run < 6; ++run) {  // warm-up + 5 timed runs
    CUDA_CHECK(cudaMemset(d_Buffer, 0, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(d_Output, 0, n * sizeof(float)));
    CUDA_CHECK(cudaEventRecord(evStart));
    for (long it = 0; it < iters; it++) {
      convolutionRowsGPU(d_Buffer, d_Input, imageW, imageH);
      convolutionColumnsGPU(d_Output, d_Buffer, imageW, imageH);
    }
    CUDA_CHECK(cudaEventRecord(evStop));
    CUDA_CHECK(cudaEventSynchronize(evStop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evStart, evStop));
    if (run > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());

  std::vector<float> h_Output(n), h_Buffer(n);
  CUDA_CHECK(cudaMemcpy(h_Output.data(), d_Output, n * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_Buffer.data(), d_Buffer, n * sizeof(float), cudaMemcpyDeviceToHost));

  // ---- validation: every border pixel plus sampled interior pixels ---------
  // (all values are integers below 2^24, so the comparison is exact)
  long bad = 0, checked = 0;
  double max_abs = 0.0;
  auto check_px = [&](int x, int y) {
    const double r = rowAt(h_Input, h_Kernel, imageW, imageH, x, y);
    const double c = convAt(h_Input, h_Kernel, imageW, imageH, x, y);
    const size_t k = (size_t)y * imageW + x;
    const double d = std::max(std::fabs(r - h_Buffer[k]), std::fabs(c - h_Output[k]));
    if (d > max_abs || std::isnan(d)) max_abs = d;
    if (!(d == 0.0)) ++bad;
    ++checked;
  };
  for (int x = 0; x < imageW; ++x) {
    check_px(x, 0);
    check_px(x, imageH - 1);
  }
  for (int y = 1; y < imageH - 1; ++y) {
    check_px(0, y);
    check_px(imageW - 1, y);
  }
  Lcg prng(99u);
  for (int s = 0; s < 50000; ++s) check_px((int)prng.below(imageW), (int)prng.below(imageH));
  const bool valid = (bad == 0);
  printf("convsep: image=%dx%d taps=%d passes_per_run=%ld checked_pixels=%ld max_abs_err=%.3g\n",
         imageW, imageH, KERNEL_LENGTH, iters, checked, max_abs);
  if (!valid) fprintf(stderr, "convsep: %ld pixels differ from the CPU reference\n", bad);

  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "convsep: cannot open %s: %s\n", out_path, strerror(errno));
      return 1;
    }
    write_record(f, out_path, 0u, h_Output.data(), (uint64_t)n, sizeof(float));
    write_record(f, out_path, 0u, h_Buffer.data(), (uint64_t)n, sizeof(float));
    if (fclose(f) != 0) {
      fprintf(stderr, "convsep: cannot write %s: %s\n", out_path, strerror(errno));
      return 1;
    }
  }

  double checksum = 0.0;
  for (size_t i = 0; i < n; ++i) checksum += h_Output[i];
  printf("RESULT name=convsep time_ms=%.4f checksum=%.9g\n", times[times.size() / 2], checksum);
  printf("VALID %s\n", valid ? "yes" : "no");

  CUDA_CHECK(cudaEventDestroy(evStart));
  CUDA_CHECK(cudaEventDestroy(evStop));
  CUDA_CHECK(cudaFree(d_Input));
  CUDA_CHECK(cudaFree(d_Output));
  CUDA_CHECK(cudaFree(d_Buffer));
  return valid ? 0 : 1;
}
