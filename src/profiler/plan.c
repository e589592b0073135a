/* plan.c - the cases of a run (see plan.h). */
#include "profiler/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/dtype.h"
#include "kernels/shape.h"
#include "util/status.h"
#include "profiler/policy.h"

/* 1 when variant v is selected by the plan's list. */
static int selected(const kb_plan *p, const kb_variant *v)
{
    return !p->variants || !strcmp(p->variants, "all") || kb_list_has(p->variants, v->name);
}

static kb_status find_ops(kb_plan *p, const char *name, kb_err *e)
{
    if (!strcmp(name, "all")) {
        p->ops = kb_ops(&p->nops);
        return KB_OK;
    }
    p->one = kb_op_find(name);
    if (!p->one) {
        const char *s = kb_op_suggest(name);
        if (s)
            return kb_fail(e, KB_EUSAGE, "unknown operator '%s' (did you mean '%s'?)", name, s);
        return kb_fail(e, KB_EUSAGE, "unknown operator '%s' (see 'kbench list')", name);
    }
    p->ops = &p->one;
    p->nops = 1;
    return KB_OK;
}

/* Takes variant file t (a --variants entry ending in ".cu") into the plan. */
static kb_status add_file(kb_plan *p, const char *t, kb_err *e)
{
    char name[48], other[48];
    struct stat sb;
    if (p->nops != 1)
        return kb_fail(e, KB_EUSAGE, "variant file '%s' needs one operator, not 'all'", t);
    if (stat(t, &sb) != 0 || !S_ISREG(sb.st_mode))
        return kb_fail(e, KB_EUSAGE, "no variant file '%s'", t);
    kb_status st = kb_user_name(t, name, sizeof name, e);
    if (st != KB_OK)
        return st;
    if (kb_variant_find(p->ops[0], name))
        return kb_fail(e, KB_EUSAGE, "variant file '%s' is named like the built-in variant '%s' "
                                     "of %s; rename the file",
                       t, name, p->ops[0]->name);
    for (int i = 0; i < p->nuser; i++)
        if (kb_user_name(p->user_path[i], other, sizeof other, e) == KB_OK &&
            !strcmp(other, name))
            return kb_fail(e, KB_EUSAGE, "two variant files named '%s': '%s' and '%s'", name,
                           p->user_path[i], t);
    if (p->nuser == KB_USER_MAX)
        return kb_fail(e, KB_EUSAGE, "at most %d variant files", KB_USER_MAX);
    p->user_path[p->nuser++] = t;
    return KB_OK;
}

/* Every name of the variant list must name a variant of some chosen operator,
 * or a variant file (kept in p->files). */
static kb_status check_variants(kb_plan *p, kb_err *e)
{
    if (!p->variants || !strcmp(p->variants, "all"))
        return KB_OK;
    char buf[512];
    if (kb_strlcpy(buf, p->variants, sizeof buf))
        return kb_fail(e, KB_EUSAGE, "--variants is too long");
    if (!(p->files = strdup(p->variants)))
        return kb_fail(e, KB_EENV, "out of memory planning the run");
    const char *whose = p->nops == 1 ? p->ops[0]->name : "any operator";
    char *save = NULL, *fsave = NULL;
    char *f = strtok_r(p->files, ",", &fsave);
    for (char *t = strtok_r(buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save), f = strtok_r(NULL, ",", &fsave)) {
        if (kb_user_is_file(t)) {
            kb_status st = add_file(p, f, e);
            if (st != KB_OK)
                return st;
            continue;
        }
        int found = 0;
        for (int i = 0; i < p->nops && !found; i++)
            found = kb_variant_find(p->ops[i], t) != NULL;
        if (found)
            continue;
        const char *s = kb_variant_suggest(p->ops[0], t);
        if (s)
            return kb_fail(e, KB_EUSAGE, "unknown variant '%s' for %s (did you mean '%s'?)", t,
                           whose, s);
        if (p->nops == 1)
            return kb_fail(e, KB_EUSAGE, "unknown variant '%s' for %s (see 'kbench list %s')", t,
                           whose, whose);
        return kb_fail(e, KB_EUSAGE, "unknown variant '%s' for %s (see 'kbench list')", t, whose);
    }
    return KB_OK;
}

