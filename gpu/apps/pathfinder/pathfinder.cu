// pathfinder.cu - Rodinia-style PathFinder (dynamic programming over rows).
//
// A grid of `rows` x `cols` integer weights is walked from the top row to the
// bottom row; from column c a step may go to c-1, c or c+1 of the next row.
// For every bottom-row column the program computes the minimum accumulated
// weight.  The GPU version uses Rodinia's "pyramid" technique: each kernel
// launch advances `pyramid_height` rows at once inside shared memory, with a
// halo of `pyramid_height` columns on each side of every block, so the host
// issues ceil((rows-1)/pyramid_height) launches in a loop.
//
// Output: int32 result row (cols elements).  Bitwise deterministic.

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
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

#define BLOCK_SIZE 256
#define HALO 1
#define IN_RANGE(x, min, max) ((x) >= (min) && (x) <= (max))
#define MIN(a, b) ((a) <= (b) ? (a) : (b))

// ---------------------------------------------------------------------------
// Kernel
// ---------------------------------------------------------------------------
__global__ void dynproc_kernel(int iteration, const int *gpuWall, const int *gpuSrc,
                               int *gpuResults, int cols, int rows, int startStep,
                               int border) {
  __shared__ int prev[BLOCK_SIZE];
  __shared__ int result[BLOCK_SIZE];

  int bx = blockIdx.x;
  int tx = threadIdx.x;

  // each block finally computes the result for a small block after
  // `iteration` rows; the small blocks are non-overlapping and cover all
  // the columns
  int small_block_cols = BLOCK_SIZE - iteration * HALO * 2;

  // boundary of the block according to the boundary of its small block
  int blkX = small_block_cols * bx - border;
  int blkXmax = blkX + BLOCK_SIZE - 1;

  // global column of this thread
  int xidx = blkX + tx;

  // effective range within this block that falls within the valid columns
  int validXmin = (blkX < 0) ? -blkX : 0;
  int validXmax = (blkXmax > cols - 1) ? BLOCK_SIZE - 1 - (blkXmax - cols + 1) : BLOCK_SIZE - 1;

  int W = tx - 1;
  int E = tx + 1;
  W = (W < validXmin) ? validXmin : W;
  E = (E > validXmax) ? validXmax : E;

  bool isValid = IN_RANGE(tx, validXmin, validXmax);

  if (IN_RANGE(xidx, 0, cols - 1)) {
    prev[tx] = gpuSrc[xidx];
  }
  __syncthreads();

  bool computed = false;
  for (int i = 0; i < iteration; i++) {
    computed = false;
    if (IN_RANGE(tx, i + 1, BLOCK_SIZE - i - 2) && isValid) {
      computed = true;
      int left = prev[W];
      int up = prev[tx];
      int right = prev[E];
      int shortest = MIN(left, up);
      shortest = MIN(shortest, right);
      int index = cols * (startStep + i) + xidx;
      result[tx] = shortest + gpuWall[index];
    }
    __syncthreads();
    if (i == iteration - 1) break;  // uniform across the block
    if (computed) prev[tx] = result[tx];
    __syncthreads();
  }

  // after the last row only the threads of the small block are `computed`
  if (computed) {
    gpuResults[xidx] = result[tx];
  }
  (void)rows;
}

// Host-side driver: one launch per `pyramid_height` rows.  Returns the index
// of the result buffer that holds the final row.
static int calc_path(const int *gpuWall, int *gpuResult[2], int rows, int cols,
                     int pyramid_height, int blockCols, int borderCols) {
  dim3 dimBlock(BLOCK_SIZE);
  dim3 dimGrid(blockCols);

  int src = 1, dst = 0;
  for (int t = 0; t < rows - 1; t += pyramid_height) {
    int temp = src;
    src = dst;
    dst = temp;
    dynproc_kernel<<<dimGrid, dimBlock>>>(MIN(pyramid_height, rows - t - 1), gpuWall,
                                          gpuResult[src], gpuResult[dst], cols, rows, t,
                                          borderCols);
    CHECK_LAUNCH();
  }
  return dst;
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
    fprintf(stderr, "pathfinder: invalid value '%s' for %s (expected an integer in [%ld, %ld])\n",
            s, opt, lo, hi);
    exit(2);
  }
  return v;
}

static const char *need_arg(int &i, int argc, char **argv) {
  if (i + 1 >= argc) {
    fprintf(stderr, "pathfinder: option %s needs a value\n", argv[i]);
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
    fprintf(stderr, "pathfinder: cannot write to %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
  }
}

static uint64_t fnv1a64(const void *data, size_t bytes) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: pathfinder [options]\n"
          "  Rodinia-style PathFinder: min-cost path through a rows x cols grid.\n"
          "  --size N       number of columns (default 100000)\n"
          "  --rows N       number of rows (default 2000)\n"
          "  --pyramid N    rows per kernel launch (pyramid height, default 20)\n"
          "  --small        small preset: 10000 columns, 100 rows\n"
          "  --out FILE     write the result row (int32) as a CRUNOUT1 record\n"
          "  --help         show this help\n");
}

