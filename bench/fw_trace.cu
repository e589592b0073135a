/* fw_trace.cu - a timeline of flash-wgmma's work tiles: where a block's
 * cycles go at the edges of its work tiles, which the counters (averages over
 * the whole launch) cannot show.
 *
 * It builds the variant's kernel with TR (flash_wgmma.cu: clock64 stamps at
 * each work tile's edges in every block, the producer's and each consumer
 * warpgroup's, and the cycles the consumers' key-tile loop spends in each kind
 * of wait), in the configuration the variant runs by default at the shape,
 * launches it on random bf16 inputs, and prints one line per record. The same
 * configuration without TR is timed beside it (events, median of 20 after 5
 * warm-ups), so the stamps' own cost is known.
 *
 *   build/bench/fw_trace [batch heads seq dim causal [alt]]  (default 4 16 4096 128 0)
 *
 * alt traces another configuration instead (dim 128 only): regs (O stored
 * from the registers, configuration 14: the default before OS), mc (that
 * with clusters of two blocks, K and V multicast into both), qp (that with
 * QP and KE: the next work tile's Q brought into the L2 ahead and its first K
 * tile copied early) or ns (that with O not stored at all: wrong output, and
 * without the stores ptxas drops O's rescale too, so only the edges'
 * figures mean anything) or st (the default with ST, the last round's work
 * tiles split by key range: its producer's records alone, ntiles then the
 * segment's key tiles; bench/fw_trace.py needs the consumers', so read it
 * with --blocks).
 *
 * Output, after a comment line with both times and the clock they imply:
 *   P blk n wt ntiles  top qfree qasked k0asked vlast          (producer)
 *   C blk n w wt ntiles gtime_ns  qin k0in turn0 s0in sm0done loopend pvin
 *     stored  waitkv waitturn waits waitpv                      (consumer)
 * clock values are the SM's cycles (one block an SM: comparable within a
 * block), gtime_ns the global timer at the consumer's start of the tile.
 * `make tests` builds it as build/bench/fw_trace; run it on the GPU machine
 * and read it with bench/fw_trace.py. */
#include <stdlib.h>
#include <string.h>

#include "../variants/attention/flash_wgmma.cu"
#include "check.cuh"
#include "kernels/fill.h"
#include "median_time.cuh"

#define CHECK(call) kb_tool_check("fw_trace", (call), #call)

typedef __nv_bfloat16 T;

/* The median time in microseconds of configuration C's launches. */
template <typename C> static float time_cfg(const kb_args *a, const CUtensorMap *maps, int sms)
{
    return kb_median_launch_us("fw_trace", [&] {
        return fw_launch<T, C>(a, 0, maps, sms, "att_fw_trace", 1);
    });
}

template <typename C0, typename C1> static int trace(kb_args *a, int sms)
{
    CUtensorMap maps[3];
    CHECK((fw_setup<T, C0>(a, maps)));
    CHECK((fw_setup<T, C1>(a, maps)));
    const size_t words = (size_t)sms * FW_TR_TILES * FW_TR_ROLES * FW_TR_SLOTS;
    unsigned long long *buf = NULL;
    CHECK(cudaMalloc(&buf, words * 8));
    const float plain = time_cfg<C0>(a, maps, sms);
    CHECK(cudaMemcpyToSymbol(fw_trace, &buf, sizeof buf));
    const float traced = time_cfg<C1>(a, maps, sms);
    CHECK(cudaMemset(buf, 0, words * 8));
    CHECK((fw_launch<T, C1>(a, 0, maps, sms, "att_fw_trace", 1)));
    CHECK(cudaDeviceSynchronize());
    unsigned long long *h = (unsigned long long *)malloc(words * 8);
    if (!h)
        return 1;
    CHECK(cudaMemcpy(h, buf, words * 8, cudaMemcpyDeviceToHost));
    const double flops = 4.0 * (double)(a->shape[ATT_BATCH] * a->shape[ATT_HEADS]) *
                         (double)a->shape[ATT_SEQ] * (double)a->shape[ATT_SEQ] *
                         (double)a->shape[ATT_DIM] / (a->shape[ATT_CAUSAL] ? 2.0 : 1.0);
    printf("# %s: plain %.1f us (%.1f TFLOP/s), traced %.1f us (%.1f TFLOP/s)\n",
           fw_name<C0, 1>(), plain, flops / plain / 1e6, traced, flops / traced / 1e6);
    for (int b = 0; b < sms; b++)
        for (int n = 0; n < FW_TR_TILES; n++)
            for (int r = 0; r <= C1::NC; r++) {
                const unsigned long long *t =
                    h + (((size_t)b * FW_TR_TILES + n) * FW_TR_ROLES + r) * FW_TR_SLOTS;
                if (t[0] == 0)
                    continue;
                const unsigned wt = (unsigned)(t[15] & 0xffffffffu), nt = (unsigned)(t[15] >> 32);
                if (r == 0)
                    printf("P %d %d %u %u %llu %llu %llu %llu %llu\n", b, n, wt, nt, t[0], t[1],
                           t[2], t[3], t[4]);
                else
                    printf("C %d %d %d %u %u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
                           "%llu %llu %llu\n",
                           b, n, r - 1, wt, nt, t[14], t[0], t[1], t[2], t[3], t[4], t[5], t[6],
                           t[7], t[8], t[9], t[10], t[11]);
            }
    free(h);
    CHECK(cudaFree(buf));
    return 0;
}

