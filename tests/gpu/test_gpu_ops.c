/* test_gpu_ops.c - every variant of every operator, in every dtype, at awkward
 * sizes, checked against the fp64 reference on fresh random inputs with
 * poisoned outputs; a deliberately broken launcher must be caught; the copy
 * calibration and clock measurement must give sane figures; a library's
 * kernels (cudnn) are traced and profiled; flash-wgmma's every configuration
 * passes the check. Skips, saying so, without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu/gpu_test.h"
#include "kbtest.h"
#include "kernels/op.h"
#include "kernels/shape.h"
#include "profiler/bench.h"
#include "profiler/counters.h"
#include "profiler/device.h"
#include "util/status.h"

static kb_device dev;
static int gpu;

/* Per operator: shapes that are no multiple of any tile or vector width, and
 * the extremes (for the row operators: short rows of 1-39 off 16-byte
 * boundaries, which the fused rungs take a thread a row or several rows a
 * warp, and rows of a million elements, which the
 * cluster rung splits over 16 blocks and, in fp32, reads partly twice; and
 * fp32 rows of 12280, whose one-block cluster slice is just under 48 KB, so
 * that with the static shared memory it needs the opt-in; rows of 77 and 157,
 * which the tile kernels take 5 elements a lane in groups of 16 and 32; for
 * layernorm, aligned rows of 8 and 32, which the sub-warp kernel takes 1-8
 * lanes a row;
 * rows of 40000-262144, which fused holds in the registers of a cluster of
 * 2-16 blocks (layernorm's 40000 over 16 blocks: the last ranks hold
 * nothing; 262144 x 17 layernorm, x 33 softmax: 8 blocks), and of 524292 and
 * 786432 in fp32, 16 blocks with shared-memory vectors partly filled (softmax
 * takes that path from 33 rows, fewer stream; softmax's fused rung splits
 * fp32 rows past 262144 and 16-bit rows past 524288 over the blocks of a
 * grid instead: 786432 and 1048576, the last block of a row partly filled,
 * and fp32 524292; layernorm's fused rung takes fp32 rows past 262144
 * over a pipelined grid: 9 x 1048576, one group of 128 blocks, and 33 x
 * 524288, two of 64); 16-bit layernorm rows of
 * 40000-65536 in 400 rows, so that each block of the shared-memory row kernel
 * takes three rows or more and its ring of slots turns over; softmax rows
 * of 9 and 25 16-byte vectors in 16-bit, which the fused rung takes 4
 * vectors a lane; and a
 * small shape of 5000 rows (row-like units) whose check is
 * sampled, for the unwritten-output test. */
typedef struct op_sizes {
    const char *op;
    const char *shapes[48];
    const char *sampled;
} op_sizes;

