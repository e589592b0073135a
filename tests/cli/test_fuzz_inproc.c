/* test_fuzz_inproc.c - generated hostile input, thousands of cases in this
 * process (bounded to seconds): command lines for run, report, compare and
 * import, each a clean exit 0, 2 or 3 with at most one safe line on stderr and
 * nothing created; and JSON reports mutated field by field (extreme numbers,
 * wrong types, control characters, missing and huge values), each refused
 * with one line or read, stored, written in every format and compared with
 * itself without a fault. Run under AddressSanitizer and UBSan by `make asan`.
 * The generator is seeded, so a failure names a case that can be replayed;
 * KBENCH_FUZZ_SEED picks another sequence. */
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "kbtest.h"
#include "report/html.h"
#include "report/writers.h"
#include "results/compare.h"
#include "store/json.h"
#include "store/store.h"

enum { CMD_CASES = 3000, JSON_CASES = 3000 };

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t below(size_t n)
{
    return (size_t)(rnd() % n);
}

static void seed_rng(void)
{
    const char *s = getenv("KBENCH_FUZZ_SEED");
    rng_state = s && *s ? strtoull(s, NULL, 10) : 20261201;
}

static char tmp[64], home[4096];

/* ---- command lines -------------------------------------------------------------- */

static const char *const cmd_options[] = {
    "--variants", "--shape", "--dtype", "--min-samples", "--max-samples", "--max-noise",
    "--max-error", "--timeout", "--warmup", "--no-check", "--seed", "--device", "--tag", "--json", "--db",
    "--metrics", "-o", "--output", "--format", "--threshold", "--runs", "--kernels", "--force",
    "-abc", "--bogus", "--shape=", "--json=", "--variants=,", "-", "--", "-x", "-oo", "--var",
    "--form",
};

static const char *const cmd_values[] = {
    "", ",", ",,", "a,,b", "naive", "naive,fused", "naive,naive", "rows=4,cols=8", "rows=",
    "=4", "rows=-1", "rows=99999999999999999999", "1e400", "nan", "inf", "-5", "0", "0x10",
    "fp32,fp32", "bf16", "x\ny", "\x1b[2J", "\xff\xfe", "%s%n%x", "core", "all", "text",
    "html", "md", "99", "2.5", " ", "\t", "latest", "-1",
};

/* Runs cmd(argc, argv) with stdout to /dev/null and stderr to a file; returns
 * the exit code, *err what it wrote on stderr (caller frees). */
static int call(int (*cmd)(int, char **), int argc, char **argv, char **err)
{
    char path[128];
    snprintf(path, sizeof path, "%s.err", tmp);
    fflush(stdout);
    fflush(stderr);
    int save_out = dup(1), save_err = dup(2);
    int devnull = open("/dev/null", O_WRONLY);
    int ef = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(save_out >= 0 && save_err >= 0 && devnull >= 0 && ef >= 0);
    dup2(devnull, 1);
    dup2(ef, 2);
    int rc = cmd(argc, argv);
    fflush(stdout);
    fflush(stderr);
    clearerr(stdout);
    dup2(save_out, 1);
    dup2(save_err, 2);
    close(save_out);
    close(save_err);
    close(devnull);
    close(ef);
    *err = kbt_slurp(path);
    unlink(path);
    assert_non_null(*err);
    return rc;
}

/* stderr is empty, or lines "kbench: ..." of printable text: one, or for
 * import one per bad file and a summary (lines > 1). */
static void assert_one_safe_line(const char *err, int rc, char **argv, int argc, int lines)
{
    size_t n = strlen(err);
    int bad = 0;
    if (rc == 0)
        bad = n != 0;
    else
        bad = n < 10 || err[n - 1] != '\n' || kbt_count(err, "\n") < 1 ||
              kbt_count(err, "\n") > (size_t)lines ||
              kbt_count(err, "kbench: ") != kbt_count(err, "\n") ||
              strncmp(err, "kbench: ", 8) != 0;
    for (size_t i = 0; i + 1 < n && !bad; i++)
        bad = ((unsigned char)err[i] < 0x20 && err[i] != '\n') || err[i] == 0x7f;
    if (bad || (rc != 0 && rc != 2 && rc != 3)) {
        fprintf(stderr, "command line:");
        for (int i = 0; i < argc; i++)
            fprintf(stderr, " [%s]", argv[i]);
        fail_msg("exit %d, stderr '%s'", rc, err);
    }
}

