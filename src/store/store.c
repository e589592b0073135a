/* store.c - the SQLite store: opening and refusing files, schema migrations,
 * and reading and writing runs, results, kernels, devices and ceilings.
 *
 * Schema (PRAGMA user_version = KB_STORE_VERSION):
 *   kbench_meta(key, value)  the marker ('format', 'kbench'); never changes, so
 *                            every kbench can tell its own files from others
 *   devices     one row per GPU uuid, its latest known properties
 *   ceilings    calibrated ceilings per (device uuid, name), with measured_at
 *   runs        one row per run: meta, state, pid/host of the writing process,
 *               and the device as it was during the run (dev_*, its ceilings
 *               dev_copy_gbps and, from version 3, dev_mma_tflops and
 *               dev_fp32_tflops)
 *   results     one row per result of a run, in order (seq); shape as JSON
 *               text, samples as a BLOB of native-endian doubles
 *   kernels     one row per kernel of a result, in launch order (idx)
 *   kernel_values  (version 2) the counters of a kernel: kind 'metric' rows in
 *               the metric set's order, kind 'stall' rows largest first (seq)
 * Version 3 adds results.bound ('memory' or 'compute': the ceiling pct_peak is
 * of) and results.extra_bytes (device memory beyond inputs and outputs).
 * Version 4 adds the batch time and its figures, flags and throttle reason to
 * results, the driver and clocks to ceilings, and the batch copy ceiling and
 * the ceilings' date, driver and clocks to runs (the C_CEILINGS columns).
 * Version 5 adds results.source_path and results.source_sha256: the variant
 * file of the user's own a result ran, and the SHA-256 of its source ('' for
 * built-in variants). Version 6 adds results.batch_sm_clock_mhz, version 7
 * runs.env (the KBENCH_* variables the run was started with).
 * Unknown doubles (NAN, infinities) are stored as NULL and read back as NAN;
 * unknown results.registers and results.local_bytes (-1) are NULL too.
 *
 * Adding schema version N+1: append one step to migrations[] (its SQL ends with
 * "PRAGMA user_version = N+1;"), bump KB_STORE_VERSION in store.h, and extend
 * the reads and writes below. Never edit a step that has shipped; the
 * migration test opens stores built at every older version. */
#include "store/store.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "store/json.h"
#include "util/member.h"
#include "util/text.h"

#define KB_STORE_BUSY_MS 10000

/* Step v takes a store from schema version v to v + 1. */
static const char *const migrations[] = {
    /* 0 -> 1 */
    "CREATE TABLE kbench_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO kbench_meta(key, value) VALUES('format', 'kbench');"
    "CREATE TABLE devices("
    " uuid TEXT PRIMARY KEY, ordinal INTEGER NOT NULL, name TEXT NOT NULL,"
    " cc_major INTEGER NOT NULL, cc_minor INTEGER NOT NULL, sms INTEGER NOT NULL,"
    " memory_bytes INTEGER NOT NULL, l2_bytes INTEGER NOT NULL,"
    " sm_clock_mhz INTEGER NOT NULL, mem_clock_mhz INTEGER NOT NULL,"
    " mem_bus_bits INTEGER NOT NULL, driver TEXT NOT NULL, runtime TEXT NOT NULL,"
    " first_seen TEXT NOT NULL, last_seen TEXT NOT NULL);"
    "CREATE TABLE ceilings("
    " device_uuid TEXT NOT NULL REFERENCES devices(uuid) ON DELETE CASCADE,"
    " name TEXT NOT NULL, value REAL, measured_at TEXT NOT NULL,"
    " PRIMARY KEY(device_uuid, name));"
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY, version TEXT NOT NULL, git TEXT NOT NULL, argv TEXT NOT NULL,"
    " started TEXT NOT NULL, finished TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK(state IN ('running', 'complete', 'interrupted')),"
    " tag TEXT NOT NULL, pid INTEGER, host TEXT, imported INTEGER NOT NULL,"
    " device_uuid TEXT NOT NULL REFERENCES devices(uuid),"
    " dev_ordinal INTEGER NOT NULL, dev_name TEXT NOT NULL,"
    " dev_cc_major INTEGER NOT NULL, dev_cc_minor INTEGER NOT NULL, dev_sms INTEGER NOT NULL,"
    " dev_memory_bytes INTEGER NOT NULL, dev_l2_bytes INTEGER NOT NULL,"
    " dev_sm_clock_mhz INTEGER NOT NULL, dev_mem_clock_mhz INTEGER NOT NULL,"
    " dev_mem_bus_bits INTEGER NOT NULL, dev_driver TEXT NOT NULL, dev_runtime TEXT NOT NULL,"
    " dev_copy_gbps REAL);"
    "CREATE INDEX runs_device ON runs(device_uuid);"
    "CREATE TABLE results("
    " id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL, op TEXT NOT NULL, variant TEXT NOT NULL, dtype TEXT NOT NULL,"
    " shape TEXT NOT NULL,"
    " status TEXT NOT NULL CHECK(status IN ('ok', 'mismatch', 'failed', 'skipped')),"
    " reason TEXT NOT NULL, seed INTEGER NOT NULL,"
    " checked INTEGER NOT NULL, max_abs_err REAL, rel_l2_err REAL, atol REAL, rtol REAL,"
    " rows_checked INTEGER NOT NULL,"
    " median_us REAL, min_us REAL, max_us REAL, stdrel REAL,"
    " nsamples INTEGER NOT NULL, samples_us BLOB,"
    " sm_clock_mhz REAL, throttled INTEGER NOT NULL,"
    " bytes REAL, flops REAL, gbps REAL, tflops REAL, pct_peak REAL,"
    " UNIQUE(run_id, seq));"
    "CREATE TABLE kernels("
    " result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, name TEXT NOT NULL,"
    " grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,"
    " block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,"
    " registers INTEGER NOT NULL, static_smem INTEGER NOT NULL,"
    " dynamic_smem INTEGER NOT NULL, local_bytes INTEGER NOT NULL,"
    " blocks_per_sm INTEGER NOT NULL, occupancy REAL,"
    " PRIMARY KEY(result_id, idx));"
    "PRAGMA user_version = 1;",

    /* 1 -> 2: hardware counters. Results gain the counter pass (metric set,
     * passes, why counters are missing) and its figures, and the per-result
     * resource figures; kernels gain the occupancy limiter; kernel_values holds
     * each kernel's metrics (in set order) and stall reasons (largest first).
     * Results of version 1 read as metric set 'none' with unknown figures. */
    "ALTER TABLE results ADD COLUMN metric_set TEXT NOT NULL DEFAULT 'none'"
    " CHECK(metric_set IN ('none', 'core', 'sol', 'stalls', 'full'));"
    "ALTER TABLE results ADD COLUMN passes INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE results ADD COLUMN counters_reason TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE results ADD COLUMN dram_bytes REAL;"
    "ALTER TABLE results ADD COLUMN excess_traffic REAL;"
    "ALTER TABLE results ADD COLUMN achieved_occupancy REAL;"
    "ALTER TABLE results ADD COLUMN dram_gbps REAL;"
    "ALTER TABLE results ADD COLUMN theoretical_occupancy REAL;"
    "ALTER TABLE results ADD COLUMN registers INTEGER;"
    "ALTER TABLE results ADD COLUMN local_bytes INTEGER;"
    "ALTER TABLE results ADD COLUMN top_stalls TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE kernels ADD COLUMN occ_limiter TEXT NOT NULL DEFAULT '';"
    "CREATE TABLE kernel_values("
    " result_id INTEGER NOT NULL, kernel_idx INTEGER NOT NULL,"
    " kind TEXT NOT NULL CHECK(kind IN ('metric', 'stall')),"
    " seq INTEGER NOT NULL, name TEXT NOT NULL, value REAL,"
    " PRIMARY KEY(result_id, kernel_idx, kind, seq),"
    " FOREIGN KEY(result_id, kernel_idx) REFERENCES kernels(result_id, idx)"
    "  ON DELETE CASCADE);"
    "PRAGMA user_version = 2;",

    /* 2 -> 3: compute ceilings. Runs keep their device's calibrated matrix-unit
     * and fp32 peaks as they were during the run (NULL: unknown); results gain
     * the ceiling their % of peak is of and the device memory the variant needs
     * beyond its inputs and outputs. Results of version 2 read as memory-bound
     * with no extra memory, runs of version 2 with those peaks unknown. */
    "ALTER TABLE runs ADD COLUMN dev_mma_tflops REAL;"
    "ALTER TABLE runs ADD COLUMN dev_fp32_tflops REAL;"
    "ALTER TABLE results ADD COLUMN bound TEXT NOT NULL DEFAULT 'memory'"
    " CHECK(bound IN ('memory', 'compute'));"
    "ALTER TABLE results ADD COLUMN extra_bytes REAL DEFAULT 0;"
    "PRAGMA user_version = 3;",

    /* 3 -> 4: two timings and what the GPU was doing. Results gain the batch
     * time (back-to-back launches) with its spread, launches per sample and
     * figures, their flags (comma list: gpu_shared, l2_resident,
     * gpu_unchecked) and why they count as throttled; ceilings gain the
     * driver and clocks they were measured at; runs keep the batch copy
     * ceiling and when, under which driver and at which clocks the ceilings
     * were measured. Results of version 3 read with no batch time and no
     * flags; ceilings of version 3 with no driver, which makes them stale. */
    "ALTER TABLE results ADD COLUMN batch_us REAL;"
    "ALTER TABLE results ADD COLUMN batch_stdrel REAL;"
    "ALTER TABLE results ADD COLUMN batch_launches INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE results ADD COLUMN gbps_batch REAL;"
    "ALTER TABLE results ADD COLUMN tflops_batch REAL;"
    "ALTER TABLE results ADD COLUMN pct_peak_batch REAL;"
    "ALTER TABLE results ADD COLUMN flags TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE results ADD COLUMN throttle_reason TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE ceilings ADD COLUMN driver TEXT;"
    "ALTER TABLE ceilings ADD COLUMN sm_clock_mhz REAL;"
    "ALTER TABLE ceilings ADD COLUMN mem_clock_mhz INTEGER;"
    "ALTER TABLE runs ADD COLUMN dev_copy_batch_gbps REAL;"
    "ALTER TABLE runs ADD COLUMN dev_ceilings_at TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE runs ADD COLUMN dev_ceilings_driver TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE runs ADD COLUMN dev_ceilings_sm_clock_mhz REAL;"
    "ALTER TABLE runs ADD COLUMN dev_ceilings_mem_clock_mhz INTEGER;"
    "PRAGMA user_version = 4;",

    /* 4 -> 5: variant files. A result of a file of the user's own keeps the
     * file and the SHA-256 of the source it ran; results of version 4 read as
     * built-in variants (''). */
    "ALTER TABLE results ADD COLUMN source_path TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE results ADD COLUMN source_sha256 TEXT NOT NULL DEFAULT '';"
    "PRAGMA user_version = 5;",

    /* 5 -> 6: the SM clock after the batch samples beside the one after the
     * cold samples; results of version 5 read with none (their sm_clock_mhz
     * was read after both). */
    "ALTER TABLE results ADD COLUMN batch_sm_clock_mhz REAL;"
    "PRAGMA user_version = 6;",

    /* 6 -> 7: the KBENCH_* variables a run was started with, which choose
     * kernels; runs of version 6 read with none recorded (''). */
    "ALTER TABLE runs ADD COLUMN env TEXT NOT NULL DEFAULT '';"
    "PRAGMA user_version = 7;",
};

