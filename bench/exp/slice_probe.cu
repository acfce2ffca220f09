// slice_probe.cu — decision 0028: a kernel whole vs as (gated) slices of its grid.
// nvcc -O3 -arch=sm_90 -std=c++17 --extended-lambda slice_probe.cu -lcuda
// Probe: a long kernel of short blocks run plain, whole, vs as S slices of its grid (blockIdx
// offset by a parameter), optionally with cuStreamWaitValue32(gate == 0) before each slice.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
#define HEIGHT 16
#define WIDTH 16
#define LOG2_HEIGHT 4
#define ETA 0.3f
#define MOMENTUM 0.3f

__device__ __forceinline__ void lf_body(const float *input_cuda, float *hidden_partial_sum,
    const float *input_hidden_cuda, int num_blocks, int hid, uint3 blockIdx, dim3 gridDim) {
  const int by = blockIdx.y * gridDim.x + blockIdx.x;
  const int tx = threadIdx.x, ty = threadIdx.y;
  if (by >= num_blocks) return;
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
__device__ __forceinline__ void aw_body(const float *delta, int hid, const float *ly,
    int num_blocks, float *w, float *oldw, uint3 blockIdx, dim3 gridDim) {
  const int by = blockIdx.y * gridDim.x + blockIdx.x;
  const int tx = threadIdx.x, ty = threadIdx.y;
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
#define KERNEL_RADIUS 8
__constant__ float c_Kernel[2 * KERNEL_RADIUS + 1];
#define RX 16
#define RY 4
#define RS 8
#define RH 1
__device__ __forceinline__ void rows_body(float *d_Dst, const float *d_Src, int imageW, int imageH, int pitch, uint3 blockIdx, dim3 gridDim) {
  __shared__ float s_Data[RY][(RS + 2 * RH) * RX];
  const int baseX = (blockIdx.x * RS - RH) * RX + threadIdx.x;
  const int baseY = blockIdx.y * RY + threadIdx.y;
  d_Src += baseY * pitch + baseX;
  d_Dst += baseY * pitch + baseX;
#pragma unroll
  for (int i = RH; i < RH + RS; i++) s_Data[threadIdx.y][threadIdx.x + i * RX] = d_Src[i * RX];
#pragma unroll
  for (int i = 0; i < RH; i++) s_Data[threadIdx.y][threadIdx.x + i * RX] = (baseX >= -i * RX) ? d_Src[i * RX] : 0;
#pragma unroll
  for (int i = RH + RS; i < RH + RS + RH; i++) s_Data[threadIdx.y][threadIdx.x + i * RX] = (imageW - baseX > i * RX) ? d_Src[i * RX] : 0;
  __syncthreads();
#pragma unroll
  for (int i = RH; i < RH + RS; i++) {
    float sum = 0;
#pragma unroll
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++) sum += c_Kernel[KERNEL_RADIUS - j] * s_Data[threadIdx.y][threadIdx.x + i * RX + j];
    d_Dst[i * RX] = sum;
  }
}
#define CX 16
#define CY 8
#define CS 8
#define CH 1
__device__ __forceinline__ void cols_body(float *d_Dst, const float *d_Src, int imageW, int imageH, int pitch, uint3 blockIdx, dim3 gridDim) {
  __shared__ float s_Data[CX][(CS + 2 * CH) * CY + 1];
  const int baseX = blockIdx.x * CX + threadIdx.x;
  const int baseY = (blockIdx.y * CS - CH) * CY + threadIdx.y;
  const float *src = d_Src + baseY * pitch + baseX;
  float *dst = d_Dst + baseY * pitch + baseX;
#pragma unroll
  for (int i = CH; i < CH + CS; i++) s_Data[threadIdx.x][threadIdx.y + i * CY] = src[i * CY * pitch];
#pragma unroll
  for (int i = 0; i < CH; i++) s_Data[threadIdx.x][threadIdx.y + i * CY] = (baseY >= -i * CY) ? src[i * CY * pitch] : 0;
#pragma unroll
  for (int i = CH + CS; i < CH + CS + CH; i++) s_Data[threadIdx.x][threadIdx.y + i * CY] = (imageH - baseY > i * CY) ? src[i * CY * pitch] : 0;
  __syncthreads();
#pragma unroll
  for (int i = CH; i < CH + CS; i++) {
    float sum = 0;
#pragma unroll
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++) sum += c_Kernel[KERNEL_RADIUS - j] * s_Data[threadIdx.x][threadIdx.y + i * CY + j];
    dst[i * CY * pitch] = sum;
  }
}


