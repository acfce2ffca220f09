/* test_profile.c — the kernel profile store (its file: round trip, merge,
 * concurrent writers, corrupt and truncated files, reading that changes
 * nothing, stores behind links or on devices) and the duration model
 * (ridge regression recovering known coefficients, held-out error). */
#include "support.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/rng.h"
#include "core/duration_model.h"
#include "core/profile_store.h"
#include "corun/corun.h"

static char dir[256];
static char path[300];

static int setup(void **state)
{
    corun_test_mkdtemp(dir, sizeof(dir), "profile");
    snprintf(path, sizeof(path), "%s/sub/profiles.txt", dir);
    return 0;
}

static int teardown(void **state)
{
    corun_test_rmdir(dir);
    return 0;
}

static corun__prun run(const char *kernel, double grid, double dur)
{
    corun__prun r;
    memset(&r, 0, sizeof(r));
    snprintf(r.backend, sizeof(r.backend), "sim");
    snprintf(r.kernel, sizeof(r.kernel), "%s", kernel);
    r.grid = grid;
    r.block = 256;
    r.size = grid * 4;
    r.smem = 0;
    r.dur_ns = dur;
    return r;
}

/* Files in dir/sub whose name contains `part`. */
static int count_files(const char *part)
{
    char sub[320];
    DIR *d;
    struct dirent *e;
    int n = 0;

    snprintf(sub, sizeof(sub), "%s/sub", dir);
    d = opendir(sub);
    if (d == NULL) {
        return 0;
    }
    while ((e = readdir(d)) != NULL) {
        n += strstr(e->d_name, part) != NULL;
    }
    closedir(d);
    return n;
}

static void write_text(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *p)
{
    static char buf[1 << 14];
    FILE *f = fopen(p, "r");
    size_t n;
    assert_non_null(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void round_trip_keeps_every_value(void **state)
{
    corun__pstore add, got;
    corun__prun r = run("odd name %x\t", 1234, 5.5e6);
    corun__pprof p;
    char note[512];

    corun__pstore_init(&add);
    r.size = 0.125;
    r.smem = 4096;
    assert_int_equal(corun__pstore_add_run(&add, &r), CORUN_OK);
    memset(&p, 0, sizeof(p));
    snprintf(p.backend, sizeof(p.backend), "cuda");
    snprintf(p.kernel, sizeof(p.kernel), "k1");
    p.flop_frac = 0.3;
    p.bw_frac = 1.0 / 3.0;
    p.dur_ns = 1e6;
    p.samples = 1;
    assert_int_equal(corun__pstore_add_prof(&add, &p), CORUN_OK);
    /* A missing file is an empty store, and merging creates the folders. */
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, 0);
    assert_string_equal(note, "");
    assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_OK);
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_string_equal(note, "");
    assert_int_equal(got.nruns, 1);
    assert_int_equal(got.nprofs, 1);
    assert_string_equal(got.runs[0].kernel, "odd name %x\t");
    assert_true(got.runs[0].size == 0.125 && got.runs[0].smem == 4096 && got.runs[0].grid == 1234);
    assert_true(got.runs[0].dur_ns == 5.5e6);
    assert_true(got.profs[0].bw_frac == 1.0 / 3.0);
    assert_non_null(corun__pstore_find_prof(&got, "cuda", "k1"));
    assert_null(corun__pstore_find_prof(&got, "sim", "k1"));
    /* A second merge adds no run the store holds already (see
     * repeated_runs_are_stored_once) and averages the profile by samples. */
    p.flop_frac = 0.5;
    assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_OK);
    corun__pstore_free(&got);
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, 1);
    assert_int_equal(got.nprofs, 1);
    assert_int_equal(got.profs[0].samples, 2);
    assert_float_equal(got.profs[0].flop_frac, 0.3, 1e-12);
    assert_int_equal(count_files(".tmp."), 0);
    corun__pstore_free(&got);
    corun__pstore_free(&add);
}

