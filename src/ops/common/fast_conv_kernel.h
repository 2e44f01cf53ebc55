/*
 * Exact fast conversions from fp32 for the operations' kernels (device C, after ck_device.h):
 * the bits of ck_nc_f32_to_bf16 / ck_nc_f32_to_f16 (round to nearest even, overflow to infinity,
 * NaN -> the canonical quiet NaN with its sign) in a few integer operations. Checked bit for bit
 * against ck_convert_* by tests/test_elementwise.c (every fp32 boundary class, all 16-bit codes),
 * tests/test_norm_conv.c and tests/test_softmax.c.
 */
#ifndef CK_OPS_COMMON_FAST_CONV_KERNEL_H
#define CK_OPS_COMMON_FAST_CONV_KERNEL_H

CK_DEVICE uint32_t ck_fast_f32_to_bf16(float f)
{
    uint32_t u = ck_f32_as_u32(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return ((u >> 16) & 0x8000u) | 0x7fc0u;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

/* Subnormal results (below 2^-14) by one exact fp32 addition of 0.5, which aligns bit 0 of the
 * sum's mantissa to 2^-24 and rounds to nearest even. */
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

#endif
