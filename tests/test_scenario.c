/* test_scenario.c — scenario files: the built-in one, and every kind of bad
 * input giving a message that names the file and the bad value. */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "scenario/scenario.h"

static corun__scenario sc;

static void builtin_parses(void **state)
{
    char why[512] = "";

    assert_int_equal(corun__scenario_parse(corun__scenario_default_text(), "builtin", &sc, why,
                                           sizeof(why)),
                     CORUN_OK);
    assert_string_equal(sc.name, "ls-batch");
    assert_int_equal(sc.napps, 2);
    assert_int_equal(sc.reserve_capsm, 8);
    assert_true(sc.has_reserve);
    assert_int_equal(sc.gpu.sm_count, 132);
    assert_int_equal(sc.apps[0].kernel.grid.x, 2112);
    assert_int_equal(sc.apps[0].kernel.block.x, 256);
    assert_int_equal(sc.apps[0].attr.cls, CORUN_CLASS_BATCH);
    assert_int_equal(sc.apps[0].arrival.kind, CORUN_ARRIVAL_LOOP);
    assert_int_equal(sc.apps[0].kernel.task_ns.kind, CORUN_DIST_UNIFORM);
    assert_float_equal(sc.apps[0].kernel.task_ns.a, 1.5e6, 1e-6);
    assert_int_equal(sc.apps[1].attr.cls, CORUN_CLASS_LS);
    assert_int_equal(sc.apps[1].arrival.kind, CORUN_ARRIVAL_RANDOM);
    assert_float_equal(sc.apps[1].arrival.interval.a, 5e6, 1e-6);
    assert_float_equal(sc.apps[1].kernel.task_ns.a, 1e5, 1e-6);
    assert_float_equal(sc.duration_ns, 1e9, 1e-3);
}

static void file_on_disk_matches_builtin(void **state)
{
    corun__scenario a;
    char why[512] = "";

    assert_int_equal(corun__scenario_load(corun_test_path("bench/scenarios/ls-batch.json"), &a, why,
                                          sizeof(why)),
                     CORUN_OK);
    assert_int_equal(corun__scenario_parse(corun__scenario_default_text(), "b", &sc, why,
                                           sizeof(why)),
                     CORUN_OK);
    assert_int_equal(a.napps, sc.napps);
    assert_memory_equal(&a.apps[0].kernel, &sc.apps[0].kernel, sizeof(a.apps[0].kernel));
}

/* Parses text that must fail, and checks the message has every word. */
static void expect_error(const char *text, int code, const char *w1, const char *w2)
{
    char why[512] = "";

    assert_int_equal(corun__scenario_parse(text, "t.json", &sc, why, sizeof(why)), code);
    if (strstr(why, w1) == NULL || (w2 != NULL && strstr(why, w2) == NULL)) {
        fail_msg("message '%s' lacks '%s'/'%s'", why, w1, w2 ? w2 : "");
    }
}

#define APP_OK "{\"name\":\"a\",\"arrival\":{\"kind\":\"loop\"},\"kernel\":{\"grid\":4,\"block\":64,\"task_us\":10}}"