int main(int argc, char **argv) {
  long cols = -1, rows = -1, pyramid_height = 20;
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
      cols = parse_long(a, need_arg(i, argc, argv), 1, 1L << 26);
    } else if (!strcmp(a, "--rows")) {
      rows = parse_long(a, need_arg(i, argc, argv), 1, 1L << 20);
    } else if (!strcmp(a, "--pyramid")) {
      pyramid_height = parse_long(a, need_arg(i, argc, argv), 1, BLOCK_SIZE / (2 * HALO) - 1);
    } else if (!strcmp(a, "--out")) {
      out_path = need_arg(i, argc, argv);
    } else {
      fprintf(stderr, "pathfinder: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (cols < 0) cols = small ? 10000 : 100000;
  if (rows < 0) rows = small ? 100 : 2000;
  if ((double)rows * (double)cols > 1.5e9) {
    fprintf(stderr, "pathfinder: grid of %ld x %ld is too large\n", rows, cols);
    return 2;
  }

  // ---- input --------------------------------------------------------------
  const size_t total = (size_t)rows * (size_t)cols;
  std::vector<int> wall(total);
  Lcg rng(9u);
  for (size_t i = 0; i < total; ++i) wall[i] = (int)rng.below(10);

  // ---- device setup -------------------------------------------------------
  CUDA_CHECK(cudaSetDevice(0));
  const int borderCols = (int)pyramid_height * HALO;
  const int smallBlockCol = BLOCK_SIZE - (int)pyramid_height * HALO * 2;
  const int blockCols = (int)(cols / smallBlockCol + ((cols % smallBlockCol == 0) ? 0 : 1));

  int *gpuWall = nullptr;
  int *gpuResult[2] = {nullptr, nullptr};
  CUDA_CHECK(cudaMalloc(&gpuResult[0], sizeof(int) * cols));
  CUDA_CHECK(cudaMalloc(&gpuResult[1], sizeof(int) * cols));
  CUDA_CHECK(cudaMalloc(&gpuWall, sizeof(int) * (total - cols + 1)));
  if (rows > 1)
    CUDA_CHECK(cudaMemcpy(gpuWall, wall.data() + cols, sizeof(int) * (total - cols),
                          cudaMemcpyHostToDevice));

  cudaEvent_t evStart, evStop;
  CUDA_CHECK(cudaEventCreate(&evStart));
  CUDA_CHECK(cudaEventCreate(&evStop));

  // warm-up + 5 timed runs; each run restarts from row 0
  std::vector<float> times;
  int final_ret = 0;
  for (int run = 0; run < 6; ++run) {
    CUDA_CHECK(cudaMemcpy(gpuResult[0], wall.data(), sizeof(int) * cols, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(gpuResult[1], 0, sizeof(int) * cols));
    CUDA_CHECK(cudaEventRecord(evStart));
    final_ret = calc_path(gpuWall, gpuResult, (int)rows, (int)cols, (int)pyramid_height,
                          blockCols, borderCols);
    CUDA_CHECK(cudaEventRecord(evStop));
    CUDA_CHECK(cudaEventSynchronize(evStop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evStart, evStop));
    if (run > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());

  std::vector<int> result(cols);
  CUDA_CHECK(cudaMemcpy(result.data(), gpuResult[final_ret], sizeof(int) * cols,
                        cudaMemcpyDeviceToHost));

  // ---- CPU reference (full) ----------------------------------------------
  std::vector<int> cur(wall.begin(), wall.begin() + cols), nxt(cols);
  for (long r = 1; r < rows; ++r) {
    const int *w = wall.data() + (size_t)r * cols;
    for (long c = 0; c < cols; ++c) {
      int m = cur[c];
      if (c > 0) m = std::min(m, cur[c - 1]);
      if (c < cols - 1) m = std::min(m, cur[c + 1]);
      nxt[c] = m + w[c];
    }
    cur.swap(nxt);
  }
  long bad = 0, first_bad = -1;
  for (long c = 0; c < cols; ++c) {
    if (cur[c] != result[c]) {
      if (first_bad < 0) first_bad = c;
      ++bad;
    }
  }
  const bool valid = (bad == 0);
  if (!valid)
    fprintf(stderr, "pathfinder: %ld mismatches, first at column %ld (gpu %d, cpu %d)\n", bad,
            first_bad, result[first_bad], cur[first_bad]);

  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "pathfinder: cannot open %s: %s\n", out_path, strerror(errno));
      return 1;
    }
    write_record(f, out_path, 1u, result.data(), (uint64_t)cols, sizeof(int));
    if (fclose(f) != 0) {
      fprintf(stderr, "pathfinder: cannot write %s: %s\n", out_path, strerror(errno));
      return 1;
    }
  }

  printf("pathfinder: cols=%ld rows=%ld pyramid=%ld launches=%ld\n", cols, rows, pyramid_height,
         rows > 1 ? (rows - 1 + pyramid_height - 1) / pyramid_height : 0L);
  printf("RESULT name=pathfinder time_ms=%.4f checksum=0x%016llx\n", times[times.size() / 2],
         (unsigned long long)fnv1a64(result.data(), sizeof(int) * cols));
  printf("VALID %s\n", valid ? "yes" : "no");

  CUDA_CHECK(cudaEventDestroy(evStart));
  CUDA_CHECK(cudaEventDestroy(evStop));
  CUDA_CHECK(cudaFree(gpuWall));
  CUDA_CHECK(cudaFree(gpuResult[0]));
  CUDA_CHECK(cudaFree(gpuResult[1]));
  return valid ? 0 : 1;
}
