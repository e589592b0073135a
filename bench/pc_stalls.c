/* pc_stalls.c - where a variant's warps wait, instruction by instruction:
 * CUPTI's PC sampling over a few launches of one variant of an operator at one
 * shape. `kbench run --metrics stalls` says what share of a kernel's warp
 * samples waited on each reason; this says at which instructions (a PC
 * offset into the kernel's SASS), so that a long_scoreboard share can be
 * told apart as the loads of x, the parameters' loads or a poll of a peer's
 * flag.
 *
 *   build/bench/pc_stalls OP VARIANT DTYPE SHAPE [-n LAUNCHES] [-p PERIOD]
 *                         [-t TOP] [-o FILE.csv]
 *
 * e.g. `pc_stalls layernorm fused bf16 rows=256,cols=1048576 -o ln.csv`.
 * The inputs are the operator's own random ones (seed 1); each launch is
 * preceded by an L2 flush, as a timed sample is, and only the launch itself
 * is sampled (start/stop around it). The variant's switches (KBENCH_*) are
 * read from the environment as in a kbench run.
 *
 * -n   launches sampled (default 3), after one unsampled warm-up launch;
 * -p   sampling period: one sample per SM every 2^PERIOD cycles (5-31;
 *      default 10: ~770 samples an SM for a 400 us kernel at 1.98 GHz);
 * -t   hottest instructions listed per kernel (default 20);
 * -o   every (kernel, PC, reason) with samples as CSV (kernel,pc,reason,
 *      samples; pc in hex; "-": stdout, after the summary), for
 *      bench/pc_stalls.py, which lays the samples beside the kernel's SASS
 *      (`cuobjdump -sass` of this binary, whose kernels are the ones that
 *      ran, or, for the samples by source line too, `nvdisasm -gi` of the
 *      variant's cubin compiled with the build's flags: the same SASS).
 *
 * stdout: per kernel (the most sampled first), its samples, the shares of
 * its samples by stall reason, and its hottest PCs with their own shares.
 * Reasons are CUPTI's names less "smsp__pcsamp_warps_issue_stalled_"; the
 * shares are of all samples (CUPTI also counts each reason's samples in which
 * the warp issued nothing, "..._not_issued": those go to the CSV only).
 * "selected" is a warp that issued.
 *
 * Exit status: 0; 2 for a bad command line (one line naming the bad value);
 * 1 when there is no GPU, PC sampling is not permitted or a CUDA or CUPTI
 * call fails (one line). Runs on the GPU machine; `make tests` builds it. */
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.cuh"
#include "kernels/op.h"
#include "kernels/shape.h"
#include "profiler/bench.h"
#include "profiler/device.h"
#include "profiler/policy.h"
#include "util/file.h"
#include "util/status.h"

#define TOOL "pc_stalls"
#define REASON_PREFIX "smsp__pcsamp_warps_issue_stalled_"
#define NOT_ISSUED "_not_issued"
#define MAX_PCS 4096      /* PC records one buffer takes */
#define TABLE_BITS 16     /* the (kernel, PC) table: 65536 slots */
#define MAX_KERNELS 64
/* CUPTI's buffer of raw samples (1 MB by default, ~16 bytes a PC and reason:
 * too few for a kernel of a thousand PCs with every reason) */
#define SCRATCH_BYTES ((size_t)64 << 20)

typedef struct opts {
    const kb_op *op;
    const kb_variant *v;
    kb_dtype dtype;
    int64_t shape[KB_MAX_AXES];
    int launches, period, top;
    const char *csv;
} opts;

/* The stall reasons CUPTI counts: its index of each, and the name less the
 * prefix. */
typedef struct reasons {
    size_t n;
    uint32_t *index;
    char **name;
} reasons;

/* Samples by (kernel, PC): rec[i] kernel and pc, cnt[i * nr + r] the samples
 * with reason r; slot[] the hash table of record numbers + 1 (0: empty). */
typedef struct samples {
    size_t nr;
    char *kernel[MAX_KERNELS];
    int nkernels;
    struct {
        int kernel;
        uint64_t pc;
    } *rec;
    uint64_t *cnt;
    size_t n, cap;
    uint32_t *slot;
    uint64_t dropped, other; /* CUPTI's dropped and non-user kernels' samples */
    int buffer_full;
    /* PC records read by cuptiPCSamplingGetData and left in the configured
     * buffer, and the ranges (one a launch) read by the former */
    size_t from_get, from_config;
    uint64_t ranges[1000];
    int nranges;
} samples;