static void command_lines(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"run", cmd_run}, {"report", cmd_report}, {"compare", cmd_compare},
                {"import", cmd_import}};
    static const char *const operands[] = {"nosuchop", "missing.json", "latest", "3", "x",
                                           "/nonexistent/r.json"};
    char db[128];
    seed_rng();
    snprintf(db, sizeof db, "%s/no/store.db", tmp);
    setenv("KBENCH_DB", db, 1);
    assert_int_equal(chdir(tmp), 0); /* nothing may be written here */
    alarm(120);
    for (int t = 0; t < CMD_CASES; t++) {
        char *argv[16];
        int argc = 0;
        const size_t c = below(KB_COUNT(cmds));
        argv[argc++] = (char *)cmds[c].name;
        const int ntok = (int)below(7);
        /* run always gets an operator that does not exist, so no case ever runs
         * on a GPU: every option is still parsed first */
        const int op_at = cmds[c].fn == cmd_run ? 1 + (int)below((size_t)ntok + 1) : -1;
        for (int k = 0; k <= ntok && argc < 14; k++) {
            if (k + 1 == op_at) {
                argv[argc++] = "nosuchop";
                continue;
            }
            if (k == ntok)
                break;
            switch (below(3)) {
            case 0:
                argv[argc++] = (char *)cmd_options[below(KB_COUNT(cmd_options))];
                break;
            case 1:
                argv[argc++] = (char *)cmd_values[below(KB_COUNT(cmd_values))];
                break;
            default:
                argv[argc++] = cmds[c].fn == cmd_run
                                   ? (char *)cmd_values[below(KB_COUNT(cmd_values))]
                                   : (char *)operands[1 + below(KB_COUNT(operands) - 1)];
            }
        }
        if (op_at == ntok + 1 && argc < 15)
            argv[argc++] = "nosuchop";
        argv[argc] = NULL;
        char *err = NULL;
        int rc = call(cmds[c].fn, argc, argv, &err);
        assert_one_safe_line(err, rc, argv, argc, cmds[c].fn == cmd_import ? argc : 1);
        free(err);
    }
    alarm(0);
    assert_int_equal(chdir(home), 0);
    unsetenv("KBENCH_DB");
    /* nothing was created: no store, no report, no folder */
    assert_int_equal(kbt_sh("[ -z \"$(ls -A '%s')\" ]", tmp), 0);
}

/* ---- JSON reports ----------------------------------------------------------------- */

/* Every node of the tree, depth first, into v[0 .. *n). */
static void collect(cJSON *node, cJSON **v, size_t *n, size_t cap)
{
    for (cJSON *c = node->child; c; c = c->next) {
        if (*n < cap)
            v[(*n)++] = c;
        collect(c, v, n, cap);
    }
}

static cJSON *hostile_value(void)
{
    static const double nums[] = {5e-324, -5e-324, 1e308, -1e308, DBL_MAX, 0.0, -0.0, -1.0,
                                  1e-300, 4294967296.0, 9.3e18, 1.8446744073709552e19, 0.5,
                                  2147483648.0, -2147483649.0, 1e15, 3.0};
    static const char *const strs[] = {"", "\x1b[31mred\x1b[0m", "a\nb", "=1+1", "<script>",
                                       "|x|", "\xff\xfe", "nan", "rows", "fp32", "ok",
                                       "compute", "memory", "softmax", "naive", "9.0", "x.y"};
    switch (below(7)) {
    case 0:
    case 1:
        return cJSON_CreateNumber(nums[below(KB_COUNT(nums))]);
    case 2:
        return cJSON_CreateString(strs[below(KB_COUNT(strs))]);
    case 3: {
        char big[5000];
        memset(big, 'A' + (int)below(26), sizeof big - 1);
        big[sizeof big - 1] = '\0';
        return cJSON_CreateString(big);
    }
    case 4:
        return cJSON_CreateNull();
    case 5:
        return cJSON_CreateArray();
    default:
        return below(2) ? cJSON_CreateObject() : cJSON_CreateBool((int)below(2));
    }
}