static const op_sizes sizes[] = {
    {"softmax",
     {"rows=1,cols=1", "rows=7,cols=65537", "rows=137,cols=65537", "rows=4099,cols=3001",
      "rows=3,cols=3", "rows=1000,cols=128",
      "rows=33,cols=4096", "rows=5,cols=32768", "rows=2,cols=100003", "rows=20000,cols=7",
      "rows=257,cols=1024", "rows=65,cols=8", "rows=1001,cols=33", "rows=3,cols=262144",
      "rows=3,cols=1048576", "rows=2,cols=1048573", "rows=512,cols=12280",
      "rows=137,cols=65536", "rows=41,cols=98312", "rows=999,cols=77", "rows=513,cols=157",
      "rows=1,cols=40000", "rows=33,cols=262144", "rows=2,cols=786432", "rows=33,cols=524292",
      "rows=35,cols=786432", "rows=2561,cols=39", "rows=700,cols=17", "rows=300,cols=23",
      "rows=3001,cols=200", "rows=77,cols=72", NULL},
     "rows=5000,cols=64"},
    {"layernorm",
     {"rows=1,cols=1", "rows=3,cols=3", "rows=5,cols=4097", "rows=2,cols=65537",
      "rows=4099,cols=1024", "rows=20000,cols=5", "rows=17,cols=768",
      "rows=9,cols=4096,gelu=1,stats=1", "rows=300,cols=1000,mean=10000", "rows=1001,cols=33",
      "rows=5,cols=65536", "rows=3,cols=1048576", "rows=2,cols=1048573,stats=1",
      "rows=512,cols=12280", "rows=137,cols=65537", "rows=1000,cols=128", "rows=999,cols=77",
      "rows=513,cols=157", "rows=137,cols=65536", "rows=41,cols=98312,stats=1",
      "rows=67,cols=131072,gelu=1", "rows=33,cols=65536,mean=10000", "rows=1001,cols=32,stats=1",
      "rows=77,cols=8,gelu=1", "rows=1,cols=40000", "rows=17,cols=262144",
      "rows=2,cols=786432,stats=1", "rows=2,cols=524292,mean=10000",
      "rows=150,cols=65528,gelu=1,stats=1", "rows=40,cols=40000,stats=1",
      "rows=2561,cols=39,gelu=1,stats=1", "rows=700,cols=17,mean=10000", "rows=300,cols=23,stats=1",
      "rows=9,cols=1048576,stats=1", "rows=20,cols=196608,mean=10000",
      "rows=400,cols=65536,stats=1", "rows=400,cols=40000", "rows=33,cols=524288,gelu=1",
      "rows=4099,cols=3001", "rows=3,cols=1001,gelu=1", "rows=1000,cols=12345,stats=1",
      "rows=70,cols=32767,mean=10000", "rows=257,cols=258", NULL},
     "rows=5000,cols=64"},
    {"attention",
     {"batch=1,heads=1,seq=1,dim=64", "batch=1,heads=1,seq=1,dim=128,causal=1",
      "batch=3,heads=100,seq=77,dim=64,causal=1", "batch=2,heads=150,seq=77,dim=128",
      "batch=1,heads=5,seq=1000,dim=128,causal=1", "batch=2,heads=3,seq=1000,dim=64",
      "batch=1,heads=2,seq=4097,dim=128", "batch=1,heads=1,seq=4097,dim=64,causal=1",
      "batch=7,heads=3,seq=129,dim=128,causal=1", "batch=1,heads=300,seq=65,dim=64", NULL},
     "batch=5000,heads=1,seq=1,dim=64"},
    /* no tile divides these; k=7 and k=1 take the scalar-load paths; the
     * large ones are the report's awkward shapes (naive takes about 0.1 s a
     * launch there) */
    {"matmul",
     {"m=1,n=1,k=1", "m=1,n=1,k=7,epilogue=1", "m=7,n=3,k=1", "m=33,n=65,k=7",
      "m=129,n=257,k=1000,epilogue=1", "m=200,n=130,k=9", "m=1,n=4097,k=64",
      "m=4095,n=4097,k=1000", "m=16,n=8192,k=8192", "m=300,n=200,k=4100,epilogue=1", "m=130,n=264,k=72,epilogue=1",
      "m=1000,n=1032,k=256", "m=1040,n=4100,k=136,epilogue=1", "m=2000,n=2100,k=40", NULL},
     "m=5000,n=64,k=40"},
};

/* KBENCH_TEST_OPS=softmax,layernorm limits the awkward-size test to those
 * operators (the whole list takes minutes on the GPU: the naive rungs and
 * the fp64 references of the large matmul and attention shapes); unset, all. */
static int op_selected(const char *name)
{
    const char *list = getenv("KBENCH_TEST_OPS");
    return list == NULL || *list == '\0' || kb_list_has(list, name);
}

static const op_sizes *sizes_of(const kb_op *op)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!strcmp(sizes[i].op, op->name))
            return &sizes[i];
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    return kbt_gpu_setup(&gpu, &dev, "the GPU tests");
}

/* KBENCH_TEST_NO_COUNTERS set: a tools client (`make memcheck`'s
 * compute-sanitizer) holds the GPU's tools interface. Then the counter tests
 * skip, saying so, and a library's kernels cannot be traced, so a result may
 * name none. */
static int tools_client(void)
{
    const char *v = getenv("KBENCH_TEST_NO_COUNTERS");
    return v && *v;
}

static int counters_off(void)
{
    if (!tools_client())
        return 0;
    print_message("KBENCH_TEST_NO_COUNTERS is set: skipping a counter test\n");
    return 1;
}

static const kb_bench_opts quick = {
    .min_samples = 2, .max_samples = 3, .max_noise = 1.0, .time_limit_s = 1.0};

/* What the check must say: 1 mismatch, 0 ok, -1 either. The one-pass variance
 * trap must fail on fp32 inputs whose mean is far larger than their spread; in
 * 16-bit such rows round to a few distinct values and either outcome is fair. */
