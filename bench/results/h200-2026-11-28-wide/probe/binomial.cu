#include "corun/corun_launch.cuh"
#include "blocks.cuh"
#line 1 "binomial/binomial.cu"
// binomial.cu - CUDA SDK-style binomialOptions (European call options priced
// on a NUM_STEPS binomial tree), in DOUBLE precision.
//
// One thread block prices one option: each of the 128 threads keeps 16 tree
// nodes in registers and exchanges the boundary node with its neighbour
// through shared memory, with two __syncthreads() per time step inside the
// step loop.  Launched as k<<<optN, 128>>> on the default stream.
//
// Output: float64 call values (one per option).  No atomics: bitwise
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

typedef double real;

// Number of time steps
#define NUM_STEPS 2048
#define THREADBLOCK_SIZE 128
#define ELEMS_PER_THREAD (NUM_STEPS / THREADBLOCK_SIZE)
#if NUM_STEPS % THREADBLOCK_SIZE
#error Bad constants
#endif

// Preprocessed input option data
struct TOptionData {
  real S;
  real X;
  real vDt;
  real puByDf;
  real pdByDf;
};

// Option value at expiry for tree node i
__host__ __device__ inline real expiryCallValue(real S, real X, real vDt, int i) {
  real d = S * exp(vDt * (2.0 * i - NUM_STEPS)) - X;
  return (d > 0.0) ? d : 0.0;
}

// ---------------------------------------------------------------------------
// GPU kernel: one block per option
// ---------------------------------------------------------------------------
static __device__ __forceinline__ void binomialOptionsKernel__corun_body(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue, const uint3 blockIdx, const dim3 gridDim) {
  __shared__ real call_exchange[THREADBLOCK_SIZE + 1];

  const int tid = threadIdx.x;
  const real S = d_OptionData[blockIdx.x].S;
  const real X = d_OptionData[blockIdx.x].X;
  const real vDt = d_OptionData[blockIdx.x].vDt;
  const real puByDf = d_OptionData[blockIdx.x].puByDf;
  const real pdByDf = d_OptionData[blockIdx.x].pdByDf;

  real call[ELEMS_PER_THREAD + 1];
#pragma unroll
  for (int i = 0; i < ELEMS_PER_THREAD; ++i)
    call[i] = expiryCallValue(S, X, vDt, tid * ELEMS_PER_THREAD + i);

  if (tid == 0) call_exchange[THREADBLOCK_SIZE] = expiryCallValue(S, X, vDt, NUM_STEPS);

  int final_it = max(0, tid * ELEMS_PER_THREAD - 1);

#pragma unroll 16
  for (int i = NUM_STEPS; i > 0; --i) {
    call_exchange[tid] = call[0];
    __syncthreads();
    call[ELEMS_PER_THREAD] = call_exchange[tid + 1];
    __syncthreads();

    if (i > final_it) {
#pragma unroll
      for (int j = 0; j < ELEMS_PER_THREAD; ++j) call[j] = puByDf * call[j + 1] + pdByDf * call[j];
    }
  }

  if (tid == 0) {
    d_CallValue[blockIdx.x] = call[0];
  }
}
#line 62 "binomial/binomial.cu"
__global__ void binomialOptionsKernel(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, blockIdx, gridDim);
}
__global__ void binomialOptionsKernel__pb(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    blocks_form<1>(gridDim, [&](const uint3 b, const dim3 g) { binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, b, g); });
}
__global__ void binomialOptionsKernel__pbnc(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    blocks_form<0>(gridDim, [&](const uint3 b, const dim3 g) { binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, b, g); });
}
__global__ void binomialOptionsKernel__pbst(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    blocks_form<7>(gridDim, [&](const uint3 b, const dim3 g) { binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, b, g); });
}
__global__ void binomialOptionsKernel__pbasm(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    blocks_form<8>(gridDim, [&](const uint3 b, const dim3 g) { binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, b, g); });
}
__global__ void binomialOptionsKernel__pbor(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    blocks_form<9>(gridDim, [&](const uint3 b, const dim3 g) { binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, b, g); });
}
__global__ void binomialOptionsKernel__pbshfl(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    blocks_form<6>(gridDim, [&](const uint3 b, const dim3 g) { binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, b, g); });
}
__global__ void binomialOptionsKernel__pbatom(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    blocks_form<2>(gridDim, [&](const uint3 b, const dim3 g) { binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, b, g); });
}
__global__ void binomialOptionsKernel__pbrev(const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    blocks_form<4>(gridDim, [&](const uint3 b, const dim3 g) { binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, b, g); });
}

