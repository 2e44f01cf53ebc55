/*
 * Device helpers shared by the softmax family's kernels (softmax_kernel.h, topk_softmax_kernel.h):
 * fast exact conversions between f32 and f16/bf16, element and vector access of f32/f16/bf16
 * rows, and the guarded exponent of the online softmax.
 *
 * Type codes: SMX_F32 0, SMX_F16 1, SMX_BF16 2. Every function takes the code as an argument
 * that is a compile-time constant at each call, so the switch folds away.
 */
#ifndef CK_OPS_SOFTMAX_COMMON_KERNEL_H
#define CK_OPS_SOFTMAX_COMMON_KERNEL_H

#include "ck_device.h"
#include "ops/common/fast_conv_kernel.h"

#define SMX_F32  0
#define SMX_F16  1
#define SMX_BF16 2

#define SMX_LOG2E 1.4426950408889634f
#define SMX_LN2   0.6931471805599453f

CK_DEVICE float smx_neg_inf(void)
{
    return ck_u32_as_f32(0xff800000u);
}

/* bf16 -> f32: exact (the bf16 bits are the high half of the f32). */
CK_DEVICE float smx_bf16_to_f32(uint32_t b)
{
    return ck_u32_as_f32(b << 16);
}

/* f16 -> f32, exact: the exponent is rebased by one multiplication by 2^112 (subnormal f16
 * become normal f32 exactly); Inf/NaN keep their class and payload. */
CK_DEVICE float smx_f16_to_f32(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16, mag = h & 0x7fffu;
    if (mag >= 0x7c00u)
        return ck_u32_as_f32(sign | 0x7f800000u | ((mag & 0x3ffu) << 13));
    float f = ck_u32_as_f32(mag << 13) * ck_u32_as_f32(0x77800000u); /* 2^112 */
    return ck_u32_as_f32(ck_f32_as_u32(f) | sign);
}

/* f32 -> bf16, round to nearest even; NaN -> the canonical quiet NaN 0x7fc0 with its sign (as
 * ck_convert does); overflow rounds to infinity. */
CK_DEVICE uint32_t smx_f32_to_bf16(float f)
{
    return ck_fast_f32_to_bf16(f);
}

/* f32 -> f16, round to nearest even (subnormals through one exact float addition), overflow to
 * infinity, NaN -> the canonical quiet NaN 0x7e00 with its sign. */
CK_DEVICE uint32_t smx_f32_to_f16(float f)
{
    return ck_fast_f32_to_f16(f);
}

CK_DEVICE int smx_size(int t)
{
    return t == SMX_F32 ? 4 : 2;
}

CK_DEVICE float smx_from_bits(uint32_t b, int t)
{
    return t == SMX_F32 ? ck_u32_as_f32(b) : t == SMX_F16 ? smx_f16_to_f32(b) : smx_bf16_to_f32(b);
}

CK_DEVICE uint32_t smx_to_bits(float v, int t)
{
    return t == SMX_F32 ? ck_f32_as_u32(v) : t == SMX_F16 ? smx_f32_to_f16(v) : smx_f32_to_bf16(v);
}

/* Element i of a row of type t. */
CK_DEVICE float smx_ld1(const void *p, long long i, int t)
{
    if (t == SMX_F32)
        return ((const float *)p)[i];
    return smx_from_bits(((const uint16_t *)p)[i], t);
}

CK_DEVICE void smx_st1(void *p, long long i, float v, int t)
{
    if (t == SMX_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = (uint16_t)smx_to_bits(v, t);
}

/* n elements from element i of p into v (f32). wide: n * size is a multiple of 16 and every such
 * access is 16-byte aligned (16-byte loads, read-only path), else element loads. */
CK_DEVICE void smx_ldv(const void *p, long long i, int t, int n, int wide, float *v)
{
    if (wide) {
        const char *b = (const char *)p + i * smx_size(t);
        int per = 16 / smx_size(t);
        CK_UNROLL for (int c = 0; c < n / per; ++c)
        {
            ck_u32x4 r = ck_ld16_nc(b + 16 * c);
            uint32_t w[4] = {r.x, r.y, r.z, r.w};
            if (t == SMX_F32) {
                CK_UNROLL for (int k = 0; k < 4; ++k) v[c * 4 + k] = ck_u32_as_f32(w[k]);
            } else {
                CK_UNROLL for (int k = 0; k < 4; ++k)
                {
                    v[c * 8 + 2 * k] = smx_from_bits(w[k] & 0xffffu, t);
                    v[c * 8 + 2 * k + 1] = smx_from_bits(w[k] >> 16, t);
                }
            }
        }
    } else {
        CK_UNROLL for (int k = 0; k < n; ++k) v[k] = smx_ld1(p, i + k, t);
    }
}

CK_DEVICE void smx_stv(void *p, long long i, int t, int n, int wide, const float *v)
{
    if (wide) {
        char *b = (char *)p + i * smx_size(t);
        int per = 16 / smx_size(t);
        CK_UNROLL for (int c = 0; c < n / per; ++c)
        {
            uint32_t w[4];
            if (t == SMX_F32) {
                CK_UNROLL for (int k = 0; k < 4; ++k) w[k] = ck_f32_as_u32(v[c * 4 + k]);
            } else {
                CK_UNROLL for (int k = 0; k < 4; ++k) w[k] =
                    smx_to_bits(v[c * 8 + 2 * k], t) | (smx_to_bits(v[c * 8 + 2 * k + 1], t) << 16);
            }
            ck_u32x4 r;
            r.x = w[0];
            r.y = w[1];
            r.z = w[2];
            r.w = w[3];
            ck_st16(b + 16 * c, r);
        }
    } else {
        CK_UNROLL for (int k = 0; k < n; ++k) smx_st1(p, i + k, v[k], t);
    }
}

/* exp2(u - m) scaled for the online sums: m = -inf (nothing seen yet, or all -inf) counts as 0
 * so that -inf entries give 0 rather than NaN; NaN still propagates. */
CK_DEVICE float smx_safe_max(float m)
{
    return m == smx_neg_inf() ? 0.0f : m;
}

/* Factor exp2(m_part - m) that rescales a partial sum relative to m_part to the common max m
 * (>= m_part). A part that saw only -inf contributes 0 (its sum is 0, or NaN which survives). */
CK_DEVICE float smx_rescale(float m_part, float m)
{
    return m_part == smx_neg_inf() ? 0.0f : exp2f(m_part - m);
}

/* The pair (m, l) of two parts, merged (5.12-5.13): m = max, l rescaled to the new maximum. A
 * part with m = -inf counts 0; NaN in l survives. */
CK_DEVICE void smx_pair_merge(float *m, float *l, float m2, float l2)
{
    float mn = fmaxf(*m, m2);
    *l = *l * smx_rescale(*m, mn) + l2 * smx_rescale(m2, mn);
    *m = mn;
}

/* The pairs of a warp's 32 lanes, merged (every lane gets the result). */
CK_DEVICE void smx_pair_warp(float *m, float *l)
{
    CK_UNROLL for (int o = 16; o > 0; o >>= 1)
    {
        float m2 = ck_shfl_xor_f32(*m, o), l2 = ck_shfl_xor_f32(*l, o);
        smx_pair_merge(m, l, m2, l2);
    }
}

#endif