static int dtypes_of(const kb_plan *p, const kb_op *op, kb_dtype *out);

/* Shape text t without its dtype=NAME entry, into out (n bytes); *only that
 * dtype + 1, 0 when t names none. */
static kb_status split_dtype(const char *t, char *out, size_t n, int *only, kb_err *e)
{
    char buf[256];
    if (kb_strlcpy(buf, t, sizeof buf) || strlen(t) >= n)
        return kb_fail(e, KB_EUSAGE, "shape '%s' is too long", t);
    *only = 0;
    size_t len = 0;
    out[0] = '\0';
    char *save = NULL;
    for (char *a = strtok_r(buf, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
        if (strncmp(a, "dtype=", 6) != 0) { /* fits: out is no shorter than t */
            len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", a);
            continue;
        }
        kb_dtype d;
        if (*only)
            return kb_fail(e, KB_EUSAGE, "shape '%s' names a dtype twice", t);
        if (kb_dtype_parse(a + 6, &d) != 0)
            return kb_fail(e, KB_EUSAGE, "shape '%s': unsupported dtype '%s' (fp32, fp16, bf16)",
                           t, a + 6);
        *only = (int)d + 1;
    }
    return KB_OK;
}

/* Every dtype of the run must be one of each operator's. */
static kb_status check_dtypes(const kb_plan *p, kb_err *e)
{
    for (int i = 0; i < p->nops; i++)
        for (int k = 0; k < p->ndtypes; k++)
            if (!(p->ops[i]->dtypes & KB_DT(p->dtypes[k])))
                return kb_fail(e, KB_EUSAGE, "unsupported dtype '%s' for %s",
                               kb_dtype_name(p->dtypes[k]), p->ops[i]->name);
    return KB_OK;
}

/* The shapes of operator i, from the texts without their dtype entries; a
 * shape's dtype must be one the operator runs in. */
static kb_status op_cases(kb_plan *p, int i, char (*texts)[256], const char *const *shapes,
                          kb_err *e)
{
    const kb_op *op = p->ops[i];
    kb_dtype dts[KB_DTYPE_COUNT];
    const int nd = dtypes_of(p, op, dts);
    for (int k = 0; k < p->nshapes; k++) {
        int used = !p->only[k];
        for (int t = 0; t < nd; t++)
            used |= p->only[k] == (int)dts[t] + 1;
        if (!used) {
            char list[64] = "";
            size_t ll = 0;
            for (int t = 0; t < nd && ll < sizeof list; t++)
                ll += (size_t)snprintf(list + ll, sizeof list - ll, "%s%s", t ? ", " : "",
                                       kb_dtype_name(dts[t]));
            return kb_fail(e, KB_EUSAGE, "shape '%s': dtype '%s' is not one the run uses (%s)",
                           shapes[k], kb_dtype_name((kb_dtype)(p->only[k] - 1)), list);
        }
        kb_status st = kb_shape_parse(op, texts[k], p->shape[i][k], e);
        if (st != KB_OK)
            return st;
    }
    if (!p->nshapes)
        kb_shape_default(op, p->shape[i][0]);
    return KB_OK;
}

kb_status kb_plan_init(kb_plan *p, const char *op, const char *variants,
                       const char *const *shapes, int nshapes, const kb_dtype *dtypes,
                       int ndtypes, kb_err *e)
{
    kb_status st = KB_OK;
    char texts[KB_PLAN_MAX_SHAPES][256]; /* the shape texts without dtype= */
    memset(p, 0, sizeof *p);
    if (nshapes > KB_PLAN_MAX_SHAPES)
        return kb_fail(e, KB_EUSAGE, "at most %d --shape options", KB_PLAN_MAX_SHAPES);
    if (ndtypes > KB_DTYPE_COUNT)
        return kb_fail(e, KB_EUSAGE, "at most %d dtypes", KB_DTYPE_COUNT);
    p->variants = variants;
    p->nshapes = nshapes;
    p->ndtypes = ndtypes;
    if (ndtypes > 0)
        memcpy(p->dtypes, dtypes, (size_t)ndtypes * sizeof *dtypes);
    KB_TRY(find_ops(p, op, e));
    KB_TRY(check_variants(p, e));
    p->shape = calloc((size_t)p->nops, sizeof *p->shape);
    if (!p->shape) {
        st = kb_fail(e, KB_EENV, "out of memory planning the run");
        goto done;
    }
    KB_TRY(check_dtypes(p, e));
    for (int k = 0; k < nshapes; k++) /* once, for every operator */
        KB_TRY(split_dtype(shapes[k], texts[k], sizeof texts[k], &p->only[k], e));
    for (int i = 0; i < p->nops; i++)
        KB_TRY(op_cases(p, i, texts, shapes, e));
done:
    if (st != KB_OK)
        kb_plan_release(p);
    return st;
}

void kb_plan_set_user(kb_plan *p, int i, const kb_variant *v)
{
    if (i >= 0 && i < p->nuser)
        p->user[i] = v;
}

void kb_plan_release(kb_plan *p)
{
    free(p->shape);
    free(p->files);
    memset(p, 0, sizeof *p);
}

/* The dtypes of op: the plan's, or the operator's own default. */
static int dtypes_of(const kb_plan *p, const kb_op *op, kb_dtype *out)
{
    if (!p->ndtypes) {
        out[0] = op->default_dtype;
        return 1;
    }
    for (int t = 0; t < p->ndtypes; t++)
        out[t] = p->dtypes[t];
    return p->ndtypes;
}

static int nshapes(const kb_plan *p)
{
    return p->nshapes ? p->nshapes : 1;
}

/* Whether shape k of operator i runs in dtype d: every dtype, or the one its
 * text named. */
static int shape_runs(const kb_plan *p, int k, kb_dtype d)
{
    return !p->nshapes || !p->only[k] || p->only[k] == (int)d + 1;
}

/* Whether shape k of operator i runs in dtype d as an earlier one of it does
 * (two --shape texts that give the same case: it runs once). */
static int repeated_case(const kb_plan *p, int i, int k, kb_dtype d)
{
    for (int j = 0; j < k; j++)
        if (shape_runs(p, j, d) &&
            memcmp(p->shape[i][j], p->shape[i][k], sizeof p->shape[i][k]) == 0)
            return 1;
    return 0;
}

int kb_plan_count(const kb_plan *p)
{
    kb_plan_iter it = {0, 0, 0, 0};
    kb_plan_case c;
    int n = 0;
    while (kb_plan_next(p, &it, &c))
        n++;
    return n;
}

int kb_plan_next(const kb_plan *p, kb_plan_iter *it, kb_plan_case *c)
{
    kb_dtype dts[KB_DTYPE_COUNT];
    for (; it->op < p->nops; it->op++, it->shape = 0) {
        const kb_op *op = p->ops[it->op];
        const int nd = dtypes_of(p, op, dts);
        for (; it->shape < nshapes(p); it->shape++, it->dtype = 0) {
            for (; it->dtype < nd; it->dtype++, it->variant = 0) {
                if (!shape_runs(p, it->shape, dts[it->dtype]) ||
                    repeated_case(p, it->op, it->shape, dts[it->dtype]))
                    continue;
                while (it->variant < op->nvariants + p->nuser) {
                    const int k = it->variant++;
                    const int u = k - op->nvariants; /* a variant file when >= 0 */
                    const kb_variant *v = u < 0 ? &op->variants[k] : p->user[u];
                    if (u < 0 ? p->user_only || !selected(p, v)
                              : !v || (p->user_only && !(p->user_only & (1u << u))))
                        continue;
                    *c = (kb_plan_case){op, v, dts[it->dtype], p->shape[it->op][it->shape]};
                    return 1;
                }
            }
        }
    }
    return 0;
}

kb_status kb_plan_fits(const kb_plan *p, const kb_device *dev, kb_err *e)
{
    kb_dtype dts[KB_DTYPE_COUNT];
    for (int i = 0; i < p->nops; i++) {
        const int nd = dtypes_of(p, p->ops[i], dts);
        for (int k = 0; k < nshapes(p); k++)
            for (int t = 0; t < nd; t++) {
                if (!shape_runs(p, k, dts[t]))
                    continue;
                kb_status st = kb_case_fits(p->ops[i], dts[t], p->shape[i][k], dev, e);
                if (st != KB_OK)
                    return st;
            }
    }
    return KB_OK;
}
