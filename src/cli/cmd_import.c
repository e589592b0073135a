/* cmd_import.c - `kbench import`: loads JSON reports (from other machines or
 * GPUs) into the store, one run per file. Every file is read and validated
 * before the store is touched; a bad file means nothing is imported. Needs no
 * GPU. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "store/json.h"
#include "store/store.h"
#include "util/text.h"

static const char import_usage[] =
    "usage: kbench import FILE.json... [--force] [--db PATH]\n"
    "\n"
    "Loads JSON reports (written by 'kbench run --json' or 'kbench report --format\n"
    "json', on this machine or another) into the store, each as a new run. Every\n"
    "file is checked first; if any is missing or invalid, nothing is imported. A\n"
    "report whose run is already stored (the same GPU uuid, start time and\n"
    "command) is not stored again.\n"
    "\n"
    "  --force       store such a report again, as another run\n"
    "  --db PATH     the store (default: $KBENCH_DB, else " KB_DEFAULT_DB ")\n"
    "  -h, --help    this help\n"
    "\n"
    "exit codes: 0 every report is in the store, 2 a report is invalid (nothing\n"
    "imported), 3 a file or the store cannot be used (the message says what was\n"
    "imported before)\n";

/* The options of import. */
typedef struct import_opts {
    const char *db; /* --db */
    int force;      /* --force */
} import_opts;

static int import_option(void *ctx, int c, const char *arg)
{
    import_opts *o = ctx;
    if (c == 'f')
        o->force = 1;
    else /* 'D' */
        o->db = arg;
    return -1;
}

/* Stores each of runs[0 .. n) read from files[] unless it is already there
 * (and not force), saying which on stdout. *stored counts those stored. */
static kb_status import_all(kb_store *s, kb_run *runs, char **files, int n, int force,
                            int *stored, kb_err *e)
{
    kb_status st = KB_OK;
    for (int i = 0; i < n; i++) {
        int64_t id = 0;
        if (!force)
            KB_TRY(kb_store_find_run(s, &runs[i], &id, e));
        if (id > 0) {
            fputs("already stored: ", stdout);
            kb_put_safe(stdout, KB_SAFE_TERM, files[i]);
            printf(" is run %lld (nothing imported; --force stores it again)\n", (long long)id);
            continue;
        }
        KB_TRY(kb_store_import_run(s, &runs[i], e));
        (*stored)++;
        fputs("imported ", stdout);
        kb_put_safe(stdout, KB_SAFE_TERM, files[i]);
        printf(" as run %lld (%zu results)\n", (long long)runs[i].id, runs[i].nresults);
    }
done:
    return st;
}

/* `kbench import FILE.json... [--force] [--db PATH]`; argv[0] is "import".
 * Validates every file, then imports each as a new run in its own transaction
 * (one already stored is skipped unless --force) and prints what happened to
 * each. Returns the exit code: 0 when every report is in the store (a failed
 * write of those lines is then only a warning: they were stored); 2 for usage
 * errors and malformed, truncated or newer-schema reports (nothing imported);
 * 3 for a missing or unreadable file (nothing imported) and store failures. */
int cmd_import(int argc, char **argv)
{
    static const kb_cli_opt opts[] = {
        {"db", 'D', KB_ARG_PATH},
        {"force", 'f', KB_ARG_NONE},
        {"help", 'h', KB_ARG_NONE},
    };
    import_opts io = {NULL, 0};
    kb_run *runs = NULL;
    kb_store *s = NULL;
    kb_err e = {{0}};
    kb_status st = KB_OK;
    int nfiles = 0, nbad = 0, stored = 0;

    int rc = kb_cli_options(argc, argv, "import", import_usage, ":h", opts, KB_COUNT(opts),
                            import_option, &io);
    if (rc >= 0)
        return rc;
    char **files = argv + optind;
    nfiles = argc - optind;
    if (nfiles <= 0)
        return kb_cli_error(KB_EUSAGE, "no report to import (kbench import FILE.json...)");

    runs = calloc((size_t)nfiles, sizeof *runs);
    if (!runs)
        return kb_cli_error(KB_EENV, "out of memory");
    for (int i = 0; i < nfiles; i++)
        kb_run_init(&runs[i]);

    /* Read and validate everything first. */
    for (int i = 0; i < nfiles; i++) {
        kb_status fs = kb_json_load_run(files[i], &runs[i], &e);
        if (fs != KB_OK) {
            kb_cli_fail(fs, &e);
            if (st == KB_OK)
                st = fs;
            nbad++;
        }
    }
    if (st != KB_OK) {
        if (nfiles > 1)
            kb_cli_error(st, "nothing imported (%d of %d files are not valid reports)", nbad,
                         nfiles);
        goto done;
    }

    st = kb_store_open(kb_cli_db_path(io.db), 1, &s, &e);
    if (st == KB_OK)
        st = import_all(s, runs, files, nfiles, io.force, &stored, &e);
    if (st != KB_OK) {
        kb_cli_fail(st, &e);
        if (stored > 0)
            kb_cli_error(st, "%d of %d reports were imported before that", stored, nfiles);
    }
done:
    kb_store_close(s);
    if (runs)
        for (int i = 0; i < nfiles; i++)
            kb_run_release(&runs[i]);
    free(runs);
    if (st == KB_OK && (fflush(stdout) != 0 || ferror(stdout))) {
        kb_cli_warn("writing to standard output failed (the reports were stored)");
        return KB_OK;
    }
    return st;
}
