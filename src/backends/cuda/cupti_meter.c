/*
 * cupti_meter.c — the meter: CUPTI's range profiler over a libcupti opened
 * at run time. See cupti_meter.h.
 *
 * One measurement: the config image (which counters, built once per meter
 * by the profiler host API) and an empty counter data image are bound to
 * the context's range profiler; with auto ranges and kernel replay, CUPTI
 * replays each kernel the callback launches as many times as the counters
 * need passes and writes one range per kernel; the host API then evaluates
 * each range to metric values, which are summed.
 */
#include "backends/cuda/cupti_meter.h"

#include <stdio.h>

#include "corun/corun.h"

#if defined(CORUN_HAVE_CUPTI)

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_activity.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include "backends/cuda/cuda_api.h"

/* ---- the profiler host API, mirrored -------------------------------------- */

/*
 * cupti_profiler_host.h cannot be included from C: it includes the C++
 * header <string>, although all it declares is C. The few parameter structs
 * the meter uses are mirrored here, field for field, from CUDA 13.0. That
 * holds across CUPTI versions: every struct starts with structSize, which
 * tells CUPTI how many fields the caller knows, and CUPTI only ever appends
 * fields.
 */
typedef struct host_object host_object; /* CUpti_Profiler_Host_Object */

typedef enum host_profiler_type { /* CUpti_ProfilerType */
    HOST_PROFILER_TYPE_RANGE_PROFILER = 0,
    HOST_PROFILER_TYPE_PM_SAMPLING,
    HOST_PROFILER_TYPE_PROFILER_INVALID
} host_profiler_type;

typedef struct host_initialize_params { /* CUpti_Profiler_Host_Initialize_Params */
    size_t structSize;
    void *pPriv;
    host_profiler_type profilerType;
    const char *pChipName;
    const uint8_t *pCounterAvailabilityImage;
    host_object *pHostObject; /* out */
} host_initialize_params;

typedef struct host_deinitialize_params { /* CUpti_Profiler_Host_Deinitialize_Params */
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
} host_deinitialize_params;

typedef struct host_config_add_metrics_params { /* CUpti_Profiler_Host_ConfigAddMetrics_Params */
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
    const char **ppMetricNames;
    size_t numMetrics;
} host_config_add_metrics_params;

typedef struct host_get_config_image_size_params { /* ..._GetConfigImageSize_Params */
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
    size_t configImageSize; /* out */
} host_get_config_image_size_params;

typedef struct host_get_config_image_params { /* ..._GetConfigImage_Params */
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
    size_t configImageSize;
    uint8_t *pConfigImage; /* out */
} host_get_config_image_params;

typedef struct host_get_num_of_passes_params { /* ..._GetNumOfPasses_Params */
    size_t structSize;
    void *pPriv;
    size_t configImageSize;
    uint8_t *pConfigImage;
    size_t numOfPasses; /* out */
} host_get_num_of_passes_params;

typedef struct host_evaluate_params { /* CUpti_Profiler_Host_EvaluateToGpuValues_Params */
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
    const uint8_t *pCounterDataImage;
    size_t counterDataImageSize;
    size_t rangeIndex;
    const char **ppMetricNames;
    size_t numMetrics;
    double *pMetricValues; /* out, numMetrics values */
} host_evaluate_params;

#define HOST_SIZE(type, last) CUPTI_PROFILER_STRUCT_SIZE(type, last)

/* ---- libcupti, loaded at run time ----------------------------------------- */

/* Entry points the installed C headers declare: the fields take their type. */
#define CORUN_CUPTI_FUNCS(X)                        \
    X(cuptiGetResultString)                         \
    X(cuptiGetDeviceId)                             \
    X(cuptiProfilerInitialize)                      \
    X(cuptiProfilerDeInitialize)                    \
    X(cuptiProfilerDeviceSupported)                 \
    X(cuptiDeviceGetChipName)                       \
    X(cuptiProfilerGetCounterAvailability)          \
    X(cuptiRangeProfilerEnable)                     \
    X(cuptiRangeProfilerDisable)                    \
    X(cuptiRangeProfilerGetCounterDataSize)         \
    X(cuptiRangeProfilerCounterDataImageInitialize) \
    X(cuptiRangeProfilerSetConfig)                  \
    X(cuptiRangeProfilerStart)                      \
    X(cuptiRangeProfilerStop)                       \
    X(cuptiRangeProfilerDecodeData)                 \
    X(cuptiRangeProfilerGetCounterDataInfo)