_Static_assert(KB_COUNT(migrations) == KB_STORE_VERSION,
               "KB_STORE_VERSION must equal the number of migration steps");

struct kb_store {
    sqlite3 *db;
    char path[4096];
};

/* ---- errors and small helpers ------------------------------------------------- */

/* The one place SQLite failures become messages: file, line and sqlite3_errmsg. */
static kb_status sql_error(const kb_store *s, const char *file, int line, kb_err *e)
{
    return kb_fail(e, KB_EENV, "sqlite error on '%s': %s (%s:%d)", s->path,
                   s->db ? sqlite3_errmsg(s->db) : "no connection", file, line);
}

/* In functions with `kb_status st`, a store `s`, `kb_err *e` and a `done:` label. */
#define SQL_FAIL()                                  \
    do {                                            \
        st = sql_error(s, __FILE__, __LINE__, e);   \
        goto done;                                  \
    } while (0)
#define SQL_CHECK(call)                             \
    do {                                            \
        if ((call) != SQLITE_OK)                    \
            SQL_FAIL();                             \
    } while (0)
#define SQL_STEP(q, rc)                             \
    do {                                            \
        (rc) = sqlite3_step(q);                     \
        if ((rc) != SQLITE_ROW && (rc) != SQLITE_DONE) \
            SQL_FAIL();                             \
    } while (0)
static int stmt_prep(kb_store *s, const char *sql, sqlite3_stmt **q)
{
    return sqlite3_prepare_v2(s->db, sql, -1, q, NULL);
}

/* Finalizing returns the last step's error, which was already checked. */
static void fin(sqlite3_stmt *q)
{
    (void)sqlite3_finalize(q);
}

/* Binds parameters 1, 2, ... in order, keeping the first failure in rc. */
typedef struct binder {
    sqlite3_stmt *q;
    int i;
    int rc;
} binder;

static binder bind_start(sqlite3_stmt *q)
{
    binder b = {q, 0, SQLITE_OK};
    return b;
}
static void b_int(binder *b, int64_t v)
{
    b->i++;
    if (b->rc == SQLITE_OK)
        b->rc = sqlite3_bind_int64(b->q, b->i, (sqlite3_int64)v);
}
/* An integer that is unknown when negative: NULL then. */
static void b_int_known(binder *b, int64_t v)
{
    b->i++;
    if (b->rc == SQLITE_OK)
        b->rc = v < 0 ? sqlite3_bind_null(b->q, b->i) : sqlite3_bind_int64(b->q, b->i, v);
}
static void b_real(binder *b, double v)
{
    b->i++;
    if (b->rc == SQLITE_OK)
        b->rc = isfinite(v) ? sqlite3_bind_double(b->q, b->i, v) : sqlite3_bind_null(b->q, b->i);
}
static void b_text(binder *b, const char *v)
{
    b->i++;
    if (b->rc == SQLITE_OK)
        b->rc = v ? sqlite3_bind_text(b->q, b->i, v, -1, SQLITE_STATIC)
                  : sqlite3_bind_null(b->q, b->i);
}
static void b_blob(binder *b, const void *p, size_t n)
{
    b->i++;
    if (b->rc == SQLITE_OK)
        b->rc = n ? sqlite3_bind_blob64(b->q, b->i, p, n, SQLITE_STATIC)
                  : sqlite3_bind_null(b->q, b->i);
}

/* Reads columns 0, 1, ... in order. */
typedef struct reader {
    sqlite3_stmt *q;
    int i;
} reader;

static int64_t c_int(reader *c)
{
    return (int64_t)sqlite3_column_int64(c->q, c->i++);
}
/* An integer column that may be NULL (unknown): -1 then. */
static int64_t c_int_known(reader *c)
{
    int i = c->i++;
    return sqlite3_column_type(c->q, i) == SQLITE_NULL ? -1 : (int64_t)sqlite3_column_int64(c->q, i);
}
static double c_real(reader *c)
{
    int i = c->i++;
    return sqlite3_column_type(c->q, i) == SQLITE_NULL ? NAN : sqlite3_column_double(c->q, i);
}
static void c_text(reader *c, char *dst, size_t n)
{
    const unsigned char *t = sqlite3_column_text(c->q, c->i++);
    kb_strlcpy(dst, t ? (const char *)t : "", n);
}

/* The runs of columns that are plain members of a struct, in statement
 * order, as the column table lists them. */
typedef enum col_group {
    C_RUN,         /* kb_run: version .. finished */
    C_DEVICE,      /* kb_device: uuid .. runtime, in the devices table and the
                    * runs table's snapshot (device_uuid, dev_ordinal .. dev_runtime) */
    C_DEVICE_PEAK, /* kb_device: the runs columns dev_copy_gbps .. dev_fp32_tflops */
    C_CEILINGS,    /* kb_device: the runs columns dev_copy_batch_gbps ..
                    * dev_ceilings_mem_clock_mhz (schema version 4) */
    C_CASE,        /* kb_result: op .. dtype */
    C_CHECK_TIME,  /* kb_result: checked .. stdrel */
    C_FIGURES,     /* kb_result: sm_clock_mhz .. batch_sm_clock_mhz */
    C_KERNEL,      /* kb_kernel: registers .. occ_limiter */
} col_group;

/* What the member of a column holds; integers are int or int64_t members
 * (util/member.h). */
typedef enum col_kind {
    COL_TEXT,  /* char[size] */
    COL_INT,   /* int or int64_t */
    COL_KNOWN, /* int or int64_t, NULL when negative (unknown) */
    COL_REAL,  /* double, NULL when not finite */
} col_kind;

typedef struct column {
    col_group group;
    col_kind kind;
    size_t off, size; /* the member's offset in its struct and its size */
} column;

