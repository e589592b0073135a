/* cmd_compare.c - `kbench compare BASE NEW`: loads two runs (stored run ids,
 * 'latest', or JSON report files, mixed as needed), compares them case by case
 * (results/compare.h) and writes the comparison as text, markdown, JSON or
 * HTML. Exit 1 when a case is SLOWER: the CI gate. Needs no GPU and never
 * creates a store. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/compare_view.h"
#include "report/html.h"
#include "results/compare.h"
#include "store/json.h"
#include "store/store.h"
#include "util/file.h"

static const char compare_usage[] =
    "usage: kbench compare BASE NEW [--threshold PCT] [--format text|md|json|html]\n"
    "                      [--wide] [-o FILE] [--db PATH]\n"
    "\n"
    "Compares two runs case by case (operator, variant, dtype, shape). BASE and NEW\n"
    "are each a stored run id, 'latest' (the stored run that started last), or a\n"
    "JSON report file (a path with '/' or ending in .json). Per case: the ratio of median times NEW/BASE with a 95%\n"
    "bootstrap interval from the stored samples, and a verdict:\n"
    "  FASTER     the interval lies below 1 - threshold\n"
    "  SLOWER     the interval lies above 1 + threshold\n"
    "  SAME       the interval lies within 1 +- threshold\n"
    "  UNCERTAIN  otherwise, or a side is not ok or has fewer than 5 samples\n"
    "Cases on one side only are listed as such. When the GPUs differ (device\n"
    "uuid), the ratio is that of each GPU's % of its own calibrated ceiling, so\n"
    "that a GPU change is not reported as a regression.\n"
    "\n"
    "  --threshold PCT  the change in percent that counts (default 5)\n"
    "  --wide           text: lines as long as they need (\"what moved\" whole);\n"
    "                   without it they fit 100 columns, or the terminal's width\n"
    "  --format FMT     text (default), md (a CI job summary), json, or html (one\n"
    "                   self-contained page)\n"
    KB_CLI_HELP_OUTPUT
    "  --db PATH        the store for run ids (default: $KBENCH_DB, else " KB_DEFAULT_DB ")\n"
    KB_CLI_HELP_HELP
    "\n"
    "exit codes: 0 no case is SLOWER, 1 some case is SLOWER, 2 usage error (bad\n"
    "option, report or run id, no case in common), 3 environment error (missing\n"
    "file, unusable store, I/O failure)\n";

typedef kb_status (*compare_writer)(FILE *f, const kb_compare *c, kb_err *e);

static const struct {
    const char *name;
    compare_writer write;
} formats[] = {
    {"text", kb_compare_write_text},
    {"md", kb_compare_write_markdown},
    {"json", kb_compare_write_json},
    {"html", kb_html_write_compare},
};

typedef struct compare_emit {
    compare_writer write;
    const kb_compare *cmp;
    kb_text_layout layout; /* of the text view */
} compare_emit;

static kb_status emit_compare(FILE *f, const void *ctx, kb_err *e)
{
    const compare_emit *ce = ctx;
    if (ce->write == kb_compare_write_text)
        return kb_compare_write_text_laid_out(f, ce->cmp, &ce->layout, e);
    return ce->write(f, ce->cmp, e);
}

/* Loads one side: a JSON report file, or a stored run (the store opened on
 * first use into *s). name gets what the views call it. */
static kb_status load_side(const char *arg, const char *db, kb_store **s, kb_run *run,
                           char *name, size_t n, kb_err *e)
{
    int64_t id = 0;
    kb_status st;
    if (kb_report_arg_is_file(arg)) {
        kb_strlcpy(name, arg, n);
        return kb_json_load_run(arg, run, e);
    }
    if (strcmp(arg, "latest") != 0 &&
        kb_parse_i64(arg, 1, INT64_MAX, "run id", &id, e) != KB_OK)
        return kb_fail(e, KB_EUSAGE,
                       "run id must be a positive integer, 'latest' or a JSON report file, got "
                       "'%s'",
                       arg);
    if (!*s && (st = kb_store_open(kb_cli_db_path(db), 0, s, e)) != KB_OK)
        return st;
    st = kb_store_load_run(*s, id, run, e);
    if (st == KB_OK)
        snprintf(name, n, "run %lld", (long long)run->id);
    return st;
}

