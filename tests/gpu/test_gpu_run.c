/* test_gpu_run.c - `kbench run` ($KBENCH_BIN, default build/kbench) as a
 * whole on the GPU: a run killed with SIGKILL leaves no process behind (its
 * case's child dies with it); a run while another process computes on the GPU
 * flags every case gpu_shared, and --exclusive refuses it (exit 3); on an idle
 * GPU, --exclusive runs and nothing is flagged. Every ok result carries its
 * batch time; --warmup lengthens a case's warm-up as asked. Skips, saying so,
 * without a GPU (this process never touches CUDA itself: it forks the process
 * that keeps the GPU busy). */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "kbtest.h"
#include "store/json.h"

/* tests/gpu/busy_kernel.cu */
int kbt_gpu_busy(double seconds, int ready_fd);

static char tmp[64];
static int gpu;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Reaps every child that has ended (this process is the subreaper of the
 * orphans of the kbench it starts). */
static void reap_all(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

/* Reads /proc/PID/stat: its parent, process group and state. 0, or -1 when
 * the process is gone. */
static int proc_stat(long pid, long *ppid, long *pgrp, char *state)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    if (!p || sscanf(p + 1, " %c %ld %ld", state, ppid, pgrp) != 3)
        return -1;
    return 0;
}

/* The live (not zombie) processes whose parent is ppid (ppid > 0) or whose
 * process group is pgrp (pgrp > 0); *first is one of them. */
static int count_procs(long ppid, long pgrp, long *first)
{
    int n = 0;
    DIR *d = opendir("/proc");
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d));) {
        char *end = NULL;
        long pid = strtol(de->d_name, &end, 10);
        long pp = 0, pg = 0;
        char st = '?';
        if (*end || pid <= 0 || proc_stat(pid, &pp, &pg, &st) != 0 || st == 'Z')
            continue;
        if ((ppid > 0 && pp == ppid) || (pgrp > 0 && pg == pgrp)) {
            if (!n++)
                *first = pid;
        }
    }
    closedir(d);
    return n;
}

/* Starts `kbench ARGS...` in a process group of its own; returns its pid. */
static pid_t start_kbench(char *const argv[])
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid);
    return pid;
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/kbgpu.XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    gpu = kbt_sh("%s devices >/dev/null 2>&1", kbt_bin()) == 0;
    if (!gpu) {
        fprintf(stderr, "no GPU (kbench devices failed): skipping the run tests\n");
        return 0;
    }
    const char *tools = getenv("KBENCH_TEST_NO_COUNTERS");
    if (tools && *tools) {
        /* `make memcheck`: these tests are about processes, not memory */
        fprintf(stderr, "under a tools client: skipping the run tests\n");
        gpu = 0;
        return 0;
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return -1;
    /* calibrated once, so that the runs below measure cases only */
    return kbt_sh("%s calibrate --db %s/k.db >%s/calibrate.log 2>&1", kbt_bin(), tmp, tmp) == 0 ? 0
                                                                                          : -1;
}

static int teardown(void **state)
{
    (void)state;
    return kbt_sh("rm -rf %s", tmp) == 0 ? 0 : -1;
}

/* kill -9 of kbench mid-case: after 2 s no process of its group is left. */
static void killed_run_leaves_no_process(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    char db[128];
    snprintf(db, sizeof db, "%s/k.db", tmp);
    /* one case that samples for a minute: it never reaches the noise target */
    char *argv[] = {(char *)kbt_bin(), "run", "softmax", "--variants", "naive", "--shape",
                    "rows=4096,cols=4096", "--metrics", "none", "--min-samples", "100000",
                    "--max-samples", "100000", "--max-noise", "0", "--max-error", "0",
                    "--timeout", "60", "--db", db, NULL};
    pid_t kb = start_kbench(argv);
    long child = 0;
    /* the device query's child comes and goes; the case's child stays */
    int seen = 0;
    for (int i = 0; i < 900 && seen < 50; i++) {
        seen = count_procs(kb, 0, &child) > 0 ? seen + 1 : 0;
        sleep_s(0.1);
    }
    assert_int_equal(seen, 50); /* a child for 5 s in a row: the case's */
    assert_int_equal(kill(kb, SIGKILL), 0);
    assert_int_equal(waitpid(kb, NULL, 0), kb);
    sleep_s(2.0);
    reap_all();
    long left = 0;
    const int n = count_procs(0, kb, &left);
    if (n > 0) {
        kill(-kb, SIGKILL);
        sleep_s(0.5);
        reap_all();
        fail_msg("%d process(es) of the killed run left after 2 s (pid %ld, the case's child "
                 "was %ld)", n, left, child);
    }
}

/* Runs kbench with args (a shell fragment) writing its JSON report to
 * tmp/name.json, and loads the report into *run when it exits 0 or 1. Returns
 * the exit code. */
static int run_report(const char *args, const char *name, kb_run *run)
{
    kb_err e = {{0}};
    char path[128];
    snprintf(path, sizeof path, "%s/%s.json", tmp, name);
    int rc = kbt_sh("%s run softmax %s --db %s/k.db --json %s 2>%s/%s.err", kbt_bin(), args, tmp, path,
                    tmp, name);
    kb_run_init(run);
    if (rc == 0 || rc == 1)
        assert_int_equal(kb_json_load_run(path, run, &e), KB_OK);
    return rc;
}

