// The transpose tile of gpu-check's kernel and its plain kernel, shared by
// the transpose experiments here (transpose_order.cu, transpose_persist.cu).
#ifndef CORUN_EXP_TRANSPOSE_TILE_CUH
#define CORUN_EXP_TRANSPOSE_TILE_CUH
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s\n", cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ __forceinline__ void tile_body(const float *in, float *out, int w, int h, int bx, int by, float (*tile)[33])
{
    int x = bx * 32 + threadIdx.x, y = by * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = by * 32 + threadIdx.x; y = bx * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void k_plain(const float *in, float *out, int w, int h)
{
    __shared__ float tile[32][33];
    tile_body(in, out, w, h, blockIdx.x, blockIdx.y, tile);
}
#endif
