/*
 * corun_launch.cuh — what a file transformed by corun-cc includes first.
 *
 * Device side: corun_device.cuh (the worker loop the generated workers
 * call). Host side: the launch shim that every rewritten launch calls,
 * through the launcher corun-cc writes next to each kernel:
 *
 *   k<<<g, b, smem, s>>>(x, y)
 *     -> k__corun_launch(::corun::config(g, b, smem, s), x, y)
 *     -> ::corun::launch<P...>(slot, cfg, "k", k, k__corun, k__corun_ahead, k__corun_grid,
 *                              x, y)
 *
 * ::corun::launch registers the kernel once with the process-wide context
 * (corun_default_ctx, corun_kernel_get with the CUfunctions of the plain
 * and the worker kernel, of the ahead entry where the kernel has one
 * (nullptr otherwise), of its grid form, and the slot's flags: CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS
 * where corun-cc left a worker unpinned because the pin made it spill,
 * `static ::corun::kernel_slot corun_slot(CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS)`),
 * passes pointers to the arguments, already of the
 * kernel's parameter types, and makes a stream-ordered launch
 * (corun_launch_stream): this thread enqueues the workers in the stream
 * itself. If corun cannot take the launch — no usable GPU runtime, the
 * simulator backend, a registration or launch refused (for example a worker
 * that would lose occupancy at this block size, or a stream capturing a
 * graph) — it launches the plain kernel with cudaLaunchKernel instead, so
 * the program still runs and gives the same results; corun_last_error()
 * says why.
 * Errors surface as they would for <<<...>>>: through cudaGetLastError().
 *
 * Header-only, C++11 and later; needs libcorun at link time.
 */
#ifndef CORUN_LAUNCH_CUH
#define CORUN_LAUNCH_CUH

#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "corun/corun.h"
#include "corun/corun_device.cuh"

