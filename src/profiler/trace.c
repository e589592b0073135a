/* trace.c - the kernels one launch ran, from CUPTI Activity records (see
 * trace.h). Owns the Activity API's buffer callbacks of the process and the
 * records collected between enabling and disabling kernel activity.
 *
 * Kernel activity (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which leaves kernels
 * free to overlap) is on only around the one traced launch; records arrive
 * through the buffer-completed callback, which the forced flush after the
 * stream synchronisation calls before it returns. The harness traces before
 * its counter pass: Activity records, then the Range Profiler, in one
 * process, is the order that was seen to work on the H200. */
#include "trace.h"

#include "counters.h"

#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of one activity buffer (CUPTI asks for more when one fills). */
#define TRACE_BUF_BYTES ((size_t)1 << 20)
/* Kernels one traced launch can hold; more are reported as lost. */
#define TRACE_MAX 64

/* The records of the launch being traced; the callback may run on a CUPTI
 * thread. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    kb_traced_kernel k[TRACE_MAX];
    uint64_t start[TRACE_MAX]; /* ns, for the launch order */
    int n;
    int lost;        /* kernels past TRACE_MAX */
    int bad_buffer;  /* a buffer could not be read */
} trace;
static int registered; /* the buffer callbacks are registered (once a process) */

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    *buf = aligned_alloc(8, TRACE_BUF_BYTES); /* CUPTI wants 8-byte alignment */
    *size = *buf ? TRACE_BUF_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
                                      size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&trace_lock);
    for (;;) {
        CUptiResult r = buf ? cuptiActivityGetNextRecord(buf, valid, &rec)
                            : CUPTI_ERROR_MAX_LIMIT_REACHED;
        if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) /* the end of the buffer */
            break;
        if (r != CUPTI_SUCCESS) {
            trace.bad_buffer = 1;
            break;
        }
        if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
            rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        if (trace.n == TRACE_MAX) {
            trace.lost++;
            continue;
        }
        const CUpti_ActivityKernel10 *a = (const CUpti_ActivityKernel10 *)rec;
        kb_traced_kernel *k = &trace.k[trace.n];
        trace.start[trace.n++] = a->start;
        kb_strlcpy(k->name, a->name ? a->name : "?", sizeof k->name);
        k->grid = (kb_dim3){(unsigned)a->gridX, (unsigned)a->gridY, (unsigned)a->gridZ};
        k->block = (kb_dim3){(unsigned)a->blockX, (unsigned)a->blockY, (unsigned)a->blockZ};
        k->registers = a->registersPerThread;
        k->static_smem = a->staticSharedMemory;
        k->dynamic_smem = a->dynamicSharedMemory;
        k->local_bytes = a->localMemoryPerThread;
    }
    pthread_mutex_unlock(&trace_lock);
    free(buf);
}

/* Writes "<call>: <CUPTI result name>[: message]" to why. */
static void cupti_why(CUptiResult r, const char *call, char *why, size_t why_n)
{
    const char *name, *msg;
    kb_cupti_text(r, &name, &msg);
    if (why && why_n)
        snprintf(why, why_n, "tracing the kernels with the CUPTI Activity API failed: %s: %s%s%s",
                 call, name, *msg ? ": " : "", msg);
}

kb_status kb_trace_kernels(kb_launch_fn launch, const kb_args *a, cudaStream_t s,
                           kb_traced_kernel *k, int max, int *n, char *why, size_t why_n,
                           kb_err *e)
{
    CUptiResult r = CUPTI_SUCCESS;
    const char *call = "";
    *n = 0;
    if (why && why_n)
        why[0] = '\0';
    char foreign[384];
    if (kb_counters_foreign_profiler(foreign, sizeof foreign)) {
        /* its CUPTI client owns the activity buffers: registering ours would take them */
        if (why && why_n)
            snprintf(why, why_n, "the kernels were not traced: %.300s", foreign);
        return KB_OK;
    }
    cudaError_t ce = cudaStreamSynchronize(s);
    if (ce != cudaSuccess)
        return kb_fail(e, KB_EENV, "cudaStreamSynchronize before tracing failed: %s (%s)",
                       cudaGetErrorString(ce), cudaGetErrorName(ce));
    if (!registered) {
        call = "cuptiActivityRegisterCallbacks";
        if ((r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) !=
            CUPTI_SUCCESS)
            goto soft;
        registered = 1;
    }
    pthread_mutex_lock(&trace_lock);
    memset(&trace, 0, sizeof trace);
    pthread_mutex_unlock(&trace_lock);
    call = "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)";
    if ((r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS)
        goto soft;
    cudaError_t le = launch(a, s);
    ce = le == cudaSuccess ? cudaStreamSynchronize(s) : cudaSuccess;
    CUptiResult fr = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    CUptiResult dr = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (le != cudaSuccess)
        return kb_fail(e, KB_EENV, "the launcher failed while its kernels were traced: %s (%s)",
                       cudaGetErrorString(le), cudaGetErrorName(le));
    if (ce != cudaSuccess)
        return kb_fail(e, KB_EENV, "cudaStreamSynchronize after the traced launch failed: %s (%s)",
                       cudaGetErrorString(ce), cudaGetErrorName(ce));
    if ((r = fr) != CUPTI_SUCCESS) {
        call = "cuptiActivityFlushAll";
        goto soft;
    }
    if ((r = dr) != CUPTI_SUCCESS) {
        call = "cuptiActivityDisable";
        goto soft;
    }
    pthread_mutex_lock(&trace_lock);
    if (trace.bad_buffer || trace.lost || trace.n > max) {
        if (why && why_n)
            snprintf(why, why_n,
                     "tracing the kernels with the CUPTI Activity API lost records (%d kernels "
                     "kept, %d more past %d%s)",
                     trace.n, trace.lost, max < TRACE_MAX ? max : TRACE_MAX,
                     trace.bad_buffer ? ", a buffer unreadable" : "");
        pthread_mutex_unlock(&trace_lock);
        return KB_OK;
    }
    /* launch order: insertion sort by start time (a few kernels) */
    for (int i = 0; i < trace.n; i++) {
        int j = i;
        while (j > 0 && trace.start[j - 1] > trace.start[j]) {
            uint64_t t = trace.start[j];
            trace.start[j] = trace.start[j - 1];
            trace.start[j - 1] = t;
            kb_traced_kernel x = trace.k[j];
            trace.k[j] = trace.k[j - 1];
            trace.k[j - 1] = x;
            j--;
        }
    }
    memcpy(k, trace.k, (size_t)trace.n * sizeof *k);
    *n = trace.n;
    pthread_mutex_unlock(&trace_lock);
    if (*n == 0 && why && why_n)
        snprintf(why, why_n, "the CUPTI Activity API recorded no kernel for the launch");
    return KB_OK;
soft:
    cupti_why(r, call, why, why_n);
    return KB_OK;
}
