/* cmd_list.c - `kbench list [OP]`: operators, their variants, dtypes, default
 * shapes and what each variant demonstrates. Needs no GPU. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "kernels/op.h"
#include "kernels/shape.h"
#include "report/format.h"

/* The variant-name column is at least this wide. */
enum { MIN_NAME = 16 };

static void dtypes_str(unsigned mask, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d < KB_DTYPE_COUNT; d++)
        if (mask & KB_DT(d)) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "",
                             kb_dtype_name((kb_dtype)d));
            if (w < 0 || (size_t)w >= n - used)
                return;
            used += (size_t)w;
        }
}

static void print_op(const kb_op *op, int detail)
{
    char shape[256], dts[32];
    int64_t dflt[KB_MAX_AXES];
    kb_shape_default(op, dflt);
    kb_shape_str(op, dflt, shape, sizeof shape);
    dtypes_str(op->dtypes, dts, sizeof dts);
    printf("%s - %s\n  dtypes: %s (default %s)   default shape: %s\n", op->name, op->summary,
           dts, kb_dtype_name(op->default_dtype), shape);
    char lead[96], text[512];
    if (detail)
        for (int i = 0; i < op->naxes; i++) {
            snprintf(lead, sizeof lead, "  axis %-8s ", op->axes[i].name);
            snprintf(text, sizeof text, "%s (default %lld, %lld..%lld)", op->axes[i].help,
                     (long long)op->axes[i].dflt, (long long)op->axes[i].min,
                     (long long)op->axes[i].max);
            kb_text_wrap(stdout, lead, text, KB_TEXT_WIDTH);
        }
    /* the names in one column, as wide as the longest (16 at least) */
    int w = MIN_NAME;
    for (int i = 0; i < op->nvariants; i++)
        w = (int)strlen(op->variants[i].name) > w ? (int)strlen(op->variants[i].name) : w;
    for (int i = 0; i < op->nvariants; i++) {
        const kb_variant *v = &op->variants[i];
        dtypes_str(v->dtypes, dts, sizeof dts);
        snprintf(lead, sizeof lead, "  %-*s %-15s ", w, v->name, dts);
        kb_text_wrap(stdout, lead, v->summary, KB_TEXT_WIDTH);
    }
}

int cmd_list(int argc, char **argv)
{
    if (kb_cli_wants_help(argc, argv)) {
        printf("usage: kbench list [OP]\n\n"
               "Lists the operators with their variants (name, dtypes, what each demonstrates)\n"
               "and default shapes; with OP, that operator alone with its axes.\n");
        return kb_cli_finish_stdout(KB_OK);
    }
    if (argc > 2)
        return kb_cli_error(KB_EUSAGE, "list takes at most one operator, got '%s'", argv[2]);
    if (argc == 2) {
        if (argv[1][0] == '-')
            return kb_cli_error(KB_EUSAGE, "unknown option '%s' for list", argv[1]);
        const kb_op *op = kb_op_find(argv[1]);
        if (!op) {
            const char *s = kb_op_suggest(argv[1]);
            if (s)
                return kb_cli_error(KB_EUSAGE, "unknown operator '%s' (did you mean '%s'?)",
                                    argv[1], s);
            return kb_cli_error(KB_EUSAGE, "unknown operator '%s' (see 'kbench list')",
                                argv[1]);
        }
        print_op(op, 1);
        return kb_cli_finish_stdout(KB_OK);
    }
    int n;
    const kb_op *const *ops = kb_ops(&n);
    for (int i = 0; i < n; i++) {
        if (i)
            printf("\n");
        print_op(ops[i], 0);
    }
    return kb_cli_finish_stdout(KB_OK);
}
