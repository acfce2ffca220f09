// A launch inside a lambda, and inside a generic lambda.
#include <functional>

__global__ void zero(float *p, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 0.0f;
}

void run(float *p, int n)
{
    auto clear = [&](cudaStream_t s) { zero<<<(n + 127) / 128, 128, 0, s>>>(p, n); };
    clear(0);
    std::function<void()> later = [=]() { zero<<<1, 32>>>(p, 32); };
    later();
    auto generic = [](auto *q, int m) { zero<<<(m + 63) / 64, 64>>>(q, m); };
    generic(p, n);
}
