// hotspot.cu - Rodinia-style HotSpot 2D thermal simulation.
//
// Transient temperature of a chip grid (grid_rows x grid_cols cells) driven by
// a power map.  Each kernel launch advances `pyramid_height` time steps inside
// a 16x16 shared-memory tile (Rodinia's pyramid / ghost-zone technique); the
// host ping-pongs two temperature buffers in a loop of launches over a 2D
// grid of 2D blocks.
//
// Output: float32 final temperature grid.  No atomics: bitwise deterministic
// between two builds of the same kernel body.

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
#define EXPAND_RATE 2  // add one iteration will extend the pyramid base by 2 per each border
#define IN_RANGE(x, min, max) ((x) >= (min) && (x) <= (max))
#define MIN(a, b) ((a) <= (b) ? (a) : (b))

/* maximum power density possible (say 300W for a 10mm x 10mm chip) */
#define MAX_PD (3.0e6)
/* required precision in degrees */
#define PRECISION 0.001
#define SPEC_HEAT_SI 1.75e6
#define K_SI 100
/* capacitance fitting factor */
#define FACTOR_CHIP 0.5
#define AMB_TEMP 80.0f

/* chip parameters: every cell has the size of a cell of Rodinia's 512x512
   0.016m chip, so the explicit scheme stays stable for any grid size */
static const double t_chip = 0.0005;
static const double cell_size = 0.016 / 512.0;

// ---------------------------------------------------------------------------
// Kernel
// ---------------------------------------------------------------------------
__global__ void calculate_temp(int iteration,      // number of iterations
                               const float *power,  // power input
                               const float *temp_src,  // temperature input
                               float *temp_dst,        // temperature output
                               int grid_cols, int grid_rows,
                               int border_cols, int border_rows,
                               float Cap, float Rx, float Ry, float Rz, float step) {
  __shared__ float temp_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
  __shared__ float power_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
  __shared__ float temp_t[BLOCK_SIZE][BLOCK_SIZE];  // temporary temperature result

  float amb_temp = AMB_TEMP;
  float step_div_Cap;
  float Rx_1, Ry_1, Rz_1;

  int bx = blockIdx.x;
  int by = blockIdx.y;

  int tx = threadIdx.x;
  int ty = threadIdx.y;

  step_div_Cap = step / Cap;

  Rx_1 = 1 / Rx;
  Ry_1 = 1 / Ry;
  Rz_1 = 1 / Rz;

  // each block finally computes the result for a small block after
  // `iteration` steps; the small blocks are non-overlapping and cover the grid
  int small_block_rows = BLOCK_SIZE - iteration * 2;  // EXPAND_RATE
  int small_block_cols = BLOCK_SIZE - iteration * 2;  // EXPAND_RATE

  // boundary of the block according to the boundary of its small block
  int blkY = small_block_rows * by - border_rows;
  int blkX = small_block_cols * bx - border_cols;
  int blkYmax = blkY + BLOCK_SIZE - 1;
  int blkXmax = blkX + BLOCK_SIZE - 1;

  // global coordinates of this thread
  int yidx = blkY + ty;
  int xidx = blkX + tx;

  // load data if it is within the valid input range
  int loadYidx = yidx, loadXidx = xidx;
  int index = grid_cols * loadYidx + loadXidx;

  if (IN_RANGE(loadYidx, 0, grid_rows - 1) && IN_RANGE(loadXidx, 0, grid_cols - 1)) {
    temp_on_cuda[ty][tx] = temp_src[index];
    power_on_cuda[ty][tx] = power[index];
  }
  __syncthreads();

  // effective range within this block that falls within the valid range of
  // the input data; used to rule out computation outside the boundary
  int validYmin = (blkY < 0) ? -blkY : 0;
  int validYmax = (blkYmax > grid_rows - 1) ? BLOCK_SIZE - 1 - (blkYmax - grid_rows + 1)
                                             : BLOCK_SIZE - 1;
  int validXmin = (blkX < 0) ? -blkX : 0;
  int validXmax = (blkXmax > grid_cols - 1) ? BLOCK_SIZE - 1 - (blkXmax - grid_cols + 1)
                                             : BLOCK_SIZE - 1;

  int N = ty - 1;
  int S = ty + 1;
  int W = tx - 1;
  int E = tx + 1;

  N = (N < validYmin) ? validYmin : N;
  S = (S > validYmax) ? validYmax : S;
  W = (W < validXmin) ? validXmin : W;
  E = (E > validXmax) ? validXmax : E;

  bool computed = false;
  for (int i = 0; i < iteration; i++) {
    computed = false;
    if (IN_RANGE(tx, i + 1, BLOCK_SIZE - i - 2) && IN_RANGE(ty, i + 1, BLOCK_SIZE - i - 2) &&
        IN_RANGE(tx, validXmin, validXmax) && IN_RANGE(ty, validYmin, validYmax)) {
      computed = true;
      temp_t[ty][tx] =
          temp_on_cuda[ty][tx] +
          step_div_Cap * (power_on_cuda[ty][tx] +
                          (temp_on_cuda[S][tx] + temp_on_cuda[N][tx] - 2.0f * temp_on_cuda[ty][tx]) * Ry_1 +
                          (temp_on_cuda[ty][E] + temp_on_cuda[ty][W] - 2.0f * temp_on_cuda[ty][tx]) * Rx_1 +
                          (amb_temp - temp_on_cuda[ty][tx]) * Rz_1);
    }
    __syncthreads();
    if (i == iteration - 1) break;  // uniform across the block
    if (computed) temp_on_cuda[ty][tx] = temp_t[ty][tx];
    __syncthreads();
  }

  // update the global memory; after the last iteration only the threads of
  // the small block have `computed` set
  if (computed) {
    temp_dst[index] = temp_t[ty][tx];
  }
}

