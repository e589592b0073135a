/* dtype.c - dtype names, sizes and host-side 16-bit float conversions. */
#include "dtype.h"

#include <math.h>
#include <string.h>

static const char *const names[KB_DTYPE_COUNT] = {"fp32", "fp16", "bf16"};

const char *kb_dtype_name(kb_dtype d)
{
    return (unsigned)d < KB_DTYPE_COUNT ? names[d] : "?";
}

int kb_dtype_parse(const char *s, kb_dtype *d)
{
    for (int i = 0; i < KB_DTYPE_COUNT; i++)
        if (strcmp(s, names[i]) == 0) {
            *d = (kb_dtype)i;
            return 0;
        }
    return -1;
}

size_t kb_dtype_size(kb_dtype d)
{
    return d == KB_FP32 ? 4 : 2;
}

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float kb_bf16_to_float(uint16_t b)
{
    return u2f((uint32_t)b << 16);
}

uint16_t kb_float_to_bf16(float f)
{
    uint32_t u = f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet and NaN */
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float kb_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f)
        return u2f(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        /* zero or subnormal: man * 2^-24, exact in float */
        float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    return u2f(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t kb_float_to_half(float f)
{
    uint32_t u = f2u(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u);
    if (a >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (a < 0x38800000u) {
        /* result is subnormal or zero: scale so the integer part is the mantissa */
        float v = u2f(a) * 0x1p24f;
        return (uint16_t)(sign | (uint16_t)lrintf(v));
    }
    uint32_t r = a + 0x0fffu + ((a >> 13) & 1u) - 0x38000000u;
    return (uint16_t)(sign | (uint16_t)(r >> 13));
}

double kb_load_as_double(const void *buf, kb_dtype d, size_t i)
{
    switch (d) {
    case KB_FP32:
        return ((const float *)buf)[i];
    case KB_FP16:
        return kb_half_to_float(((const uint16_t *)buf)[i]);
    case KB_BF16:
        return kb_bf16_to_float(((const uint16_t *)buf)[i]);
    default:
        return NAN;
    }
}