#define MEMBER(type, member) offsetof(type, member), sizeof(((type *)0)->member)

/* The columns that are plain members, group by group in statement order:
 * what bind_group binds and read_group reads, so that writing and reading a
 * row cannot drift apart. */
static const column columns[] = {
    {C_RUN, COL_TEXT, MEMBER(kb_run, version)},
    {C_RUN, COL_TEXT, MEMBER(kb_run, git)},
    {C_RUN, COL_TEXT, MEMBER(kb_run, argv)},
    {C_RUN, COL_TEXT, MEMBER(kb_run, started)},
    {C_RUN, COL_TEXT, MEMBER(kb_run, finished)},
    {C_DEVICE, COL_TEXT, MEMBER(kb_device, uuid)},
    {C_DEVICE, COL_INT, MEMBER(kb_device, ordinal)},
    {C_DEVICE, COL_TEXT, MEMBER(kb_device, name)},
    {C_DEVICE, COL_INT, MEMBER(kb_device, cc_major)},
    {C_DEVICE, COL_INT, MEMBER(kb_device, cc_minor)},
    {C_DEVICE, COL_INT, MEMBER(kb_device, sms)},
    {C_DEVICE, COL_INT, MEMBER(kb_device, memory_bytes)},
    {C_DEVICE, COL_INT, MEMBER(kb_device, l2_bytes)},
    {C_DEVICE, COL_INT, MEMBER(kb_device, sm_clock_mhz)},
    {C_DEVICE, COL_INT, MEMBER(kb_device, mem_clock_mhz)},
    {C_DEVICE, COL_INT, MEMBER(kb_device, mem_bus_bits)},
    {C_DEVICE, COL_TEXT, MEMBER(kb_device, driver)},
    {C_DEVICE, COL_TEXT, MEMBER(kb_device, runtime)},
    {C_DEVICE_PEAK, COL_REAL, MEMBER(kb_device, copy_gbps)},
    {C_DEVICE_PEAK, COL_REAL, MEMBER(kb_device, mma_tflops)},
    {C_DEVICE_PEAK, COL_REAL, MEMBER(kb_device, fp32_tflops)},
    {C_CEILINGS, COL_REAL, MEMBER(kb_device, copy_batch_gbps)},
    {C_CEILINGS, COL_TEXT, MEMBER(kb_device, ceilings_at)},
    {C_CEILINGS, COL_TEXT, MEMBER(kb_device, ceilings_driver)},
    {C_CEILINGS, COL_REAL, MEMBER(kb_device, ceilings_sm_clock_mhz)},
    {C_CEILINGS, COL_INT, MEMBER(kb_device, ceilings_mem_clock_mhz)},
    {C_CASE, COL_TEXT, MEMBER(kb_result, op)},
    {C_CASE, COL_TEXT, MEMBER(kb_result, variant)},
    {C_CASE, COL_TEXT, MEMBER(kb_result, dtype)},
    {C_CHECK_TIME, COL_INT, MEMBER(kb_result, checked)},
    {C_CHECK_TIME, COL_REAL, MEMBER(kb_result, max_abs_err)},
    {C_CHECK_TIME, COL_REAL, MEMBER(kb_result, rel_l2_err)},
    {C_CHECK_TIME, COL_REAL, MEMBER(kb_result, atol)},
    {C_CHECK_TIME, COL_REAL, MEMBER(kb_result, rtol)},
    {C_CHECK_TIME, COL_INT, MEMBER(kb_result, rows_checked)},
    {C_CHECK_TIME, COL_REAL, MEMBER(kb_result, median_us)},
    {C_CHECK_TIME, COL_REAL, MEMBER(kb_result, min_us)},
    {C_CHECK_TIME, COL_REAL, MEMBER(kb_result, max_us)},
    {C_CHECK_TIME, COL_REAL, MEMBER(kb_result, stdrel)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, sm_clock_mhz)},
    {C_FIGURES, COL_INT, MEMBER(kb_result, throttled)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, bytes)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, flops)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, gbps)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, tflops)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, pct_peak)},
    {C_FIGURES, COL_TEXT, MEMBER(kb_result, metric_set)},
    {C_FIGURES, COL_INT, MEMBER(kb_result, passes)},
    {C_FIGURES, COL_TEXT, MEMBER(kb_result, counters_reason)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, dram_bytes)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, excess_traffic)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, achieved_occupancy)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, dram_gbps)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, theoretical_occupancy)},
    {C_FIGURES, COL_KNOWN, MEMBER(kb_result, registers)},
    {C_FIGURES, COL_KNOWN, MEMBER(kb_result, local_bytes)},
    {C_FIGURES, COL_TEXT, MEMBER(kb_result, top_stalls)},
    {C_FIGURES, COL_TEXT, MEMBER(kb_result, bound)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, extra_bytes)},
    {C_FIGURES, COL_TEXT, MEMBER(kb_result, source_path)},
    {C_FIGURES, COL_TEXT, MEMBER(kb_result, source_sha256)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, batch_us)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, batch_stdrel)},
    {C_FIGURES, COL_INT, MEMBER(kb_result, batch_launches)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, gbps_batch)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, tflops_batch)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, pct_peak_batch)},
    {C_FIGURES, COL_REAL, MEMBER(kb_result, batch_sm_clock_mhz)},
    {C_KERNEL, COL_INT, MEMBER(kb_kernel, registers)},
    {C_KERNEL, COL_INT, MEMBER(kb_kernel, static_smem)},
    {C_KERNEL, COL_INT, MEMBER(kb_kernel, dynamic_smem)},
    {C_KERNEL, COL_INT, MEMBER(kb_kernel, local_bytes)},
    {C_KERNEL, COL_INT, MEMBER(kb_kernel, blocks_per_sm)},
    {C_KERNEL, COL_REAL, MEMBER(kb_kernel, occupancy)},
    {C_KERNEL, COL_TEXT, MEMBER(kb_kernel, occ_limiter)},
};

/* Binds the columns of group g from the members of the struct at base. */
static void bind_group(binder *b, const void *base, col_group g)
{
    for (size_t i = 0; i < KB_COUNT(columns); i++) {
        const column *k = &columns[i];
        const void *m = (const char *)base + k->off;
        if (k->group != g)
            continue;
        if (k->kind == COL_TEXT)
            b_text(b, m);
        else if (k->kind == COL_INT)
            b_int(b, kb_int_member(m, k->size));
        else if (k->kind == COL_KNOWN)
            b_int_known(b, kb_int_member(m, k->size));
        else
            b_real(b, *(const double *)m);
    }
}

/* Reads the columns of group g, as bind_group binds them, into the members
 * of the struct at base. */
static void read_group(reader *c, void *base, col_group g)
{
    for (size_t i = 0; i < KB_COUNT(columns); i++) {
        const column *k = &columns[i];
        void *m = (char *)base + k->off;
        if (k->group != g)
            continue;
        if (k->kind == COL_TEXT)
            c_text(c, m, k->size);
        else if (k->kind == COL_INT)
            kb_set_int_member(m, k->size, c_int(c));
        else if (k->kind == COL_KNOWN)
            kb_set_int_member(m, k->size, c_int_known(c));
        else
            *(double *)m = c_real(c);
    }
}

static void now_iso(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        kb_strlcpy(buf, "", n);
}

static void host_name(char *buf, size_t n)
{
    if (gethostname(buf, n) != 0)
        kb_strlcpy(buf, "", n);
    buf[n - 1] = '\0';
}

/* Resets the prepared statement q to run again for id (its parameter 1). */
static kb_status query_id(kb_store *s, sqlite3_stmt *q, int64_t id, kb_err *e)
{
    kb_status st = KB_OK;
    SQL_CHECK(sqlite3_reset(q));
    binder b = bind_start(q);
    b_int(&b, id);
    SQL_CHECK(b.rc);
done:
    return st;
}

/* Steps q: *row = 1 and KB_OK for a row, *row = 0 at the end; KB_EENV on an
 * SQLite error. */
static kb_status next_row(kb_store *s, sqlite3_stmt *q, int *row, kb_err *e)
{
    kb_status st = KB_OK;
    int rc;
    *row = 0;
    SQL_STEP(q, rc);
    *row = rc == SQLITE_ROW;
done:
    return st;
}

/* Prepares sql into *q and starts binding its parameters into *b. */
static kb_status prepare(kb_store *s, const char *sql, sqlite3_stmt **q, binder *b, kb_err *e)
{
    kb_status st = KB_OK;
    *b = bind_start(NULL);
    SQL_CHECK(stmt_prep(s, sql, q));
    *b = bind_start(*q);
done:
    return st;
}

