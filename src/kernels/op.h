/* op.h - what an operator and its variants are: the tables that the harness,
 * `kbench list` and the tests read. One operator = one src/kernels/<op>.c file
 * holding its axes, input generator, fp64 reference check, byte/flop model and
 * variant table; one variant = one variants/<op>/<variant>.cu file holding its
 * kernels and an extern "C" launcher.
 *
 * Adding a variant:
 *   1. write variants/<op>/<name>.cu: kernels plus
 *        extern "C" cudaError_t kb_<op>_<name>(const kb_args *a, cudaStream_t s);
 *      which computes the grid, notes each launch with kb_note_launch(), launches
 *      on stream s and returns cudaGetLastError(); nothing else (no allocation,
 *      no synchronisation). A variant that calls a library (cuDNN) notes no
 *      launches: the kernels are the library's, and the harness traces them
 *      (names and static facts) from one extra launch; what the library needs
 *      built first goes in `prepare`;
 *   2. declare the launcher and add a row to the variant table in
 *      src/kernels/<op>.c (name, one-line summary, dtypes, launcher);
 *   3. `make` picks the file up; `make test` runs it through the GPU tests.
 * Adding an operator: write src/kernels/<op>.c exporting a kb_op, and add it
 * to the table in src/kernels/registry.c. */
#ifndef KB_OP_H
#define KB_OP_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/env.h"
#include "../util/status.h"
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KB_MAX_AXES 6
#define KB_MAX_BUFS 4
#define KB_MAX_KERNELS 8

typedef struct kb_dim3 {
    unsigned x, y, z;
} kb_dim3;

/* One kernel launch as a launcher declares it. */
typedef struct kb_launch_note {
    const void *fn;   /* the __global__ function, for cudaFuncGetAttributes */
    const char *name; /* a string literal naming the kernel */
    kb_dim3 grid, block;
    size_t dyn_smem;  /* dynamic shared memory bytes per block */
} kb_launch_note;

/* The launches of one call of a launcher, in order. */
typedef struct kb_launch_log {
    int n;
    kb_launch_note k[KB_MAX_KERNELS];
} kb_launch_log;

/* Records a launch in log; a no-op when log is NULL (as while timing). Notes past
 * KB_MAX_KERNELS are dropped. */
void kb_note_launch(kb_launch_log *log, const void *fn, const char *name, kb_dim3 grid,
                    kb_dim3 block, size_t dyn_smem);

/* *sms = the number of SMs of the calling thread's current CUDA device, for
 * launchers and helpers that size their grids by it. Returns the CUDA error. */
cudaError_t kb_current_sms(int *sms);

/* Everything a launcher needs; owned by the harness. */
typedef struct kb_args {
    kb_dtype dtype;
    const int64_t *shape;        /* the operator's axes, in table order */
    const void *in[KB_MAX_BUFS]; /* device inputs */
    void *out[KB_MAX_BUFS];      /* device outputs */
    void *scratch;               /* device scratch of the variant's scratch_bytes */
    size_t scratch_bytes;
    kb_launch_log *log;          /* where launches are noted, or NULL */
} kb_args;

typedef cudaError_t (*kb_launch_fn)(const kb_args *a, cudaStream_t s);

/* What a variant's prepared plan was built for (a library's descriptors, a
 * kernel's tensor maps): the case's buffers, shape and dtype. A launch with
 * another case must not use the plan. */
typedef struct kb_case_key {
    const void *in[KB_MAX_BUFS];
    const void *out[KB_MAX_BUFS];
    const void *scratch;
    int64_t shape[KB_MAX_AXES];
    int naxes;
    kb_dtype dtype;
} kb_case_key;

/* *k = a's case, its first naxes axes (the operator's). */
void kb_case_key_of(const kb_args *a, int naxes, kb_case_key *k);

/* Whether a is the case k was made of (k zeroed: never). */
int kb_case_key_same(const kb_case_key *k, const kb_args *a);

/* The check a library row's launch makes before using the plan its prepare
 * built for case k: cudaSuccess when a is that case; else
 * cudaErrorInvalidValue with "<who>: launched without a plan ..." (k zeroed)
 * or "<who>: launched with buffers, a shape or a dtype other than ..." in
 * why. */
cudaError_t kb_case_key_check(const kb_case_key *k, const kb_args *a, const char *who, char *why,
                              size_t why_size);

/* What a launch returns when its library call failed: the pending CUDA error
 * (taken, so cleared), or cudaErrorUnknown when none is pending. */
cudaError_t kb_library_error(void);

/* cudaFuncSetAttribute(k, MaxDynamicSharedMemorySize, smem) unless this
 * process already did so for k with at least smem (kb_allow_smem in
 * device.cuh). For the launching thread only. */