static void bad_inputs_are_named(void **state)
{
    expect_error("{", CORUN_EPARSE, "t.json:1:", NULL);
    expect_error("[]", CORUN_EPARSE, "must be an object", NULL);
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[]}", CORUN_EPARSE, "apps", "1 to 16");
    expect_error("{\"name\":\"x\",\"apps\":[" APP_OK "]}", CORUN_EPARSE, "missing 'duration_ms'", NULL);
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"bogus\":1,\"apps\":[" APP_OK "]}", CORUN_EPARSE,
                 "unknown key 'bogus'", NULL);
    expect_error("{\"name\":\"x\",\"duration_ms\":-5,\"apps\":[" APP_OK "]}", CORUN_EPARSE,
                 "duration_ms", "outside");
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\",\"arrival\":{\"kind\":\"loop\"},"
                 "\"kernel\":{\"grid\":4,\"block\":[64,32],\"task_us\":10}}]}",
                 CORUN_EPARSE, "apps[0].kernel", "2048 threads");
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\",\"arrival\":{\"kind\":\"loop\"},"
                 "\"kernel\":{\"grid\":0,\"block\":64,\"task_us\":10}}]}",
                 CORUN_EPARSE, "'grid'[0] = 0", NULL);
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\",\"arrival\":{\"kind\":\"loop\"},"
                 "\"kernel\":{\"grid\":4,\"block\":64,\"gird\":3,\"task_us\":10}}]}",
                 CORUN_EPARSE, "unknown key 'gird'", "apps[0].kernel");
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\",\"capsm\":500,"
                 "\"arrival\":{\"kind\":\"loop\"},\"kernel\":{\"grid\":4,\"block\":64,\"task_us\":10}}]}",
                 CORUN_EPARSE, "'capsm' = 500", "132 SMs");
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"reserve_capsm\":200,\"apps\":[" APP_OK "]}",
                 CORUN_EPARSE, "reserve_capsm", "outside");
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\",\"arrival\":{\"kind\":\"soon\"},"
                 "\"kernel\":{\"grid\":4,\"block\":64,\"task_us\":10}}]}",
                 CORUN_EPARSE, "'kind' = 'soon'", NULL);
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\",\"arrival\":{\"kind\":\"loop\"},"
                 "\"kernel\":{\"grid\":4,\"block\":64,\"task_us\":{\"dist\":\"uniform\",\"min\":5,\"max\":2}}}]}",
                 CORUN_EPARSE, "below 'min'", NULL);
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[" APP_OK "," APP_OK "]}", CORUN_EPARSE,
                 "used twice", NULL);
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"gpu\":{\"sm_count\":0},\"apps\":[" APP_OK "]}",
                 CORUN_EPARSE, "sm_count", NULL);
    expect_error("{\"name\":\"x\",\"name\":\"y\",\"duration_ms\":1,\"apps\":[" APP_OK "]}", CORUN_EPARSE,
                 "duplicate", NULL);
    /* found by fuzz/fuzz_scenario.c: an unnamed app made an unnamed kernel,
     * which profiling then failed on without saying why */
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"\",\"arrival\":"
                 "{\"kind\":\"loop\"},\"kernel\":{\"grid\":4,\"block\":64,\"task_us\":10}}]}",
                 CORUN_EPARSE, "apps[0]", "'name' is empty");
}

static void intensities_and_bandwidth_bound_kernels(void **state)
{
    char why[512] = "";

    assert_int_equal(corun__scenario_parse(
                         "{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\","
                         "\"arrival\":{\"kind\":\"loop\"},\"kernel\":{\"grid\":4,\"block\":64,"
                         "\"task_us\":10,\"mem_frac\":0.9,\"mem_bw\":1.6,\"compute\":0.25}}]}",
                         "t.json", &sc, why, sizeof(why)),
                     CORUN_OK);
    assert_float_equal(sc.apps[0].kernel.mem_bw, 1.6, 1e-12);
    assert_float_equal(sc.apps[0].compute, 0.25, 1e-12);
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\",\"arrival\":{\"kind\":\"loop\"},"
                 "\"kernel\":{\"grid\":4,\"block\":64,\"task_us\":10,\"mem_bw\":17}}]}",
                 CORUN_EPARSE, "'mem_bw' = 17", "outside");
    expect_error("{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\",\"arrival\":{\"kind\":\"loop\"},"
                 "\"kernel\":{\"grid\":4,\"block\":64,\"task_us\":10,\"compute\":1.5}}]}",
                 CORUN_EPARSE, "'compute' = 1.5", "outside");
}