/* Checks b's bindings and steps its statement once; *row as next_row. */
static kb_status run_bound(kb_store *s, const binder *b, int *row, kb_err *e)
{
    kb_status st = KB_OK;
    SQL_CHECK(b->rc);
    st = next_row(s, b->q, row, e);
done:
    return st;
}

static kb_status tx_begin(kb_store *s, kb_err *e)
{
    kb_status st = KB_OK;
    SQL_CHECK(sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL));
done:
    return st;
}

static kb_status tx_commit(kb_store *s, kb_err *e)
{
    kb_status st = KB_OK;
    SQL_CHECK(sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL));
done:
    return st;
}

/* Undoes an open transaction; best effort, as the error being reported is the
 * one that matters (SQLite rolls back by itself when the connection closes). */
static void tx_rollback(kb_store *s)
{
    if (s->db && !sqlite3_get_autocommit(s->db))
        (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- opening ---------------------------------------------------------------- */

static kb_status read_user_version(kb_store *s, int *ver, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int rc;
    SQL_CHECK(stmt_prep(s, "PRAGMA user_version", &q));
    SQL_STEP(q, rc);
    *ver = rc == SQLITE_ROW ? sqlite3_column_int(q, 0) : 0;
done:
    fin(q);
    return st;
}

/* Applies migration steps from the current version up to target, all in one
 * transaction. */
static kb_status migrate(kb_store *s, int target, kb_err *e)
{
    kb_status st = KB_OK;
    int ver = 0;
    KB_TRY(tx_begin(s, e));
    KB_TRY(read_user_version(s, &ver, e)); /* another process may have migrated it */
    if (ver < 0 || ver > target) {
        st = kb_fail(e, KB_EENV, "'%s' is not a kbench store I can read (schema version %d)",
                     s->path, ver);
        goto done;
    }
    for (int v = ver; v < target; v++)
        SQL_CHECK(sqlite3_exec(s->db, migrations[v], NULL, NULL, NULL));
    KB_TRY(tx_commit(s, e));
done:
    if (st != KB_OK)
        tx_rollback(s);
    return st;
}

/* Refuses, before SQLite touches it, a file that is not an SQLite database. An
 * empty file is accepted as a new store only when creating. */
static kb_status check_header(const char *path, off_t size, int create, kb_err *e)
{
    static const char magic[16] = "SQLite format 3";
    char head[16];
    if (size == 0)
        return create ? KB_OK
                      : kb_fail(e, KB_EENV, "'%s' is not a kbench store (an empty file)", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return kb_fail(e, KB_EENV, "cannot read '%s': %s", path, strerror(errno));
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    if (got != sizeof head || memcmp(head, magic, sizeof head) != 0)
        return kb_fail(e, KB_EENV, "'%s' is not a kbench store (not an SQLite database)", path);
    return KB_OK;
}

/* Sets *ver to the store's schema version after checking the kbench marker;
 * reads only. An SQLite file with no tables at all reads as version 0. */
static kb_status check_kind(kb_store *s, int *ver, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int rc;
    KB_TRY(read_user_version(s, ver, e));
    if (*ver < 0) {
        st = kb_fail(e, KB_EENV, "'%s' is not a kbench store I can read (schema version %d)",
                     s->path, *ver);
        goto done;
    }
    if (*ver == 0) {
        SQL_CHECK(stmt_prep(s, "SELECT count(*) FROM sqlite_master", &q));
        SQL_STEP(q, rc);
        if (rc == SQLITE_ROW && sqlite3_column_int(q, 0) > 0)
            st = kb_fail(e, KB_EENV,
                         "'%s' is not a kbench store (an SQLite database of something else)",
                         s->path);
        goto done;
    }
    if (stmt_prep(s, "SELECT value FROM kbench_meta WHERE key = 'format'", &q) != SQLITE_OK) {
        st = kb_fail(e, KB_EENV,
                     "'%s' is not a kbench store (an SQLite database of something else)", s->path);
        goto done;
    }
    SQL_STEP(q, rc);
    if (rc != SQLITE_ROW || sqlite3_column_type(q, 0) != SQLITE_TEXT ||
        strcmp((const char *)sqlite3_column_text(q, 0), "kbench") != 0)
        st = kb_fail(e, KB_EENV,
                     "'%s' is not a kbench store (an SQLite database of something else)", s->path);
done:
    fin(q);
    return st;
}

/* Creates the folder holding path when it is missing (one level only). */
static kb_status make_parent(const char *path, kb_err *e)
{
    char buf[4096];
    struct stat sb;
    kb_strlcpy(buf, path, sizeof buf);
    const char *dir = dirname(buf);
    if (stat(dir, &sb) == 0)
        return S_ISDIR(sb.st_mode)
                   ? KB_OK
                   : kb_fail(e, KB_EENV, "cannot create a store in '%s': not a folder", dir);
    /* Another process may make it first. */
    if (errno != ENOENT || (mkdir(dir, 0777) != 0 && (errno != EEXIST || stat(dir, &sb) != 0 ||
                                                      !S_ISDIR(sb.st_mode))))
        return kb_fail(e, KB_EENV, "cannot create folder '%s': %s", dir, strerror(errno));
    return KB_OK;
}

/* Marks "running" runs of this host whose process is gone as interrupted. */
static kb_status mark_stale(kb_store *s, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    char host[256];
    binder b;
    int row = 0;

    host_name(host, sizeof host);
    SQL_CHECK(stmt_prep(s,
                   "SELECT id, pid FROM runs"
                   " WHERE state = 'running' AND pid IS NOT NULL AND host IS ?1",
                   &q));
    b = bind_start(q);
    b_text(&b, host);
    SQL_CHECK(b.rc);
    while ((st = next_row(s, q, &row, e)) == KB_OK && row) {
        int64_t id = sqlite3_column_int64(q, 0), pid = sqlite3_column_int64(q, 1);
        if (pid <= 0 || pid > INT32_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            int64_t *p = realloc(ids, ncap * sizeof *p);
            if (!p) {
                st = kb_fail(e, KB_EENV, "out of memory opening '%s'", s->path);
                goto done;
            }
            ids = p;
            cap = ncap;
        }
        ids[n++] = id;
    }
    if (st != KB_OK)
        goto done;
    fin(q);
    q = NULL;
    if (n == 0)
        goto done;
    SQL_CHECK(stmt_prep(s, "UPDATE runs SET state = 'interrupted' WHERE id = ?1 AND state = 'running'",
                   &q));
    for (size_t i = 0; i < n && st == KB_OK; i++)
        if ((st = query_id(s, q, ids[i], e)) == KB_OK)
            st = next_row(s, q, &row, e);
done:
    fin(q);
    free(ids);
    return st;
}

/* Refuses, before SQLite opens it, a path that is no store: a directory,
 * something not a regular file, a file that is not an SQLite database, a
 * missing file when not creating. Creating, a missing file's folder is made and
 * *missing set. */
static kb_status check_path(const char *path, int create, int *missing, kb_err *e)
{
    struct stat sb;
    *missing = 0;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return kb_fail(e, KB_EENV, "'%s' is a directory, not a kbench store", path);
        if (!S_ISREG(sb.st_mode))
            return kb_fail(e, KB_EENV, "'%s' is not a regular file, not a kbench store", path);
        return check_header(path, sb.st_size, create, e);
    }
    if (errno != ENOENT)
        return kb_fail(e, KB_EENV, "cannot access '%s': %s", path, strerror(errno));
    if (!create)
        return kb_fail(e, KB_EENV,
                       "no kbench store at '%s' (run 'kbench run' or 'kbench import' first)", path);
    kb_status st = make_parent(path, e);
    *missing = st == KB_OK;
    return st;
}

/* Makes a complete store of the current schema at path when nothing is there:
 * built in a fresh temporary file beside it and hard-linked into place, so no
 * process ever opens a half-made store, and when another process links its own
 * first, that one is kept and ours discarded. Nothing at path is ever removed. */
static kb_status create_file(const char *path, kb_err *e)
{
    kb_status st = KB_OK;
    kb_store tmp = {0}, *s = &tmp;
    const mode_t mask = umask(0);
    umask(mask);
    if (snprintf(s->path, sizeof s->path, "%s.new-XXXXXX", path) >= (int)sizeof s->path)
        return kb_fail(e, KB_EUSAGE, "store path is too long: '%.60s...'", path);
    const int fd = mkstemp(s->path);
    if (fd < 0)
        return kb_fail(e, KB_EENV, "cannot create kbench store '%s': %s", path, strerror(errno));
    /* mkstemp makes it 0600; a store gets the mode SQLite would give it. */
    const int mode_ok = fchmod(fd, 0666 & ~mask) == 0;
    const int mode_errno = errno;
    close(fd);
    if (!mode_ok) {
        st = kb_fail(e, KB_EENV, "cannot create kbench store '%s': %s", path,
                     strerror(mode_errno));
        goto done;
    }
    if (sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        SQL_FAIL();
    SQL_CHECK(sqlite3_busy_timeout(s->db, KB_STORE_BUSY_MS));
    KB_TRY(migrate(s, KB_STORE_VERSION, e));
    /* WAL from the start: no process ever has to switch a shared store */
    SQL_CHECK(sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL));
    if (sqlite3_close(s->db) != SQLITE_OK)
        SQL_FAIL();
    s->db = NULL;
    if (link(s->path, path) != 0 && errno != EEXIST)
        st = kb_fail(e, KB_EENV, "cannot create kbench store '%s': %s", path, strerror(errno));
done:
    (void)sqlite3_close(s->db);
    unlink(s->path);
    return st;
}

/* Opens the SQLite connection of s (writable and created when create) and
 * reads its schema version into *ver after checking that it is a kbench store
 * this kbench can read; *readonly when SQLite opened it read-only. */
static kb_status open_db(kb_store *s, int create, int *ver, int *readonly, kb_err *e)
{
    kb_status st = KB_OK;
    /* The file exists (create_file made it when it was missing): SQLite never
     * creates it, so a store that vanished meanwhile is not silently remade. */
    const int rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE, NULL);
    if (rc != SQLITE_OK)
        return kb_fail(e, KB_EENV, "cannot open kbench store '%s': %s", s->path,
                       s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
    SQL_CHECK(sqlite3_busy_timeout(s->db, KB_STORE_BUSY_MS));
    *readonly = sqlite3_db_readonly(s->db, "main") == 1;
    if (create && *readonly)
        return kb_fail(e, KB_EENV, "cannot write kbench store '%s': the file is read-only",
                       s->path);
    st = check_kind(s, ver, e);
    if (st != KB_OK && sqlite3_errcode(s->db) == SQLITE_READONLY)
        return kb_fail(e, KB_EENV,
                       "cannot read kbench store '%s': SQLite must create '%s-shm' beside it, "
                       "and that folder is not writable",
                       s->path, s->path);
    if (st != KB_OK)
        return st;
    if (*ver > KB_STORE_VERSION)
        return kb_fail(e, KB_EENV,
                       "'%s' is not a kbench store I can read (schema version %d, newer than this "
                       "kbench's %d)",
                       s->path, *ver, KB_STORE_VERSION);
    if (*ver == 0 && !create)
        return kb_fail(e, KB_EENV, "'%s' is not a kbench store (an empty SQLite database)",
                       s->path);
done:
    return st;
}

/* Puts the store in WAL mode unless it is already (kbench's stores are made
 * so; the mode lasts). Changing the mode may be refused as busy at once, with
 * no wait in SQLite's busy handler, while another process opens the store: it
 * is retried for as long as the busy timeout. */
static kb_status use_wal(kb_store *s, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int rc;
    SQL_CHECK(stmt_prep(s, "PRAGMA journal_mode", &q));
    SQL_STEP(q, rc);
    const unsigned char *mode = rc == SQLITE_ROW ? sqlite3_column_text(q, 0) : NULL;
    const int wal = mode && strcmp((const char *)mode, "wal") == 0;
    fin(q); /* an open statement would hold the change back */
    q = NULL;
    if (wal)
        goto done;
    const struct timespec pause = {0, 10L * 1000 * 1000};
    for (int waited = 0;; waited += 10) {
        rc = sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        if (rc != SQLITE_BUSY || waited >= KB_STORE_BUSY_MS)
            break;
        nanosleep(&pause, NULL);
    }
    SQL_CHECK(rc);
done:
    fin(q);
    return st;
}

/* The file is ours: WAL, foreign keys, and the schema migrated forward. */
static kb_status prepare_store(kb_store *s, int ver, int readonly, kb_err *e)
{
    kb_status st = KB_OK;
    if (!readonly)
        KB_TRY(use_wal(s, e));
    SQL_CHECK(sqlite3_exec(s->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL));
    if (ver < KB_STORE_VERSION && readonly)
        return kb_fail(e, KB_EENV,
                       "'%s' has store schema version %d and is read-only (open it once with "
                       "write access to upgrade it to %d)",
                       s->path, ver, KB_STORE_VERSION);
    if (ver < KB_STORE_VERSION)
        st = migrate(s, KB_STORE_VERSION, e);
done:
    return st;
}

kb_status kb_store_open(const char *path, int create, kb_store **out, kb_err *e)
{
    kb_status st = KB_OK;
    kb_store *s = NULL;
    int missing = 0, ver = 0, readonly = 0;

    *out = NULL;
    if (!path || !*path)
        return kb_fail(e, KB_EUSAGE, "empty store path");
    s = calloc(1, sizeof *s);
    if (!s)
        return kb_fail(e, KB_EENV, "out of memory opening '%s'", path);
    if (kb_strlcpy(s->path, path, sizeof s->path)) {
        st = kb_fail(e, KB_EUSAGE, "store path is too long: '%.60s...'", path);
        goto done;
    }
    KB_TRY(check_path(path, create, &missing, e));
    if (missing)
        KB_TRY(create_file(path, e));
    KB_TRY(open_db(s, create, &ver, &readonly, e));
    KB_TRY(prepare_store(s, ver, readonly, e));
    if (create)
        KB_TRY(mark_stale(s, e));
    *out = s;
    s = NULL;
done:
    kb_store_close(s);
    return st;
}

void kb_store_close(kb_store *s)
{
    if (!s)
        return;
    /* Every statement is finalized where it was prepared, so closing succeeds. */
    (void)sqlite3_close(s->db);
    free(s);
}

const char *kb_store_path(const kb_store *s)
{
    return s->path;
}

kb_status kb_store_create_at_version(const char *path, int version, kb_err *e)
{
    kb_status st = KB_OK;
    kb_store store = {0}, *s = &store;
    struct stat sb;

    if (version < 0 || version > KB_STORE_VERSION)
        return kb_fail(e, KB_EUSAGE, "store version must be in [0, %d], got %d", KB_STORE_VERSION,
                       version);
    if (stat(path, &sb) == 0)
        return kb_fail(e, KB_EUSAGE, "'%s' already exists", path);
    kb_strlcpy(s->path, path, sizeof s->path);
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK)
        SQL_FAIL();
    KB_TRY(migrate(s, version, e));
done:
    (void)sqlite3_close(s->db);
    return st;
}

/* ---- writing ---------------------------------------------------------------- */

/* Inserts or refreshes device d; seen is the time it was seen (a newer row of
 * the same uuid is not overwritten by an older report). */
static kb_status put_device(kb_store *s, const kb_device *d, const char *seen, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int row = 0;
    binder b;
    KB_TRY(prepare(s,
                   "INSERT INTO devices(uuid, ordinal, name, cc_major, cc_minor, sms,"
                   " memory_bytes, l2_bytes, sm_clock_mhz, mem_clock_mhz, mem_bus_bits, driver,"
                   " runtime, first_seen, last_seen)"
                   " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)"
                   " ON CONFLICT(uuid) DO UPDATE SET ordinal = excluded.ordinal,"
                   " name = excluded.name, cc_major = excluded.cc_major,"
                   " cc_minor = excluded.cc_minor, sms = excluded.sms,"
                   " memory_bytes = excluded.memory_bytes, l2_bytes = excluded.l2_bytes,"
                   " sm_clock_mhz = excluded.sm_clock_mhz, mem_clock_mhz = excluded.mem_clock_mhz,"
                   " mem_bus_bits = excluded.mem_bus_bits, driver = excluded.driver,"
                   " runtime = excluded.runtime, last_seen = excluded.last_seen"
                   " WHERE excluded.last_seen >= devices.last_seen",
                   &q, &b, e));
    bind_group(&b, d, C_DEVICE);
    b_text(&b, seen);
    KB_TRY(run_bound(s, &b, &row, e));
done:
    fin(q);
    return st;
}

/* Inserts the run row (device snapshot included) and sets run->id. pid 0 and
 * host NULL for an imported run. */
static kb_status put_run(kb_store *s, kb_run *run, const char *state, int64_t pid,
                         const char *host, int imported, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    const kb_device *d = &run->dev;
    int row = 0;
    binder b;
    KB_TRY(prepare(s,
                   "INSERT INTO runs(version, git, argv, started, finished, state, tag, pid,"
                   " host, imported, device_uuid, dev_ordinal, dev_name, dev_cc_major,"
                   " dev_cc_minor, dev_sms, dev_memory_bytes, dev_l2_bytes, dev_sm_clock_mhz,"
                   " dev_mem_clock_mhz, dev_mem_bus_bits, dev_driver, dev_runtime, dev_copy_gbps,"
                   " dev_mma_tflops, dev_fp32_tflops, dev_copy_batch_gbps, dev_ceilings_at,"
                   " dev_ceilings_driver, dev_ceilings_sm_clock_mhz, dev_ceilings_mem_clock_mhz,"
                   " env)"
                   " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                   " ?, ?, ?, ?, ?, ?, ?, ?)",
                   &q, &b, e));
    bind_group(&b, run, C_RUN);
    b_text(&b, state);
    b_text(&b, run->tag);
    if (pid > 0)
        b_int(&b, pid);
    else
        b_text(&b, NULL);
    b_text(&b, host);
    b_int(&b, imported);
    bind_group(&b, d, C_DEVICE);
    bind_group(&b, d, C_DEVICE_PEAK);
    bind_group(&b, d, C_CEILINGS);
    b_text(&b, run->env);
    KB_TRY(run_bound(s, &b, &row, e));
    run->id = (int64_t)sqlite3_last_insert_rowid(s->db);
done:
    fin(q);
    return st;
}

