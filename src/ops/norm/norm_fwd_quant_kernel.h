/*
 * The quantization epilogue of the layernorm / RMSNorm / smooth-quant forward
 * (norm_fwd_kernel.h, norm_fwd_looped_kernel.h): a vector of y stored as the codes of
 * round(y / scale) with the row's scale = max |y| / NORM_QMAX (i8, or fp8 e4m3 saturating to
 * +-448). Two ways to the same bits:
 *   exact  every element divided (IEEE) and converted by the library's conversion: any scale
 *          (0, subnormal, Inf, NaN);
 *   fast   (NORM_QFAST, rows whose scale lies in [1e-18, 1e18], so every y is finite) the
 *          quotient from the row's reciprocal with one exact-remainder correction
 *          (ck_fast_div_rn: the division's bits), then four codes per register - fp8 by the
 *          hardware's cvt.rn.satfinite.e4m3x2 (ck_cvt_e4m3x4; NORM_QCVT 0, before sm_89: the
 *          library's conversion), i8 by one addition of 1.5 * 2^23 and byte permutes. No
 *          clamp: |y| <= max |y| and scale = max |y| / 127 rounded keep |y / scale| < 127.5.
 * The row chooses once (a uniform branch); the constants are those norm_fwd_kernel.h documents.
 */
#ifndef CK_NORM_FWD_QUANT_KERNEL_H
#define CK_NORM_FWD_QUANT_KERNEL_H
#include "ops/norm/norm_common_kernel.h"

#define NORM_QWORDS ((NORM_VEC + 3) / 4)

/* The row's quantizer: its scale, the scale's reciprocal and whether the fast way applies. */
typedef struct norm_quant {
    float scale, inv;
    int fast;
} norm_quant;

CK_DEVICE norm_quant norm_quant_of(float scale)
{
    norm_quant q;
    q.scale = scale;
    q.inv = 1.0f / scale;
    q.fast = NORM_QFAST && scale >= 1e-18f && scale <= 1e18f;
    return q;
}

/* The codes of NORM_VEC values t of y at p (fast: a constant, the way the row took). */
CK_DEVICE void norm_quant_store(void *p, norm_quant q, int fast, float *t)
{
    if (!fast) {
        CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
        {
            float v = q.scale > 0.0f ? t[k] / q.scale : (q.scale == 0.0f ? 0.0f : q.scale);
            t[k] = NORM_YT == CK_NC_I8 ? rintf(v) : v;
        }
        norm_store(p, NORM_YT, t);
        return;
    }
    float c[4 * NORM_QWORDS];
    uint32_t w[NORM_QWORDS];
    CK_UNROLL for (int k = 0; k < 4 * NORM_QWORDS; ++k) c[k] =
        k < NORM_VEC ? ck_fast_div_rn(t[k < NORM_VEC ? k : 0], q.scale, q.inv) : 0.0f;
    CK_UNROLL for (int j = 0; j < NORM_QWORDS; ++j)
    {
        const float *e = c + 4 * j;
        if (NORM_YT == CK_NC_FP8_E4M3 && NORM_QCVT) {
            w[j] = ck_cvt_e4m3x4(e[0], e[1], e[2], e[3]);
        } else if (NORM_YT == CK_NC_FP8_E4M3) { /* finite values: the same codes */
            w[j] = ck_fast_f32_to_fp8e4m3(e[0]) | ck_fast_f32_to_fp8e4m3(e[1]) << 8 |
                   ck_fast_f32_to_fp8e4m3(e[2]) << 16 | ck_fast_f32_to_fp8e4m3(e[3]) << 24;
        } else { /* the low bytes of four words, in order */
            uint32_t lo =
                ck_byte_perm(ck_fast_f32_to_i8_word(e[0]), ck_fast_f32_to_i8_word(e[1]), 0x40u);
            uint32_t hi =
                ck_byte_perm(ck_fast_f32_to_i8_word(e[2]), ck_fast_f32_to_i8_word(e[3]), 0x40u);
            w[j] = ck_byte_perm(lo, hi, 0x5410u);
        }
    }
    ck_st_words(p, NORM_VEC, w);
}

#endif
