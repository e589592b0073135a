/* counters.c - the metric sets, hardware counters per kernel through the CUPTI
 * Range Profiler with the Profiler Host API (see counters.h), and the
 * derivations read off them. Owns the CUPTI profiler state of the process
 * between kb_counters_open and kb_counters_close.
 *
 * Sequence: cuptiProfilerInitialize, device support check, chip name, host
 * object with the set's config image (which also gives the pass count; these
 * host steps may have run on a thread beforehand, see kb_counters_prepare),
 * range profiler enabled on the context; per profile call a fresh
 * counter data image, SetConfig (auto range, user replay), per pass Start, L2
 * flush, the launch, L2 flush, Stop; then DecodeData and one
 * EvaluateToGpuValues per range.
 *
 * Why user replay between two flushes. On the H200, with CUPTI 13.0, the
 * first range after each Start counts about 29 MB of DRAM writes that are not
 * its kernel's, whatever the L2 held before (kernel replay starts every
 * kernel that way: a 512 MiB copy then counts +0.6% writes, a bf16 softmax
 * at 32768x4096 up to +3.5%). And a range ends when its kernel does, so the
 * lines the kernel leaves dirty in the L2 (20-27 MB there) are written back
 * after it. The leading flush takes the first of these, the trailing flush
 * the second: the variant's kernels start from a clean L2 holding none of
 * their data, and the trailing flush's writes are the variant's and are
 * added to its last kernel. tests/gpu/counters_probe.c checks the result
 * against the bytes a copy must move, from three L2 states. */
#include "device.h"
#include "counters.h"

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Ranges (kernels) one profile call can hold; more are reported as dropped. */
#define KB_COUNTERS_MAX_RANGES 64

/* ---- the metric sets -------------------------------------------------------- */

/* One replay pass on GH100 together. */
#define CORE_METRICS                                                                     \
    KB_METRIC_DURATION, KB_METRIC_DRAM_READ, KB_METRIC_DRAM_WRITE, KB_METRIC_DRAM_PCT,   \
        KB_METRIC_OCCUPANCY, KB_METRIC_ISSUE, KB_METRIC_TENSOR, KB_METRIC_LOCAL_LD,      \
        KB_METRIC_LOCAL_ST

#define SOL_METRICS KB_METRIC_SM_SOL, KB_METRIC_MEM_SOL

#define STALL(r) KB_STALL_PREFIX #r KB_STALL_SUFFIX
/* The stall reasons GH100 counts (cuptiProfilerHostGetBaseMetrics). */
#define STALL_METRICS                                                                    \
    STALL(long_scoreboard), STALL(short_scoreboard), STALL(barrier), STALL(membar),      \
        STALL(mio_throttle), STALL(lg_throttle), STALL(math_pipe_throttle),              \
        STALL(tex_throttle), STALL(wait), STALL(not_selected), STALL(selected),          \
        STALL(dispatch_stall), STALL(drain), STALL(imc_miss), STALL(branch_resolving),   \
        STALL(no_instruction), STALL(sleeping), STALL(misc), STALL(gmma)

#define HIT_METRICS KB_METRIC_L1_HIT, KB_METRIC_L2_HIT

static const char *const core_metrics[] = {CORE_METRICS};
static const char *const sol_metrics[] = {CORE_METRICS, SOL_METRICS};
static const char *const stall_metrics[] = {CORE_METRICS, STALL_METRICS};
static const char *const full_metrics[] = {CORE_METRICS, SOL_METRICS, STALL_METRICS,
                                           HIT_METRICS};


/* The CUPTI metrics of each set, in the set's order. */
static const struct metric_set_row {
    kb_metric_set set;
    const char *const *metrics;
    size_t n;
} metric_sets[] = {
    {KB_METRICS_NONE, NULL, 0},
    {KB_METRICS_CORE, core_metrics, KB_COUNT(core_metrics)},
    {KB_METRICS_SOL, sol_metrics, KB_COUNT(sol_metrics)},
    {KB_METRICS_STALLS, stall_metrics, KB_COUNT(stall_metrics)},
    {KB_METRICS_FULL, full_metrics, KB_COUNT(full_metrics)},
};

_Static_assert(KB_COUNT(full_metrics) <= KB_MAX_METRICS, "KB_MAX_METRICS is too small");
_Static_assert(KB_COUNT(metric_sets) == KB_METRICS_COUNT, "a metric set without its metrics");

static const struct metric_set_row *set_row(kb_metric_set s)
{
    for (size_t i = 0; i < KB_COUNT(metric_sets); i++)
        if (metric_sets[i].set == s)
            return &metric_sets[i];
    return NULL;
}

size_t kb_metric_set_metrics(kb_metric_set s, const char *const **names)
{
    const struct metric_set_row *r = set_row(s);
    *names = r ? r->metrics : NULL;
    return r ? r->n : 0;
}

/* ---- checked calls ------------------------------------------------------------ */

/* Records a failed CUPTI call in e: the call, the result's name and message,
 * file and line. Returns KB_EENV. */
