// backprop.cu - Rodinia-style back-propagation (one training step of a
// 3-layer perceptron: `in` inputs, 16 hidden units, 1 output unit).
//
// Kernels (all launched with <<<grid, block>>> on the default stream):
//   bpnn_layerforward_CUDA   2D grid of 16x16 blocks; each block multiplies a
//                            16x16 slice of the input->hidden weights with 16
//                            inputs and reduces the columns in shared memory
//                            (tree reduction) -> per-block partial sums.
//   bpnn_hidden_reduce       one block per hidden unit: sums the partial sums
//                            in a fixed order and applies the sigmoid.
//   bpnn_output_error        one small block: output layer, output delta,
//                            hidden deltas, hidden->output weight update.
//   bpnn_adjust_weights_cuda 2D grid of 16x16 blocks: input->hidden weight
//                            update with momentum.
// Rodinia does the middle two steps on the CPU; here they stay on the GPU so
// that one timed run is four launches with no host round trip.
//
// Output (float32 records): input->hidden weights, hidden units, hidden
// deltas, hidden->output weights.  No atomics: bitwise deterministic.

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
#define HEIGHT 16
#define WIDTH 16
#define LOG2_HEIGHT 4
#define HID 16            // hidden units (Rodinia uses 16)
#define OUT 1             // output units
#define ETA 0.3f          // learning rate
#define MOMENTUM 0.3f
#define GRID_X 128        // blocks per grid row (the rest goes into grid.y)
#define REDUCE_THREADS 256

// ---------------------------------------------------------------------------
// Device code
// ---------------------------------------------------------------------------
__host__ __device__ inline float squash(float x) { return 1.0f / (1.0f + expf(-x)); }

__global__ void bpnn_layerforward_CUDA(const float *input_cuda, float *hidden_partial_sum,
                                       const float *input_hidden_cuda, int num_blocks, int hid) {
  const int by = blockIdx.y * gridDim.x + blockIdx.x;  // linear block id
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;

  if (by >= num_blocks) return;  // partial last grid row: whole block leaves

  int index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1);
  int index_in = HEIGHT * by + ty + 1;

  __shared__ float input_node[HEIGHT];
  __shared__ float weight_matrix[HEIGHT][WIDTH];

  if (tx == 0) input_node[ty] = input_cuda[index_in];
  __syncthreads();

  weight_matrix[ty][tx] = input_hidden_cuda[index];
  __syncthreads();

  weight_matrix[ty][tx] = weight_matrix[ty][tx] * input_node[ty];
  __syncthreads();

  for (int i = 1; i <= LOG2_HEIGHT; i++) {
    int power_two = 1 << i;
    if (ty % power_two == 0) weight_matrix[ty][tx] = weight_matrix[ty][tx] + weight_matrix[ty + power_two / 2][tx];
    __syncthreads();
  }

  if (tx == 0) hidden_partial_sum[by * hid + ty] = weight_matrix[tx][ty];
}

// One block per hidden unit j (blockIdx.x = j - 1).
__global__ void bpnn_hidden_reduce(const float *hidden_partial_sum, int num_blocks, int hid,
                                   const float *input_hidden_cuda, float *hidden_units) {
  __shared__ float s_sum[REDUCE_THREADS];
  const int j = blockIdx.x;
  const int tid = threadIdx.x;

  float sum = 0.0f;
  for (int k = tid; k < num_blocks; k += blockDim.x) sum += hidden_partial_sum[k * hid + j];
  s_sum[tid] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) s_sum[tid] += s_sum[tid + s];
    __syncthreads();
  }
  if (tid == 0) {
    // bias unit (input 0 == 1.0) times weight row 0
    hidden_units[j + 1] = squash(s_sum[0] + input_hidden_cuda[j + 1]);
  }
}

// Single block: output layer, errors and hidden->output weight adjustment.
__global__ void bpnn_output_error(const float *hidden_units, float *hidden_weights,
                                  float *hidden_prev_weights, int hid, float target,
                                  float *output_units, float *hidden_delta) {
  __shared__ float s_delta_o;
  const int tid = threadIdx.x;

  if (tid == 0) {
    float sum = 0.0f;
    for (int j = 0; j <= hid; j++) sum += hidden_weights[j * (OUT + 1) + 1] * hidden_units[j];
    const float o = squash(sum);
    output_units[1] = o;
    s_delta_o = o * (1.0f - o) * (target - o);
  }
  __syncthreads();

  const float delta_o = s_delta_o;
  if (tid >= 1 && tid <= hid) {
    const float h = hidden_units[tid];
    hidden_delta[tid] = h * (1.0f - h) * (delta_o * hidden_weights[tid * (OUT + 1) + 1]);
  }
  __syncthreads();

  if (tid <= hid) {
    const int w = tid * (OUT + 1) + 1;
    const float new_dw = ETA * delta_o * hidden_units[tid] + MOMENTUM * hidden_prev_weights[w];
    hidden_weights[w] += new_dw;
    hidden_prev_weights[w] = new_dw;
  }
}