static void usage(FILE *f)
{
    fprintf(f, "usage: pc_stalls OP VARIANT DTYPE SHAPE [-n LAUNCHES] [-p PERIOD] [-t TOP] "
               "[-o FILE.csv]\n");
}

/* One line and exit 2. */
static void bad(const char *fmt, ...) KB_PRINTF(1, 2);
static void bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, TOOL ": ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static int int_opt(const char *flag, const char *text, int lo, int hi)
{
    int64_t v = 0;
    kb_err e = {{0}};
    if (kb_parse_i64(text, lo, hi, flag, &v, &e) != KB_OK)
        bad("%s", e.msg);
    return (int)v;
}

static void parse(int argc, char **argv, opts *o)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        exit(0);
    }
    if (argc < 5) {
        usage(stderr);
        exit(2);
    }
    o->op = kb_op_find(argv[1]);
    if (!o->op)
        bad("unknown operator '%s'", argv[1]);
    o->v = kb_variant_find(o->op, argv[2]);
    if (!o->v)
        bad("unknown variant '%s'", argv[2]);
    if (kb_dtype_parse(argv[3], &o->dtype) != 0)
        bad("unknown dtype '%s' (fp32, fp16 or bf16)", argv[3]);
    if (!(o->v->dtypes & o->op->dtypes & KB_DT(o->dtype)))
        bad("the variant has no %s kernels", argv[3]);
    kb_err e = {{0}};
    if (kb_shape_parse(o->op, argv[4], o->shape, &e) != KB_OK)
        bad("%s", e.msg);
    char why[256] = "";
    if (o->v->unsupported && o->v->unsupported(o->shape, o->dtype, why, sizeof why))
        bad("the variant does not run this shape: %s", why);
    o->launches = 3;
    o->period = 10;
    o->top = 20;
    o->csv = NULL;
    for (int i = 5; i < argc; i++) {
        const char *f = argv[i];
        if (strcmp(f, "-n") != 0 && strcmp(f, "-p") != 0 && strcmp(f, "-t") != 0 &&
            strcmp(f, "-o") != 0)
            bad("unknown option '%s'", f);
        if (i + 1 == argc)
            bad("%s needs a value", f);
        const char *val = argv[++i];
        if (strcmp(f, "-n") == 0)
            o->launches = int_opt("-n", val, 1, 1000);
        else if (strcmp(f, "-p") == 0)
            o->period = int_opt("-p", val, 5, 31);
        else if (strcmp(f, "-t") == 0)
            o->top = int_opt("-t", val, 0, 100000);
        else
            o->csv = val;
    }
    if (o->csv && kb_check_writable(o->csv, "-o", &e) != KB_OK)
        bad("%s", e.msg);
}

static void cupti_ok(CUptiResult r, const char *call)
{
    if (r != CUPTI_SUCCESS) {
        const char *s = NULL;
        if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
            s = "unknown CUPTI error";
        fprintf(stderr, TOOL ": %s: %s\n", call, s);
        exit(1);
    }
}

static void *alloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, TOOL ": out of memory\n");
        exit(1);
    }
    return p;
}

/* p grown to `bytes` (realloc), or one line and exit 1. */
static void *grow(void *p, size_t bytes)
{
    void *q = realloc(p, bytes);
    if (!q) {
        fprintf(stderr, TOOL ": out of memory\n");
        exit(1);
    }
    return q;
}

#define CUDA_OK(call) kb_tool_check(TOOL, (call), #call)
#define CUPTI_OK(call) cupti_ok((call), #call)

static reasons stall_reasons(CUcontext ctx)
{
    reasons r = {0, NULL, NULL};
    CUpti_PCSamplingGetNumStallReasonsParams np = {CUpti_PCSamplingGetNumStallReasonsParamsSize,
                                                   NULL, ctx, &r.n};
    CUPTI_OK(cuptiPCSamplingGetNumStallReasons(&np));
    r.index = alloc(r.n, sizeof *r.index);
    r.name = alloc(r.n, sizeof *r.name);
    for (size_t i = 0; i < r.n; i++)
        r.name[i] = alloc(CUPTI_STALL_REASON_STRING_SIZE, 1);
    CUpti_PCSamplingGetStallReasonsParams sp = {CUpti_PCSamplingGetStallReasonsParamsSize,
                                                NULL, ctx, r.n, r.index, r.name};
    CUPTI_OK(cuptiPCSamplingGetStallReasons(&sp));
    const size_t plen = strlen(REASON_PREFIX);
    for (size_t i = 0; i < r.n; i++)
        if (strncmp(r.name[i], REASON_PREFIX, plen) == 0)
            memmove(r.name[i], r.name[i] + plen, strlen(r.name[i] + plen) + 1);
    return r;
}

