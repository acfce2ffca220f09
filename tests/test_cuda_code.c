/* test_cuda_code.c — the CUDA backend's check of a registered kernel's
 * launch shape (code.c), on a stand-in driver: a worker that fits fewer
 * blocks per SM than its plain kernel is refused, on the scheduler's path
 * (the shape check) and on the stream-ordered one (direct_launch), unless
 * the kernel was registered with CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS; then it
 * runs at the worker's blocks per SM. No GPU: the stand-in answers the
 * occupancy queries with the occupancy calculator, for binomial's
 * registers (plain 48, worker 94). */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "corun/corun.h"

#ifdef CORUN_HAVE_CUDA

#include "backends/cuda/cuda_int.h"

static int plain_fn, worker_fn;    /* their addresses are the two CUfunctions */
#define PLAIN ((CUfunction)(void *)&plain_fn)
#define WORKER ((CUfunction)(void *)&worker_fn)
#define PLAIN_REGS 48
#define WORKER_REGS 94

static unsigned plain_launches;

static int regs_of(CUfunction f)
{
    return f == PLAIN ? PLAIN_REGS : WORKER_REGS;
}

static CUresult fake_occupancy(int *n, CUfunction f, int threads, size_t smem)
{
    corun_gpu_desc g;
    corun_kernel_shape s = {(uint32_t)threads, (uint32_t)regs_of(f), 0, (uint32_t)smem, false};
    corun_occupancy o;

    corun_gpu_desc_h100(&g);
    *n = corun_occupancy_calc(&g, &s, &o, NULL, 0) == CORUN_OK ? (int)o.blocks_per_sm : 0;
    return CUDA_SUCCESS;
}

static CUresult fake_attribute(int *v, CUfunction_attribute a, CUfunction f)
{
    *v = a == CU_FUNC_ATTRIBUTE_NUM_REGS ? regs_of(f) : 0;
    return CUDA_SUCCESS;
}

static CUresult fake_capturing(CUstream s, CUstreamCaptureStatus *st)
{
    (void)s;
    *st = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

static CUresult fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned smem, CUstream s, void **args,
                            void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s, (void)args,
        (void)extra;
    plain_launches += f == PLAIN;
    return CUDA_SUCCESS;
}

/* The calling thread's current context and its device, as the fakes say. */
static CUcontext current_ctx;
static CUdevice current_dev;