/* "kernels": a request's kernels in order, real ones named by "code". */
static void chains_and_real_kernels(void **state)
{
    char why[512] = "";
    const corun__app *ls;

    if (corun__scenario_load(corun_test_path("bench/scenarios/ls-chain.json"), &sc, why, sizeof(why)) !=
        CORUN_OK) {
        fail_msg("%s", why);
    }
    ls = &sc.apps[1];
    assert_int_equal(corun__app_nkernels(ls), 3);
    assert_string_equal(corun__app_kernel(ls, 0)->name, "ls.matmul");
    assert_string_equal(corun__app_kernel(ls, 1)->name, "ls.reduce");
    assert_string_equal(corun__app_kernel(ls, 2)->name, "ls.vadd");
    assert_int_equal(corun__app_kernel(ls, 0)->code, CORUN_CODE_BUILTIN);
    assert_int_equal(corun__app_kernel(ls, 0)->builtin, CORUN_BUILTIN_MATMUL);
    assert_int_equal(corun__app_kernel(ls, 1)->builtin, CORUN_BUILTIN_REDUCE);
    assert_int_equal(corun__app_kernel(ls, 2)->builtin, CORUN_BUILTIN_VADD);
    assert_int_equal(corun__app_kernel(ls, 0)->grid.y, 2);
    assert_int_equal(sc.apps[0].nthen, 0);
    assert_int_equal(sc.apps[0].kernel.code, CORUN_CODE_SYNTHETIC);
    if (corun__scenario_load(corun_test_path("bench/scenarios/fgqos-kernels-cuda.json"), &sc, why,
                             sizeof(why)) != CORUN_OK) {
        fail_msg("%s", why);
    }
    {
        size_t i, apps = 0;
        for (i = 0; i < sc.napps; i++) {
            apps += sc.apps[i].kernel.builtin == CORUN_BUILTIN_MD5SEARCH ||
                    sc.apps[i].kernel.builtin == CORUN_BUILTIN_BACKPROP;
            assert_int_equal(sc.apps[i].kernel.code, CORUN_CODE_BUILTIN);
        }
        assert_int_equal(apps, 2);
    }

#define APP_HEAD "{\"name\":\"x\",\"duration_ms\":1,\"apps\":[{\"name\":\"a\",\"arrival\":{\"kind\":\"loop\"},"
#define K64 "{\"grid\":4,\"block\":64,\"task_us\":10}"
    expect_error(APP_HEAD "\"kernel\":" K64 ",\"kernels\":[" K64 "]}]}", CORUN_EPARSE, "apps[0]",
                 "one of 'kernel'");
    expect_error(APP_HEAD "\"class\":\"ls\"}]}", CORUN_EPARSE, "apps[0]", "one of 'kernel'");
    expect_error(APP_HEAD "\"kernels\":[]}]}", CORUN_EPARSE, "'kernels'", "1 to 8");
    expect_error(APP_HEAD "\"kernels\":[" K64 "," K64 "," K64 "," K64 "," K64 "," K64 "," K64 "," K64
                 "," K64 "]}]}",
                 CORUN_EPARSE, "'kernels'", "1 to 8");
    expect_error(APP_HEAD "\"kernels\":[" K64 ",{\"grid\":4,\"block\":64,\"task_us\":10,"
                 "\"code\":\"fft\"}]}]}",
                 CORUN_EPARSE, "apps[0].kernels[1]", "'code' = 'fft'");
    expect_error(APP_HEAD "\"kernels\":[{\"grid\":4,\"block\":64,\"task_us\":10,"
                 "\"code\":\"vadd\"}]}]}",
                 CORUN_EPARSE, "apps[0].kernels[0]", "[256, 1, 1]");
    expect_error(APP_HEAD "\"kernel\":{\"grid\":[4,4],\"block\":256,\"task_us\":10,"
                 "\"code\":\"reduce\"}}]}",
                 CORUN_EPARSE, "apps[0].kernel", "1D grid");
    /* gpu/apps' kernels: md5search (block 256, 1D), backprop (block 16 x 16, 2D) */
    expect_error(APP_HEAD "\"kernel\":{\"grid\":[4,4],\"block\":256,\"task_us\":10,"
                 "\"code\":\"md5search\"}}]}",
                 CORUN_EPARSE, "apps[0].kernel", "1D grid");
    expect_error(APP_HEAD "\"kernel\":{\"grid\":4,\"block\":256,\"task_us\":10,"
                 "\"code\":\"backprop\"}}]}",
                 CORUN_EPARSE, "apps[0].kernel", "[16, 16, 1]");
    expect_error(APP_HEAD "\"kernels\":[{\"name\":\"k\",\"grid\":4,\"block\":64,\"task_us\":10},"
                 "{\"name\":\"k\",\"grid\":4,\"block\":64,\"task_us\":10}]}]}",
                 CORUN_EPARSE, "apps[0].kernels[1]", "'k' twice");
#undef K64
#undef APP_HEAD
}

/* Every scenario file of the experiments parses, says what it is, and its
 * kernels of one name behave alike (a profile is per kernel name). */
static void scenario_files_parse(void **state)
{
    static const char *const files[] = {
        "flep-hpf-pairs.json",  "flep-hpf-2kernel.json", "flep-hpf-spatial.json",
        "flep-spatial-pairs.json", "flep-srt-pairs.json", "flep-srt-2kernel.json",
        "flep-srt-3kernel.json", "flep-ffs-pairs.json",  "flep-ffs-2to1.json",
        "slate-pairs.json",     "slate-pair-rg-bs.json", "slate-pair-tr-rg.json",
        "slate-pair-mm-bs.json", "ls-batch.json",        "ls-batch-200us.json",
        "ls-batch-20ms.json",   "ls-chain.json",         "fgqos-kernels.json",
        "fgqos-kernels-cuda.json", "hsm-pair.json",
    };
    size_t f, i, j;

    for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char rel[128], why[512] = "";
        snprintf(rel, sizeof(rel), "bench/scenarios/%s", files[f]);
        if (corun__scenario_load(corun_test_path(rel), &sc, why, sizeof(why)) != CORUN_OK) {
            fail_msg("%s", why);
        }
        assert_true(strlen(sc.description) > 20);
        for (i = 0; i < sc.napps; i++) {
            for (j = 0; j < i; j++) {
                const corun__kspec *a = &sc.apps[i].kernel, *b = &sc.apps[j].kernel;
                if (strcmp(a->name, b->name) == 0) {
                    assert_memory_equal(&a->task_ns, &b->task_ns, sizeof(a->task_ns));
                    assert_memory_equal(&a->block, &b->block, sizeof(a->block));
                    assert_true(a->mem_bw == b->mem_bw && a->mem_frac == b->mem_frac);
                }
            }
        }
    }
}