#line 62 "binomial/binomial.cu"
__global__ void binomialOptionsKernel__corun(const corun_worker_arg corun_wa, const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    corun_worker_loop<CORUN_SHARED>(corun_wa, [&](const uint3 corun_b, const dim3 corun_g) {
        binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, corun_b, corun_g);
    });
}
#line 62 "binomial/binomial.cu"
__global__ void binomialOptionsKernel__corun_ahead(const corun_worker_arg corun_wa, const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue) {
    corun_worker_loop_ahead(corun_wa, [&](const uint3 corun_b, const dim3 corun_g) {
        binomialOptionsKernel__corun_body(d_OptionData, d_CallValue, corun_b, corun_g);
    });
}
#line 62 "binomial/binomial.cu"
static __host__ inline void binomialOptionsKernel__corun_launch(const ::corun::config &corun_cfg, const TOptionData *__restrict__ d_OptionData,
                                      real *__restrict__ d_CallValue)
{
    static ::corun::kernel_slot corun_slot(CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS);
    ::corun::launch<decltype(d_OptionData), decltype(d_CallValue)>(corun_slot, corun_cfg, "binomialOptionsKernel", binomialOptionsKernel, binomialOptionsKernel__corun, binomialOptionsKernel__corun_ahead, d_OptionData, d_CallValue);
}
#line 98 "binomial/binomial.cu"


// ---------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------
struct OptionParams {
  double S, X, T, R, V;
};

static TOptionData preprocess(const OptionParams &p) {
  const double dt = p.T / (double)NUM_STEPS;
  const double vDt = p.V * std::sqrt(dt);
  const double rDt = p.R * dt;
  // Per-step interest and discount factors
  const double If = std::exp(rDt);
  const double Df = std::exp(-rDt);
  // Values and pseudoprobabilities of upward and downward moves
  const double u = std::exp(vDt);
  const double d = std::exp(-vDt);
  const double pu = (If - d) / (u - d);
  const double pd = 1.0 - pu;
  TOptionData o;
  o.S = p.S;
  o.X = p.X;
  o.vDt = vDt;
  o.puByDf = pu * Df;
  o.pdByDf = pd * Df;
  return o;
}

// CPU reference (SDK binomialOptions_gold): the full tree, one option
static double binomialOptionCPU(const TOptionData &o) {
  static double Call[NUM_STEPS + 1];
  for (int i = 0; i <= NUM_STEPS; i++) Call[i] = expiryCallValue(o.S, o.X, o.vDt, i);
  for (int i = NUM_STEPS; i > 0; i--)
    for (int j = 0; j <= i - 1; j++) Call[j] = o.puByDf * Call[j + 1] + o.pdByDf * Call[j];
  return Call[0];
}

// Black-Scholes closed form, to report how close the tree gets
static double CND(double d) {
  return 0.5 * std::erfc(-d / std::sqrt(2.0));
}
static double blackScholesCall(const OptionParams &p) {
  const double sqrtT = std::sqrt(p.T);
  const double d1 = (std::log(p.S / p.X) + (p.R + 0.5 * p.V * p.V) * p.T) / (p.V * sqrtT);
  const double d2 = d1 - p.V * sqrtT;
  return p.S * CND(d1) - p.X * std::exp(-p.R * p.T) * CND(d2);
}

