/* test_nvml.c - the decisions taken from what the driver's management library
 * says (profiler/nvml.h), on made-up readings: which processes are another's,
 * which clock reasons are throttling, what a result is flagged, what
 * --exclusive refuses; the driver version in the kernel module's text; and
 * that a machine without the library gets "unavailable", not an error. */
#include <unistd.h>

#include "kbtest.h"
#include "profiler/nvml.h"

/* A reading that lists pids[0 .. n). */
static kb_gpu_state procs(const long *pids, int n)
{
    kb_gpu_state s;
    memset(&s, 0, sizeof s);
    s.procs_known = 1;
    s.nprocs = s.npids = n;
    for (int i = 0; i < n; i++)
        s.pids[i] = pids[i];
    return s;
}

static void others_are_not_ours(void **state)
{
    (void)state;
    const long ours[2] = {100, 101};
    long first = -1;
    kb_gpu_state s = procs(NULL, 0);
    assert_int_equal(kb_gpu_others(&s, ours, 2, &first), 0);
    assert_int_equal(first, 0);
    s = procs((const long[]){101}, 1); /* our own child lingering */
    assert_int_equal(kb_gpu_others(&s, ours, 2, &first), 0);
    s = procs((const long[]){101, 7777, 8888}, 3);
    assert_int_equal(kb_gpu_others(&s, ours, 2, &first), 2);
    assert_int_equal(first, 7777);
    /* more processes than were read: the unread are others, but for ours */
    s = procs((const long[]){101}, 1);
    s.nprocs = 4;
    assert_int_equal(kb_gpu_others(&s, ours, 2, &first), 2);
    s = procs(NULL, 0);
    s.nprocs = 1;
    assert_int_equal(kb_gpu_others(&s, ours, 1, &first), 0);
    assert_int_equal(kb_gpu_others(&s, ours, 0, &first), 1);
}

static void throttle_reasons_by_name(void **state)
{
    (void)state;
    char buf[96];
    kb_throttle_reasons_str(0x1 | 0x2 | 0x10 | 0x100, buf, sizeof buf); /* idle, app clocks, ... */
    assert_string_equal(buf, "");
    kb_throttle_reasons_str(KB_THROTTLE_SW_POWER_CAP | KB_THROTTLE_HW_THERMAL | 0x1, buf,
                            sizeof buf);
    assert_string_equal(buf, "sw power cap, hw thermal slowdown");
}

static void watch_flags_the_result(void **state)
{
    (void)state;
    const long ours[2] = {100, 101};
    kb_result r;
    kb_gpu_watch w;

    /* idle before and after, a power cap while it ran */
    memset(&w, 0, sizeof w);
    kb_gpu_state s = procs(NULL, 0);
    kb_gpu_watch_procs(&w, &s, ours, 1);
    s.reasons_known = 1;
    s.reasons = KB_THROTTLE_SW_POWER_CAP | 0x1;
    kb_gpu_watch_reasons(&w, &s);
    s = procs((const long[]){101}, 1);
    kb_gpu_watch_procs(&w, &s, ours, 2);
    kb_result_init(&r);
    r.throttled = 1;
    snprintf(r.throttle_reason, sizeof r.throttle_reason, "sm clock under 90%% of peak");
    kb_gpu_watch_apply(&w, &r);
    assert_int_equal(r.flags, 0);
    assert_true(r.throttled);
    assert_string_equal(r.throttle_reason, "sm clock under 90% of peak, sw power cap");

    /* another process after the case: shared */
    s = procs((const long[]){4242}, 1);
    kb_gpu_watch_procs(&w, &s, ours, 2);
    kb_result_init(&r);
    kb_gpu_watch_apply(&w, &r);
    assert_int_equal(r.flags, KB_FLAG_GPU_SHARED);
    assert_string_equal(r.throttle_reason, "sw power cap");
    assert_int_equal(w.other_pid, 4242);

    /* no library, or a reading the driver refused: unchecked, not shared */
    memset(&w, 0, sizeof w);
    kb_gpu_watch_procs(&w, NULL, ours, 1);
    kb_gpu_watch_reasons(&w, NULL);
    kb_result_init(&r);
    kb_gpu_watch_apply(&w, &r);
    assert_int_equal(r.flags, KB_FLAG_GPU_UNCHECKED);
    assert_false(r.throttled);
    memset(&w, 0, sizeof w);
    s = procs(NULL, 0);
    kb_gpu_watch_procs(&w, &s, ours, 1);
    s.procs_known = 0;
    kb_gpu_watch_procs(&w, &s, ours, 1);
    kb_result_init(&r);
    kb_gpu_watch_apply(&w, &r);
    assert_int_equal(r.flags, KB_FLAG_GPU_UNCHECKED);
}

static void driver_version_text(void **state)
{
    (void)state;
    char v[32];
    assert_int_equal(kb_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                     "580.95.05  Release Build  (dvs-builder@U22)  Thu Oct 30\n"
                                     "GCC version:  gcc version 13.3.0\n",
                                     v, sizeof v),
                     0);
    assert_string_equal(v, "580.95.05");
    /* only the first line: the compiler's version is not the driver's */
    assert_int_equal(kb_nvrm_version("NVRM version: unknown\nGCC version: 13.3.0\n", v, sizeof v),
                     -1);
    assert_string_equal(v, "");
    assert_int_equal(kb_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  "
                                     "Thu Oct 30 2025\n",
                                     v, sizeof v),
                     0);
    assert_string_equal(v, "580.159");
    assert_int_equal(kb_nvrm_version("nothing here", v, sizeof v), -1);
    assert_int_equal(kb_nvrm_version("Kernel Module  580.159", v, 4), -1);
}

/* Without the driver's library (this test machine, or one like it) the
 * checks are unavailable: said, not an error; --exclusive refuses. */
static void unavailable_is_said(void **state)
{
    (void)state;
    char why[256] = "";
    kb_err e = {{0}};
    kb_nvml *n = kb_nvml_open("GPU-00000000-0000-0000-0000-000000000000", why, sizeof why);
    if (n) {
        /* a machine with a driver knows no GPU of that uuid */
        kb_nvml_close(n);
        fail_msg("NVML found a GPU with a zero uuid");
    }
    assert_true(why[0] != '\0');
    kb_nvml_close(NULL);
    assert_int_equal(kb_gpu_exclusive(NULL, 0, &e), KB_EENV);
    assert_string_equal(e.msg, "--exclusive cannot tell whether another process uses GPU 0");
    char v[32];
    kb_driver_version(v, sizeof v); /* whatever this machine says, without failing */
    assert_true(strlen(v) < sizeof v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(others_are_not_ours),    cmocka_unit_test(throttle_reasons_by_name),
        cmocka_unit_test(watch_flags_the_result), cmocka_unit_test(driver_version_text),
        cmocka_unit_test(unavailable_is_said),
    };
    return cmocka_run_group_tests_name("gpu checks", tests, NULL, NULL);
}
