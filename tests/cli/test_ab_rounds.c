/* test_ab_rounds.c - tests/gpu/ab_rounds.sh without a GPU: --summary over the
 * reports two rounds of two arms and a peer leave
 * (tests/fixtures/make_ab_rounds.py) gives a row per dtype and shape with each
 * arm's figure in every round, % of the copy bandwidth for a memory-bound case
 * and flop per SM cycle for a compute-bound one, and each arm's and the
 * peer's mean over the first arm's; DRY_RUN=1 prints a command per arm and
 * round with the arm's environment (KBENCH_BIN the binary), then the peer's,
 * and writes nothing; a
 * folder without the arms' list exits 1 saying so; a bad arm, too few arms or
 * shapes and a bad ROUNDS exit 2 with one line. Skips, saying so, without
 * python3. */
#include <unistd.h>

#include "kbtest.h"

static void ab_summary(void **state)
{
    (void)state;
    kbt_need_python("tests/gpu/ab_rounds.sh");
    assert_int_equal(kbt_sh("python3 tests/fixtures/make_ab_rounds.py %s/mem && "
                            "bash tests/gpu/ab_rounds.sh --summary %s/mem >%s/out 2>&1",
                            kbt_dir, kbt_dir, kbt_dir),
                     0);
    char *t = kbt_read("out");
    kbt_has(t, "| dtype | shape | figure | KBENCH_X=0 | KBENCH_X=1+KBENCH_Y=2 | peer: naive |\n");
    /* 32768000 bytes in 120.5 and 20.75 us against 4153.6 GB/s */
    kbt_has(t, "| fp32 | rows=4096,cols=1000 | % copy | 6.5, 6.5 | 38.0, 37.3 | 6.5, 6.5 |\n");
    kbt_has(t, "fp32 rows=4096,cols=1000: over KBENCH_X=0, the means of the rounds: "
               "KBENCH_X=1+KBENCH_Y=2: 5.750; peer: naive: 1.000\n");
    free(t);
    assert_int_equal(kbt_sh("python3 tests/fixtures/make_ab_rounds.py %s/cmp compute && "
                            "bash tests/gpu/ab_rounds.sh --summary %s/cmp >%s/out 2>&1",
                            kbt_dir, kbt_dir, kbt_dir),
                     0);
    t = kbt_read("out");
    kbt_has(t, "| fp32 | rows=4096,cols=1000 | flop/SM cycle | 1000, 1000 | 5807, 5694 | 1000, "
               "1000 |\n");
    free(t);
    assert_int_equal(kbt_sh("mkdir -p %s/empty && bash tests/gpu/ab_rounds.sh --summary %s/empty "
                            ">%s/out 2>&1",
                            kbt_dir, kbt_dir, kbt_dir),
                     1);
    t = kbt_read("out");
    kbt_has(t, "no ab-arms.txt in");
    free(t);
}

static void ab_commands(void **state)
{
    (void)state;
    assert_int_equal(kbt_sh("KBENCH_BIN=kb DRY_RUN=1 PEER=cudnn DTYPE=bf16 OUT=%s/dry bash "
                            "tests/gpu/ab_rounds.sh "
                            "attention flash-wgmma KBENCH_A=10 'KBENCH_A=14+KBENCH_B=1' - -- "
                            "batch=1,heads=2,seq=900,dim=128 >%s/dry.txt 2>&1",
                            kbt_dir, kbt_dir),
                     0);
    char *t = kbt_read("dry.txt");
    kbt_has(t, "KBENCH_A=10 kb run attention --variants flash-wgmma --shape "
               "batch=1,heads=2,seq=900,dim=128 --warmup 1 --metrics none --db ");
    kbt_has(t, "KBENCH_A=14 KBENCH_B=1 kb run attention --variants flash-wgmma ");
    kbt_has(t, "\nkb run attention --variants flash-wgmma --shape");
    kbt_has(t, "/dry/ab-2-2.json\n");
    kbt_has(t, "kb run attention --variants cudnn --shape batch=1,heads=2,seq=900,"
               "dim=128 --warmup 1 --metrics none --db ");
    kbt_has(t, "--dtype bf16 --json ");
    kbt_has(t, "/dry/ab-2-peer.json\n");
    assert_int_equal(kbt_count(t, "\n"), 8); /* 2 rounds x (3 arms + the peer) */
    free(t);
    char path[128];
    snprintf(path, sizeof path, "%s/dry", kbt_dir);
    assert_int_not_equal(access(path, F_OK), 0); /* nothing written */

    /* EXTRA_ARGS reach every run, after the script's own options */
    assert_int_equal(kbt_sh("KBENCH_BIN=kb DRY_RUN=1 EXTRA_ARGS='--no-check  --timeout 2' ROUNDS=1 "
                            "OUT=%s/dry bash tests/gpu/ab_rounds.sh layernorm fused - A=1 -- "
                            "rows=7,cols=40000 >%s/extra.txt 2>&1",
                            kbt_dir, kbt_dir),
                     0);
    t = kbt_read("extra.txt");
    assert_int_equal(kbt_count(t, "/dry/ab.db --no-check --timeout 2 --json "), 2);
    free(t);

    static const struct {
        const char *env, *args, *want;
    } bad[] = {
        {"", "attention flash-wgmma X -- s", "arm 'X': NAME=VALUE[+NAME=VALUE...] or -"},
        {"", "attention flash-wgmma A=1 -- s", "usage: tests/gpu/ab_rounds.sh OP VARIANT ARM..."},
        {"", "attention flash-wgmma A=1 B=2", "usage: tests/gpu/ab_rounds.sh OP VARIANT ARM..."},
        {"ROUNDS=0", "attention flash-wgmma A=1 B=2 -- s", "ROUNDS '0': a count of 1 or more"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(kbt_sh("%s DRY_RUN=1 bash tests/gpu/ab_rounds.sh %s >%s/out 2>&1",
                                bad[i].env, bad[i].args, kbt_dir),
                         2);
        t = kbt_read("out");
        kbt_has(t, bad[i].want);
        assert_int_equal(kbt_count(t, "\n"), 1);
        free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ab_summary, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(ab_commands, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests_name("ab_rounds", tests, NULL, NULL);
}
