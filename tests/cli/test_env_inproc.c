/* test_env_inproc.c - the switches a run records (kb_cli_join_env): only the
 * KBENCH_* variables, KBENCH_DB left out, sorted by name whatever the
 * environment's order; none gives ""; entries that do not fit are dropped
 * whole, marked "..." where there is room, never cut in the middle. */
#include "cli/cli.h"
#include "kbtest.h"

static void picks_sorts_and_leaves_out_the_store(void **state)
{
    (void)state;
    char *const envp[] = {"PATH=/usr/bin",
                          "KBENCH_LAYERNORM_SROW2_PP=0",
                          "KBENCH_DB=/tmp/k.db",
                          "XKBENCH_A=1",
                          "KBENCH_CLUSTER_SIZE=8",
                          "kbench_lower=1",
                          "KBENCH_DBX=2",
                          NULL};
    char buf[256];
    kb_cli_join_env(envp, buf, sizeof buf);
    assert_string_equal(buf, "KBENCH_CLUSTER_SIZE=8 KBENCH_DBX=2 KBENCH_LAYERNORM_SROW2_PP=0");
}

static void none_gives_empty(void **state)
{
    (void)state;
    char *const envp[] = {"HOME=/root", "KBENCH_DB=k.db", NULL};
    char buf[16] = "stale";
    kb_cli_join_env(envp, buf, sizeof buf);
    assert_string_equal(buf, "");
    char *const empty[] = {NULL};
    kb_cli_join_env(empty, buf, sizeof buf);
    assert_string_equal(buf, "");
    kb_cli_join_env(NULL, buf, sizeof buf);
    assert_string_equal(buf, "");
}

static void what_does_not_fit_goes_whole(void **state)
{
    (void)state;
    char *const envp[] = {"KBENCH_B=22", "KBENCH_A=1", "KBENCH_C=333", NULL};
    char buf[64];
    /* "KBENCH_A=1 KBENCH_B=22" is 22 bytes: room for it and " ..." in 27 */
    kb_cli_join_env(envp, buf, 27);
    assert_string_equal(buf, "KBENCH_A=1 KBENCH_B=22 ...");
    /* 23 bytes hold the two entries but not the mark */
    kb_cli_join_env(envp, buf, 23);
    assert_string_equal(buf, "KBENCH_A=1 KBENCH_B=22");
    /* the first entry alone does not fit: nothing but the mark */
    kb_cli_join_env(envp, buf, 8);
    assert_string_equal(buf, "...");
    kb_cli_join_env(envp, buf, 4);
    assert_string_equal(buf, "...");
    kb_cli_join_env(envp, buf, 3);
    assert_string_equal(buf, "");
    kb_cli_join_env(envp, buf, sizeof buf);
    assert_string_equal(buf, "KBENCH_A=1 KBENCH_B=22 KBENCH_C=333");
    buf[0] = 'x';
    kb_cli_join_env(envp, buf, 0); /* no room at all: buf untouched */
    assert_int_equal(buf[0], 'x');
}

/* More KBENCH_* entries than it sorts (256): the rest are marked too. */
static void too_many_are_marked(void **state)
{
    (void)state;
    static char names[300][16];
    static char *envp[301];
    static char buf[8192];
    for (int i = 0; i < 300; i++) {
        snprintf(names[i], sizeof names[i], "KBENCH_%03d=1", i);
        envp[i] = names[i];
    }
    envp[300] = NULL;
    kb_cli_join_env(envp, buf, sizeof buf);
    assert_int_equal(strncmp(buf, "KBENCH_000=1 KBENCH_001=1 ", 26), 0);
    kbt_has(buf, "KBENCH_255=1 ...");
    assert_null(strstr(buf, "KBENCH_256"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(picks_sorts_and_leaves_out_the_store),
        cmocka_unit_test(none_gives_empty),
        cmocka_unit_test(what_does_not_fit_goes_whole),
        cmocka_unit_test(too_many_are_marked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