static void concurrent_writers_lose_nothing(void **state)
{
    enum { WRITERS = 8, EACH = 25 };
    corun__pstore got;
    char note[512];
    pid_t pids[WRITERS];
    int w, i, status;
    int seen[WRITERS][EACH];

    for (w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            /* Each writer merges its records one at a time, so the merges
             * of all writers interleave. */
            for (i = 0; i < EACH; i++) {
                corun__pstore add;
                char name[32];
                corun__prun r;
                snprintf(name, sizeof(name), "w%d", w);
                r = run(name, i + 1, 1000.0 + i);
                corun__pstore_init(&add);
                if (corun__pstore_add_run(&add, &r) != CORUN_OK ||
                    corun__pstore_merge(path, &add, note, sizeof(note)) != CORUN_OK) {
                    _exit(1);
                }
                corun__pstore_free(&add);
            }
            _exit(0);
        }
    }
    for (w = 0; w < WRITERS; w++) {
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_string_equal(note, "");
    assert_int_equal(got.nruns, WRITERS * EACH);
    memset(seen, 0, sizeof(seen));
    for (i = 0; i < (int)got.nruns; i++) {
        int wi = atoi(got.runs[i].kernel + 1), gi = (int)got.runs[i].grid - 1;
        assert_true(wi >= 0 && wi < WRITERS && gi >= 0 && gi < EACH);
        seen[wi][gi]++;
    }
    for (w = 0; w < WRITERS; w++) {
        for (i = 0; i < EACH; i++) {
            assert_int_equal(seen[w][i], 1);
        }
    }
    assert_int_equal(count_files(".tmp."), 0);
    assert_int_equal(count_files(".corrupt"), 0);
    corun__pstore_free(&got);
}

/* A store that is not intact is set aside, reported, and replaced. */
static void expect_set_aside(const char *text, const char *why_word)
{
    corun__pstore got, add;
    corun__prun r = run("k", 10, 100);
    char note[512] = "";
    int before = count_files(".corrupt");

    write_text(path, text);
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, 0);
    if (strstr(note, "corrupt") == NULL || strstr(note, why_word) == NULL) {
        fail_msg("note '%s' lacks 'corrupt'/'%s'", note, why_word);
    }
    assert_int_equal(count_files(".corrupt"), before + 1);
    assert_int_equal(access(path, F_OK), -1);
    /* The next writer starts a new, intact store. */
    corun__pstore_init(&add);
    assert_int_equal(corun__pstore_add_run(&add, &r), CORUN_OK);
    assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_OK);
    assert_string_equal(note, "");
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, 1);
    corun__pstore_free(&got);
    corun__pstore_free(&add);
}

static void corrupt_files_are_set_aside(void **state)
{
    corun__pstore add, got;
    char note[512], good[1 << 14], *p;
    int i;

    assert_int_equal(mkdir(strcat(strcpy(good, dir), "/sub"), 0755), 0);
    expect_set_aside("\x7f" "ELF garbage\n", "not a corun profile store");
    expect_set_aside("", "empty");

    /* A valid store, then damaged in three ways. */
    corun__pstore_init(&add);
    for (i = 0; i < 5; i++) {
        corun__prun r = run("k", 10 + i, 100 + i);
        assert_int_equal(corun__pstore_add_run(&add, &r), CORUN_OK);
    }
    unlink(path);
    assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_OK);
    snprintf(good, sizeof(good), "%s", read_text(path));
    corun__pstore_free(&add);

    /* Cut off after the third record: no end line. */
    p = good;
    for (i = 0; i < 5; i++) {
        p = strchr(p, '\n') + 1;
    }
    {
        char cut[1 << 15];
        snprintf(cut, sizeof(cut), "%.*s", (int)(p - good), good);
        expect_set_aside(cut, "truncated");
    }
    /* One digit changed: the checksum no longer matches. */
    {
        char edit[1 << 15];
        snprintf(edit, sizeof(edit), "%s", good);
        p = strstr(edit, "run sim k 12 ");
        assert_non_null(p);
        p[10] = '3';
        expect_set_aside(edit, "checksum");
    }
    /* A record line that does not parse. */
    {
        char bad[1 << 15];
        p = strstr(good, "run sim k 11");
        snprintf(bad, sizeof(bad), "%.*srun sim k eleven\n%s", (int)(p - good), good,
                 strchr(p, '\n') + 1);
        expect_set_aside(bad, "malformed");
    }
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, 1);
    corun__pstore_free(&got);
}

/* corun__pstore_read changes nothing on disk: no folder, no lock file, a
 * corrupt store reported and left where it is. */