cudaError_t kb_allow_smem_once(const void *k, size_t smem);

/* *dev = the calling thread's current CUDA device. Returns 0, or -1 with the
 * runtime's error in why (for a library variant's prepare). */
int kb_current_device(int *dev, char *why, size_t why_size);

typedef struct kb_variant {
    const char *name;
    const char *summary; /* one line: the idea the variant demonstrates */
    unsigned dtypes;     /* KB_DT() mask */
    kb_launch_fn launch;
    /* NULL, or: writes why this variant cannot run the shape into why and returns
     * nonzero (the case is recorded as skipped with that reason). */
    int (*unsupported)(const int64_t *shape, kb_dtype d, char *why, size_t why_size);
    /* NULL, or: device scratch bytes the variant needs beyond inputs and outputs. */
    size_t (*scratch_bytes)(const int64_t *shape, kb_dtype d);
    /* NULL, or: called in the case's child once the inputs exist, before the first
     * launch, to build what the launcher needs and cannot know without the GPU (a
     * library's plan for this shape). Returns 0 when the variant can run; 1 when it
     * cannot run this case, with the reason in why (recorded as skipped); -1 on an
     * error, with the reason in why (recorded as failed). What it builds lives until
     * the process ends: one case per child. The harness waits for the device after
     * it, so work it queues on the default stream (a memset) precedes the launch. */
    int (*prepare)(const kb_args *a, char *why, size_t why_size);
    /* NULL, or: the variant's own account of why its last launch failed (a
     * library's message, which a cudaError_t cannot carry), "" when it has
     * none; the harness adds it to the case's reason. Static storage. */
    const char *(*last_error)(void);
    /* A variant from a file of the user's own (profiler/userkernel.h): the
     * file as given and the SHA-256 of its bytes; NULL for built-in ones. */
    const char *source_path;
    const char *source_sha256;
} kb_variant;

typedef struct kb_axis {
    const char *name;
    int64_t dflt; /* default value */
    int64_t min;  /* smallest accepted value */
    int64_t max;  /* largest accepted value */
    const char *help;
} kb_axis;

/* Outcome of comparing outputs with the fp64 reference. */
typedef struct kb_check {
    double max_abs_err;   /* max |out - ref| over checked elements */
    double rel_l2_err;    /* ||out - ref||_2 / ||ref||_2 */
    double atol, rtol;    /* an element passes if |out-ref| <= atol + rtol*|ref| */
    int64_t rows_checked; /* rows (or row-like units) compared */
    int64_t elems_checked;
    int64_t bad_elems;    /* elements out of tolerance, NaN/Inf included */
    char first_bad[160];  /* where and what the first bad element was, or "" */
    double sum_sq_diff;   /* accumulators for rel_l2_err */
    double sum_sq_ref;
} kb_check;

typedef struct kb_op {
    const char *name;
    const char *summary;
    const kb_axis *axes;
    int naxes;
    unsigned dtypes; /* dtypes the operator defines */
    kb_dtype default_dtype; /* what `run` uses without --dtype (fp32 when not set) */
    const char *bound; /* "memory" or "compute": the ceiling its % of peak is of */
    const kb_variant *variants;
    int nvariants;
    int nin, nout; /* number of device input and output buffers */
    size_t (*in_bytes)(const int64_t *shape, kb_dtype d, int i);
    size_t (*out_bytes)(const int64_t *shape, kb_dtype d, int i);
    /* The fewest DRAM bytes and the flops the operator must do. */
    void (*model)(const int64_t *shape, kb_dtype d, double *bytes, double *flops);
    /* Fills a->in[] on the device with fresh random data derived from seed. */
    kb_status (*generate)(const kb_args *a, uint64_t seed, cudaStream_t s, kb_err *e);
    /* Compares a->out[] with the fp64 reference (reading what it needs from the
     * device); fills c. Returns KB_OK when the comparison ran (c says whether it
     * passed), KB_EENV when a CUDA call failed. */
    kb_status (*check)(const kb_args *a, uint64_t seed, kb_check *c, kb_err *e);
} kb_op;

/* The registry (src/kernels/registry.c). */
const kb_op *const *kb_ops(int *n);
/* NULL when unknown. */
const kb_op *kb_op_find(const char *name);
const kb_variant *kb_variant_find(const kb_op *op, const char *name);
/* The known name nearest to s (for "did you mean"), or NULL if none is close. */
const char *kb_op_suggest(const char *s);
const char *kb_variant_suggest(const kb_op *op, const char *s);

#ifdef __cplusplus
}
#endif
#endif