static int expect_mismatch(const kb_op *op, const kb_variant *v, const int64_t *shape,
                           kb_dtype d)
{
    if (strcmp(op->name, "layernorm") || strcmp(v->name, "one-pass-variance"))
        return 0;
    if (op->naxes < 5 || shape[4] < 10000)
        return 0;
    return d == KB_FP32 ? 1 : -1;
}

static void every_variant_every_dtype_awkward_sizes(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    int nops = 0, failures = 0, cases = 0;
    const kb_op *const *ops = kb_ops(&nops);
    for (int o = 0; o < nops; o++) {
        if (!op_selected(ops[o]->name)) {
            print_message("KBENCH_TEST_OPS leaves out %s\n", ops[o]->name);
            continue;
        }
        const int cases0 = cases, failures0 = failures;
        const op_sizes *sz = sizes_of(ops[o]);
        if (!sz) {
            fprintf(stderr, "no awkward sizes listed for operator %s\n", ops[o]->name);
            failures++;
            continue;
        }
        for (int s = 0; sz->shapes[s]; s++) {
            int64_t shape[KB_MAX_AXES];
            kb_err e = {{0}};
            assert_int_equal(kb_shape_parse(ops[o], sz->shapes[s], shape, &e), KB_OK);
            for (int d = 0; d < KB_DTYPE_COUNT; d++) {
                for (int v = 0; v < ops[o]->nvariants; v++) {
                    const kb_variant *var = &ops[o]->variants[v];
                    if (!(var->dtypes & KB_DT(d)))
                        continue;
                    kb_result r;
                    kb_bench_name_case(&r, ops[o], var, (kb_dtype)d, shape,
                                       1000u + (unsigned)s);
                    assert_int_equal(kb_bench_case(ops[o], var, &dev, &quick, &r, &e), KB_OK);
                    cases++;
                    int expect = expect_mismatch(ops[o], var, shape, (kb_dtype)d);
                    kb_rstatus want = expect == 1 ? KB_R_MISMATCH : KB_R_OK;
                    if (expect < 0 && (r.status == KB_R_OK || r.status == KB_R_MISMATCH)) {
                        /* either outcome is right */
                    } else if (r.status == KB_R_SKIPPED && want == KB_R_OK) {
                        fprintf(stderr, "skipped %s/%s %s %s: %s\n", r.op, r.variant, r.dtype,
                                sz->shapes[s], r.reason);
                    } else if (r.status != want) {
                        fprintf(stderr, "FAIL %s/%s %s %s: %s, want %s (%s; rel_l2 %g)\n", r.op,
                                r.variant, r.dtype, sz->shapes[s], kb_rstatus_name(r.status),
                                kb_rstatus_name(want), r.reason, r.rel_l2_err);
                        failures++;
                    } else if (want == KB_R_OK &&
                               (r.nsamples < 2 || !(r.median_us > 0) ||
                                (r.nkernels < 1 && !tools_client()) || r.rows_checked < 1)) {
                        fprintf(stderr, "FAIL %s/%s %s %s: incomplete result\n", r.op,
                                r.variant, r.dtype, sz->shapes[s]);
                        failures++;
                    }
                    kb_result_release(&r);
                }
            }
        }
        fprintf(stderr, "%s: %d cases checked, %d failed\n", ops[o]->name, cases - cases0,
                failures - failures0);
    }
    fprintf(stderr, "%d GPU cases checked, %d failed\n", cases, failures);
    assert_int_equal(failures, 0);
}

