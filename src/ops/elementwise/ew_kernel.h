/*
 * ew_kernel.h - device helpers of copy, cast and elementwise (src/ops/elementwise).
 *
 * Included by the generated kernels (ew_gen.c) after ck_device.h. Holds:
 *   - (the fast exact conversions are the block library's, ck_convert.h: the generated code
 *     uses the _canon loads, whose NaN matches ck_convert_array bit for bit);
 *   - scalar access to element codes of every storage (1/2/4/8 bytes, packed fp4 and fp6);
 *   - the math of the elementwise ops in fp32 and fp64.
 * Everything is CK_DEVICE (static inline): nothing here is a kernel.
 */
#ifndef CK_OPS_ELEMENTWISE_EW_KERNEL_H
#define CK_OPS_ELEMENTWISE_EW_KERNEL_H
#include "ck_convert.h"

/* ---- element codes by storage ----------------------------------------------------------- */
CK_DEVICE uint32_t ew_ld_fp4(const void *p, unsigned long long i)
{
    uint32_t b = ((const uint8_t *)p)[i >> 1];
    return (b >> ((unsigned)(i & 1u) * 4u)) & 0xFu;
}

CK_DEVICE uint32_t ew_ld_fp6(const void *p, unsigned long long i)
{
    const uint8_t *g = (const uint8_t *)p + (i >> 2) * 3u;
    uint32_t w = (uint32_t)g[0] | (uint32_t)g[1] << 8 | (uint32_t)g[2] << 16;
    return (w >> (6u * (unsigned)(i & 3u))) & 0x3Fu;
}

/* Storage classes of the run-time typed kernel (cast_kernel.h). */
#define EW_ST_1B  0
#define EW_ST_2B  1
#define EW_ST_4B  2
#define EW_ST_8B  3
#define EW_ST_FP4 4
#define EW_ST_FP6 5

CK_DEVICE uint64_t ew_ld_code(const void *p, int cls, unsigned long long i)
{
    switch (cls) {
    case EW_ST_1B:
        return ((const uint8_t *)p)[i];
    case EW_ST_2B:
        return ((const uint16_t *)p)[i];
    case EW_ST_4B:
        return ((const uint32_t *)p)[i];
    case EW_ST_8B:
        return ((const uint64_t *)p)[i];
    case EW_ST_FP4:
        return ew_ld_fp4(p, i);
    default:
        return ew_ld_fp6(p, i);
    }
}

/* Store one element of a byte-sized storage class (not fp4/fp6). */
CK_DEVICE void ew_st_code(void *p, int cls, unsigned long long i, uint64_t c)
{
    switch (cls) {
    case EW_ST_1B:
        ((uint8_t *)p)[i] = (uint8_t)c;
        break;
    case EW_ST_2B:
        ((uint16_t *)p)[i] = (uint16_t)c;
        break;
    case EW_ST_4B:
        ((uint32_t *)p)[i] = (uint32_t)c;
        break;
    default:
        ((uint64_t *)p)[i] = c;
        break;
    }
}

/* Store a whole pack: fp4 pack k (elements 2k, 2k+1) or fp6 pack k (elements 4k..4k+3). */
CK_DEVICE void ew_st_fp4_pack(void *p, unsigned long long k, uint32_t c0, uint32_t c1)
{
    ((uint8_t *)p)[k] = (uint8_t)((c0 & 0xFu) | (c1 & 0xFu) << 4);
}

CK_DEVICE void ew_st_fp6_pack(void *p, unsigned long long k, uint32_t c0, uint32_t c1, uint32_t c2,
                              uint32_t c3)
{
    uint32_t w = (c0 & 0x3Fu) | (c1 & 0x3Fu) << 6 | (c2 & 0x3Fu) << 12 | (c3 & 0x3Fu) << 18;
    uint8_t *g = (uint8_t *)p + k * 3u;
    g[0] = (uint8_t)w;
    g[1] = (uint8_t)(w >> 8);
    g[2] = (uint8_t)(w >> 16);
}

/* ---- the math of the ops (fp32) --------------------------------------------------------- */
CK_DEVICE float ew_relu_f32(float x)
{
    return x < 0.0f ? 0.0f : x; /* NaN propagates */
}
/* sigmoid, silu and gelu_tanh are one form, a / (1 + 2^(x * k)): 0.5 (1 + tanh(u)) =
 * 1 / (1 + e^(-2u)). On the GPU this is ~12 instructions (MUFU.EX2, MUFU.RCP) instead of ~40
 * for expf + tanhf + an IEEE division, which made silu/gelu compute-bound on the H100 at 87% of
 * the copy bandwidth. Accuracy (fp32): the exponent's rounding costs ln2 |x k| 2^-24 relative
 * (< 1e-6 for |x k| < 14, i.e. wherever the result is not below ~1e-3 of |x|), exp2f and the
 * fast division 2 ulp each: within the documented 4e-6 (relative, with the absolute floor
 * 4e-6 (1 + |x|)). ck_fdiv_fast(a, b) (the prelude) returns 0 on the GPU for 2^126 < |b| < 2^128, where the exact result
 * is below 2^-119 |a|: within the absolute floor. Infinities: b = inf gives -0/+0 (a finite),
 * x = +inf gives inf, x = -inf NaN (as the formulas with expf do). The emulator divides
 * exactly. */
#define EW_FAST_DIV(a, b) ck_fdiv_fast((a), (b))
CK_DEVICE float ew_sigmoid_f32(float x)
{
    return EW_FAST_DIV(1.0f, 1.0f + exp2f(x * -1.44269502f)); /* -log2(e) */
}
CK_DEVICE float ew_silu_f32(float x)
{
    return EW_FAST_DIV(x, 1.0f + exp2f(x * -1.44269502f));
}
CK_DEVICE float ew_gelu_tanh_f32(float x)
{
    /* -2 u log2(e) = x (k1 + k3 x^2): k1 = -2 sqrt(2/pi) log2(e), k3 = 0.044715 k1 */
    float a = x * (-2.30220819f + -0.102943242f * (x * x));
    return EW_FAST_DIV(x, 1.0f + exp2f(a));
}
CK_DEVICE float ew_gelu_erf_f32(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
}

/* ---- the math of the ops (fp64: when an input or the output is f64) --------------------- */
CK_DEVICE double ew_relu_f64(double x)
{
    return x < 0.0 ? 0.0 : x;
}
CK_DEVICE double ew_sigmoid_f64(double x)
{
    return 1.0 / (1.0 + exp(-x));
}
CK_DEVICE double ew_silu_f64(double x)
{
    return x / (1.0 + exp(-x));
}
CK_DEVICE double ew_gelu_tanh_f64(double x)
{
    double inner = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + tanh(inner));
}
CK_DEVICE double ew_gelu_erf_f64(double x)
{
    return 0.5 * x * (1.0 + erf(x * 0.7071067811865476));
}

#endif
