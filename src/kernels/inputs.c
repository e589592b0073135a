/* inputs.c - filling an operator's device inputs (see inputs.h). */
#include "inputs.h"

#include "fill.h"

kb_status kb_fill_inputs(const kb_args *a, const char *op, const kb_input_fill *in, int n,
                         uint64_t seed, cudaStream_t s, kb_err *e)
{
    for (int i = 0; i < n; i++) {
        cudaError_t ce = kb_fill_uniform((void *)a->in[i], in[i].count, a->dtype,
                                         seed + (uint64_t)i, in[i].centre, in[i].spread, s);
        if (ce != cudaSuccess)
            return kb_fail(e, KB_EENV, "generating %s input %s failed: %s", op, in[i].name,
                           cudaGetErrorString(ce));
    }
    return KB_OK;
}
