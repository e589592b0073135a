/* shape.c - operator shapes from and to text. */
#include "shape.h"

#include <stdio.h>
#include <string.h>

void kb_shape_default(const kb_op *op, int64_t *shape)
{
    for (int i = 0; i < op->naxes; i++)
        shape[i] = op->axes[i].dflt;
}

static void axis_list(const kb_op *op, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < op->naxes && used < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", op->axes[i].name);
        if (w < 0)
            return;
        used += (size_t)w;
    }
}

kb_status kb_shape_parse(const kb_op *op, const char *text, int64_t *shape, kb_err *e)
{
    char buf[512], names[256];
    int seen[KB_MAX_AXES] = {0};
    kb_shape_default(op, shape);
    if (kb_strlcpy(buf, text, sizeof buf))
        return kb_fail(e, KB_EUSAGE, "--shape is too long: '%.40s...'", text);
    if (!buf[0])
        return kb_fail(e, KB_EUSAGE, "--shape is empty (expected axis=value pairs)");
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return kb_fail(e, KB_EUSAGE,
                           "--shape part '%s' has no '=' (expected axis=value, e.g. %s=%lld)",
                           tok, op->axes[0].name, (long long)op->axes[0].dflt);
        *eq = '\0';
        const char *val = eq + 1;
        int ax = -1;
        for (int i = 0; i < op->naxes; i++)
            if (strcmp(op->axes[i].name, tok) == 0)
                ax = i;
        if (ax < 0) {
            axis_list(op, names, sizeof names);
            return kb_fail(e, KB_EUSAGE, "unknown axis '%s' for %s (axes: %s)", tok, op->name,
                           names);
        }
        if (seen[ax]++)
            return kb_fail(e, KB_EUSAGE, "axis '%s' given twice in --shape", tok);
        char what[64];
        snprintf(what, sizeof what, "axis %s", tok);
        kb_status st = kb_parse_i64(val, op->axes[ax].min, op->axes[ax].max, what, &shape[ax], e);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

void kb_shape_str(const kb_op *op, const int64_t *shape, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < op->naxes && used < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s=%lld", i ? "," : "", op->axes[i].name,
                         (long long)shape[i]);
        if (w < 0)
            return;
        used += (size_t)w;
    }
}