/* flash-wgmma's every configuration (KBENCH_FLASH_WGMMA_CONFIG=0..21, the
 * default and its alternatives) passes the check at shapes no tile divides, dim
 * 64 and 128, causal and not, fp16 and bf16, and runs the kernel its name says:
 * fw_want holds, per dim and configuration, which of the softmax ahead of the
 * wait ("_ov_"), the descriptors moved instead of encoded ("_pd_"), the
 * softmax's max and sum in four chains ("_ch_"), the rows' sums on the tensor
 * pipe ("_rs_"), O rescaled only when a row's max grows by more than 2^8
 * ("_lr_"), tiles of 176 keys ("_n176_"), a copy of the consumer per
 * warpgroup ("_uq_"), the next work tile's Q brought into the L2 ahead
 * ("_qp_"), a work tile's first K tiles copied before Q ("_ke_"), a short
 * last key tile taken first ("_sf_"), its P V on its 64 keys ("_sp_"; seq=900
 * at dim 128: a last tile of 20 keys), clusters of two blocks sharing each
 * K and V tile by multicast ("_mc_"), O stored through shared memory
 * ("_os_"), the last round's work tiles split by key range ("_st_") and,
 * causal, a key tile past all of a warpgroup's rows skipped ("_sk_": seq=4097
 * at dim 64, whose work tiles of 192 rows end past their first 64 or 128
 * rows' last tile, and seq=1000 at dim 128 with 176 keys a tile) it has. seq=300 at dim 128 is an odd number of query blocks: MC's pairs take
 * one past the sequence. ST splits every work tile of seq=900 at heads=2 (16
 * of them, fewer than the SMs) and the last 28 of heads=20's 160 (on 132
 * SMs), into units of 4 key tiles that start and end inside work tiles.
 * Consecutive cases differ in shape, so that the variant's plan, kept for its
 * case, is made anew for each configuration. */
#define FW_TEST_CONFIGS 22
enum {
    FW_OV = 1,
    FW_PD = 2,
    FW_CH = 4,
    FW_RS = 8,
    FW_LR = 16,
    FW_N176 = 32,
    FW_UQ = 64,
    FW_QP = 128,
    FW_KE = 256,
    FW_SF = 512,
    FW_MC = 1024,
    FW_OS = 2048,
    FW_SP = 4096,
    FW_ST = 8192,
    FW_SK = 16384
};
static const int fw_want[2][FW_TEST_CONFIGS] = {
    /* dim 128 */ {FW_OV | FW_PD | FW_LR, 0, 0, 0, 0, FW_OV, FW_OV, FW_OV | FW_PD | FW_CH,
                   FW_OV | FW_PD, FW_OV | FW_PD | FW_CH | FW_LR, FW_OV | FW_PD | FW_LR | FW_N176,
                   FW_OV | FW_PD | FW_LR | FW_UQ, FW_OV | FW_PD | FW_LR | FW_N176 | FW_UQ,
                   FW_OV | FW_PD | FW_LR | FW_QP, FW_OV | FW_PD | FW_LR | FW_N176 | FW_SF,
                   FW_OV | FW_PD | FW_LR | FW_KE | FW_QP,
                   FW_OV | FW_PD | FW_LR | FW_N176 | FW_SF | FW_MC,
                   FW_OV | FW_PD | FW_LR | FW_N176 | FW_SF | FW_OS | FW_SK,
                   FW_OV | FW_PD | FW_LR | FW_N176 | FW_SF | FW_OS | FW_SP | FW_SK,
                   FW_OV | FW_PD | FW_LR | FW_N176 | FW_SF | FW_OS | FW_ST | FW_SK,
                   FW_OV | FW_PD | FW_LR | FW_N176 | FW_SF | FW_OS | FW_SP | FW_ST | FW_SK,
                   FW_OV | FW_PD | FW_LR | FW_N176 | FW_SF | FW_OS},
    /* dim 64 */ {FW_PD | FW_CH | FW_SK, 0, 0, 0, FW_OV, FW_OV, FW_PD, FW_PD | FW_CH | FW_RS, 0,
                  FW_PD | FW_CH | FW_RS | FW_LR, FW_PD | FW_CH | FW_LR, FW_PD | FW_CH | FW_UQ,
                  FW_PD | FW_CH | FW_UQ, FW_PD | FW_CH | FW_QP, FW_PD | FW_CH | FW_KE | FW_QP,
                  FW_PD | FW_CH | FW_KE, FW_PD | FW_CH | FW_OS, FW_PD | FW_CH, FW_PD | FW_CH,
                  FW_PD | FW_CH | FW_SK, FW_PD | FW_CH | FW_SK, FW_PD | FW_CH}};