__global__ void bpnn_adjust_weights_cuda(const float *delta, int hid, const float *ly,
                                         int num_blocks, float *w, float *oldw) {
  const int by = blockIdx.y * gridDim.x + blockIdx.x;
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;

  if (by >= num_blocks) return;

  int index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1);
  int index_y = HEIGHT * by + ty + 1;
  int index_x = tx + 1;

  w[index] += ((ETA * delta[index_x] * ly[index_y]) + (MOMENTUM * oldw[index]));
  oldw[index] = ((ETA * delta[index_x] * ly[index_y]) + (MOMENTUM * oldw[index]));

  __syncthreads();

  if (ty == 0 && by == 0) {
    w[index_x] += ((ETA * delta[index_x]) + (MOMENTUM * oldw[index_x]));
    oldw[index_x] = ((ETA * delta[index_x]) + (MOMENTUM * oldw[index_x]));
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
    fprintf(stderr, "backprop: invalid value '%s' for %s (expected an integer in [%ld, %ld])\n", s,
            opt, lo, hi);
    exit(2);
  }
  return v;
}

static const char *need_arg(int &i, int argc, char **argv) {
  if (i + 1 >= argc) {
    fprintf(stderr, "backprop: option %s needs a value\n", argv[i]);
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
    fprintf(stderr, "backprop: cannot write to %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
  }
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: backprop [options]\n"
          "  Rodinia-style back-propagation step, N inputs, %d hidden units, %d output.\n"
          "  --size N       number of input units, a multiple of 16 (default 4194304)\n"
          "  --small        small preset: 4096 inputs\n"
          "  --out FILE     write weights, hidden units and deltas (float32) as CRUNOUT1 records\n"
          "  --help         show this help\n",
          HID, OUT);
}

static bool close_enough(float g, float c, double rtol, double atol, double *max_err) {
  const double d = std::fabs((double)g - (double)c);
  if (d > *max_err || std::isnan(d)) *max_err = d;
  return d <= atol + rtol * std::fabs((double)c);
}

