/* test_isolate.c - child-process isolation (profiler/isolate) and the result
 * model's summaries (results/result), with no GPU. */
#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "kbtest.h"
#include "profiler/isolate.h"
#include "results/result.h"

static int child_answers(void *ctx, int fd)
{
    const char *msg = ctx;
    if (write(fd, msg, strlen(msg)) < 0)
        return 9;
    return 0;
}

static int child_big_answer(void *ctx, int fd)
{
    (void)ctx;
    char buf[1000];
    memset(buf, 'x', sizeof buf);
    for (int i = 0; i < 1000; i++)
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            return 9;
    return 0;
}

static int child_crashes(void *ctx, int fd)
{
    (void)ctx;
    (void)fd;
    raise(SIGSEGV);
    return 0;
}

static int child_hangs(void *ctx, int fd)
{
    (void)ctx;
    (void)fd;
    for (;;)
        pause();
    return 0;
}

static int child_exits_3(void *ctx, int fd)
{
    (void)ctx;
    (void)fd;
    return 3;
}

/* Writes its pid to the test's pipe (ctx), then hangs. */
static int child_reports_and_hangs(void *ctx, int fd)
{
    (void)fd;
    const pid_t me = getpid();
    if (write(*(const int *)ctx, &me, sizeof me) != (ssize_t)sizeof me)
        return 9;
    for (;;)
        pause();
    return 0;
}

/* Answers whether it sees its parent alive. */
static int child_checks_parent(void *ctx, int fd)
{
    (void)ctx;
    const char c = kb_isolate_parent_alive() ? 'y' : 'n';
    return write(fd, &c, 1) == 1 ? 0 : 9;
}

/* Sleeps 0.7 s. */
static int child_sleeps(void *ctx, int fd)
{
    (void)ctx;
    (void)fd;
    struct timespec ts = {0, 700000000};
    nanosleep(&ts, NULL);
    return 0;
}

static void count_ticks(void *ctx, long pid)
{
    long *seen = ctx;
    seen[0]++;
    seen[1] = pid;
}

/* A kbench killed with SIGKILL takes its case's child with it: the test is
 * the subreaper of its descendants, so the orphan comes back to it, and it
 * must have died of SIGKILL within 2 s. */