static void flash_wgmma_configurations_pass_the_check(void **state)
{
    (void)state;
    if (!gpu || !op_selected("attention"))
        skip();
    static const char *const shapes[] = {"batch=1,heads=3,seq=1000,dim=128,causal=1",
                                         "batch=2,heads=3,seq=1000,dim=64",
                                         "batch=3,heads=2,seq=129,dim=128",
                                         "batch=1,heads=2,seq=4097,dim=64,causal=1",
                                         "batch=1,heads=2,seq=900,dim=128",
                                         "batch=1,heads=20,seq=900,dim=128",
                                         "batch=1,heads=3,seq=300,dim=128",
                                         "batch=2,heads=1,seq=300,dim=128,causal=1"};
    const kb_op *op = kb_op_find("attention");
    assert_non_null(op);
    const kb_variant *var = kb_variant_find(op, "flash-wgmma");
    assert_non_null(var);
    int failures = 0, cases = 0;
    for (int c = 0; c < FW_TEST_CONFIGS; c++) {
        char cv[8];
        snprintf(cv, sizeof cv, "%d", c);
        assert_int_equal(setenv("KBENCH_FLASH_WGMMA_CONFIG", cv, 1), 0);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (int d = KB_FP16; d <= KB_BF16; d++) {
                int64_t shape[KB_MAX_AXES];
                kb_err e = {{0}};
                kb_result r;
                assert_int_equal(kb_shape_parse(op, shapes[s], shape, &e), KB_OK);
                kb_bench_name_case(&r, op, var, (kb_dtype)d, shape, 300u + (unsigned)s);
                assert_int_equal(kb_bench_case(op, var, &dev, &quick, &r, &e), KB_OK);
                cases++;
                static const char *const parts[] = {"_ov_", "_pd_", "_ch_", "_rs_", "_lr_",
                                                    "_n176_", "_uq_", "_qp_", "_ke_", "_sf_",
                                                    "_mc_", "_os_", "_sp_", "_st_", "_sk_"};
                int has = 0;
                for (int k = 0; k < (int)(sizeof parts / sizeof *parts); k++)
                    if (r.nkernels > 0 && strstr(r.kernels[0].name, parts[k]))
                        has |= 1 << k;
                const int named = has == fw_want[strstr(shapes[s], "dim=128") ? 0 : 1][c];
                if (r.status == KB_R_SKIPPED) {
                    fprintf(stderr, "skipped flash-wgmma config %d %s: %s\n", c, shapes[s],
                            r.reason);
                } else if (r.status != KB_R_OK || (r.nkernels > 0 && !named)) {
                    fprintf(stderr, "FAIL flash-wgmma config %d %s %s: %s (%s), kernel %s\n", c,
                            r.dtype, shapes[s], kb_rstatus_name(r.status), r.reason,
                            r.nkernels > 0 ? r.kernels[0].name : "-");
                    failures++;
                }
                kb_result_release(&r);
            }
    }
    assert_int_equal(unsetenv("KBENCH_FLASH_WGMMA_CONFIG"), 0);
    fprintf(stderr, "flash-wgmma configurations: %d cases checked, %d failed\n", cases,
            failures);
    assert_int_equal(failures, 0);
}

/* flash-wgmma where the rows' max keeps growing along the keys, so that the
 * online softmax rescales O after its first tile. With the operator's own
 * inputs it hardly does: a row's max over 4096 keys sits about 1.7 (log2
 * units) above its first tile's, under LR's threshold of 8, so the default
 * dim-128 kernel takes its rescale branch on tile 0 alone. Here ramped_keys,
 * at a case's first launch (the one the check reads), adds 24 j / seq to
 * key j of the generated K (uniform in [-2, 2)), which adds scale log2(e) 24
 * j / seq = 3.1 j / seq (log2 units) to a row's scores per unit of its q's
 * sum: about 40 j / seq for a row whose q sums to 13 (one standard
 * deviation), 5 a tile of 128 keys at seq=1000, so such rows meet a max 8
 * above their own every two tiles, and rows whose q sums below 0 keep their
 * first tile's. The later launches (warm-up, samples) find K ramped already.
 * The check reads K from the device, ramp included. Not yet run on a GPU
 * (2026-12-02). */
#define RAMP_KEYS 24.0
static const kb_variant *ramp_target;
static int ramp_pending; /* set before each case, cleared by its first launch */

