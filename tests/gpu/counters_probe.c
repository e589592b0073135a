/* counters_probe.c - a standalone check of src/profiler/counters.c on a real
 * GPU (not a cmocka test). It copies 512 MiB and 16 MiB (less than the L2)
 * with a float4 kernel through kb_counters_profile, as kbench does (between
 * two L2 flushes), and checks the counted DRAM bytes against the bytes the
 * copy must move (each direction within 1% at 512 MiB, 2% at 16 MiB) from
 * three L2 states left by unprofiled work before: steady (the same copy),
 * clean (a read-only sweep) and dirty (a memset of twice the L2). The count
 * must not depend on them. It then prints
 * the pass count and every metric of each set (core, sol, stalls, full), the
 * stall breakdown, the time of each profile call, and checks the occupancy
 * limiter against the CUDA occupancy API for a few launch shapes.
 *
 * Exit: 0 all checks passed (or no GPU / no counters here, said so), 1 a check
 * failed, 3 a CUDA or CUPTI failure.
 *
 * Build: make build/tests/gpu/counters_probe (part of `make tests`).
 * Run: build/tests/gpu/counters_probe */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "kernels/op.h"
#include "profiler/counters.h"

extern cudaError_t kb_probe_copy(const kb_args *a, cudaStream_t s);
extern const void *kb_probe_copy_fn(void);
extern cudaError_t kb_probe_read_sweep(const void *buf, size_t bytes, float *sink,
                                       cudaStream_t s);

#define COPY_BYTES (512ull << 20)
#define SMALL_BYTES (16ull << 20)

