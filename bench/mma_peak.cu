/* mma_peak.cu - the ceiling of the matmul ladder's tensor-core rung: how many
 * mma.sync.m16n8k16 (bf16 in, fp32 accumulators) an SM issues per clock when
 * nothing else is in the way, and with the ldmatrix traffic the rung's k loop
 * carries beside them.
 *
 * Each warp keeps NACC independent accumulator fragments and issues ITERS
 * rounds of NACC mmas on fragments held in registers (no memory); with
 * LDSM, 8 ldmatrix.x4 from shared memory per 32 mmas are issued in between,
 * the ratio of the rung's 64 x 64 warp tile, one before each group of 4
 * mmas: LDSM_NOW loads the fragments that group uses (each load's latency
 * in the way of its mmas), LDSM_AHEAD those of the next group (4 mmas
 * between a load and its use; the rung loads a whole k16 slice ahead).
 * Every block times itself with the SM's clock (clock64), so the figure is
 * flop per SM clock, not bound to the clock the GPU held; the wall time
 * (events) gives TFLOP/s at that clock.
 * The accumulators are written out so that nothing is optimised away.
 *
 * `make tests` builds it as build/bench/mma_peak; run it on the GPU machine.
 * Output: one line a configuration (warps an SM, accumulators a warp,
 * ldmatrix off, now or ahead): flop/clk/SM, TFLOP/s, the SM clock it implies. */
#include <stdio.h>
#include <stdlib.h>

#include "check.cuh"
#include "kernels/mma.cuh"

#define ITERS 4096
#define LDSM_OFF 0
#define LDSM_NOW 1
#define LDSM_AHEAD 2

#define CHECK(call) kb_tool_check("mma_peak", (call), #call)

template <int NACC, int LDSM>
__global__ void mma_loop(float *out, long long *cycles, uint32_t seed)
{
    __shared__ __align__(128) uint8_t tile[8192];
    const int lane = threadIdx.x % 32;
    for (int i = threadIdx.x; i < 8192 / 4; i += blockDim.x)
        reinterpret_cast<uint32_t *>(tile)[i] = seed * (uint32_t)(i + 1);
    __syncthreads();
    uint32_t a[4], b[2][4];
    for (int i = 0; i < 4; i++) {
        a[i] = seed ^ (uint32_t)(lane * 4 + i);
        b[0][i] = b[1][i] = a[i] * 3u;
    }
    float acc[NACC][4];
    for (int j = 0; j < NACC; j++)
        for (int i = 0; i < 4; i++)
            acc[j][i] = 0.0f;
    const uint32_t base = kb_smem_u32(tile) + (uint32_t)(lane * 16);
    const long long t0 = clock64();
    for (int it = 0; it < ITERS; it++) {
#pragma unroll
        for (int j = 0; j < NACC; j++) {
            const int set = (j / 4) % 2; /* the fragments group j / 4 uses */
            if (LDSM != LDSM_OFF && j % 4 == 0) /* 8 ldmatrix.x4 per 32 mmas */
                kb_ldsm4(b[LDSM == LDSM_NOW ? set : 1 - set],
                         base + (uint32_t)((j * 512 + it * 16) % 7680));
            kb_mma16816<__nv_bfloat16>(acc[j], a, b[set][j % 4], b[set][(j + 1) % 4]);
        }
    }
    const long long t1 = clock64();
    float s = 0.0f;
    for (int j = 0; j < NACC; j++)
        s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (threadIdx.x == 0)
        cycles[blockIdx.x] = t1 - t0;
}

template <int NACC, int LDSM> static void run(int sms, int warps, float *out, long long *cyc)
{
    const int threads = 32 * warps; /* one block an SM */
    long long host[1024];
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    mma_loop<NACC, LDSM><<<sms, threads>>>(out, cyc, 1u); /* warm-up */
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e0));
    mma_loop<NACC, LDSM><<<sms, threads>>>(out, cyc, 7u);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    CHECK(cudaMemcpy(host, cyc, sizeof(long long) * (size_t)sms, cudaMemcpyDeviceToHost));
    long long cmax = 0;
    for (int i = 0; i < sms; i++)
        cmax = host[i] > cmax ? host[i] : cmax;
    const double flop_sm = 4096.0 * NACC * ITERS * warps; /* per SM (one block) */
    const double per_clk = flop_sm / (double)cmax;
    const double tflops = flop_sm * sms / (ms * 1e-3) / 1e12;
    printf("warps/SM %2d  acc/warp %2d  ldmatrix %-5s  %6.0f flop/clk/SM  %6.1f TFLOP/s  "
           "(%4.0f MHz implied)\n",
           warps, NACC, LDSM == LDSM_OFF ? "off" : LDSM == LDSM_NOW ? "now" : "ahead", per_clk,
           tflops, tflops * 1e12 / (per_clk * sms) / 1e6);
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
}

int main(void)
{
    int dev = 0, sms = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (sms > 1024) {
        fprintf(stderr, "mma_peak: %d SMs, more than this probe counts\n", sms);
        return 1;
    }
    float *out = NULL;
    long long *cyc = NULL;
    CHECK(cudaMalloc(&out, sizeof(float) * (size_t)sms * 1024));
    CHECK(cudaMalloc(&cyc, sizeof(long long) * (size_t)sms));
    /* 32 accumulators a warp (128 registers, the rung's) fit 8 warps an SM */
    const int warps[] = {4, 8, 16};
    for (int w = 0; w < 3; w++)
        run<8, LDSM_OFF>(sms, warps[w], out, cyc);
    for (int w = 0; w < 2; w++) {
        run<32, LDSM_OFF>(sms, warps[w], out, cyc);
        run<32, LDSM_NOW>(sms, warps[w], out, cyc);
        run<32, LDSM_AHEAD>(sms, warps[w], out, cyc);
    }
    CHECK(cudaFree(out));
    CHECK(cudaFree(cyc));
    return 0;
}
