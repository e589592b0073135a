/* registry.c - the table of operators, name lookup with suggestions, the
 * launch notes that launchers leave for the harness, and the SM count they size
 * grids by. */
#include <string.h>

#include "op.h"

extern const kb_op kb_op_softmax;
extern const kb_op kb_op_layernorm;
extern const kb_op kb_op_attention;
extern const kb_op kb_op_matmul;

/* Adding an operator: declare it above and add it here. */
static const kb_op *const ops[] = {
    &kb_op_softmax,
    &kb_op_layernorm,
    &kb_op_attention,
    &kb_op_matmul,
};

const kb_op *const *kb_ops(int *n)
{
    *n = (int)KB_COUNT(ops);
    return ops;
}

const kb_op *kb_op_find(const char *name)
{
    int n;
    const kb_op *const *all = kb_ops(&n);
    for (int i = 0; i < n; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

const kb_variant *kb_variant_find(const kb_op *op, const char *name)
{
    for (int i = 0; i < op->nvariants; i++)
        if (strcmp(op->variants[i].name, name) == 0)
            return &op->variants[i];
    return NULL;
}

/* The candidate nearest to s by edit distance, if within a third of its length
 * (at least 2 edits) or a prefix match. */
static const char *nearest(const char *s, const char *const *cand, int n)
{
    const char *best = NULL;
    int best_d = 1 << 30;
    for (int i = 0; i < n; i++) {
        int d = kb_edit_distance(s, cand[i]);
        if (strncmp(s, cand[i], strlen(s)) == 0 && *s)
            d = 0;
        if (d < best_d) {
            best_d = d;
            best = cand[i];
        }
    }
    int limit = (int)strlen(s) / 3;
    if (limit < 2)
        limit = 2;
    return best_d <= limit ? best : NULL;
}

const char *kb_op_suggest(const char *s)
{
    int n;
    const kb_op *const *all = kb_ops(&n);
    const char *names[16];
    int k = 0;
    for (int i = 0; i < n && k < 16; i++)
        names[k++] = all[i]->name;
    return nearest(s, names, k);
}

const char *kb_variant_suggest(const kb_op *op, const char *s)
{
    const char *names[32];
    int k = 0;
    for (int i = 0; i < op->nvariants && k < 32; i++)
        names[k++] = op->variants[i].name;
    return nearest(s, names, k);
}

void kb_note_launch(kb_launch_log *log, const void *fn, const char *name, kb_dim3 grid,
                    kb_dim3 block, size_t dyn_smem)
{
    if (!log || log->n >= KB_MAX_KERNELS)
        return;
    log->k[log->n++] = (kb_launch_note){fn, name, grid, block, dyn_smem};
}

cudaError_t kb_current_sms(int *sms)
{
    /* asked of the runtime once per device: launchers call this inside the
     * timed region */
    static int dev_of = -1, sms_of = 0;
    int dev = 0;
    *sms = 0;
    cudaError_t ce = cudaGetDevice(&dev);
    if (ce == cudaSuccess && dev != dev_of) {
        ce = cudaDeviceGetAttribute(&sms_of, cudaDevAttrMultiProcessorCount, dev);
        dev_of = ce == cudaSuccess ? dev : -1;
    }
    if (ce == cudaSuccess)
        *sms = sms_of;
    return ce;
}
