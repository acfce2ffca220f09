// Experiment: a look-ahead loop that keeps corun's promises, against the bare
// look-ahead loop (lasb, ~+2.3 % at 8192^2) and corun's committed loop, in one
// run. (not built by default; nvcc -O3 -arch=sm_90 -I include -I gpu/check
//  bench/exp/transpose_lac.cu -lcuda, with -DLAC_NX32 for a 32-bit claim; run:
//  transpose_lac [ROUNDS]). What it found became the ahead entry
//  (corun_worker_loop_ahead, bench/results/h100-2026-11-22-ahead-ab.txt).
//
// lac: one task per claim, the next task's claim (lane-0 atomic, not
// warp-aggregated) and a cp.async of the signal words issued at the top of
// each task, so nothing waits on them; after the task the leader checks the
// signals and stores the claimed task as the next one -- it runs whatever the
// signals say, so the tasks run stay the prefix [0, done) -- and a worker told
// to leave claims nothing more. The limit is read once (the host writes it
// only while no worker runs). `done` and the task time every four tasks, as
// lasb. A halt waits for the rest of the task running, at most the task held
// and the one claimed with it: at most three tasks (a chunk of three).
// Variants: the bare tile or gpu-check's transpose body on the virtual index;
// `p`: a preset start (the host sets next = workers, worker w runs task w
// first, so no worker waits for a claim at all).
// % against the bare plain kernel of the same round; medians of 15, each
// launch after an untimed launch of its own form; outputs checked bitwise.
#include "exp_util.cuh"
#include "kernels.cuh"
#include "transpose_tile.cuh"
#include "transpose_la.cuh"

// The claim: corun_device.cuh's lane-0 add on next's low 32 bits with
// LAC_NX32 (one result register, what landed), else the same on all 64 bits
// (the result a register pair).
__device__ __forceinline__ uint32_t claim1_lane0(unsigned long long *p, uint32_t salt)
{
#ifdef LAC_NX32
    return corun__claim1_lane0((uint32_t *)p, salt);
#else
    unsigned long long old;
    asm volatile("{\n\t.reg .u32 l;\n\t.reg .u64 a;\n\t"
                 "mov.u32 l, %%laneid;\n\t"
                 "mul.lo.u32 l, l, %2;\n\t"
                 "mad.wide.u32 a, l, 8, %1;\n\t"
                 "atom.global.add.u64 %0, [a], 1;\n\t}"
                 : "=l"(old)
                 : "l"(p), "r"(salt)
                 : "memory");
    return (uint32_t)old;
#endif
}