int main(int argc, char **argv) {
  long in = -1;
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
      in = parse_long(a, need_arg(i, argc, argv), 16, 1L << 24);
    } else if (!strcmp(a, "--out")) {
      out_path = need_arg(i, argc, argv);
    } else {
      fprintf(stderr, "backprop: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (in < 0) in = small ? 4096 : 4194304;
  if (in % 16 != 0) {
    fprintf(stderr, "backprop: --size must be a multiple of 16 (got %ld)\n", in);
    return 2;
  }

  const int hid = HID;
  const int num_blocks = (int)(in / 16);
  const size_t nw = (size_t)(in + 1) * (hid + 1);   // input->hidden weights
  const size_t nhw = (size_t)(hid + 1) * (OUT + 1);  // hidden->output weights
  const float target = 0.1f;

  // ---- input: units in [0,1), weights scaled by 1/sqrt(in) -----------------
  Lcg rng(4242u);
  std::vector<float> input_units(in + 1), input_weights(nw), input_prev(nw);
  std::vector<float> hidden_weights(nhw), hidden_prev(nhw), hidden_init(hid + 1, 0.0f);
  input_units[0] = 1.0f;  // bias unit
  for (long k = 1; k <= in; ++k) input_units[k] = rng.uniform();
  const float wscale = 1.0f / std::sqrt((float)in);
  for (size_t i = 0; i < nw; ++i) input_weights[i] = (2.0f * rng.uniform() - 1.0f) * wscale;
  for (size_t i = 0; i < nw; ++i) input_prev[i] = 0.01f * (2.0f * rng.uniform() - 1.0f);
  for (size_t i = 0; i < nhw; ++i) hidden_weights[i] = 2.0f * rng.uniform() - 1.0f;
  for (size_t i = 0; i < nhw; ++i) hidden_prev[i] = 0.01f * (2.0f * rng.uniform() - 1.0f);
  hidden_init[0] = 1.0f;  // bias unit of the hidden layer

  // ---- device ---------------------------------------------------------------
  CUDA_CHECK(cudaSetDevice(0));
  float *input_cuda, *input_hidden_cuda, *input_prev_weights_cuda, *hidden_partial_sum;
  float *hidden_units_cuda, *hidden_weights_cuda, *hidden_prev_cuda, *output_units_cuda,
      *hidden_delta_cuda;
  CUDA_CHECK(cudaMalloc(&input_cuda, sizeof(float) * (in + 1)));
  CUDA_CHECK(cudaMalloc(&input_hidden_cuda, sizeof(float) * nw));
  CUDA_CHECK(cudaMalloc(&input_prev_weights_cuda, sizeof(float) * nw));
  CUDA_CHECK(cudaMalloc(&hidden_partial_sum, sizeof(float) * num_blocks * hid));
  CUDA_CHECK(cudaMalloc(&hidden_units_cuda, sizeof(float) * (hid + 1)));
  CUDA_CHECK(cudaMalloc(&hidden_weights_cuda, sizeof(float) * nhw));
  CUDA_CHECK(cudaMalloc(&hidden_prev_cuda, sizeof(float) * nhw));
  CUDA_CHECK(cudaMalloc(&output_units_cuda, sizeof(float) * (OUT + 1)));
  CUDA_CHECK(cudaMalloc(&hidden_delta_cuda, sizeof(float) * (hid + 1)));
  CUDA_CHECK(cudaMemcpy(input_cuda, input_units.data(), sizeof(float) * (in + 1),
                        cudaMemcpyHostToDevice));

  const int gx = std::min(num_blocks, GRID_X);
  dim3 grid(gx, (num_blocks + gx - 1) / gx);
  dim3 threads(16, 16);

  cudaEvent_t evStart, evStop;
  CUDA_CHECK(cudaEventCreate(&evStart));
  CUDA_CHECK(cudaEventCreate(&evStop));

  std::vector<float> times;
  for (int run = 0; run < 6; ++run) {  // warm-up + 5 timed runs from the same state
    CUDA_CHECK(cudaMemcpy(input_hidden_cuda, input_weights.data(), sizeof(float) * nw,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(input_prev_weights_cuda, input_prev.data(), sizeof(float) * nw,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(hidden_weights_cuda, hidden_weights.data(), sizeof(float) * nhw,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(hidden_prev_cuda, hidden_prev.data(), sizeof(float) * nhw,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(hidden_units_cuda, hidden_init.data(), sizeof(float) * (hid + 1),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(hidden_delta_cuda, 0, sizeof(float) * (hid + 1)));
    CUDA_CHECK(cudaMemset(output_units_cuda, 0, sizeof(float) * (OUT + 1)));

    CUDA_CHECK(cudaEventRecord(evStart));
    bpnn_layerforward_CUDA<<<grid, threads>>>(input_cuda, hidden_partial_sum, input_hidden_cuda,
                                              num_blocks, hid);
    CHECK_LAUNCH();
    bpnn_hidden_reduce<<<hid, REDUCE_THREADS>>>(hidden_partial_sum, num_blocks, hid,
                                                input_hidden_cuda, hidden_units_cuda);
    CHECK_LAUNCH();
    bpnn_output_error<<<1, 32>>>(hidden_units_cuda, hidden_weights_cuda, hidden_prev_cuda, hid,
                                 target, output_units_cuda, hidden_delta_cuda);
    CHECK_LAUNCH();
    bpnn_adjust_weights_cuda<<<grid, threads>>>(hidden_delta_cuda, hid, input_cuda, num_blocks,
                                                input_hidden_cuda, input_prev_weights_cuda);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(evStop));
    CUDA_CHECK(cudaEventSynchronize(evStop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evStart, evStop));
    if (run > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());

  std::vector<float> g_w(nw), g_hidden(hid + 1), g_delta(hid + 1), g_hw(nhw), g_out(OUT + 1);
  CUDA_CHECK(cudaMemcpy(g_w.data(), input_hidden_cuda, sizeof(float) * nw, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(g_hidden.data(), hidden_units_cuda, sizeof(float) * (hid + 1),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(g_delta.data(), hidden_delta_cuda, sizeof(float) * (hid + 1),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(g_hw.data(), hidden_weights_cuda, sizeof(float) * nhw,
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(g_out.data(), output_units_cuda, sizeof(float) * (OUT + 1),
                        cudaMemcpyDeviceToHost));

  // ---- CPU reference (full; O(in * hid)) ------------------------------------
  std::vector<float> c_hidden(hid + 1), c_delta(hid + 1, 0.0f), c_hw(hidden_weights);
  c_hidden[0] = 1.0f;
  {
    std::vector<double> acc(hid + 1, 0.0);
    for (long k = 0; k <= in; ++k) {
      const float *wrow = &input_weights[(size_t)k * (hid + 1)];
      for (int j = 1; j <= hid; ++j) acc[j] += (double)wrow[j] * input_units[k];
    }
    for (int j = 1; j <= hid; ++j) c_hidden[j] = squash((float)acc[j]);
  }
  double osum = 0.0;
  for (int j = 0; j <= hid; ++j) osum += (double)hidden_weights[j * (OUT + 1) + 1] * c_hidden[j];
  const float o = squash((float)osum);
  const float delta_o = o * (1.0f - o) * (target - o);
  for (int j = 1; j <= hid; ++j)
    c_delta[j] = c_hidden[j] * (1.0f - c_hidden[j]) * (delta_o * hidden_weights[j * (OUT + 1) + 1]);
  for (int j = 0; j <= hid; ++j) {
    const int w = j * (OUT + 1) + 1;
    c_hw[w] += ETA * delta_o * c_hidden[j] + MOMENTUM * hidden_prev[w];
  }
  long bad = 0;
  double err_hidden = 0, err_delta = 0, err_w = 0, err_hw = 0;
  for (int j = 0; j <= hid; ++j) {
    if (!close_enough(g_hidden[j], c_hidden[j], 1e-4, 1e-6, &err_hidden)) ++bad;
    if (!close_enough(g_delta[j], c_delta[j], 1e-3, 1e-7, &err_delta)) ++bad;
  }
  for (size_t i = 0; i < nhw; ++i)
    if (!close_enough(g_hw[i], c_hw[i], 1e-4, 1e-6, &err_hw)) ++bad;
  for (long k = 0; k <= in; ++k) {
    const float ly = input_units[k];
    for (int j = 0; j <= hid; ++j) {
      const size_t idx = (size_t)k * (hid + 1) + j;
      float c = input_weights[idx];
      if (j >= 1) c += ETA * c_delta[j] * ly + MOMENTUM * input_prev[idx];
      if (!close_enough(g_w[idx], c, 1e-4, 1e-7, &err_w)) ++bad;
    }
  }
  const bool valid = (bad == 0);
  printf("backprop: in=%ld hid=%d blocks=%d grid=%ux%u output=%.7g max_abs_err: hidden=%.3g "
         "delta=%.3g w=%.3g hw=%.3g\n",
         in, hid, num_blocks, grid.x, grid.y, g_out[1], err_hidden, err_delta, err_w, err_hw);
  if (!valid) fprintf(stderr, "backprop: %ld values differ from the CPU reference\n", bad);

  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "backprop: cannot open %s: %s\n", out_path, strerror(errno));
      return 1;
    }
    write_record(f, out_path, 0u, g_w.data(), (uint64_t)nw, sizeof(float));
    write_record(f, out_path, 0u, g_hidden.data(), (uint64_t)(hid + 1), sizeof(float));
    write_record(f, out_path, 0u, g_delta.data(), (uint64_t)(hid + 1), sizeof(float));
    write_record(f, out_path, 0u, g_hw.data(), (uint64_t)nhw, sizeof(float));
    if (fclose(f) != 0) {
      fprintf(stderr, "backprop: cannot write %s: %s\n", out_path, strerror(errno));
      return 1;
    }
  }

  double checksum = 0.0;
  for (size_t i = 0; i < nw; ++i) checksum += g_w[i];
  for (int j = 0; j <= hid; ++j) checksum += (double)g_hidden[j] + g_delta[j];
  for (size_t i = 0; i < nhw; ++i) checksum += g_hw[i];
  printf("RESULT name=backprop time_ms=%.4f checksum=%.9g\n", times[times.size() / 2], checksum);
  printf("VALID %s\n", valid ? "yes" : "no");

  CUDA_CHECK(cudaEventDestroy(evStart));
  CUDA_CHECK(cudaEventDestroy(evStop));
  CUDA_CHECK(cudaFree(input_cuda));
  CUDA_CHECK(cudaFree(input_hidden_cuda));
  CUDA_CHECK(cudaFree(input_prev_weights_cuda));
  CUDA_CHECK(cudaFree(hidden_partial_sum));
  CUDA_CHECK(cudaFree(hidden_units_cuda));
  CUDA_CHECK(cudaFree(hidden_weights_cuda));
  CUDA_CHECK(cudaFree(hidden_prev_cuda));
  CUDA_CHECK(cudaFree(output_units_cuda));
  CUDA_CHECK(cudaFree(hidden_delta_cuda));
  return valid ? 0 : 1;
}