struct ChipParams {
  float Cap, Rx, Ry, Rz, step;
};

static ChipParams chip_params() {
  const double grid_height = cell_size, grid_width = cell_size;
  ChipParams p;
  p.Cap = (float)(FACTOR_CHIP * SPEC_HEAT_SI * t_chip * grid_width * grid_height);
  p.Rx = (float)(grid_width / (2.0 * K_SI * t_chip * grid_height));
  p.Ry = (float)(grid_height / (2.0 * K_SI * t_chip * grid_width));
  p.Rz = (float)(t_chip / (K_SI * grid_height * grid_width));
  const double max_slope = MAX_PD / (FACTOR_CHIP * t_chip * SPEC_HEAT_SI);
  p.step = (float)(PRECISION / max_slope);
  return p;
}

// Runs total_iterations steps; returns the index of the buffer holding the
// final temperatures.
static int compute_tran_temp(const float *MatrixPower, float *MatrixTemp[2], int col, int row,
                             int total_iterations, int num_iterations, int blockCols,
                             int blockRows, int borderCols, int borderRows) {
  dim3 dimBlock(BLOCK_SIZE, BLOCK_SIZE);
  dim3 dimGrid(blockCols, blockRows);
  const ChipParams p = chip_params();

  int src = 1, dst = 0;
  for (int t = 0; t < total_iterations; t += num_iterations) {
    int temp = src;
    src = dst;
    dst = temp;
    calculate_temp<<<dimGrid, dimBlock>>>(MIN(num_iterations, total_iterations - t), MatrixPower,
                                          MatrixTemp[src], MatrixTemp[dst], col, row, borderCols,
                                          borderRows, p.Cap, p.Rx, p.Ry, p.Rz, p.step);
    CHECK_LAUNCH();
  }
  return dst;
}

