/*
 * cases.cuh — the eight gpu-check kernels as test cases: inputs, launch
 * shape, outputs and how to compare them.
 */
#ifndef CORUN_GPU_CHECK_CASES_CUH
#define CORUN_GPU_CHECK_CASES_CUH

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "check.h"
#include "kernels.cuh"

enum OutType { OUT_F32, OUT_U32, OUT_U64 };

struct Output {
    void *dev;
    size_t count;
    OutType type;
};

/* One kernel with its data. Subclasses fill the fields in setup(scale):
 * 0 tiny (sanitizers), 1 medium (correctness under events), 2 large
 * (benchmarks). */
struct Case {
    const char *name = "";
    const char *shape = "";       /* for reports */
    const void *plain = nullptr;  /* &NAME */
    const void *worker = nullptr; /* &NAME__corun */
    const void *ahead = nullptr;  /* &NAME__corun_ahead (CORUN_SHARED kernels) */
    const void *grid_form = nullptr; /* &NAME__corun_grid */
    dim3 grid, block;
    size_t smem = 0;
    std::vector<void *> argv;     /* pointers to the argument values below */
    std::vector<Output> outs;
    std::vector<void *> allocs;

    virtual ~Case()
    {
        for (void *p : allocs) {
            cudaFree(p);
        }
    }
    virtual void setup(int scale) = 0;

    uint64_t tasks() const { return (uint64_t)grid.x * grid.y * grid.z; }
    unsigned threads() const { return block.x * block.y * block.z; }

