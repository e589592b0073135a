/* kbtest.h - what every kbench test includes: cmocka, file and folder helpers,
 * and (with KBT_CLI defined) the harness of the tests that run the kbench binary. */
#ifndef KB_TEST_H
#define KB_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "results/result.h"

/* Reads a whole file into a malloc'd NUL-terminated string (caller frees), or NULL. */
static inline char *kbt_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
        if (cap - n < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* A fresh empty temporary directory (static buffer; call once per test). */
static inline const char *kbt_tmpdir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/kbtest.XXXXXX");
    return mkdtemp(dir);
}

/* How many times `what` occurs in text (overlapping ones included). */
static inline size_t kbt_count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* Fails the test, showing text, unless text contains want. */
static inline void kbt_has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("missing '%s' in:\n%s", want, text);
}

/* Runs a shell command (printf-style); returns its exit code, 128 when it did
 * not exit normally. */
static inline int kbt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int kbt_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The kbench binary the tests run: $KBENCH_BIN, default build/kbench. */
static inline const char *kbt_bin(void)
{
    const char *b = getenv("KBENCH_BIN");
    return b && *b ? b : "build/kbench";
}

/* Whether python3 is on the path (the tests of the Python scripts skip,
 * saying so, without it). */
static inline int kbt_have_python(void)
{
    return kbt_sh("command -v python3 >/dev/null 2>&1") == 0;
}

/* Skips the calling test, saying so, unless python3 is installed; what
 * names the script the test is for. */
static inline void kbt_need_python(const char *what)
{
    if (!kbt_have_python()) {
        print_message("python3 is not installed: skipping %s's test\n", what);
        skip();
    }
}

/* Seconds on the monotonic clock. */
static inline double kbt_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The folder of a test that writes files: made fresh by kbt_dir_setup and
 * removed with all it holds by kbt_dir_teardown (cmocka's setup and teardown). */
static char kbt_dir[64] __attribute__((unused));

static inline int kbt_dir_setup(void **state)
{
    (void)state;
    const char *d = kbt_tmpdir();
    if (!d)
        return -1;
    snprintf(kbt_dir, sizeof kbt_dir, "%s", d);
    return 0;
}

static inline int kbt_dir_teardown(void **state)
{
    (void)state;
    return kbt_sh("rm -rf %s", kbt_dir) == 0 ? 0 : -1;
}

/* The text of the file the format names in kbt_dir (the caller frees); fails
 * the test when it cannot be read. */
static inline char *kbt_read(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *kbt_read(const char *fmt, ...)
{
    char name[96], path[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "%s/%s", kbt_dir, name);
    char *t = kbt_slurp(path);
    assert_non_null(t);
    return t;
}

/* Fails the test unless the file name (in kbt_dir) holds exactly one line
 * and it contains want: a message, not a traceback. */
static inline void kbt_one_line(const char *name, const char *want)
{
    char *t = kbt_read("%s", name);
    kbt_has(t, want);
    assert_int_equal(kbt_count(t, "\n"), 1);
    free(t);
}

/* A script's bad input: its argument (a file in kbt_dir when in_dir) and the
 * one line it must say. */
typedef struct kbt_bad {
    const char *arg;
    int in_dir;
    const char *want;
} kbt_bad;

/* Runs `cmd ARG` for each of the n bad inputs: exit `code` (any but 0 when
 * code is 0) and one line on stderr containing want, each. */
static inline void kbt_bad_runs(const char *cmd, int code, const kbt_bad *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char arg[128];
        if (bad[i].in_dir)
            snprintf(arg, sizeof arg, "%s/%s", kbt_dir, bad[i].arg);
        else
            snprintf(arg, sizeof arg, "%s", bad[i].arg);
        const int rc = kbt_sh("%s %s >%s/out 2>%s/err", cmd, arg, kbt_dir, kbt_dir);
        if (code)
            assert_int_equal(rc, code);
        else
            assert_int_not_equal(rc, 0);
        kbt_one_line("err", bad[i].want);
    }
}

/* The same for `python3 script`, whose bad inputs exit 2. */
static inline void kbt_bad_inputs(const char *script, const kbt_bad *bad, size_t n)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "python3 %s", script);
    kbt_bad_runs(cmd, 2, bad, n);
}

/* Initialises r as case (op, variant, dtype) of a rows x cols matrix: axes
 * "rows" and "cols". */
static inline void kbt_case(kb_result *r, const char *op, const char *variant, const char *dtype,
                            int64_t rows, int64_t cols)
{
    kb_result_init(r);
    snprintf(r->op, sizeof r->op, "%s", op);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    snprintf(r->dtype, sizeof r->dtype, "%s", dtype);
    r->naxes = 2;
    snprintf(r->axis[0], sizeof r->axis[0], "rows");
    snprintf(r->axis[1], sizeof r->axis[1], "cols");
    r->shape[0] = rows;
    r->shape[1] = cols;
}

#ifdef KBT_CLI
/* The CLI harness (define KBT_CLI before including): each test gets a fresh
 * temporary folder `dir` (its default store is dir/default.db), kb() runs the
 * kbench binary ($KBENCH_BIN, default build/kbench) there, and out_text and
 * err_text hold what it printed. Use setup/teardown as the test's fixtures. */
#include "util/status.h"

static char out_path[128], err_path[128], dir[64];
static char *out_text, *err_text;

/* Runs kbench with args (a shell fragment) and returns its exit code. */
static inline int kb(const char *args)
{
    char cmd[2048];
    free(out_text);
    free(err_text);
    snprintf(cmd, sizeof cmd, "KBENCH_DB=%s/default.db %s %s >%s 2>%s </dev/null", dir, kbt_bin(),
             args, out_path, err_path);
    int st = system(cmd);
    out_text = kbt_slurp(out_path);
    err_text = kbt_slurp(err_path);
    assert_non_null(out_text);
    assert_non_null(err_text);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Asserts stderr is exactly "kbench: <msg>\n". */
static inline void assert_err(const char *msg)
{
    char want[1024];
    snprintf(want, sizeof want, "kbench: %s\n", msg);
    assert_string_equal(err_text, want);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s", kbt_tmpdir());
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    snprintf(err_path, sizeof err_path, "%s/err", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    free(out_text);
    free(err_text);
    out_text = err_text = NULL;
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}
#endif

#endif