static void child_dies_with_parent(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    assert_int_equal(pipe(fds), 0);
    const pid_t middle = fork();
    assert_true(middle >= 0);
    if (middle == 0) {
        char *out = NULL;
        size_t len = 0;
        kb_child_end end;
        kb_err e = {{0}};
        close(fds[0]);
        (void)kb_isolate(child_reports_and_hangs, &fds[1], 60, &out, &len, &end, &e);
        _exit(0);
    }
    close(fds[1]);
    pid_t grandchild = 0;
    assert_int_equal(read(fds[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
    close(fds[0]);
    assert_int_equal(kill(middle, SIGKILL), 0);
    assert_int_equal(waitpid(middle, NULL, 0), middle);
    int status = 0, reaped = 0;
    for (int i = 0; i < 200 && !reaped; i++) {
        reaped = waitpid(grandchild, &status, WNOHANG) == grandchild;
        if (!reaped)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    if (!reaped) {
        kill(grandchild, SIGKILL);
        waitpid(grandchild, NULL, 0);
        fail_msg("the case's child outlived its parent by 2 s");
    }
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
}

static void parent_alive_and_ticks(void **state)
{
    (void)state;
    char *out = NULL;
    size_t len = 0;
    kb_child_end end;
    kb_err e = {{0}};
    long seen[2] = {0, 0};
    assert_true(kb_isolate_parent_alive()); /* not a child of kb_isolate */
    assert_int_equal(kb_isolate(child_checks_parent, NULL, 10, &out, &len, &end, &e), KB_OK);
    assert_string_equal(out, "y");
    assert_true(end.pid > 0);
    free(out);
    assert_int_equal(kb_isolate_watched(child_sleeps, NULL, 10, count_ticks, seen, &out, &len,
                                        &end, &e),
                     KB_OK);
    assert_true(seen[0] >= 2);
    assert_int_equal(seen[1], end.pid);
    free(out);
}

static void answer_is_collected(void **state)
{
    (void)state;
    char *out = NULL;
    size_t len = 0;
    kb_child_end end;
    kb_err e = {{0}};
    assert_int_equal(kb_isolate(child_answers, "{\"a\":1}", 10, &out, &len, &end, &e), KB_OK);
    assert_string_equal(out, "{\"a\":1}");
    assert_int_equal(len, 7);
    assert_true(end.exited);
    assert_int_equal(end.code, 0);
    free(out);
    assert_int_equal(kb_isolate(child_big_answer, NULL, 10, &out, &len, &end, &e), KB_OK);
    assert_int_equal(len, 1000000);
    free(out);
}

static void crash_is_reported(void **state)
{
    (void)state;
    char *out = NULL, how[128];
    size_t len = 0;
    kb_child_end end;
    kb_err e = {{0}};
    assert_int_equal(kb_isolate(child_crashes, NULL, 10, &out, &len, &end, &e), KB_OK);
    assert_true(end.signaled);
    assert_int_equal(end.sig, SIGSEGV);
    assert_int_equal(len, 0);
    kb_child_end_describe(&end, 10, how, sizeof how);
    assert_non_null(strstr(how, "killed by signal 11"));
    free(out);
}

static void hang_is_killed(void **state)
{
    (void)state;
    char *out = NULL, how[128];
    size_t len = 0;
    kb_child_end end;
    kb_err e = {{0}};
    assert_int_equal(kb_isolate(child_hangs, NULL, 0.3, &out, &len, &end, &e), KB_OK);
    assert_true(end.timed_out);
    kb_child_end_describe(&end, 0.3, how, sizeof how);
    assert_non_null(strstr(how, "timed out"));
    free(out);
}

static void exit_code_is_kept(void **state)
{
    (void)state;
    char *out = NULL;
    size_t len = 0;
    kb_child_end end;
    kb_err e = {{0}};
    assert_int_equal(kb_isolate(child_exits_3, NULL, 10, &out, &len, &end, &e), KB_OK);
    assert_true(end.exited);
    assert_int_equal(end.code, 3);
    free(out);
}

static void summary_of_samples(void **state)
{
    (void)state;
    kb_result r;
    kb_result_init(&r);
    double s[] = {10, 12, 11, 13, 100};
    r.samples_us = malloc(sizeof s);
    memcpy(r.samples_us, s, sizeof s);
    r.nsamples = 5;
    kb_result_summarise(&r);
    assert_true(r.median_us == 12);
    assert_true(r.min_us == 10);
    assert_true(r.max_us == 100);
    double mean = 146.0 / 5, var = 0;
    for (int i = 0; i < 5; i++)
        var += (s[i] - mean) * (s[i] - mean);
    assert_true(fabs(r.stdrel - sqrt(var / 4) / mean) < 1e-12);
    r.bytes = 2e9;
    r.flops = 1e9;
    kb_result_derive(&r, &(kb_device){.copy_gbps = 4000});
    assert_true(fabs(r.gbps - 2e9 / 12e3) < 1e-6);
    assert_true(fabs(r.pct_peak - 100 * r.gbps / 4000) < 1e-9);
    assert_true(fabs(r.tflops - 1e9 / 12e6) < 1e-9);
    kb_result_derive(&r, &(kb_device){.copy_gbps = NAN});
    assert_true(isnan(r.pct_peak));
    kb_result_release(&r);
    kb_result_release(&r); /* twice is harmless */
}

static void run_takes_ownership(void **state)
{
    (void)state;
    kb_run run;
    kb_run_init(&run);
    for (int i = 0; i < 20; i++) {
        kb_result r;
        kb_result_init(&r);
        r.samples_us = calloc(3, sizeof(double));
        r.nsamples = 3;
        assert_int_equal(kb_run_add(&run, &r), 0);
        assert_null(r.samples_us);
    }
    assert_int_equal(run.nresults, 20);
    kb_run_release(&run);
    assert_int_equal(run.nresults, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answer_is_collected), cmocka_unit_test(crash_is_reported),
        cmocka_unit_test(hang_is_killed),      cmocka_unit_test(exit_code_is_kept),
        cmocka_unit_test(summary_of_samples),  cmocka_unit_test(run_takes_ownership),
        cmocka_unit_test(child_dies_with_parent), cmocka_unit_test(parent_alive_and_ticks),
    };
    return cmocka_run_group_tests_name("isolate and result", tests, NULL, NULL);
}