namespace corun {

/* The <<<grid, block, smem, stream>>> of a launch; int and dim3 both
 * convert, as they do for <<<...>>>. */
struct config {
    dim3 grid;
    dim3 block;
    size_t smem;
    cudaStream_t stream;
    __host__ config(dim3 g, dim3 b, size_t shared = 0, cudaStream_t s = 0)
        : grid(g), block(b), smem(shared), stream(s)
    {
    }
};

/* What a launcher remembers about its kernel between launches, and the
 * flags it registers the kernel with (CORUN_KERNEL_*). Constant-initialised:
 * a launcher's static slot needs no guard. */
struct kernel_slot {
    std::atomic<corun_kernel *> k{nullptr};
    std::atomic<int> plain_only{0}; /* registration failed: always plain */
    const uint32_t flags;
    constexpr explicit kernel_slot(uint32_t f = 0) : flags(f) {}
};

namespace detail {

/* How many launches went through corun and how many the shim ran plain
 * itself, why the first of those did, and how many of corun's ran plain
 * (short kernels, corun_ctx_plain_launches) and how many in the grid form
 * (corun_ctx_grid_launches): written at exit, as one JSON
 * line appended to the file named by CORUN_LAUNCH_STATS, when that is set
 * (scripts/gpu-apps.sh uses it to show that a transformed program really
 * ran its workers). */
struct launch_stats {
    std::atomic<unsigned long> corun{0};
    std::atomic<unsigned long> plain{0};
    std::atomic<int> have_reason{0};
    char reason[240];
};

inline launch_stats &stats()
{
    static launch_stats s;
    return s;
}

inline corun_ctx *gpu_ctx();

inline void write_stats()
{
    char path[256];
    FILE *f = corun_setting_get("launch_stats", path, sizeof(path)) == CORUN_OK && path[0] != '\0'
                  ? std::fopen(path, "a")
                  : nullptr;
    if (f == nullptr) {
        return;
    }
    launch_stats &s = stats();
    corun_ctx *ctx = gpu_ctx();
    std::fprintf(f, "{\"through_corun\": %lu, \"plain\": %lu, \"corun_ran_plain\": %llu, "
                    "\"corun_ran_grid\": %llu, \"first_plain_reason\": \"%s\"}\n",
                 s.corun.load(), s.plain.load(),
                 ctx != nullptr ? (unsigned long long)corun_ctx_plain_launches(ctx) : 0ull,
                 ctx != nullptr ? (unsigned long long)corun_ctx_grid_launches(ctx) : 0ull,
                 s.have_reason.load() == 2 ? s.reason : "");
    std::fclose(f);
}

inline void count(bool through_corun, const char *why)
{
    static const bool registered = [] {
        char path[256];
        if (corun_setting_get("launch_stats", path, sizeof(path)) == CORUN_OK && path[0] != '\0') {
            std::atexit(write_stats);
        }
        return true;
    }();
    (void)registered;
    launch_stats &s = stats();
    if (through_corun) {
        s.corun.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    s.plain.fetch_add(1, std::memory_order_relaxed);
    int expect = 0;
    if (s.have_reason.compare_exchange_strong(expect, 1)) {
        size_t i = 0;
        for (; why != nullptr && why[i] != '\0' && i + 1 < sizeof(s.reason); i++) {
            const char c = why[i];
            s.reason[i] = (c == '"' || c == '\\' || (unsigned char)c < 32) ? '\'' : c;
        }
        s.reason[i] = '\0';
        s.have_reason.store(2);
    }
}

/* The process-wide context if it runs a program's kernels, else NULL (the
 * simulator cannot). Decided once. */
inline corun_ctx *gpu_ctx()
{
    static corun_ctx *const ctx = [] {
        corun_ctx *c = corun_default_ctx();
        if (c != nullptr && !corun_ctx_runs_cuda(c)) {
            c = nullptr;
        }
        return c;
    }();
    return ctx;
}

/* A runtime call of ours failed: do not leave its error for the program's
 * next cudaGetLastError(), unless the program had one pending already. */
inline void forget_error(cudaError_t before)
{
    if (before == cudaSuccess) {
        (void)cudaGetLastError();
    }
}

inline corun_kernel *registered(kernel_slot &slot, corun_ctx *ctx, const char *name,
                                const void *plain, const void *worker, const void *ahead,
                                const void *grid)
{
    corun_kernel *k = slot.k.load(std::memory_order_acquire);
    if (k != nullptr || slot.plain_only.load(std::memory_order_relaxed)) {
        return k;
    }
    const cudaError_t before = cudaPeekAtLastError();
    cudaFunction_t fp = nullptr, fw = nullptr, fa = nullptr, fg = nullptr;
    if (cudaGetFuncBySymbol(&fp, plain) != cudaSuccess ||
        cudaGetFuncBySymbol(&fw, worker) != cudaSuccess) {
        forget_error(before);
        slot.plain_only.store(1, std::memory_order_relaxed);
        return nullptr;
    }
    if (ahead != nullptr && cudaGetFuncBySymbol(&fa, ahead) != cudaSuccess) {
        forget_error(before); /* runs without it */
        fa = nullptr;
    }
    if (grid != nullptr && cudaGetFuncBySymbol(&fg, grid) != cudaSuccess) {
        forget_error(before); /* runs without it */
        fg = nullptr;
    }
    corun_kernel_desc d;
    std::memset(&d, 0, sizeof(d));
    d.name = name;
    d.plain = (void *)fp;
    d.worker = (void *)fw;
    d.ahead = (void *)fa;
    d.grid = (void *)fg;
    d.flags = slot.flags;
    if (corun_kernel_get(ctx, &d, &k) != CORUN_OK || k == nullptr) {
        slot.plain_only.store(1, std::memory_order_relaxed);
        return nullptr;
    }
    slot.k.store(k, std::memory_order_release);
    return k;
}

} // namespace detail

/* Launches through corun, or the plain kernel when corun cannot; args
 * holds one pointer per kernel parameter. Returns what the launch returned
 * (cudaSuccess once corun accepted it). */
inline cudaError_t launch_ptrs(kernel_slot &slot, const config &cfg, const char *name,
                               const void *plain, const void *worker, const void *ahead,
                               const void *grid, void **args)
{
    corun_ctx *ctx = detail::gpu_ctx();
    const char *why = "no usable GPU backend (corun_default_ctx)";
    if (ctx != nullptr) {
        corun_kernel *k = detail::registered(slot, ctx, name, plain, worker, ahead, grid);
        why = corun_last_error()[0] != '\0' ? corun_last_error()
                                             : "kernel not registered (corun_kernel_get)";
        if (k != nullptr) {
            corun_launch_attr attr;
            corun_ctx_launch_attr(ctx, &attr); /* CORUN_LAUNCH_CLASS, _CAPSM */
            const corun_dim3 g = {cfg.grid.x, cfg.grid.y, cfg.grid.z};
            const corun_dim3 b = {cfg.block.x, cfg.block.y, cfg.block.z};
            if (corun_launch_stream(ctx, k, g, b, (uint32_t)cfg.smem, args, &attr,
                                    (void *)cfg.stream, nullptr) == CORUN_OK) {
                detail::count(true, nullptr);
                return cudaSuccess;
            }
            why = corun_last_error();
        }
    }
    detail::count(false, why);
    return cudaLaunchKernel(plain, cfg.grid, cfg.block, args, cfg.smem, cfg.stream);
}

namespace detail {
template <typename T> struct same {
    typedef T type;
};
/* A parameter's type as it appears in its function's type: without
 * top-level const, volatile or __restrict__ (the host compiler keeps
 * __restrict__ in function types built from template arguments). */
template <typename T> struct unrestrict {
    typedef T type;
};
template <typename T> struct unrestrict<T *__restrict__> {
    typedef T *type;
};
template <typename T>
using param_t = typename unrestrict<typename std::remove_cv<T>::type>::type;
} // namespace detail

/* The typed front of launch_ptrs. P are the kernel's parameter types, given
 * explicitly by the launcher and never deduced (so a __restrict__ or const
 * parameter, or an overloaded kernel name, cannot make deduction
 * disagree); args arrive converted exactly as <<<...>>> converts them. */
template <typename... P>
inline cudaError_t launch(kernel_slot &slot, const config &cfg, const char *name,
                          typename detail::same<void (*)(detail::param_t<P>...)>::type plain,
                          typename detail::same<void (*)(corun_worker_arg, detail::param_t<P>...)>::type worker,
                          typename detail::same<void (*)(corun_worker_arg, detail::param_t<P>...)>::type ahead,
                          typename detail::same<void (*)(corun_worker_arg, detail::param_t<P>...)>::type grid,
                          typename detail::same<P>::type... args)
{
    void *ptrs[sizeof...(P) + 1] = {(void *)&args..., nullptr};
    return launch_ptrs(slot, cfg, name, (const void *)plain, (const void *)worker,
                       (const void *)ahead, (const void *)grid, ptrs);
}

/* cudaLaunchKernel(k, grid, block, args, smem, stream) for a kernel of the
 * transformed file: the same, with the worker added by corun-cc, and the
 * flags its launcher registers it with (corun-cc passes them where they
 * are not 0). */
inline cudaError_t launch_kernel(const char *name, uint32_t flags, const void *worker,
                                 const void *plain, dim3 grid, dim3 block, void **args,
                                 size_t smem = 0, cudaStream_t stream = 0)
{
    kernel_slot slot(flags); /* corun_kernel_get finds an earlier registration */
    return launch_ptrs(slot, config(grid, block, smem, stream), name, plain, worker, nullptr,
                       nullptr, args);
}

template <typename F>
inline cudaError_t launch_kernel(const char *name, uint32_t flags, const void *worker, F *plain,
                                 dim3 grid, dim3 block, void **args, size_t smem = 0,
                                 cudaStream_t stream = 0)
{
    return launch_kernel(name, flags, worker, (const void *)plain, grid, block, args, smem,
                         stream);
}

template <typename F>
inline cudaError_t launch_kernel(const char *name, const void *worker, F *plain, dim3 grid,
                                 dim3 block, void **args, size_t smem = 0,
                                 cudaStream_t stream = 0)
{
    return launch_kernel(name, 0u, worker, (const void *)plain, grid, block, args, smem, stream);
}

/* A launch through a function pointer whose type some kernels of the file
 * have: corun-cc passes those kernels, each with its launcher (or its name,
 * flags and worker, for cudaLaunchKernel); the pointer's value picks one at
 * run time, and any other value (a kernel of another file) is launched
 * plainly, as written:
 *
 *   fp<<<g, b, smem, s>>>(x, y)
 *     -> ::corun::launch_through(::corun::config(g, b, smem, s))
 *            (fp, {{::ka, ::ka__corun_launch}, {::kb, ::kb__corun_launch}})(x, y)
 *
 * The chain of calls evaluates the configuration, then fp, then the
 * arguments, each once: the order nvcc gives <<<...>>> (its
 * cudaConfigureCall comes first). P are the pointer's parameter types, so
 * the arguments convert as they would in the launch, and an overloaded
 * kernel name in the list resolves to the overload of the pointer's type. */
template <typename... P> struct launch_target {
    void (*plain)(P...);
    void (*launch)(const config &, P...);
};

template <typename... P> class launch_through_call {
  public:
    launch_through_call(const config &cfg, void (*fp)(P...),
                        std::initializer_list<launch_target<P...>> targets)
        : cfg_(cfg), fp_(fp), targets_(targets)
    {
    }
    /* targets_ refers to the braced list, which lives until the end of
     * the launch's full-expression: this runs within it. */
    void operator()(P... args) const
    {
        for (const launch_target<P...> &t : targets_) {
            if (t.plain == fp_) {
                t.launch(cfg_, args...);
                return;
            }
        }
        detail::count(false, "a kernel of another file, launched through a function pointer");
        fp_<<<cfg_.grid, cfg_.block, cfg_.smem, cfg_.stream>>>(args...);
    }

  private:
    config cfg_;
    void (*fp_)(P...);
    std::initializer_list<launch_target<P...>> targets_;
};

class launch_through_config {
  public:
    explicit launch_through_config(const config &cfg) : cfg_(cfg) {}
    template <typename... P>
    launch_through_call<P...>
    operator()(void (*fp)(P...),
               typename detail::same<std::initializer_list<launch_target<P...>>>::type t) const
    {
        return launch_through_call<P...>(cfg_, fp, t);
    }