static void read_changes_nothing(void **state)
{
    corun__pstore got;
    char note[512] = "", sub[320];

    assert_int_equal(corun__pstore_read(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, 0);
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    assert_int_equal(access(sub, F_OK), -1);

    assert_int_equal(mkdir(sub, 0755), 0);
    write_text(path, "garbage\n");
    assert_int_equal(corun__pstore_read(path, &got, note, sizeof(note)), CORUN_EPARSE);
    assert_int_equal(got.nruns, 0);
    if (strstr(note, "corrupt") == NULL || strstr(note, path) == NULL) {
        fail_msg("note '%s' does not say the store is corrupt", note);
    }
    assert_string_equal(read_text(path), "garbage\n");
    assert_int_equal(count_files(".corrupt"), 0);
    assert_int_equal(count_files(".lock"), 0);
    assert_int_equal(count_files("profiles"), 1);
}

/* A store that is a link to a regular file is replaced and set aside
 * there, the link kept; one that names a device is never moved. */
static void only_regular_files_are_replaced(void **state)
{
    corun__pstore add, got;
    corun__prun r = run("k", 10, 100);
    char note[512] = "", target[320];
    struct stat st;

    snprintf(target, sizeof(target), "%s/target.txt", dir);
    assert_int_equal(mkdir(strcat(strcpy(note, dir), "/sub"), 0755), 0);
    assert_int_equal(symlink(target, path), 0);
    corun__pstore_init(&add);
    assert_int_equal(corun__pstore_add_run(&add, &r), CORUN_OK);
    assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_OK);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(target, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, 1);
    corun__pstore_free(&got);

    /* corrupt behind the link: the file is set aside beside itself */
    write_text(target, "garbage\n");
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_non_null(strstr(note, "target.txt.corrupt-"));
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(access(target, F_OK), -1);
    assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_OK);
    assert_int_equal(lstat(target, &st), 0);
    assert_true(S_ISREG(st.st_mode));

    /* a link to /dev/null reads as an empty, corrupt file: never moved
     * (not tried when /dev/null is no longer a device: it would be) */
    if (lstat("/dev/null", &st) != 0 || !S_ISCHR(st.st_mode)) {
        corun__pstore_free(&add);
        skip();
    }
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink("/dev/null", path), 0);
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_EIO);
    assert_non_null(strstr(note, "not moved"));
    assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_EIO);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(count_files(".corrupt"), 0);
    corun__pstore_free(&add);
}

static void old_runs_are_trimmed(void **state)
{
    corun__pstore add, got;
    char note[512];
    int i;

    corun__pstore_init(&add);
    for (i = 0; i < CORUN_PSTORE_MAX_RUNS + 50; i++) {
        corun__prun r = run("big", i + 1, 1000);
        assert_int_equal(corun__pstore_add_run(&add, &r), CORUN_OK);
    }
    {
        corun__prun r = run("small", 1, 1000);
        assert_int_equal(corun__pstore_add_run(&add, &r), CORUN_OK);
    }
    assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_OK);
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, CORUN_PSTORE_MAX_RUNS + 1);
    /* The newest are kept: the first 50 went. */
    assert_true(got.runs[0].grid == 51);
    corun__pstore_free(&got);
    corun__pstore_free(&add);
}

/* A kernel's rate alone at a size is the second-highest of the store's
 * latest nine runs at exactly that grid and block, of that backend and
 * kernel (the median of three or fewer): one fast window does not set it,
 * a slow measurement does not lower it, and nine newer runs replace the
 * older ones. */