/* Inserts the first n named values of kernel idx of result_id as rows of kind,
 * in order, with the prepared kernel_values insert vq. */
static kb_status put_values(kb_store *s, sqlite3_stmt *vq, int64_t result_id, int idx,
                            const char *kind, const kb_named_value *v, int n, kb_err *e)
{
    kb_status st = KB_OK;
    int rc;
    for (int j = 0; j < n; j++) {
        SQL_CHECK(sqlite3_reset(vq));
        binder b = bind_start(vq);
        b_int(&b, result_id);
        b_int(&b, idx);
        b_text(&b, kind);
        b_int(&b, j);
        b_text(&b, v[j].name);
        b_real(&b, v[j].value);
        SQL_CHECK(b.rc);
        SQL_STEP(vq, rc);
    }
done:
    return st;
}

/* The result's columns after run_id, in the order of the results insert;
 * flags_text is r->flags as kb_flags_str writes them. */
static void bind_result(binder *b, const kb_result *r, const char *shape_text,
                        const char *flags_text)
{
    int64_t seed;
    memcpy(&seed, &r->seed, sizeof seed); /* the 64 bits as SQLite's signed integer */
    bind_group(b, r, C_CASE);
    b_text(b, shape_text);
    b_text(b, kb_rstatus_name(r->status));
    b_text(b, r->reason);
    b_int(b, seed);
    bind_group(b, r, C_CHECK_TIME);
    b_int(b, (int64_t)r->nsamples);
    b_blob(b, r->samples_us, r->nsamples * sizeof *r->samples_us);
    bind_group(b, r, C_FIGURES);
    b_text(b, flags_text);
    b_text(b, r->throttle_reason);
}

