/* test_occupancy.c — the occupancy calculator against values computed by
 * hand from the rules of CUDA's cuda_occupancy.h, H100 defaults. */
#include "support.h"

#include <string.h>

#include "corun/corun.h"

static corun_gpu_desc h100(void)
{
    corun_gpu_desc d;
    corun_gpu_desc_h100(&d);
    return d;
}

static corun_occupancy occ(uint32_t threads, uint32_t regs, uint32_t smem_static, uint32_t smem_dyn,
                           bool optin)
{
    corun_gpu_desc d = h100();
    corun_kernel_shape s = {threads, regs, smem_static, smem_dyn, optin};
    corun_occupancy o;
    char why[256];
    assert_int_equal(corun_occupancy_calc(&d, &s, &o, why, sizeof(why)), CORUN_OK);
    return o;
}

static void vector_add_is_warp_limited(void **state)
{
    /* 256 threads = 8 warps: 64/8 = 8 by warps; 16 regs -> 512/warp,
     * 16384/512 = 32 warps per partition, 128/8 = 16 by regs; 1024 B reserve
     * -> 233472/1024 = 228 by smem; 32 by blocks. */
    corun_occupancy o = occ(256, 16, 0, 0, false);
    assert_int_equal(o.by_warps, 8);
    assert_int_equal(o.by_regs, 16);
    assert_int_equal(o.by_smem, 228);
    assert_int_equal(o.blocks_per_sm, 8);
    assert_int_equal(o.limiter, CORUN_OCC_LIMIT_WARPS);
}

static void matmul_32x32_two_blocks(void **state)
{
    /* 1024 threads = 32 warps -> 2 by warps; 32 regs -> 1024/warp, 16 per
     * partition, 64/32 = 2 by regs; 8192+1024 = 9216 B -> 25 by smem. */
    corun_occupancy o = occ(1024, 32, 8192, 0, false);
    assert_int_equal(o.by_warps, 2);
    assert_int_equal(o.by_regs, 2);
    assert_int_equal(o.by_smem, 25);
    assert_int_equal(o.blocks_per_sm, 2);
    assert_int_equal(o.smem_per_block, 9216);
}

static void forty_registers_cost_a_block(void **state)
{
    /* 40 regs -> 1280/warp, 16384/1280 = 12 warps per partition -> 48 warps,
     * 48/32 = 1 block: the drift a worker's extra registers can cause
     * (docs/decisions/0014-occupancy-pins.md). */
    corun_occupancy o = occ(1024, 40, 8192, 0, false);
    assert_int_equal(o.blocks_per_sm, 1);
    assert_int_equal(o.limiter, CORUN_OCC_LIMIT_REGS);
}

static void shared_memory_limited(void **state)
{
    /* 128 threads, 64 regs (2048/warp -> 8 warps/partition -> 32 warps -> 8
     * blocks), 48 KiB static: 49152+1024 = 50176 B -> 233472/50176 = 4. */
    corun_occupancy o = occ(128, 64, 48 * 1024, 0, false);
    assert_int_equal(o.by_regs, 8);
    assert_int_equal(o.by_smem, 4);
    assert_int_equal(o.blocks_per_sm, 4);
    assert_int_equal(o.limiter, CORUN_OCC_LIMIT_SMEM);
}

static void block_limit(void **state)
{
    /* 64 threads = 2 warps -> 32 by warps; 20 regs -> 640 rounded to 768 per
     * warp, 16384/768 = 21 per partition -> 84 warps -> 42; 32 by blocks. */
    corun_occupancy o = occ(64, 20, 0, 0, false);
    assert_int_equal(o.by_regs, 42);
    assert_int_equal(o.by_warps, 32);
    assert_int_equal(o.blocks_per_sm, 32);
}

static void odd_warp_count_with_many_registers(void **state)
{
    /* 96 threads = 3 warps; 100 regs -> 3200 rounded to 3328 per warp;
     * 16384/3328 = 4 per partition -> 16 warps -> 5 blocks. */
    corun_occupancy o = occ(96, 100, 0, 0, false);
    assert_int_equal(o.by_regs, 5);
    assert_int_equal(o.blocks_per_sm, 5);
    assert_int_equal(o.regs_per_block, 3 * 3328);
}

static void dynamic_shared_memory_with_optin(void **state)
{
    /* 50000 B dynamic + 1024 reserve = 51024 -> 51072 allocated; 4 per SM. */
    corun_occupancy o = occ(256, 32, 0, 50000, true);
    assert_int_equal(o.smem_per_block, 51072);
    assert_int_equal(o.blocks_per_sm, 4);
}

static void max_registers(void **state)
{
    /* 255 regs -> 8160 rounded to 8192 per warp -> 2 warps per partition ->
     * 8 warps -> 128 threads (4 warps) gives 2 blocks. */
    corun_occupancy o = occ(128, 255, 0, 0, false);
    assert_int_equal(o.blocks_per_sm, 2);
}

static void impossible_shapes_are_refused(void **state)
{
    corun_gpu_desc d = h100();
    corun_occupancy o;
    char why[256];
    struct {
        corun_kernel_shape s;
        const char *word;
    } bad[] = {
        {{0, 32, 0, 0, false}, "at least 1"},
        {{1025, 32, 0, 0, false}, "threads per block"},
        {{128, 256, 0, 0, false}, "registers per thread"},
        {{1024, 65, 0, 0, false}, "registers per block"},
        {{128, 32, 0, 50000, false}, "without opt-in"},
        {{128, 32, 100000, 200000, true}, "opt-in"},
    };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(why, 0, sizeof(why));
        assert_int_equal(corun_occupancy_calc(&d, &bad[i].s, &o, why, sizeof(why)), CORUN_ERANGE);
        assert_non_null(strstr(why, bad[i].word));
    }
}

static void gpu_description_is_checked(void **state)
{
    corun_gpu_desc d = h100();
    char why[256];

    assert_int_equal(corun_gpu_desc_check(&d, why, sizeof(why)), CORUN_OK);
    d.sm_count = 0;
    assert_int_equal(corun_gpu_desc_check(&d, why, sizeof(why)), CORUN_EINVAL);
    assert_non_null(strstr(why, "sm_count"));
    d = h100();
    d.max_threads_per_block = 4096;
    assert_int_equal(corun_gpu_desc_check(&d, why, sizeof(why)), CORUN_EINVAL);
    assert_non_null(strstr(why, "max_threads_per_block"));
}

static void status_strings(void **state)
{
    assert_string_equal(corun_strerror(CORUN_OK), "success");
    assert_string_equal(corun_status_name(CORUN_ERANGE), "CORUN_ERANGE");
    assert_string_equal(corun_strerror(12345), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vector_add_is_warp_limited),
        cmocka_unit_test(matmul_32x32_two_blocks),
        cmocka_unit_test(forty_registers_cost_a_block),
        cmocka_unit_test(shared_memory_limited),
        cmocka_unit_test(block_limit),
        cmocka_unit_test(odd_warp_count_with_many_registers),
        cmocka_unit_test(dynamic_shared_memory_with_optin),
        cmocka_unit_test(max_registers),
        cmocka_unit_test(impossible_shapes_are_refused),
        cmocka_unit_test(gpu_description_is_checked),
        cmocka_unit_test(status_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
