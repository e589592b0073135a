/* cmd_report.c - `kbench report`: a stored run or a JSON report file as text,
 * markdown, JSON, CSV or one self-contained HTML page, its per-kernel detail
 * (--kernels), or the list of stored runs. Needs no GPU and never creates a
 * store. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/html.h"
#include "report/writers.h"
#include "store/json.h"
#include "store/store.h"
#include "util/file.h"

static const char report_usage[] =
    "usage: kbench report [RUN] [--format text|md|json|csv|html] [-o FILE] [--db PATH]\n"
    "       kbench report [RUN] --kernels [--format text|md] [-o FILE] [--db PATH]\n"
    "       kbench report [RUN] --wide [-o FILE] [--db PATH]\n"
    "       kbench report --runs [--db PATH]\n"
    "\n"
    "Prints a stored run: RUN is its id, or 'latest' (the default: the stored run\n"
    "that started last, imported ones included), or a JSON report file (a path\n"
    "with '/' or ending in .json), read without a store.\n"
    "\n"
    "  --format FMT     text (default), md (markdown), json (the report schema of\n"
    "                   docs/json.md), csv (one row per result) or html (one\n"
    "                   self-contained page with tables and charts: time per\n"
    "                   variant, roofline, stall reasons; works offline)\n"
    KB_CLI_HELP_OUTPUT
    "  --db PATH        the store (default: $KBENCH_DB, else " KB_DEFAULT_DB ")\n"
    "  --kernels        per-kernel detail of each result: grid, block, registers,\n"
    "                   shared and local memory, theoretical occupancy and its\n"
    "                   limiter, and the metrics and stall reasons when collected\n"
    "                   (text or md; the JSON report holds all of it)\n"
    "  --runs           list the stored runs instead\n"
    "  --timing T       the tables' headline time: cold (the median of samples\n"
    "                   after an L2 flush; default) or batch (back-to-back calls)\n"
    "  --wide           text: every column (kernels, spill, extra mem, DRAM GB/s\n"
    "                   too) and lines as long as they need; without it a table\n"
    "                   fits 100 columns, or the terminal's width\n"
    KB_CLI_HELP_HELP;

typedef kb_status (*report_writer)(FILE *f, const kb_run *run, kb_err *e);

/* Per format: the report writer and the --kernels writer (NULL: none). */
static const struct {
    const char *name;
    report_writer write;
    report_writer kernels;
} formats[] = {
    {"text", kb_write_text, kb_write_kernels_text},
    {"md", kb_write_markdown, kb_write_kernels_markdown},
    {"json", kb_json_write_run, NULL},
    {"csv", kb_write_csv, NULL},
    {"html", kb_html_write_run, NULL},
};

/* What goes out: a run through a writer, or (write NULL) the list of runs. */
typedef struct emit {
    report_writer write;
    const kb_run *run;
    kb_store *store;
    kb_text_layout layout; /* of the text report */
} emit;

static kb_status emit_to(FILE *f, const void *ctx, kb_err *e)
{
    const emit *em = ctx;
    if (em->write == kb_write_text)
        return kb_write_text_laid_out(f, em->run, &em->layout, e);
    return em->write ? em->write(f, em->run, e) : kb_store_list_runs(em->store, f, e);
}

/* The options of report. */
typedef struct report_opts {
    kb_cli_output o;
    int list, kernels, wide;
    kb_timing timing;
} report_opts;

static int report_option(void *ctx, int c, const char *arg)
{
    report_opts *o = ctx;
    if (c == 'T' && kb_timing_parse(arg, &o->timing) != 0)
        return kb_cli_error(KB_EUSAGE, "unknown timing '%s' (cold, batch)", arg);
    if (!kb_cli_output_option(&o->o, c, arg)) {
        o->list |= c == 'R';
        o->kernels |= c == 'K';
        o->wide |= c == 'W';
    }
    return -1;
}

