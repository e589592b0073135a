/* test_sass_mix.c - tests/gpu/sass_mix.sh without a GPU: a saved SASS listing
 * (SASS_FILE) gives a line per kernel whose name matches, with its
 * instructions counted by kind (NOPs, encoding lines and other kernels left
 * out, predicated instructions counted), one header line; no match exits 1
 * saying so, and a bad command line exits 2 with its usage. Skips, saying
 * so, without python3. */
#include <unistd.h>

#include "kbtest.h"

static const char listing[] =
    "\tcode for sm_90\n"
    "\t\tFunction : _Z23layernorm_fused_clusterIfEvv\n"
    "\t.headerflags\t@\"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"\n"
    "        /*0000*/                   LDC R1, c[0x0][0x28] ;           /* 0x00000a00ff017b82 */\n"
    "                                                                    /* 0x000fe40000000800 */\n"
    "        /*0010*/                   LDG.E.128 R4, desc[UR4][R2.64] ;  /* 0x0000000402047981 */\n"
    "        /*0020*/              @!P0 FFMA R5, R4, R4, R5 ;            /* 0x0000000404058223 */\n"
    "        /*0030*/                   MUFU.EX2 R6, R5 ;                 /* 0x0000000500067308 */\n"
    "        /*0040*/                   FADD.FTZ R7, R6, R6 ;             /* 0x0000000606077221 */\n"
    "        /*0050*/                   STG.E.128 desc[UR4][R2.64], R4 ; /* 0x0000000402007986 */\n"
    "        /*0060*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;     /* 0x0000000000007b1d */\n"
    "        /*0070*/                   EXIT ;                            /* 0x000000000000794d */\n"
    "        /*0080*/                   BRA 0x80;                         /* 0xfffffffc00fc7947 */\n"
    "        /*0090*/                   NOP;                              /* 0x0000000000007918 */\n"
    "\t\tFunction : _Z13softmax_otherv\n"
    "        /*0000*/                   SHFL.BFLY PT, R3, R2, 0x1, 0x1f ; /* 0x0c201f0002037f89 */\n"
    "        /*0010*/                   EXIT ;                            /* 0x000000000000794d */\n";

static void counts_by_kind(void **state)
{
    (void)state;
    kbt_need_python("tests/gpu/sass_mix.sh");
    char path[128];
    snprintf(path, sizeof path, "%s/sass.txt", kbt_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(listing, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);

    assert_int_equal(kbt_sh("SASS_FILE=%s bash tests/gpu/sass_mix.sh layernorm >%s/out 2>&1",
                            path, kbt_dir),
                     0);
    char *t = kbt_read("out");
    kbt_has(t, "total    fp  mufu   cvt   int  gmem  smem  shfl  sync  ctrl other  kernel\n");
    /* LDC other; LDG, STG; FFMA (predicated), FADD; MUFU; BAR; EXIT, BRA; no NOP */
    kbt_has(t, "    9     2     1     0     0     2     0     0     1     2     1  ");
    kbt_has(t, "layernorm_fused_cluster");
    assert_null(strstr(t, "softmax_other"));
    free(t);

    assert_int_equal(kbt_sh("SASS_FILE=%s/sass.txt bash tests/gpu/sass_mix.sh 'fused|other' "
                            ">%s/both 2>&1",
                            kbt_dir, kbt_dir),
                     0);
    t = kbt_read("both");
    kbt_has(t, "    2     0     0     0     0     0     0     1     0     1     0  ");
    kbt_has(t, "softmax_other");
    free(t);

    assert_int_equal(kbt_sh("SASS_FILE=%s/sass.txt bash tests/gpu/sass_mix.sh attention "
                            ">%s/none 2>&1",
                            kbt_dir, kbt_dir),
                     1);
    t = kbt_read("none");
    kbt_has(t, "sass_mix: no kernel matches attention");
    free(t);

    assert_int_equal(kbt_sh("bash tests/gpu/sass_mix.sh >%s/usage 2>&1", kbt_dir), 2);
    t = kbt_read("usage");
    kbt_has(t, "usage: tests/gpu/sass_mix.sh REGEX [BINARY]");
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(counts_by_kind, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