/* Probe-local check of a CUDA runtime call: prints it and ends with exit 3. */
#define CK(call)                                                                         \
    do {                                                                                 \
        cudaError_t ce_ = (call);                                                        \
        if (ce_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s failed: %s (%s) at %s:%d\n", #call,                      \
                    cudaGetErrorString(ce_), cudaGetErrorName(ce_), __FILE__, __LINE__); \
            rc = 3;                                                                      \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double dev_pct(double got, double want)
{
    return 100.0 * (got - want) / want;
}

typedef struct probe {
    kb_args a;
    cudaStream_t s;
    int64_t elems; /* floats the copy moves: a.shape points here */
    void *flush;   /* 4 x L2 bytes: kbench's flush, and the memset for a dirty L2 */
    size_t flush_bytes;
    float *sink;
} probe;

enum l2_state { L2_STEADY, L2_CLEAN, L2_DIRTY };
static const char *const l2_names[] = {"steady (same copy before)",
                                       "clean (read sweep before)",
                                       "dirty (memset flush before)"};

/* Puts the L2 in the given state with unprofiled work. */
static cudaError_t prepare(const probe *p, enum l2_state st)
{
    cudaError_t ce = cudaSuccess;
    if (st == L2_STEADY)
        ce = kb_probe_copy(&p->a, p->s);
    else if (st == L2_CLEAN)
        ce = kb_probe_read_sweep(p->flush, p->flush_bytes, p->sink, p->s);
    else
        ce = cudaMemsetAsync(p->flush, 0, p->flush_bytes / 2, p->s);
    return ce != cudaSuccess ? ce : cudaStreamSynchronize(p->s);
}

/* Opens set s, profiles one copy after putting the L2 in state st, closes.
 * Returns 0 with *n kernels in vals, 2 when counters are not available here
 * (why says why), 3 on a failure (printed). */
static int profile_once(const probe *p, kb_metric_set s, enum l2_state st,
                        kb_counter_values *vals, int *n, int *passes, double *ms,
                        char *why, size_t why_n)
{
    kb_err e = {{0}};
    kb_counters *c = NULL;
    int rc = 0;
    *n = 0;
    if (kb_counters_open(s, &c, why, why_n, &e) != KB_OK) {
        fprintf(stderr, "kb_counters_open(%s): %s\n", kb_metric_set_name(s), e.msg);
        return 3;
    }
    if (!c)
        return 2;
    cudaError_t ce = prepare(p, st);
    if (ce != cudaSuccess) {
        fprintf(stderr, "preparing the L2 failed: %s\n", cudaGetErrorString(ce));
        rc = 3;
        goto done;
    }
    double t0 = now_ms();
    kb_status ks = kb_counters_profile(c, kb_probe_copy, &p->a, p->s, p->flush,
                                       p->flush_bytes, vals, KB_MAX_KERNELS, n, passes,
                                       why, why_n, &e);
    *ms = now_ms() - t0;
    if (ks != KB_OK) {
        fprintf(stderr, "kb_counters_profile(%s): %s\n", kb_metric_set_name(s), e.msg);
        rc = 3;
    } else if (*n == 0) {
        rc = why[0] ? 2 : 3;
        if (!why[0])
            fprintf(stderr, "kb_counters_profile(%s) saw no kernel\n",
                    kb_metric_set_name(s));
    }
done:
    kb_counters_close(c);
    return rc;
}

/* The DRAM check of a copy of `bytes` in the three L2 states, each direction
 * within tol; returns 0 ok, 1 a check failed, 2 no counters, 3 failure. */
static int check_dram(probe *p, size_t bytes, double tol)
{
    const double want = (double)bytes;
    int worst = 0;
    p->elems = (int64_t)(bytes / sizeof(float));
    printf("DRAM bytes of one %zu MiB float4 copy (set core), want %.0f read and %.0f "
           "written, each within %.0f%%:\n",
           bytes >> 20, want, want, tol * 100);
    for (int st = L2_STEADY; st <= L2_DIRTY; st++) {
        kb_counter_values v[KB_MAX_KERNELS];
        int n = 0, passes = 0;
        double ms = 0;
        char why[512] = "";
        int rc = profile_once(p, KB_METRICS_CORE, (enum l2_state)st, v, &n, &passes, &ms,
                              why, sizeof why);
        if (rc == 2) {
            printf("counters unavailable here: %s\nskipping the counter probe\n", why);
            return 2;
        }
        if (rc)
            return rc;
        double rd = kb_counter_sum(v, n, KB_METRIC_DRAM_READ);
        double wr = kb_counter_sum(v, n, KB_METRIC_DRAM_WRITE);
        int ok = n == 1 && passes == 1 && fabs(rd - want) <= tol * want &&
                 fabs(wr - want) <= tol * want;
        printf("  %-28s read %12.0f (%+6.2f%%)  written %12.0f (%+6.2f%%)  total %+6.2f%%  "
               "excess %.4f  %d pass(es)  %d range(s)  %s\n",
               l2_names[st], rd, dev_pct(rd, want), wr, dev_pct(wr, want),
               dev_pct(rd + wr, 2 * want), kb_excess_traffic(rd, wr, 2 * want), passes, n,
               ok ? "ok" : "FAIL");
        if (!ok)
            worst = 1;
    }
    return worst;
}

/* Every set: passes, time of the profile call, every metric, the stalls. */
static int print_sets(probe *p)
{
    static const kb_metric_set sets[] = {KB_METRICS_CORE, KB_METRICS_SOL,
                                         KB_METRICS_STALLS, KB_METRICS_FULL};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        kb_counter_values v[KB_MAX_KERNELS];
        int n = 0, passes = 0;
        double ms = 0;
        char why[512] = "";
        int rc =
            profile_once(p, sets[i], L2_STEADY, v, &n, &passes, &ms, why, sizeof why);
        if (rc == 2) {
            printf("set %s: counters unavailable: %s\n", kb_metric_set_name(sets[i]),
                   why);
            continue;
        }
        if (rc)
            return rc;
        printf("set %s: %d pass(es), %d kernel(s), profile call %.1f ms\n",
               kb_metric_set_name(sets[i]), passes, n, ms);
        for (int k = 0; k < n; k++) {
            for (int m = 0; m < v[k].n; m++)
                printf("  [%d] %-78s %18.4f\n", k, v[k].name[m], v[k].value[m]);
            char names[KB_MAX_METRICS][KB_STALL_NAME_MAX];
            double f[KB_MAX_METRICS];
            int ns = 0;
            double total = kb_stall_fractions(&v[k], names, f, KB_MAX_METRICS, &ns);
            if (ns) {
                printf("  [%d] stalls: %.3f warps stalled per issue:", k, total);
                for (int r = 0; r < ns && f[r] >= 0.005; r++)
                    printf(" %s %.1f%%", names[r], 100 * f[r]);
                printf("\n");
            }
        }
    }
    return 0;
}

/* kb_occupancy_blocks with this GPU's limits against the CUDA occupancy API. */
static int check_occupancy(int dev)
{
    struct cudaDeviceProp pr;
    struct cudaFuncAttributes fa;
    int rc = 0;
    CK(cudaGetDeviceProperties(&pr, dev));
    CK(cudaFuncGetAttributes(&fa, kb_probe_copy_fn()));
    kb_sm_limits L = kb_sm_limits_sm90();
    L.regs_per_sm = pr.regsPerMultiprocessor;
    L.regs_per_block = pr.regsPerBlock;
    L.smem_per_sm = (int)pr.sharedMemPerMultiprocessor;
    L.smem_per_block = (int)pr.sharedMemPerBlockOptin;
    L.smem_reserved_per_block = (int)pr.reservedSharedMemPerBlock;
    L.max_threads_per_sm = pr.maxThreadsPerMultiProcessor;
    L.max_threads_per_block = pr.maxThreadsPerBlock;
    L.max_blocks_per_sm = pr.maxBlocksPerMultiProcessor;
    L.warp_size = pr.warpSize;
    static const int threads[] = {32, 64, 96, 256, 640, 1024};
    static const int smem[] = {0, 20000, 48 * 1024};
    printf(
        "occupancy of the copy kernel (%d registers) against the CUDA occupancy API:\n",
        fa.numRegs);
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
        for (size_t s = 0; s < sizeof smem / sizeof *smem; s++) {
            int want = -1;
            kb_occ_limit lim;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &want, kb_probe_copy_fn(), threads[t], (size_t)smem[s]));
            int got = kb_occupancy_blocks(&L, fa.numRegs, threads[t],
                                          smem[s] + (int)fa.sharedSizeBytes, &lim);
            printf("  %4d threads %6d B shared: %2d blocks (%s), CUDA says %2d  %s\n",
                   threads[t], smem[s], got, kb_occ_limit_name(lim), want,
                   got == want ? "ok" : "FAIL");
            if (got != want)
                rc = 1;
        }