/* A buffer of MAX_PCS PC records with room for every reason. */
static CUpti_PCSamplingData *pc_buffer(size_t nr)
{
    CUpti_PCSamplingData *d = alloc(1, sizeof *d);
    d->size = sizeof *d;
    d->collectNumPcs = MAX_PCS;
    d->pPcData = alloc(MAX_PCS, sizeof *d->pPcData);
    for (size_t i = 0; i < MAX_PCS; i++) {
        d->pPcData[i].size = sizeof d->pPcData[i];
        d->pPcData[i].stallReason = alloc(nr, sizeof *d->pPcData[i].stallReason);
    }
    return d;
}

static void free_buffer(CUpti_PCSamplingData *d)
{
    for (size_t i = 0; i < d->collectNumPcs; i++)
        free(d->pPcData[i].stallReason);
    free(d->pPcData);
    free(d);
}

static int kernel_id(samples *s, const char *name)
{
    for (int i = 0; i < s->nkernels; i++)
        if (strcmp(s->kernel[i], name) == 0)
            return i;
    if (s->nkernels == MAX_KERNELS) {
        fprintf(stderr, TOOL ": more than %d kernels sampled\n", MAX_KERNELS);
        exit(1);
    }
    s->kernel[s->nkernels] = alloc(strlen(name) + 1, 1);
    memcpy(s->kernel[s->nkernels], name, strlen(name) + 1);
    return s->nkernels++;
}

/* The record of (kernel k, pc), made when new. */
static size_t record(samples *s, int k, uint64_t pc)
{
    const uint32_t mask = (1u << TABLE_BITS) - 1;
    uint32_t h = (uint32_t)((pc * 0x9E3779B97F4A7C15ull + (uint64_t)k) >> 40) & mask;
    for (;; h = (h + 1) & mask) {
        const uint32_t at = s->slot[h];
        if (!at)
            break;
        if (s->rec[at - 1].kernel == k && s->rec[at - 1].pc == pc)
            return at - 1;
    }
    if (s->n == mask) { /* leave the table one empty slot */
        fprintf(stderr, TOOL ": more than %u sampled PCs\n", mask);
        exit(1);
    }
    if (s->n == s->cap) {
        s->cap *= 2;
        s->rec = grow(s->rec, s->cap * sizeof *s->rec);
        s->cnt = grow(s->cnt, s->cap * s->nr * sizeof *s->cnt);
    }
    s->rec[s->n].kernel = k;
    s->rec[s->n].pc = pc;
    memset(s->cnt + s->n * s->nr, 0, s->nr * sizeof *s->cnt);
    s->slot[h] = (uint32_t)++s->n;
    return s->n - 1;
}

/* Adds one buffer's records; CUPTI's name strings are freed once read (each
 * record's own or one shared by several: kept in `names` until the end). */
static void add(samples *s, const reasons *r, const CUpti_PCSamplingData *d, char ***names,
                size_t *nnames, size_t *cap)
{
    s->dropped += d->droppedSamples;
    s->other += d->nonUsrKernelsTotalSamples;
    s->buffer_full |= d->hardwareBufferFull != 0;
    for (size_t i = 0; i < d->totalNumPcs; i++) {
        const CUpti_PCSamplingPCData *p = &d->pPcData[i];
        const char *fn = p->functionName ? p->functionName : "(unnamed)";
        const size_t at = record(s, kernel_id(s, fn), p->pcOffset);
        for (size_t j = 0; j < p->stallReasonCount; j++) {
            size_t ri = 0;
            while (ri < r->n && r->index[ri] != p->stallReason[j].pcSamplingStallReasonIndex)
                ri++;
            if (ri < r->n)
                s->cnt[at * s->nr + ri] += p->stallReason[j].samples;
        }
        if (p->functionName) {
            size_t k = 0;
            while (k < *nnames && (*names)[k] != p->functionName)
                k++;
            if (k == *nnames) {
                if (*nnames == *cap) {
                    *cap = *cap ? 2 * *cap : 64;
                    *names = grow(*names, *cap * sizeof **names);
                }
                (*names)[(*nnames)++] = p->functionName;
            }
        }
    }
}

