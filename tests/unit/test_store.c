/* test_store.c - the SQLite store: runs and results round-trip exactly (also
 * through import and back to the same JSON report), counters included (metric
 * set, passes, the reason they are missing, per-kernel metrics in order and
 * stalls largest first), refusals that leave the file byte-identical
 * (directory, text file, foreign SQLite, newer schema), migrations from every
 * older schema version (a version-1 store with data reads as "no counters", a
 * version-2 one as memory-bound with no extra memory and unknown compute peaks),
 * runs of dead processes marked interrupted, ceilings, and all-or-nothing
 * imports. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kbtest.h"
#include "store/json.h"
#include "store/store.h"

static char tmpdir[64];

/* ---- helpers -------------------------------------------------------------------- */

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

static void add_result(kb_run *run, const char *op, const char *variant, kb_rstatus status,
                       double median, size_t nsamples, int nkernels)
{
    kb_result r;
    kb_result_init(&r);
    snprintf(r.op, sizeof r.op, "%s", op);
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    snprintf(r.dtype, sizeof r.dtype, "bf16");
    r.naxes = 3;
    snprintf(r.axis[0], sizeof r.axis[0], "batch");
    snprintf(r.axis[1], sizeof r.axis[1], "seq");
    snprintf(r.axis[2], sizeof r.axis[2], "dim");
    r.shape[0] = 4;
    r.shape[1] = 1000;
    r.shape[2] = 4096;
    r.status = status;
    r.seed = status == KB_R_OK ? 18446744073709551557ull : 7;
    r.checked = 1;
    r.atol = 1e-2;
    r.rtol = 1.0 / 64.0;
    if (status == KB_R_FAILED) {
        snprintf(r.reason, sizeof r.reason, "child killed by signal 11 (segmentation fault)");
    } else {
        r.max_abs_err = 0.00390625 / 3.0;
        r.rel_l2_err = 1e-3 / 7.0;
        r.rows_checked = 257;
        r.samples_us = malloc(nsamples * sizeof *r.samples_us);
        assert_non_null(r.samples_us);
        for (size_t i = 0; i < nsamples; i++)
            r.samples_us[i] = median * (1.0 + 0.013 * cos((double)i * 1.7));
        r.nsamples = nsamples;
        kb_result_summarise(&r);
        r.samples_us[0] = NAN; /* a lost sample survives as NaN */
        r.sm_clock_mhz = 1755.5;
        r.throttled = 1;
        r.bytes = 3.0 * 4 * 1000 * 4096 * 2;
        r.flops = NAN;
        kb_result_derive(&r, &(kb_device){.copy_gbps = 4100.25});
        r.kernels = calloc((size_t)nkernels, sizeof *r.kernels);
        assert_true(nkernels == 0 || r.kernels);
        for (int k = 0; k < nkernels; k++) {
            kb_kernel *K = &r.kernels[k];
            snprintf(K->name, sizeof K->name, "void %s_k%d<__nv_bfloat16, 128>(...)", variant, k);
            K->grid[0] = 1000u + (unsigned)k;
            K->grid[1] = 4;
            K->grid[2] = 1;
            K->block[0] = 128;
            K->block[1] = 1;
            K->block[2] = 1;
            K->registers = 64 + k;
            K->static_smem = 49152;
            K->dynamic_smem = 65536 + k;
            K->local_bytes = k ? 16 : 0;
            K->blocks_per_sm = 2;
            K->occupancy = 0.25;
        }
        r.nkernels = nkernels;
    }
    assert_int_equal(kb_run_add(run, &r), 0);
}

static void set_value(kb_named_value *v, const char *name, double value)
{
    snprintf(v->name, sizeof v->name, "%s", name);
    v->value = value;
}

