/* test_hardening.c - kbench against hostile input and odd places: output paths
 * (-o to a FIFO, a symbolic link, a 0600 file, beside an existing PATH.tmp,
 * '-' for stdout, an empty path), generated option strings and mutated JSON
 * reports (each a clean exit 0, 2 or 3 with one line on stderr, bounded in
 * time), and the width of the text tables. $KBENCH_BIN names the binary
 * (default build/kbench). */
#include <sys/stat.h>
#include <unistd.h>

#define KBT_CLI
#include "kbtest.h"

static const char softmax_json[] = "results/h200/softmax.json";

/* -o writes the report where the user said, however the path is made. */
static void output_paths(void **state)
{
    (void)state;
    char args[512], p[200], t[256];
    struct stat sb;
    /* '-' is standard output */
    assert_int_equal(kb("report results/h200/softmax.json --format md -o -"), 0);
    kbt_has(out_text, "| variant |");
    /* an empty path is a usage error, named so */
    assert_int_equal(kb("report results/h200/softmax.json -o ''"), 2);
    assert_err("empty path for option '-o'");
    assert_int_equal(kb("compare results/h200/softmax.json results/h200/softmax.json -o ''"), 2);
    assert_err("empty path for option '-o'");
    /* a 0600 file stays 0600; an existing PATH.tmp is left alone */
    snprintf(p, sizeof p, "%s/private.md", dir);
    snprintf(t, sizeof t, "%s.tmp", p);
    assert_int_equal(kbt_sh("umask 077; echo secret > '%s'; echo mine > '%s'", p, t), 0);
    snprintf(args, sizeof args, "report %s --format md -o %s", softmax_json, p);
    assert_int_equal(kb(args), 0);
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    char *got = kbt_slurp(p);
    kbt_has(got, "| variant |");
    free(got);
    got = kbt_slurp(t);
    assert_string_equal(got, "mine\n");
    free(got);
    /* a symbolic link: its target is written, the link kept */
    snprintf(p, sizeof p, "%s/link.html", dir);
    assert_int_equal(kbt_sh("cd '%s' && echo old > target.html && ln -s target.html link.html",
                            dir), 0);
    snprintf(args, sizeof args, "report %s --format html -o %s", softmax_json, p);
    assert_int_equal(kb(args), 0);
    assert_int_equal(lstat(p, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    snprintf(t, sizeof t, "%s/target.html", dir);
    got = kbt_slurp(t);
    kbt_has(got, "<!DOCTYPE html>");
    free(got);
    /* a FIFO is written in place (as /dev/null would be) and stays a FIFO */
    snprintf(p, sizeof p, "%s/fifo", dir);
    snprintf(t, sizeof t, "%s/from-fifo", dir);
    assert_int_equal(kbt_sh("mkfifo '%s' && (timeout 20 cat '%s' > '%s' &)", p, p, t), 0);
    snprintf(args, sizeof args, "report %s --format csv -o %s", softmax_json, p);
    assert_int_equal(kb(args), 0);
    assert_int_equal(kbt_sh("for i in $(seq 50); do [ -s '%s' ] && break; sleep 0.1; done", t), 0);
    assert_int_equal(lstat(p, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    got = kbt_slurp(t);
    kbt_has(got, "variant");
    free(got);
    /* a message names the user's path, not a temporary one (checked before
     * anything is read) */
    snprintf(args, sizeof args, "report %s -o %s/no/such/out.txt", softmax_json, dir);
    assert_int_equal(kb(args), 2);
    snprintf(args, sizeof args,
             "cannot write -o '%s/no/such/out.txt': folder '%s/no/such' does not exist", dir, dir);
    assert_err(args);
}

/* The widest line of text, in display columns (one per UTF-8 character). */
/* The widest line of t in display columns (bytes: every byte counted, as a
 * byte-counting tool such as mawk's length() sees it). */
static size_t widest_by(const char *t, int bytes)
{
    size_t w = 0, most = 0;
    for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
        if (*p == '\n') {
            most = w > most ? w : most;
            w = 0;
        } else if (bytes || (*p & 0xC0) != 0x80) {
            w++;
        }
    }
    return w > most ? w : most;
}

static size_t widest(const char *t)
{
    return widest_by(t, 0);
}

/* Strings from a report reach every output made safe: no escape sequence or
 * line break on a terminal (text, --runs, --kernels, error messages), no raw
 * HTML, split cell or broken list in markdown, no formula in CSV. */
static void hostile_strings_made_safe(void **state)
{
    (void)state;
    char args[512], evil[256];
    snprintf(evil, sizeof evil, "%s/evil.json", dir);
    /* the tag clears the screen, the device name is a formula with a line
     * break, a variant holds markup and a pipe */
    assert_int_equal(kbt_sh("sed -e 's/\"tag\":\\t\"h200\"/\"tag\":\\t\"\\\\u001b[2Jgotcha\"/' "
                            "-e 's/\"name\":\\t\"NVIDIA H200\"/\"name\":\\t\"=cmd|calc\\\\nH200\"/' "
                            "-e 's/\"variant\":\\t\"naive\"/\"variant\":\\t\"<b>na|ive<\\/b>\"/' "
                            "%s > %s",
                            softmax_json, evil),
                     0);
    static const char *const forms[] = {"", "--format md", "--format csv", "--kernels",
                                        "--kernels --format md"};
    for (size_t i = 0; i < KB_COUNT(forms); i++) {
        snprintf(args, sizeof args, "report %s %s", evil, forms[i]);
        assert_int_equal(kb(args), 0);
        assert_null(strchr(out_text, '\x1b'));
        assert_null(strstr(out_text, "cmd|calc\nH200"));
        if (i == 1 || i == 4) {
            assert_null(strstr(out_text, "<b>"));
            kbt_has(out_text, "=cmd\\|calc\\nH200");
        }
    }
    snprintf(args, sizeof args, "report %s --format csv", evil);
    assert_int_equal(kb(args), 0);
    kbt_has(out_text, ",'=cmd|calc\\nH200,");
    snprintf(args, sizeof args, "report %s", evil);
    assert_int_equal(kb(args), 0);
    kbt_has(out_text, "tag       \\e[2Jgotcha\n");
    /* --runs of a store holding it */
    snprintf(args, sizeof args, "import %s", evil);
    assert_int_equal(kb(args), 0);
    assert_int_equal(kb("report --runs"), 0);
    assert_null(strchr(out_text, '\x1b'));
    kbt_has(out_text, "\\e[2Jgotcha");
    /* an error message quoting a bad value stays one line */
    assert_int_equal(kb("run softmax --variants \"$(printf 'fu\\033[2Jsed\\nx')\""), 2);
    kbt_has(err_text, "'fu\\e[2Jsed\\nx'");
    assert_null(strchr(err_text, '\x1b'));
    assert_int_equal(kbt_count(err_text, "\n"), 1);
}

/* Options: empty lists and paths are usage errors naming the option as typed,
 * an unknown short option is named (not the operand beside it), a value with
 * a line break is shown escaped on one line. */
static void option_errors(void **state)
{
    (void)state;
    static const struct {
        const char *args, *msg;
    } cases[] = {
        {"run softmax --variants ''", "empty list for option '--variants'"},
        {"run softmax --variants ,", "empty item in the list of option '--variants': ','"},
        {"run softmax --shape ,", "empty item in the list of option '--shape': ','"},
        {"run softmax --shape=rows=4,,cols=8",
         "empty item in the list of option '--shape': 'rows=4,,cols=8'"},
        {"run softmax --dtype=", "empty list for option '--dtype'"},
        {"run softmax --json ''", "empty path for option '--json'"},
        {"run softmax --db ''", "empty path for option '--db'"},
        {"report --db ''", "empty path for option '--db'"},
        {"report results/h200/softmax.json --format ''", "empty value for option '--format'"},
        {"run softmax -abc", "unknown option '-a' for run"},
        {"run softmax --metrics \"$(printf 'co\\nre')\"", "unknown metric set 'co\\nre' (none, core, sol, "
                                             "stalls, full)"},
    };
    for (size_t i = 0; i < KB_COUNT(cases); i++) {
        assert_int_equal(kb(cases[i].args), 2);
        assert_err(cases[i].msg);
    }
    /* nothing was created by any of them */
    assert_int_equal(kbt_sh("[ ! -e '%s/default.db' ]", dir), 0);
}

/* Importing a run already in the store says so and stores nothing; --force
 * stores it again; a failed stdout after storing is a warning, not a failure. */
static void import_once(void **state)
{
    (void)state;
    char *doc = kbt_slurp("results/h200/softmax.json");
    const size_t n = kbt_count(doc, "\"variant\":"); /* the report's results */
    free(doc);
    char want[128];
    snprintf(want, sizeof want, "imported results/h200/softmax.json as run 1 (%zu results)\n", n);
    assert_int_equal(kb("import results/h200/softmax.json"), 0);
    assert_string_equal(out_text, want);
    assert_int_equal(kb("import results/h200/softmax.json"), 0);
    assert_string_equal(out_text, "already stored: results/h200/softmax.json is run 1 (nothing "
                                  "imported; --force stores it again)\n");
    assert_int_equal(kb("import --force results/h200/softmax.json"), 0);
    snprintf(want, sizeof want, "as run 2 (%zu results)", n);
    kbt_has(out_text, want);
    assert_int_equal(kbt_sh("KBENCH_DB=%s/default.db %s import results/h200/layernorm.json "
                            ">/dev/full 2>%s",
                            dir, kbt_bin(), err_path),
                     0);
    free(err_text);
    err_text = kbt_slurp(err_path);
    assert_err("warning: writing to standard output failed (the reports were stored)");
    assert_int_equal(kb("report --runs"), 0);
    assert_int_equal(kbt_count(out_text, "\n"), 4); /* the heading and three runs */
}

/* latest is the run that started last, whatever the order of import. */
static void latest_started_last(void **state)
{
    (void)state;
    /* a copy of the softmax report dated a day after the attention report,
     * imported first */
    assert_int_equal(kbt_sh("sed -E 's/\"started\":[[:space:]]*\"[^\"]*\"/\"started\": \"2030-01-02T00:00:00Z\"/' "
                            "results/h200/softmax.json > %s/newer.json",
                            dir),
                     0);
    assert_int_equal(kbt_sh("sed -E 's/\"started\":[[:space:]]*\"[^\"]*\"/\"started\": \"2030-01-01T00:00:00Z\"/' "
                            "results/h200/attention.json > %s/older.json",
                            dir),
                     0);
    char args[600];
    snprintf(args, sizeof args, "import %s/newer.json %s/older.json", dir, dir);
    assert_int_equal(kb(args), 0);
    assert_int_equal(kb("report latest"), 0);
    kbt_has(out_text, "softmax · fp32");
    assert_null(strstr(out_text, "attention · "));
    assert_int_equal(kb("report -h"), 0);
    kbt_has(out_text, "that started last");
}

/* The messages and help a new user meets first. */
static void first_messages(void **state)
{
    (void)state;
    assert_int_equal(kb("help run"), 0);
    kbt_has(out_text, "usage: kbench run OP|all");
    assert_int_equal(kb("run -h"), 0);
    assert_null(strstr(out_text, "%%"));
    assert_int_equal(kb("help"), 0);
    kbt_has(out_text, "json, csv, html)");
    assert_int_equal(kb("help nosuch"), 2);
    assert_err("unknown command 'nosuch' (see 'kbench help')");
    /* list: every variant's dtypes in one column, one-pass-variance too */
    assert_int_equal(kb("list layernorm"), 0);
    kbt_has(out_text, "\n  naive             fp32,fp16,bf16  ");
    kbt_has(out_text, "\n  one-pass-variance fp32,fp16,bf16  ");
    assert_true(widest(out_text) <= 100);
}

/* The committed reports and their comparisons fit a 100-column terminal;
 * --wide gives every column back. */
static void text_fits_100_columns(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        "report results/h200/attention.json",
        "report results/h200/softmax.json",
        "report results/h200/layernorm.json",
        "compare results/h200/softmax.json results/h200/softmax.json",
        "compare results/h200/attention.json results/h200/attention.json",
        "compare results/h200/layernorm.json results/h200/layernorm.json",
        "report results/h200/matmul.json",
        "compare results/h200/matmul.json results/h200/matmul.json",
        "report tests/fixtures/report_sweep.json",
    };
    for (size_t i = 0; i < KB_COUNT(cmds); i++) {
        assert_int_equal(kb(cmds[i]), 0);
        if (widest(out_text) > 100)
            fail_msg("'kbench %s' is %zu columns wide", cmds[i], widest(out_text));
        /* also counted in bytes: "µs", "±" and "·" are two each */
        if (widest_by(out_text, 1) > 100)
            fail_msg("'kbench %s' is %zu bytes wide", cmds[i], widest_by(out_text, 1));
    }
    assert_int_equal(kb("report results/h200/attention.json --wide"), 0);
    kbt_has(out_text, "kernels  regs  spill  extra mem  DRAM GB/s");
    kbt_has(out_text, "command   build/kbench run --variants all --dtype bf16 --shape "
                      "batch=4,heads=16,seq=4096,dim=128 --shape");
    assert_true(widest(out_text) > 100);
}

/* make run and make test install what is missing (.ci/deps): as a user who
 * is not root, and with a compiler that finds no header, it names the
 * packages and the one command to run, and fails; with all of them found it
 * says nothing. */
static void deps_say_what_to_install(void **state)
{
    (void)state;
    assert_int_equal(kbt_sh("mkdir -p %s/bin && printf '#!/bin/sh\\nexit 1\\n' > %s/bin/cc && "
                            "printf '#!/bin/sh\\necho 1000\\n' > %s/bin/id && chmod +x %s/bin/*",
                            dir, dir, dir, dir),
                     0);
    assert_int_equal(kbt_sh("PATH=%s/bin:$PATH bash .ci/deps check /usr/local/cuda >%s 2>%s", dir,
                            out_path, err_path),
                     1);
    free(err_text);
    err_text = kbt_slurp(err_path);
    kbt_has(err_text, "kbench: missing libc6-dev libcjson-dev libsqlite3-dev libcmocka-dev");
    kbt_has(err_text, "install them with:\n  sudo apt-get update && sudo apt-get install -y "
                      "libc6-dev libcjson-dev libsqlite3-dev libcmocka-dev");
    /* nothing missing: silent (a compiler that finds every header and a
     * toolkit with nvcc, so that the machine's own packages do not matter) */
    assert_int_equal(kbt_sh("mkdir -p %s/ok/bin %s/cuda/bin && printf '#!/bin/sh\\nexit 0\\n' > "
                            "%s/ok/bin/cc && cp %s/ok/bin/cc %s/cuda/bin/nvcc && chmod +x "
                            "%s/ok/bin/cc %s/cuda/bin/nvcc",
                            dir, dir, dir, dir, dir, dir, dir),
                     0);
    assert_int_equal(kbt_sh("PATH=%s/ok/bin:$PATH bash .ci/deps build %s/cuda >%s 2>&1", dir, dir,
                            out_path),
                     0);
    free(out_text);
    out_text = kbt_slurp(out_path);
    assert_string_equal(out_text, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(output_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_strings_made_safe, setup, teardown),
        cmocka_unit_test_setup_teardown(option_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(import_once, setup, teardown),
        cmocka_unit_test_setup_teardown(latest_started_last, setup, teardown),
        cmocka_unit_test_setup_teardown(first_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(text_fits_100_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(deps_say_what_to_install, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