    void *alloc(size_t bytes)
    {
        void *p = nullptr;
        CK(cudaMalloc(&p, bytes));
        allocs.push_back(p);
        return p;
    }
    /* Fills n floats with a fixed pseudo-random sequence in [lo, hi). */
    float *floats(size_t n, uint32_t seed, float lo, float hi)
    {
        std::vector<float> h(n);
        uint32_t x = seed * 2654435761u + 1;
        for (size_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            h[i] = lo + (hi - lo) * (float)(x >> 8) / 16777216.0f;
        }
        float *d = (float *)alloc(n * sizeof(float));
        CK(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        return d;
    }
    unsigned *uints(size_t n, uint32_t seed)
    {
        std::vector<unsigned> h(n);
        uint32_t x = seed * 2654435761u + 7;
        for (size_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            h[i] = x >> 4;
        }
        unsigned *d = (unsigned *)alloc(n * sizeof(unsigned));
        CK(cudaMemcpy(d, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
        return d;
    }
    void out(void *dev, size_t count, OutType t) { outs.push_back({dev, count, t}); }
    /* Poisons every output so unwritten elements are caught. */
    void poison(cudaStream_t s)
    {
        for (auto &o : outs) {
            size_t bytes = o.count * (o.type == OUT_U64 ? 8 : 4);
            if (o.type == OUT_U64) {
                CK(cudaMemsetAsync(o.dev, 0, bytes, s)); /* accumulators start at 0 */
            } else {
                CK(cudaMemsetAsync(o.dev, 0xff, bytes, s));
            }
        }
    }
    /* Copies the outputs to the host, concatenated as bytes. */
    std::vector<uint8_t> fetch()
    {
        std::vector<uint8_t> h;
        for (auto &o : outs) {
            size_t bytes = o.count * (o.type == OUT_U64 ? 8 : 4), at = h.size();
            h.resize(at + bytes);
            CK(cudaMemcpy(h.data() + at, o.dev, bytes, cudaMemcpyDeviceToHost));
        }
        return h;
    }
    /* Compares outputs: integers bitwise, floats within rel (NaN == NaN).
     * Returns the number of mismatches; *max_rel gets the largest error. */
    size_t compare(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b, double rel,
                   double *max_rel) const
    {
        size_t bad = 0, at = 0;
        *max_rel = 0;
        if (a.size() == b.size() && memcmp(a.data(), b.data(), a.size()) == 0) {
            return 0; /* bitwise equal: the common case */
        }
        for (auto &o : outs) {
            for (size_t i = 0; i < o.count; i++) {
                if (o.type == OUT_F32) {
                    float x, y;
                    memcpy(&x, &a[at + 4 * i], 4);
                    memcpy(&y, &b[at + 4 * i], 4);
                    if (std::isnan(x) && std::isnan(y)) {
                        continue;
                    }
                    double d = std::fabs((double)x - y) / std::fmax(std::fabs((double)y), 1e-30);
                    if (x == y) {
                        d = 0;
                    }
                    *max_rel = std::fmax(*max_rel, d);
                    bad += !(d <= rel);
                } else {
                    size_t w = o.type == OUT_U64 ? 8 : 4;
                    bad += memcmp(&a[at + w * i], &b[at + w * i], w) != 0;
                }
            }
            at += o.count * (o.type == OUT_U64 ? 8 : 4);
        }
        return bad;
    }
};

struct VaddCase : Case {
    float *a, *b, *c;
    int n;
    void setup(int scale) override
    {
        name = "vadd";
        shape = "1D, 256 thr";
        plain = (const void *)vadd;
        worker = (const void *)vadd__corun;
        grid_form = (const void *)vadd__corun_grid;
        n = scale == 2 ? (1 << 27) : scale == 1 ? (1 << 22) : (1 << 16);
        a = floats(n, 1, -1, 1);
        b = floats(n, 2, -1, 1);
        c = (float *)alloc(n * sizeof(float));
        block = dim3(256);
        grid = dim3((n + 255) / 256);
        argv = {&a, &b, &c, &n};
        out(c, n, OUT_F32);
    }
};

struct MatmulCase : Case {
    float *A, *B, *C;
    int n;
    void setup(int scale) override
    {
        name = "matmul";
        shape = "2D, 32x32 thr, smem";
        plain = (const void *)matmul;
        worker = (const void *)matmul__corun;
        grid_form = (const void *)matmul__corun_grid;
        ahead = (const void *)matmul__corun_ahead;
        n = scale == 2 ? 2048 : scale == 1 ? 1024 : 128;
        A = floats((size_t)n * n, 3, -1, 1);
        B = floats((size_t)n * n, 4, -1, 1);
        C = (float *)alloc((size_t)n * n * sizeof(float));
        block = dim3(32, 32);
        grid = dim3(n / 32, n / 32);
        argv = {&A, &B, &C, &n};
        out(C, (size_t)n * n, OUT_F32);
    }
};

struct StencilCase : Case {
    float *in, *o;
    int nx, ny, nz;
    void setup(int scale) override
    {
        name = "stencil3d";
        shape = "3D grid, 8x8x4 thr";
        plain = (const void *)stencil3d;
        worker = (const void *)stencil3d__corun;
        grid_form = (const void *)stencil3d__corun_grid;
        nx = scale >= 2 ? 512 : scale == 1 ? 256 : 32;
        ny = scale >= 2 ? 512 : scale == 1 ? 256 : 32;
        nz = scale == 3 ? 1024 : scale == 2 ? 256 : scale == 1 ? 128 : 16;
        size_t n = (size_t)nx * ny * nz;
        in = floats(n, 5, 0, 1);
        o = (float *)alloc(n * sizeof(float));
        CK(cudaMemset(o, 0, n * sizeof(float))); /* borders are never written */
        block = dim3(8, 8, 4);
        grid = dim3(nx / 8, ny / 8, nz / 4);
        argv = {&in, &o, &nx, &ny, &nz};
        out(o, n, OUT_F32);
    }
};

struct ReduceCase : Case {
    unsigned *in;
    unsigned long long *sum;
    int n;
    void setup(int scale) override
    {
        name = "reduce";
        shape = "1D, smem tree + atomicAdd";
        plain = (const void *)reduce;
        worker = (const void *)reduce__corun;
        grid_form = (const void *)reduce__corun_grid;
        ahead = (const void *)reduce__corun_ahead;
        n = scale == 2 ? (1 << 28) : scale == 1 ? (1 << 24) : (1 << 16);
        in = uints(n, 6);
        sum = (unsigned long long *)alloc(8);
        block = dim3(256);
        grid = dim3((n + 1023) / 1024);
        argv = {&in, &sum, &n};
        out(sum, 1, OUT_U64);
    }
};

struct BlackScholesCase : Case {
    float *call, *put, *S, *X, *T, R = 0.02f, V = 0.30f;
    int n;
    void setup(int scale) override
    {
        name = "blackscholes";
        shape = "1D, 128 thr, math";
        plain = (const void *)blackscholes;
        worker = (const void *)blackscholes__corun;
        grid_form = (const void *)blackscholes__corun_grid;
        n = scale == 3 ? (1 << 28) : scale == 2 ? (1 << 26) : scale == 1 ? (1 << 22) : (1 << 14);
        S = floats(n, 7, 5, 30);
        X = floats(n, 8, 1, 100);
        T = floats(n, 9, 0.25f, 10);
        call = (float *)alloc(n * sizeof(float));
        put = (float *)alloc(n * sizeof(float));
        block = dim3(128);
        grid = dim3((n + 127) / 128);
        argv = {&call, &put, &S, &X, &T, &R, &V, &n};
        out(call, n, OUT_F32);
        out(put, n, OUT_F32);
    }
};

struct TransposeCase : Case {
    float *in, *o;
    int w, h;
    void setup(int scale) override
    {
        name = "transpose";
        shape = "2D, 32x8 thr, smem tile";
        plain = (const void *)transpose;
        worker = (const void *)transpose__corun;
        grid_form = (const void *)transpose__corun_grid;
        ahead = (const void *)transpose__corun_ahead;
        w = scale == 2 ? 8192 : scale == 1 ? 2048 : 96;
        h = scale == 2 ? 8192 : scale == 1 ? 2048 : 64;
        in = floats((size_t)w * h, 10, -5, 5);
        o = (float *)alloc((size_t)w * h * sizeof(float));
        block = dim3(32, 8);
        grid = dim3(w / 32, h / 32);
        argv = {&in, &o, &w, &h};
        out(o, (size_t)w * h, OUT_F32);
    }
};

struct RaggedCase : Case {
    unsigned *o, *in;
    int n;
    void setup(int scale) override
    {
        name = "ragged";
        shape = "1D, early return";
        plain = (const void *)ragged;
        worker = (const void *)ragged__corun;
        grid_form = (const void *)ragged__corun_grid;
        n = scale == 2 ? (1 << 26) - 12345 : scale == 1 ? (1 << 22) - 12345 : 10000 - 17;
        in = uints(n, 11);
        o = (unsigned *)alloc((size_t)n * sizeof(unsigned));
        block = dim3(256);
        grid = dim3((n + 255) / 256 + (scale ? 1000 : 20)); /* whole blocks past n */
        argv = {&o, &in, &n};
        out(o, n, OUT_U32);
    }
};

struct LongTaskCase : Case {
    unsigned *o;
    int rounds;
    void setup(int scale) override
    {
        name = "longtask";
        shape = "1D, >= 1 ms tasks";
        plain = (const void *)longtask;
        worker = (const void *)longtask__corun;
        grid_form = (const void *)longtask__corun_grid;
        rounds = scale ? 30000 : 2000;
        block = dim3(256);
        grid = dim3(scale ? 2112 : 64);
        o = (unsigned *)alloc((size_t)grid.x * 256 * sizeof(unsigned));
        argv = {&o, &rounds};
        out(o, (size_t)grid.x * 256, OUT_U32);
    }
};

static inline std::vector<Case *> make_cases(int scale)
{
    std::vector<Case *> v = {new VaddCase,       new MatmulCase,    new StencilCase,
                             new ReduceCase,     new BlackScholesCase, new TransposeCase,
                             new RaggedCase,     new LongTaskCase};
    for (Case *c : v) {
        c->setup(scale);
    }
    return v;
}

#endif