struct Lcg {
  uint32_t s;
  explicit Lcg(uint32_t seed) : s(seed) {}
  uint32_t next() {
    s = s * 1664525u + 1013904223u;
    return s;
  }
  double uniform() { return (double)(next() >> 8) * (1.0 / 16777216.0); }
  double range(double lo, double hi) { return lo + (hi - lo) * uniform(); }
};

static long parse_long(const char *opt, const char *s, long lo, long hi) {
  char *end = nullptr;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "binomial: invalid value '%s' for %s (expected an integer in [%ld, %ld])\n", s,
            opt, lo, hi);
    exit(2);
  }
  return v;
}

static const char *need_arg(int &i, int argc, char **argv) {
  if (i + 1 >= argc) {
    fprintf(stderr, "binomial: option %s needs a value\n", argv[i]);
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
    fprintf(stderr, "binomial: cannot write to %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
  }
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: binomial [options]\n"
          "  CUDA SDK-style binomial option pricing (double precision, %d steps).\n"
          "  --size N       number of options (default 2048)\n"
          "  --small        small preset: 64 options\n"
          "  --out FILE     write the call values (float64) as a CRUNOUT1 record\n"
          "  --help         show this help\n",
          NUM_STEPS);
}

int main(int argc, char **argv) {
  long optN = -1;
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
      optN = parse_long(a, need_arg(i, argc, argv), 1, 1L << 20);
    } else if (!strcmp(a, "--out")) {
      out_path = need_arg(i, argc, argv);
    } else {
      fprintf(stderr, "binomial: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (optN < 0) optN = small ? 64 : 2048;

  // ---- input (SDK ranges) ---------------------------------------------------
  std::vector<OptionParams> params(optN);
  std::vector<TOptionData> h_OptionData(optN);
  Lcg rng(123u);
  for (long i = 0; i < optN; i++) {
    params[i].S = rng.range(5.0, 30.0);
    params[i].X = rng.range(1.0, 100.0);
    params[i].T = rng.range(0.25, 10.0);
    params[i].R = 0.06;
    params[i].V = 0.10;
    h_OptionData[i] = preprocess(params[i]);
  }

  // ---- device ---------------------------------------------------------------
  CUDA_CHECK(cudaSetDevice(0));
  TOptionData *d_OptionData;
  real *d_CallValue;
  CUDA_CHECK(cudaMalloc(&d_OptionData, sizeof(TOptionData) * optN));
  CUDA_CHECK(cudaMalloc(&d_CallValue, sizeof(real) * optN));
  CUDA_CHECK(cudaMemcpy(d_OptionData, h_OptionData.data(), sizeof(TOptionData) * optN,
                        cudaMemcpyHostToDevice));

  cudaEvent_t evStart, evStop;
  CUDA_CHECK(cudaEventCreate(&evStart));
  CUDA_CHECK(cudaEventCreate(&evStop));

  std::vector<float> times;
  for (int run = 0; run < 22; ++run) {  // warm-up + 21 timed runs
    if (probe_form() == 2 || probe_form() == 4 || probe_form() == 6 || probe_form() == 7 || probe_form() == 8) probe_reset(0);
    CUDA_CHECK(cudaMemset(d_CallValue, 0, sizeof(real) * optN));
    CUDA_CHECK(cudaEventRecord(evStart));
    { static int pf = probe_form(); if (pf == 0) { binomialOptionsKernel__corun_launch(::corun::config((int)optN, THREADBLOCK_SIZE), d_OptionData, d_CallValue); } else if (pf == 1) { binomialOptionsKernel<<<(int)optN, THREADBLOCK_SIZE>>>(d_OptionData, d_CallValue); } else if (pf == 2) { binomialOptionsKernel__pb<<<(int)optN, THREADBLOCK_SIZE>>>(d_OptionData, d_CallValue); } else if (pf == 3) { binomialOptionsKernel__pbnc<<<(int)optN, THREADBLOCK_SIZE>>>(d_OptionData, d_CallValue); } else if (pf == 4) { binomialOptionsKernel__pbatom<<<(int)optN, THREADBLOCK_SIZE>>>(d_OptionData, d_CallValue); } else if (pf == 5) { binomialOptionsKernel__pbrev<<<(int)optN, THREADBLOCK_SIZE>>>(d_OptionData, d_CallValue); } else if (pf == 6) { binomialOptionsKernel__pbshfl<<<(int)optN, THREADBLOCK_SIZE>>>(d_OptionData, d_CallValue); } else if (pf == 7) { binomialOptionsKernel__pbst<<<(int)optN, THREADBLOCK_SIZE>>>(d_OptionData, d_CallValue); } else if (pf == 8) { binomialOptionsKernel__pbasm<<<(int)optN, THREADBLOCK_SIZE>>>(d_OptionData, d_CallValue); } else { binomialOptionsKernel__pbor<<<(int)optN, THREADBLOCK_SIZE>>>(d_OptionData, d_CallValue); } }
    CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(evStop));
    CUDA_CHECK(cudaEventSynchronize(evStop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evStart, evStop));
    if (run > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());

  std::vector<real> callGPU(optN);
  CUDA_CHECK(cudaMemcpy(callGPU.data(), d_CallValue, sizeof(real) * optN, cudaMemcpyDeviceToHost));

  // ---- validation: CPU tree on a sample of options (all when small) --------
  const long stride = std::max(1L, optN / 64);
  long bad = 0, checked = 0;
  double max_rel = 0.0, sum_bs_err = 0.0, sum_bs = 0.0;
  for (long i = 0; i < optN; i += stride) {
    const double ref = binomialOptionCPU(h_OptionData[i]);
    const double err = std::fabs(callGPU[i] - ref);
    const double rel = err / std::max(std::fabs(ref), 1.0);
    if (rel > max_rel || std::isnan(err)) max_rel = rel;
    if (!(rel <= 1e-9)) ++bad;
    ++checked;
  }
  for (long i = 0; i < optN; ++i) {
    const double bs = blackScholesCall(params[i]);
    sum_bs_err += std::fabs(callGPU[i] - bs);
    sum_bs += std::fabs(bs);
  }
  const double bs_l1 = sum_bs_err / std::max(sum_bs, 1e-300);
  // The tree converges to Black-Scholes with an O(1/NUM_STEPS) error that
  // oscillates from option to option, so the L1 bound is only meaningful over
  // many options; with fewer than 64 it is reported but not enforced.
  const bool bs_ok = (optN < 64) || (bs_l1 < 1e-3);
  const bool valid = (bad == 0) && bs_ok;
  printf("binomial: options=%ld steps=%d checked=%ld max_rel_err_vs_cpu_tree=%.3e "
         "L1_vs_black_scholes=%.3e\n",
         optN, NUM_STEPS, checked, max_rel, bs_l1);
  if (bad) fprintf(stderr, "binomial: %ld options differ from the CPU binomial tree\n", bad);
  if (!bs_ok) fprintf(stderr, "binomial: results too far from the Black-Scholes prices\n");

  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "binomial: cannot open %s: %s\n", out_path, strerror(errno));
      return 1;
    }
    write_record(f, out_path, 2u, callGPU.data(), (uint64_t)optN, sizeof(real));
    if (fclose(f) != 0) {
      fprintf(stderr, "binomial: cannot write %s: %s\n", out_path, strerror(errno));
      return 1;
    }
  }

  double checksum = 0.0;
  for (long i = 0; i < optN; ++i) checksum += callGPU[i];
  printf("RESULT name=binomial time_ms=%.4f checksum=%.9g\n", times[times.size() / 2], checksum);
  printf("VALID %s\n", valid ? "yes" : "no");

  CUDA_CHECK(cudaEventDestroy(evStart));
  CUDA_CHECK(cudaEventDestroy(evStop));
  CUDA_CHECK(cudaFree(d_OptionData));
  CUDA_CHECK(cudaFree(d_CallValue));
  return valid ? 0 : 1;
}
