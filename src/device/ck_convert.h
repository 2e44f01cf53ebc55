/*
 * ck_convert.h - the block library's exact fast conversions between fp32 and the 16- and 8-bit
 * float formats (part of ck_block.h). Every operation's kernels use these; none keeps a copy.
 *
 * Written over CK_DEVICE, ck_u32_as_f32, ck_f32_as_u32 and fmaf only (plain C11), so a test can
 * compile it on the host without the prelude. The bits are those of the library's integer
 * conversions (ck_nc_* / ck_convert_*): round to nearest even, f16/bf16 overflow to infinity,
 * fp8 e4m3 saturating to +-448. NaN:
 *   ck_fast_{f16,bf16}_to_f32       keep the NaN's payload (a shift / one multiplication: the
 *                                   fastest, for kernels whose NaN results are any NaN)
 *   ck_fast_{f16,bf16}_to_f32_canon the canonical quiet NaN with its sign, as ck_nc_to_f32
 *                                   (copy / cast, which must match ck_convert bit for bit)
 *   ck_fast_f32_to_{f16,bf16}       the canonical quiet NaN (0x7e00 / 0x7fc0) with its sign
 *   ck_fast_f32_to_fp8e4m3          0x7f with its sign
 * Checked bit for bit against ck_convert_* by tests/test_elementwise.c (host, every 16-bit code
 * and 2^22 fp32 values), tests/test_norm_conv.c and tests/test_softmax_topk.c (as kernels).
 */
#ifndef CK_DEVICE_CK_CONVERT_H
#define CK_DEVICE_CK_CONVERT_H

/* ---- to fp32 -------------------------------------------------------------------------------- */

/* bf16 -> f32: exact, the bf16 bits are the high half of the f32 (a NaN keeps its payload). */
CK_DEVICE float ck_fast_bf16_to_f32(uint32_t b)
{
    return ck_u32_as_f32(b << 16);
}

/* bf16 -> f32 as ck_nc_to_f32: a NaN becomes the canonical quiet NaN with its sign. */
CK_DEVICE float ck_fast_bf16_to_f32_canon(uint32_t c)
{
    uint32_t a = c & 0x7FFFu;
    uint32_t u = a > 0x7F80u ? ((c & 0x8000u) << 16) | 0x7FC00000u : c << 16;
    return ck_u32_as_f32(u);
}

/* f16 -> f32, exact: the bits placed as an f32's and the exponent rebased by one
 * multiplication by 2^112 (subnormal f16 become normal f32 exactly); Inf/NaN patched after,
 * keeping their payload (the fewest instructions of the forms tried: the shifted bits serve
 * both cases). */
CK_DEVICE float ck_fast_f16_to_f32(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16, em = h & 0x7fffu;
    float f = ck_u32_as_f32(em << 13) * ck_u32_as_f32(0x77800000u); /* 2^112 */
    if (em >= 0x7c00u)
        f = ck_u32_as_f32((em << 13) | 0x7f800000u);
    return ck_u32_as_f32(ck_f32_as_u32(f) | sign);
}

/* f16 -> f32 as ck_nc_to_f32: subnormals through one exact multiplication, NaN canonical. */
CK_DEVICE float ck_fast_f16_to_f32_canon(uint32_t c)
{
    uint32_t sign = (c & 0x8000u) << 16, a = c & 0x7FFFu;
    if (a >= 0x7C00u)
        return ck_u32_as_f32(sign | (a == 0x7C00u ? 0x7F800000u : 0x7FC00000u));
    if (a < 0x0400u) /* zero or subnormal: a * 2^-24, exact */
        return ck_u32_as_f32(sign | ck_f32_as_u32((float)a * 5.9604644775390625e-8f));
    return ck_u32_as_f32(sign | ((a << 13) + 0x38000000u));
}

/* OCP fp8 e4m3 -> f32: the code's exponent and mantissa bits placed as an f32's, times 2^120
 * (subnormals included); S.1111.111 is NaN (canonical). */
CK_DEVICE float ck_fast_fp8e4m3_to_f32(uint32_t c)
{
    uint32_t sign = (c & 0x80u) << 24, mag = c & 0x7fu;
    if (mag == 0x7fu)
        return ck_u32_as_f32(sign | 0x7fc00000u);
    float f = ck_u32_as_f32(mag << 20) * ck_u32_as_f32(0x7b800000u); /* 2^120 */
    return ck_u32_as_f32(ck_f32_as_u32(f) | sign);
}