static void own_rate_is_high_among_the_latest_at_that_size(void **state)
{
    static const double dur[] = {1000, 900, 1100};
    corun__pstore ps;
    corun__prun r;
    size_t i;

    (void)state;
    corun__pstore_init(&ps);
    assert_true(corun__pstore_own_rate(&ps, "sim", "k", 100, 256) == 0);
    for (i = 0; i < sizeof(dur) / sizeof(dur[0]); i++) {
        r = run("k", 100, dur[i]);
        assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
    }
    r = run("k", 50, 10); /* another size */
    assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
    r = run("other", 100, 10); /* another kernel */
    assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
    /* three: their median, 100/1000 per ns */
    assert_true(fabs(corun__pstore_own_rate(&ps, "sim", "k", 100, 256) - 0.1) < 1e-12);
    assert_true(corun__pstore_own_rate(&ps, "cuda", "k", 100, 256) == 0);
    assert_true(corun__pstore_own_rate(&ps, "sim", "k", 100, 128) == 0);
    /* a window timed fast (0.2 per ns) and one slow: the second-highest, 100/900 */
    r = run("k", 100, 500);
    assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
    r = run("k", 100, 4000);
    assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
    assert_true(fabs(corun__pstore_own_rate(&ps, "sim", "k", 100, 256) - 100.0 / 900) < 1e-12);
    /* a measurement of three slow windows: still 100/900 */
    for (i = 0; i < 3; i++) {
        r = run("k", 100, 1250);
        assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
    }
    assert_true(fabs(corun__pstore_own_rate(&ps, "sim", "k", 100, 256) - 100.0 / 900) < 1e-12);
    /* nine newer windows, all slower: they replace the older ones */
    for (i = 0; i < 9; i++) {
        r = run("k", 100, 1900 + 50 * (double)(i % 3));
        assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
    }
    assert_true(fabs(corun__pstore_own_rate(&ps, "sim", "k", 100, 256) - 100.0 / 1900) < 1e-12);
    /* fewer than three at a size: the median of those there are */
    r = run("k", 60, 300);
    assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
    r = run("k", 60, 600);
    assert_int_equal(corun__pstore_add_run(&ps, &r), CORUN_OK);
    assert_true(fabs(corun__pstore_own_rate(&ps, "sim", "k", 60, 256) -
                     0.5 * (60.0 / 300 + 60.0 / 600)) < 1e-12);
    corun__pstore_free(&ps);
}

/* A training repeated with the same seed on the simulator brings the same
 * runs: they are stored once. Runs that differ in anything are kept. */
static void repeated_runs_are_stored_once(void **state)
{
    corun__pstore add, got;
    char note[512];
    int i, pass;

    corun__pstore_init(&add);
    for (i = 0; i < 5; i++) {
        corun__prun r = run("k", i + 1, 1000 + i);
        assert_int_equal(corun__pstore_add_run(&add, &r), CORUN_OK);
    }
    for (pass = 0; pass < 3; pass++) {
        assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_OK);
    }
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, 5);
    corun__pstore_free(&got);
    add.runs[0].dur_ns += 1; /* measured again, a little slower */
    assert_int_equal(corun__pstore_merge(path, &add, note, sizeof(note)), CORUN_OK);
    assert_int_equal(corun__pstore_load(path, &got, note, sizeof(note)), CORUN_OK);
    assert_int_equal(got.nruns, 6);
    corun__pstore_free(&got);
    corun__pstore_free(&add);
}