/* Entry points of the host API, typed with the mirrored structs. */
#define CORUN_CUPTI_HOST_FUNCS(X)                                             \
    X(cuptiProfilerHostInitialize, host_initialize_params)                    \
    X(cuptiProfilerHostDeinitialize, host_deinitialize_params)                \
    X(cuptiProfilerHostConfigAddMetrics, host_config_add_metrics_params)      \
    X(cuptiProfilerHostGetConfigImageSize, host_get_config_image_size_params) \
    X(cuptiProfilerHostGetConfigImage, host_get_config_image_params)          \
    X(cuptiProfilerHostGetNumOfPasses, host_get_num_of_passes_params)         \
    X(cuptiProfilerHostEvaluateToGpuValues, host_evaluate_params)

typedef struct cupti_api {
#define CORUN__CUPTI_FIELD(name) __typeof__(&name) name;
#define CORUN__CUPTI_HOST_FIELD(name, params) CUptiResult(CUPTIAPI *name)(params *);
    CORUN_CUPTI_FUNCS(CORUN__CUPTI_FIELD)
    CORUN_CUPTI_HOST_FUNCS(CORUN__CUPTI_HOST_FIELD)
#undef CORUN__CUPTI_HOST_FIELD
#undef CORUN__CUPTI_FIELD
} cupti_api;

/* Where libcupti is looked for, in order: the loader's path first (a CUPTI
 * matching the driver may be on LD_LIBRARY_PATH), then the toolkit's
 * places. The CUDA 12 library is the last resort: its range profiler (12.6
 * and later) takes the same structs. */
static const char *const cupti_paths[] = {
    "libcupti.so.13",
    "libcupti.so",
    "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
    "/usr/local/cuda/lib64/libcupti.so",
    "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so",
    "libcupti.so.12",
};

static cupti_api api;
static const cupti_api *api_loaded;
static const char *api_path;
static char api_error[512];
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