// ---------------------------------------------------------------------------
// CPU reference on a window.  Computes `iters` steps on the sub-grid that
// extends the window by `iters` cells on each side (clipped to the chip).
// Clamping at a clipped edge that is not a chip edge is wrong, but the error
// moves inwards by one cell per step, so the window itself stays exact.
// ---------------------------------------------------------------------------
static void cpu_window(const std::vector<float> &temp0, const std::vector<float> &power, int rows,
                       int cols, int iters, int y0, int x0, int h, int w,
                       std::vector<float> &out) {
  const ChipParams p = chip_params();
  const float step_div_Cap = p.step / p.Cap;
  const float Rx_1 = 1 / p.Rx, Ry_1 = 1 / p.Ry, Rz_1 = 1 / p.Rz;
  const int sy0 = std::max(0, y0 - iters), sy1 = std::min(rows, y0 + h + iters);
  const int sx0 = std::max(0, x0 - iters), sx1 = std::min(cols, x0 + w + iters);
  const int sh = sy1 - sy0, sw = sx1 - sx0;
  std::vector<float> cur((size_t)sh * sw), nxt((size_t)sh * sw), pw((size_t)sh * sw);
  for (int y = 0; y < sh; ++y)
    for (int x = 0; x < sw; ++x) {
      cur[(size_t)y * sw + x] = temp0[(size_t)(sy0 + y) * cols + sx0 + x];
      pw[(size_t)y * sw + x] = power[(size_t)(sy0 + y) * cols + sx0 + x];
    }
  for (int it = 0; it < iters; ++it) {
    for (int y = 0; y < sh; ++y) {
      const int yn = std::max(y - 1, 0), ys = std::min(y + 1, sh - 1);
      for (int x = 0; x < sw; ++x) {
        const int xw = std::max(x - 1, 0), xe = std::min(x + 1, sw - 1);
        const float c = cur[(size_t)y * sw + x];
        nxt[(size_t)y * sw + x] =
            c + step_div_Cap * (pw[(size_t)y * sw + x] +
                                (cur[(size_t)ys * sw + x] + cur[(size_t)yn * sw + x] - 2.0f * c) * Ry_1 +
                                (cur[(size_t)y * sw + xe] + cur[(size_t)y * sw + xw] - 2.0f * c) * Rx_1 +
                                (AMB_TEMP - c) * Rz_1);
      }
    }
    cur.swap(nxt);
  }
  out.resize((size_t)h * w);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      out[(size_t)y * w + x] = cur[(size_t)(y0 - sy0 + y) * sw + (x0 - sx0 + x)];
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
    fprintf(stderr, "hotspot: invalid value '%s' for %s (expected an integer in [%ld, %ld])\n", s,
            opt, lo, hi);
    exit(2);
  }
  return v;
}

static const char *need_arg(int &i, int argc, char **argv) {
  if (i + 1 >= argc) {
    fprintf(stderr, "hotspot: option %s needs a value\n", argv[i]);
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
    fprintf(stderr, "hotspot: cannot write to %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
  }
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: hotspot [options]\n"
          "  Rodinia-style HotSpot thermal stencil on an N x N grid.\n"
          "  --size N       grid side (default 2048)\n"
          "  --iters N      number of simulation steps (default 100)\n"
          "  --pyramid N    steps per kernel launch, 1..7 (default 2)\n"
          "  --small        small preset: 256 x 256 grid, 20 steps\n"
          "  --out FILE     write the final temperatures (float32) as a CRUNOUT1 record\n"
          "  --help         show this help\n");
}