  private:
    config cfg_;
};

inline launch_through_config launch_through(const config &cfg)
{
    return launch_through_config(cfg);
}

/* The same for cudaLaunchKernel(fp, grid, block, args, smem, stream):
 * each kernel with the name and flags its launcher registers it with. */
template <typename... P> struct kernel_target {
    const char *name;
    uint32_t flags;
    void (*plain)(P...);
    void (*worker)(corun_worker_arg, P...);
};

template <typename... P>
inline cudaError_t
launch_kernel_through(void (*fp)(P...),
                      typename detail::same<std::initializer_list<kernel_target<P...>>>::type t,
                      dim3 grid, dim3 block, void **args, size_t smem = 0,
                      cudaStream_t stream = 0)
{
    for (const kernel_target<P...> &k : t) {
        if (k.plain == fp) {
            return launch_kernel(k.name, k.flags, (const void *)k.worker, (const void *)k.plain,
                                 grid, block, args, smem, stream);
        }
    }
    detail::count(false, "a kernel of another file, launched through a function pointer");
    return cudaLaunchKernel((const void *)fp, grid, block, args, smem, stream);
}

/* cudaFuncSetAttribute / cudaFuncSetCacheConfig on a transformed kernel
 * apply to its worker too (a worker needs, say, the same dynamic shared
 * memory limit). The plain kernel's result is returned; a worker that
 * cannot take the setting is launched plain later. */
inline cudaError_t func_set_attribute(const void *worker, const void *plain,
                                      cudaFuncAttribute attr, int value)
{
    const cudaError_t e = cudaFuncSetAttribute(plain, attr, value);
    if (e == cudaSuccess && cudaFuncSetAttribute(worker, attr, value) != cudaSuccess) {
        detail::forget_error(cudaSuccess);
    }
    return e;
}

template <typename F>
inline cudaError_t func_set_attribute(const void *worker, F *plain, cudaFuncAttribute attr,
                                      int value)
{
    return func_set_attribute(worker, (const void *)plain, attr, value);
}

inline cudaError_t func_set_cache_config(const void *worker, const void *plain,
                                         cudaFuncCache cfg)
{
    const cudaError_t e = cudaFuncSetCacheConfig(plain, cfg);
    if (e == cudaSuccess && cudaFuncSetCacheConfig(worker, cfg) != cudaSuccess) {
        detail::forget_error(cudaSuccess);
    }
    return e;
}

template <typename F>
inline cudaError_t func_set_cache_config(const void *worker, F *plain, cudaFuncCache cfg)
{
    return func_set_cache_config(worker, (const void *)plain, cfg);
}

} // namespace corun

#endif /* CORUN_LAUNCH_CUH */