#define OFF uint3 b = blockIdx; b.x += off.x; b.y += off.y; b.z += off.z;
__global__ void lf_plain(const float *a, float *b_, const float *c, int n, int h) { lf_body(a, b_, c, n, h, blockIdx, gridDim); }
__global__ void lf_slice(uint3 off, dim3 g, const float *a, float *b_, const float *c, int n, int h) { OFF lf_body(a, b_, c, n, h, b, g); }
__global__ void aw_plain(const float *d, int h, const float *ly, int n, float *w, float *o) { aw_body(d, h, ly, n, w, o, blockIdx, gridDim); }
__global__ void aw_slice(uint3 off, dim3 g, const float *d, int h, const float *ly, int n, float *w, float *o) { OFF aw_body(d, h, ly, n, w, o, b, g); }
__global__ void rows_plain(float *d, const float *s, int W, int H, int p) { rows_body(d, s, W, H, p, blockIdx, gridDim); }
__global__ void rows_slice(uint3 off, dim3 g, float *d, const float *s, int W, int H, int p) { OFF rows_body(d, s, W, H, p, b, g); }
__global__ void cols_plain(float *d, const float *s, int W, int H, int p) { cols_body(d, s, W, H, p, blockIdx, gridDim); }
__global__ void cols_slice(uint3 off, dim3 g, float *d, const float *s, int W, int H, int p) { OFF cols_body(d, s, W, H, p, b, g); }

static CUdeviceptr gate;
static cudaStream_t st;

/* Runs one kernel: S = 0 plain whole; else S slices along y, waits before each slice after the first if W. */
template <typename FP, typename FS>
static float run1(FP plain, FS slice, dim3 grid, dim3 blk, int S, int W) {
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> t;
  for (int r = 0; r < 25; r++) {
    cudaEventRecord(e0, st);
    if (S == 0) plain(grid, blk);
    else {
      unsigned per = (grid.y + S - 1) / S;
      for (unsigned y0 = 0; y0 < grid.y; y0 += per) {
        if (W && y0 > 0) cuStreamWaitValue32(st, gate, 0, CU_STREAM_WAIT_VALUE_EQ);
        unsigned ny = std::min(per, grid.y - y0);
        slice(dim3(grid.x, ny, grid.z), blk, make_uint3(0, y0, 0), grid);
      }
    }
    cudaEventRecord(e1, st);
    CK(cudaEventSynchronize(e1));
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 3) t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  cuInit(0);
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cuMemAlloc(&gate, 4); cuMemsetD32(gate, 0, 1);
  const int in = 4194304, hid = 16, nb = in / 16;
  float *input, *ih, *ps, *delta, *oldw;
  CK(cudaMalloc(&input, sizeof(float) * (in + 1)));
  CK(cudaMalloc(&ih, sizeof(float) * (size_t)(in + 1) * (hid + 1)));
  CK(cudaMalloc(&oldw, sizeof(float) * (size_t)(in + 1) * (hid + 1)));
  CK(cudaMalloc(&ps, sizeof(float) * nb * hid));
  CK(cudaMalloc(&delta, sizeof(float) * (hid + 1)));
  cudaMemset(input, 0, sizeof(float) * (in + 1)); cudaMemset(ih, 0, sizeof(float) * (size_t)(in + 1) * (hid + 1));
  cudaMemset(oldw, 0, sizeof(float) * (size_t)(in + 1) * (hid + 1)); cudaMemset(delta, 0, 68);
  dim3 bg(128, nb / 128), bb(16, 16);
  const int N = 4096;
  float *img, *out;
  CK(cudaMalloc(&img, sizeof(float) * N * N)); CK(cudaMalloc(&out, sizeof(float) * N * N));
  cudaMemset(img, 0, sizeof(float) * N * N);
  dim3 rg(N / (RS * RX), N / RY), rb(RX, RY), cg(N / CX, N / (CS * CY)), cb(CX, CY);
  int Ss[] = {0, 2, 4, 8, 16};
  struct { const char *name; } names[] = {{"layerforward"}, {"adjust_weights"}, {"conv rows"}, {"conv cols"}};
  for (int k = 0; k < 4; k++) {
    printf("%-15s", names[k].name);
    for (int W = 0; W < 2; W++) for (int si = 0; si < 5; si++) {
      if (W && si == 0) continue;
      int S = Ss[si];
      float us = 0;
      if (k == 0) us = run1([&](dim3 g, dim3 b) { lf_plain<<<g, b, 0, st>>>(input, ps, ih, nb, hid); },
                            [&](dim3 g, dim3 b, uint3 o, dim3 f) { lf_slice<<<g, b, 0, st>>>(o, f, input, ps, ih, nb, hid); }, bg, bb, S, W);
      if (k == 1) us = run1([&](dim3 g, dim3 b) { aw_plain<<<g, b, 0, st>>>(delta, hid, input, nb, ih, oldw); },
                            [&](dim3 g, dim3 b, uint3 o, dim3 f) { aw_slice<<<g, b, 0, st>>>(o, f, delta, hid, input, nb, ih, oldw); }, bg, bb, S, W);
      if (k == 2) us = run1([&](dim3 g, dim3 b) { rows_plain<<<g, b, 0, st>>>(out, img, N, N, N); },
                            [&](dim3 g, dim3 b, uint3 o, dim3 f) { rows_slice<<<g, b, 0, st>>>(o, f, out, img, N, N, N); }, rg, rb, S, W);
      if (k == 3) us = run1([&](dim3 g, dim3 b) { cols_plain<<<g, b, 0, st>>>(out, img, N, N, N); },
                            [&](dim3 g, dim3 b, uint3 o, dim3 f) { cols_slice<<<g, b, 0, st>>>(o, f, out, img, N, N, N); }, cg, cb, S, W);
      printf("  %s%d %7.1f", W ? "w" : "s", S, us);
    }
    printf("\n");
  }
  CK(cudaGetLastError());
  return 0;
}