/* Fills t from lib. Returns NULL, or the name of an entry point lib lacks. */
static const char *api_resolve(void *lib, cupti_api *t)
{
    void *p;

#define CORUN__CUPTI_RESOLVE(name) \
    p = dlsym(lib, #name);         \
    if (p == NULL) {               \
        return #name;              \
    }                              \
    memcpy(&t->name, &p, sizeof(p));
#define CORUN__CUPTI_HOST_RESOLVE(name, params) CORUN__CUPTI_RESOLVE(name)
    CORUN_CUPTI_FUNCS(CORUN__CUPTI_RESOLVE)
    CORUN_CUPTI_HOST_FUNCS(CORUN__CUPTI_HOST_RESOLVE)
#undef CORUN__CUPTI_HOST_RESOLVE
#undef CORUN__CUPTI_RESOLVE
    return NULL;
}

/* Opens the first libcupti that has every entry point. It is never closed:
 * CUPTI hooks into the driver, and the handle lives as long as the process. */
static void api_load(void)
{
    size_t n = sizeof(cupti_paths) / sizeof(cupti_paths[0]);

    for (size_t i = 0; i < n; i++) {
        void *lib = dlopen(cupti_paths[i], RTLD_NOW | RTLD_LOCAL);
        const char *missing;

        if (lib == NULL) {
            if (api_error[0] == '\0') {
                snprintf(api_error, sizeof(api_error),
                         "no libcupti (dlopen %s: %s; %zu other paths tried)", cupti_paths[i],
                         dlerror(), n - 1);
            }
            continue;
        }
        missing = api_resolve(lib, &api);
        if (missing != NULL) {
            /* An older CUPTI, without the range profiler: never called, so
             * safe to unload; a later path may be newer. */
            snprintf(api_error, sizeof(api_error),
                     "%s lacks %s (the range profiler needs CUPTI 12.6 or later)", cupti_paths[i],
                     missing);
            dlclose(lib);
            continue;
        }
        api_path = cupti_paths[i];
        api_loaded = &api;
        return;
    }
}

/* The loaded table, or NULL with the reason in why. */
static const cupti_api *api_get(char *why, size_t why_len)
{
    pthread_once(&api_once, api_load);
    if (api_loaded == NULL) {
        snprintf(why, why_len, "%s", api_error);
    }
    return api_loaded;
}

/* The corun status for a CUPTI failure: CORUN_ENOTSUP where the counters
 * cannot be read in this process or on this GPU at all (so callers fall
 * back rather than fail). Codes from 40 on are numbers because headers
 * before CUDA 13 lack some of their names. */
static int cupti_status(CUptiResult r)
{
    switch ((int)r) {
    case CUPTI_ERROR_OUT_OF_MEMORY:
        return CORUN_ENOMEM;
    case CUPTI_ERROR_NOT_COMPATIBLE:         /* another profiler holds the counters */
    case CUPTI_ERROR_INVALID_METRIC_NAME:    /* a metric this chip does not have */
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case 40: /* CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES */
    case 41: /* CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED */
    case 42: /* CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED */
    case 43: /* CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED */
    case 44: /* CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED */
    case 45: /* CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED */
    case 46: /* CUPTI_ERROR_INVALID_CHIP_NAME: a chip this CUPTI does not know */
        return CORUN_ENOTSUP;
    default:
        return CORUN_ECUDA;
    }
}

/* Writes "what: CUPTI_ERROR_..." (with a remedy where there is one) to why
 * and returns cupti_status(r). */
static int cupti_fail(const char *what, CUptiResult r, char *why, size_t why_len)
{
    const char *name = NULL;
    char num[32];

    if (api.cuptiGetResultString(r, &name) != CUPTI_SUCCESS || name == NULL) {
        snprintf(num, sizeof(num), "CUptiResult %d", (int)r);
        name = num;
    }
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || (int)r == 40) {
        snprintf(why, why_len, "%s: %s (the driver lets only administrators read GPU counters: "
                 "run as root, or load nvidia with NVreg_RestrictProfilingToAdminUsers=0)",
                 what, name);
    } else {
        snprintf(why, why_len, "%s: %s", what, name);
    }
    return cupti_status(r);
}

/* ---- cuptiProfilerInitialize, shared ---------------------------------------- */

/* The profiler interface is process-wide while meters are per context: it is
 * initialised by the first open meter and torn down with the last. */
static pthread_mutex_t profiler_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned profiler_refs;

/* Initialises the profiler interface if no meter has. CORUN_OK or the
 * failure of cuptiProfilerInitialize. */
