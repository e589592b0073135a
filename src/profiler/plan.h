/* plan.h - the cases of a run (`kbench run OP|all`): every chosen operator at
 * every shape, in every dtype, with every chosen variant, in that order. Each
 * operator runs in its own default dtype unless dtypes are given. Building a
 * plan checks every name against the registry, with the messages the user
 * sees. */
#ifndef KB_PLAN_H
#define KB_PLAN_H

#include <stdint.h>

#include "kernels/op.h"
#include "profiler/userkernel.h"
#include "results/result.h"
#include "util/status.h"

/* --shape options of one run. */
#define KB_PLAN_MAX_SHAPES 32

typedef struct kb_plan {
    const kb_op *const *ops; /* the operators, in registry order */
    int nops;
    const kb_op *one;        /* storage for ops when a single operator is named */
    const char *variants;    /* NULL or "all": every variant; else a comma list (borrowed) */
    int nshapes;             /* shapes given; 0: each operator's default shape */
    int64_t (*shape)[KB_PLAN_MAX_SHAPES][KB_MAX_AXES]; /* [op][k]: shape k for op; owned */
    int only[KB_PLAN_MAX_SHAPES]; /* shape k's dtype + 1 if its text named one, else 0 */
    kb_dtype dtypes[KB_DTYPE_COUNT];
    int ndtypes;             /* 0: each operator's default_dtype */
    /* Variant files: the --variants entries that end in ".cu" (one operator
     * only), run after the built-in variants; each row is set by
     * kb_plan_set_user once the file is built and loaded. */
    char *files;             /* owned: the copy of --variants the paths point into */
    const char *user_path[KB_USER_MAX];
    int nuser;
    const kb_variant *user[KB_USER_MAX]; /* NULL until set */
    unsigned user_only;      /* nonzero: only the files whose bit is set run (--watch) */
} kb_plan;

/* One case of the plan. */
typedef struct kb_plan_case {
    const kb_op *op;
    const kb_variant *v;
    kb_dtype dtype;
    const int64_t *shape; /* the plan's */
} kb_plan_case;

/* Where an iteration over the plan stands; zero it to start. */
typedef struct kb_plan_iter {
    int op, shape, dtype, variant;
} kb_plan_iter;

/* Builds the plan of operator `op` ("all": every operator), `variants` (NULL,
 * "all" or a comma list of names), the shape texts shapes[0 .. nshapes) (axis=value
 * lists, parsed per operator; an entry dtype=NAME runs that shape in that dtype
 * only, which must be one the run uses) and dtypes[0 .. ndtypes). KB_EUSAGE, checked in
 * this order: "unknown operator 'x' (did you mean 'y'?)", "unknown variant 'x'
 * for OP (did you mean 'y'?)", "unsupported dtype 'x' for OP", the shape's own
 * errors (kb_shape_parse); for variant files (entries ending in ".cu"):
 * "variant file 'x.cu' needs one operator, not 'all'", "no variant file
 * 'x.cu'", a bad file name (kb_user_name), "variant file 'x.cu' is named like
 * the built-in variant 'fused' of softmax", "two variant files named 'x'",
 * "at most 8 variant files", "shape 'dtype=fp16,...': dtype 'fp16' is not one
 * the run uses (fp32, bf16)"; KB_EENV when out of memory. Shapes that give the
 * same case (the same text twice, or one naming only defaults, or one limited
 * to a dtype after the same shape unlimited) run once. On
 * success the caller
 * owns *p (kb_plan_release); the strings stay the caller's and must outlive it. */
kb_status kb_plan_init(kb_plan *p, const char *op, const char *variants,
                       const char *const *shapes, int nshapes, const kb_dtype *dtypes,
                       int ndtypes, kb_err *e);

/* Sets the row of variant file i (user_path[i]) to v (borrowed). */
void kb_plan_set_user(kb_plan *p, int i, const kb_variant *v);

/* Frees what the plan owns; safe on a zeroed plan. */
void kb_plan_release(kb_plan *p);

/* How many cases the plan runs. */
int kb_plan_count(const kb_plan *p);

/* Sets *c to the next case and returns 1, or returns 0 when there is none. */
int kb_plan_next(const kb_plan *p, kb_plan_iter *it, kb_plan_case *c);

/* KB_OK when every shape of the plan fits on dev in each of its dtypes
 * (kb_case_fits); else the first refusal. */
kb_status kb_plan_fits(const kb_plan *p, const kb_device *dev, kb_err *e);

#endif