/* One to three mutations: a node replaced by a hostile value, deleted, or
 * an array element duplicated. */
static void mutate(cJSON *root)
{
    cJSON *nodes[4096];
    const int m = 1 + (int)below(3);
    for (int k = 0; k < m; k++) {
        size_t n = 0;
        collect(root, nodes, &n, KB_COUNT(nodes));
        if (n == 0)
            return;
        cJSON *victim = nodes[below(n)];
        const size_t how = below(10);
        cJSON *parent = NULL;
        for (size_t i = 0; i < n && !parent; i++)
            for (cJSON *c = nodes[i]->child; c && !parent; c = c->next)
                parent = c == victim ? nodes[i] : NULL;
        for (cJSON *c = root->child; c && !parent; c = c->next)
            parent = c == victim ? root : NULL;
        if (!parent)
            continue;
        if (how == 0) {
            cJSON_Delete(cJSON_DetachItemViaPointer(parent, victim));
        } else if (how == 1 && cJSON_IsArray(parent)) {
            cJSON_AddItemToArray(parent, cJSON_Duplicate(victim, 1));
        } else {
            (void)cJSON_ReplaceItemViaPointer(parent, victim, hostile_value());
        }
    }
}

/* Every writer of a run, into memory; each returns a status, none faults. */
static void write_everything(const kb_run *run)
{
    static kb_status (*const writers[])(FILE *, const kb_run *, kb_err *) = {
        kb_write_text,        kb_write_markdown,         kb_write_csv, kb_json_write_run,
        kb_html_write_run,    kb_write_kernels_text,     kb_write_kernels_markdown};
    for (size_t w = 0; w < KB_COUNT(writers); w++) {
        char *buf = NULL;
        size_t len = 0;
        kb_err e = {{0}};
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        kb_status st = writers[w](f, run, &e);
        fclose(f);
        assert_true(st == KB_OK || (st == KB_EENV && e.msg[0]));
        assert_true(len < 64u << 20);
        free(buf);
    }
    kb_compare c;
    kb_err e = {{0}};
    kb_status st = kb_compare_runs(run, "a", run, "a", 0.05, &c, &e);
    assert_true(st == KB_OK || st == KB_EUSAGE);
    if (st == KB_OK) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        (void)kb_html_write_compare(f, &c, &e);
        fclose(f);
        free(buf);
        kb_compare_release(&c);
    }
}

static void json_reports(void **state)
{
    (void)state;
    char *text = kbt_slurp("tests/fixtures/report_counters.json"), db[128];
    assert_non_null(text);
    cJSON *orig = cJSON_Parse(text);
    assert_non_null(orig);
    free(text);
    snprintf(db, sizeof db, "%s/fuzz.db", tmp);
    kb_store *s = NULL;
    kb_err e = {{0}};
    assert_int_equal(kb_store_open(db, 1, &s, &e), KB_OK);
    seed_rng();
    alarm(120);
    int read_ok = 0;
    for (int t = 0; t < JSON_CASES; t++) {
        cJSON *root = cJSON_Duplicate(orig, 1);
        assert_non_null(root);
        mutate(root);
        kb_run run;
        kb_err re = {{0}};
        kb_status st = kb_json_to_run(root, &run, &re);
        if (st != KB_OK) {
            assert_int_equal(st, KB_EUSAGE);
            assert_true(re.msg[0] != '\0');
            assert_null(strchr(re.msg, '\n'));
        } else {
            read_ok++;
            write_everything(&run);
            if (t % 16 == 0) { /* the store takes what the reader accepts */
                kb_err ie = {{0}};
                kb_status is = kb_store_import_run(s, &run, &ie);
                if (is != KB_OK)
                    fail_msg("case %d: a report the reader accepts is refused by the store: %s",
                             t, ie.msg);
            }
            kb_run_release(&run);
        }
        cJSON_Delete(root);
    }
    alarm(0);
    kb_store_close(s);
    cJSON_Delete(orig);
    /* the mutations hit both sides: reports refused and reports read */
    assert_true(read_ok > JSON_CASES / 20 && read_ok < JSON_CASES);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "%s", kbt_tmpdir());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    if (chdir(home) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    if (!getcwd(home, sizeof home))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(command_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(json_reports, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
