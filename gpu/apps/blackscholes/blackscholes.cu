// blackscholes.cu - CUDA SDK-style BlackScholes European option pricing.
//
// A fixed-size grid (480 blocks of 128 threads, as in the original SDK
// sample) walks all options with a grid-stride loop; the pricing formula and
// the cumulative normal distribution are __device__ helper functions using
// the fast float intrinsics (__expf, __logf, __fdividef).  One timed run
// launches the kernel `--iters` times in a host loop, like the SDK's
// NUM_ITERATIONS loop.
//
// Output (float32 records): call prices, put prices.  No atomics: bitwise
// deterministic.

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

#define BS_GRID 480
#define BS_THREADS 128

static const float RISKFREE = 0.02f;
static const float VOLATILITY = 0.30f;

// ---------------------------------------------------------------------------
// Polynomial approximation of cumulative normal distribution function
// ---------------------------------------------------------------------------
__device__ inline float cndGPU(float d) {
  const float A1 = 0.31938153f;
  const float A2 = -0.356563782f;
  const float A3 = 1.781477937f;
  const float A4 = -1.821255978f;
  const float A5 = 1.330274429f;
  const float RSQRT2PI = 0.39894228040143267793994605993438f;

  float K = __fdividef(1.0f, (1.0f + 0.2316419f * fabsf(d)));

  float cnd = RSQRT2PI * __expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));

  if (d > 0) cnd = 1.0f - cnd;

  return cnd;
}

// ---------------------------------------------------------------------------
// Black-Scholes formula for both call and put
// ---------------------------------------------------------------------------
__device__ inline void BlackScholesBodyGPU(float &CallResult, float &PutResult,
                                           float S,  // Stock price
                                           float X,  // Option strike
                                           float T,  // Option years
                                           float R,  // Riskless rate
                                           float V   // Volatility rate
) {
  float sqrtT, expRT;
  float d1, d2, CNDD1, CNDD2;

  sqrtT = __fdividef(1.0F, rsqrtf(T));
  d1 = __fdividef(__logf(S / X) + (R + 0.5f * V * V) * T, V * sqrtT);
  d2 = d1 - V * sqrtT;

  CNDD1 = cndGPU(d1);
  CNDD2 = cndGPU(d2);

  // Calculate Call and Put simultaneously
  expRT = __expf(-R * T);
  CallResult = S * CNDD1 - X * expRT * CNDD2;
  PutResult = X * expRT * (1.0f - CNDD2) - S * (1.0f - CNDD1);
}

// ---------------------------------------------------------------------------
// Process an array of optN options on the GPU (grid-stride loop)
// ---------------------------------------------------------------------------
__global__ void BlackScholesGPU(float *d_CallResult, float *d_PutResult, const float *d_StockPrice,
                                const float *d_OptionStrike, const float *d_OptionYears,
                                float Riskfree, float Volatility, int optN) {
  // Thread index
  const int tid = blockDim.x * blockIdx.x + threadIdx.x;
  // Total number of threads in execution grid
  const int THREAD_N = blockDim.x * gridDim.x;

  // No matter how small the execution grid is or how many options we process,
  // by using this loop we get perfect memory coalescing
  for (int opt = tid; opt < optN; opt += THREAD_N)
    BlackScholesBodyGPU(d_CallResult[opt], d_PutResult[opt], d_StockPrice[opt],
                        d_OptionStrike[opt], d_OptionYears[opt], Riskfree, Volatility);
}

// ---------------------------------------------------------------------------
// CPU reference (double precision, as in the SDK's BlackScholes_gold.cpp)
// ---------------------------------------------------------------------------
static double CND(double d) {
  const double A1 = 0.31938153;
  const double A2 = -0.356563782;
  const double A3 = 1.781477937;
  const double A4 = -1.821255978;
  const double A5 = 1.330274429;
  const double RSQRT2PI = 0.39894228040143267793994605993438;
  double K = 1.0 / (1.0 + 0.2316419 * std::fabs(d));
  double cnd = RSQRT2PI * std::exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
  if (d > 0) cnd = 1.0 - cnd;
  return cnd;
}

static void BlackScholesBodyCPU(double &callResult, double &putResult, double S, double X,
                                double T, double R, double V) {
  double sqrtT = std::sqrt(T);
  double d1 = (std::log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT);
  double d2 = d1 - V * sqrtT;
  double CNDD1 = CND(d1);
  double CNDD2 = CND(d2);
  double expRT = std::exp(-R * T);
  callResult = S * CNDD1 - X * expRT * CNDD2;
  putResult = X * expRT * (1.0 - CNDD2) - S * (1.0 - CNDD1);
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
  float range(float lo, float hi) { return lo + (hi - lo) * uniform(); }
};

static long parse_long(const char *opt, const char *s, long lo, long hi) {
  char *end = nullptr;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "blackscholes: invalid value '%s' for %s (expected an integer in [%ld, %ld])\n",
            s, opt, lo, hi);
    exit(2);
  }
  return v;
}