static CUresult fake_ctx_current(CUcontext *c)
{
    *c = current_ctx;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx_device(CUdevice *d)
{
    *d = current_dev;
    return CUDA_SUCCESS;
}

typedef struct fixture {
    corun__cu cu;
    device_state d;
    cuda_backend b;
} fixture;

static int setup(void **state)
{
    static fixture f;

    memset(&f, 0, sizeof(f));
    f.cu.cuOccupancyMaxActiveBlocksPerMultiprocessor = fake_occupancy;
    f.cu.cuFuncGetAttribute = fake_attribute;
    f.cu.cuStreamIsCapturing = fake_capturing;
    f.cu.cuLaunchKernel = fake_launch;
    f.cu.cuCtxGetCurrent = fake_ctx_current;
    f.cu.cuCtxGetDevice = fake_ctx_device;
    current_ctx = NULL; /* no context current: the launch is corun's to make */
    current_dev = 0;
    corun_gpu_desc_h100(&f.d.desc);
    f.d.cu = &f.cu;
    f.b.d = &f.d;
    pthread_mutex_init(&f.b.codes_mu, NULL);
    plain_launches = 0;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    corun__cuda_code_free_all(&f->b);
    pthread_mutex_destroy(&f->b.codes_mu);
    return 0;
}

static cuda_code *registered(fixture *f, uint32_t flags)
{
    corun_kernel_desc d;
    const void *code = NULL;
    char why[256] = "";

    memset(&d, 0, sizeof(d));
    d.name = "binomial";
    d.plain = (void *)PLAIN;
    d.worker = (void *)WORKER;
    d.flags = flags;
    assert_int_equal(corun__cuda_code_register(&f->b, &d, &code, why, sizeof(why)), CORUN_OK);
    return (cuda_code *)code;
}

/* 128 threads: the plain kernel fits 10 blocks per SM, the worker 5 */
static int shape(fixture *f, cuda_code *c, uint32_t *per_sm, char *why, size_t why_len)
{
    bool ahead_ok = true;
    int rc = corun__cuda_code_shape(&f->b, c, (corun_dim3){128, 1, 1}, 0, per_sm, &ahead_ok,
                                    NULL, why, why_len);
    if (rc == CORUN_OK) {
        assert_false(ahead_ok); /* it has no ahead entry */
    }
    return rc;
}

static void occupancy_loss_is_refused_without_the_flag(void **state)
{
    fixture *f = *state;
    cuda_code *c = registered(f, 0);
    uint32_t per_sm = 0;
    char why[320] = "";

    assert_int_equal(shape(f, c, &per_sm, why, sizeof(why)), CORUN_ERANGE);
    assert_non_null(strstr(why, "fits 5 blocks per SM where the plain kernel fits 10"));
    assert_non_null(strstr(why, "94 vs 48 registers"));
}

static void occupancy_loss_is_taken_with_the_flag(void **state)
{
    fixture *f = *state;
    cuda_code *c = registered(f, CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS);
    uint32_t per_sm = 0;
    char why[320] = "";

    assert_int_equal(shape(f, c, &per_sm, why, sizeof(why)), CORUN_OK);
    assert_int_equal(per_sm, 5);
    /* 256 threads: 2 worker blocks against 5 */
    bool ahead_ok;
    assert_int_equal(corun__cuda_code_shape(&f->b, c, (corun_dim3){256, 1, 1}, 0, &per_sm,
                                            &ahead_ok, NULL, why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(per_sm, 2);
}

/* A direct launch of code c at 128 threads with capsm 0 (one the policy
 * runs plain): direct_launch checks the shape first. */
static int direct_plain(fixture *f, cuda_code *c, uint32_t *per_sm, char *why, size_t why_len)
{
    corun__kspec spec = {.grid = {1024, 1, 1}, .block = {128, 1, 1}, .code = CORUN_CODE_USER};
    corun__direct_req req = {.capsm = 0};
    corun__exec *ex = NULL;
    corun__direct_got got = {.ahead = true, .grid = true};

    spec.user = c;
    int rc = corun__cuda_direct_launch(&f->b.be, &spec, &req, &ex, &got, why, why_len);
    *per_sm = got.per_sm;
    assert_null(ex);
    assert_false(got.ahead);
    assert_false(got.grid);
    return rc;
}

/* refused without the flag, launched plain with it */
static void direct_launch_honours_the_flag(void **state)
{
    fixture *f = *state;
    uint32_t per_sm = 0;
    char why[320] = "";

    assert_int_equal(direct_plain(f, registered(f, 0), &per_sm, why, sizeof(why)), CORUN_ERANGE);
    assert_non_null(strstr(why, "fits 5 blocks per SM where the plain kernel fits 10"));
    assert_int_equal(plain_launches, 0);

    why[0] = '\0';
    assert_int_equal(direct_plain(f, registered(f, CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS), &per_sm,
                                  why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(per_sm, 5);
    assert_int_equal(plain_launches, 1);
}

/* A program on two GPUs: a launch on the other one than corun's is
 * refused with the reason (the shim runs it plain); on corun's GPU through
 * another context of that device, it runs. */
static void a_launch_on_another_gpu_is_refused(void **state)
{
    fixture *f = *state;
    uint32_t per_sm = 0;
    char why[320] = "";

    f->d.ctx = (CUcontext)0x1000;
    f->d.dev = 0;
    f->d.ordinal = 0;
    current_ctx = (CUcontext)0x2000; /* another device's primary context */
    current_dev = 1;
    assert_int_equal(direct_plain(f, registered(f, CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS), &per_sm,
                                  why, sizeof(why)),
                     CORUN_ENOTSUP);
    assert_non_null(strstr(why, "another GPU than corun's (GPU 0"));
    assert_int_equal(plain_launches, 0);
    current_dev = 0; /* a context of its own on corun's GPU */
    why[0] = '\0';
    assert_int_equal(direct_plain(f, registered(f, CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS), &per_sm,
                                  why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(plain_launches, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(occupancy_loss_is_refused_without_the_flag, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(occupancy_loss_is_taken_with_the_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(direct_launch_honours_the_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(a_launch_on_another_gpu_is_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

int main(void)
{
    printf("built without the CUDA headers: skipped\n");
    return 77;
}

#endif
