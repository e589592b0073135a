/* cmd_list.c - `kbench list [OP]`: operators, their variants, dtypes, default
 * shapes and what each variant demonstrates. Needs no GPU. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "kernels/op.h"
#include "kernels/shape.h"

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
    if (detail)
        for (int i = 0; i < op->naxes; i++)
            printf("  axis %-8s %s (default %lld, %lld..%lld)\n", op->axes[i].name,
                   op->axes[i].help, (long long)op->axes[i].dflt, (long long)op->axes[i].min,
                   (long long)op->axes[i].max);
    for (int i = 0; i < op->nvariants; i++) {
        const kb_variant *v = &op->variants[i];
        dtypes_str(v->dtypes, dts, sizeof dts);
        printf("  %-16s %-15s %s\n", v->name, dts, v->summary);
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