int main(int argc, char **argv)
{
    int64_t shape[KB_MAX_AXES] = {4, 16, 4096, 128, 0};
    if (argc != 1 && argc != 6 && argc != 7) {
        fprintf(stderr, "usage: fw_trace [batch heads seq dim causal [regs|mc|qp|ns|st]]\n");
        return 2;
    }
    static const char *const alts[] = {"regs", "mc", "qp", "ns", "st"};
    int alt = -1;
    for (int i = 0; argc == 7 && i < (int)(sizeof alts / sizeof *alts); i++)
        if (!strcmp(argv[6], alts[i]))
            alt = i;
    if (argc == 7 && alt < 0) {
        fprintf(stderr, "fw_trace: bad argument '%s': regs, mc, qp or ns\n", argv[6]);
        return 2;
    }
    for (int i = 1; i < argc && i < 6; i++) {
        char *end;
        shape[i - 1] = strtoll(argv[i], &end, 10);
        if (*end || shape[i - 1] < 0 || (i < 5 && shape[i - 1] < 1)) {
            fprintf(stderr, "fw_trace: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    const int64_t d = shape[ATT_DIM];
    if (d != 64 && d != 128) {
        fprintf(stderr, "fw_trace: dim %lld: 64 or 128\n", (long long)d);
        return 2;
    }
    if (alt >= 0 && d == 64) {
        fprintf(stderr, "fw_trace: %s: dim 128 only\n", alts[alt]);
        return 2;
    }
    const size_t n = (size_t)(shape[ATT_BATCH] * shape[ATT_HEADS] * shape[ATT_SEQ] * d);
    kb_args a = {};
    a.dtype = KB_BF16;
    a.shape = shape;
    for (int i = 0; i < 3; i++) { /* Q, K, V uniform in [-1, 1), as kbench draws them */
        void *p;
        CHECK(cudaMalloc(&p, n * sizeof(T)));
        CHECK(kb_fill_uniform(p, n, KB_BF16, 12345u + (uint64_t)i, 0.0f, 1.0f, 0));
        a.in[i] = p;
    }
    CHECK(cudaMalloc(&a.out[0], n * sizeof(T)));
    /* st: ST's slots whatever the shape (the variant's scratch holds them only
     * where its default may split) */
    a.scratch_bytes = alt == 4 && !shape[ATT_CAUSAL] ? fw_st_scratch(shape)
                                                     : kb_attention_flash_wgmma_scratch(shape, KB_BF16);
    CHECK(cudaMalloc(&a.scratch, a.scratch_bytes));
    CHECK(cudaMemset(a.scratch, 0, a.scratch_bytes));
    int sms;
    CHECK(kb_current_sms(&sms));
    /* fw_choose's defaults (flash_wgmma.cu names them), or configuration 14
     * with an alternative, without and with TR */
    if (d == 64)
        return trace<fw_d64_default<0>, fw_d64_default<FW_TR>>(&a, sms);
    switch (alt) {
    case 0:
        return trace<fw_d128_sf<0>, fw_d128_sf<FW_TR>>(&a, sms);
    case 1:
        return trace<fw_d128_sf<FW_MC>, fw_d128_sf<FW_TR | FW_MC>>(&a, sms);
    case 2:
        return trace<fw_d128_sf<FW_QP | FW_KE>, fw_d128_sf<FW_TR | FW_QP | FW_KE>>(&a, sms);
    case 3:
        return trace<fw_d128_sf<FW_NS>, fw_d128_sf<FW_TR | FW_NS>>(&a, sms);
    case 4:
        return trace<fw_d128_chosen<FW_ST>, fw_d128_chosen<FW_TR | FW_ST>>(&a, sms);
    default:
        return trace<fw_d128_chosen<0>, fw_d128_chosen<FW_TR>>(&a, sms);
    }
}
