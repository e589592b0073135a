/* cli.h - the command table and what every command shares: the store path,
 * error printing and the -h convention.
 *
 * Adding a command: write src/cli/cmd_<name>.c with
 *   int cmd_<name>(int argc, char **argv);   (argv[0] is the command name)
 * that answers -h/--help with its usage on stdout and exit 0, returns a
 * kb_status as its exit code, and prints errors through kb_cli_error(); then add
 * a row to the table in src/cli/main.c. */
#ifndef KB_CLI_H
#define KB_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "report/writers.h"
#include "util/status.h"

#define KB_DEFAULT_DB "results/kbench.db"
/* --device at most: an ordinal past any machine's GPU count. */
#define KB_MAX_DEVICE 63

/* The version and git revision a run records; the Makefile passes both. */
#ifndef KB_VERSION
#define KB_VERSION "0.0.0"
#endif
#ifndef KB_GIT
#define KB_GIT "unknown"
#endif

typedef int (*kb_cmd_fn)(int argc, char **argv);

typedef struct kb_cmd {
    const char *name;
    kb_cmd_fn fn;
    const char *summary; /* one line for `kbench help` */
} kb_cmd;

int cmd_list(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_new(int argc, char **argv);

/* The store path: the --db value if given, else $KBENCH_DB, else KB_DEFAULT_DB. */
const char *kb_cli_db_path(const char *opt);

/* Prints "kbench: <msg>" on stderr and returns s (so `return kb_cli_error(...)`). */
int kb_cli_error(kb_status s, const char *fmt, ...) KB_PRINTF(2, 3);
/* Prints e->msg the same way, then each of its more lines (kb_err_more) under
 * it, indented by two spaces and made safe, and returns s. */
int kb_cli_fail(kb_status s, const kb_err *e);

/* Prints "kbench: warning: <msg>" on stderr. */
void kb_cli_warn(const char *fmt, ...) KB_PRINTF(1, 2);

/* Flushes and checks stdout; KB_EENV with a message when the write failed. */
int kb_cli_finish_stdout(int status);

/* The layout of a text report written to out ("-": stdout): every column and
 * no width limit with wide; else the terminal's width when stdout is one (and
 * out is "-"), else KB_TEXT_WIDTH. */
kb_text_layout kb_cli_text_layout(const char *out, int wide);

/* The whole command line as one string, for the run's record. */
void kb_cli_join_argv(int argc, char **argv, char *buf, size_t n);

/* The KBENCH_* entries of envp (NULL-terminated "NAME=value" strings) but
 * KBENCH_DB, which names the store rather than choosing what runs: sorted by
 * name and joined with spaces into buf, for the run's record. Entries that do
 * not fit are left out whole and "..." marks it where there is room; "" when
 * there are none. */
void kb_cli_join_env(char *const *envp, char *buf, size_t n);

/* Prints the usage error for the option getopt_long just refused in command
 * cmd (code '?' for an unknown option, ':' for a missing value) and returns
 * KB_EUSAGE: "unknown option '--x' for report". */
int kb_cli_bad_option(const char *cmd, int argc, char **argv, int code);

/* 1 when argv holds -h or --help before any "--". */
int kb_cli_wants_help(int argc, char **argv);

/* The options of the commands that write a report (report, compare): the
 * format, the output file and the store; with the long options that name them,
 * KB_CLI_OUTPUT_OPTIONS (with --help), for a getopt_long table. */
typedef struct kb_cli_output {
    const char *format; /* --format */
    const char *out;    /* -o, --output: a file, or "-" for stdout */
    const char *db;     /* --db, or NULL */
} kb_cli_output;

/* The help lines of the output options, as every command that takes them says
 * them (the --format and --db lines are each command's own). */
#define KB_CLI_HELP_OUTPUT "  -o, --output F   write to file F instead of stdout\n"
#define KB_CLI_HELP_HELP "  -h, --help       this help\n"

/* What an option's value must be. Every command's values are checked by kind
 * before the command sees them, with the same messages. */
typedef enum kb_cli_kind {
    KB_ARG_NONE,  /* a flag, no value */
    KB_ARG_TEXT,  /* any text, empty included (a tag) */
    KB_ARG_VALUE, /* a word that is not empty (a number, a name, a format) */
    KB_ARG_PATH,  /* a path that is not empty */
    KB_ARG_LIST,  /* a comma list of words, none empty ("a,b"; not "", ",", "a,,b") */
} kb_cli_kind;

/* One option of a command: a row of its table. Adding an option is adding a
 * row (and taking its code in the command's kb_cli_opt_fn). */
typedef struct kb_cli_opt {
    const char *name; /* the long name, without "--" */
    int code;         /* what the command's function receives: the short option's letter
                       * when it has one (listed in shorts), else any other character */
    kb_cli_kind kind;
} kb_cli_opt;

/* The most options a command has. */
#define KB_CLI_MAX_OPTS 48

#define KB_CLI_OUTPUT_OPTIONS                                                             \
    {"format", 'F', KB_ARG_VALUE}, {"output", 'o', KB_ARG_PATH}, {"db", 'D', KB_ARG_PATH}, \
        {"help", 'h', KB_ARG_NONE}

/* Takes getopt code c (arg its value) into o when it is one of
 * KB_CLI_OUTPUT_OPTIONS; returns 1 then, else 0. */
int kb_cli_output_option(kb_cli_output *o, int c, const char *arg);

/* Takes one option of a command: code is getopt_long's, arg its value (or
 * NULL). Returns -1 when it was taken, else the exit code to return. */
typedef int (*kb_cli_opt_fn)(void *ctx, int code, const char *arg);

/* The options of command cmd (argv[0]), opts[0 .. nopts) its table: answers
 * -h/--help anywhere before "--" with usage on stdout, then runs getopt_long
 * from argv[1] (shorts: the short options, as getopt spells them), checks each
 * value by its kind and passes every option to fn. Returns -1 when every
 * option was taken (optind is then the first operand), else the exit code: 0
 * after the usage, KB_EUSAGE for an unknown option, a missing value
 * (kb_cli_bad_option) or an empty value, list or list item (naming the option
 * as typed: "empty path for option '--json'"), or what fn returned. */
int kb_cli_options(int argc, char **argv, const char *cmd, const char *usage, const char *shorts,
                   const kb_cli_opt *opts, size_t nopts, kb_cli_opt_fn fn, void *ctx);

#endif
