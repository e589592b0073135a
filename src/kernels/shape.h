/* shape.h - parsing and describing an operator's shape ("rows=4096,cols=1024"). */
#ifndef KB_SHAPE_H
#define KB_SHAPE_H

#include <stddef.h>

#include "op.h"

/* Fills shape[0..op->naxes) from text: comma-separated axis=value pairs; axes
 * not named keep their defaults. KB_EUSAGE naming the bad part for a pair without
 * '=', an unknown axis (with the valid ones), a repeated axis, a value that is not
 * a whole number, out of the axis's range (zero and negatives included) or
 * overflowing. */
kb_status kb_shape_parse(const kb_op *op, const char *text, int64_t *shape, kb_err *e);

/* The operator's default shape. */
void kb_shape_default(const kb_op *op, int64_t *shape);

/* "rows=4096,cols=1024" into buf. */
void kb_shape_str(const kb_op *op, const int64_t *shape, char *buf, size_t n);

#endif
