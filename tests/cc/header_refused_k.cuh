// One kernel corun can take and one it cannot (::blockIdx names the
// hardware's index).
__global__ void good(int *p) { p[blockIdx.x] = 1; }
__global__ void bad(int *p) { p[::blockIdx.x] = 2; }