/* The records CUPTI left in the configured buffer on its own (it fills that
 * one where the caller does not drain in time, and at the disable), each
 * taken once: the buffer is marked empty after, and a range already read
 * through cuptiPCSamplingGetData is not added again. The summary says how
 * many records came each way. */
static void take(samples *s, const reasons *r, CUpti_PCSamplingData *config, char ***names,
                 size_t *nnames, size_t *cap)
{
    int seen = 0; /* a range already read through cuptiPCSamplingGetData */
    for (int i = 0; i < s->nranges; i++)
        seen |= s->ranges[i] == config->rangeId;
    if (config->totalNumPcs > 0 && !seen) {
        add(s, r, config, names, nnames, cap);
        s->from_config += config->totalNumPcs;
    }
    config->totalNumPcs = 0;
    config->droppedSamples = 0;
    config->nonUsrKernelsTotalSamples = 0;
    config->hardwareBufferFull = 0;
}

static int not_issued(const char *reason)
{
    const size_t n = strlen(reason), m = strlen(NOT_ISSUED);
    return n >= m && strcmp(reason + n - m, NOT_ISSUED) == 0;
}

/* All samples of record i (the reasons that are not "..._not_issued"). */
static uint64_t rec_total(const samples *s, const reasons *r, size_t i)
{
    uint64_t t = 0;
    for (size_t j = 0; j < r->n; j++)
        if (!not_issued(r->name[j]))
            t += s->cnt[i * s->nr + j];
    return t;
}

/* The reasons of counts c (nr of them) at or above `min` of total, largest
 * first, as "name 12.3%, ...". */
static void print_reasons(const reasons *r, const uint64_t *c, uint64_t total, double min)
{
    int *done = alloc(r->n, sizeof *done);
    const char *sep = "";
    for (;;) {
        size_t best = r->n;
        for (size_t j = 0; j < r->n; j++)
            if (!done[j] && !not_issued(r->name[j]) && (best == r->n || c[j] > c[best]))
                best = j;
        if (best == r->n || !total || (double)c[best] / (double)total < min)
            break;
        done[best] = 1;
        printf("%s%s %.1f%%", sep, r->name[best], 100.0 * (double)c[best] / (double)total);
        sep = ", ";
    }
    putchar('\n');
    free(done);
}

static uint64_t *sort_key; /* for by_samples: each record's total */

static int by_samples(const void *a, const void *b)
{
    const uint64_t x = sort_key[*(const size_t *)a], y = sort_key[*(const size_t *)b];
    return x < y ? 1 : x > y ? -1 : 0;
}

static void report(const opts *o, const samples *s, const reasons *r, const kb_device *dev)
{
    char shape[256];
    kb_shape_str(o->op, o->shape, shape, sizeof shape);
    uint64_t *tot = alloc(s->n, sizeof *tot), all = 0;
    uint64_t *ktot = alloc((size_t)s->nkernels, sizeof *ktot);
    uint64_t *kcnt = alloc((size_t)s->nkernels * r->n, sizeof *kcnt);
    for (size_t i = 0; i < s->n; i++) {
        tot[i] = rec_total(s, r, i);
        all += tot[i];
        ktot[s->rec[i].kernel] += tot[i];
        for (size_t j = 0; j < r->n; j++)
            kcnt[(size_t)s->rec[i].kernel * r->n + j] += s->cnt[i * s->nr + j];
    }
    printf("# pc_stalls %s %s %s %s: %d launch%s, one sample an SM every 2^%d cycles\n",
           o->op->name, o->v->name, kb_dtype_name(o->dtype), shape, o->launches,
           o->launches == 1 ? "" : "es", o->period);
    printf("# %s, %d SMs; %llu samples at %zu PCs (dropped %llu, other kernels %llu; PC "
           "records %zu read, %zu left in the configured buffer)%s\n",
           dev->name, dev->sms, (unsigned long long)all, s->n, (unsigned long long)s->dropped,
           (unsigned long long)s->other, s->from_get, s->from_config,
           s->buffer_full ? "; the hardware buffer filled: raise -p" : "");
    size_t *order = alloc(s->n, sizeof *order);
    sort_key = tot;
    for (int pass = 0; pass < s->nkernels; pass++) {
        int k = -1; /* the most sampled kernel not yet printed */
        for (int i = 0; i < s->nkernels; i++)
            if (ktot[i] != UINT64_MAX && (k < 0 || ktot[i] > ktot[k]))
                k = i;
        if (k < 0)
            break;
        printf("\nkernel %s: %llu samples (%.1f%%)\n  stalls: ", s->kernel[k],
               (unsigned long long)ktot[k], all ? 100.0 * (double)ktot[k] / (double)all : 0.0);
        print_reasons(r, kcnt + (size_t)k * r->n, ktot[k], 0.005);
        size_t m = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->rec[i].kernel == k)
                order[m++] = i;
        qsort(order, m, sizeof *order, by_samples);
        for (size_t i = 0; i < m && i < (size_t)o->top; i++) {
            const size_t at = order[i];
            printf("  pc 0x%05llx %6.2f%%  ", (unsigned long long)s->rec[at].pc,
                   100.0 * (double)tot[at] / (double)ktot[k]);
            print_reasons(r, s->cnt + at * s->nr, tot[at], 0.05);
        }
        ktot[k] = UINT64_MAX;
    }
    free(order);
    free(kcnt);
    free(ktot);
    free(tot);
}