static void path_expands_home_and_host(void **state)
{
    char out[512], why[256] = "", host[256];

    assert_int_equal(corun__pstore_path("off", out, sizeof(out), why, sizeof(why)), CORUN_ENOENT);
    assert_int_equal(corun__pstore_path("", out, sizeof(out), why, sizeof(why)), CORUN_ENOENT);
    assert_int_equal(corun__pstore_path("/x/p-%h.txt", out, sizeof(out), why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(gethostname(host, sizeof(host)), 0);
    assert_non_null(strstr(out, host));
    assert_int_equal(strncmp(out, "/x/p-", 5), 0);
    assert_int_equal(corun__pstore_path("~/a/b", out, sizeof(out), why, sizeof(why)), CORUN_OK);
    assert_true(out[0] == '/');
    assert_non_null(strstr(out, "/a/b"));
    assert_int_equal(corun__pstore_path("/x/%h", out, 4, why, sizeof(why)), CORUN_ERANGE);
}

/* "~" is $HOME when it names an absolute folder, as a shell has it (and as
 * corun-cc's cache folder takes it); the password database otherwise. */
static void path_home_from_environment_first(void **state)
{
    char out[512], why[256] = "", saved[512] = "";
    const char *h = getenv("HOME");
    int had = h != NULL;

    if (had) {
        snprintf(saved, sizeof(saved), "%s", h);
    }
    assert_int_equal(setenv("HOME", "/tmp/corun-home-test", 1), 0);
    assert_int_equal(corun__pstore_path("~/a/b", out, sizeof(out), why, sizeof(why)), CORUN_OK);
    assert_string_equal(out, "/tmp/corun-home-test/a/b");
    for (int i = 0; i < 3; i++) {
        if (i == 2) {
            unsetenv("HOME");
        } else {
            setenv("HOME", i == 0 ? "" : "relative/home", 1);
        }
        assert_int_equal(corun__pstore_path("~/a/b", out, sizeof(out), why, sizeof(why)),
                         CORUN_OK);
        assert_true(out[0] == '/');
        assert_null(strstr(out, "relative"));
        assert_non_null(strstr(out, "/a/b"));
    }
    if (had) {
        setenv("HOME", saved, 1);
    }
}

/* ---- the duration model --------------------------------------------------- */

/* y = 20000 + 150 grid + 40 block + 0 size + 3 smem, times (1 + noise). */
static corun__prun synth_run(corun__rng *rng, double noise)
{
    corun__prun r = run("m", 0, 1);
    r.grid = floor(corun__rng_uniform(rng, 100, 5000));
    r.block = 32 * floor(corun__rng_uniform(rng, 1, 33));
    r.size = corun__rng_uniform(rng, 0, 1e6);
    r.smem = floor(corun__rng_uniform(rng, 0, 48)) * 1024;
    r.dur_ns = (20000 + 150 * r.grid + 40 * r.block + 3 * r.smem) *
               (1 + noise * corun__rng_uniform(rng, -1, 1));
    return r;
}

static void ridge_recovers_known_coefficients(void **state)
{
    enum { N = 200 };
    corun__prun runs[N];
    const corun__prun *p[N];
    corun__dmodel m;
    corun__rng rng;
    double x[CORUN_DM_NFEAT];
    int i;

    corun__rng_seed(&rng, 7);
    for (i = 0; i < N; i++) {
        runs[i] = synth_run(&rng, 0);
        p[i] = &runs[i];
    }
    assert_int_equal(corun__dm_fit(p, N, 0, &m), CORUN_OK);
    /* Exact data, no penalty: the model is the generating function. */
    x[0] = 1000;
    x[1] = 128;
    x[2] = 5;
    x[3] = 2048;
    assert_float_equal(corun__dm_predict(&m, x), 20000 + 150e3 + 40 * 128 + 3 * 2048, 1e-3);
    /* Back on the raw scale, the weight of each feature is its coefficient. */
    assert_float_equal(m.w[0] / m.sd[0], 150, 1e-6);
    assert_float_equal(m.w[1] / m.sd[1], 40, 1e-6);
    assert_float_equal(m.w[2] / m.sd[2], 0, 1e-6);
    assert_float_equal(m.w[3] / m.sd[3], 3, 1e-6);
    /* The penalty shrinks the weights towards 0 (the mean prediction). */
    {
        corun__dmodel big;
        assert_int_equal(corun__dm_fit(p, N, 100, &big), CORUN_OK);
        assert_true(fabs(big.w[0]) < 0.05 * fabs(m.w[0]));
        assert_float_equal(big.b, m.b, 1e-6);
    }
    assert_int_equal(corun__dm_fit(p, 2, 0, &m), CORUN_EINVAL);
    assert_int_equal(corun__dm_fit(p, N, -1, &m), CORUN_EINVAL);
}

static void constant_and_collinear_features_are_handled(void **state)
{
    enum { N = 50 };
    corun__prun runs[N];
    const corun__prun *p[N];
    corun__dmodel m;
    double x[CORUN_DM_NFEAT];
    int i;

    /* Block and smem never vary; size is 4 x grid: singular without a
     * penalty. The fit must still predict the line. */
    for (i = 0; i < N; i++) {
        runs[i] = run("c", 100 + 10 * i, 5000 + 7.0 * (100 + 10 * i));
        p[i] = &runs[i];
    }
    assert_int_equal(corun__dm_fit(p, N, 0, &m), CORUN_OK);
    assert_true(m.sd[1] == 0 && m.sd[3] == 0);
    x[0] = 300;
    x[1] = 256;
    x[2] = 1200;
    x[3] = 0;
    assert_float_equal(corun__dm_predict(&m, x), 5000 + 2100, 1e-6);
    for (i = 0; i < CORUN_DM_NFEAT; i++) {
        assert_true(isfinite(m.w[i]));
    }
    /* Predictions never go below half the shortest run. */
    x[0] = -1e9;
    x[2] = -4e9;
    assert_float_equal(corun__dm_predict(&m, x), 0.5 * runs[0].dur_ns, 1e-9);
}

static void held_out_error_is_measured_on_unseen_runs(void **state)
{
    enum { N = 100 };
    corun__prun runs[N];
    const corun__prun *p[N];
    corun__dm_eval ev;
    corun__rng rng;
    int i;

    corun__rng_seed(&rng, 11);
    for (i = 0; i < N; i++) {
        runs[i] = synth_run(&rng, 0.05);
        p[i] = &runs[i];
    }
    assert_int_equal(corun__dm_evaluate(p, N, 0.2, 1e-3, &ev), CORUN_OK);
    assert_int_equal(ev.ntest, 20);
    assert_int_equal(ev.ntrain, 80);
    /* Uniform noise of +-5% has a mean absolute value of 2.5%. */
    print_message("held-out MAPE %.2f%%, worst %.2f%%\n", ev.mape * 100, ev.max_ape * 100);
    assert_true(ev.mape > 0.01 && ev.mape < 0.04);
    assert_true(ev.max_ape < 0.08);
    /* A run far off the line shows up as held-out error. */
    runs[4].dur_ns *= 3;
    assert_int_equal(corun__dm_evaluate(p, N, 0.2, 1e-3, &ev), CORUN_OK);
    assert_true(ev.max_ape > 0.5);
    assert_int_equal(corun__dm_evaluate(p, 3, 0.2, 1e-3, &ev), CORUN_EINVAL);
}

static void model_set_fits_each_kernel_of_a_backend(void **state)
{
    corun__pstore ps;
    corun__dm_set set;
    double x[CORUN_DM_NFEAT] = {50, 256, 200, 0};
    int i;

    corun__pstore_init(&ps);
    for (i = 0; i < 10; i++) {
        corun__prun a = run("a", 10 + i, 1000 + 100.0 * (10 + i));
        corun__prun b = run("b", 10 + i, 50.0 * (10 + i));
        corun__prun c = run("c", 10 + i, 1000);
        snprintf(c.backend, sizeof(c.backend), "cuda");
        assert_int_equal(corun__pstore_add_run(&ps, &a), CORUN_OK);
        assert_int_equal(corun__pstore_add_run(&ps, &b), CORUN_OK);
        assert_int_equal(corun__pstore_add_run(&ps, &c), CORUN_OK);
    }
    {
        corun__prun d = run("d", 1, 1000); /* too few runs for a model */
        assert_int_equal(corun__pstore_add_run(&ps, &d), CORUN_OK);
    }
    assert_int_equal(corun__dm_set_build(&ps, "sim", 0, &set), CORUN_OK);
    assert_int_equal(set.n, 2);
    assert_float_equal(corun__dm_predict(corun__dm_set_find(&set, "a"), x), 6000, 1e-6);
    assert_float_equal(corun__dm_predict(corun__dm_set_find(&set, "b"), x), 2500, 1e-6);
    assert_null(corun__dm_set_find(&set, "c"));
    assert_null(corun__dm_set_find(&set, "d"));
    corun__dm_set_free(&set);
    corun__pstore_free(&ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip_keeps_every_value, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_writers_lose_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(corrupt_files_are_set_aside, setup, teardown),
        cmocka_unit_test_setup_teardown(read_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(only_regular_files_are_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(old_runs_are_trimmed, setup, teardown),
        cmocka_unit_test_setup_teardown(repeated_runs_are_stored_once, setup, teardown),
        cmocka_unit_test(own_rate_is_high_among_the_latest_at_that_size),
        cmocka_unit_test(path_expands_home_and_host),
        cmocka_unit_test(path_home_from_environment_first),
        cmocka_unit_test(ridge_recovers_known_coefficients),
        cmocka_unit_test(constant_and_collinear_features_are_handled),
        cmocka_unit_test(held_out_error_is_measured_on_unseen_runs),
        cmocka_unit_test(model_set_fits_each_kernel_of_a_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