template <int kBody, bool kPreset>
__global__ void __launch_bounds__(256, 8) k_lac(const corun_worker_arg wa, const float *in, float *out, int w, int h)
{
    __shared__ float tile[32][33];
    __shared__ uint4 sig;
    __shared__ uint32_t slot[2], lim, capsm, smid, pend, go, mean;
    __shared__ unsigned long long t0;
    corun_ctl *const ctl = wa.ctl;
    const bool leader = (threadIdx.x | threadIdx.y) == 0;
    if (leader) {
        capsm = (wa.base + blockIdx.x) / wa.workers_per_capsm;
        smid = corun_smid();
        pend = 0;
        mean = 0;
        atomicAdd(&ctl->started, 1u);
        const uint4 s = corun_ld_volatile128(&ctl->halt_gen);
        const uint32_t l = (uint32_t)*(volatile unsigned long long *)&ctl->task_limit;
        const bool stay = wa.gen >= s.x && capsm >= s.y && smid >= s.z && smid <= s.w;
        uint32_t f = l;
        if (kPreset) {
            f = wa.base + blockIdx.x; /* claimed by the host's next = workers */
        } else if (stay) {
            f = (uint32_t)atomicAdd((unsigned long long *)&ctl->next, 1ull);
        }
        lim = l;
        slot[0] = f < l ? f : l;
        go = stay;
        t0 = corun_globaltimer();
    }
    __syncthreads();
    const uint32_t gx = wa.grid_x, gy = wa.grid_y;
    for (uint32_t k = 0;; ++k) {
        const uint32_t f = slot[k & 1];
        if (f >= lim) break;
        const uint32_t q = f / gx;
        const uint3 b = make_uint3(f - q * gx, q % gy, q / gy);
        const uint32_t g = go;
        const bool ahead = leader && g != 0;
        uint32_t nx = 0;
        if (ahead) {
            const uint32_t d = (uint32_t)__cvta_generic_to_shared(&sig);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n\t"
                         "cp.async.commit_group;" ::"r"(d), "l"(&ctl->halt_gen) : "memory");
            nx = claim1_lane0((unsigned long long *)&ctl->next, g);
        }
        if (kBody) {
            transpose__corun_body(in, out, w, h, b, dim3(gx, gy, 1));
        } else {
            tile_body(in, out, w, h, b.x, b.y, tile);
        }
        if (leader) {
            const uint32_t l = lim;
            uint32_t n = l;
            if (ahead) {
                asm volatile("cp.async.wait_all;" ::: "memory");
                const uint4 s = sig;
                go = wa.gen >= s.x && capsm >= s.y && smid >= s.z && smid <= s.w;
                n = nx < l ? nx : l;
            }
            slot[(k + 1) & 1] = n;
            if (++pend == 4) {
                const unsigned long long now = corun_globaltimer();
                atomicAdd((unsigned long long *)&ctl->done, 4ull);
                mean = corun_chunk_ewma(mean, (now - t0) / 4);
                t0 = now;
                pend = 0;
            }
        }
        __syncthreads();
    }
    if (leader) {
        if (pend) atomicAdd((unsigned long long *)&ctl->done, (unsigned long long)pend);
        if (wa.base + blockIdx.x == 0) ctl->task_ns_seed = mean;
        atomicAdd(&ctl->exited, 1u);
    }
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 6;
    int sms, per = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, transpose__corun, 256, 0));
    const void *lacs[4] = {(const void *)k_lac<0, false>, (const void *)k_lac<1, false>,
                           (const void *)k_lac<0, true>, (const void *)k_lac<1, true>};
    const char *names[4] = {"lac", "lacb", "lacp", "lacbp"};
    for (int i = 0; i < 4; ++i) {
        int got = 0;
        cudaFuncAttributes fa;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, lacs[i], 256, 0));
        CK(cudaFuncGetAttributes(&fa, lacs[i]));
        printf("%s: %d blocks/SM, %d registers, %zu bytes local\n", names[i], got, fa.numRegs, fa.localSizeBytes);
    }
    corun_ctl *ctl;
    CK(cudaMalloc(&ctl, sizeof(corun_ctl)));
    for (int n : {8192, 16384}) {
        const int nw = per * sms;
        const ExpTranspose t(n, sms, nw, per);
        float *in = t.in, *out = t.out, *ref = t.ref;
        const dim3 grid = t.grid, blk = t.blk;
        const corun_ctl h = t.h;
        corun_ctl hp = t.h;
        hp.next = (uint64_t)nw;
        corun_worker_arg wa = {ctl, 0, 0, grid.x, grid.y, 1, (uint32_t)per};
        int w = n, hh = n;
        auto none = [] {};
        auto reset = [&] { CK(cudaMemcpy(ctl, &h, sizeof(h), cudaMemcpyHostToDevice)); };
        auto preset = [&] { CK(cudaMemcpy(ctl, &hp, sizeof(hp), cudaMemcpyHostToDevice)); };
        auto prep = [&](int i) { return [&, i] { i < 2 ? reset() : preset(); }; };
        auto plain = [&] { k_plain<<<grid, blk>>>(in, out, n, n); };
        auto cplain = [&] { transpose<<<grid, blk>>>(in, out, n, n); };
        auto corun = [&] {
            void *args[] = {&wa, &in, &out, &w, &hh};
            CK(cudaLaunchKernel((const void *)transpose__corun, dim3(nw), blk, args, 0, 0));
        };
        auto lasb = [&] {
            void *args[] = {&in, &out, &w, &hh, &ctl};
            CK(cudaLaunchKernel((const void *)k_la<1, 2>, dim3(nw), blk, args, 0, 0));
        };
        auto lac = [&](int i) {
            return [&, i] {
                void *args[] = {&wa, &in, &out, &w, &hh};
                CK(cudaLaunchKernel(lacs[i], dim3(nw), blk, args, 0, 0));
            };
        };
        k_plain<<<grid, blk>>>(in, ref, n, n);
        std::vector<char> want(t.bytes);
        CK(cudaMemcpy(want.data(), ref, t.bytes, cudaMemcpyDeviceToHost));
        bool ok = true;
        auto check = [&](const char *name, auto prep, auto run) {
            char what[64];
            snprintf(what, sizeof(what), "N=%d %s", n, name);
            ok = exp_same_output(what, out, want, prep, run) && ok;
        };
        check("corun", reset, corun);
        check("lasb", reset, lasb);
        for (int i = 0; i < 4; ++i) check(names[i], prep(i), lac(i));
        if (!ok) return 1;
        printf("N=%d (%u tiles, %d workers): outputs equal; %% against plain\n", n, t.tasks, nw);
        printf("  round   plain ms   cplain    corun     lasb      lac     lacb     lacp    lacbp\n");
        std::vector<std::vector<double>> all(7);
        for (int r = 0; r < rounds; ++r) {
            const float p = median_after_ms(15, none, plain);
            float v[7];
            v[0] = median_after_ms(15, none, cplain);
            v[1] = median_after_ms(15, reset, corun);
            v[2] = median_after_ms(15, reset, lasb);
            for (int i = 0; i < 4; ++i) v[3 + i] = median_after_ms(15, prep(i), lac(i));
            printf("  %5d  %8.4f", r, p);
            for (int i = 0; i < 7; ++i) {
                all[i].push_back(100 * (v[i] / p - 1));
                printf("  %+7.2f", 100 * (v[i] / p - 1));
            }
            printf("\n");
        }
        printf("  median          ");
        for (int i = 0; i < 7; ++i) printf("  %+7.2f", pct(all[i], 50));
        printf("\n");
    }
    return 0;
}