/* What the producer records for a result measured with --metrics stalls. */
static void add_counters(kb_result *r)
{
    snprintf(r->metric_set, sizeof r->metric_set, "stalls");
    r->passes = 3;
    r->dram_bytes = 1.0051 * r->bytes;
    r->excess_traffic = r->dram_bytes / r->bytes;
    r->achieved_occupancy = 23.7;
    r->theoretical_occupancy = 25.0;
    r->registers = 64;
    r->local_bytes = 0;
    snprintf(r->top_stalls, sizeof r->top_stalls, "long_sb 44%% mio_thr 21%%");
    kb_result_derive(r, &(kb_device){.copy_gbps = 4100.25});
    for (int i = 0; i < r->nkernels; i++) {
        kb_kernel *k = &r->kernels[i];
        snprintf(k->occ_limiter, sizeof k->occ_limiter, "%s", i ? "registers" : "shared memory");
        set_value(&k->metrics[0], "gpu__time_duration.sum", 97250.0 + i);
        set_value(&k->metrics[1], "dram__bytes_read.sum", 24612864.0 / 3.0);
        set_value(&k->metrics[2], "dram__bytes_write.sum", 8245248.0);
        set_value(&k->metrics[3], "sm__warps_active.avg.pct_of_peak_sustained_active", 23.7);
        set_value(&k->metrics[4], "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                  NAN);
        k->nmetrics = 5;
        set_value(&k->stalls[0], "long_scoreboard", 0.44);
        set_value(&k->stalls[1], "mio_throttle", 0.21);
        set_value(&k->stalls[2], "barrier", 0.2);
        set_value(&k->stalls[3], "math_pipe_throttle", 0.15000000000000002);
        k->nstalls = 4;
    }
}

static const char *const perm_reason =
    "counters not permitted (ERR_NVGPUCTRPERM): run as root, or load nvidia with "
    "NVreg_RestrictProfilingToAdminUsers=0";

static void build_run(kb_run *run, const char *tag)
{
    kb_run_init(run);
    snprintf(run->version, sizeof run->version, "0.1.0");
    snprintf(run->git, sizeof run->git, "abcdef012345");
    snprintf(run->argv, sizeof run->argv, "kbench run all --tag '%s'", tag);
    snprintf(run->env, sizeof run->env, "KBENCH_LAYERNORM_SROW2_PP=0 KBENCH_THREADS=2"); /* 7 */
    snprintf(run->started, sizeof run->started, "2025-07-04T08:30:00Z");
    snprintf(run->finished, sizeof run->finished, "2025-07-04T08:31:10Z");
    snprintf(run->state, sizeof run->state, "complete");
    snprintf(run->tag, sizeof run->tag, "%s", tag);
    kb_device *d = &run->dev;
    d->ordinal = 1;
    snprintf(d->name, sizeof d->name, "NVIDIA H200");
    snprintf(d->uuid, sizeof d->uuid, "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
    d->cc_major = 9;
    d->sms = 132;
    d->memory_bytes = 150754820096LL;
    d->l2_bytes = 62914560;
    d->sm_clock_mhz = 1980;
    d->mem_clock_mhz = 3201;
    d->mem_bus_bits = 6144;
    snprintf(d->driver, sizeof d->driver, "13.0");
    snprintf(d->runtime, sizeof d->runtime, "13.0");
    d->copy_gbps = 4100.25;
    d->mma_tflops = 781.0 + 1.0 / 3.0;
    d->fp32_tflops = NAN;
    d->copy_batch_gbps = 4230.5;
    snprintf(d->ceilings_at, sizeof d->ceilings_at, "2025-07-01T12:00:00Z");
    snprintf(d->ceilings_driver, sizeof d->ceilings_driver, "580.159");
    d->ceilings_sm_clock_mhz = 1755.25;
    d->ceilings_mem_clock_mhz = 3201;
    add_result(run, "attention", "naive", KB_R_OK, 1500.5, 41, 3);
    add_result(run, "attention", "flash-tiled", KB_R_OK, 97.25, 200, 1);
    add_result(run, "attention", "fused", KB_R_FAILED, NAN, 0, 0);
    add_result(run, "layernorm", "naive", KB_R_OK, 50.0, 10, 2);
    /* the batch time, flags and a throttle reason (schema version 4) */
    kb_result *ft = &run->results[1];
    ft->batch_us = 90.125;
    ft->batch_stdrel = 0.0025;
    ft->batch_launches = 11;
    ft->batch_sm_clock_mhz = 1590.5; /* schema version 6 */
    ft->flags = KB_FLAG_GPU_SHARED | KB_FLAG_L2_RESIDENT;
    ft->throttled = 1;
    snprintf(ft->throttle_reason, sizeof ft->throttle_reason, "sw power cap");
    run->results[3].flags = KB_FLAG_GPU_UNCHECKED;
    run->results[3].batch_us = 48.5;
    run->results[3].batch_launches = 21;
    kb_result_derive(&run->results[3], d);
    kb_run_case_speedups(run, &run->results[3]);
    add_counters(&run->results[1]);
    add_counters(&run->results[3]);
    kb_result *n = &run->results[0];
    snprintf(n->counters_reason, sizeof n->counters_reason, "%s", perm_reason);
    n->registers = 66;
    n->local_bytes = 16;
    n->theoretical_occupancy = 25.0;
    /* Attention is compute-bound; naive materialises the score matrix. */
    for (int i = 0; i < 3; i++) {
        kb_result *r = &run->results[i];
        snprintf(r->bound, sizeof r->bound, "compute");
        r->flops = 4.0 * 4 * 1000 * 1000 * 4096;
        kb_result_derive(r, d);
    }
    n->extra_bytes = 4.0 * 1000 * 1000 * 2 + 0.5;
    run->results[2].extra_bytes = NAN; /* failed before it was known */
    /* a result of a variant file of the user's own */
    kb_result *u = &run->results[3];
    snprintf(u->source_path, sizeof u->source_path, "/home/k/naive.cu");
    snprintf(u->source_sha256, sizeof u->source_sha256,
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static char *json_text(const kb_run *run)
{
    cJSON *root = kb_json_from_run(run);
    assert_non_null(root);
    char *s = cJSON_Print(root);
    assert_non_null(s);
    cJSON_Delete(root);
    return s;
}

/* The file's bytes (caller frees), or NULL when it does not exist. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, cap);
            assert_non_null(nb);
            buf = nb;
        }
        size_t got = fread(buf + *n, 1, cap - *n, f);
        if (got == 0)
            break;
        *n += got;
    }
    fclose(f);
    return buf;
}

static void exec_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("sql failed: %s", err);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static int user_version(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int v = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

/* Opening path (create or not) must fail with KB_EENV, with want in the
 * message, and leave the file exactly as it was. */
static void assert_refused(const char *path, int create, const char *want)
{
    size_t n0 = 0, n1 = 0;
    char *before = slurp(path, &n0);
    kb_store *s = (kb_store *)&n0;
    kb_err e = {{0}};
    assert_int_equal(kb_store_open(path, create, &s, &e), KB_EENV);
    assert_null(s);
    if (!strstr(e.msg, want))
        fail_msg("message '%s' lacks '%s'", e.msg, want);
    char *after = slurp(path, &n1);
    assert_int_equal(n0, n1);
    if (before)
        assert_memory_equal(before, after, n0);
    free(before);
    free(after);
}

static kb_store *open_store(const char *path, int create)
{
    kb_store *s = NULL;
    kb_err e = {{0}};
    if (kb_store_open(path, create, &s, &e) != KB_OK)
        fail_msg("open '%s': %s", path, e.msg);
    return s;
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_run_lifecycle(void **state)
{
    (void)state;
    char path[256], dir[256];
    kb_err e = {{0}};
    kb_run run, back;
    path_in(dir, sizeof dir, "results");
    path_in(path, sizeof path, "results/kbench.db");
    kb_store *s = open_store(path, 1); /* creates results/ */
    struct stat sb;
    assert_int_equal(stat(dir, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));

    build_run(&run, "lifecycle");
    snprintf(run.state, sizeof run.state, "whatever");
    assert_int_equal(kb_store_begin_run(s, &run, &e), KB_OK);
    assert_true(run.id > 0);
    assert_string_equal(run.state, "running");
    for (size_t i = 0; i < run.nresults; i++)
        assert_int_equal(kb_store_add_result(s, run.id, &run.results[i], &e), KB_OK);

    /* Each result is committed: another connection sees it while running. */
    kb_store *other = open_store(path, 0);
    assert_int_equal(kb_store_load_run(other, run.id, &back, &e), KB_OK);
    assert_string_equal(back.state, "running");
    assert_int_equal(back.nresults, run.nresults);
    kb_run_release(&back);
    kb_store_close(other);

    assert_int_equal(kb_store_finish_run(s, run.id, "complete", run.finished, &e), KB_OK);
    snprintf(run.state, sizeof run.state, "complete");
    assert_int_equal(kb_store_load_run(s, run.id, &back, &e), KB_OK);
    assert_int_equal(back.id, run.id);
    char *a = json_text(&run), *b = json_text(&back);
    assert_string_equal(a, b);
    assert_true(isnan(back.results[0].samples_us[0]));
    assert_true(isnan(back.results[3].flops));
    assert_true(back.results[0].seed == 18446744073709551557ull);
    const kb_result *fl = &back.results[1];
    assert_string_equal(fl->metric_set, "stalls");
    assert_int_equal(fl->passes, 3);
    assert_int_equal(fl->kernels[0].nmetrics, 5);
    assert_string_equal(fl->kernels[0].metrics[4].name,
                        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active");
    assert_true(isnan(fl->kernels[0].metrics[4].value));
    assert_string_equal(fl->kernels[0].stalls[3].name, "math_pipe_throttle");
    assert_string_equal(back.results[3].kernels[1].occ_limiter, "registers");
    assert_string_equal(back.results[0].counters_reason, perm_reason);
    assert_int_equal(back.results[0].local_bytes, 16);
    assert_int_equal(back.results[2].registers, -1); /* failed: unknown */
    assert_string_equal(back.results[0].bound, "compute");
    assert_string_equal(back.results[3].bound, "memory");
    assert_true(back.results[0].extra_bytes == 8000000.5);
    assert_true(isnan(back.results[2].extra_bytes));
    assert_true(back.results[3].extra_bytes == 0);
    assert_string_equal(back.results[3].source_path, "/home/k/naive.cu");
    assert_string_equal(back.results[3].source_sha256,
                        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_string_equal(back.results[0].source_sha256, "");
    assert_true(back.dev.mma_tflops == 781.0 + 1.0 / 3.0);
    assert_true(isnan(back.dev.fp32_tflops));
    assert_true(back.results[0].pct_peak == run.results[0].pct_peak);
    assert_true(isfinite(back.results[0].pct_peak));

    assert_int_equal(kb_store_finish_run(s, run.id, "done", "", &e), KB_EUSAGE);
    assert_int_equal(kb_store_finish_run(s, 999, "complete", "", &e), KB_EUSAGE);
    assert_int_equal(kb_store_add_result(s, 999, &run.results[0], &e), KB_EUSAGE);
    char want[512];
    snprintf(want, sizeof want, "no run 999 in '%s'", path);
    assert_string_equal(e.msg, want);

    cJSON_free(a);
    cJSON_free(b);
    kb_run_release(&back);
    kb_run_release(&run);
    kb_store_close(s);
}

static void test_import_export_same_report(void **state)
{
    (void)state;
    char path[256];
    kb_err e = {{0}};
    kb_run run, back, again;
    path_in(path, sizeof path, "import.db");
    kb_store *s = open_store(path, 1);

    /* report text -> run -> store -> run -> report text: identical. */
    build_run(&run, "import");
    char *a = json_text(&run);
    cJSON *root = cJSON_Parse(a);
    assert_int_equal(kb_json_to_run(root, &again, &e), KB_OK);
    cJSON_Delete(root);
    assert_int_equal(kb_store_import_run(s, &again, &e), KB_OK);
    assert_int_equal(again.id, 1);
    assert_int_equal(kb_store_load_run(s, 0, &back, &e), KB_OK);
    char *b = json_text(&back);
    assert_string_equal(a, b);

    /* latest = the highest id; missing ids are usage errors. */
    kb_run_release(&back);
    assert_int_equal(kb_store_import_run(s, &run, &e), KB_OK);
    assert_int_equal(run.id, 2);
    assert_int_equal(kb_store_load_run(s, 0, &back, &e), KB_OK);
    assert_int_equal(back.id, 2);
    kb_run_release(&back);
    assert_int_equal(kb_store_load_run(s, 42, &back, &e), KB_EUSAGE);
    char want[512];
    snprintf(want, sizeof want, "no run 42 in '%s'", path);
    assert_string_equal(e.msg, want);
    assert_int_equal(back.nresults, 0);

    /* The list of runs. */
    char *list = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&list, &len);
    assert_int_equal(kb_store_list_runs(s, f, &e), KB_OK);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(list, "    1  2025-07-04T08:30:00Z  complete     NVIDIA H200"));
    assert_non_null(strstr(list, "attention,layernorm"));
    assert_non_null(strstr(list, "import\n"));
    assert_non_null(strstr(list, "      4  "));
    free(list);

    cJSON_free(a);
    cJSON_free(b);
    kb_run_release(&again);
    kb_run_release(&run);
    kb_store_close(s);
}

static void test_empty_store(void **state)
{
    (void)state;
    char path[256], want[512];
    kb_err e = {{0}};
    kb_run back;
    path_in(path, sizeof path, "empty.db");
    kb_store *s = open_store(path, 1);
    assert_int_equal(kb_store_load_run(s, 0, &back, &e), KB_EUSAGE);
    snprintf(want, sizeof want,
             "no runs in '%s' (fill it with 'kbench run OP' on a GPU, or 'kbench import "
             "FILE.json')",
             path);
    assert_string_equal(e.msg, want);
    char *list = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&list, &len);
    assert_int_equal(kb_store_list_runs(s, f, &e), KB_OK);
    fclose(f);
    snprintf(want, sizeof want,
             "no runs in '%s' (fill it with 'kbench run OP' on a GPU, or 'kbench import "
             "FILE.json')\n",
             path);
    assert_string_equal(list, want);
    free(list);
    kb_store_close(s);
    assert_int_equal(user_version(path), KB_STORE_VERSION);
}

static void test_import_is_all_or_nothing(void **state)
{
    (void)state;
    char path[256];
    kb_err e = {{0}};
    kb_run run, back;
    path_in(path, sizeof path, "atomic.db");
    kb_store *s = open_store(path, 1);
    build_run(&run, "bad");
    run.results[2].status = (kb_rstatus)9; /* refused by the schema's CHECK */
    assert_int_equal(kb_store_import_run(s, &run, &e), KB_EENV);
    assert_non_null(strstr(e.msg, "sqlite error on '"));
    assert_non_null(strstr(e.msg, "CHECK constraint failed"));
    assert_non_null(strstr(e.msg, "store.c:"));
    assert_int_equal(run.id, 0);
    assert_int_equal(kb_store_load_run(s, 0, &back, &e), KB_EUSAGE); /* no run at all */
    kb_run_release(&run);
    kb_store_close(s);
}

static void test_missing_store_not_created(void **state)
{
    (void)state;
    char path[256], want[512];
    kb_store *s = NULL;
    kb_err e = {{0}};
    path_in(path, sizeof path, "nowhere/kbench.db");
    assert_int_equal(kb_store_open(path, 0, &s, &e), KB_EENV);
    snprintf(want, sizeof want,
             "no kbench store at '%s' (run 'kbench run' or 'kbench import' first)", path);
    assert_string_equal(e.msg, want);
    path_in(path, sizeof path, "nowhere");
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(kb_store_open("", 1, &s, &e), KB_EUSAGE);
    /* Only one missing folder level is created. */
    path_in(path, sizeof path, "two/levels/kbench.db");
    assert_int_equal(kb_store_open(path, 1, &s, &e), KB_EENV);
    assert_non_null(strstr(e.msg, "cannot create folder '"));
    assert_non_null(strstr(e.msg, "two/levels': No such file or directory"));
}

static void test_refuse_directory(void **state)
{
    (void)state;
    char path[256];
    path_in(path, sizeof path, "adir");
    assert_int_equal(mkdir(path, 0755), 0);
    assert_refused(path, 1, "is a directory, not a kbench store");
    assert_refused(path, 0, "is a directory, not a kbench store");
}

static void test_refuse_text_file(void **state)
{
    (void)state;
    char path[256];
    path_in(path, sizeof path, "notes.txt");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("these are my notes, not a database\n", f);
    fclose(f);
    assert_refused(path, 1, "is not a kbench store (not an SQLite database)");
    assert_refused(path, 0, "is not a kbench store (not an SQLite database)");

    /* A store cannot be made below a file. */
    char below[300];
    snprintf(below, sizeof below, "%s/kbench.db", path);
    assert_refused(below, 1, "kbench.db': Not a directory");

    /* An empty file is refused for reading (it may become a store when writing). */
    path_in(path, sizeof path, "zero.db");
    f = fopen(path, "w");
    fclose(f);
    assert_refused(path, 0, "is not a kbench store (an empty file)");
}

static void test_refuse_foreign_sqlite(void **state)
{
    (void)state;
    char path[256];
    path_in(path, sizeof path, "foreign.db");
    exec_sql(path, "CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT);"
                   "INSERT INTO photos(name) VALUES('cat.jpg');");
    assert_refused(path, 1, "is not a kbench store (an SQLite database of something else)");
    assert_refused(path, 0, "is not a kbench store (an SQLite database of something else)");
    /* Versioned, but with no kbench marker. */
    path_in(path, sizeof path, "foreign2.db");
    exec_sql(path, "CREATE TABLE kbench_meta(key TEXT, value TEXT);"
                   "INSERT INTO kbench_meta VALUES('format', 'other'); PRAGMA user_version = 1;");
    assert_refused(path, 1, "an SQLite database of something else");
}

static void test_refuse_newer_schema(void **state)
{
    (void)state;
    char path[256], want[512];
    path_in(path, sizeof path, "newer.db");
    exec_sql(path, "CREATE TABLE kbench_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                   "INSERT INTO kbench_meta VALUES('format', 'kbench');"
                   "CREATE TABLE runs_v99(id INTEGER PRIMARY KEY);"
                   "PRAGMA user_version = 99;");
    snprintf(want, sizeof want,
             "'%s' is not a kbench store I can read (schema version 99, newer than this kbench's %d)",
             path,
             KB_STORE_VERSION);
    assert_refused(path, 1, want);
    assert_refused(path, 0, want);
    assert_int_equal(user_version(path), 99);
}

/* A schema version below 0 is refused as unreadable, the file untouched (it
 * used to index the migration table out of bounds). */
static void test_refuse_negative_version(void **state)
{
    (void)state;
    static const char *const versions[] = {"-1", "-2", "-2147483648"};
    for (size_t i = 0; i < KB_COUNT(versions); i++) {
        char path[256], sql[512], want[512];
        snprintf(path, sizeof path, "%s/negative%zu.db", tmpdir, i);
        snprintf(sql, sizeof sql,
                 "CREATE TABLE kbench_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                 "INSERT INTO kbench_meta VALUES('format', 'kbench');"
                 "PRAGMA user_version = %s;",
                 versions[i]);
        exec_sql(path, sql);
        snprintf(want, sizeof want, "'%s' is not a kbench store I can read (schema version %s)",
                 path, versions[i]);
        assert_refused(path, 1, want);
        assert_refused(path, 0, want);
        assert_int_equal(user_version(path), (int)strtol(versions[i], NULL, 10));
    }
}

static int64_t count_runs(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    int64_t n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM runs", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return n;
}

/* Processes released together all create the same new store and import a run
 * into it: every one succeeds, and every run is there afterwards (a creator
 * that lost the race used to delete the store the winner had filled, or fail
 * making its folder). */
static void test_racing_creators(void **state)
{
    (void)state;
    enum { ROUNDS = 25, CREATORS = 8 };
    for (int round = 0; round < ROUNDS; round++) {
        char path[256];
        int gate[2];
        pid_t pids[CREATORS];
        /* Odd rounds race on the store alone, even ones on its folder too. */
        snprintf(path, sizeof path, "%s/race%d", tmpdir, round);
        if (round % 2)
            assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/race%d/kbench.db", tmpdir, round);
        assert_int_equal(pipe(gate), 0);
        for (int i = 0; i < CREATORS; i++) {
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] == 0) {
                char c;
                kb_err e = {{0}};
                kb_store *s = NULL;
                kb_run run;
                close(gate[1]);
                (void)!read(gate[0], &c, 1); /* returns when the parent closes the gate */
                build_run(&run, "race");
                kb_status st = kb_store_open(path, 1, &s, &e);
                if (st == KB_OK)
                    st = kb_store_import_run(s, &run, &e);
                if (st != KB_OK)
                    fprintf(stderr, "creator %d of round %d: %s\n", i, round, e.msg);
                kb_store_close(s);
                kb_run_release(&run);
                _exit(st == KB_OK ? 0 : 1);
            }
        }
        close(gate[0]);
        close(gate[1]);
        int failed = 0;
        for (int i = 0; i < CREATORS; i++) {
            int ws = 0;
            assert_int_equal(waitpid(pids[i], &ws, 0), pids[i]);
            failed += !WIFEXITED(ws) || WEXITSTATUS(ws) != 0;
        }
        assert_int_equal(failed, 0);
        assert_int_equal(count_runs(path), CREATORS);
    }
}

/* A store built at each older version opens, migrates to the current one and
 * keeps its data. */
static void test_migrations(void **state)
{
    (void)state;
    char path[256];
    kb_err e = {{0}};
    kb_run run, back;
    for (int v = 0; v < KB_STORE_VERSION; v++) {
        snprintf(path, sizeof path, "%s/v%d.db", tmpdir, v);
        assert_int_equal(kb_store_create_at_version(path, v, &e), KB_OK);
        assert_int_equal(user_version(path), v);
        kb_store *s = open_store(path, 1);
        assert_int_equal(user_version(path), KB_STORE_VERSION);
        build_run(&run, "migrated");
        assert_int_equal(kb_store_import_run(s, &run, &e), KB_OK);
        assert_int_equal(kb_store_load_run(s, run.id, &back, &e), KB_OK);
        assert_int_equal(back.nresults, run.nresults);
        char *a = json_text(&run), *b = json_text(&back); /* counters included */
        assert_string_equal(a, b);
        cJSON_free(a);
        cJSON_free(b);
        kb_run_release(&back);
        kb_run_release(&run);
        kb_store_close(s);
    }
    assert_int_equal(kb_store_create_at_version(path, 0, &e), KB_EUSAGE); /* exists */

    /* A version-1 store written with raw SQL, as version 1 laid it out. */
    path_in(path, sizeof path, "v1-data.db");
    assert_int_equal(kb_store_create_at_version(path, 1, &e), KB_OK);
    exec_sql(path,
             "INSERT INTO devices VALUES('GPU-1', 0, 'NVIDIA H100', 9, 0, 132, 85899345920,"
             " 52428800, 1980, 2619, 5120, '12.4', '12.4', '2024-01-01T00:00:00Z',"
             " '2024-01-01T00:00:00Z');"
             "INSERT INTO ceilings VALUES('GPU-1', 'copy_gbps', 3003.5, '2024-01-01T00:00:00Z');"
             "INSERT INTO runs(id, version, git, argv, started, finished, state, tag, pid, host,"
             " imported, device_uuid, dev_ordinal, dev_name, dev_cc_major, dev_cc_minor, dev_sms,"
             " dev_memory_bytes, dev_l2_bytes, dev_sm_clock_mhz, dev_mem_clock_mhz,"
             " dev_mem_bus_bits, dev_driver, dev_runtime, dev_copy_gbps) VALUES(5, '0.0.9', 'g',"
             " 'kbench run softmax', '2024-01-01T00:00:00Z', '2024-01-01T00:01:00Z', 'complete',"
             " 'old', NULL, NULL, 1, 'GPU-1', 0, 'NVIDIA H100', 9, 0, 132, 85899345920, 52428800,"
             " 1980, 2619, 5120, '12.4', '12.4', 3003.5);"
             "INSERT INTO results(id, run_id, seq, op, variant, dtype, shape, status, reason,"
             " seed, checked, max_abs_err, rel_l2_err, atol, rtol, rows_checked, median_us,"
             " min_us, max_us, stdrel, nsamples, samples_us, sm_clock_mhz, throttled, bytes,"
             " flops, gbps, tflops, pct_peak) VALUES(1, 5, 1, 'softmax', 'naive', 'fp32',"
             " '{\"rows\":8,\"cols\":3}', 'ok', '', 9, 1, 0.5, NULL, 1e-5, 1e-4, 8, 10.0, 9.0,"
             " 11.0, 0.1, 0, NULL, NULL, 0, 192, 120, 0.0192, NULL, NULL);"
             "INSERT INTO kernels VALUES(1, 0, 'k', 1, 1, 1, 32, 1, 1, 16, 0, 0, 0, 32, 1.0);");
    kb_store *s = open_store(path, 1);
    assert_int_equal(kb_store_load_run(s, 5, &back, &e), KB_OK);
    assert_string_equal(back.tag, "old");
    assert_string_equal(back.dev.name, "NVIDIA H100");
    assert_int_equal(back.nresults, 1);
    assert_int_equal(back.results[0].naxes, 2);
    assert_string_equal(back.results[0].axis[1], "cols");
    assert_true(isnan(back.results[0].rel_l2_err));
    assert_int_equal(back.results[0].nkernels, 1);
    /* Results of version 1 read as measured without counters. */
    const kb_result *r = &back.results[0];
    assert_string_equal(r->metric_set, "none");
    assert_int_equal(r->passes, 0);
    assert_string_equal(r->counters_reason, "");
    assert_true(isnan(r->dram_bytes) && isnan(r->excess_traffic) && isnan(r->dram_gbps));
    assert_true(isnan(r->achieved_occupancy) && isnan(r->theoretical_occupancy));
    assert_int_equal(r->registers, -1);
    assert_int_equal(r->local_bytes, -1);
    assert_string_equal(r->top_stalls, "");
    assert_string_equal(r->kernels[0].name, "k");
    assert_int_equal(r->kernels[0].registers, 16);
    assert_string_equal(r->kernels[0].occ_limiter, "");
    assert_int_equal(r->kernels[0].nmetrics, 0);
    assert_int_equal(r->kernels[0].nstalls, 0);
    /* The migrated store takes results with counters beside the old ones. */
    kb_run_release(&back);
    build_run(&run, "after");
    assert_int_equal(kb_store_import_run(s, &run, &e), KB_OK);
    assert_int_equal(kb_store_load_run(s, 0, &back, &e), KB_OK);
    char *ja = json_text(&run), *jb = json_text(&back);
    assert_string_equal(ja, jb);
    cJSON_free(ja);
    cJSON_free(jb);
    kb_run_release(&run);
    kb_run_release(&back);
    assert_int_equal(kb_store_load_run(s, 5, &back, &e), KB_OK);
    assert_string_equal(back.results[0].metric_set, "none");
    double c = 0;
    assert_int_equal(kb_store_get_ceiling(s, "GPU-1", "copy_gbps", &c, &e), KB_OK);
    assert_true(c == 3003.5);
    kb_run_release(&back);
    kb_store_close(s);
    assert_int_equal(user_version(path), KB_STORE_VERSION);

    /* A version-3 store's ceilings: their date kept, no driver, no batch copy
     * ceiling (so `run` measures them again). */
    path_in(path, sizeof path, "v3-ceilings.db");
    assert_int_equal(kb_store_create_at_version(path, 3, &e), KB_OK);
    exec_sql(path,
             "INSERT INTO devices VALUES('GPU-3', 0, 'NVIDIA H200', 9, 0, 132, 150754820096,"
             " 62914560, 1980, 3201, 6144, '13.0', '13.0', '2026-11-01T00:00:00Z',"
             " '2026-11-01T00:00:00Z');"
             "INSERT INTO ceilings VALUES('GPU-3', 'copy_gbps', 4200.5, '2026-11-02T00:00:00Z');"
             "INSERT INTO ceilings VALUES('GPU-3', 'mma_tflops', 700.5, '2026-11-01T00:00:00Z');");
    s = open_store(path, 1);
    kb_device d3;
    kb_device_init(&d3);
    snprintf(d3.uuid, sizeof d3.uuid, "GPU-3");
    assert_int_equal(kb_store_get_ceilings(s, &d3, &e), KB_OK);
    assert_true(d3.copy_gbps == 4200.5 && d3.mma_tflops == 700.5);
    assert_true(isnan(d3.copy_batch_gbps) && isnan(d3.fp32_tflops));
    assert_string_equal(d3.ceilings_at, "2026-11-01T00:00:00Z"); /* the oldest */
    assert_string_equal(d3.ceilings_driver, "");
    assert_true(isnan(d3.ceilings_sm_clock_mhz));
    /* measured again, they carry their driver and clocks */
    d3.copy_batch_gbps = 4210.25;
    d3.fp32_tflops = 51.5;
    snprintf(d3.ceilings_at, sizeof d3.ceilings_at, "2026-11-30T09:00:00Z");
    snprintf(d3.ceilings_driver, sizeof d3.ceilings_driver, "580.159");
    d3.ceilings_sm_clock_mhz = 1980.5;
    d3.ceilings_mem_clock_mhz = 3201;
    assert_int_equal(kb_store_set_ceilings(s, &d3, &e), KB_OK);
    kb_device d4;
    kb_device_init(&d4);
    snprintf(d4.uuid, sizeof d4.uuid, "GPU-3");
    assert_int_equal(kb_store_get_ceilings(s, &d4, &e), KB_OK);
    assert_true(d4.copy_batch_gbps == 4210.25 && d4.fp32_tflops == 51.5);
    assert_string_equal(d4.ceilings_at, "2026-11-30T09:00:00Z");
    assert_string_equal(d4.ceilings_driver, "580.159");
    assert_true(d4.ceilings_sm_clock_mhz == 1980.5);
    assert_int_equal(d4.ceilings_mem_clock_mhz, 3201);
    kb_store_close(s);

    /* A version-2 store with a result, as version 2 laid it out: reads as
     * memory-bound, no extra memory, compute peaks unknown. */
    path_in(path, sizeof path, "v2-data.db");
    assert_int_equal(kb_store_create_at_version(path, 2, &e), KB_OK);
    exec_sql(path,
             "INSERT INTO devices VALUES('GPU-2', 0, 'NVIDIA H200', 9, 0, 132, 150754820096,"
             " 52428800, 1980, 3201, 6144, '13.0', '13.0', '2025-01-01T00:00:00Z',"
             " '2025-01-01T00:00:00Z');"
             "INSERT INTO runs(id, version, git, argv, started, finished, state, tag, pid, host,"
             " imported, device_uuid, dev_ordinal, dev_name, dev_cc_major, dev_cc_minor, dev_sms,"
             " dev_memory_bytes, dev_l2_bytes, dev_sm_clock_mhz, dev_mem_clock_mhz,"
             " dev_mem_bus_bits, dev_driver, dev_runtime, dev_copy_gbps) VALUES(3, '0.1.0', 'g',"
             " 'kbench run softmax', '2025-01-01T00:00:00Z', '2025-01-01T00:01:00Z', 'complete',"
             " 'v2', NULL, NULL, 1, 'GPU-2', 0, 'NVIDIA H200', 9, 0, 132, 150754820096, 52428800,"
             " 1980, 3201, 6144, '13.0', '13.0', 4200.5);"
             "INSERT INTO results(id, run_id, seq, op, variant, dtype, shape, status, reason,"
             " seed, checked, max_abs_err, rel_l2_err, atol, rtol, rows_checked, median_us,"
             " min_us, max_us, stdrel, nsamples, samples_us, sm_clock_mhz, throttled, bytes,"
             " flops, gbps, tflops, pct_peak, metric_set, passes, counters_reason, dram_bytes,"
             " excess_traffic, achieved_occupancy, dram_gbps, theoretical_occupancy, registers,"
             " local_bytes, top_stalls) VALUES(1, 3, 1, 'softmax', 'fused', 'bf16',"
             " '{\"rows\":8,\"cols\":3}', 'ok', '', 9, 1, 0.5, NULL, 1e-2, 1e-2, 8, 10.0, 9.0,"
             " 11.0, 0.1, 0, NULL, NULL, 0, 96, 120, 0.0096, NULL, NULL, 'core', 1, '', 100.0,"
             " 1.04, 50.5, 0.01, 100.0, 32, 0, '');");
    s = open_store(path, 1);
    assert_int_equal(user_version(path), KB_STORE_VERSION);
    assert_int_equal(kb_store_load_run(s, 3, &back, &e), KB_OK);
    assert_true(back.dev.copy_gbps == 4200.5);
    assert_true(isnan(back.dev.mma_tflops) && isnan(back.dev.fp32_tflops));
    assert_int_equal(back.nresults, 1);
    assert_string_equal(back.results[0].bound, "memory");
    assert_true(back.results[0].extra_bytes == 0);
    assert_string_equal(back.results[0].metric_set, "core");
    assert_true(back.results[0].achieved_occupancy == 50.5);
    kb_run_release(&back);
    /* and takes compute-bound results with their peaks beside the old run */
    build_run(&run, "v3");
    assert_int_equal(kb_store_import_run(s, &run, &e), KB_OK);
    assert_int_equal(kb_store_load_run(s, 0, &back, &e), KB_OK);
    ja = json_text(&run);
    jb = json_text(&back);
    assert_string_equal(ja, jb);
    cJSON_free(ja);
    cJSON_free(jb);
    kb_run_release(&run);
    kb_run_release(&back);
    kb_store_close(s);
}

static void test_interrupted_runs(void **state)
{
    (void)state;
    char path[256];
    kb_err e = {{0}};
    kb_run run, back;
    path_in(path, sizeof path, "crash.db");
    kb_store *s = open_store(path, 1);
    build_run(&run, "alive");
    assert_int_equal(kb_store_begin_run(s, &run, &e), KB_OK); /* this process: alive */
    int64_t alive = run.id;
    kb_store_close(s);

    /* A child starts a run, stores one result and dies without finishing it. */
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        kb_store *cs = NULL;
        kb_err ce = {{0}};
        int ok = kb_store_open(path, 1, &cs, &ce) == KB_OK &&
                 kb_store_begin_run(cs, &run, &ce) == KB_OK &&
                 kb_store_add_result(cs, run.id, &run.results[0], &ce) == KB_OK;
        kb_store_close(cs);
        kb_run_release(&run);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* Reading changes nothing; opening for writing marks the dead run. */
    s = open_store(path, 0);
    assert_int_equal(kb_store_load_run(s, 0, &back, &e), KB_OK);
    assert_string_equal(back.state, "running");
    kb_run_release(&back);
    kb_store_close(s);
    s = open_store(path, 1);
    assert_int_equal(kb_store_load_run(s, 0, &back, &e), KB_OK);
    assert_true(back.id > alive);
    assert_string_equal(back.state, "interrupted");
    assert_int_equal(back.nresults, 1); /* what it finished is kept */
    kb_run_release(&back);
    assert_int_equal(kb_store_load_run(s, alive, &back, &e), KB_OK);
    assert_string_equal(back.state, "running");
    kb_run_release(&back);
    kb_run_release(&run);
    kb_store_close(s);
}

static void test_ceilings(void **state)
{
    (void)state;
    char path[256];
    kb_err e = {{0}};
    kb_run run;
    double v = 0;
    path_in(path, sizeof path, "ceil.db");
    kb_store *s = open_store(path, 1);
    build_run(&run, "ceil");
    assert_int_equal(kb_store_get_ceiling(s, run.dev.uuid, "copy_gbps", &v, &e), KB_OK);
    assert_true(isnan(v));
    assert_int_equal(kb_store_set_ceiling(s, &run.dev, "copy_gbps", 4012.5, &e), KB_OK);
    assert_int_equal(kb_store_get_ceiling(s, run.dev.uuid, "copy_gbps", &v, &e), KB_OK);
    assert_true(v == 4012.5);
    assert_int_equal(kb_store_set_ceiling(s, &run.dev, "copy_gbps", 4020.125, &e), KB_OK);
    assert_int_equal(kb_store_get_ceiling(s, run.dev.uuid, "copy_gbps", &v, &e), KB_OK);
    assert_true(v == 4020.125);
    assert_int_equal(kb_store_get_ceiling(s, "GPU-other", "copy_gbps", &v, &e), KB_OK);
    assert_true(isnan(v));
    assert_int_equal(kb_store_set_ceiling(s, &run.dev, "fp32_tflops", NAN, &e), KB_OK);
    assert_int_equal(kb_store_get_ceiling(s, run.dev.uuid, "fp32_tflops", &v, &e), KB_OK);
    assert_true(isnan(v));
    /* The compute peaks are ceilings like the copy bandwidth, each by name. */
    assert_int_equal(kb_store_set_ceiling(s, &run.dev, "mma_tflops", 781.5, &e), KB_OK);
    assert_int_equal(kb_store_set_ceiling(s, &run.dev, "fp32_tflops", 51.25, &e), KB_OK);
    assert_int_equal(kb_store_get_ceiling(s, run.dev.uuid, "mma_tflops", &v, &e), KB_OK);
    assert_true(v == 781.5);
    assert_int_equal(kb_store_get_ceiling(s, run.dev.uuid, "fp32_tflops", &v, &e), KB_OK);
    assert_true(v == 51.25);
    assert_int_equal(kb_store_get_ceiling(s, run.dev.uuid, "copy_gbps", &v, &e), KB_OK);
    assert_true(v == 4020.125);
    kb_run_release(&run);
    kb_store_close(s);

    /* measured_at is kept with the value. */
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT measured_at FROM ceilings WHERE name = "
                                            "'copy_gbps'", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(strlen((const char *)sqlite3_column_text(q, 0)), 20);
    sqlite3_finalize(q);
    sqlite3_close(db);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kbtest_store_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_lifecycle),
        cmocka_unit_test(test_import_export_same_report),
        cmocka_unit_test(test_empty_store),
        cmocka_unit_test(test_import_is_all_or_nothing),
        cmocka_unit_test(test_missing_store_not_created),
        cmocka_unit_test(test_refuse_directory),
        cmocka_unit_test(test_refuse_text_file),
        cmocka_unit_test(test_refuse_foreign_sqlite),
        cmocka_unit_test(test_refuse_newer_schema),
        cmocka_unit_test(test_refuse_negative_version),
        cmocka_unit_test(test_racing_creators),
        cmocka_unit_test(test_migrations),
        cmocka_unit_test(test_interrupted_runs),
        cmocka_unit_test(test_ceilings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