/* Adds the ramp to K (a->in[1]: batch x heads x seq x dim, 16-bit) in place. */
static cudaError_t ramp_keys(const kb_args *a, cudaStream_t s)
{
    const int64_t seq = a->shape[2], dim = a->shape[3];
    const size_t n = (size_t)(a->shape[0] * a->shape[1] * seq * dim);
    uint16_t *k = malloc(n * sizeof *k);
    if (!k)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudaMemcpyAsync(k, a->in[1], n * sizeof *k, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    for (size_t i = 0; e == cudaSuccess && i < n; i++) {
        const int bf = a->dtype == KB_BF16;
        const float v = (bf ? kb_bf16_to_float(k[i]) : kb_half_to_float(k[i])) +
                        (float)(RAMP_KEYS * (double)((int64_t)i / dim % seq) / (double)seq);
        k[i] = bf ? kb_float_to_bf16(v) : kb_float_to_half(v);
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync((void *)a->in[1], k, n * sizeof *k, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    free(k);
    return e;
}

static cudaError_t ramped_keys(const kb_args *a, cudaStream_t s)
{
    if (ramp_pending) {
        ramp_pending = 0;
        const cudaError_t e = ramp_keys(a, s);
        if (e != cudaSuccess)
            return e;
    }
    return ramp_target->launch(a, s);
}

static void flash_wgmma_rescales_pass_the_check(void **state)
{
    (void)state;
    if (!gpu || !op_selected("attention"))
        skip();
    static const char *const shapes[] = {"batch=1,heads=2,seq=1000,dim=128",
                                         "batch=1,heads=2,seq=1000,dim=128,causal=1",
                                         "batch=1,heads=3,seq=1000,dim=64",
                                         "batch=1,heads=3,seq=1000,dim=64,causal=1"};
    static const char *const configs[] = {"0", "9", "10"}; /* LR in each dim's 9 and 10 */
    const kb_op *op = kb_op_find("attention");
    assert_non_null(op);
    ramp_target = kb_variant_find(op, "flash-wgmma");
    assert_non_null(ramp_target);
    kb_variant ramped = *ramp_target;
    ramped.launch = ramped_keys;
    int failures = 0, cases = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
        int64_t shape[KB_MAX_AXES];
        kb_err e = {{0}};
        assert_int_equal(kb_shape_parse(op, shapes[sh], shape, &e), KB_OK);
        for (int d = KB_FP16; d <= KB_BF16; d++)
            for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
                assert_int_equal(setenv("KBENCH_FLASH_WGMMA_CONFIG", configs[c], 1), 0);
                kb_result r;
                kb_bench_name_case(&r, op, &ramped, (kb_dtype)d, shape, 500u + (unsigned)sh);
                ramp_pending = 1;
                assert_int_equal(kb_bench_case(op, &ramped, &dev, &quick, &r, &e), KB_OK);
                cases++;
                if (r.status != KB_R_OK) {
                    fprintf(stderr, "FAIL flash-wgmma ramped keys config %s %s %s: %s (%s)\n",
                            configs[c], r.dtype, shapes[sh], kb_rstatus_name(r.status),
                            r.reason);
                    failures++;
                }
                kb_result_release(&r);
            }
    }
    assert_int_equal(unsetenv("KBENCH_FLASH_WGMMA_CONFIG"), 0);
    fprintf(stderr, "flash-wgmma with ramped keys: %d cases checked, %d failed\n", cases,
            failures);
    assert_int_equal(failures, 0);
}

/* A launcher that leaves the last row unwritten: the check must see the poison.
 * It launches the operator's last variant whose launcher reads the shape at
 * each call: a prepared variant (a library's plan) is bound to its case's
 * shape, so it could not be asked for one row fewer. */
static const kb_variant *target;
static cudaError_t skip_last_row(const kb_args *a, cudaStream_t s)
{
    kb_args b = *a;
    int64_t shape[KB_MAX_AXES];
    memcpy(shape, a->shape, sizeof shape);
    shape[0] -= 1;
    b.shape = shape;
    return shape[0] > 0 ? target->launch(&b, s) : cudaSuccess;
}

static void unwritten_output_is_a_mismatch(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    int nops = 0;
    const kb_op *const *ops = kb_ops(&nops);
    for (int o = 0; o < nops; o++) {
        const kb_op *op = ops[o];
        target = NULL;
        for (int i = 0; i < op->nvariants; i++)
            if (!op->variants[i].prepare)
                target = &op->variants[i];
        assert_non_null(target);
        kb_dtype dt = (target->dtypes & KB_DT(KB_FP32)) ? KB_FP32 : KB_BF16;
        kb_variant broken = *target;
        broken.launch = skip_last_row;
        int64_t shape[KB_MAX_AXES];
        kb_err e = {{0}};
        const op_sizes *sz = sizes_of(op);
        assert_non_null(sz);
        assert_int_equal(kb_shape_parse(op, sz->sampled, shape, &e), KB_OK);
        kb_result r;
        kb_bench_name_case(&r, op, &broken, dt, shape, 7);
        assert_int_equal(kb_bench_case(op, &broken, &dev, &quick, &r, &e), KB_OK);
        assert_int_equal(r.status, KB_R_MISMATCH);
        assert_non_null(strstr(r.reason, "row 4999"));
        kb_result_release(&r);
    }
}

static void calibration_and_clock_are_sane(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    kb_err e = {{0}};
    double gbps = 0, batch = 0;
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(kb_calibrate_copy(&gbps, &batch, &e), KB_OK);
    fprintf(stderr, "copy bandwidth %.0f GB/s cold, %.0f GB/s batch\n", gbps, batch);
    assert_true(gbps > 100 && gbps < 20000);
    /* 1 GiB copies: the L2's state changes a few % at most */
    assert_true(batch > 0.9 * gbps && batch < 1.1 * gbps);
    double mhz = kb_measure_sm_clock(0);
    fprintf(stderr, "SM clock %.0f MHz (peak %d)\n", mhz, dev.sm_clock_mhz);
    assert_true(mhz > 100 && mhz < 1.2 * dev.sm_clock_mhz);
}

/* tests/gpu/counters_probe_kernel.cu */
cudaError_t kb_probe_copy(const kb_args *a, cudaStream_t s);

/* The counters of a plain copy, profiled as kbench profiles (between two L2
 * flushes): DRAM bytes read and written each within 1% of the 256 MiB the
 * copy must move each way. */
static void copy_counters_match_its_bytes(void **state)
{
    (void)state;
    if (!gpu || counters_off())
        skip();
    const size_t n = (size_t)64 << 20, bytes = n * sizeof(float);
    int64_t shape[1] = {(int64_t)n};
    kb_args a;
    kb_counters *pc = NULL;
    kb_counter_values cv[2];
    char why[256] = "";
    int nk = 0, passes = 0;
    kb_err e = {{0}};
    void *flush = NULL;
    size_t flush_bytes = (size_t)(KB_FLUSH_L2_FACTOR * dev.l2_bytes);
    memset(&a, 0, sizeof a);
    a.shape = shape;
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&a.in[0], bytes), cudaSuccess);
    assert_int_equal(cudaMalloc(&a.out[0], bytes), cudaSuccess);
    assert_int_equal(cudaMalloc(&flush, flush_bytes), cudaSuccess);
    assert_int_equal(cudaMemset((void *)a.in[0], 1, bytes), cudaSuccess);
    assert_int_equal(cudaMemset(flush, 0, flush_bytes), cudaSuccess);
    assert_int_equal(kb_counters_open(KB_METRICS_CORE, &pc, why, sizeof why, &e), KB_OK);
    if (!pc) {
        fprintf(stderr, "no counters here: %s\n", why);
        fail();
    }
    assert_int_equal(kb_counters_profile(pc, kb_probe_copy, &a, 0, flush, flush_bytes, cv, 2,
                                         &nk, &passes, why, sizeof why, &e),
                     KB_OK);
    kb_counters_close(pc);
    assert_int_equal(nk, 1);
    assert_int_equal(passes, 1);
    double rd = kb_counter_get(&cv[0], KB_METRIC_DRAM_READ);
    double wr = kb_counter_get(&cv[0], KB_METRIC_DRAM_WRITE);
    fprintf(stderr, "copy of %zu bytes: DRAM read %.0f (%+.2f%%), write %.0f (%+.2f%%)\n", bytes,
            rd, 100 * (rd - (double)bytes) / (double)bytes, wr,
            100 * (wr - (double)bytes) / (double)bytes);
    assert_true(fabs(rd - (double)bytes) < 0.01 * (double)bytes);
    assert_true(fabs(wr - (double)bytes) < 0.01 * (double)bytes);
    cudaFree((void *)a.in[0]);
    cudaFree(a.out[0]);
    cudaFree(flush);
}