static void write_csv(const char *path, const samples *s, const reasons *r)
{
    const int out = strcmp(path, "-") == 0;
    FILE *f = out ? stdout : fopen(path, "w");
    if (!f) {
        fprintf(stderr, TOOL ": cannot write '%s'\n", path);
        exit(1);
    }
    fprintf(f, "kernel,pc,reason,samples\n");
    for (size_t i = 0; i < s->n; i++)
        for (size_t j = 0; j < r->n; j++)
            if (s->cnt[i * s->nr + j])
                fprintf(f, "%s,0x%llx,%s,%llu\n", s->kernel[s->rec[i].kernel],
                        (unsigned long long)s->rec[i].pc, r->name[j],
                        (unsigned long long)s->cnt[i * s->nr + j]);
    if (out ? fflush(f) != 0 : fclose(f) != 0) {
        fprintf(stderr, TOOL ": cannot write '%s'\n", path);
        exit(1);
    }
}

static void set_attrs(CUcontext ctx, CUpti_PCSamplingConfigurationInfo *info, size_t n)
{
    CUpti_PCSamplingConfigurationInfoParams p = {CUpti_PCSamplingConfigurationInfoParamsSize,
                                                 NULL, ctx, n, info};
    CUPTI_OK(cuptiPCSamplingSetConfigurationAttribute(&p));
    for (size_t i = 0; i < n; i++)
        if (info[i].attributeStatus != CUPTI_SUCCESS)
            cupti_ok(info[i].attributeStatus, "a PC sampling attribute");
}