/* Inserts the kernels of result_id, r's, with their metrics and stalls. */
static kb_status put_kernels(kb_store *s, int64_t result_id, const kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL, *vq = NULL;
    binder b;
    int rc;
    SQL_CHECK(stmt_prep(s,
                   "INSERT INTO kernels(result_id, idx, name, grid_x, grid_y, grid_z, block_x,"
                   " block_y, block_z, registers, static_smem, dynamic_smem, local_bytes,"
                   " blocks_per_sm, occupancy, occ_limiter)"
                   " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   &q));
    SQL_CHECK(stmt_prep(s,
                   "INSERT INTO kernel_values(result_id, kernel_idx, kind, seq, name, value)"
                   " VALUES(?, ?, ?, ?, ?, ?)",
                   &vq));
    for (int i = 0; i < r->nkernels; i++) {
        const kb_kernel *k = &r->kernels[i];
        SQL_CHECK(sqlite3_reset(q));
        b = bind_start(q);
        b_int(&b, result_id);
        b_int(&b, i);
        b_text(&b, k->name);
        for (int j = 0; j < 3; j++)
            b_int(&b, k->grid[j]);
        for (int j = 0; j < 3; j++)
            b_int(&b, k->block[j]);
        bind_group(&b, k, C_KERNEL);
        SQL_CHECK(b.rc);
        SQL_STEP(q, rc);
        KB_TRY(put_values(s, vq, result_id, i, "metric", k->metrics, kb_kernel_nmetrics(k), e));
        KB_TRY(put_values(s, vq, result_id, i, "stall", k->stalls, kb_kernel_nstalls(k), e));
    }
done:
    fin(q);
    fin(vq);
    return st;
}

/* Inserts one result after the run's last one, and its kernels. */
static kb_status put_result(kb_store *s, int64_t run_id, const kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    cJSON *shape = kb_json_from_shape(r);
    char *shape_text = shape ? cJSON_PrintUnformatted(shape) : NULL;
    char flags[96];
    int row = 0;

    if (!shape_text) {
        st = kb_fail(e, KB_EENV, "out of memory storing a result in '%s'", s->path);
        goto done;
    }
    binder b;
    KB_TRY(prepare(s,
                   "INSERT INTO results(run_id, seq, op, variant, dtype, shape, status, reason,"
                   " seed, checked, max_abs_err, rel_l2_err, atol, rtol, rows_checked,"
                   " median_us, min_us, max_us, stdrel, nsamples, samples_us, sm_clock_mhz,"
                   " throttled, bytes, flops, gbps, tflops, pct_peak, metric_set, passes,"
                   " counters_reason, dram_bytes, excess_traffic, achieved_occupancy, dram_gbps,"
                   " theoretical_occupancy, registers, local_bytes, top_stalls, bound,"
                   " extra_bytes, source_path, source_sha256, batch_us, batch_stdrel,"
                   " batch_launches, gbps_batch, tflops_batch, pct_peak_batch,"
                   " batch_sm_clock_mhz, flags, throttle_reason)"
                   " VALUES(?1, (SELECT coalesce(max(seq), 0) + 1 FROM results WHERE run_id = ?1),"
                   " ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
                   " ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32,"
                   " ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45, ?46, ?47,"
                   " ?48, ?49, ?50, ?51)",
                   &q, &b, e));
    kb_flags_str(r->flags, flags, sizeof flags);
    b_int(&b, run_id);
    bind_result(&b, r, shape_text, flags);
    KB_TRY(run_bound(s, &b, &row, e));
    const int64_t result_id = (int64_t)sqlite3_last_insert_rowid(s->db);
    if (r->nkernels > 0)
        KB_TRY(put_kernels(s, result_id, r, e));
done:
    fin(q);
    cJSON_free(shape_text);
    cJSON_Delete(shape);
    return st;
}

/* *found = whether run id exists. */
static kb_status run_exists(kb_store *s, int64_t id, int *found, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    *found = 0;
    SQL_CHECK(stmt_prep(s, "SELECT 1 FROM runs WHERE id = ?1", &q));
    KB_TRY(query_id(s, q, id, e));
    KB_TRY(next_row(s, q, found, e));
done:
    fin(q);
    return st;
}

kb_status kb_store_begin_run(kb_store *s, kb_run *run, kb_err *e)
{
    kb_status st = KB_OK;
    char now[32], host[256];
    now_iso(now, sizeof now);
    host_name(host, sizeof host);
    KB_TRY(tx_begin(s, e));
    KB_TRY(put_device(s, &run->dev, *run->started ? run->started : now, e));
    KB_TRY(put_run(s, run, "running", (int64_t)getpid(), host, 0, e));
    KB_TRY(tx_commit(s, e));
    kb_strlcpy(run->state, "running", sizeof run->state);
done:
    if (st != KB_OK) {
        tx_rollback(s);
        run->id = 0;
    }
    return st;
}

kb_status kb_store_add_result(kb_store *s, int64_t run_id, const kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    int found = 0;
    KB_TRY(tx_begin(s, e));
    KB_TRY(run_exists(s, run_id, &found, e));
    if (!found) {
        st = kb_fail(e, KB_EUSAGE, "no run %lld in '%s'", (long long)run_id, s->path);
        goto done;
    }
    KB_TRY(put_result(s, run_id, r, e));
    KB_TRY(tx_commit(s, e));
done:
    if (st != KB_OK)
        tx_rollback(s);
    return st;
}

kb_status kb_store_finish_run(kb_store *s, int64_t run_id, const char *state,
                              const char *finished, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int row = 0;
    if (strcmp(state, "complete") != 0 && strcmp(state, "interrupted") != 0)
        return kb_fail(e, KB_EUSAGE, "a run finishes 'complete' or 'interrupted', not '%s'", state);
    binder b;
    KB_TRY(prepare(s, "UPDATE runs SET state = ?1, finished = ?2 WHERE id = ?3", &q, &b, e));
    b_text(&b, state);
    b_text(&b, finished ? finished : "");
    b_int(&b, run_id);
    KB_TRY(run_bound(s, &b, &row, e));
    if (sqlite3_changes(s->db) == 0)
        st = kb_fail(e, KB_EUSAGE, "no run %lld in '%s'", (long long)run_id, s->path);
done:
    fin(q);
    return st;
}

kb_status kb_store_import_run(kb_store *s, kb_run *run, kb_err *e)
{
    kb_status st = KB_OK;
    char now[32];
    now_iso(now, sizeof now);
    KB_TRY(tx_begin(s, e));
    KB_TRY(put_device(s, &run->dev, *run->started ? run->started : now, e));
    KB_TRY(put_run(s, run, *run->state ? run->state : "complete", 0, NULL, 1, e));
    for (size_t i = 0; i < run->nresults; i++)
        KB_TRY(put_result(s, run->id, &run->results[i], e));
    KB_TRY(tx_commit(s, e));
done:
    if (st != KB_OK) {
        tx_rollback(s);
        run->id = 0;
    }
    return st;
}

kb_status kb_store_find_run(kb_store *s, const kb_run *run, int64_t *id, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int row = 0;
    binder b;
    *id = 0;
    KB_TRY(prepare(s,
                   "SELECT id FROM runs WHERE device_uuid = ?1 AND started = ?2 AND argv = ?3"
                   " ORDER BY id LIMIT 1",
                   &q, &b, e));
    b_text(&b, run->dev.uuid);
    b_text(&b, run->started);
    b_text(&b, run->argv);
    KB_TRY(run_bound(s, &b, &row, e));
    if (row)
        *id = (int64_t)sqlite3_column_int64(q, 0);
done:
    fin(q);
    return st;
}

kb_status kb_store_set_ceiling(kb_store *s, const kb_device *d, const char *name, double value,
                               kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    char now[32];
    int row = 0;
    now_iso(now, sizeof now);
    KB_TRY(tx_begin(s, e));
    KB_TRY(put_device(s, d, now, e));
    binder b;
    KB_TRY(prepare(s,
                   "INSERT INTO ceilings(device_uuid, name, value, measured_at, driver,"
                   " sm_clock_mhz, mem_clock_mhz) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                   " ON CONFLICT(device_uuid, name) DO UPDATE SET value = excluded.value,"
                   " measured_at = excluded.measured_at, driver = excluded.driver,"
                   " sm_clock_mhz = excluded.sm_clock_mhz, mem_clock_mhz = excluded.mem_clock_mhz",
                   &q, &b, e));
    b_text(&b, d->uuid);
    b_text(&b, name);
    b_real(&b, value);
    b_text(&b, *d->ceilings_at ? d->ceilings_at : now);
    b_text(&b, d->ceilings_driver);
    b_real(&b, d->ceilings_sm_clock_mhz);
    b_int(&b, d->ceilings_mem_clock_mhz);
    KB_TRY(run_bound(s, &b, &row, e));
    fin(q);
    q = NULL;
    KB_TRY(tx_commit(s, e));
done:
    fin(q);
    if (st != KB_OK)
        tx_rollback(s);
    return st;
}

kb_status kb_store_get_ceiling(kb_store *s, const char *uuid, const char *name, double *value,
                               kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int row = 0;
    *value = NAN;
    binder b;
    KB_TRY(prepare(s, "SELECT value FROM ceilings WHERE device_uuid = ?1 AND name = ?2", &q, &b, e));
    b_text(&b, uuid);
    b_text(&b, name);
    KB_TRY(run_bound(s, &b, &row, e));
    if (row) {
        reader c = {q, 0};
        *value = c_real(&c);
    }
done:
    fin(q);
    return st;
}

kb_status kb_store_set_ceilings(kb_store *s, const kb_device *d, kb_err *e)
{
    kb_status st = KB_OK;
    for (int i = 0; i < KB_NCEILINGS; i++)
        KB_TRY(kb_store_set_ceiling(s, d, kb_ceiling_name(i), kb_device_ceiling_of(d, i), e));
done:
    return st;
}

kb_status kb_store_get_ceilings(kb_store *s, kb_device *d, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int row = 0;
    binder b;
    for (int i = 0; i < KB_NCEILINGS; i++)
        KB_TRY(kb_store_get_ceiling(s, d->uuid, kb_ceiling_name(i), kb_device_ceiling(d, i), e));
    /* the oldest of them says when, under which driver and at which clocks */
    d->ceilings_at[0] = d->ceilings_driver[0] = '\0';
    d->ceilings_sm_clock_mhz = NAN;
    d->ceilings_mem_clock_mhz = 0;
    KB_TRY(prepare(s,
                   "SELECT measured_at, driver, sm_clock_mhz, mem_clock_mhz FROM ceilings"
                   " WHERE device_uuid = ?1 ORDER BY measured_at LIMIT 1",
                   &q, &b, e));
    b_text(&b, d->uuid);
    KB_TRY(run_bound(s, &b, &row, e));
    if (row) {
        reader c = {q, 0};
        c_text(&c, d->ceilings_at, sizeof d->ceilings_at);
        c_text(&c, d->ceilings_driver, sizeof d->ceilings_driver);
        d->ceilings_sm_clock_mhz = c_real(&c);
        d->ceilings_mem_clock_mhz = (int)c_int(&c);
    }
done:
    fin(q);
    return st;
}

/* ---- reading ---------------------------------------------------------------- */

static kb_status damaged(const kb_store *s, int64_t result_id, const char *what, kb_err *e)
{
    return kb_fail(e, KB_EENV, "damaged result %lld in '%s': %s", (long long)result_id, s->path,
                   what);
}

/* Reads the kernels of result_id into r with the prepared statement kq. */
static kb_status load_kernels(kb_store *s, sqlite3_stmt *kq, int64_t result_id, kb_result *r,
                              kb_err *e)
{
    kb_status st = KB_OK;
    int row = 0, cap = 0;
    KB_TRY(query_id(s, kq, result_id, e));
    while ((st = next_row(s, kq, &row, e)) == KB_OK && row) {
        if (r->nkernels == cap) {
            int ncap = cap ? cap * 2 : 4;
            kb_kernel *p = realloc(r->kernels, (size_t)ncap * sizeof *p);
            if (!p) {
                st = kb_fail(e, KB_EENV, "out of memory reading '%s'", s->path);
                goto done;
            }
            r->kernels = p;
            cap = ncap;
        }
        kb_kernel *k = &r->kernels[r->nkernels++];
        memset(k, 0, sizeof *k);
        reader c = {kq, 0};
        c_text(&c, k->name, sizeof k->name);
        for (int j = 0; j < 3; j++)
            k->grid[j] = (unsigned)c_int(&c);
        for (int j = 0; j < 3; j++)
            k->block[j] = (unsigned)c_int(&c);
        read_group(&c, k, C_KERNEL);
    }
done:
    return st;
}

/* Reads the metrics and stalls of result_id's kernels into r (its kernels
 * already loaded) with the prepared statement vq. */
static kb_status load_values(kb_store *s, sqlite3_stmt *vq, int64_t result_id, kb_result *r,
                             kb_err *e)
{
    kb_status st = KB_OK;
    int row = 0;
    char kind[16];
    KB_TRY(query_id(s, vq, result_id, e));
    while ((st = next_row(s, vq, &row, e)) == KB_OK && row) {
        reader c = {vq, 0};
        int64_t idx = c_int(&c);
        c_text(&c, kind, sizeof kind);
        if (idx < 0 || idx >= r->nkernels) {
            st = damaged(s, result_id, "a counter of a kernel that does not exist", e);
            goto done;
        }
        kb_kernel *k = &r->kernels[idx];
        int stall = strcmp(kind, "stall") == 0;
        kb_named_value *v = stall ? k->stalls : k->metrics;
        int *n = stall ? &k->nstalls : &k->nmetrics;
        if (*n == (stall ? KB_RES_MAX_STALLS : KB_RES_MAX_METRICS)) {
            st = damaged(s, result_id, stall ? "too many stall reasons" : "too many metrics", e);
            goto done;
        }
        c_text(&c, v[*n].name, sizeof v[*n].name);
        v[*n].value = c_real(&c);
        (*n)++;
    }
done:
    return st;
}

/* Fills r from the current row of the results query; *result_id is its id. */
static kb_status read_result(kb_store *s, sqlite3_stmt *q, kb_result *r, int64_t *result_id,
                             kb_err *e)
{
    kb_status st = KB_OK;
    reader c = {q, 0};
    char shape_text[512], status[16], flags[128];
    cJSON *shape = NULL;
    int64_t seed;

    *result_id = c_int(&c);
    read_group(&c, r, C_CASE);
    c_text(&c, shape_text, sizeof shape_text);
    shape = cJSON_Parse(shape_text);
    if (!shape || kb_json_to_shape(shape, r, e) != KB_OK) {
        st = damaged(s, *result_id, "bad shape", e);
        goto done;
    }
    c_text(&c, status, sizeof status);
    if (kb_rstatus_parse(status, &r->status) != 0) {
        st = damaged(s, *result_id, "bad status", e);
        goto done;
    }
    c_text(&c, r->reason, sizeof r->reason);
    seed = c_int(&c);
    memcpy(&r->seed, &seed, sizeof seed);
    read_group(&c, r, C_CHECK_TIME);
    int blob_col = c.i++;
    const void *blob = sqlite3_column_blob(q, blob_col);
    size_t nbytes = (size_t)sqlite3_column_bytes(q, blob_col);
    if (nbytes % sizeof(double) != 0) {
        st = damaged(s, *result_id, "bad samples", e);
        goto done;
    }
    if (nbytes > 0 && blob) {
        r->samples_us = malloc(nbytes);
        if (!r->samples_us) {
            st = kb_fail(e, KB_EENV, "out of memory reading '%s'", s->path);
            goto done;
        }
        memcpy(r->samples_us, blob, nbytes);
        r->nsamples = nbytes / sizeof(double);
    }
    read_group(&c, r, C_FIGURES);
    c_text(&c, flags, sizeof flags);
    c_text(&c, r->throttle_reason, sizeof r->throttle_reason);
    if (kb_flags_parse(flags, &r->flags) != 0)
        st = damaged(s, *result_id, "unknown flags", e);
done:
    cJSON_Delete(shape);
    return st;
}

kb_status kb_store_load_run(kb_store *s, int64_t id, kb_run *out, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL, *kq = NULL, *vq = NULL;
    kb_result r;
    binder b;
    int row = 0, in_tx = 0;

    kb_run_init(out);
    kb_result_init(&r);
    /* One read transaction: a consistent snapshot while a run is being written. */
    SQL_CHECK(sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL));
    in_tx = 1;
    KB_TRY(prepare(s,
                   "SELECT id, version, git, argv, started, finished, state, tag, device_uuid,"
                   " dev_ordinal, dev_name, dev_cc_major, dev_cc_minor, dev_sms,"
                   " dev_memory_bytes, dev_l2_bytes, dev_sm_clock_mhz, dev_mem_clock_mhz,"
                   " dev_mem_bus_bits, dev_driver, dev_runtime, dev_copy_gbps, dev_mma_tflops,"
                   " dev_fp32_tflops, dev_copy_batch_gbps, dev_ceilings_at, dev_ceilings_driver,"
                   " dev_ceilings_sm_clock_mhz, dev_ceilings_mem_clock_mhz, env"
                   " FROM runs WHERE id = ?1 OR ?1 = 0"
                   " ORDER BY started DESC, id DESC LIMIT 1",
                   &q, &b, e));
    b_int(&b, id);
    KB_TRY(run_bound(s, &b, &row, e));
    if (!row) {
        if (id == 0)
            st = kb_fail(e, KB_EUSAGE,
                         "no runs in '%s' (fill it with 'kbench run OP' on a GPU, or 'kbench "
                         "import FILE.json')",
                         s->path);
        else
            st = kb_fail(e, KB_EUSAGE, "no run %lld in '%s'", (long long)id, s->path);
        goto done;
    }
    reader c = {q, 0};
    kb_device *d = &out->dev;
    out->id = c_int(&c);
    read_group(&c, out, C_RUN);
    c_text(&c, out->state, sizeof out->state);
    c_text(&c, out->tag, sizeof out->tag);
    read_group(&c, d, C_DEVICE);
    read_group(&c, d, C_DEVICE_PEAK);
    read_group(&c, d, C_CEILINGS);
    c_text(&c, out->env, sizeof out->env);
    fin(q);
    q = NULL;

    SQL_CHECK(stmt_prep(s,
                   "SELECT id, op, variant, dtype, shape, status, reason, seed, checked,"
                   " max_abs_err, rel_l2_err, atol, rtol, rows_checked, median_us, min_us,"
                   " max_us, stdrel, samples_us, sm_clock_mhz, throttled, bytes, flops, gbps,"
                   " tflops, pct_peak, metric_set, passes, counters_reason, dram_bytes,"
                   " excess_traffic, achieved_occupancy, dram_gbps, theoretical_occupancy,"
                   " registers, local_bytes, top_stalls, bound, extra_bytes, source_path,"
                   " source_sha256, batch_us, batch_stdrel, batch_launches, gbps_batch,"
                   " tflops_batch, pct_peak_batch, batch_sm_clock_mhz, flags, throttle_reason"
                   " FROM results WHERE run_id = ?1 ORDER BY seq",
                   &q));
    SQL_CHECK(stmt_prep(s,
                   "SELECT name, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers,"
                   " static_smem, dynamic_smem, local_bytes, blocks_per_sm, occupancy,"
                   " occ_limiter FROM kernels WHERE result_id = ?1 ORDER BY idx",
                   &kq));
    SQL_CHECK(stmt_prep(s,
                   "SELECT kernel_idx, kind, name, value FROM kernel_values"
                   " WHERE result_id = ?1 ORDER BY kernel_idx, kind, seq",
                   &vq));
    KB_TRY(query_id(s, q, out->id, e));
    while ((st = next_row(s, q, &row, e)) == KB_OK && row) {
        int64_t result_id;
        KB_TRY(read_result(s, q, &r, &result_id, e));
        KB_TRY(load_kernels(s, kq, result_id, &r, e));
        KB_TRY(load_values(s, vq, result_id, &r, e));
        if (kb_run_add(out, &r) != 0) {
            st = kb_fail(e, KB_EENV, "out of memory reading '%s'", s->path);
            goto done;
        }
        kb_result_init(&r);
    }
    if (st != KB_OK)
        goto done;
    fin(q);
    q = NULL;
    in_tx = 0;
    SQL_CHECK(sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL));
done:
    fin(q);
    fin(kq);
    fin(vq);
    if (in_tx)
        tx_rollback(s);
    kb_result_release(&r);
    if (st != KB_OK) {
        kb_run_release(out);
        kb_run_init(out);
    }
    return st;
}