void kb_cupti_text(int result, const char **name, const char **msg)
{
    const CUptiResult r = (CUptiResult)result;
    if (cuptiGetResultString(r, name) != CUPTI_SUCCESS || !*name)
        *name = "unknown CUPTI result";
    if (cuptiGetErrorMessage(r, msg) != CUPTI_SUCCESS || !*msg || strcmp(*msg, *name) == 0)
        *msg = "";
}

static kb_status cupti_fail(kb_err *e, CUptiResult r, const char *call, const char *file,
                            int line)
{
    const char *name, *msg;
    kb_cupti_text(r, &name, &msg);
    return kb_fail(e, KB_EENV, "%s failed: %s%s%s (%d) at %s:%d", call, msg,
                   *msg ? ": " : "", name, (int)r, file, line);
}

/* Checks a CUPTI call: on failure records it in e, keeps the result in `cr`
 * (so that the caller can tell a missing capability from a fault), sets
 * st = KB_EENV and jumps to done. */
#define KB_CUPTI(call)                                                                   \
    do {                                                                                 \
        CUptiResult r_ = (call);                                                         \
        if (r_ != CUPTI_SUCCESS) {                                                       \
            cr = r_;                                                                     \
            st = cupti_fail(e, r_, #call, __FILE__, __LINE__);                           \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

/* Results that mean "no counters here", with the cause and the fix. */
static const struct soft_row {
    CUptiResult r;
    const char *cause;
    const char *fix;
} soft_results[] = {
    {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
     "no permission to read the GPU performance counters",
     "run as root, or load the nvidia driver with NVreg_RestrictProfilingToAdminUsers=0 "
     "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)"},
    {CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
     "another profiler (Nsight Systems, Nsight Compute, cuda-gdb) holds the GPU counters",
     "pass --metrics none, or run kbench outside the profiler"},
    {CUPTI_ERROR_HARDWARE_BUSY, "the GPU counters are in use by another process",
     "wait for the other profiling session to end, or pass --metrics none"},
    {CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED,
     "this virtual GPU does not support profiling",
     "run on a physical GPU, or pass --metrics none"},
    {CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
     "profiling is not enabled for this virtual GPU",
     "enable vGPU profiling on the host, or pass --metrics none"},
    {CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, "counters are not supported on a MIG instance",
     "run on a GPU with MIG disabled, or pass --metrics none"},
    {CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED,
     "counters are not supported with confidential computing on",
     "run on a GPU without confidential computing, or pass --metrics none"},
    {CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED, "counters are not supported on CMP GPUs",
     "run on another GPU, or pass --metrics none"},
    {CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED, "counters are not supported with SLI",
     "disable SLI, or pass --metrics none"},
    {CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED, "counters are not supported under WSL here",
     "run on native Linux, or pass --metrics none"},
    {CUPTI_ERROR_INVALID_CHIP_NAME, "this CUPTI does not know the GPU's chip",
     "use a CUDA toolkit that supports this GPU, or pass --metrics none"},
    {CUPTI_ERROR_NOT_COMPATIBLE, "this CUPTI does not match the installed driver",
     "use the CUDA toolkit that matches the driver, or pass --metrics none"},
    {CUPTI_ERROR_NOT_SUPPORTED, "the profiler does not support this GPU or configuration",
     "pass --metrics none"},
    {CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED, "the profiler does not support this GPU",
     "pass --metrics none"},
};

/* When r means a missing capability, writes "<cause> (<NAME>); <fix>" to why and
 * returns 1; otherwise 0. */
static int soft_reason(CUptiResult r, char *why, size_t why_n)
{
    for (size_t i = 0; i < KB_COUNT(soft_results); i++)
        if (soft_results[i].r == r) {
            const char *name = NULL;
            if (cuptiGetResultString(r, &name) != CUPTI_SUCCESS || !name)
                name = "?";
            if (why && why_n)
                snprintf(why, why_n, "%s (%s); %s", soft_results[i].cause, name,
                         soft_results[i].fix);
            return 1;
        }
    return 0;
}

static void set_why(char *why, size_t why_n, const char *s)
{
    if (why && why_n)
        kb_strlcpy(why, s, why_n);
}

/* ---- the host side: config image and pass count (no GPU) ---------------------- */

static void host_release(CUpti_Profiler_Host_Object *h)
{
    if (!h)
        return;
    CUpti_Profiler_Host_Deinitialize_Params p = {
        .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE,
        .pHostObject = h};
    cuptiProfilerHostDeinitialize(&p); /* nothing to do about a failure here */
}

/* Finds the first of names[] that the host object does not know and names it
 * in e; returns 1 when one was found, 0 otherwise. */
static int bad_metric(CUpti_Profiler_Host_Object *h, const char *chip,
                      const char *const *names, size_t n, kb_err *e)
{
    for (size_t i = 0; i < n; i++) {
        CUpti_Profiler_Host_GetMetricProperties_Params p = {
            .structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE,
            .pHostObject = h,
            .pMetricName = names[i]};
        if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS) {
            kb_fail(e, KB_EENV, "metric '%s' is not known on %s", names[i], chip);
            return 1;
        }
    }
    return 0;
}

/* Creates the host object for chip (avail: the counter availability image, or
 * NULL), adds the metrics and builds the config image (*img, malloc'd, the
 * caller frees) and its pass count. On failure *h is released and NULL; cr
 * holds the CUPTI result. */
static kb_status host_config(const char *chip, const uint8_t *avail,
                             const char *const *names, size_t n,
                             CUpti_Profiler_Host_Object **h, uint8_t **img,
                             size_t *img_size, int *passes, CUptiResult *cr_out,
                             kb_err *e)
{
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    *h = NULL;
    *img = NULL;
    *img_size = 0;

    CUpti_Profiler_Host_Initialize_Params hi = {
        .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE,
        .profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER,
        .pChipName = chip,
        .pCounterAvailabilityImage = avail};
    cr = cuptiProfilerHostInitialize(&hi);
    if (cr != CUPTI_SUCCESS) {
        st = cupti_fail(e, cr, "cuptiProfilerHostInitialize(&hi)", __FILE__, __LINE__);
        size_t len = e ? strlen(e->msg) : 0;
        if (e && len + 1 < sizeof e->msg)
            snprintf(e->msg + len, sizeof e->msg - len, " (chip '%s')", chip);
        goto done;
    }
    *h = hi.pHostObject;

    /* the CUPTI parameter is not const-qualified; it only reads the names */
    const char **mutable_names = (const char **)(uintptr_t)names;
    CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
        .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE,
        .pHostObject = *h,
        .ppMetricNames = mutable_names,
        .numMetrics = n};
    cr = cuptiProfilerHostConfigAddMetrics(&am);
    if (cr == CUPTI_ERROR_INVALID_METRIC_NAME && bad_metric(*h, chip, names, n, e)) {
        st = KB_EENV;
        goto done;
    }
    if (cr != CUPTI_SUCCESS) {
        st = cupti_fail(e, cr, "cuptiProfilerHostConfigAddMetrics(&am)", __FILE__,
                        __LINE__);
        goto done;
    }

    CUpti_Profiler_Host_GetConfigImageSize_Params cs = {
        .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE,
        .pHostObject = *h};
    KB_CUPTI(cuptiProfilerHostGetConfigImageSize(&cs));
    *img = malloc(cs.configImageSize ? cs.configImageSize : 1);
    if (!*img) {
        st = kb_fail(e, KB_EENV, "out of host memory for a %zu-byte config image",
                     cs.configImageSize);
        goto done;
    }
    *img_size = cs.configImageSize;
    CUpti_Profiler_Host_GetConfigImage_Params ci = {
        .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE,
        .pHostObject = *h,
        .configImageSize = *img_size,
        .pConfigImage = *img};
    KB_CUPTI(cuptiProfilerHostGetConfigImage(&ci));

    CUpti_Profiler_Host_GetNumOfPasses_Params np = {
        .structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE,
        .configImageSize = *img_size,
        .pConfigImage = *img};
    KB_CUPTI(cuptiProfilerHostGetNumOfPasses(&np));
    *passes = (int)np.numOfPasses;
done:
    if (st != KB_OK) {
        host_release(*h);
        *h = NULL;
        free(*img);
        *img = NULL;
        *img_size = 0;
    }
    if (cr_out)
        *cr_out = cr;
    return st;
}

kb_status kb_counters_passes(const char *chip, kb_metric_set s, int *passes, kb_err *e)
{
    const char *const *names = NULL;
    size_t n = kb_metric_set_metrics(s, &names);
    CUpti_Profiler_Host_Object *h = NULL;
    uint8_t *img = NULL;
    size_t img_size = 0;
    *passes = 0;
    if (!set_row(s))
        return kb_fail(e, KB_EUSAGE, "unknown metric set %d", (int)s);
    if (n == 0)
        return KB_OK;
    kb_status st =
        host_config(chip, NULL, names, n, &h, &img, &img_size, passes, NULL, e);
    host_release(h);
    free(img);
    return st;
}

/* ---- the target side ---------------------------------------------------------- */

struct kb_counters {
    kb_metric_set set;
    const char *const *names; /* the set's metric names (static) */
    size_t n;
    CUcontext ctx;
    int device;                       /* CUDA ordinal */
    int profiler_initialised;         /* cuptiProfilerInitialize succeeded */
    CUpti_Profiler_Host_Object *host; /* evaluates counter data to metric values */
    uint8_t *config;                  /* config image: which counters, in which pass */
    size_t config_size;
    int passes;
    CUpti_RangeProfiler_Object *rp; /* range profiler enabled on ctx, or NULL */
    int used;                       /* a profile call has run on rp */
};

int kb_counters_foreign_profiler(char *why, size_t why_n)
{
    static const char *const exact[] = {"NSYS_PROFILING_SESSION_ID",
                                        "CUDA_INJECTION64_PATH"};
    static const char *const prefixes[] = {"NV_COMPUTE_PROFILER_"};
    char var[64] = "";
    for (size_t i = 0; i < KB_COUNT(exact) && !var[0]; i++) {
        const char *v = getenv(exact[i]);
        if (v && *v)
            kb_strlcpy(var, exact[i], sizeof var);
    }
    for (char **env = environ; env && *env && !var[0]; env++)
        for (size_t i = 0; i < KB_COUNT(prefixes); i++)
            if (strncmp(*env, prefixes[i], strlen(prefixes[i])) == 0) {
                size_t len = strcspn(*env, "=");
                if (len >= sizeof var)
                    len = sizeof var - 1;
                memcpy(var, *env, len);
                var[len] = '\0';
                break;
            }
    if (!var[0])
        return 0;
    if (why && why_n)
        snprintf(
            why, why_n,
            "running under a profiler or CUDA injection tool (%s is set), which holds "
            "the GPU counters, so counters are off as with --metrics none; run kbench "
            "outside the profiler to collect them",
            var);
    return 1;
}

/* Why cuptiProfilerDeviceSupported said no, as "<cause>; <fix>". */
static void unsupported_reason(const CUpti_Profiler_DeviceSupported_Params *ds, char *why,
                               size_t why_n)
{
    const struct {
        CUpti_Profiler_Support_Level level;
        const char *cause, *fix;
    } rows[] = {
        {ds->architecture,
         "the profiler does not support this GPU's architecture "
         "(compute capability 7.0 or newer is needed)",
         "pass --metrics none"},
        {ds->vGpu, "this virtual GPU does not allow profiling",
         "enable vGPU profiling on the host, or pass --metrics none"},
        {ds->confidentialCompute,
         "counters are not supported with confidential computing on",
         "pass --metrics none"},
        {ds->cmp, "counters are not supported on CMP GPUs", "pass --metrics none"},
        {ds->sli, "counters are not supported with SLI",
         "disable SLI, or pass --metrics none"},
        {ds->wsl, "counters are not supported under WSL here",
         "run on native Linux, or pass --metrics none"},
    };
    for (size_t i = 0; i < KB_COUNT(rows); i++)
        if (rows[i].level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
            if (why && why_n)
                snprintf(why, why_n, "%s%s; %s", rows[i].cause,
                         rows[i].level == CUPTI_PROFILER_CONFIGURATION_DISABLED
                             ? " (disabled by the system)"
                             : "",
                         rows[i].fix);
            return;
        }
    set_why(why, why_n,
            "the profiler does not support this GPU or configuration (a MIG instance?); "
            "pass --metrics none");
}

static void range_profiler_disable(kb_counters *c)
{
    if (!c->rp)
        return;
    CUpti_RangeProfiler_Disable_Params p = {
        .structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE,
        .pRangeProfilerObject = c->rp};
    cuptiRangeProfilerDisable(&p); /* nothing to do about a failure here */
    c->rp = NULL;
}

void kb_counters_close(kb_counters *c)
{
    if (!c)
        return;
    range_profiler_disable(c);
    host_release(c->host);
    if (c->profiler_initialised) {
        CUpti_Profiler_DeInitialize_Params p = {
            .structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
        cuptiProfilerDeInitialize(&p);
    }
    free(c->config);
    free(c);
}

/* host_config for the chip of CUDA device `device` (the profiler initialised). */
static kb_status device_config(int device, const char *const *names, size_t n,
                               CUpti_Profiler_Host_Object **h, uint8_t **img,
                               size_t *img_size, int *passes, CUptiResult *cr_out, kb_err *e)
{
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    CUpti_Device_GetChipName_Params cn = {
        .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE,
        .deviceIndex = (size_t)device};
    KB_CUPTI(cuptiDeviceGetChipName(&cn));
    /* no counter availability image: asking for it costs 80-600 ms a process
     * on the H200, and a counter that is not there fails the Enable,
     * SetConfig or Start with the same soft reasons */
    st = host_config(cn.pChipName, NULL, names, n, h, img, img_size, passes, &cr, e);
done:
    *cr_out = cr;
    return st;
}

/* The host half of kb_counters_open (profiler initialised, chip name, config
 * image), built on a thread of its own by kb_counters_prepare while the
 * process creates its CUDA context. */
static struct {
    pthread_t thread;
    int running;     /* the thread was started and not yet joined */
    kb_metric_set set;
    int device;
    kb_status st;    /* of the thread's work */
    int initialised; /* cuptiProfilerInitialize succeeded there */
    CUpti_Profiler_Host_Object *host;
    uint8_t *config;
    size_t config_size;
    int passes;
} prep;

static void *prep_main(void *arg)
{
    (void)arg;
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    kb_err err = {{0}}, *e = &err;
    const char *const *names = NULL;
    size_t n = kb_metric_set_metrics(prep.set, &names);
    CUpti_Profiler_Initialize_Params pi = {
        .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    KB_CUPTI(cuptiProfilerInitialize(&pi));
    prep.initialised = 1;
    st = device_config(prep.device, names, n, &prep.host, &prep.config, &prep.config_size,
                       &prep.passes, &cr, e);
done:
    prep.st = st;
    return NULL;
}

/* Joins the thread and frees what it built; the profiler stays initialised
 * only when keep_init. */
static void prep_release(int keep_init)
{
    kb_counters_prepare_wait();
    host_release(prep.host);
    free(prep.config);
    if (prep.initialised && !keep_init) {
        CUpti_Profiler_DeInitialize_Params p = {
            .structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
        cuptiProfilerDeInitialize(&p);
    }
    memset(&prep, 0, sizeof prep);
}

void kb_counters_prepare(kb_metric_set s, int device)
{
    prep_release(0);
    if (s == KB_METRICS_NONE || !set_row(s) || kb_counters_foreign_profiler(NULL, 0))
        return;
    prep.set = s;
    prep.device = device;
    prep.running = pthread_create(&prep.thread, NULL, prep_main, NULL) == 0;
}

void kb_counters_prepare_wait(void)
{
    if (prep.running) {
        pthread_join(prep.thread, NULL);
        prep.running = 0;
    }
}

void kb_counters_prepare_discard(void)
{
    prep_release(0);
}

/* Moves a prepared host half for c's set and device into c (1), or releases
 * whatever was prepared (0: open builds it itself and reports its errors). */
static int prep_take(kb_counters *c)
{
    kb_counters_prepare_wait();
    if (prep.st != KB_OK || !prep.host || prep.set != c->set || prep.device != c->device) {
        prep_release(0);
        return 0;
    }
    c->host = prep.host;
    c->config = prep.config;
    c->config_size = prep.config_size;
    c->passes = prep.passes;
    c->profiler_initialised = prep.initialised;
    prep.host = NULL;
    prep.config = NULL;
    prep_release(1);
    return 1;
}

kb_status kb_counters_open(kb_metric_set s, kb_counters **out, char *why, size_t why_n,
                           kb_err *e)
{
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    kb_counters *c = NULL;
    *out = NULL;
    set_why(why, why_n, "");
    if (!set_row(s))
        return kb_fail(e, KB_EUSAGE, "unknown metric set %d", (int)s);
    if (s == KB_METRICS_NONE)
        return KB_OK;
    if (kb_counters_foreign_profiler(why, why_n))
        return KB_OK;
    if (!(c = calloc(1, sizeof *c)))
        return kb_fail(e, KB_EENV, "out of host memory");
    c->set = s;
    c->n = kb_metric_set_metrics(s, &c->names);

    if ((st = kb_current_context(&c->ctx, &c->device, e)) != KB_OK)
        goto done;

    int prepared = prep_take(c);
    if (!prepared) {
        CUpti_Profiler_Initialize_Params pi = {
            .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        KB_CUPTI(cuptiProfilerInitialize(&pi));
        c->profiler_initialised = 1;
    }

    CUpti_Profiler_DeviceSupported_Params ds = {
        .structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE,
        .cuDevice = (CUdevice)c->device,
        .api = CUPTI_PROFILER_RANGE_PROFILING};
    KB_CUPTI(cuptiProfilerDeviceSupported(&ds));
    if (ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
        unsupported_reason(&ds, why, why_n);
        goto soft;
    }

    if (!prepared && (st = device_config(c->device, c->names, c->n, &c->host, &c->config,
                                         &c->config_size, &c->passes, &cr, e)) != KB_OK)
        goto done;

    CUpti_RangeProfiler_Enable_Params en = {
        .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, .ctx = c->ctx};
    KB_CUPTI(cuptiRangeProfilerEnable(&en));
    c->rp = en.pRangeProfilerObject;
done:
    if (st != KB_OK && cr != CUPTI_SUCCESS && soft_reason(cr, why, why_n))
        goto soft;
    if (st != KB_OK) {
        kb_counters_close(c);
        c = NULL;
    }
    *out = c;
    return st;
soft:
    kb_counters_close(c);
    *out = NULL;
    return KB_OK;
}

int kb_counters_pass_count(const kb_counters *c)
{
    return c ? c->passes : 0;
}

/* Fills v with the metric values of range ri of the counter data image. */
static kb_status evaluate_range(kb_counters *c, const uint8_t *cdata, size_t cdata_size,
                                size_t ri, kb_counter_values *v, kb_err *e)
{
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    double values[KB_MAX_METRICS];
    const char **mutable_names = (const char **)(uintptr_t)c->names;
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
        .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE,
        .pHostObject = c->host,
        .pCounterDataImage = cdata,
        .counterDataImageSize = cdata_size,
        .rangeIndex = ri,
        .ppMetricNames = mutable_names,
        .numMetrics = c->n,
        .pMetricValues = values};
    for (size_t m = 0; m < c->n; m++)
        values[m] = NAN;
    KB_CUPTI(cuptiProfilerHostEvaluateToGpuValues(&ev));
    v->n = (int)c->n;
    for (size_t m = 0; m < c->n; m++) {
        kb_strlcpy(v->name[m], c->names[m], sizeof v->name[m]);
        v->value[m] = values[m];
    }
done:
    (void)cr;
    return st;
}

/* What one profile call works on. */
typedef struct profile_call {
    kb_launch_fn launch;
    const kb_args *a;
    cudaStream_t stream;
    void *flush;
    size_t flush_bytes;
    uint8_t *cdata; /* the counter data image (malloc'd) */
    size_t cdata_size;
    int started; /* a pass is started and not stopped */
} profile_call;

/* Every call is a fresh range profiler session on the context, after the
 * device is idle. */
static kb_status fresh_session(kb_counters *c, CUptiResult *cr_out, kb_err *e)
{
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    KB_CUDA(cudaDeviceSynchronize());
    if (c->used || !c->rp) {
        range_profiler_disable(c);
        CUpti_RangeProfiler_Enable_Params en = {
            .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, .ctx = c->ctx};
        KB_CUPTI(cuptiRangeProfilerEnable(&en));
        c->rp = en.pRangeProfilerObject;
    }
    c->used = 1;
done:
    *cr_out = cr;
    return st;
}

/* A counter data image for the set's metrics, and the session's configuration:
 * auto ranges (one per kernel), user replay. */
static kb_status configure(kb_counters *c, profile_call *p, CUptiResult *cr_out, kb_err *e)
{
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    const char **mutable_names = (const char **)(uintptr_t)c->names;
    CUpti_RangeProfiler_GetCounterDataSize_Params gs = {
        .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE,
        .pRangeProfilerObject = c->rp,
        .pMetricNames = mutable_names,
        .numMetrics = c->n,
        .maxNumOfRanges = KB_COUNTERS_MAX_RANGES,
        .maxNumRangeTreeNodes = KB_COUNTERS_MAX_RANGES};
    KB_CUPTI(cuptiRangeProfilerGetCounterDataSize(&gs));
    if (!(p->cdata = calloc(1, gs.counterDataSize ? gs.counterDataSize : 1))) {
        st = kb_fail(e, KB_EENV, "out of host memory for a %zu-byte counter data image",
                     gs.counterDataSize);
        goto done;
    }
    p->cdata_size = gs.counterDataSize;
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci = {
        .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE,
        .pRangeProfilerObject = c->rp,
        .counterDataSize = p->cdata_size,
        .pCounterData = p->cdata};
    KB_CUPTI(cuptiRangeProfilerCounterDataImageInitialize(&ci));
    CUpti_RangeProfiler_SetConfig_Params sc = {
        .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE,
        .pRangeProfilerObject = c->rp,
        .configSize = c->config_size,
        .pConfig = c->config,
        .counterDataImageSize = p->cdata_size,
        .pCounterDataImage = p->cdata,
        .range = CUPTI_AutoRange,
        .replayMode = CUPTI_UserReplay,
        .maxRangesPerPass = KB_COUNTERS_MAX_RANGES,
        .numNestingLevels = 1,
        .minNestingLevel = 1,
        .passIndex = 0,
        .targetNestingLevel = 1};
    KB_CUPTI(cuptiRangeProfilerSetConfig(&sc));
done:
    *cr_out = cr;
    return st;
}

/* The flush (when there is one), the launcher, the flush, all on the stream:
 * the CUDA error of the first that fails. *launch_failed tells which. */
static cudaError_t flushed_launch(const profile_call *p, int *launch_failed)
{
    cudaError_t fe = p->flush_bytes ? kb_flush_l2(p->flush, p->flush_bytes, p->stream)
                                    : cudaSuccess;
    cudaError_t le = fe == cudaSuccess ? p->launch(p->a, p->stream) : cudaSuccess;
    if (fe == cudaSuccess && le == cudaSuccess && p->flush_bytes)
        fe = kb_flush_l2(p->flush, p->flush_bytes, p->stream);
    *launch_failed = le != cudaSuccess;
    return le != cudaSuccess ? le : fe;
}

/* One round per replay pass: the launcher runs again, between two flushes. */
static kb_status replay(kb_counters *c, profile_call *p, CUptiResult *cr_out, kb_err *e)
{
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    for (int round = 0; round < c->passes; round++) {
        CUpti_RangeProfiler_Start_Params sp = {
            .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE,
            .pRangeProfilerObject = c->rp};
        KB_CUPTI(cuptiRangeProfilerStart(&sp));
        p->started = 1;
        int launch_failed = 0;
        cudaError_t ce = flushed_launch(p, &launch_failed);
        CUpti_RangeProfiler_Stop_Params tp = {
            .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE,
            .pRangeProfilerObject = c->rp};
        KB_CUPTI(cuptiRangeProfilerStop(&tp));
        p->started = 0;
        if (ce != cudaSuccess) {
            st = kb_fail(e, KB_EENV,
                         launch_failed ? "the launcher failed under the profiler: %s (%s)"
                                       : "flushing the L2 under the profiler failed: %s (%s)",
                         cudaGetErrorString(ce), cudaGetErrorName(ce));
            goto done;
        }
        if (tp.isAllPassSubmitted)
            break;
        if (round == c->passes - 1) {
            st = kb_fail(e, KB_EENV, "the profiler wanted more than the %d passes it named",
                         c->passes);
            goto done;
        }
    }
    KB_CUDA(cudaStreamSynchronize(p->stream));
done:
    *cr_out = cr;
    return st;
}

/* The metric values of the kernels' ranges into vals[0 .. *nkernels), between
 * the ranges of the two flushes (when there are flushes); the trailing flush's
 * DRAM writes, the lines the variant left dirty, are added to its last kernel. */
static kb_status decode(kb_counters *c, const profile_call *p, kb_counter_values *vals,
                        int max_kernels, int *nkernels, CUptiResult *cr_out, kb_err *e)
{
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    CUpti_RangeProfiler_DecodeData_Params dd = {
        .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE,
        .pRangeProfilerObject = c->rp};
    KB_CUPTI(cuptiRangeProfilerDecodeData(&dd));
    if (dd.numOfRangeDropped) {
        st = kb_fail(e, KB_EENV,
                     "the profiler dropped %zu kernel ranges (more than %d kernels)",
                     dd.numOfRangeDropped, KB_COUNTERS_MAX_RANGES);
        goto done;
    }
    CUpti_RangeProfiler_GetCounterDataInfo_Params gi = {
        .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE,
        .pCounterDataImage = p->cdata,
        .counterDataImageSize = p->cdata_size};
    KB_CUPTI(cuptiRangeProfilerGetCounterDataInfo(&gi));
    const size_t nflush = p->flush_bytes ? 2 : 0;
    if (gi.numTotalRanges <= nflush) {
        st = kb_fail(e, KB_EENV, "the profiler saw %zu ranges for a launcher between %zu "
                     "flushes: no kernel", gi.numTotalRanges, nflush);
        goto done;
    }
    const size_t nk = gi.numTotalRanges - nflush, first = nflush / 2;
    if (nk > (size_t)max_kernels) {
        st = kb_fail(e, KB_EENV, "the launcher ran %zu kernels; at most %d can be recorded", nk,
                     max_kernels);
        goto done;
    }
    for (size_t k = 0; k < nk; k++)
        KB_TRY(evaluate_range(c, p->cdata, p->cdata_size, first + k, &vals[k], e));
    if (p->flush_bytes) {
        kb_counter_values tail;
        KB_TRY(evaluate_range(c, p->cdata, p->cdata_size, first + nk, &tail, e));
        double left = kb_counter_get(&tail, KB_METRIC_DRAM_WRITE);
        kb_counter_values *last = &vals[nk - 1];
        for (int m = 0; m < last->n; m++)
            if (strcmp(last->name[m], KB_METRIC_DRAM_WRITE) == 0)
                last->value[m] += left; /* NAN when the flush has no value */
    }
    *nkernels = (int)nk;
done:
    *cr_out = cr;
    return st;
}

kb_status kb_counters_profile(kb_counters *c, kb_launch_fn launch, const kb_args *a,
                              cudaStream_t stream, void *flush, size_t flush_bytes,
                              kb_counter_values *vals, int max_kernels, int *nkernels,
                              int *passes, char *why, size_t why_n, kb_err *e)
{
    kb_status st = KB_OK;
    CUptiResult cr = CUPTI_SUCCESS;
    profile_call p = {launch, a, stream, flush, flush_bytes, NULL, 0, 0};
    *nkernels = 0;
    *passes = 0;
    set_why(why, why_n, "");
    if (!c || !launch)
        return kb_fail(e, KB_EUSAGE,
                       "kb_counters_profile needs an open handle and a launcher");
    KB_TRY(fresh_session(c, &cr, e));
    KB_TRY(configure(c, &p, &cr, e));
    KB_TRY(replay(c, &p, &cr, e));
    KB_TRY(decode(c, &p, vals, max_kernels, nkernels, &cr, e));
    *passes = c->passes;
done:
    if (p.started) {
        CUpti_RangeProfiler_Stop_Params tp = {
            .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE,
            .pRangeProfilerObject = c->rp};
        cuptiRangeProfilerStop(&tp);
    }
    free(p.cdata);
    if (st != KB_OK && cr != CUPTI_SUCCESS && soft_reason(cr, why, why_n)) {
        *nkernels = 0;
        *passes = 0;
        return KB_OK;
    }
    return st;
}

/* ---- derivations ---------------------------------------------------------------- */

double kb_counter_get(const kb_counter_values *v, const char *name)
{
    for (int i = 0; v && i < v->n && i < KB_MAX_METRICS; i++)
        if (strcmp(v->name[i], name) == 0)
            return v->value[i];
    return NAN;
}

double kb_counter_sum(const kb_counter_values *vals, int n, const char *name)
{
    if (n <= 0)
        return NAN;
    double sum = 0;
    for (int k = 0; k < n; k++)
        sum += kb_counter_get(&vals[k], name); /* a missing one makes the sum NAN */
    return sum;
}

double kb_stall_fractions(const kb_counter_values *v, char names[][KB_STALL_NAME_MAX],
                          double *fractions, int max, int *n)
{
    const size_t pre = strlen(KB_STALL_PREFIX), suf = strlen(KB_STALL_SUFFIX);
    double total = 0;
    *n = 0;
    for (int i = 0; v && i < v->n && i < KB_MAX_METRICS && *n < max; i++) {
        const char *m = v->name[i];
        size_t len = strlen(m);
        double x = v->value[i];
        if (len <= pre + suf || strncmp(m, KB_STALL_PREFIX, pre) != 0 ||
            strcmp(m + len - suf, KB_STALL_SUFFIX) != 0 || !isfinite(x) || x < 0)
            continue;
        size_t rlen = len - pre - suf;
        if (rlen >= KB_STALL_NAME_MAX)
            rlen = KB_STALL_NAME_MAX - 1;
        memcpy(names[*n], m + pre, rlen);
        names[*n][rlen] = '\0';
        fractions[*n] = x;
        total += x;
        (*n)++;
    }
    if (!(total > 0)) {
        *n = 0;
        return total;
    }
    for (int i = 0; i < *n; i++)
        fractions[i] /= total;
    /* insertion sort: about 19 entries */
    for (int i = 1; i < *n; i++) {
        double f = fractions[i];
        char nm[KB_STALL_NAME_MAX];
        memcpy(nm, names[i], sizeof nm);
        int j = i - 1;
        while (j >= 0 &&
               (fractions[j] < f || (fractions[j] == f && strcmp(names[j], nm) > 0))) {
            fractions[j + 1] = fractions[j];
            memcpy(names[j + 1], names[j], sizeof nm);
            j--;
        }
        fractions[j + 1] = f;
        memcpy(names[j + 1], nm, sizeof nm);
    }
    return total;
}

kb_sm_limits kb_sm_limits_sm90(void)
{
    kb_sm_limits L = {
        /* registers */
        .regs_per_sm = 65536, .regs_per_block = 65536, .reg_alloc_unit = 256,
        .reg_partitions = 4, .max_regs_per_thread = 255,
        /* shared memory */
        .smem_per_sm = 233472, .smem_per_block = 232448, .smem_reserved_per_block = 1024,
        .smem_alloc_unit = 128,
        /* threads and blocks */
        .max_threads_per_sm = 2048, .max_threads_per_block = 1024, .max_blocks_per_sm = 32,
        .warp_size = 32,
    };
    return L;
}

static long long round_up(long long x, long long unit)
{
    return unit > 0 ? (x + unit - 1) / unit * unit : x;
}

int kb_occupancy_blocks(const kb_sm_limits *L, int regs_per_thread, int threads_per_block,
                        int smem_per_block, kb_occ_limit *limiter)
{
    kb_occ_limit lim = KB_LIMIT_WARPS;
    int blocks = 0;
    if (threads_per_block <= 0 || threads_per_block > L->max_threads_per_block ||
        L->warp_size <= 0 || L->reg_partitions <= 0)
        goto done;
    long long warps = (threads_per_block + L->warp_size - 1) / L->warp_size;

    /* blocks and warps: the launch shape */
    long long by_blocks = L->max_blocks_per_sm;
    long long by_warps = (L->max_threads_per_sm / L->warp_size) / warps;

    /* registers: given per warp in allocation units, from each sub-partition's
     * share of the register file; a block must also fit the per-block limit,
     * counted with its warps rounded up to the sub-partitions */
    long long by_regs;
    long long reg_warp =
        round_up((long long)regs_per_thread * L->warp_size, L->reg_alloc_unit);
    if (regs_per_thread > L->max_regs_per_thread ||
        reg_warp * warps > L->regs_per_block ||
        reg_warp * round_up(warps, L->reg_partitions) > L->regs_per_block)
        by_regs = 0;
    else if (reg_warp == 0)
        by_regs = by_blocks;
    else
        by_regs =
            (L->regs_per_sm / L->reg_partitions / reg_warp) * L->reg_partitions / warps;

    /* shared memory: the block's bytes plus the reserved part, in allocation units */
    long long smem = round_up((long long)(smem_per_block > 0 ? smem_per_block : 0) +
                                  L->smem_reserved_per_block,
                              L->smem_alloc_unit);
    long long by_smem;
    if (smem_per_block > L->smem_per_block)
        by_smem = 0;
    else
        by_smem = smem > 0 ? L->smem_per_sm / smem : by_blocks;

    /* the smallest wins; on a tie the earlier of blocks, warps, registers, shared */
    const struct {
        long long blocks;
        kb_occ_limit lim;
    } by[] = {{by_blocks, KB_LIMIT_BLOCKS},
              {by_warps, KB_LIMIT_WARPS},
              {by_regs, KB_LIMIT_REGISTERS},
              {by_smem, KB_LIMIT_SHARED}};
    long long best = by[0].blocks;
    lim = by[0].lim;
    for (size_t i = 1; i < KB_COUNT(by); i++)
        if (by[i].blocks < best) {
            best = by[i].blocks;
            lim = by[i].lim;
        }
    blocks = (int)best;
done:
    if (limiter)
        *limiter = lim;
    return blocks;
}

const char *kb_occ_limit_name(kb_occ_limit l)
{
    static const char *const names[] = {
        [KB_LIMIT_REGISTERS] = "registers",
        [KB_LIMIT_SHARED] = "shared memory",
        [KB_LIMIT_WARPS] = "warps",
        [KB_LIMIT_BLOCKS] = "blocks",
    };
    return (unsigned)l < KB_COUNT(names) ? names[l] : "?";
}