static void missing_file(void **state)
{
    char why[512] = "";

    assert_int_equal(corun__scenario_load("/nonexistent/x.json", &sc, why, sizeof(why)), CORUN_EIO);
    assert_non_null(strstr(why, "/nonexistent/x.json"));
}

/* A file is read whole: what follows a NUL byte is not ignored. */
static void nul_byte_in_file(void **state)
{
    static const char text[] = "{\"name\":\"x\",\"duration_ms\":1,\"apps\":[" APP_OK "]}";
    char dir[256], path[512], why[512] = "";
    FILE *f;

    corun_test_mkdtemp(dir, sizeof(dir), "nul");
    snprintf(path, sizeof(path), "%s/s.json", dir);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, sizeof(text) - 1, f), sizeof(text) - 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(corun__scenario_load(path, &sc, why, sizeof(why)), CORUN_OK);
    f = fopen(path, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite("\0{", 1, 2, f), 2);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(corun__scenario_load(path, &sc, why, sizeof(why)), CORUN_EPARSE);
    if (strstr(why, path) == NULL || strstr(why, "NUL byte at offset") == NULL) {
        fail_msg("message '%s'", why);
    }
    corun_test_rmdir(dir);
}

/* A scenario by name from anywhere: the path as given, CORUN_SCENARIOS,
 * then (for the build folder's programs) the source tree's bench/scenarios/. */
static void found_by_name(void **state)
{
    corun__settings set;
    char dir[256], path[4096], file[512], why[1024] = "", src[4096];
    FILE *f;

    corun__settings_default(&set);
    snprintf(src, sizeof(src), "%s", corun_test_path("bench/scenarios/ls-batch.json"));
    assert_int_equal(corun__scenario_find("ls-batch", &set, path, sizeof(path), why, sizeof(why)),
                     CORUN_OK);
    assert_string_equal(path, src);
    assert_int_equal(corun__scenario_find("scenarios/slate-pairs.json", &set, path, sizeof(path),
                                          why, sizeof(why)),
                     CORUN_OK);
    assert_string_equal(path, corun_test_path("bench/scenarios/slate-pairs.json"));
    assert_int_equal(corun__scenario_find("bench/scenarios/hsm-pair", &set, path, sizeof(path), why,
                                          sizeof(why)),
                     CORUN_OK);
    assert_string_equal(path, corun_test_path("bench/scenarios/hsm-pair.json"));
    /* CORUN_SCENARIOS comes before the installed and source folders */
    corun_test_mkdtemp(dir, sizeof(dir), "find");
    snprintf(file, sizeof(file), "%s/ls-batch.json", dir);
    f = fopen(file, "w");
    assert_non_null(f);
    fputs("{}", f);
    fclose(f);
    snprintf(set.scenarios, sizeof(set.scenarios), "%s", dir);
    assert_int_equal(corun__scenario_find("ls-batch", &set, path, sizeof(path), why, sizeof(why)),
                     CORUN_OK);
    assert_string_equal(path, file);
    assert_int_equal(corun__scenario_default_dir(&set, path, sizeof(path)), CORUN_OK);
    assert_string_equal(path, dir);
    /* an absolute path is taken as given, found or not */
    assert_int_equal(corun__scenario_find("/nonexistent/x.json", &set, path, sizeof(path), why,
                                          sizeof(why)),
                     CORUN_OK);
    assert_string_equal(path, "/nonexistent/x.json");
    /* a name found nowhere: every folder looked in is named */
    assert_int_equal(corun__scenario_find("no-such-scenario", &set, path, sizeof(path), why,
                                          sizeof(why)),
                     CORUN_ENOENT);
    assert_non_null(strstr(why, "no-such-scenario"));
    assert_non_null(strstr(why, dir));
    assert_non_null(strstr(why, corun_test_path("bench/scenarios")));
    corun_test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builtin_parses),
        cmocka_unit_test(file_on_disk_matches_builtin),
        cmocka_unit_test(bad_inputs_are_named),
        cmocka_unit_test(missing_file),
        cmocka_unit_test(nul_byte_in_file),
        cmocka_unit_test(intensities_and_bandwidth_bound_kernels),
        cmocka_unit_test(scenario_files_parse),
        cmocka_unit_test(found_by_name),
        cmocka_unit_test(chains_and_real_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