done:
    return rc;
}

int main(void)
{
    probe p;
    int rc = 0, ndev = 0, dev = 0, l2 = 0;
    char why[512];
    memset(&p, 0, sizeof p);
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("no GPU: skipping the counter probe\n");
        return 0;
    }
    if (kb_counters_foreign_profiler(why, sizeof why)) {
        printf("%s\nskipping the counter probe\n", why);
        return 0;
    }
    if (getenv("KBENCH_TEST_NO_COUNTERS") && *getenv("KBENCH_TEST_NO_COUNTERS")) {
        printf("KBENCH_TEST_NO_COUNTERS is set: skipping the counter probe\n");
        return 0;
    }
    struct cudaDeviceProp pr;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&pr, dev));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    printf("device %d: %s, %d SMs, L2 %d bytes\n", dev, pr.name, pr.multiProcessorCount,
           l2);

    p.elems = (int64_t)(COPY_BYTES / sizeof(float));
    p.a.shape = &p.elems;
    p.flush_bytes = 4 * (size_t)l2;
    CK(cudaStreamCreateWithFlags(&p.s, cudaStreamNonBlocking));
    CK(cudaMalloc((void **)&p.a.in[0], COPY_BYTES));
    CK(cudaMalloc(&p.a.out[0], COPY_BYTES));
    CK(cudaMalloc(&p.flush, p.flush_bytes ? p.flush_bytes : 16));
    CK(cudaMalloc((void **)&p.sink, sizeof(float)));
    CK(cudaMemset((void *)p.a.in[0], 0x3c, COPY_BYTES));
    CK(cudaMemset(p.a.out[0], 0, COPY_BYTES));
    CK(cudaMemset(p.flush, 0, p.flush_bytes ? p.flush_bytes : 16));
    CK(cudaDeviceSynchronize());

    int occ = check_occupancy(dev);
    if (occ > rc)
        rc = occ;
    int dram = check_dram(&p, COPY_BYTES, 0.01);
    if (dram == 2)
        goto done; /* no counters here: said so, not a failure */
    if (dram != 3) {
        int small = check_dram(&p, SMALL_BYTES, 0.02);
        if (small > dram)
            dram = small;
    }
    p.elems = (int64_t)(COPY_BYTES / sizeof(float));
    if (dram > rc)
        rc = dram;
    if (dram != 3) {
        int sets = print_sets(&p);
        if (sets > rc)
            rc = sets;
    }
    printf("counter probe: %s\n", rc == 0   ? "all checks passed"
                                  : rc == 1 ? "FAILED"
                                            : "ERROR");
done:
    cudaFree((void *)p.a.in[0]);
    cudaFree(p.a.out[0]);
    cudaFree(p.flush);
    cudaFree(p.sink);
    if (p.s)
        cudaStreamDestroy(p.s);
    return rc;
}