kb_status kb_store_list_runs(kb_store *s, FILE *f, kb_err *e)
{
    kb_status st = KB_OK;
    sqlite3_stmt *q = NULL;
    int row = 0, n = 0;
    SQL_CHECK(stmt_prep(s,
                   "SELECT r.id, r.started, r.state, r.dev_name,"
                   " (SELECT count(*) FROM results x WHERE x.run_id = r.id),"
                   " (SELECT group_concat(op, ',') FROM (SELECT op FROM results y"
                   "   WHERE y.run_id = r.id GROUP BY op ORDER BY min(y.seq))),"
                   " r.tag FROM runs r ORDER BY r.id",
                   &q));
    while ((st = next_row(s, q, &row, e)) == KB_OK && row) {
        if (n++ == 0)
            fprintf(f, "%5s  %-20s  %-11s  %-20s  %7s  %-16s  %s\n", "id", "started", "state",
                    "device", "results", "operators", "tag");
        /* Every string is the store's: shown safe for a terminal. */
        char col[5][1024];
        for (int c = 0; c < 5; c++) {
            static const int at[5] = {1, 2, 3, 5, 6};
            const unsigned char *t = sqlite3_column_text(q, at[c]);
            kb_safe(KB_SAFE_TERM, t ? (const char *)t : (c == 3 ? "-" : ""), col[c],
                    sizeof col[c]);
        }
        fprintf(f, "%5lld  %-20.20s  %-11.11s  %-20.20s  %7lld  %-16s  %s\n",
                (long long)sqlite3_column_int64(q, 0), col[0], col[1], col[2],
                (long long)sqlite3_column_int64(q, 4), col[3], col[4]);
    }
    if (st != KB_OK)
        goto done;
    if (n == 0)
        fprintf(f, "no runs in '%s' (fill it with 'kbench run OP' on a GPU, or 'kbench import "
                   "FILE.json')\n",
                s->path);
    if (ferror(f))
        st = kb_fail(e, KB_EENV, "cannot write the list of runs: %s", strerror(errno));
done:
    fin(q);
    return st;
}
