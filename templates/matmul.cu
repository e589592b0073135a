/* A matmul variant of your own, started by `kbench new matmul NAME`.
 *
 * Run it beside the built-in ladder, and again on every save:
 *   kbench run matmul --variants naive,./NAME.cu --watch
 *
 * The operator (see kbench/variant.h): in[0] = A (m x k), in[1] = B stored
 * n x k (row j of it is column j of the right operand, the layout tensor cores
 * read without a transpose), in[2] = bias (n), out[0] = C (m x n), all of
 * a->dtype, row-major:
 *   C = A B^T                       (epilogue = 0)
 *   C = GELU(A B^T + bias)          (epilogue = 1, the exact GELU)
 *
 * Idea of this starting point: one thread per element of C, the k loop read
 * straight from global memory with an fp32 accumulator; the 16 x 16 threads of
 * a block share 16 rows of A and 16 rows of B through the caches only.
 * Correct for every shape and dtype; far from the matrix unit's peak. Ideas to
 * try: tiles of A and B staged in shared memory, a register tile of C per
 * thread, then tensor cores (mma.sync, wgmma) with a cp.async or TMA
 * pipeline. */
#include <kbench/variant.h>
#include <math.h>
#include <stdio.h>

const int kbench_variant_abi = KBENCH_VARIANT_ABI;
const char kbench_operator[] = "matmul";
const char kbench_summary[] = "one thread per output, k loop from global memory (starting point)";
const unsigned kbench_dtypes = KBENCH_DT_ALL;

/* The axes, in a->shape[] order. */
enum { M, N, K, EPILOGUE };

#define TILE 16
/* The grid's y limit, in blocks of TILE rows. */
#define MAX_GRID_Y 65535

__global__ void __launch_bounds__(TILE *TILE)
    matmul_elems(const void *a, const void *b, const void *bias, void *c, kbench_dtype d,
                 int64_t m, int64_t n, int64_t k, int epilogue)
{
    const int64_t i = (int64_t)blockIdx.y * TILE + threadIdx.y; /* row of C */
    const int64_t j = (int64_t)blockIdx.x * TILE + threadIdx.x; /* column of C */
    if (i >= m || j >= n)
        return;
    float acc = 0.0f;
    for (int64_t p = 0; p < k; p++)
        acc += kbench_load(a, d, i * k + p) * kbench_load(b, d, j * k + p);
    if (epilogue) {
        const float z = acc + kbench_load(bias, d, j);
        acc = 0.5f * z * (1.0f + erff(z * 0.7071067811865476f));
    }
    kbench_store(c, d, i * n + j, acc);
}

extern "C" int kbench_unsupported(const int64_t *shape, int naxes, kbench_dtype d, char *why,
                                  size_t why_size)
{
    (void)naxes;
    (void)d;
    if ((shape[M] + TILE - 1) / TILE <= MAX_GRID_Y)
        return 0;
    snprintf(why, why_size, "m=%lld needs more than %d blocks of %d rows", (long long)shape[M],
             MAX_GRID_Y, TILE);
    return 1;
}

extern "C" cudaError_t kbench_launch(const kbench_args *a, cudaStream_t s)
{
    const int64_t m = a->shape[M], n = a->shape[N], k = a->shape[K];
    const dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE));
    matmul_elems<<<grid, dim3(TILE, TILE), 0, s>>>(a->in[0], a->in[1], a->in[2], a->out[0],
                                                   a->dtype, m, n, k, (int)a->shape[EPILOGUE]);
    return cudaGetLastError();
}