/* OCP fp8 e5m2 -> f32: e5m2 is the high byte of an f16. */
CK_DEVICE float ck_fast_fp8e5m2_to_f32(uint32_t c)
{
    return ck_fast_f16_to_f32(c << 8);
}

/* ---- from fp32 ------------------------------------------------------------------------------ */

/* f32 -> bf16, round to nearest even; overflow rounds to infinity. */
CK_DEVICE uint32_t ck_fast_f32_to_bf16(float f)
{
    uint32_t u = ck_f32_as_u32(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return ((u >> 16) & 0x8000u) | 0x7fc0u;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

/* f32 -> f16, round to nearest even. Subnormal results (below 2^-14) by one exact fp32
 * addition of 0.5, which aligns bit 0 of the sum's mantissa to 2^-24 and rounds to nearest
 * even (IEEE, no flush to zero). */
CK_DEVICE uint32_t ck_fast_f32_to_f16(float f)
{
    uint32_t u = ck_f32_as_u32(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u >= 0x47800000u) /* >= 65536: Inf, NaN or overflow */
        return sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u);
    if (u < 0x38800000u) { /* below 2^-14: f16 subnormal or zero */
        float s = ck_u32_as_f32(u) + 0.5f;
        return sign | (ck_f32_as_u32(s) - 0x3f000000u);
    }
    u += 0xc8000fffu + ((u >> 13) & 1u); /* rebias (15 - 127) << 23, plus rounding */
    return sign | (u >> 13);
}

/* f32 -> fp8 e4m3 (OCP, bias 7, largest finite 448 = 0x7e), round to nearest even, saturating:
 * |x| >= 448 and infinities give +-448. Subnormals (below 2^-6, spacing 2^-9) by one exact
 * float addition. */
CK_DEVICE uint32_t ck_fast_f32_to_fp8e4m3(float f)
{
    uint32_t u = ck_f32_as_u32(f);
    uint32_t sign = (u >> 24) & 0x80u;
    u &= 0x7fffffffu;
    uint32_t o;
    if (u > 0x7f800000u) {
        o = 0x7fu;
    } else if (u >= 0x43e00000u) { /* >= 448 (Inf included): saturate */
        o = 0x7eu;
    } else if (u < 0x3c800000u) {           /* below 2^-6: subnormal or zero */
        const uint32_t magic = 0x46800000u; /* 2^14: bit 0 of the sum is 2^-9 */
        float s = ck_u32_as_f32(u) + ck_u32_as_f32(magic);
        o = ck_f32_as_u32(s) - magic;
    } else {
        uint32_t odd = (u >> 20) & 1u;
        u += 0xc407ffffu + odd; /* rebias -(127 - 7) << 23, plus rounding */
        o = u >> 20;
    }
    return o | sign;
}

/* ---- quotients and integer codes ------------------------------------------------------------ */

/* a / b rounded to nearest even (the IEEE division's bits) from rb = 1.0f / b (an IEEE division,
 * once for many a): the product a * rb corrected once by the exact remainder q * b - a
 * (Markstein's theorem: with rb correctly rounded and q within an ulp, q - r * rb is the
 * correctly rounded quotient). Exact where 1e-18 <= |b| <= 1e18 and |a / b| >= 2^-40 (the
 * remainder is then exact); smaller quotients come within a few multiples of 2^-149 with the
 * exact quotient's sign (a zero's too: -0 / b gives -0). Three instructions instead of the
 * division's reciprocal and refinement. */
CK_DEVICE float ck_fast_div_rn(float a, float b, float rb)
{
    float q = a * rb;
    float r = fmaf(q, b, -a);
    return fmaf(-r, rb, q);
}

/* A word whose low byte is the i8 code of v rounded to nearest even, for |v| <= 2^22: adding
 * 1.5 * 2^23 leaves round(v) in the sum's low mantissa bits (two's complement). No clamp: the
 * caller keeps v within [-127.5, 127.5). */
CK_DEVICE uint32_t ck_fast_f32_to_i8_word(float v)
{
    return ck_f32_as_u32(v + 12582912.0f);
}

#endif /* CK_DEVICE_CK_CONVERT_H */