static int profiler_acquire(char *why, size_t why_len)
{
    int rc = CORUN_OK;

    pthread_mutex_lock(&profiler_mu);
    if (profiler_refs == 0) {
        CUpti_Profiler_Initialize_Params p = {
            .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        CUptiResult r = api.cuptiProfilerInitialize(&p);

        if (r != CUPTI_SUCCESS) {
            rc = cupti_fail("cuptiProfilerInitialize", r, why, why_len);
        }
    }
    if (rc == CORUN_OK) {
        profiler_refs++;
    }
    pthread_mutex_unlock(&profiler_mu);
    return rc;
}

/* Undoes one profiler_acquire. */
static void profiler_release(void)
{
    pthread_mutex_lock(&profiler_mu);
    if (--profiler_refs == 0) {
        CUpti_Profiler_DeInitialize_Params p = {
            .structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};

        (void)api.cuptiProfilerDeInitialize(&p);
    }
    pthread_mutex_unlock(&profiler_mu);
}

/* ---- the meter ------------------------------------------------------------- */

/* X(index, metric name): everything one measurement collects, in one config
 * (kernel replay takes as many passes as the counters need). */
#define CORUN_METER_METRICS(X)                                     \
    X(DRAM_READ, "dram__bytes_read.sum")                           \
    X(DRAM_WRITE, "dram__bytes_write.sum")                         \
    X(FFMA, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") \
    X(FADD, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum") \
    X(FMUL, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum") \
    X(DFMA, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum") \
    X(DADD, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum") \
    X(DMUL, "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum") \
    X(GPU_NS, "gpu__time_duration.sum")

enum {
#define CORUN__METRIC_ENUM(id, name) M_##id,
    CORUN_METER_METRICS(CORUN__METRIC_ENUM)
#undef CORUN__METRIC_ENUM
    M_COUNT
};

/* Not const: CUPTI's structs take const char **. */
static const char *metric_names[M_COUNT] = {
#define CORUN__METRIC_NAME(id, name) name,
    CORUN_METER_METRICS(CORUN__METRIC_NAME)
#undef CORUN__METRIC_NAME
};

struct corun__meter {
    CUcontext ctx;
    host_object *host;
    CUpti_RangeProfiler_Object *rp;
    uint8_t *avail; /* counter availability image: kept while host lives */
    uint8_t *config;
    size_t config_size;
    uint8_t *data; /* counter data image: the ranges of one measurement */
    size_t data_size;
    size_t passes; /* replays per kernel the config needs */
    char chip[64];
};

/* Why the device cannot be profiled, from cuptiProfilerDeviceSupported. */
static const char *unsupported_reason(const CUpti_Profiler_DeviceSupported_Params *p)
{
    const CUpti_Profiler_Support_Level ok = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;

    if (p->architecture != ok) {
        return "CUPTI's profiler does not support its architecture";
    }
    if (p->vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) {
        return "profiling is disabled on this vGPU";
    }
    if (p->vGpu != ok) {
        return "it is a vGPU without profiling support";
    }
    if (p->confidentialCompute != ok) {
        return "confidential computing is on";
    }
    if (p->cmp != ok) {
        return "it is a CMP (crypto-mining) GPU";
    }
    if (p->sli != ok) {
        return "SLI is on";
    }
    if (p->wsl != ok) {
        return "profiling is not supported under this WSL";
    }
    return "CUPTI did not say why";
}

/* Says, in why, why the device of ctx cannot be profiled, and returns
 * CORUN_ENOTSUP; CORUN_OK if it can, or if CUPTI cannot tell (then the calls
 * that follow report what goes wrong). */
static int check_device(CUdevice dev, char *why, size_t why_len)
{
    CUpti_Profiler_DeviceSupported_Params p = {
        .structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};

    p.cuDevice = dev;
    p.api = CUPTI_PROFILER_RANGE_PROFILING;
    if (api.cuptiProfilerDeviceSupported(&p) != CUPTI_SUCCESS ||
        p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
        return CORUN_OK;
    }
    snprintf(why, why_len, "cuptiProfilerDeviceSupported: the GPU cannot be profiled: %s",
             unsupported_reason(&p));
    return CORUN_ENOTSUP;
}

/* The chip's name (CUPTI's, e.g. "GH100") into m->chip, and its counter
 * availability image into m->avail. */
static int query_chip(corun__meter *m, uint32_t dev_index, char *why, size_t why_len)
{
    CUpti_Device_GetChipName_Params cn = {
        .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    CUpti_Profiler_GetCounterAvailability_Params ca = {
        .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    CUptiResult r;

    cn.deviceIndex = dev_index;
    r = api.cuptiDeviceGetChipName(&cn);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiDeviceGetChipName", r, why, why_len);
    }
    snprintf(m->chip, sizeof(m->chip), "%s", cn.pChipName ? cn.pChipName : "?");

    /* First the size, then the image. */
    ca.ctx = m->ctx;
    r = api.cuptiProfilerGetCounterAvailability(&ca);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiProfilerGetCounterAvailability", r, why, why_len);
    }
    if (ca.counterAvailabilityImageSize > 0) {
        m->avail = calloc(1, ca.counterAvailabilityImageSize);
        if (m->avail == NULL) {
            snprintf(why, why_len, "out of memory for the counter availability image");
            return CORUN_ENOMEM;
        }
        ca.pCounterAvailabilityImage = m->avail;
        r = api.cuptiProfilerGetCounterAvailability(&ca);
        if (r != CUPTI_SUCCESS) {
            return cupti_fail("cuptiProfilerGetCounterAvailability", r, why, why_len);
        }
    }
    return CORUN_OK;
}

/* The config image for the metrics into m->config, from m->host, and the
 * number of passes it takes. On failure m->config stays NULL. */
static int build_config(corun__meter *m, char *why, size_t why_len)
{
    host_config_add_metrics_params am = {
        .structSize = HOST_SIZE(host_config_add_metrics_params, numMetrics)};
    host_get_config_image_size_params cs = {
        .structSize = HOST_SIZE(host_get_config_image_size_params, configImageSize)};
    host_get_config_image_params ci = {
        .structSize = HOST_SIZE(host_get_config_image_params, pConfigImage)};
    host_get_num_of_passes_params np = {
        .structSize = HOST_SIZE(host_get_num_of_passes_params, numOfPasses)};
    CUptiResult r;
    char what[128];
    int rc;

    am.pHostObject = m->host;
    am.ppMetricNames = metric_names;
    am.numMetrics = M_COUNT;
    r = api.cuptiProfilerHostConfigAddMetrics(&am);
    if (r != CUPTI_SUCCESS) {
        snprintf(what, sizeof(what), "cuptiProfilerHostConfigAddMetrics (chip %s)", m->chip);
        return cupti_fail(what, r, why, why_len);
    }
    cs.pHostObject = m->host;
    r = api.cuptiProfilerHostGetConfigImageSize(&cs);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiProfilerHostGetConfigImageSize", r, why, why_len);
    }
    m->config = calloc(1, cs.configImageSize ? cs.configImageSize : 1);
    if (m->config == NULL) {
        snprintf(why, why_len, "out of memory for the config image");
        return CORUN_ENOMEM;
    }
    m->config_size = cs.configImageSize;
    ci.pHostObject = m->host;
    ci.configImageSize = m->config_size;
    ci.pConfigImage = m->config;
    r = api.cuptiProfilerHostGetConfigImage(&ci);
    if (r != CUPTI_SUCCESS) {
        rc = cupti_fail("cuptiProfilerHostGetConfigImage", r, why, why_len);
        goto out_free_config;
    }
    np.configImageSize = m->config_size;
    np.pConfigImage = m->config;
    r = api.cuptiProfilerHostGetNumOfPasses(&np);
    if (r != CUPTI_SUCCESS) {
        rc = cupti_fail("cuptiProfilerHostGetNumOfPasses", r, why, why_len);
        goto out_free_config;
    }
    m->passes = np.numOfPasses;
    return CORUN_OK;

out_free_config:
    free(m->config);
    m->config = NULL;
    return rc;
}

/* Empties the counter data image and binds it, with the config, to the
 * range profiler. Ranges accumulate in the image, so every measurement
 * starts from a fresh one. */
static int meter_arm(corun__meter *m, char *why, size_t why_len)
{
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci = {
        .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_SetConfig_Params sc = {
        .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    CUptiResult r;

    memset(m->data, 0, m->data_size);
    ci.pRangeProfilerObject = m->rp;
    ci.counterDataSize = m->data_size;
    ci.pCounterData = m->data;
    r = api.cuptiRangeProfilerCounterDataImageInitialize(&ci);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiRangeProfilerCounterDataImageInitialize", r, why, why_len);
    }
    sc.pRangeProfilerObject = m->rp;
    sc.configSize = m->config_size;
    sc.pConfig = m->config;
    sc.counterDataImageSize = m->data_size;
    sc.pCounterDataImage = m->data;
    sc.range = CUPTI_AutoRange;        /* one range per kernel launch */
    sc.replayMode = CUPTI_KernelReplay; /* CUPTI replays each kernel for every pass */
    sc.maxRangesPerPass = CORUN__METER_MAX_KERNELS;
    sc.numNestingLevels = 1; /* auto ranges are not nested */
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    r = api.cuptiRangeProfilerSetConfig(&sc);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiRangeProfilerSetConfig", r, why, why_len);
    }
    return CORUN_OK;
}

/* Starts profiling. */
static int meter_start(corun__meter *m, char *why, size_t why_len)
{
    CUpti_RangeProfiler_Start_Params p = {
        .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    CUptiResult r;

    p.pRangeProfilerObject = m->rp;
    r = api.cuptiRangeProfilerStart(&p);
    return r == CUPTI_SUCCESS ? CORUN_OK : cupti_fail("cuptiRangeProfilerStart", r, why, why_len);
}

/* Stops profiling and decodes what was collected into the counter data
 * image. With kernel replay every pass has been submitted by the time the
 * launches return, so one start/stop covers all of them; empty says nothing
 * was launched (open's probe), where what CUPTI says of passes means nothing. */
static int meter_stop(corun__meter *m, int empty, char *why, size_t why_len)
{
    CUpti_RangeProfiler_Stop_Params sp = {
        .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_DecodeData_Params dd = {
        .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    CUptiResult r;

    sp.pRangeProfilerObject = m->rp;
    r = api.cuptiRangeProfilerStop(&sp);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiRangeProfilerStop", r, why, why_len);
    }
    if (!empty && !sp.isAllPassSubmitted) {
        snprintf(why, why_len, "cuptiRangeProfilerStop: pass %zu of %zu still to run (kernel "
                 "replay should need none)", sp.passIndex, m->passes);
        return CORUN_ECUDA;
    }
    dd.pRangeProfilerObject = m->rp;
    r = api.cuptiRangeProfilerDecodeData(&dd);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiRangeProfilerDecodeData", r, why, why_len);
    }
    if (dd.numOfRangeDropped > 0) {
        snprintf(why, why_len, "cuptiRangeProfilerDecodeData: %zu kernel launches were not "
                 "profiled (at most %d per measurement)", dd.numOfRangeDropped,
                 CORUN__METER_MAX_KERNELS);
        return CORUN_ERANGE;
    }
    return CORUN_OK;
}

/* The device of ctx: CUPTI's ordinal for it in *dev_index, and the
 * driver's CUdevice in *dev (CUPTI names devices by ordinal; the driver
 * wants a CUdevice). */
static int context_device(const corun__cu *cu, CUcontext ctx, CUdevice *dev,
                          uint32_t *dev_index, char *why, size_t why_len)
{
    CUptiResult r;
    CUresult cr;

    r = api.cuptiGetDeviceId(ctx, dev_index);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiGetDeviceId", r, why, why_len);
    }
    cr = cu->cuDeviceGet(dev, (int)*dev_index);
    if (cr != CUDA_SUCCESS) {
        char buf[128];

        snprintf(why, why_len, "cuDeviceGet(%u): %s", *dev_index,
                 corun__cu_describe(cu, cr, buf, sizeof(buf)));
        return CORUN_ECUDA;
    }
    return CORUN_OK;
}

/* The profiler host object for m's chip and counter availability, into
 * m->host. */
static int host_init(corun__meter *m, char *why, size_t why_len)
{
    host_initialize_params hi = {.structSize = HOST_SIZE(host_initialize_params, pHostObject)};
    char what[128];
    CUptiResult r;

    hi.profilerType = HOST_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = m->chip;
    hi.pCounterAvailabilityImage = m->avail;
    r = api.cuptiProfilerHostInitialize(&hi);
    if (r != CUPTI_SUCCESS) {
        snprintf(what, sizeof(what), "cuptiProfilerHostInitialize (chip %s)", m->chip);
        return cupti_fail(what, r, why, why_len);
    }
    m->host = hi.pHostObject;
    return CORUN_OK;
}

/* Undoes host_init. */
static void host_deinit(corun__meter *m)
{
    host_deinitialize_params p = {.structSize = HOST_SIZE(host_deinitialize_params, pHostObject)};

    p.pHostObject = m->host;
    (void)api.cuptiProfilerHostDeinitialize(&p);
}

/* Enables the range profiler on m's context, into m->rp. */
static int range_enable(corun__meter *m, char *why, size_t why_len)
{
    CUpti_RangeProfiler_Enable_Params en = {
        .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    CUptiResult r;

    en.ctx = m->ctx;
    r = api.cuptiRangeProfilerEnable(&en);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiRangeProfilerEnable", r, why, why_len);
    }
    m->rp = en.pRangeProfilerObject;
    return CORUN_OK;
}

/* Undoes range_enable. */
static void range_disable(corun__meter *m)
{
    CUpti_RangeProfiler_Disable_Params p = {
        .structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};

    p.pRangeProfilerObject = m->rp;
    (void)api.cuptiRangeProfilerDisable(&p);
}

/* A counter data image for the metrics and CORUN__METER_MAX_KERNELS ranges,
 * into m->data. */
static int alloc_counter_data(corun__meter *m, char *why, size_t why_len)
{
    CUpti_RangeProfiler_GetCounterDataSize_Params ds = {
        .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    CUptiResult r;

    ds.pRangeProfilerObject = m->rp;
    ds.pMetricNames = metric_names;
    ds.numMetrics = M_COUNT;
    ds.maxNumOfRanges = CORUN__METER_MAX_KERNELS;
    ds.maxNumRangeTreeNodes = CORUN__METER_MAX_KERNELS;
    r = api.cuptiRangeProfilerGetCounterDataSize(&ds);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiRangeProfilerGetCounterDataSize", r, why, why_len);
    }
    m->data = malloc(ds.counterDataSize ? ds.counterDataSize : 1);
    if (m->data == NULL) {
        snprintf(why, why_len, "out of memory for the counter data image");
        return CORUN_ENOMEM;
    }
    m->data_size = ds.counterDataSize;
    return CORUN_OK;
}

/* An empty measurement. CUPTI checks the permission to read counters only
 * when profiling starts, so open makes one to report it. */
static int meter_probe(corun__meter *m, char *why, size_t why_len)
{
    int rc = meter_arm(m, why, why_len);

    if (rc == CORUN_OK) {
        rc = meter_start(m, why, why_len);
    }
    if (rc == CORUN_OK) {
        rc = meter_stop(m, 1, why, why_len);
    }
    return rc;
}

int corun__meter_open(CUcontext ctx, corun__meter **out, char *why, size_t why_len)
{
    const corun__cu *cu;
    corun__meter *m;
    uint32_t dev_index = 0;
    CUdevice dev;
    int rc;

    if (ctx == NULL || out == NULL) {
        snprintf(why, why_len, "corun__meter_open: no context");
        return CORUN_EINVAL;
    }
    if (api_get(why, why_len) == NULL) {
        return CORUN_ENOTSUP;
    }
    cu = corun__cu_load(why, why_len);
    if (cu == NULL) {
        return CORUN_ENODEV;
    }
    rc = profiler_acquire(why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    m = calloc(1, sizeof(*m));
    if (m == NULL) {
        snprintf(why, why_len, "out of memory for the meter");
        rc = CORUN_ENOMEM;
        goto out_release_profiler;
    }
    m->ctx = ctx;
    rc = context_device(cu, ctx, &dev, &dev_index, why, why_len);
    if (rc == CORUN_OK) {
        rc = check_device(dev, why, why_len);
    }
    if (rc != CORUN_OK) {
        goto out_free_meter;
    }
    rc = query_chip(m, dev_index, why, why_len);
    if (rc != CORUN_OK) {
        goto out_free_avail;
    }
    rc = host_init(m, why, why_len);
    if (rc != CORUN_OK) {
        goto out_free_avail;
    }
    rc = build_config(m, why, why_len);
    if (rc != CORUN_OK) {
        goto out_deinit_host;
    }
    rc = range_enable(m, why, why_len);
    if (rc != CORUN_OK) {
        goto out_free_config;
    }
    rc = alloc_counter_data(m, why, why_len);
    if (rc != CORUN_OK) {
        goto out_disable;
    }
    rc = meter_probe(m, why, why_len);
    if (rc != CORUN_OK) {
        goto out_free_data;
    }
    *out = m;
    return CORUN_OK;

out_free_data:
    free(m->data);
out_disable:
    range_disable(m);
out_free_config:
    free(m->config);
out_deinit_host:
    host_deinit(m);
out_free_avail:
    free(m->avail);
out_free_meter:
    free(m);
out_release_profiler:
    profiler_release();
    return rc;
}

int corun__meter_measure(corun__meter *m, int (*launch)(void *arg), void *arg,
                         corun__meter_sample *out, char *why, size_t why_len)
{
    CUpti_RangeProfiler_GetCounterDataInfo_Params di = {
        .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    double sum[M_COUNT] = {0};
    CUptiResult r;
    int rc;

    if (m == NULL || launch == NULL || out == NULL) {
        snprintf(why, why_len, "corun__meter_measure: no meter, launch or sample");
        return CORUN_EINVAL;
    }
    rc = meter_arm(m, why, why_len);
    if (rc == CORUN_OK) {
        rc = meter_start(m, why, why_len);
    }
    if (rc != CORUN_OK) {
        return rc;
    }
    rc = launch(arg);
    if (rc != CORUN_OK) {
        char ignored[8];

        /* The launch's failure is the one to report; the stop only leaves
         * the profiler ready for the next measurement or close. */
        (void)meter_stop(m, 0, ignored, sizeof(ignored));
        snprintf(why, why_len, "the profiled launch failed: %s", corun_status_name(rc));
        return rc;
    }
    rc = meter_stop(m, 0, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }

    di.pCounterDataImage = m->data;
    di.counterDataImageSize = m->data_size;
    r = api.cuptiRangeProfilerGetCounterDataInfo(&di);
    if (r != CUPTI_SUCCESS) {
        return cupti_fail("cuptiRangeProfilerGetCounterDataInfo", r, why, why_len);
    }
    for (size_t i = 0; i < di.numTotalRanges; i++) {
        host_evaluate_params ev = {.structSize = HOST_SIZE(host_evaluate_params, pMetricValues)};
        double v[M_COUNT] = {0};

        ev.pHostObject = m->host;
        ev.pCounterDataImage = m->data;
        ev.counterDataImageSize = m->data_size;
        ev.rangeIndex = i;
        ev.ppMetricNames = metric_names;
        ev.numMetrics = M_COUNT;
        ev.pMetricValues = v;
        r = api.cuptiProfilerHostEvaluateToGpuValues(&ev);
        if (r != CUPTI_SUCCESS) {
            return cupti_fail("cuptiProfilerHostEvaluateToGpuValues", r, why, why_len);
        }
        for (int k = 0; k < M_COUNT; k++) {
            sum[k] += v[k];
        }
    }
    /* An FMA is two operations. */
    out->flops = 2.0 * (sum[M_FFMA] + sum[M_DFMA]) + sum[M_FADD] + sum[M_FMUL] + sum[M_DADD] +
                 sum[M_DMUL];
    out->dram_bytes = sum[M_DRAM_READ] + sum[M_DRAM_WRITE];
    out->gpu_ns = sum[M_GPU_NS];
    out->kernels = (unsigned)di.numTotalRanges;
    return CORUN_OK;
}

void corun__meter_close(corun__meter *m)
{
    if (m == NULL) {
        return;
    }
    range_disable(m);
    host_deinit(m);
    free(m->data);
    free(m->config);
    free(m->avail);
    free(m);
    profiler_release();
}

#else /* !CORUN_HAVE_CUPTI */

/* Built where the CUPTI headers were not found: the meter is never there. */

int corun__meter_open(CUcontext ctx, corun__meter **out, char *why, size_t why_len)
{
    snprintf(why, why_len, "built without CUPTI headers (cupti_range_profiler.h not found)");
    return CORUN_ENOTSUP;
}

int corun__meter_measure(corun__meter *m, int (*launch)(void *arg), void *arg,
                         corun__meter_sample *out, char *why, size_t why_len)
{
    snprintf(why, why_len, "built without CUPTI headers (cupti_range_profiler.h not found)");
    return CORUN_ENOTSUP;
}

void corun__meter_close(corun__meter *m)
{
}

#endif