static const char *need_arg(int &i, int argc, char **argv) {
  if (i + 1 >= argc) {
    fprintf(stderr, "blackscholes: option %s needs a value\n", argv[i]);
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
    fprintf(stderr, "blackscholes: cannot write to %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
  }
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: blackscholes [options]\n"
          "  CUDA SDK-style Black-Scholes pricing of N European options.\n"
          "  --size N       number of options (default 16777216)\n"
          "  --iters N      kernel launches per timed run (default 16)\n"
          "  --small        small preset: 65536 options, 2 launches\n"
          "  --out FILE     write call and put prices (float32) as CRUNOUT1 records\n"
          "  --help         show this help\n");
}

int main(int argc, char **argv) {
  long optN = -1, iters = -1;
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
      optN = parse_long(a, need_arg(i, argc, argv), 1, 1L << 28);
    } else if (!strcmp(a, "--iters")) {
      iters = parse_long(a, need_arg(i, argc, argv), 1, 10000);
    } else if (!strcmp(a, "--out")) {
      out_path = need_arg(i, argc, argv);
    } else {
      fprintf(stderr, "blackscholes: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (optN < 0) optN = small ? 65536 : 16777216;
  if (iters < 0) iters = small ? 2 : 16;
  const size_t n = (size_t)optN;

  // ---- input (SDK ranges) ---------------------------------------------------
  std::vector<float> S(n), X(n), T(n);
  Lcg rng(5347u);
  for (size_t i = 0; i < n; ++i) {
    S[i] = rng.range(5.0f, 30.0f);
    X[i] = rng.range(1.0f, 100.0f);
    T[i] = rng.range(0.25f, 10.0f);
  }

  // ---- device ---------------------------------------------------------------
  CUDA_CHECK(cudaSetDevice(0));
  float *d_Call, *d_Put, *d_S, *d_X, *d_T;
  CUDA_CHECK(cudaMalloc(&d_Call, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&d_Put, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&d_S, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&d_X, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&d_T, sizeof(float) * n));
  CUDA_CHECK(cudaMemcpy(d_S, S.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_X, X.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_T, T.data(), sizeof(float) * n, cudaMemcpyHostToDevice));

  cudaEvent_t evStart, evStop;
  CUDA_CHECK(cudaEventCreate(&evStart));
  CUDA_CHECK(cudaEventCreate(&evStop));

  std::vector<float> times;
  for (int run = 0; run < 6; ++run) {  // warm-up + 5 timed runs
    CUDA_CHECK(cudaMemset(d_Call, 0, sizeof(float) * n));
    CUDA_CHECK(cudaMemset(d_Put, 0, sizeof(float) * n));
    CUDA_CHECK(cudaEventRecord(evStart));
    for (long i = 0; i < iters; i++) {
      BlackScholesGPU<<<BS_GRID, BS_THREADS>>>(d_Call, d_Put, d_S, d_X, d_T, RISKFREE, VOLATILITY,
                                               (int)optN);
      CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaEventRecord(evStop));
    CUDA_CHECK(cudaEventSynchronize(evStop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evStart, evStop));
    if (run > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());

  std::vector<float> call(n), put(n);
  CUDA_CHECK(cudaMemcpy(call.data(), d_Call, sizeof(float) * n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(put.data(), d_Put, sizeof(float) * n, cudaMemcpyDeviceToHost));

  // ---- CPU reference, SDK-style L1 norm check (all options) -----------------
  double sum_delta = 0.0, sum_ref = 0.0, max_delta = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double c, p;
    BlackScholesBodyCPU(c, p, S[i], X[i], T[i], RISKFREE, VOLATILITY);
    const double dc = std::fabs(c - call[i]), dp = std::fabs(p - put[i]);
    if (std::isnan(dc) || std::isnan(dp)) max_delta = NAN;
    max_delta = std::max(max_delta, std::max(dc, dp));
    sum_delta += dc + dp;
    sum_ref += std::fabs(c) + std::fabs(p);
  }
  const double L1norm = sum_delta / sum_ref;
  const bool valid = (L1norm < 1e-6) && (max_delta < 1e-3);
  printf("blackscholes: options=%ld launches_per_run=%ld L1_norm=%.3e max_abs_err=%.3e\n", optN,
         iters, L1norm, max_delta);
  printf("blackscholes: %.2f Goptions/s\n",
         (double)optN * iters / (times[times.size() / 2] * 1e6));

  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "blackscholes: cannot open %s: %s\n", out_path, strerror(errno));
      return 1;
    }
    write_record(f, out_path, 0u, call.data(), (uint64_t)n, sizeof(float));
    write_record(f, out_path, 0u, put.data(), (uint64_t)n, sizeof(float));
    if (fclose(f) != 0) {
      fprintf(stderr, "blackscholes: cannot write %s: %s\n", out_path, strerror(errno));
      return 1;
    }
  }

  double checksum = 0.0;
  for (size_t i = 0; i < n; ++i) checksum += (double)call[i] + put[i];
  printf("RESULT name=blackscholes time_ms=%.4f checksum=%.9g\n", times[times.size() / 2],
         checksum);
  printf("VALID %s\n", valid ? "yes" : "no");

  CUDA_CHECK(cudaEventDestroy(evStart));
  CUDA_CHECK(cudaEventDestroy(evStop));
  CUDA_CHECK(cudaFree(d_Call));
  CUDA_CHECK(cudaFree(d_Put));
  CUDA_CHECK(cudaFree(d_S));
  CUDA_CHECK(cudaFree(d_X));
  CUDA_CHECK(cudaFree(d_T));
  return valid ? 0 : 1;
}
