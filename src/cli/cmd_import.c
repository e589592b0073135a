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

static const char import_usage[] =
    "usage: kbench import FILE.json... [--db PATH]\n"
    "\n"
    "Loads JSON reports (written by 'kbench run --json' or 'kbench report --format\n"
    "json', on this machine or another) into the store, each as a new run. Every\n"
    "file is checked first; if any is missing or invalid, nothing is imported.\n"
    "\n"
    "  --db PATH     the store (default: $KBENCH_DB, else " KB_DEFAULT_DB ")\n"
    "  -h, --help    this help\n";

static int import_option(void *ctx, int c, const char *arg)
{
    (void)c; /* 'D' */
    *(const char **)ctx = arg;
    return -1;
}

/* `kbench import FILE.json... [--db PATH]`; argv[0] is "import". Validates every
 * file, then imports each as a new run in its own transaction and prints
 * "imported FILE as run N (K results)". Returns the exit code: 0; 2 for usage
 * errors and malformed, truncated or newer-schema reports (nothing imported); 3
 * for a missing or unreadable file (nothing imported) and store failures. */
int cmd_import(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'D'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL;
    kb_run *runs = NULL;
    kb_store *s = NULL;
    kb_err e = {{0}};
    kb_status st = KB_OK;
    int nfiles = 0, nbad = 0;

    int rc = kb_cli_options(argc, argv, "import", import_usage, ":h", longopts, import_option,
                            &db);
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

    st = kb_store_open(kb_cli_db_path(db), 1, &s, &e);
    if (st != KB_OK) {
        kb_cli_fail(st, &e);
        goto done;
    }
    for (int i = 0; i < nfiles; i++) {
        st = kb_store_import_run(s, &runs[i], &e);
        if (st != KB_OK) {
            kb_cli_fail(st, &e);
            goto done;
        }
        printf("imported %s as run %lld (%zu results)\n", files[i], (long long)runs[i].id,
               runs[i].nresults);
    }
done:
    kb_store_close(s);
    if (runs)
        for (int i = 0; i < nfiles; i++)
            kb_run_release(&runs[i]);
    free(runs);
    return kb_cli_finish_stdout(st);
}