int main(int argc, char **argv) {
  long size = -1, iters = -1, pyramid_height = 2;
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
      size = parse_long(a, need_arg(i, argc, argv), 1, 16384);
    } else if (!strcmp(a, "--iters")) {
      iters = parse_long(a, need_arg(i, argc, argv), 1, 100000);
    } else if (!strcmp(a, "--pyramid")) {
      pyramid_height = parse_long(a, need_arg(i, argc, argv), 1, (BLOCK_SIZE - 1) / EXPAND_RATE);
    } else if (!strcmp(a, "--out")) {
      out_path = need_arg(i, argc, argv);
    } else {
      fprintf(stderr, "hotspot: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (size < 0) size = small ? 256 : 2048;
  if (iters < 0) iters = small ? 20 : 100;
  const int grid_rows = (int)size, grid_cols = (int)size;
  const size_t n = (size_t)grid_rows * grid_cols;

  // ---- input: ambient-ish temperatures, power map with a few hot spots ----
  std::vector<float> temp0(n), power(n);
  Lcg rng(2024u);
  for (size_t i = 0; i < n; ++i) {
    temp0[i] = 323.0f + 20.0f * rng.uniform();
    float p = 0.5e-3f * rng.uniform();
    if (rng.uniform() < 0.01f) p += 4.0e-3f;
    power[i] = p;
  }

  // ---- device setup -------------------------------------------------------
  CUDA_CHECK(cudaSetDevice(0));
  const int borderCols = (int)pyramid_height * EXPAND_RATE / 2;
  const int borderRows = borderCols;
  const int smallBlockCol = BLOCK_SIZE - (int)pyramid_height * EXPAND_RATE;
  const int smallBlockRow = smallBlockCol;
  const int blockCols = grid_cols / smallBlockCol + ((grid_cols % smallBlockCol == 0) ? 0 : 1);
  const int blockRows = grid_rows / smallBlockRow + ((grid_rows % smallBlockRow == 0) ? 0 : 1);

  float *MatrixTemp[2] = {nullptr, nullptr};
  float *MatrixPower = nullptr;
  CUDA_CHECK(cudaMalloc(&MatrixTemp[0], sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&MatrixTemp[1], sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&MatrixPower, sizeof(float) * n));
  CUDA_CHECK(cudaMemcpy(MatrixPower, power.data(), sizeof(float) * n, cudaMemcpyHostToDevice));

  cudaEvent_t evStart, evStop;
  CUDA_CHECK(cudaEventCreate(&evStart));
  CUDA_CHECK(cudaEventCreate(&evStop));

  std::vector<float> times;
  int ret = 0;
  for (int run = 0; run < 6; ++run) {  // warm-up + 5 timed runs
    CUDA_CHECK(cudaMemcpy(MatrixTemp[0], temp0.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(MatrixTemp[1], 0, sizeof(float) * n));
    CUDA_CHECK(cudaEventRecord(evStart));
    ret = compute_tran_temp(MatrixPower, MatrixTemp, grid_cols, grid_rows, (int)iters,
                            (int)pyramid_height, blockCols, blockRows, borderCols, borderRows);
    CUDA_CHECK(cudaEventRecord(evStop));
    CUDA_CHECK(cudaEventSynchronize(evStop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evStart, evStop));
    if (run > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());

  std::vector<float> result(n);
  CUDA_CHECK(cudaMemcpy(result.data(), MatrixTemp[ret], sizeof(float) * n, cudaMemcpyDeviceToHost));

  // ---- validation: CPU reference on windows (the whole grid when small) ---
  struct Win { int y0, x0, h, w; };
  std::vector<Win> wins;
  if ((double)n * iters <= 2.0e7) {
    wins.push_back({0, 0, grid_rows, grid_cols});
  } else {
    const int ws = std::min(32, grid_rows);
    wins.push_back({0, 0, ws, ws});
    wins.push_back({(grid_rows - ws) / 2, (grid_cols - ws) / 2, ws, ws});
    wins.push_back({grid_rows - ws, grid_cols - ws, ws, ws});
    wins.push_back({0, grid_cols - ws, ws, ws});
  }
  double max_abs = 0.0;
  long bad = 0;
  std::vector<float> ref;
  for (const Win &wi : wins) {
    cpu_window(temp0, power, grid_rows, grid_cols, (int)iters, wi.y0, wi.x0, wi.h, wi.w, ref);
    for (int y = 0; y < wi.h; ++y)
      for (int x = 0; x < wi.w; ++x) {
        const double g = result[(size_t)(wi.y0 + y) * grid_cols + wi.x0 + x];
        const double c = ref[(size_t)y * wi.w + x];
        const double d = std::fabs(g - c);
        if (!(d <= 1e-3 + 1e-5 * std::fabs(c))) ++bad;
        if (d > max_abs || std::isnan(d)) max_abs = d;
      }
  }
  const bool valid = (bad == 0);
  printf("hotspot: grid=%dx%d iters=%ld pyramid=%ld launches=%ld max_abs_err=%.3g\n", grid_rows,
         grid_cols, iters, pyramid_height, (iters + pyramid_height - 1) / pyramid_height, max_abs);
  if (!valid) fprintf(stderr, "hotspot: %ld cells differ from the CPU reference\n", bad);

  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "hotspot: cannot open %s: %s\n", out_path, strerror(errno));
      return 1;
    }
    write_record(f, out_path, 0u, result.data(), (uint64_t)n, sizeof(float));
    if (fclose(f) != 0) {
      fprintf(stderr, "hotspot: cannot write %s: %s\n", out_path, strerror(errno));
      return 1;
    }
  }

  double checksum = 0.0;
  for (size_t i = 0; i < n; ++i) checksum += result[i];
  printf("RESULT name=hotspot time_ms=%.4f checksum=%.9g\n", times[times.size() / 2], checksum);
  printf("VALID %s\n", valid ? "yes" : "no");

  CUDA_CHECK(cudaEventDestroy(evStart));
  CUDA_CHECK(cudaEventDestroy(evStop));
  CUDA_CHECK(cudaFree(MatrixTemp[0]));
  CUDA_CHECK(cudaFree(MatrixTemp[1]));
  CUDA_CHECK(cudaFree(MatrixPower));
  return valid ? 0 : 1;
}