/* The options of compare. */
typedef struct compare_opts {
    kb_cli_output o;
    double pct; /* --threshold, percent */
    int wide;   /* --wide */
} compare_opts;

static int compare_option(void *ctx, int c, const char *arg)
{
    compare_opts *o = ctx;
    kb_err e = {{0}};
    if (kb_cli_output_option(&o->o, c, arg))
        return -1;
    if (c == 'W') {
        o->wide = 1;
        return -1;
    }
    /* 'T' */
    if (kb_parse_double(arg, 0, 100, "--threshold", &o->pct, &e) != KB_OK)
        return kb_cli_fail(KB_EUSAGE, &e);
    return -1;
}

/* `kbench compare BASE NEW [--threshold PCT] [--format F] [-o FILE] [--db PATH]`;
 * argv[0] is "compare". Returns the exit code: 0 no case SLOWER, 1 some case
 * SLOWER, 2 usage errors (bad option, threshold, format, run id or report, a
 * run not in the store, no case in common), 3 for a missing file or store and
 * I/O failures. Never creates a store. */
int cmd_compare(int argc, char **argv)
{
    static const kb_cli_opt opts[] = {
        KB_CLI_OUTPUT_OPTIONS,
        {"threshold", 'T', KB_ARG_VALUE},
        {"wide", 'W', KB_ARG_NONE},
    };
    compare_opts o = {{"text", "-", NULL}, 100.0 * KB_CMP_THRESHOLD, 0};
    const char *args[2] = {NULL, NULL};
    char base_name[512], new_name[512];
    int fi = -1, nargs = 0, regressed = 0;
    kb_err e = {{0}};
    kb_store *s = NULL;
    kb_run base, cur;
    kb_compare cmp;
    kb_status st = KB_OK;

    kb_run_init(&base);
    kb_run_init(&cur);
    memset(&cmp, 0, sizeof cmp);
    int rc = kb_cli_options(argc, argv, "compare", compare_usage, ":o:h", opts, KB_COUNT(opts),
                            compare_option, &o);
    if (rc >= 0)
        return rc;
    for (int i = optind; i < argc; i++) {
        if (nargs == 2)
            return kb_cli_error(KB_EUSAGE,
                                "unexpected argument '%s' for compare (BASE and NEW only)",
                                argv[i]);
        args[nargs++] = argv[i];
    }
    if (nargs < 2)
        return kb_cli_error(KB_EUSAGE, "compare needs BASE and NEW (run ids, 'latest' or JSON "
                                       "report files; see 'kbench compare -h')");
    for (size_t i = 0; i < KB_COUNT(formats); i++)
        if (strcmp(o.o.format, formats[i].name) == 0)
            fi = (int)i;
    if (fi < 0)
        return kb_cli_error(KB_EUSAGE, "unknown format '%s' (text, md, json, html)", o.o.format);
    if ((st = kb_check_writable(o.o.out, "-o", &e)) != KB_OK)
        goto done;

    if ((st = load_side(args[0], o.o.db, &s, &base, base_name, sizeof base_name, &e)) != KB_OK ||
        (st = load_side(args[1], o.o.db, &s, &cur, new_name, sizeof new_name, &e)) != KB_OK)
        goto done;
    st = kb_compare_runs(&base, base_name, &cur, new_name, o.pct / 100.0, &cmp, &e);
    if (st != KB_OK)
        goto done;
    compare_emit ce = {formats[fi].write, &cmp, kb_cli_text_layout(o.o.out, o.wide)};
    st = kb_write_atomic(o.o.out, emit_compare, &ce, &e);
    regressed = kb_compare_regressed(&cmp);
done:
    kb_compare_release(&cmp);
    kb_run_release(&base);
    kb_run_release(&cur);
    kb_store_close(s);
    if (st != KB_OK)
        return kb_cli_fail(st, &e);
    return kb_cli_finish_stdout(regressed ? KB_ECHECK : KB_OK);
}