/* `kbench report [RUN] [--format F] [-o FILE] [--db PATH] [--kernels] [--runs]`; argv[0] is
 * "report". Returns the exit code: 0, 2 for usage errors (bad option, format or
 * run id, a run not in the store), 3 for a missing or unreadable store and I/O
 * failures. Never creates a store. */
int cmd_report(int argc, char **argv)
{
    static const kb_cli_opt opts[] = {
        KB_CLI_OUTPUT_OPTIONS,
        {"runs", 'R', KB_ARG_NONE},
        {"kernels", 'K', KB_ARG_NONE},
        {"timing", 'T', KB_ARG_VALUE},
        {"wide", 'W', KB_ARG_NONE},
    };
    report_opts o = {{"text", "-", NULL}, 0, 0, 0, KB_TIMING_COLD};
    const char *run_arg = NULL;
    int fi = -1;
    report_writer writer;
    int64_t id = 0;
    kb_err e = {{0}};
    kb_store *s = NULL;
    kb_run run;
    kb_status st = KB_OK;

    kb_run_init(&run);
    int rc = kb_cli_options(argc, argv, "report", report_usage, ":o:h", opts, KB_COUNT(opts),
                            report_option, &o);
    if (rc >= 0)
        return rc;
    for (int i = optind; i < argc; i++) {
        if (run_arg)
            return kb_cli_error(KB_EUSAGE, "unexpected argument '%s' for report (one RUN at most)",
                                argv[i]);
        run_arg = argv[i];
    }
    for (size_t i = 0; i < KB_COUNT(formats); i++)
        if (strcmp(o.o.format, formats[i].name) == 0)
            fi = (int)i;
    if (fi < 0)
        return kb_cli_error(KB_EUSAGE, "unknown format '%s' (text, md, json, csv, html)",
                            o.o.format);
    if (o.list && run_arg)
        return kb_cli_error(KB_EUSAGE, "--runs takes no run id, got '%s'", run_arg);
    if (o.list && o.kernels)
        return kb_cli_error(KB_EUSAGE, "--kernels and --runs cannot be used together");
    if (o.kernels && !formats[fi].kernels)
        return kb_cli_error(KB_EUSAGE,
                            "--kernels works with --format text or md, not '%s' (the JSON "
                            "report holds every kernel's figures)",
                            o.o.format);
    writer = o.kernels ? formats[fi].kernels : formats[fi].write;
    if ((st = kb_check_writable(o.o.out, "-o", &e)) != KB_OK)
        goto done;
    if (run_arg && kb_report_arg_is_file(run_arg)) {
        /* a JSON report instead of a stored run: no store is opened */
        emit fe = {writer, &run, NULL, kb_cli_text_layout(o.o.out, o.wide)};
        st = kb_json_load_run(run_arg, &run, &e);
        run.timing = o.timing;
        if (st == KB_OK)
            st = kb_write_atomic(o.o.out, emit_to, &fe, &e);
        goto done;
    }
    if (run_arg && strcmp(run_arg, "latest") != 0 &&
        kb_parse_i64(run_arg, 1, INT64_MAX, "run id", &id, &e) != KB_OK)
        return kb_cli_error(KB_EUSAGE, "run id must be a positive integer or 'latest', got '%s'",
                            run_arg);

    st = kb_store_open(kb_cli_db_path(o.o.db), 0, &s, &e);
    if (st != KB_OK)
        goto done;
    emit em = {NULL, &run, s, kb_cli_text_layout(o.o.out, o.wide)};
    if (!o.list) {
        st = kb_store_load_run(s, id, &run, &e);
        if (st != KB_OK)
            goto done;
        run.timing = o.timing;
        em.write = writer;
    }
    st = kb_write_atomic(o.o.out, emit_to, &em, &e);
done:
    kb_run_release(&run);
    kb_store_close(s);
    if (st != KB_OK)
        return kb_cli_fail(st, &e);
    return kb_cli_finish_stdout(KB_OK);
}