/* A case run with core counters: every kernel has its metrics, and the fused
 * softmax moves about the bytes of its model (one read, one write). */
static void bench_collects_core_counters(void **state)
{
    (void)state;
    if (!gpu || counters_off())
        skip();
    const kb_op *op = kb_op_find("softmax");
    const kb_variant *v = kb_variant_find(op, "fused");
    int64_t shape[KB_MAX_AXES] = {8192, 8192};
    kb_bench_opts o = quick;
    o.metrics = KB_METRICS_CORE;
    kb_result r;
    kb_err e = {{0}};
    kb_bench_name_case(&r, op, v, KB_FP32, shape, 99);
    assert_int_equal(kb_bench_case(op, v, &dev, &o, &r, &e), KB_OK);
    assert_int_equal(r.status, KB_R_OK);
    fprintf(stderr, "fused softmax 8192x8192 fp32: passes %d, DRAM %.0f bytes, excess %.3f, "
                    "achieved occupancy %.1f%% (%s)\n",
            r.passes, r.dram_bytes, r.excess_traffic, r.achieved_occupancy, r.counters_reason);
    assert_string_equal(r.counters_reason, "");
    assert_string_equal(r.metric_set, "core");
    assert_int_equal(r.passes, 1);
    assert_true(r.nkernels >= 1 && r.kernels[0].nmetrics >= 9);
    assert_true(r.excess_traffic > 0.97 && r.excess_traffic < 1.10);
    assert_true(r.achieved_occupancy > 0 && r.achieved_occupancy <= 100);
    kb_result_release(&r);
}

