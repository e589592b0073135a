/* cli.c - what every command shares (cli.h): the store path, one-line
 * messages on stderr, the checked end of stdout, and the table-driven option
 * parser. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "report/format.h"
#include "util/text.h"

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
    kb_cli_error(s, "%s", e->msg[0] ? e->msg : "failed");
    for (const char *p = kb_err_more(e); *p;) { /* each line under it, indented, made safe */
        char line[sizeof e->msg];
        const size_t len = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        fputs("  ", stderr);
        kb_put_safe(stderr, KB_SAFE_TERM, line);
        fputc('\n', stderr);
        p += len + (p[len] == '\n');
    }
    return (int)s;
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

kb_text_layout kb_cli_text_layout(const char *out, int wide)
{
    /* A terminal narrower than this still gets MIN_WIDTH: tables cannot shrink
     * below their numbers. */
    enum { MIN_WIDTH = 60 };
    kb_text_layout l = {KB_TEXT_WIDTH, wide};
    struct winsize ws;
    if (!wide && strcmp(out, "-") == 0 && isatty(STDOUT_FILENO) &&
        ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        l.width = ws.ws_col > MIN_WIDTH ? ws.ws_col : MIN_WIDTH;
    return l;
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

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void kb_cli_join_env(char *const *envp, char *buf, size_t n)
{
    const char *pick[256];
    size_t np = 0, used = 0, i;
    int over = 0; /* more entries than pick holds: marked as those that do not fit */
    static const char dots[] = " ...";
    if (n == 0)
        return;
    buf[0] = '\0';
    for (; envp && *envp; envp++)
        if (strncmp(*envp, "KBENCH_", 7) == 0 && strncmp(*envp, "KBENCH_DB=", 10) != 0) {
            if (np < KB_COUNT(pick))
                pick[np++] = *envp;
            else
                over = 1;
        }
    qsort(pick, np, sizeof *pick, cmp_cstr);
    for (i = 0; i < np; i++) {
        const size_t len = strlen(pick[i]) + (i ? 1 : 0);
        if (used + len + 1 > n)
            break;
        snprintf(buf + used, n - used, "%s%s", i ? " " : "", pick[i]);
        used += len;
    }
    const char *mark = used ? dots : dots + 1;
    if ((i < np || over) && used + strlen(mark) + 1 <= n)
        memcpy(buf + used, mark, strlen(mark) + 1);
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

/* The option getopt_long just returned with a value, as the user typed it:
 * "--json" (of "--json X" or "--json=X") or "-o" (of "-o X" or "-oX"), into
 * b[n]. */
static void typed_option(char **argv, const char *value, int code, char *b, size_t n)
{
    const char *tok = optind >= 2 && argv[optind - 1] == value ? argv[optind - 2]
                                                              : argv[optind - 1];
    if (strncmp(tok, "--", 2) == 0)
        snprintf(b, n, "%.*s", (int)strcspn(tok, "="), tok);
    else
        snprintf(b, n, "-%c", code);
}

/* Checks the value of option o by its kind; KB_EUSAGE with the message
 * printed when it is empty, or a list with an empty item. */
static int check_value(const kb_cli_opt *o, char **argv, const char *v)
{
    static const char *const what[] = {"", "", "value", "path", "list"};
    char name[64];
    if (o->kind == KB_ARG_NONE || o->kind == KB_ARG_TEXT)
        return -1;
    typed_option(argv, v, o->code, name, sizeof name);
    if (!*v)
        return kb_cli_error(KB_EUSAGE, "empty %s for option '%s'", what[o->kind], name);
    if (o->kind == KB_ARG_LIST) {
        const size_t n = strlen(v);
        if (v[0] == ',' || v[n - 1] == ',' || strstr(v, ",,"))
            return kb_cli_error(KB_EUSAGE, "empty item in the list of option '%s': '%s'", name,
                                v);
    }
    return -1;
}

int kb_cli_options(int argc, char **argv, const char *cmd, const char *usage, const char *shorts,
                   const kb_cli_opt *opts, size_t nopts, kb_cli_opt_fn fn, void *ctx)
{
    struct option longs[KB_CLI_MAX_OPTS + 1];
    int c;
    if (nopts > KB_CLI_MAX_OPTS)
        return kb_cli_error(KB_EUSAGE, "%s has more than %d options", cmd, KB_CLI_MAX_OPTS);
    for (size_t i = 0; i < nopts; i++)
        longs[i] = (struct option){opts[i].name,
                                   opts[i].kind == KB_ARG_NONE ? no_argument : required_argument,
                                   NULL, opts[i].code};
    longs[nopts] = (struct option){NULL, 0, NULL, 0};
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
        for (size_t i = 0; i < nopts; i++) {
            int rc = opts[i].code == c && optarg ? check_value(&opts[i], argv, optarg) : -1;
            if (rc >= 0)
                return rc;
        }
        int rc = fn(ctx, c, optarg);
        if (rc >= 0)
            return rc;
    }
    return -1;
}

