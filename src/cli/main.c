/* main.c - kbench's entry point: the command table, dispatch, and the helpers
 * every command shares (cli.h). Only this file's main() exits. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/text.h"

static const kb_cmd commands[] = {
    {"list", cmd_list, "operators, variants, dtypes and default shapes"},
    {"devices", cmd_devices, "visible GPUs, their properties and calibrated ceilings"},
    {"calibrate", cmd_calibrate, "measure this GPU's ceilings and store them"},
    {"run", cmd_run, "verify, time and store variants of an operator"},
    {"report", cmd_report, "print a stored run or a JSON report (text, md, json, csv)"},
    {"import", cmd_import, "load JSON reports into the store"},
    {"compare", cmd_compare, "compare two runs or reports case by case (exit 1 on a regression)"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: kbench <command> [options]   (kbench <command> -h for its options)\n\n"
               "commands:\n");
    for (size_t i = 0; i < KB_COUNT(commands); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nexit codes: 0 success, 1 a check failed (wrong result), 2 usage error,\n"
               "3 environment or runtime error (no GPU, CUDA/SQLite/I-O failure)\n"
               "store: --db PATH, else $KBENCH_DB, else " KB_DEFAULT_DB "\n");
}

const char *kb_cli_db_path(const char *opt)
{
    if (opt)
        return opt;
    const char *env = getenv("KBENCH_DB");
    return env && *env ? env : KB_DEFAULT_DB;
}

/* "kbench: <prefix><message>" on one line of stderr: the message (which may
 * quote values from the command line or a report) made safe for a terminal. */
static void say(const char *prefix, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fputs("kbench: ", stderr);
    fputs(prefix, stderr);
    kb_put_safe(stderr, KB_SAFE_TERM, msg);
    fputc('\n', stderr);
}

int kb_cli_error(kb_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("", fmt, ap);
    va_end(ap);
    return (int)s;
}

int kb_cli_fail(kb_status s, const kb_err *e)
{
    return kb_cli_error(s, "%s", e->msg[0] ? e->msg : "failed");
}

void kb_cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("warning: ", fmt, ap);
    va_end(ap);
}

int kb_cli_finish_stdout(int status)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        return kb_cli_error(KB_EENV, "writing to standard output failed");
    return status;
}

void kb_cli_join_argv(int argc, char **argv, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && used + 1 < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s", i ? " " : "", argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int kb_cli_bad_option(const char *cmd, int argc, char **argv, int code)
{
    char opt[64];
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    if (strncmp(arg, "--", 2) == 0)
        snprintf(opt, sizeof opt, "%.*s", (int)strcspn(arg, "="), arg);
    else
        snprintf(opt, sizeof opt, "-%c", optopt ? optopt : '?');
    if (code == ':')
        return kb_cli_error(KB_EUSAGE, "option '%s' of %s needs a value", opt, cmd);
    return kb_cli_error(KB_EUSAGE, "unknown option '%s' for %s", opt, cmd);
}

int kb_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    }
    return 0;
}

int kb_cli_output_option(kb_cli_output *o, int c, const char *arg)
{
    switch (c) {
    case 'F':
        o->format = arg;
        return 1;
    case 'o':
        o->out = arg;
        return 1;
    case 'D':
        o->db = arg;
        return 1;
    default:
        return 0;
    }
}

int kb_cli_options(int argc, char **argv, const char *cmd, const char *usage, const char *shorts,
                   const struct option *longs, kb_cli_opt_fn fn, void *ctx)
{
    int c;
    if (kb_cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return kb_cli_finish_stdout(KB_OK);
    }
    optind = 0; /* main dispatches: restart getopt from argv[1] */
    opterr = 0;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h') { /* an abbreviation of --help */
            fputs(usage, stdout);
            return kb_cli_finish_stdout(KB_OK);
        }
        if (c == '?' || c == ':')
            return kb_cli_bad_option(cmd, argc, argv, c);
        int rc = fn(ctx, c, optarg);
        if (rc >= 0)
            return rc;
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return KB_EUSAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return kb_cli_finish_stdout(KB_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("kbench %s (%s)\n", KB_VERSION, KB_GIT);
        return kb_cli_finish_stdout(KB_OK);
    }
    for (size_t i = 0; i < KB_COUNT(commands); i++)
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    const char *best = NULL;
    int best_d = 3;
    for (size_t i = 0; i < KB_COUNT(commands); i++) {
        int d = kb_edit_distance(name, commands[i].name);
        if (d < best_d) {
            best_d = d;
            best = commands[i].name;
        }
    }
    if (best)
        return kb_cli_error(KB_EUSAGE, "unknown command '%s' (did you mean '%s'?)", name, best);
    return kb_cli_error(KB_EUSAGE, "unknown command '%s' (see 'kbench help')", name);
}