/* A variant whose kernels are a library's (cudnn notes no launches): the
 * harness traces them (names, registers, shared memory) and the counter pass
 * gives each its metrics, as for kbench's own kernels. Skips, saying why, when
 * cuDNN cannot run here. */
static void library_kernels_are_traced_and_profiled(void **state)
{
    (void)state;
    if (!gpu || counters_off())
        skip();
    const kb_op *op = kb_op_find("attention");
    const kb_variant *v = kb_variant_find(op, "cudnn");
    int64_t shape[KB_MAX_AXES];
    kb_err e = {{0}};
    kb_bench_opts o = quick;
    o.metrics = KB_METRICS_CORE;
    assert_non_null(v);
    assert_int_equal(kb_shape_parse(op, "batch=2,heads=8,seq=1024,dim=128", shape, &e), KB_OK);
    kb_result r;
    kb_bench_name_case(&r, op, v, KB_BF16, shape, 5);
    assert_int_equal(kb_bench_case(op, v, &dev, &o, &r, &e), KB_OK);
    if (r.status == KB_R_SKIPPED) {
        fprintf(stderr, "cudnn skipped: %s\n", r.reason);
        kb_result_release(&r);
        skip();
    }
    fprintf(stderr, "cudnn bf16 b=2 h=8 s=1024 d=128: %s %s, %d kernel(s), first %s: %d regs, "
                    "%lld+%lld bytes shared; counters: %s\n",
            kb_rstatus_name(r.status), r.reason, r.nkernels,
            r.nkernels ? r.kernels[0].name : "-", r.nkernels ? r.kernels[0].registers : 0,
            r.nkernels ? (long long)r.kernels[0].static_smem : 0LL,
            r.nkernels ? (long long)r.kernels[0].dynamic_smem : 0LL,
            r.counters_reason[0] ? r.counters_reason : "ok");
    assert_int_equal(r.status, KB_R_OK);
    assert_true(r.nkernels >= 1);
    assert_true(r.kernels[0].registers > 0 && r.kernels[0].block[0] > 0);
    assert_string_equal(r.counters_reason, "");
    assert_true(r.kernels[0].nmetrics >= 9);
    assert_true(r.excess_traffic > 0.5);
    kb_result_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_variant_every_dtype_awkward_sizes),
        cmocka_unit_test(flash_wgmma_configurations_pass_the_check),
        cmocka_unit_test(flash_wgmma_rescales_pass_the_check),
        cmocka_unit_test(unwritten_output_is_a_mismatch),
        cmocka_unit_test(calibration_and_clock_are_sane),
        cmocka_unit_test(copy_counters_match_its_bytes),
        cmocka_unit_test(bench_collects_core_counters),
        cmocka_unit_test(library_kernels_are_traced_and_profiled),
    };
    return cmocka_run_group_tests_name("gpu operators", tests, setup, NULL);
}
