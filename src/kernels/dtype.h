/* dtype.h - element types of operator tensors, and host conversions of the
 * 16-bit ones (round to nearest even), shared by C host code and CUDA. */
#ifndef KB_DTYPE_H
#define KB_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kb_dtype {
    KB_FP32 = 0,
    KB_FP16 = 1,
    KB_BF16 = 2,
    KB_DTYPE_COUNT
} kb_dtype;

/* Bit of a dtype in a variant's or operator's dtype mask. */
#define KB_DT(d) (1u << (d))
#define KB_DT_ALL (KB_DT(KB_FP32) | KB_DT(KB_FP16) | KB_DT(KB_BF16))

/* "fp32", "fp16", "bf16". */
const char *kb_dtype_name(kb_dtype d);
/* Returns 0 and sets *d for a known name, -1 otherwise. */
int kb_dtype_parse(const char *s, kb_dtype *d);
/* Bytes per element. */
size_t kb_dtype_size(kb_dtype d);

/* Host conversions (IEEE binary16 and bfloat16, round to nearest even). */
float kb_half_to_float(uint16_t h);
uint16_t kb_float_to_half(float f);
float kb_bf16_to_float(uint16_t b);
uint16_t kb_float_to_bf16(float f);

/* Element i of a host buffer of dtype d, widened to double. */
double kb_load_as_double(const void *buf, kb_dtype d, size_t i);

#ifdef __cplusplus
}
#endif
#endif
