/* inputs.h - filling an operator's device inputs with uniform random data,
 * each input from its own seed, for the operators' generate functions. */
#ifndef KB_INPUTS_H
#define KB_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One input buffer of an operator and its distribution. */
typedef struct kb_input_fill {
    const char *name; /* what the operator calls it ("Q", "gamma"), for messages */
    size_t count;     /* elements */
    float centre, spread; /* values centre + spread * U[-1, 1) (kb_fill_uniform) */
} kb_input_fill;

/* Fills a->in[i] for i < n as in[i] says, from seed + i, on stream s.
 * KB_EENV "generating OP input NAME failed: ..." at the first fill that
 * fails (op names the operator). */
kb_status kb_fill_inputs(const kb_args *a, const char *op, const kb_input_fill *in, int n,
                         uint64_t seed, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