int main(int argc, char **argv)
{
    opts o;
    parse(argc, argv, &o);
    kb_err e = {{0}};
    int ndev = 0, ordinal = 0;
    CUcontext ctx = NULL;
    kb_device dev;
    if (kb_device_count(&ndev, &e) != KB_OK || kb_current_context(&ctx, &ordinal, &e) != KB_OK ||
        kb_device_query(ordinal, &dev, &e) != KB_OK) {
        fprintf(stderr, TOOL ": %s\n", e.msg);
        return 1;
    }

    /* PC sampling on before the variant's module loads (its first launch, the
     * warm-up below), started and stopped around each sampled launch. */
    CUpti_PCSamplingEnableParams ep = {CUpti_PCSamplingEnableParamsSize, NULL, ctx};
    CUPTI_OK(cuptiPCSamplingEnable(&ep));
    const reasons r = stall_reasons(ctx);
    CUpti_PCSamplingData *config_buf = pc_buffer(r.n), *buf = pc_buffer(r.n);
    CUpti_PCSamplingConfigurationInfo info[6];
    memset(info, 0, sizeof info);
    info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    info[0].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[1].attributeData.samplingDataBufferData.samplingDataBuffer = config_buf;
    info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    info[2].attributeData.samplingPeriodData.samplingPeriod = (uint32_t)o.period;
    info[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[3].attributeData.collectionModeData.collectionMode =
        CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    info[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    info[4].attributeData.outputDataFormatData.outputDataFormat =
        CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    info[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
    info[5].attributeData.scratchBufferSizeData.scratchBufferSize = SCRATCH_BYTES;
    set_attrs(ctx, info, KB_COUNT(info));

    /* The case: inputs, outputs, scratch, the flush buffer. */
    kb_args a;
    memset(&a, 0, sizeof a);
    a.dtype = o.dtype;
    a.shape = o.shape;
    cudaStream_t st;
    CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    size_t flush_bytes = (size_t)KB_FLUSH_L2_FACTOR * (size_t)dev.l2_bytes;
    if (flush_bytes < 16)
        flush_bytes = 16;
    void *flush = NULL;
    const char *call = NULL;
    kb_tool_check(TOOL, kb_case_alloc(o.op, o.v, &a, flush_bytes, &flush, st, &call), call);
    if (o.op->generate(&a, 1, st, &e) != KB_OK) {
        fprintf(stderr, TOOL ": %s\n", e.msg);
        return 1;
    }
    CUDA_OK(cudaStreamSynchronize(st));
    if (o.v->prepare) {
        char why[512] = "";
        if (o.v->prepare(&a, why, sizeof why) != 0) {
            fprintf(stderr, TOOL ": the variant's prepare: %s\n", why);
            return 1;
        }
        CUDA_OK(cudaDeviceSynchronize());
    }
    CUDA_OK(o.v->launch(&a, st)); /* the warm-up: modules loaded, the launch known to work */
    CUDA_OK(cudaStreamSynchronize(st));

    samples s;
    memset(&s, 0, sizeof s);
    s.nr = r.n;
    s.slot = alloc((size_t)1 << TABLE_BITS, sizeof *s.slot);
    s.cap = 1024;
    s.rec = alloc(s.cap, sizeof *s.rec);
    s.cnt = alloc(s.cap * s.nr, sizeof *s.cnt);
    char **names = NULL;
    size_t nnames = 0, names_cap = 0;
    CUpti_PCSamplingStartParams sp = {CUpti_PCSamplingStartParamsSize, NULL, ctx};
    CUpti_PCSamplingStopParams tp = {CUpti_PCSamplingStopParamsSize, NULL, ctx};
    CUpti_PCSamplingGetDataParams gp = {CUpti_PCSamplingGetDataParamsSize, NULL, ctx, buf};
    for (int l = 0; l < o.launches; l++) {
        CUDA_OK(kb_flush_l2(flush, flush_bytes, st));
        CUDA_OK(cudaStreamSynchronize(st));
        CUPTI_OK(cuptiPCSamplingStart(&sp));
        CUDA_OK(o.v->launch(&a, st));
        CUDA_OK(cudaStreamSynchronize(st));
        CUPTI_OK(cuptiPCSamplingStop(&tp));
        do {
            CUPTI_OK(cuptiPCSamplingGetData(&gp));
            add(&s, &r, buf, &names, &nnames, &names_cap);
            s.from_get += buf->totalNumPcs;
            if (buf->totalNumPcs > 0 && s.nranges < (int)KB_COUNT(s.ranges))
                s.ranges[s.nranges++] = buf->rangeId;
        } while (buf->remainingNumPcs > 0);
        take(&s, &r, config_buf, &names, &nnames, &names_cap);
    }
    CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize, NULL, ctx};
    CUPTI_OK(cuptiPCSamplingDisable(&dp));
    take(&s, &r, config_buf, &names, &nnames, &names_cap);
    for (size_t i = 0; i < nnames; i++) /* read: the kernels' names are copied */
        free(names[i]);
    free(names);

    int rc = 0;
    if (s.n == 0) {
        fprintf(stderr, TOOL ": no samples (a launch too short for one sample every 2^%d "
                        "cycles: lower -p)\n", o.period);
        rc = 1;
    } else {
        report(&o, &s, &r, &dev);
        if (o.csv)
            write_csv(o.csv, &s, &r);
    }
    for (int i = 0; i < s.nkernels; i++)
        free(s.kernel[i]);
    free(s.rec);
    free(s.cnt);
    free(s.slot);
    free_buffer(config_buf);
    free_buffer(buf);
    for (size_t i = 0; i < r.n; i++)
        free(r.name[i]);
    free(r.name);
    free(r.index);
    kb_case_free(&a, flush);
    cudaStreamDestroy(st);
    return rc;
}
