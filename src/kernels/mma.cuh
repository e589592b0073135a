/* mma.cuh - the tensor-core machinery from before Hopper that the mma.sync
 * rungs share (flash-tiled attention, tensor-core matmul), as thin inline-PTX
 * wrappers:
 *   cp.async   16 bytes global -> shared without a register round trip,
 *              committed in groups and waited for by count;
 *   ldmatrix   four 8 x 8 matrices of 16-bit elements from shared memory into
 *              the mma fragment layout (or transposed);
 *   mma.sync   m16n8k16 and m16n8k8 with 16-bit inputs and fp32
 *              accumulators, and the zeroing of a grid of them.
 * Device code only; runs on sm_80 and later. */
#ifndef KB_MMA_CUH
#define KB_MMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

/* The shared-memory address (32-bit, .shared window) of a generic pointer. */
static __device__ __forceinline__ uint32_t kb_smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* cp.async of 16 bytes from src to shared dst, reading `bytes` of them (0 or
 * 16) and zero-filling the rest; bypasses L1. */
static __device__ __forceinline__ void kb_cp_async16(uint32_t dst, const void *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(bytes)
                 : "memory");
}

/* The same copy of 16 bytes known to lie wholly inside the source: no source
 * size, so no register for it and no zero fill. */
static __device__ __forceinline__ void kb_cp_async16_whole(uint32_t dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

/* Closes this thread's cp.async copies issued since the last commit into a group. */
static __device__ __forceinline__ void kb_cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N of this thread's cp.async groups are pending. */
template <int N> static __device__ __forceinline__ void kb_cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* ldmatrix.x4: lanes 8i..8i+7 address the rows of matrix i. */
static __device__ __forceinline__ void kb_ldsm4(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* The same, each matrix transposed. */
static __device__ __forceinline__ void kb_ldsm4_t(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* c += a * b, m16n8k16, fp32 accumulators (T: __half or __nv_bfloat16). */
template <typename T>
static __device__ __forceinline__ void kb_mma16816(float (&c)[4], const uint32_t (&a)[4],
                                                   uint32_t b0, uint32_t b1)
{
    if constexpr (std::is_same<T, __nv_bfloat16>::value)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* c += a * b, m16n8k8 (lane (g, t): a0 row g, a1 row g + 8, columns 2t and
 * 2t + 1; b rows 2t and 2t + 1 of column g), fp32 accumulators. */
template <typename T>
static __device__ __forceinline__ void kb_mma1688(float (&c)[4], uint32_t a0, uint32_t a1,
                                                  uint32_t b)
{
    if constexpr (std::is_same<T, __nv_bfloat16>::value)
        asm("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 "
            "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a0), "r"(a1), "r"(b));
    else
        asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
            "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a0), "r"(a1), "r"(b));
}

/* d = a * b, m16n8k8, with no accumulator in (its C the zero register), so
 * no moves to set one up. */
template <typename T>
static __device__ __forceinline__ void kb_mma1688_0(float (&d)[4], uint32_t a0, uint32_t a1,
                                                   uint32_t b)
{
    if constexpr (std::is_same<T, __nv_bfloat16>::value)
        asm("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 "
            "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %7, %7, %7};\n"
            : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
            : "r"(a0), "r"(a1), "r"(b), "f"(0.0f));
    else
        asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
            "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %7, %7, %7};\n"
            : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
            : "r"(a0), "r"(a1), "r"(b), "f"(0.0f));
}

/* Zeroes an M x N grid of m16n8 fp32 accumulator fragments. */
template <int M, int N>
static __device__ __forceinline__ void kb_mma_zero(float (&c)[M][N][4])
{
#pragma unroll
    for (int i = 0; i < M; i++)
#pragma unroll
        for (int j = 0; j < N; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                c[i][j][e] = 0.0f;
}

#endif