/* Whether the run's GPU checks were available (no result flagged unchecked). */
static int checked(const kb_run *run)
{
    for (size_t i = 0; i < run->nresults; i++)
        if (run->results[i].flags & KB_FLAG_GPU_UNCHECKED)
            return 0;
    return 1;
}

static const char cases[] = "--variants naive,fused,online --shape rows=4096,cols=4096 "
                            "--shape rows=2048,cols=1024 --metrics none --timeout 1";

static void shared_gpu_is_flagged_and_exclusive_refuses(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    kb_run run;
    int fds[2];
    char c = 0;
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t busy = fork();
    assert_true(busy >= 0);
    if (busy == 0) {
        close(fds[0]);
        _exit(kbt_gpu_busy(300.0, fds[1]));
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &c, 1), 1); /* its first kernel ran */
    close(fds[0]);

    int rc = run_report(cases, "shared", &run);
    assert_int_equal(rc, 0);
    assert_true(run.nresults == 6);
    if (!checked(&run)) {
        kill(busy, SIGKILL);
        waitpid(busy, NULL, 0);
        kb_run_release(&run);
        skip(); /* no NVML on this machine: the checks are unavailable (said) */
    }
    for (size_t i = 0; i < run.nresults; i++)
        if (!(run.results[i].flags & KB_FLAG_GPU_SHARED))
            fail_msg("%s %s was not flagged gpu_shared", run.results[i].variant,
                     run.results[i].dtype);
    kb_run_release(&run);

    rc = run_report("--variants fused --exclusive --metrics none --timeout 1", "exclusive", &run);
    assert_int_equal(rc, 3);
    char path[128];
    snprintf(path, sizeof path, "%s/exclusive.err", tmp);
    char *err = kbt_slurp(path);
    assert_non_null(err);
    kbt_has(err, "is using GPU 0; --exclusive measures only on an idle GPU");
    free(err);

    kill(busy, SIGKILL);
    assert_int_equal(waitpid(busy, NULL, 0), busy);
    sleep_s(1.0);

    /* idle again: nothing is shared (our own child is not "another
     * process"), every ok result has its batch time, its batches sized from
     * its cold median to last a millisecond; --exclusive runs */
    rc = run_report(cases, "idle", &run);
    assert_int_equal(rc, 0);
    for (size_t i = 0; i < run.nresults; i++) {
        const kb_result *r = &run.results[i];
        assert_int_equal(r->flags & KB_FLAG_GPU_SHARED, 0);
        if (r->status == KB_R_OK) {
            const double n = ceil(1000.0 / r->median_us);
            assert_true(r->batch_us > 0);
            assert_int_equal(r->batch_launches, n < 1 ? 1 : (int)n);
        }
    }
    /* 2048 x 1024 fp32 (16 MiB in and out) fits in the L2 twice over */
    assert_true(run.results[3].flags & KB_FLAG_L2_RESIDENT);
    assert_false(run.results[0].flags & KB_FLAG_L2_RESIDENT);
    kb_run_release(&run);
    rc = run_report("--variants fused --exclusive --metrics none --timeout 1", "idle_excl", &run);
    assert_int_equal(rc, 0);
    kb_run_release(&run);
}

/* --warmup S: the case warms up for at least S seconds (the run lasts that
 * much longer than the same run without it), and it is still measured. The
 * report of the run without it records the KBENCH_* switches it was started
 * with, KBENCH_DB (the store's path) left out. */
static void warmup_lasts_as_asked(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    kb_run run;
    const char *one = "--variants fused --shape rows=2048,cols=1024 --metrics none --timeout 1";
    char args[256];
    assert_int_equal(setenv("KBENCH_TEST_SWITCH", "on", 1), 0);
    assert_int_equal(setenv("KBENCH_DB", "/nonexistent/k.db", 1), 0); /* --db wins */
    double t0 = kbt_now_s();
    assert_int_equal(run_report(one, "warm_default", &run), 0);
    const double plain_s = kbt_now_s() - t0;
    assert_int_equal(unsetenv("KBENCH_TEST_SWITCH"), 0);
    assert_int_equal(unsetenv("KBENCH_DB"), 0);
    kbt_has(run.env, "KBENCH_TEST_SWITCH=on");
    assert_null(strstr(run.env, "KBENCH_DB"));
    kb_run_release(&run);
    snprintf(args, sizeof args, "%s --warmup 3", one);
    t0 = kbt_now_s();
    assert_int_equal(run_report(args, "warm_3", &run), 0);
    const double warm_s = kbt_now_s() - t0;
    assert_int_equal(run.nresults, 1);
    assert_int_equal(run.results[0].status, KB_R_OK);
    assert_true(run.results[0].median_us > 0);
    kb_run_release(&run);
    if (warm_s - plain_s < 2.5)
        fail_msg("--warmup 3 took %.2f s, without it %.2f s", warm_s, plain_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(killed_run_leaves_no_process),
        cmocka_unit_test(shared_gpu_is_flagged_and_exclusive_refuses),
        cmocka_unit_test(warmup_lasts_as_asked),
    };
    return cmocka_run_group_tests_name("gpu run", tests, setup, teardown);
}
